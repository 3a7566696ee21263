"""Shared by the whole suite (tests/ is on the path through tests/conftest.py): the committed registry exported from
git, a folder every test process of one run shares, and a lock between those processes."""

from __future__ import annotations

import datetime as dt
import fcntl
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import yaml

from tests.forked import python_m

if TYPE_CHECKING:
    from generator.problems import Problem
    from generator.registry import Registry
    from generator.site.page import Page

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml"
# What export_committed takes from HEAD: a registry, without the working tree others may be editing.
# And the advisor's validation figures, the measured error the site's predicted layouts state (generator/site/predicted.py).
REGISTRY_PARTS = ("recipes", "failed", "catalog", "schema", "benchmarks/results/advise_validate.json")


def export_committed(dest: Path) -> Path:
    """The committed recipes, failed layouts, catalogs and schema (`git archive HEAD`) extracted into dest."""
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "archive", "HEAD", *REGISTRY_PARTS], cwd=ROOT, capture_output=True,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser where PyYAML has it


def read_yaml(path: Path) -> object:
    """A YAML file as plain data, through libyaml's parser where PyYAML has it (as generator/load.py reads recipes):
    the same data as yaml.safe_load, several times faster over the 2,000-odd committed recipes."""
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_FAST_LOADER)


def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of this run that every pytest-xdist worker sees: the workers' base temp folders share a parent."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock between the processes of a run (xdist's workers), held while the block runs."""
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def check_registry(registry: Registry, today: dt.date | None = None) -> list[Problem]:
    """What `python -m generator check` reports for a registry loaded (and perhaps edited) in memory: its load
    problems, every recipe's rules and duplicate ids, without the cache or the failed-layouts files."""
    from generator.check import check_recipe, note_id

    today = today or dt.date.today()
    problems = list(registry.problems)
    ids: dict[str, str] = {}
    for loaded in registry.recipes:
        note_id(ids, loaded.id, loaded.display, problems)
        problems.extend(check_recipe(loaded, registry.catalog, today))
    return sorted(set(problems))


# --- a site built from a registry -------------------------------------------------------------------------------

@dataclass(frozen=True)
class BuiltSite:
    registry: Path  # the registry the site was built from, with the MkDocs project (site_project)
    out: Path  # `mkdocs build --strict`'s output folder
    log: str  # what the build wrote on stderr


def site_project(tmp: Path, registry: Path) -> Path:
    """mkdocs.yml, site_src/, site_theme/ and hooks/ next to a registry copy, the hook reading that registry (its
    page sources go to the copy's .openrecipes-cache/site/, see built_pages)."""
    shutil.copy(ROOT / "mkdocs.yml", registry / "mkdocs.yml")
    shutil.copytree(ROOT / "site_src", registry / "site_src")
    shutil.copytree(ROOT / "site_theme", registry / "site_theme")
    shutil.copytree(ROOT / "hooks", registry / "hooks")
    (registry / "generator").symlink_to(ROOT / "generator")  # the code under test, not a copy
    return registry


def mkdocs_build(project: Path, out: Path) -> subprocess.CompletedProcess:
    """`python -m mkdocs build --strict` of the project into `out`, in a fork of the suite's preloaded server
    (tests/forked.py: MkDocs, Material and Markdown imported once; ~0.67 s of CPU a one-recipe site instead of ~0.95).
    tests/site/test_site_serve.py starts `mkdocs serve` as a user does."""
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", PYTHONPATH=str(ROOT))
    return python_m("mkdocs", ["build", "--strict", "-f", str(project / "mkdocs.yml"), "-d", str(out)], env=env,
                    cwd=project, timeout=300)


BARE_ENV = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}  # a user's shell's, no more


def generator_cli(*args: str, cwd: Path, env: dict[str, str] | None = None,
                  timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`python -m generator ARGS` in `cwd` (environment: BARE_ENV unless given), in a fork of the suite's preloaded
    server (tests/forked.py). tests/test_check_cli.py, test_load_robustness.py and test_verb_imports.py start it as a
    user does."""
    return python_m("generator", args, env=BARE_ENV if env is None else env, cwd=cwd, timeout=timeout)


def built_pages(project: Path) -> dict[str, Page]:
    """Every page a build of `project` rendered, by its path in the site's sources: the text the MkDocs hook
    (hooks/openrecipes.py) wrote under the project's .openrecipes-cache/site/, generator.site.render_site's
    output for that build's registry. A Markdown page's title is its front matter's, as MkDocs reads it."""
    from generator.site.direct import split_front_matter
    from generator.site.page import Page

    cache = project / ".openrecipes-cache" / "site"
    pages = {}
    for path in sorted(cache.rglob("*")):
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            front, _ = split_front_matter(text)
            meta = yaml.load(front[4:-5], Loader=_FAST_LOADER) if front else None  # "---\n...\n---\n"; a safe loader
            pages[path.relative_to(cache).as_posix()] = Page(text, meta.get("title") if meta else None)
    return pages
