from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml"


@pytest.fixture
def root() -> Path:
    return ROOT
