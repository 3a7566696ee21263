"""The house's layer rules (pyproject.toml's [tool.importlinter] contracts) hold, and they bite: `lint-imports` run as
CI runs it passes on this tree and fails on a copy of it with a circle added."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from suitehelpers import ROOT

PACKAGES = ("generator", "runner", "hooks", "benchmarks")


def lint_imports_command() -> str:
    """The `lint-imports` of this interpreter's environment (the test extra installs it), else the one on PATH."""
    beside = Path(sys.executable).parent / "lint-imports"
    found = str(beside) if beside.exists() else shutil.which("lint-imports")
    assert found, "lint-imports not found: install the test extra (pip install -e '.[test]')"
    return found


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    # --no-cache: a copied tree must not read the checkout's cache (nor write one into it). The tree's packages
    # come first on the path and the checkout's not at all (benchmarks and hooks are namespace packages, which
    # would merge the two).
    inherited = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and Path(p).resolve() != ROOT]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), *inherited])}
    return subprocess.run([lint_imports_command(), "--no-cache"], cwd=root, env=env, capture_output=True, text=True,
                          timeout=120)


def test_the_tree_keeps_every_layer_contract() -> None:
    run = lint_imports(ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 broken" in run.stdout


def copy_tree(target: Path) -> None:
    """The Python packages and pyproject.toml of the checkout (no data: the import graph needs only the code)."""
    shutil.copy(ROOT / "pyproject.toml", target / "pyproject.toml")
    for package in PACKAGES:
        shutil.copytree(ROOT / package, target / package, ignore=shutil.ignore_patterns("__pycache__", "*.j2"))


def test_a_new_circle_fails(tmp_path: Path) -> None:
    copy_tree(tmp_path)
    catalog = tmp_path / "generator" / "catalog.py"
    # The catalog reading its files through the registry again: a noun importing the loader, and a circle (the
    # registry imports the catalog).
    catalog.write_text(catalog.read_text(encoding="utf-8") + "\nfrom generator import registry  # noqa\n",
                       encoding="utf-8")
    run = lint_imports(tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "generator.catalog is not allowed to import generator.registry" in run.stdout
    assert "No cycles are allowed in generator." in run.stdout


def test_the_generator_importing_the_runner_fails(tmp_path: Path) -> None:
    copy_tree(tmp_path)
    render = tmp_path / "generator" / "site" / "render.py"
    render.write_text(render.read_text(encoding="utf-8") + "\nfrom runner import yaml_edit  # noqa\n",
                      encoding="utf-8")
    run = lint_imports(tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "generator.site.render -> runner.yaml_edit" in run.stdout
    assert "The site (renderer and mkdocs hook) and the importers import no runner BROKEN" in run.stdout
