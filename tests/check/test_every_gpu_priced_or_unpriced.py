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
    assert sorted(g for g in used if registry.catalog.gpus[g].unpriced) == ["GB300", "H100-96GB"]


def test_recipes_without_a_price_are_on_an_unpriced_gpu(committed: Registry) -> None:
    """73 GB300 and 26 H100-96GB recipes; every other recipe has its $/1M (A100 at p4de/p4d, 1-GPU H100 at
    p5.4xlarge, since this change)."""
    registry = committed
    unpriced = Counter(loaded.recipe.gpu.type for loaded in registry.recipes
                       if loaded.recipe.result.usd_per_million_tokens is None)
    assert unpriced == {"GB300": 73, "H100-96GB": 26}
