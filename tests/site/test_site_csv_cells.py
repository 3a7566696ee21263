"""CSV cells neutralised as OWASP describes, whatever separator a spreadsheet splits on: no text cell, and no part of
one after a separator or line end, starts (after spaces or double quotes) with = + - @ tab or CR (a single quote
goes first), and a cell holding a separator is quoted. The cell is placed in the middle of its line, where a reader
splitting on another separator than "," does not see the quotes as quoting (issue 41: "TP2 PP4 DP1;=cmd|..." read
back as a formula with ";"). tests/site/test_site_csv_injection.py reads every export back with the OWASP payloads."""

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


def _opens(cell: str) -> bool:
    return cell.lstrip(' "').startswith(fmt.CSV_FORMULA_PREFIXES)


@pytest.mark.parametrize("separator", SEPARATORS)
@pytest.mark.parametrize("text", ["a;=cmd()", "a,=1+1", "x\t+1", "x|@SUM(1)", "ok;-2", '"q";=1', "a\r\n=1",
                                  "TP2 PP4 DP1;=cmd|' /C calc'!A0;", "a; =1", 'a;"=1'])
def test_a_formula_after_a_separator_stays_inside_its_cell(text: str, separator: str) -> None:
    cells = _cells(fmt.csv_line(["x", fmt.csv_text(text), fmt.csv_number(1.5)]), separator)
    assert not any(_opens(cell) for cell in cells), (text, separator, cells)
    if separator == ",":
        # read back with the file's own separator: the text with a single quote before each formula it could open
        assert cells == ["x", fmt.csv_text(text), "1.5"]
        assert fmt.csv_text(text).replace("'", "") == text.replace("'", "")


def test_plain_cells_are_written_as_they_were() -> None:
    assert fmt.csv_line(["llama-3-70b/h100/x", "H100", "64", fmt.csv_number(1664.0), ""]) == \
        "llama-3-70b/h100/x,H100,64,1664.0,\n"


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab =+-@\t\r\n;,|\"'1")), max_size=12))
def test_no_separator_opens_a_formula(text: str) -> None:
    line = fmt.csv_line(["x", text, fmt.csv_number(-2.0), text])
    for separator in SEPARATORS:
        for cell in _cells(line, separator):
            assert not _opens(cell) or cell == "-2.0", (text, separator, cell)
