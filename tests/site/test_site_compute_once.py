"""A render computes each recipe's derived figures once and a build reads each recipe file once (issue 40): counted
over the committed Llama 3 8B recipes (every page kind shows them: home, all recipes, the model page with its
frameworks and release matrix, the GPU pages, the recipe pages and the downloads)."""

from __future__ import annotations

import builtins
import io
from collections import Counter
from pathlib import Path

import pytest
from sitehelpers import ROOT

from generator import figures
from generator.registry import load_registry
from generator.site import render_site

FOLDER = ROOT / "recipes" / "llama-3-8b"


@pytest.fixture
def recipe_files() -> list[Path]:
    files = sorted(FOLDER.rglob("*.yaml"))
    assert len(files) >= 20  # a registry with models, GPU types, frameworks and releases enough to fill every page
    return files


def test_each_recipe_s_figures_are_derived_once_per_render(monkeypatch: pytest.MonkeyPatch,
                                                           recipe_files: list[Path]) -> None:
    registry = load_registry(ROOT, recipe_files)
    derive = figures.derive
    calls: Counter[str] = Counter()

    def counted(recipe, catalog):  # noqa: ANN001, ANN202
        calls[recipe.gpu.type + "/" + recipe.layout.label + "/" + repr(recipe.result.tokens_per_s_per_gpu)] += 1
        return derive(recipe, catalog)

    monkeypatch.setattr(figures, "derive", counted)
    pages = render_site(registry)
    assert any(path.startswith("models/") for path in pages) and "downloads/recipes.csv" in pages
    assert sum(calls.values()) == len(registry.recipes)


def test_a_build_reads_each_recipe_file_once(monkeypatch: pytest.MonkeyPatch, recipe_files: list[Path]) -> None:
    opened: Counter[str] = Counter()
    real_open = builtins.open

    def counting_open(file, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        if isinstance(file, str | Path) and str(file).endswith(".yaml") and str(FOLDER) in str(file):
            opened[str(file)] += 1
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", counting_open)
    monkeypatch.setattr(io, "open", counting_open)  # Path.read_text opens through io.open
    registry = load_registry(ROOT, recipe_files)
    render_site(registry)
    assert len(registry.recipes) == len(recipe_files)
    assert opened == Counter({str(path): 1 for path in recipe_files})
