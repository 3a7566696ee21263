"""`mkdocs build` on a registry whose failed/ file or recipe does not validate: check's located lines and a stop, never
a traceback (issue 41: it ended in a 17-frame traceback while `python -m generator check` named the line) nor a site
built without the recipe."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from sitehelpers import ROOT, make_registry
from suitehelpers import generator_cli, mkdocs_build, site_project


def _check_then_build(tmp_path: Path, registry: Path, rel: str) -> tuple[str, str]:
    """check's first located line for `rel` (check must refuse it), and what `mkdocs build` printed (it must stop,
    without a traceback)."""
    check = generator_cli("check", "--no-cache", cwd=registry)
    located = [line for line in check.stdout.splitlines() if line.startswith(f"{rel}:")]
    assert check.returncode != 0 and located, check.stdout
    project = site_project(tmp_path, registry)
    result = mkdocs_build(project, tmp_path / "out")
    output = result.stdout + result.stderr
    shutil.rmtree(tmp_path / "out", ignore_errors=True)
    assert result.returncode != 0
    assert "Traceback" not in output, output[-3000:]
    return located[0], output


@pytest.mark.slow
def test_an_invalid_failed_file_stops_the_build_with_its_located_line(tmp_path: Path) -> None:
    registry = make_registry(tmp_path / "registry")
    (registry / "failed").mkdir()
    source = sorted((ROOT / "failed").glob("*.yaml"))[0]
    text = source.read_text(encoding="utf-8")
    broken = registry / "failed" / source.name
    broken.write_text(text.replace("layouts:", "layouts_misspelt:", 1), encoding="utf-8")
    assert broken.read_text() != text
    located, output = _check_then_build(tmp_path, registry, f"failed/{source.name}")
    assert "a failed-layouts file does not validate" in output and located in output, output[-3000:]


@pytest.mark.slow
def test_a_recipe_that_does_not_load_stops_the_build_with_its_located_line(tmp_path: Path) -> None:
    registry = make_registry(tmp_path / "registry")
    recipe = sorted((registry / "recipes").rglob("*.yaml"))[0]
    recipe.write_text(recipe.read_text(encoding="utf-8") + "model: [unclosed\n", encoding="utf-8")
    located, output = _check_then_build(tmp_path, registry, recipe.relative_to(registry).as_posix())
    assert "problem(s) in the registry's files" in output and located in output, output[-3000:]
