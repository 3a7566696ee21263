"""What every check rule sees: one loaded recipe, its catalog entries, today, and where to put a problem."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

from generator import figures
from generator.catalog import Architecture, Catalog, GpuSpec, Instance, ModelCard
from generator.load import LoadedRecipe, written_scalar
from generator.models import Recipe
from generator.problems import Problem


@dataclass
class RecipeContext:
    loaded: LoadedRecipe
    catalog: Catalog
    today: dt.date
    problems: list[Problem] = field(default_factory=list)
    recipe: Recipe = field(init=False)

    def __post_init__(self) -> None:
        r = self.recipe = self.loaded.recipe  # a plain attribute: the rules read it 200,000 times a cold check
        self.card: ModelCard | None = self.catalog.models.get(r.model)
        self.gpu: GpuSpec | None = self.catalog.gpus.get(r.gpu.type)
        self.instance: Instance | None = self.catalog.instances.get(r.gpu.instance) if r.gpu.instance else None
        self.arch: Architecture | None = self.card.architecture if self.card else None
        self.derived: figures.Derived = figures.derive(r, self.catalog)
        self._lines: list[str] | None = None

    def _source(self) -> list[str]:
        """The recipe's lines as the loader read them (split once)."""
        if self._lines is None:
            self._lines = self.loaded.text.splitlines()
        return self._lines

    def written(self, *where: str | int) -> str | None:
        """The scalar at `where` as the file spells it ('0.2190' keeps its zero, which the parsed float has lost);
        None when it cannot be read back. The stated precision of a figure is judged on this text."""
        return written_scalar(self._source(), self.loaded.positions.get(tuple(where)))

    def bad_in_text(self, pattern: re.Pattern[str], message: str, *where: str | int) -> None:
        """A problem at the first match of `pattern` inside the text at `where`: the line of a multi-line text that
        holds it (the text starts at its position, so the first match from there on is inside it)."""
        line, col = self.loaded.position(*where)
        lines = self._source()
        for number in range(line, len(lines) + 1):
            found = pattern.search(lines[number - 1], col - 1 if number == line else 0)
            if found:
                line, col = number, found.start() + 1
                break
        field_name = ".".join(str(w) for w in where) or "(document)"
        self.problems.append(Problem(self.loaded.display, line, col, field_name, message))

    def bad(self, message: str, *where: str | int) -> None:
        """A problem at the field `where` (its key's line for a mapping or list, else its value's)."""
        line, col = self.loaded.position(*where)
        field_name = ".".join(str(w) for w in where) or "(document)"
        self.problems.append(Problem(self.loaded.display, line, col, field_name, message))
