"""Rules: the catalog entries a recipe names exist and agree with it; the file sits where its model and GPU say."""

from __future__ import annotations

import re

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


_RECIPE_PATH = re.compile(r"recipes/[^\s'\"]+?\.ya?ml\b")


def run_names_itself(ctx: RecipeContext) -> None:
    """A `run` that names a recipe file names this one: a copy whose run still launches the recipe it was copied
    from would measure that recipe under this one's name."""
    own = f"recipes/{ctx.loaded.id}.yaml"
    for found in _RECIPE_PATH.finditer(ctx.recipe.run):
        if found.group(0) != own:
            ctx.bad_in_text(re.compile(re.escape(found.group(0))), f"runs {found.group(0)}, another recipe file; "
                            f"a recipe's run names its own file ({own})", "run")
            return


RULES = (catalog_references, file_placement, run_names_itself)
