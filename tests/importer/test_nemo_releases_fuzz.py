"""Fuzz the rendered-page reader of generator/importers/nemo.py (releases 25.02-25.07) with mutants of the committed
copies: lines deleted, duplicated or swapped, cells replaced with junk (empty, negative, "a (b)" pairs, a stray
separator or context line), the text cut anywhere. The reader never raises; every table row it counts is a recipe or
a one-line skip at a line of the mutant, and each row's figures are the positive whole numbers of its cells."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.importers import nemo

DATA = Path(__file__).resolve().parents[2] / "tests/importer/data"
COPIES = [(DATA / f"nemo-docs-{r}.txt").read_text(encoding="utf-8") for r in ("25.02", "25.04", "25.07")]
JUNK = st.sampled_from(["|", "x |", "-1 |", "0 |", "1e3 |", "2 (4) |", "(8) |", "1 (2 |", "nan |", "---|---|",
                        "System: DGX-Z9", "Container: NeMo 99.1", "Fine-Tuning#", "LLAMA3-8B |", "9" * 30 + " |"])


@st.composite
def mutants(draw: st.DrawFn) -> str:
    lines = draw(st.sampled_from(COPIES)).splitlines()
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(lines) - 1))
        kind = draw(st.sampled_from(["delete", "duplicate", "swap", "junk", "cut"]))
        if kind == "delete" and len(lines) > 1:
            del lines[i]
        elif kind == "duplicate":
            lines.insert(i, lines[i])
        elif kind == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "junk":
            lines[i] = draw(JUNK)
        elif i > 0:
            lines = lines[:i] + [lines[i][: draw(st.integers(0, len(lines[i])))]]
    return "\n".join(lines)


@settings(max_examples=60, derandomize=True, deadline=dt.timedelta(seconds=2),
          suppress_health_check=[HealthCheck.too_slow])
@given(mutants())
def test_mutants_are_rows_or_located_skips(text: str) -> None:
    got = nemo.parse(text)
    count = len(text.splitlines())
    lines = {r.line for r in got.rows} | {s.line for s in got.skips}
    assert len(lines) == got.table_rows
    assert all(1 <= line <= count for line in lines)
    assert all(s.reason and "\n" not in s.reason for s in got.skips)
    for row in got.rows:
        assert min(row.gpus, row.gbs, row.mbs, row.seq, row.tp, row.pp, row.tokens, row.tflops) > 0
        assert row.gpus % (row.tp * row.pp * (row.cp or 1)) == 0 and row.ga in (None, row.gradient_accumulation)
        assert row.key().startswith(f"nemo-{row.container}-")
