"""What every check rule sees: one loaded recipe, its catalog entries, today, and where to put a problem."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from generator import figures
from generator.catalog import Architecture, Catalog, GpuSpec, Instance, ModelCard
from generator.load import LoadedRecipe
from generator.models import Recipe
from generator.problems import Problem


@dataclass
class RecipeContext:
    loaded: LoadedRecipe
    catalog: Catalog
    today: dt.date
    problems: list[Problem] = field(default_factory=list)

    def __post_init__(self) -> None:
        r = self.loaded.recipe
        self.card: ModelCard | None = self.catalog.models.get(r.model)
        self.gpu: GpuSpec | None = self.catalog.gpus.get(r.gpu.type)
        self.instance: Instance | None = self.catalog.instances.get(r.gpu.instance) if r.gpu.instance else None
        self.arch: Architecture | None = self.card.architecture if self.card else None
        self.derived: figures.Derived = figures.derive(r, self.catalog)

    @property
    def recipe(self) -> Recipe:
        return self.loaded.recipe

    def bad(self, message: str, *where: str | int) -> None:
        """A problem at the field `where` (its key's line for a mapping or list, else its value's)."""
        line, col = self.loaded.position(*where)
        field_name = ".".join(str(w) for w in where) or "(document)"
        self.problems.append(Problem(self.loaded.display, line, col, field_name, message))
