"""Every tolerance, threshold and precision of generator/figures.py, and every rule `check` runs, is documented on
the methodology page (in the manner of Datasette's test that every setting is documented): a constant added to
figures.py, or a rule added to a check module, fails here until the page names it, and each constant's value on the
page is read from figures.py (changing it changes the page), never copied."""

from __future__ import annotations

import ast
import dataclasses
import datetime as dt
import math
import re
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest
from suitehelpers import REFERENCE, ROOT

from generator import check, figures
from generator.registry import Registry, load_registry
from generator.site import render
from generator.site.pages import methodology as methodology_page

# The constants of figures.py that are no tolerance, threshold or precision: units, names and the terms of formulas.
# A new constant of figures.py is either documented on the page or listed here with what it is.
NOT_THRESHOLDS = {
    "SECONDS_PER_HOUR": "a unit",
    "MB_HYBRID_COUNT": "the name of a FLOP-count convention",
    "MAMBA2_SCAN_FLOPS_PER_STATE": "a term of the Mamba-2 FLOP count (the page states it in the formula)",
    "MAMBA2_TERMS": "the Mamba-2 FLOP count's terms as the page states them",
    "MB_MAMBA_SCAN_FLOPS_PER_STATE": "a term of Megatron-Bridge's FLOP count (the page states it in the formula)",
    "FROZEN_BASE_FRACTION": "a term of the LoRA FLOP count (the page states 4N)",
    "SIX_N_HFU_FACTOR": "a term of llm-foundry's HFU count",
    "PRECISION_PEAK": "which dense peak each training precision is held to (a catalog lookup, not a tolerance)",
}
_CONSTANT = re.compile(r"^[A-Z][A-Z0-9_]*$")
_TABLE_ROW = re.compile(r"^\| `([A-Za-z0-9_.]+)` \|", re.MULTILINE)


def constants(module: ModuleType) -> dict[str, object]:
    """The constants the module itself assigns at its top level (upper-case names; not what it imports)."""
    tree = ast.parse(Path(module.__file__ or "").read_text(encoding="utf-8"))
    names = [target.id for node in tree.body if isinstance(node, ast.Assign | ast.AnnAssign)
             for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
             if isinstance(target, ast.Name) and _CONSTANT.match(target.id)]
    return {name: getattr(module, name) for name in names}


THRESHOLDS = sorted(set(constants(figures)) - set(NOT_THRESHOLDS))


@cache
def _registry() -> Registry:
    return load_registry(ROOT, [REFERENCE])


def methodology() -> str:
    return methodology_page.page(render.environment(), _registry()).content


def section(page: str, anchor: str) -> str:
    """The text of the page's section whose heading carries `{#anchor}`, up to the next heading."""
    start = page.index("{#" + anchor + "}")
    end = page.find("\n## ", start)
    return page[start:] if end < 0 else page[start:end]


def row(page: str, name: str) -> str:
    found = re.search(r"^\| `" + re.escape(name) + r"` \|.*$", page, re.MULTILINE)
    assert found is not None, f"no row for {name} on the methodology page"
    return found.group(0)


def test_the_list_of_non_thresholds_names_constants_that_exist() -> None:
    assert set(NOT_THRESHOLDS) <= set(constants(figures)), set(NOT_THRESHOLDS) - set(constants(figures))
    assert len(THRESHOLDS) >= 17  # what figures.py held when this test came in


def test_every_threshold_has_a_row() -> None:
    table = section(methodology(), "thresholds")
    named = _TABLE_ROW.findall(table)
    missing = [name for name in THRESHOLDS if name not in named]
    assert not missing, f"figures.py constants the methodology page does not document: {missing}"
    unknown = [name for name in named if name not in THRESHOLDS]
    assert not unknown, f"the page documents constants figures.py does not hold (or lists as no threshold): {unknown}"


def _other(value: object) -> object:
    """A different value of the same kind, whose text differs wherever the value is stated."""
    if isinstance(value, bool):
        raise TypeError("a switch is no threshold")
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value * 2 + 1
    if isinstance(value, dt.date):
        return value + dt.timedelta(days=1)
    if isinstance(value, tuple):  # tiers: (above, tolerance) pairs
        return tuple((above + 1 if math.isfinite(above) else above, tolerance * 2) for above, tolerance in value)
    raise TypeError(f"no other value for {value!r}")


@pytest.mark.parametrize("name", [n for n in THRESHOLDS if n != "PRECISIONS"])
def test_each_threshold_is_read_from_figures(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    before = row(methodology(), name)
    monkeypatch.setattr(figures, name, _other(getattr(figures, name)))
    after = row(methodology(), name)
    assert after != before, f"{name}'s row does not change with its value: {before}"


@pytest.mark.parametrize("figure", sorted(figures.PRECISIONS))
def test_each_precision_is_read_from_figures(monkeypatch: pytest.MonkeyPatch, figure: str) -> None:
    spec = figures.PRECISIONS[figure]
    before = section(methodology(), "precision")
    assert f"| {spec.label} | " in before
    monkeypatch.setitem(figures.PRECISIONS, figure, dataclasses.replace(spec, decimals=spec.decimals + 1))
    after = section(methodology(), "precision")
    changed = [line for line in after.splitlines() if line not in before.splitlines()]
    assert changed and all(line.startswith(f"| {spec.label} | ") for line in changed), changed


def _rule_name(rule: object) -> str:
    return f"{rule.__module__.rsplit('.', 1)[-1]}.{rule.__name__}"  # type: ignore[attr-defined]


def test_every_check_rule_has_a_row_in_the_order_check_runs_them() -> None:
    table = section(methodology(), "rules")
    assert _TABLE_ROW.findall(table) == [_rule_name(rule) for rule in check.RULES]
    assert "`failed_layouts.check`" in table  # the failed-layouts files' one rule
