"""What `mkdocs serve` needs to rebuild quickly: memoised loads and pages, pages written only when changed.

A rebuild re-runs the hook in the same process. Loads are kept by (file, mtime, size) and recipe pages by
(file bytes, catalog, templates), so one edited recipe costs one load and one render; pages are then written to
a cache folder (outside the docs dir) only if their text changed, which lets `mkdocs serve --dirty` rebuild just
the pages that changed. The memos live as long as the generator modules (the hook drops them when code changes).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from generator.catalog import Catalog
from generator.check import RECIPES_DIR, Registry, _display, _place_problems, recipe_files
from generator.load import LoadedRecipe, load_recipe
from generator.problems import InputError

_LOADS: dict[str, tuple[tuple[int, int], LoadedRecipe]] = {}


def load_registry_memo(root: Path) -> Registry:
    """generator.check.load_registry, reusing the loads of files unchanged since the last call."""
    catalog = Catalog.load(root)
    registry = Registry(root, catalog, problems=list(catalog.problems))
    recipes_root = root / RECIPES_DIR
    for path in recipe_files(root):
        display = _display(path, root)
        placed = _place_problems(path, root, display)
        if placed:
            registry.problems.extend(placed)
            continue
        try:
            st = path.stat()
        except OSError:
            st = None
        stamp = (st.st_mtime_ns, st.st_size) if st else (0, -1)
        key = str(path.resolve())
        hit = _LOADS.get(key)
        if hit is not None and hit[0] == stamp and st is not None:
            registry.recipes.append(hit[1])
            continue
        try:
            loaded = load_recipe(path, display, recipes_root)
        except InputError as exc:
            _LOADS.pop(key, None)
            registry.problems.extend(exc.problems)
            continue
        if st is not None:
            _LOADS[key] = (stamp, loaded)
        registry.recipes.append(loaded)
    return registry


def write_if_changed(folder: Path, rel: str, content: str) -> Path:
    """folder/rel holding content; rewritten (atomically) only when it differs, so its mtime means 'changed'."""
    target = folder / rel
    data = content.encode("utf-8")
    try:
        if target.stat().st_size == len(data) and target.read_bytes() == data:
            return target
    except OSError:
        pass
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.replace(tmp, target)
    return target


def fingerprint(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in sorted(paths):
        try:
            digest.update(str(path).encode() + path.read_bytes())
        except OSError:
            digest.update(str(path).encode())
    return digest.hexdigest()
