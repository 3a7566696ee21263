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
    assert sorted(g for g in used if registry.catalog.gpus[g].unpriced) == [
        "GB300", "H100-96GB", "H200-NVL", "MI350X", "MI355X"]


def test_recipes_without_a_price_are_on_an_unpriced_gpu(committed: Registry) -> None:
    """A recipe has its $/1M exactly when its GPU is priced and an instance of its node size exists (A100 at
    p4de/p4d, 1-GPU H100 at p5.4xlarge, L40S at g6e.12xlarge/g6e.48xlarge, 8-GPU MI300X at Azure's ND MI300X v5,
    8-GPU MI325X at TensorWave); the rest are on the GB300, H100-96GB, H200 NVL, MI350X and MI355X (each says why no
    price exists) or, like four 4-GPU H100 MLPerf submissions (the fourth: Fujitsu's v4.1 GX2560M7), on a node size
    no catalog instance has."""
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
    assert unpriced["H100"] == 4 and set(unpriced) == {"GB300", "H100-96GB", "H200-NVL", "MI350X", "MI355X", "H100"}
