from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml"
CHROMIUM = Path("/usr/bin/chromium")


def pytest_configure(config: pytest.Config) -> None:
    # The check cache lives in the user's cache folder; tests keep theirs apart (subprocesses inherit it).
    if "OPENRECIPES_CACHE_DIR" not in os.environ:
        import tempfile

        os.environ["OPENRECIPES_CACHE_DIR"] = tempfile.mkdtemp(prefix="openrecipes-test-cache-")
    # The browser tests skip without Debian's Chromium; CI (.ci/run) sets this so that they cannot skip silently.
    if os.environ.get("OPENRECIPES_REQUIRE_CHROMIUM") == "1" and not CHROMIUM.exists():
        raise pytest.UsageError(f"OPENRECIPES_REQUIRE_CHROMIUM=1 but {CHROMIUM} is missing: the browser tests would "
                                "be skipped (apt-get install chromium)")


@pytest.fixture
def root() -> Path:
    return ROOT
