"""Cross-checks: every derived figure recomputed, every structural rule enforced, all problems at once.

Each rule is a small named function of a `RecipeContext` in the module of its concern; `RULES` runs them in order.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from generator import evidence
from generator.catalog import Catalog
from generator.check import layout, parameters, references, results, sidecar, status
from generator.check.cache import CheckCache
from generator.check.context import RecipeContext
from generator.load import LoadedRecipe, load_recipe, recipe_id
from generator.problems import InputError, Problem
from generator.registry import RECIPES_DIR, Registry, display_path, placement_problems, recipe_files

RULES = (*references.RULES, *layout.RULES, *parameters.RULES, *results.RULES, *sidecar.RULES, *status.RULES)


def check_recipe(loaded: LoadedRecipe, catalog: Catalog, today: dt.date) -> list[Problem]:
    ctx = RecipeContext(loaded, catalog, today)
    for rule in RULES:
        rule(ctx)
    return ctx.problems


@dataclass
class CheckRun:
    """What `python -m generator check` found: files checked, problems, and warnings (never failures)."""

    files: int
    problems: list[Problem]
    warnings: list[str] = field(default_factory=list)


def _content_digest(path: Path) -> str:
    """The recipe's bytes and its sidecar's: a result is only reused for both unchanged."""
    digest = hashlib.sha256(path.read_bytes())
    try:
        digest.update(evidence.read_bytes(evidence.path_for(path)) or b"")
    except evidence.EvidenceError as exc:
        digest.update(b"\0" + str(exc).encode())
    return digest.hexdigest()


def check_tree(root: Path, paths: Iterable[Path] | None = None, use_cache: bool = True,
               today: dt.date | None = None, cache_folder: Path | None = None) -> CheckRun:
    """Checks the registry at `root` (or the given files and folders in it), reusing cached per-file results."""
    today = today or dt.date.today()
    catalog = Catalog.load(root)
    cache = CheckCache(root, today, cache_folder) if use_cache else None
    problems = list(catalog.problems)
    ids: dict[str, str] = {}
    files = recipe_files(root, list(paths) if paths else None)
    for path in files:
        display = display_path(path, root)
        placed = placement_problems(path, root, display)
        if placed:
            problems.extend(placed)
            continue
        rid, found = _check_file(path, display, root, catalog, today, cache)
        problems.extend(found)
        _note_id(ids, rid, display, problems)
    warnings = [w for w in [cache.save() if cache else None] if w]
    return CheckRun(len(files), sorted(set(problems)), warnings)


def _check_file(path: Path, display: str, root: Path, catalog: Catalog, today: dt.date,
                cache: CheckCache | None) -> tuple[str, list[Problem]]:
    digest = ""
    if cache is not None:
        try:
            digest = _content_digest(path)
        except OSError:
            digest = ""
        hit = cache.get(display, digest) if digest else None
        if hit is not None:
            return hit
    try:
        loaded = load_recipe(path, display, root / RECIPES_DIR)
        rid, found = loaded.id, check_recipe(loaded, catalog, today)
    except InputError as exc:
        rid, found = recipe_id(path, root / RECIPES_DIR), exc.problems
    if cache is not None and digest:
        cache.put(display, digest, rid, found)
    return rid, found


def _note_id(ids: dict[str, str], rid: str, display: str, problems: list[Problem]) -> None:
    key = rid.lower()
    if key in ids:
        problems.append(Problem(display, 1, 1, "(document)", f"duplicate recipe id '{rid}' (also {ids[key]})"))
    else:
        ids[key] = display


def check_registry(registry: Registry, today: dt.date | None = None) -> list[Problem]:
    today = today or dt.date.today()
    problems = list(registry.problems)
    ids: dict[str, str] = {}
    for loaded in registry.recipes:
        _note_id(ids, loaded.id, loaded.display, problems)
        problems.extend(check_recipe(loaded, registry.catalog, today))
    return sorted(set(problems))


def format_problems(problems: list[Problem], fmt: str) -> str:
    if fmt == "json":
        return json.dumps([p.as_dict() for p in problems], indent=2)
    return "\n".join(str(p) for p in problems)
