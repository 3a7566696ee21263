"""Instance prices are sourced and dated, every priced recipe's $/1M recomputes from them, and a price change reaches
the recipes through generator/reprice.py (never by hand)."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest
import yaml
from suitehelpers import check_registry

from generator import figures
from generator.registry import load_catalog, load_registry
from generator.reprice import CATALOG_PRICED_PREFIXES, reprice

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = "recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml"
B200_DIR = "recipes/deepseek-v3/b200"
GB200_DIR = "recipes/llama-3-70b/gb200"
B200_INSTANCE = "AWS p6-b200.48xlarge"


@pytest.fixture(scope="module")
def registry(committed):  # noqa: ANN001, ANN201 - the committed registry, loaded once per test process
    return committed


def test_every_instance_names_its_source_url_and_a_date() -> None:
    catalog = load_catalog(ROOT)
    assert catalog.problems == []
    assert catalog.instances
    for name, inst in catalog.instances.items():
        assert inst.source.startswith("https://"), name
        assert " " not in inst.source.split()[0], name  # the URL is one token; a note may follow it
        assert isinstance(inst.date, dt.date) and inst.date <= dt.date.today(), name
        assert inst.provider and inst.gpu_type in catalog.gpus, name


def test_importer_priced_recipes_have_one_offer_to_choose_from(registry) -> None:
    """Importers (and generator.reprice) pick an instance by (GPU type, GPUs per node). Two offers of a pair their
    recipes use would make that pick a silent choice by name, so such a second offer needs a decision first."""
    pairs = [(inst.gpu_type, inst.gpu_count) for inst in registry.catalog.instances.values()]
    used = {(r.recipe.gpu.type, r.recipe.gpu.per_node) for r in registry.recipes
            if r.path.name.startswith(CATALOG_PRICED_PREFIXES)}
    for pair in used:
        assert pairs.count(pair) <= 1, pair


def test_every_priced_recipe_recomputes_at_its_written_precision(registry) -> None:
    priced: set[str] = set()
    for loaded in registry.recipes:
        stated = loaded.recipe.result.usd_per_million_tokens
        if loaded.recipe.gpu.instance is None:
            assert stated is None, loaded.display
            continue
        inst = registry.catalog.instances[loaded.recipe.gpu.instance]
        computed = figures.usd_per_million_tokens(inst.usd_per_hour, inst.gpu_count,
                                                  loaded.recipe.result.tokens_per_s_per_gpu)
        assert computed == figures.derive(loaded.recipe, registry.catalog).usd_per_million_tokens
        if stated is None:
            continue
        line, col = loaded.positions[("result", "usd_per_million_tokens")]
        written = loaded.text.split("\n")[line - 1][col - 1:].split()[0]
        assert figures.coarser_than_required("usd_per_million_tokens", written, stated, computed) is None, \
            loaded.display
        assert figures.agrees(stated, computed, "usd_per_million_tokens", figures.written_decimals(written)), \
            loaded.display
        priced.add(loaded.recipe.gpu.type)
    # Every GPU type the catalog prices, at a node size some recipe uses, prices a recipe.
    sizes = {(r.recipe.gpu.type, r.recipe.gpu.per_node) for r in registry.recipes}
    expected = {inst.gpu_type for inst in registry.catalog.instances.values()
                if (inst.gpu_type, inst.gpu_count) in sizes}
    assert expected <= priced


@pytest.mark.slow
def test_the_committed_registry_is_what_the_catalog_prices_imply() -> None:
    changes, problems = reprice(ROOT, write=False)
    assert problems == []
    assert changes == [], [c.display for c in changes[:5]]


def _registry_copy(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "catalog", tmp_path / "catalog")
    for folder in (B200_DIR, GB200_DIR, str(Path(REFERENCE).parent)):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    return tmp_path


def _set_price(root: Path, instance: str, usd_per_hour: float) -> None:
    """Edits one instance's price in the copy's catalog text (its other lines kept)."""
    path = root / "catalog/instances.yaml"
    lines = path.read_text(encoding="utf-8").split("\n")
    start = lines.index(f"{instance}:")
    at = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("  usd_per_hour:"))
    lines[at] = f"  usd_per_hour: {usd_per_hour}"
    path.write_text("\n".join(lines), encoding="utf-8")


def test_a_price_change_propagates_through_the_script_and_nothing_else_moves(tmp_path: Path) -> None:
    root = _registry_copy(tmp_path)
    before = {p: p.read_bytes() for p in (root / "recipes").rglob("*.yaml")}
    _set_price(root, B200_INSTANCE, 120.5)
    changes, problems = reprice(root, write=True)
    assert problems == []
    b200 = sorted((root / B200_DIR).glob("*.yaml"))
    assert sorted(c.display for c in changes) == sorted(str(p.relative_to(root)) for p in b200)
    for path in b200:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        expected = figures.usd_per_million_tokens(120.5, 8, data["result"]["tokens_per_s_per_gpu"])
        assert data["gpu"]["instance"] == B200_INSTANCE
        assert data["result"]["usd_per_million_tokens"] == pytest.approx(expected, abs=0.5e-4)
        # Only the $/1M line differs from the committed file.
        old, new = before[path].decode().split("\n"), path.read_text(encoding="utf-8").split("\n")
        assert [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b] == \
            [next(i for i, line in enumerate(new) if line.startswith("  usd_per_million_tokens:"))]
    for path, data in before.items():
        if path not in b200:
            assert path.read_bytes() == data, path  # the reference recipe and the GB200 recipes stay byte-identical
    assert check_registry(load_registry(root, b200)) == []
    assert reprice(root, write=False)[0] == []  # idempotent


def test_an_unpriced_megatron_bridge_recipe_gains_the_instance_its_importer_would_choose(tmp_path: Path) -> None:
    root = _registry_copy(tmp_path)
    path = sorted((root / GB200_DIR).glob("mb-*.yaml"))[0]
    committed = path.read_text(encoding="utf-8")
    data = yaml.safe_load(committed)
    instance = data["gpu"]["instance"]
    assert instance == load_catalog(root).instance_for("GB200", data["gpu"]["per_node"])
    stripped = committed.replace(f"  instance: {instance}\n", "  instance: null\n", 1).replace(
        f"  usd_per_million_tokens: {committed.split('  usd_per_million_tokens: ')[1].split()[0]}\n",
        "  usd_per_million_tokens: null\n", 1)
    assert stripped != committed
    path.write_text(stripped, encoding="utf-8")
    changes, problems = reprice(root, write=True)
    assert problems == [] and [c.display for c in changes] == [str(path.relative_to(root))]
    assert path.read_text(encoding="utf-8") == committed
