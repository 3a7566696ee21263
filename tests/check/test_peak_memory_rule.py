"""check's rule results.peak_memory on committed recipes with lines changed: a peak memory states a figure, its
allocated peak is not above its reserved one, and no figure is above the card's memory. The playbook's rows state
their figure as stated_gb (kind and unit not stated by the source); a run of ours states allocated and reserved."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest

from generator.check import check_recipe
from generator.problems import Problem
from generator.registry import load_registry

ROOT = Path(__file__).resolve().parents[2]
# Hand-read from tests/importer/sources/playbook-benchmarks_interactive-924e4d0b.html, line 2, column 426584:
# "Nodes: 16 ... DP: 16 PP: 1 TP: 8 ZeRO: 1 ... GPU memory: 29.2 GB".
PLAYBOOK = "recipes/playbook-llama-1b/h100/pb-128gpu-dp16-tp8-pp1-mbs16-ga1-zero1.yaml"
# A run of ours on an 80 GB H100: 35.59 GiB allocated, 36.87 GiB reserved (its summary line).
OURS = "recipes/llama-3.2-1b/h100/transformers-4k.yaml"
OURS_PEAK = "{allocated_gib: 35.59, reserved_gib: 36.87, "


def _memory_problems(tmp_path: Path, recipe: str, old: str = "", new: str = "") -> list[Problem]:
    """check's problems of result.peak_memory for the committed recipe with `old` (once) replaced by `new`, in a
    registry of its own."""
    shutil.copytree(ROOT / "catalog", tmp_path / "catalog")
    text = (ROOT / recipe).read_text(encoding="utf-8")
    if old:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    target = tmp_path / recipe
    target.parent.mkdir(parents=True)
    target.write_text(text, encoding="utf-8")
    registry = load_registry(tmp_path)
    assert not registry.problems, registry.problems
    return [p for loaded in registry.recipes for p in check_recipe(loaded, registry.catalog, dt.date.today())
            if p.field.startswith("result.peak_memory")]


def test_the_committed_rows_hold(tmp_path: Path) -> None:
    assert "    stated_gb: 29.2\n" in (ROOT / PLAYBOOK).read_text(encoding="utf-8")
    assert _memory_problems(tmp_path / "pb", PLAYBOOK) == []
    assert OURS_PEAK in (ROOT / OURS).read_text(encoding="utf-8")
    assert _memory_problems(tmp_path / "ours", OURS) == []


@pytest.mark.parametrize(("recipe", "old", "new", "field", "message"), [
    (PLAYBOOK, "    stated_gb: 29.2\n", "    stated_gb: 92.0\n", "result.peak_memory.stated_gb",
     "92 per GPU is more than the 80 GB card holds"),
    (OURS, OURS_PEAK, "{allocated_gib: 37.5, reserved_gib: 36.87, ", "result.peak_memory.allocated_gib",
     "allocated 37.5 GiB above reserved 36.87 GiB: the allocator reserves every byte it hands out"),
    (OURS, OURS_PEAK, "{allocated_gib: 35.59, reserved_gib: 86.87, ", "result.peak_memory.reserved_gib",
     "86.87 per GPU is more than the 80 GB card holds"),
    (PLAYBOOK, "    stated_gb: 29.2\n", "", "result.peak_memory",
     "peak memory states no figure (allocated_gib, reserved_gib or stated_gb): leave it null"),
])
def test_an_inconsistent_peak_is_one_located_problem(tmp_path: Path, recipe: str, old: str, new: str, field: str,
                                                     message: str) -> None:
    problems = _memory_problems(tmp_path, recipe, old, new)
    assert [(p.field, p.message) for p in problems] == [(field, message)]
    text = (ROOT / recipe).read_text(encoding="utf-8").replace(old, new)
    key = field.rsplit(".", 1)[-1]
    assert key in text.splitlines()[problems[0].line - 1]
