"""A problem found in an input file, located at its YAML node.

A problem prints as exactly one line, `path:line:col: field: message`, whatever the contributor wrote: every part
is escaped here, once, so no rule has to remember it. A value holding a newline cannot forge a second problem line,
and one holding ESC or a bidi override cannot send terminal escape sequences or reorder what a reviewer reads.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

# C0 controls, DEL and C1 controls; the Unicode line and paragraph separators (terminals and editors may break on
# them); the bidi embeddings, overrides and isolates and the implicit marks (Trojan Source, CVE-2021-42574); and
# the BOM, the zero-width no-break space, anywhere but a file's first byte.
UNSAFE_CHARACTERS = "\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff"
_UNSAFE = re.compile(f"[{UNSAFE_CHARACTERS}]")
# The path and field parts are also separated by ':' and ': ', so a colon in them is escaped as well.
_UNSAFE_IN_NAME = re.compile(f"[{UNSAFE_CHARACTERS}:]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape_character(match: re.Match[str]) -> str:
    char = match.group(0)
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def escape(text: str) -> str:
    """Text safe to print on one line of a terminal: control, separator and bidi characters as Python escapes."""
    return _UNSAFE.sub(_escape_character, text)


def unsafe_character(text: str) -> str | None:
    """The first control, line-separator or bidi character in `text`, escaped as `escape` writes it ('\\n',
    '\\x1b', '\\u202e'); None when it holds none. Names that reach a script, a terminal or a page (a recipe's
    path, an sbatch option) are refused when they hold one."""
    found = _UNSAFE.search(text)
    return escape(found.group(0)) if found else None


def escape_name(text: str) -> str:
    """A path or field for the `path:line:col: field:` prefix: escaped as `escape` does, and ':' as \\x3a."""
    return _UNSAFE_IN_NAME.sub(_escape_character, text)


@dataclass(frozen=True, order=True)
class Problem:
    path: str
    line: int
    col: int
    field: str
    message: str

    def __str__(self) -> str:
        return (f"{escape_name(self.path)}:{self.line}:{self.col}: {escape_name(self.field) or '(document)'}: "
                f"{escape(self.message) or '(no message)'}")

    def as_dict(self) -> dict[str, object]:
        """The raw parts, for JSON output (json.dumps escapes control characters itself)."""
        return asdict(self)


class InputError(Exception):
    """Raised for bad input; carries every problem found, never a traceback for the user."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("\n".join(str(p) for p in problems))
        self.problems = problems
