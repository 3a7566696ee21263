"""Every GPU type a recipe uses has a sourced, dated on-demand price in catalog/instances.yaml, or its catalog entry
says why none exists (`unpriced`); a recipe without $/1M is on such a GPU, or on a node size no instance offers."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from generator.registry import load_registry

ROOT = Path(__file__).resolve().parents[2]


def test_every_gpu_type_in_the_registry_is_priced_or_says_why_not() -> None:
    registry = load_registry(ROOT)
    priced = {inst.gpu_type for inst in registry.catalog.instances.values()}
    used = {loaded.recipe.gpu.type for loaded in registry.recipes}
    for gpu in used:
        spec = registry.catalog.gpus[gpu]
        assert (gpu in priced) != (spec.unpriced is not None), gpu
    assert sorted(g for g in used if registry.catalog.gpus[g].unpriced) == [
        "GB300", "H100-96GB", "MI300X", "MI325X", "MI350X", "MI355X"]


def test_recipes_without_a_price_are_on_an_unpriced_gpu() -> None:
    """The GB300, H100-96GB and AMD Instinct recipes (their GPUs say why no price exists), and three 4-GPU H100
    MLPerf submissions (no catalog instance has 4 H100); every other recipe has its $/1M (A100 at p4de/p4d, 1-GPU
    H100 at p5.4xlarge, L40S at g6e.12xlarge/g6e.48xlarge)."""
    registry = load_registry(ROOT)
    unpriced = Counter(loaded.recipe.gpu.type for loaded in registry.recipes
                       if loaded.recipe.result.usd_per_million_tokens is None)
    assert unpriced == {"GB300": 81, "H100-96GB": 26, "MI300X": 11, "MI325X": 8, "MI355X": 4, "MI350X": 1, "H100": 3}
    for loaded in registry.recipes:
        if loaded.recipe.gpu.type == "H100" and loaded.recipe.result.usd_per_million_tokens is None:
            assert registry.catalog.instance_for("H100", loaded.recipe.gpu.per_node) is None, loaded.path
