"""A problem found in an input file, located at its YAML node."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True, order=True)
class Problem:
    path: str
    line: int
    col: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.field}: {self.message}"

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


class InputError(Exception):
    """Raised for bad input; carries every problem found, never a traceback for the user."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("\n".join(str(p) for p in problems))
        self.problems = problems
