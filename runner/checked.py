"""The checked write, the one way the runner changes a registry (`remeasure` and `convergence --write`): the new
files staged outside recipes/ (runner/commit.py), the staged recipe checked by the registry's own check as it will
be read (its sidecar beside it), and only a recipe that passes committed, the files renamed in together."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from generator.catalog import Catalog
from generator.check import check_recipe
from generator.load import LoadedRecipe, load_recipe
from generator.problems import InputError, Problem
from generator.registry import RECIPES_DIR
from runner import commit


class NotChecked(Exception):
    """The staged recipe fails check: `fresh`, the problems the write would bring, and `known`, those the recipe
    already had (still a refusal where the caller says so: nothing check rejects is written)."""

    def __init__(self, fresh: list[Problem], known: list[Problem]) -> None:
        super().__init__("; ".join(str(p) for p in fresh + known))
        self.fresh = fresh
        self.known = known


@dataclass
class Write:
    root: Path
    catalog: Catalog
    display: str  # the recipe's path as messages and problems name it
    changes: list[commit.FileChange]  # in commit order (runner/commit.py: the sidecar before the recipe)
    recipe: int  # the index of the recipe's change in `changes`
    before: LoadedRecipe | None  # the recipe as it is now (None: a new file)
    beside: list[Path] = field(default_factory=list)  # unchanged files the check reads beside it (its sidecar)
    refuse_known: bool = True  # refuse the problems the recipe already had, not only those the write brings


def problems(write: Write, staged: Path, staging: commit.Staging) -> tuple[list[Problem], list[Problem]]:
    """The registry's check of the staged recipe, located at the real file's lines: (new problems, known ones)."""
    today = dt.date.today()
    before = check_recipe(write.before, write.catalog, today) if write.before is not None else []
    try:
        loaded = load_recipe(staged, write.display, staging.place(write.root / RECIPES_DIR))
        after = check_recipe(loaded, write.catalog, today)
    except InputError as exc:
        after = exc.problems
    known = {(p.field, p.message) for p in before}
    return [p for p in after if (p.field, p.message) not in known], [p for p in after if (p.field, p.message) in known]


def checked_commit(write: Write, dry_run: bool, passed: Callable[[], None],
                   announce: Callable[[list[Path]], None]) -> bool:
    """Stages, checks and (unless dry_run) commits the write; `passed` runs once the check passed (the diff), and
    `announce` once the files are in place. NotChecked where check refuses; True when written."""
    with commit.Staging(write.root) as staging:
        staged = commit.stage(write.changes, staging)
        for path in write.beside:
            data = commit.current_bytes(path)
            if data is not None:
                staging.write(path, data, commit.DEFAULT_MODE)
        recipe = staged[write.recipe]
        assert recipe is not None
        fresh, known = problems(write, recipe, staging)
        if fresh or (known and write.refuse_known):
            raise NotChecked(fresh, known if write.refuse_known else [])
        passed()
        if dry_run:
            return False
        for change in write.changes:  # a new recipe for another GPU: its folder
            change.path.parent.mkdir(parents=True, exist_ok=True)
        commit.commit(write.changes, staged, staging, announce)
        return True
