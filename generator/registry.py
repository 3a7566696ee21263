"""The registry on disk: finding its root, its catalogs and recipe files, loading them all, and the one atomic
writer.

A registry root is a folder holding both `catalog/` and `recipes/`; it is found from any path inside it, as git
finds `.git`, so commands work from any working directory.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import RootModel, ValidationError

from generator.catalog import Catalog, GpuCatalog, InstanceCatalog, _ModelFile
from generator.load import (
    LoadedRecipe,
    file_kind_problem,
    load_recipe,
    mode_problem,
    parts_name_problem,
    read_yaml,
    validation_problems,
)
from generator.problems import InputError, Problem

RECIPES_DIR = "recipes"
CATALOG_DIR = "catalog"
RECIPE_SUFFIXES = (".yaml", ".yml")
EXPECTED_LAYOUT = f"a recipe is {RECIPES_DIR}/<model>/<gpu>/<name>.yaml"


class RootNotFound(Exception):
    """No registry root above a path; the message says every folder looked at."""


def is_root(folder: Path) -> bool:
    return (folder / CATALOG_DIR).is_dir() and (folder / RECIPES_DIR).is_dir()


def working_root(verb: str) -> Path:
    """The registry the current folder lies in, for a verb run from inside one (`generator new`, `export`,
    `schema`); RootNotFound says the verb needs one, and where it looked."""
    try:
        return find_root(Path.cwd())
    except RootNotFound as exc:
        raise RootNotFound(f"`python -m generator {verb}` runs inside a registry: {exc}") from None


def find_root(start: Path) -> Path:
    """The nearest folder at or above `start` (a file or folder) holding catalog/ and recipes/."""
    here = start.absolute()
    if not here.is_dir():
        here = here.parent
    looked: list[Path] = []
    for folder in (here, *here.parents):
        if is_root(folder):
            return folder
        looked.append(folder)
    raise RootNotFound(f"no registry (a folder with {CATALOG_DIR}/ and {RECIPES_DIR}/) at or above {start}; "
                       f"looked in {', '.join(str(p) for p in looked)}")


def recipe_path(root: Path, model_slug: str, gpu_type: str, name: str) -> Path:
    """Where a recipe lives: recipes/<model>/<gpu>/<name>.yaml (the model's card file name, the GPU type in lower
    case); every writer of a new recipe (the importers, `new`) places it here."""
    return root / RECIPES_DIR / model_slug / gpu_type.lower() / f"{name}.yaml"


def is_recipe_file(path: Path) -> bool:
    return path.suffix.lower() in RECIPE_SUFFIXES


def _walk(folder: Path) -> list[str]:
    """Recipe files under a folder, and every symlinked folder in it (not entered, so a loop cannot hang the walk;
    listed, so that `placed_recipes` reports it instead of its recipes going unchecked in silence), as the text of
    their Paths, in pathlib's order (part by part). Strings, not Paths: a warm re-check walks every file."""
    top = os.fspath(folder)
    strip = len(os.curdir + os.sep) if top == os.curdir else 0  # "./m/x.yaml" is Path's "m/x.yaml"
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        here = dirpath[strip:]
        linked = [name for name in dirnames if os.path.islink(os.path.join(dirpath, name))]
        found.extend(os.path.join(here, name) for name in linked)
        dirnames[:] = [name for name in sorted(dirnames) if name not in linked]
        for name in filenames:
            if os.path.splitext(name)[1].lower() in RECIPE_SUFFIXES or _is_broken_link(os.path.join(dirpath, name)):
                found.append(os.path.join(here, name))
    return sorted(found, key=_path_order)


def _path_order(text: str) -> list[str]:
    """A path's sort key as pathlib's Path ordering compares them (its parts, in order); the walk's paths all share
    the folder's prefix, so a leading empty part (an absolute path's root) compares alike."""
    return text.split(os.sep)


def _is_broken_link(path: str) -> bool:
    """A symlink that leads nowhere (dangling, or a loop): os.walk lists it as a file whatever its name."""
    return os.path.islink(path) and not os.path.exists(path)


def recipe_files(root: Path, paths: Iterable[Path] | None = None) -> list[Path]:
    """Every recipe file of the registry, or of the given files and folders."""
    return [Path(text) for text in _recipe_texts(root, paths)]


def _recipe_texts(root: Path, paths: Iterable[Path] | None) -> list[str]:
    if not paths:
        return _walk(root / RECIPES_DIR)
    out: list[str] = []
    for p in paths:
        out.extend(_walk(p) if p.is_dir() and not p.is_symlink() else [os.fspath(p)])
    return out


def display_path(path: Path, root: Path) -> str:
    """A path as problems name it: relative to the registry root when inside it."""
    return _display(os.fspath(path), _parts_below(_absolute(path), _absolute(root)))


def _display(text: str, parts: tuple[str, ...] | None) -> str:
    return text if parts is None else (os.sep.join(parts) or ".")


