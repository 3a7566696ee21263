"""CSV cells neutralised as OWASP describes, whatever separator a spreadsheet splits on: a text cell never starts
with = + - @ tab or CR (a quote goes first), and a cell holding a separator is quoted, so that no part of it after a
";" (or "," tab "|") becomes a cell that starts a formula."""

from __future__ import annotations

import csv
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.site import formatting as fmt

SEPARATORS = [",", ";", "\t", "|"]


def _cells(line: str, separator: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(line, newline=""), delimiter=separator) for cell in row]


@pytest.mark.parametrize("separator", SEPARATORS)
@pytest.mark.parametrize("text", ["a;=cmd()", "a,=1+1", "x\t+1", "x|@SUM(1)", "ok;-2", '"q";=1', "a\r\n=1"])
def test_a_formula_after_a_separator_stays_inside_its_cell(text: str, separator: str) -> None:
    cells = _cells(fmt.csv_line([fmt.csv_text(text), "1.5"]), separator)
    assert not any(cell.startswith(fmt.CSV_FORMULA_PREFIXES) for cell in cells), (text, separator, cells)
    if separator == ",":
        assert cells == [text, "1.5"]  # read back with the file's own separator: the text as it was


def test_plain_cells_are_written_as_they_were() -> None:
    assert fmt.csv_line(["llama-3-70b/h100/x", "H100", "64", "1664.0", ""]) == "llama-3-70b/h100/x,H100,64,1664.0,\n"


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab =+-@\t\r\n;,|\"'1")), max_size=12))
def test_no_separator_opens_a_formula(text: str) -> None:
    line = fmt.csv_line([fmt.csv_text(text), "2.0"])
    for separator in SEPARATORS:
        for cell in _cells(line, separator):
            assert not cell.startswith(fmt.CSV_FORMULA_PREFIXES), (text, separator, cell)
