"""Shared by the whole suite: the check cache kept apart per process, and the committed registry loaded and rendered
once per test process (a whole-registry render takes seconds; several tests read it).

Markers (pyproject.toml): `slow`, `browser`, `cluster`. The quick subset is `-m "not slow and not browser and not
cluster"`; CI runs everything. Under pytest-xdist (`-n`), each worker is its own process: session fixtures here run
once per worker (the README's `--dist loadfile` keeps a file on one worker), and tests/site/conftest.py builds the committed site
once per run under a file lock.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from suitehelpers import ROOT, export_committed

if TYPE_CHECKING:
    from generator.registry import Registry
    from generator.site.render import Page


def pytest_configure(config: pytest.Config) -> None:
    # The check cache lives in the user's cache folder; tests keep theirs apart (subprocesses inherit it).
    if "OPENRECIPES_CACHE_DIR" not in os.environ:
        os.environ["OPENRECIPES_CACHE_DIR"] = tempfile.mkdtemp(prefix="openrecipes-test-cache-")
    # xdist's workers inherit the controller's folder: each takes a folder of its own inside it, so that no two
    # processes of one run write the same cache file.
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        os.environ["OPENRECIPES_CACHE_DIR"] = str(Path(os.environ["OPENRECIPES_CACHE_DIR"]) / worker)


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def committed_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This process's copy of the committed registry. Tests read it; a test that edits a registry makes its own."""
    return export_committed(tmp_path_factory.mktemp("committed"))


@pytest.fixture(scope="session")
def committed(committed_copy: Path) -> Registry:
    """The committed registry, loaded once per process."""
    from generator.registry import load_registry

    return load_registry(committed_copy)


@pytest.fixture(scope="session")
def committed_pages(committed: Registry) -> dict[str, Page]:
    """Every page of the committed registry's site as the renderer writes it (no mkdocs), rendered once per process."""
    from generator.site import render_site

    return render_site(committed)