@dataclass(frozen=True)
class Placed:
    """A recipe file as the loader and check first see it: its path's text, its display path (as problems name
    it) and what is wrong with its place (no problem: it may be read)."""

    text: str
    display: str
    problems: list[Problem]

    @property
    def path(self) -> Path:
        return Path(self.text)


def placed_recipes(root: Path, paths: Iterable[Path] | None = None) -> list[Placed]:
    """Every recipe file of the registry (or of the given files and folders), placed. A recipe is a regular file at
    recipes/<model>/<gpu>/<name>.yaml; a symlink may not lead out of recipes/ nor loop, a symlinked folder is not
    followed, and a fifo or device is never opened (reading one would hang or never end); its path below recipes/
    holds no control character (load.name_problem). One problem at 1:1 says what is wrong with the file's place or
    name; it is then not read. Each path's parts below the root are split once, for its display path and its
    place (every file of every check and load comes through here)."""
    outer = _absolute(root)
    placed = []
    for text in _recipe_texts(root, paths):
        parts = _parts_below(_absolute(text), outer)
        display = _display(text, parts)
        below_recipes = parts[1:] if parts and parts[0] == RECIPES_DIR else None
        placed.append(Placed(text, display, _placement(text, root, display, below_recipes)))
    return placed


def _parts_below(inner: str, outer: str) -> tuple[str, ...] | None:
    """The parts of absolute path `inner` below absolute path `outer`, None when it is not below it: pathlib's
    absolute().relative_to() on strings (every file of a check and a load; pathlib objects were a third of a warm
    re-check)."""
    if inner == outer:
        return ()
    prefix = outer if outer.endswith(os.sep) else outer + os.sep
    return tuple(inner[len(prefix):].split(os.sep)) if inner.startswith(prefix) else None


def _absolute(path: Path | str) -> str:
    text = os.fspath(path)  # a Path's text has no "." parts (but Path(".") itself) nor doubled separators
    if os.path.isabs(text):
        return text
    return os.getcwd() if text == "." else os.path.join(os.getcwd(), text)


def _placement(text: str, root: Path, display: str, below_recipes: tuple[str, ...] | None) -> list[Problem]:
    """What is wrong with a file's place, given its path's parts below recipes/ (None: not below it)."""
    # One lstat answers "a link?" and, for a plain entry, its kind (a warm re-check does this for every file).
    try:
        mode = os.lstat(text).st_mode
    except OSError as exc:
        found: str | None = f"cannot read file: {exc.strerror or exc}"
    else:
        linked = stat.S_ISLNK(mode)
        found = _link_problem(Path(text), root) if linked else None
        if found is None:
            kind = file_kind_problem(Path(text), EXPECTED_LAYOUT) if linked else mode_problem(mode, EXPECTED_LAYOUT)
            found = kind or _depth_problem(below_recipes) or parts_name_problem(below_recipes or ())
    return [Problem(display, 1, 1, "(document)", found)] if found else []


def _link_problem(path: Path, root: Path) -> str | None:
    """What is wrong with a symlinked recipe (_placement has seen it is one), or None."""
    try:
        resolved = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return "symlink that does not resolve (dangling or a loop)"
    if not resolved.is_relative_to((root / RECIPES_DIR).resolve()):
        return "symlink points outside recipes/"
    if resolved.is_dir():
        return "symlinked folder: not followed; recipes live in real folders under recipes/"
    return None


def _depth_problem(parts: tuple[str, ...] | None) -> str | None:
    """`parts`: the path's parts below recipes/ (None when it is not below it)."""
    if parts is None:
        return f"not under the registry's {RECIPES_DIR}/ folder; {EXPECTED_LAYOUT}"
    if len(parts) != 3:
        return f"at the wrong depth ({len(parts) - 1} folder(s) below {RECIPES_DIR}/); {EXPECTED_LAYOUT}"
    return None


# --- the catalogs --------------------------------------------------------------------------------------------


@dataclass
class CatalogMemo:
    """load_catalog's optional memo: the catalog files' stamps (_catalog_stamps) when last read, and what they gave.
    For a caller that checks one registry many times in a process (the check fuzzer: a catalog read was a quarter
    of each mutant's check); the catalog it returns is shared, so callers treat it as read-only, as check does."""

    stamps: tuple[tuple[str, int, int, int, int], ...] = ()
    catalog: Catalog | None = None


def load_catalog(root: Path, memo: CatalogMemo | None = None) -> Catalog:
    """The catalogs under root/catalog (GPUs, instances, model cards); problems are collected, not raised. With a
    memo, read again only when a catalog file changed, appeared or went."""
    if memo is None:
        return _read_catalogs(root)
    stamps = _catalog_stamps(root)
    if memo.catalog is None or memo.stamps != stamps:
        memo.stamps, memo.catalog = stamps, _read_catalogs(root)
    return memo.catalog


