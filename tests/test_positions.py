"""generator.positions: an offset's line and column, by one look or through a text's line index, agree everywhere."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from generator.positions import LineIndex, line_col


def test_by_hand() -> None:
    text = "ab\ncd\n\nx"
    index = LineIndex(text)
    # offset -> (line, column): "a" 1:1, the first newline 1:3, "c" 2:1, the empty line 3:1, "x" 4:1, the end 4:2
    for offset, expected in [(0, (1, 1)), (2, (1, 3)), (3, (2, 1)), (6, (3, 1)), (7, (4, 1)), (8, (4, 2))]:
        assert line_col(text, offset) == index.line_col(offset) == expected
    assert line_col(text.encode(), 7) == (4, 1)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("a\n\r\t é")), max_size=40))
def test_the_index_agrees_with_one_look_at_every_offset(text: str) -> None:
    index = LineIndex(text)
    for offset in range(len(text) + 1):
        assert index.line_col(offset) == line_col(text, offset), (text, offset)
