"""Every GPU type a recipe uses has a sourced, dated on-demand price in catalog/instances.yaml, or its catalog entry
says why none exists (`unpriced`); a recipe without $/1M is on such a GPU, or on a node size no instance offers."""

from __future__ import annotations

from collections import Counter

from generator.registry import Registry


def test_every_gpu_type_in_the_registry_is_priced_or_says_why_not(committed: Registry) -> None:
    registry = committed
    priced = {inst.gpu_type for inst in registry.catalog.instances.values()}
    used = {loaded.recipe.gpu.type for loaded in registry.recipes}
    for gpu in used:
        spec = registry.catalog.gpus[gpu]
        assert (gpu in priced) != (spec.unpriced is not None), gpu
    assert sorted(g for g in used if registry.catalog.gpus[g].unpriced) == ["H100-96GB", "H200-NVL", "MI350X"]


def test_recipes_without_a_price_are_on_an_unpriced_gpu(committed: Registry) -> None:
    """A recipe has its $/1M exactly when its GPU is priced and an instance of its node size exists (A100 at
    p4de/p4d, 1-GPU H100 at p5.4xlarge and 4-GPU H100 at Lambda, L40S at g6e.12xlarge/g6e.48xlarge, 8-GPU MI300X at
    Azure's ND MI300X v5, 8-GPU MI325X at TensorWave, 4-GPU GB300 and 8-GPU MI355X at Oracle); the rest, 30 of 2,757
    (26 H100-96GB torchtitan rows, 2 MI350X and 2 H200 NVL MLPerf rows), are on a GPU that says why no price exists."""
    registry = committed
    unpriced: Counter[str] = Counter()
    for loaded in registry.recipes:
        gpu = loaded.recipe.gpu
        priceable = (registry.catalog.gpus[gpu.type].unpriced is None
                     and (gpu.instance or registry.catalog.instance_for(gpu.type, gpu.per_node)) is not None)
        has_price = loaded.recipe.result.usd_per_million_tokens is not None
        assert has_price == priceable, loaded.path
        if not has_price:
            unpriced[gpu.type] += 1
    assert unpriced == Counter({"H100-96GB": 26, "MI350X": 2, "H200-NVL": 2})