def _model_files(root: Path) -> list[Path]:
    return sorted((root / CATALOG_DIR / "models").glob("*.yaml"))


def _catalog_stamps(root: Path) -> tuple[tuple[str, int, int, int, int], ...]:
    """Each catalog file's path, device and inode (a file replaced, or a link pointed elsewhere, is another file),
    mtime and size: one stat a file, taken before every check of a memo's registry."""
    base = root / CATALOG_DIR
    out = []
    for path in [base / "gpus.yaml", base / "instances.yaml", *_model_files(root)]:
        try:
            st = path.stat()
            out.append((str(path), st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size))
        except OSError:
            out.append((str(path), -1, -1, -1, -1))
    return tuple(out)


def _read_catalogs(root: Path) -> Catalog:
    cat = Catalog()
    base = root / CATALOG_DIR
    cat.gpus = _read_catalog(cat, base / "gpus.yaml", GpuCatalog, root) or {}
    cat.instances = _read_catalog(cat, base / "instances.yaml", InstanceCatalog, root) or {}
    for path in _model_files(root):
        entries = _read_catalog(cat, path, _ModelFile, root)
        for name, card in (entries or {}).items():
            cat.models[name] = card
            cat.model_slugs[name] = path.stem
    for name, inst in cat.instances.items():
        if inst.gpu_type not in cat.gpus:
            cat.problems.append(Problem(display_path(base / "instances.yaml", root), 1, 1, f"{name}.gpu_type",
                                        f"unknown GPU type '{inst.gpu_type}'"))
    return cat


def _read_catalog(cat: Catalog, path: Path, model: type[RootModel], root: Path) -> dict | None:
    """One catalog file validated as `model`; None (its problems added to cat.problems) when it has any."""
    display = display_path(path, root)
    try:
        doc = read_yaml(path, display)
        cat.problems.extend(doc.problems)
        value = model.model_validate(doc.data).root
        return None if doc.problems else value
    except InputError as exc:
        cat.problems.extend(exc.problems)
    except ValidationError as exc:
        cat.problems.extend(validation_problems(doc, model, exc))
    return None


# --- the recipes -----------------------------------------------------------------------------------------------


@dataclass
class Registry:
    root: Path
    catalog: Catalog
    recipes: list[LoadedRecipe] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


# load_registry's optional memo: resolved path -> ((mtime_ns, size), the load of that file).
LoadMemo = dict[str, tuple[tuple[int, int], LoadedRecipe]]


def _load_memoised(path: Path, display: str, recipes_root: Path, memo: LoadMemo | None) -> LoadedRecipe:
    if memo is None:
        return load_recipe(path, display, recipes_root)
    key = str(path.resolve())
    try:
        st = path.stat()
    except OSError:
        memo.pop(key, None)
        return load_recipe(path, display, recipes_root)  # raises the located read error
    stamp = (st.st_mtime_ns, st.st_size)
    hit = memo.get(key)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    memo.pop(key, None)
    loaded = load_recipe(path, display, recipes_root)
    memo[key] = (stamp, loaded)
    return loaded


def load_registry(root: Path, paths: Iterable[Path] | None = None, memo: LoadMemo | None = None) -> Registry:
    """Loads the catalog and recipes; collects every problem instead of stopping at the first.

    With `memo` (kept by the caller across calls, as `mkdocs serve` rebuilds do), a file whose mtime and size
    are unchanged since it was last loaded is not read again."""
    catalog = load_catalog(root)
    registry = Registry(root, catalog, problems=list(catalog.problems))
    recipes_root = root / RECIPES_DIR
    for placed in placed_recipes(root, list(paths) if paths else None):
        if placed.problems:
            registry.problems.extend(placed.problems)
            continue
        try:
            registry.recipes.append(_load_memoised(placed.path, placed.display, recipes_root, memo))
        except InputError as exc:
            registry.problems.extend(exc.problems)
    return registry


# --- writing -----------------------------------------------------------------------------------------------


def atomic_write(path: Path, data: str | bytes, mode: int | None = None, *, durable: bool = True) -> Path:
    """Writes `data` to `path` so a reader (or a crash) sees the old file or the new, never half.

    Unique temp name in the same folder, fsync of the file, rename, fsync of the folder. The new file keeps the
    old one's permission bits (or `mode`, or 0o644). A symlink is written through to its target. Returns the
    path actually written. Any failure removes the temp file and re-raises. `durable=False` skips both fsyncs: for
    files made again from others (a site's generated pages), where a reader must never see half a file but a crash
    may lose the newest one (the fsyncs were a seventh of a whole-registry build)."""
    target = path.resolve() if path.is_symlink() else path
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if mode is None:
        try:
            mode = os.stat(target).st_mode & 0o777
        except OSError:
            mode = 0o644
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable:
        fsync_folder(target.parent)
    return target


def fsync_folder(folder: Path) -> None:
    """Makes a rename in `folder` durable (best effort where a folder cannot be opened)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
