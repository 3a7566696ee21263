from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from generator.problems import Problem
    from generator.registry import Registry

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


def check_registry(registry: Registry, today: dt.date | None = None) -> list[Problem]:
    """What `python -m generator check` reports for a registry loaded (and perhaps edited) in memory: its load
    problems, every recipe's rules and duplicate ids, without the cache or the failed-layouts files."""
    from generator.check import check_recipe, note_id

    today = today or dt.date.today()
    problems = list(registry.problems)
    ids: dict[str, str] = {}
    for loaded in registry.recipes:
        note_id(ids, loaded.id, loaded.display, problems)
        problems.extend(check_recipe(loaded, registry.catalog, today))
    return sorted(set(problems))
