"""Fuzz the NeMo 24.07 table reader (generator/importers/nemo.py) with mutants of the committed document: lines
deleted, duplicated or swapped, cells blanked or replaced with junk. The reader never raises; every data row it sees
is a recipe row or a located skip (table_rows = rows + skips), and every line it names is a line of the mutant."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.importers import nemo

DOC = Path(__file__).resolve().parents[2] / "tests/importer/sources/nemo-performance-summary-8e3d65dc.md"
LINES = DOC.read_text(encoding="utf-8").splitlines()
JUNK = st.sampled_from(["", "x", "-1", "1e3", "[7](http://a)", "[x](y)", "0", "99999999999", "|", "FP8", "nan"])


@st.composite
def mutants(draw: st.DrawFn) -> str:
    lines = list(LINES)
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(lines) - 1))
        kind = draw(st.sampled_from(["delete", "duplicate", "swap", "cell"]))
        if kind == "delete" and len(lines) > 1:
            del lines[i]
        elif kind == "duplicate":
            lines.insert(i, lines[i])
        elif kind == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif lines[i].startswith("|"):
            cells = lines[i].split("|")
            k = draw(st.integers(1, max(1, len(cells) - 2)))
            cells[k] = f" {draw(JUNK)} "
            lines[i] = "|".join(cells)
    return "\n".join(lines) + "\n"


@settings(max_examples=120, deadline=dt.timedelta(seconds=5), derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(mutants())
def test_mutants_are_rows_or_located_skips(text: str) -> None:
    parsed = nemo.parse(text)
    assert parsed.table_rows == len(parsed.rows) + len(parsed.skips)
    count = len(text.splitlines())
    assert all(1 <= r.line <= count for r in parsed.rows)
    assert all(1 <= s.line <= count and s.reason for s in parsed.skips)
    for row in parsed.rows:
        assert row.gpus % (row.tp * row.pp * (row.cp or 1)) == 0
        assert row.gbs % (row.mbs * row.dp) == 0
