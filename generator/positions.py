"""Line and column (both counted from 1) of an offset into a text: what every located message of the loader and the
importers says. One text read many times (an importer locating each of thousands of rows in a document) keeps a
LineIndex: one scan for its line starts, then a bisection per offset, instead of counting newlines from the start
each time."""

from __future__ import annotations

from bisect import bisect_right


def line_col(text: str | bytes, offset: int) -> tuple[int, int]:
    """One offset's line and column (a single look: no index is kept)."""
    newline = "\n" if isinstance(text, str) else b"\n"
    line = text.count(newline, 0, offset) + 1  # type: ignore[arg-type]
    return line, offset - (text.rfind(newline, 0, offset) + 1) + 1  # type: ignore[arg-type]


class LineIndex:
    """The line starts of one text, for many offsets into it."""

    def __init__(self, text: str) -> None:
        starts = [0]
        at = text.find("\n")
        while at >= 0:
            starts.append(at + 1)
            at = text.find("\n", at + 1)
        self._starts = starts

    def line_col(self, offset: int) -> tuple[int, int]:
        line = bisect_right(self._starts, offset)
        return line, offset - self._starts[line - 1] + 1
