"""Cross-checks: every derived figure recomputed, every structural rule enforced, all problems at once.

Each rule is a small named function of a `RecipeContext` in the module of its concern; `RULES` runs them in order.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gc
import json
import multiprocessing
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from generator import evidence, failed
from generator.catalog import Catalog
from generator.check import env, failed_layouts, inferred, layout, parameters, provenance, references, results, sidecar, status
from generator.check.cache import CheckCache, input_digest
from generator.check.context import RecipeContext
from generator.load import LoadedRecipe, load_recipe, recipe_id
from generator.problems import InputError, Problem
from generator.registry import RECIPES_DIR, CatalogMemo, Placed, load_catalog, placed_recipes

RULES = (*references.RULES, *layout.RULES, *parameters.RULES, *results.RULES, *sidecar.RULES, *status.RULES,
         *inferred.RULES, *env.RULES, *provenance.RULES)


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
    failed_files: int = 0  # failed-layouts files (failed/*.yaml) checked beside the recipes


def _content_digest(text: str, root: Path) -> str:
    """The recipe's bytes and its sidecar's, each bound on its own (cache.input_digest), and the SHA-256 of each
    stored copy it names (provenance's rule reads them): a result is only reused for all unchanged, and a missing
    sidecar or copy is not an empty one. `text`: the recipe's path (strings, not Paths: this runs for every file of
    a warm re-check)."""
    try:
        sidecar: tuple[str, bytes | None] = ("sidecar", evidence.read_bytes(evidence.text_path_for(text)))
    except evidence.EvidenceError as exc:
        sidecar = ("sidecar refused: " + str(exc), None)
    with open(text, "rb", buffering=0) as recipe:  # read whole: no buffer object between the file and the bytes
        raw = recipe.read()
    return input_digest("recipe", [("recipe", raw), sidecar, *provenance.copy_parts(root, raw)])


# A pool pays for itself only on a large registry: starting a worker costs about as much as checking 100 files.
PARALLEL_MIN_FILES = 400
FILES_PER_WORKER = 200


def check_tree(root: Path, paths: Iterable[Path] | None = None, use_cache: bool = True,
               today: dt.date | None = None, cache_folder: Path | None = None, jobs: int | None = None,
               catalog_memo: CatalogMemo | None = None) -> CheckRun:
    """Checks the registry at `root` (or the given files and folders in it), reusing cached per-file results.

    Gathers the files, takes what the cache already knows, checks the rest (in `jobs` processes; None: one per
    core on a large registry), then reports in file order. `catalog_memo` keeps the catalog between runs in one
    process (read again when a catalog file changes)."""
    today = today or dt.date.today()
    catalog = load_catalog(root, catalog_memo)
    cache = CheckCache(root, today, cache_folder) if use_cache else None
    problems = list(catalog.problems)
    failed_paths, paths = _split_failed(root, list(paths) if paths else None)
    failed_paths = failed.files(root) if failed_paths is None else failed_paths
    files = placed_recipes(root, paths) if paths is None or paths else []
    targets = _gather(files, root, cache, problems)
    misses = [t for t in targets if t.found is None]

    def check_failed_layouts() -> None:  # in this process, while worker processes check the recipes
        problems.extend(failed_layouts.check(root, catalog, failed_paths, cache))

    checked = _check_files(misses, root, catalog, today, jobs, meanwhile=check_failed_layouts)
    for target, (rid, found) in zip(misses, checked, strict=True):
        target.rid, target.found = rid, found
        if cache is not None and target.digest:
            cache.put(target.display, target.digest, rid, found)
    ids: dict[str, str] = {}
    for target in targets:
        problems.extend(target.found or [])
        note_id(ids, target.rid, target.display, problems)
    warnings = [w for w in [cache.save() if cache else None] if w]
    return CheckRun(len(files), sorted(set(problems)), warnings, len(failed_paths))


def _split_failed(root: Path, paths: list[Path] | None) -> tuple[list[Path] | None, list[Path] | None]:
    """The failed-layouts files among the given paths (the failed/ folder: all of them) and the rest; with no paths,
    every failed-layouts file and the whole registry."""
    if paths is None:
        return None, None
    folder = (root / failed.FOLDER).absolute()
    chosen: list[Path] = []
    rest: list[Path] = []
    for p in paths:
        if p.absolute() == folder:
            chosen.extend(failed.files(root))
        elif p.absolute().parent == folder:
            chosen.append(p)
        else:
            rest.append(p)
    return chosen, rest


@dataclass
class _Target:
    """One placed recipe file on its way through the check: its cached or fresh result."""

    text: str  # its path's text (a Path is made only for a file that is checked)
    display: str
    digest: str = ""
    rid: str = ""
    found: list[Problem] | None = None


def _gather(files: list[Placed], root: Path, cache: CheckCache | None, problems: list[Problem]) -> list[_Target]:
    targets = []
    for placed in files:
        if placed.problems:
            problems.extend(placed.problems)
            continue
        target = _Target(placed.text, placed.display)
        if cache is not None:
            try:
                target.digest = _content_digest(placed.text, root)
            except OSError:
                target.digest = ""
            hit = cache.get(placed.display, target.digest) if target.digest else None
            if hit is not None:
                target.rid, target.found = hit
        targets.append(target)
    return targets


def _check_files(targets: list[_Target], root: Path, catalog: Catalog, today: dt.date, jobs: int | None,
                 meanwhile: Callable[[], None]) -> list[tuple[str, list[Problem]]]:
    """Each target's (recipe id, problems), in order; `meanwhile` runs in this process while workers check."""
    work = [(Path(t.text), t.display) for t in targets]
    workers = _workers(len(work), jobs)
    if workers <= 1:
        with collector_paused():
            meanwhile()
            return [_check_file(path, display, root, catalog, today) for path, display in work]
    # forkserver: a clean worker whatever threads the caller runs (mkdocs serve, pytest); each loads the catalog once
    context = multiprocessing.get_context("forkserver" if sys.platform.startswith("linux") else "spawn")
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_start_worker,
                             initargs=(root, today)) as pool:
        pending = pool.map(_check_in_worker, work, chunksize=max(1, len(work) // (workers * 8)))  # submitted now
        with collector_paused():
            meanwhile()
        return list(pending)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector off for a batch of checks, back as it was after. Checking builds hundreds of
    thousands of small objects (YAML nodes, positions, models) without cycles, which reference counting frees; the
    collector's passes over them were a tenth of a cold check. A cycle made meanwhile waits for the next pass."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _workers(count: int, jobs: int | None) -> int:
    if jobs is not None:
        return max(1, min(jobs, count))
    if count < PARALLEL_MIN_FILES:
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cores, count // FILES_PER_WORKER))


_WORKER: dict[str, object] = {}  # this worker process's root, catalog and date (set once by _start_worker)


def _start_worker(root: Path, today: dt.date) -> None:
    gc.disable()  # as collector_paused, for the life of a worker that only checks recipes
    _WORKER.update(root=root, catalog=load_catalog(root), today=today)


def _check_in_worker(item: tuple[Path, str]) -> tuple[str, list[Problem]]:
    path, display = item
    return _check_file(path, display, _WORKER["root"], _WORKER["catalog"], _WORKER["today"])  # type: ignore[arg-type]


def _check_file(path: Path, display: str, root: Path, catalog: Catalog, today: dt.date) -> tuple[str, list[Problem]]:
    try:
        loaded = load_recipe(path, display, root / RECIPES_DIR)
        return loaded.id, check_recipe(loaded, catalog, today)
    except InputError as exc:
        return recipe_id(path, root / RECIPES_DIR), exc.problems


def note_id(ids: dict[str, str], rid: str, display: str, problems: list[Problem]) -> None:
    """A problem when recipe id `rid` is already among `ids` (lower-cased: ids differing only in case collide on a
    case-insensitive file system), else `rid` noted there."""
    key = rid.lower()
    if key in ids:
        problems.append(Problem(display, 1, 1, "(document)", f"duplicate recipe id '{rid}' (also {ids[key]})"))
    else:
        ids[key] = display


def format_problems(problems: list[Problem], fmt: str) -> str:
    if fmt == "json":
        return json.dumps([p.as_dict() for p in problems], indent=2)
    return "\n".join(str(p) for p in problems)
