"""Rules: the catalog entries a recipe names exist and agree with it; the file sits where its model and GPU say."""

from __future__ import annotations

from generator.check.context import RecipeContext


def catalog_references(ctx: RecipeContext) -> None:
    r = ctx.recipe
    if ctx.card is None:
        ctx.bad(f"unknown model '{r.model}' (not in catalog/models/)", "model")
    if ctx.gpu is None:
        ctx.bad(f"unknown GPU type '{r.gpu.type}' (known: {', '.join(sorted(ctx.catalog.gpus))})", "gpu", "type")
    elif ctx.gpu.memory_gb != r.gpu.memory_gb:
        ctx.bad(f"{r.gpu.type} has {ctx.gpu.memory_gb} GB, not {r.gpu.memory_gb}", "gpu", "memory_gb")
    if r.gpu.instance and ctx.instance is None:
        ctx.bad(f"unknown instance '{r.gpu.instance}' (not in catalog/instances.yaml)", "gpu", "instance")
    if ctx.instance is not None:
        if ctx.instance.gpu_type != r.gpu.type:
            ctx.bad(f"{r.gpu.instance} carries {ctx.instance.gpu_type}, not {r.gpu.type}", "gpu", "instance")
        if ctx.instance.gpu_count != r.gpu.per_node:
            ctx.bad(f"{r.gpu.instance} has {ctx.instance.gpu_count} GPUs, per_node says {r.gpu.per_node}",
                    "gpu", "per_node")


def file_placement(ctx: RecipeContext) -> None:
    """recipes/<model-slug>/<gpu, lower case>/<name>.yaml"""
    r = ctx.recipe
    parts = ctx.loaded.id.split("/")
    if len(parts) != 3:
        return
    slug = ctx.catalog.model_slugs.get(r.model)
    if ctx.card is not None and parts[0] != slug:
        ctx.bad(f"file is under '{parts[0]}/' but model '{r.model}' lives under '{slug}/'", "model")
    if parts[1] != r.gpu.type.lower():
        ctx.bad(f"file is under '{parts[1]}/' but gpu.type is '{r.gpu.type}' (expected '{r.gpu.type.lower()}/')",
                "gpu", "type")


RULES = (catalog_references, file_placement)
