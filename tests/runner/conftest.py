"""Fixtures shared by the runner tests."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from runner_support import ROOT

if TYPE_CHECKING:
    from generator.catalog import Catalog


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    """The committed catalog, as the runner's figures read it."""
    from generator.registry import load_catalog

    return load_catalog(ROOT)
