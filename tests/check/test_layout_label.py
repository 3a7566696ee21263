"""The label parser: which statements a layout label makes, and that every committed label is read and agrees."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.check.layout import label_statements
from generator.registry import Registry

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("label", "stated"), [
    ("TP2 PP4 DP1", [("tp", 2), ("pp", 4), ("dp", 1)]),
    ("TP1 PP4 VP12 CP1 EP16 DP64", [("tp", 1), ("pp", 4), ("vpp", 12), ("cp", 1), ("ep", 16), ("dp", 64)]),
    ("tp = 4, pp: 2, vpp 3", [("tp", 4), ("pp", 2), ("vpp", 3)]),
    ("TP2xPP4xDP1", [("tp", 2), ("pp", 4), ("dp", 1)]),
    # ETP is not TP, FSDP is not DP, EDP names no field of the layout.
    ("EP8 ETP2 EDP4", [("ep", 8), ("etp", 2)]),
    ("TP1 PP1 CP1 DP64 FSDP", [("tp", 1), ("pp", 1), ("cp", 1), ("dp", 64), ("fsdp", True)]),
    ("TP2 SP", [("tp", 2), ("sequence_parallel", True)]),
    ("TP2, no SP", [("tp", 2), ("sequence_parallel", False)]),
    ("TP2 w/o SP, without FSDP", [("tp", 2), ("sequence_parallel", False), ("fsdp", False)]),
    ("MBS2 GBS128 GA8", [("rows_per_microbatch", 2), ("global_batch", 128), ("gradient_accumulation", 8)]),
    # Nothing machine-readable: prose, a version number, a degree without its number.
    ("13/16/16/15 layer split", []),
    ("TP 2.5", []),
    ("the usual TP layout", []),
])
def test_statements_of_a_label(label: str, stated: list[tuple[str, int | bool]]) -> None:
    assert sorted((field, value) for _, field, value in label_statements(label)) == sorted(stated)


@pytest.mark.slow
def test_every_committed_label_states_its_layout(committed: Registry) -> None:
    """No committed label is prose the parser skips: each states TP, PP and DP, and agrees with its fields."""
    registry = committed
    assert len(registry.recipes) >= 95
    for loaded in registry.recipes:
        lay = loaded.recipe.layout
        stated = {field: value for _, field, value in label_statements(lay.label)}
        assert {"tp", "pp", "dp"} <= stated.keys(), (loaded.id, lay.label)
        assert all(getattr(lay, field) == value for field, value in stated.items()), (loaded.id, lay.label)
