"""A large registry is checked in worker processes; what check reports must not depend on how many.

The registry here is the committed one plus every corpus case (each a broken recipe) and a duplicate id, so the
comparison covers problems of every kind, loader failures included, and their order."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from generator.check import CheckRun, check_tree

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests/corpus"
REFERENCE = "recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml"


@pytest.fixture(scope="module")
def busy_registry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("registry")
    shutil.copytree(ROOT / "catalog", root / "catalog")
    shutil.copytree(ROOT / "recipes", root / "recipes")
    folder = root / "recipes/gemma-4-31b/h100"
    cases = sorted(CORPUS.glob("*.yaml"))
    assert len(cases) > 100
    for case in cases:
        shutil.copyfile(case, folder / f"corpus-{case.stem.replace('_', '-')}.yaml")
    shutil.copyfile(root / REFERENCE, folder / "Attune-TP2-PP4-split13.yaml")  # the same id but for case
    return root


@pytest.fixture(scope="module")
def alone(busy_registry: Path) -> CheckRun:
    """The registry checked in this process, without the cache: what every other way of checking must report."""
    return check_tree(busy_registry, use_cache=False, jobs=1)


def test_workers_report_exactly_what_one_process_reports(busy_registry: Path, alone: CheckRun) -> None:
    pooled = check_tree(busy_registry, use_cache=False, jobs=2)
    assert alone.files == pooled.files > 230
    assert pooled.problems == alone.problems
    assert len({p.path for p in alone.problems}) > 100  # most corpus cases fail, each in its own file
    assert any("duplicate recipe id" in p.message for p in alone.problems)


def test_a_warm_run_after_a_pooled_cold_run_reports_the_same(busy_registry: Path, alone: CheckRun,
                                                             tmp_path: Path) -> None:
    cold = check_tree(busy_registry, use_cache=True, cache_folder=tmp_path, jobs=2)
    warm = check_tree(busy_registry, use_cache=True, cache_folder=tmp_path, jobs=2)
    assert warm.problems == cold.problems == alone.problems
    assert not cold.warnings and not warm.warnings
