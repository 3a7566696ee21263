"""Rules: the catalog entries a recipe names exist and agree with it; the file sits where its model and GPU say, and
its name, its stack and its publication name no other GPU or release than the recipe does."""

from __future__ import annotations

import re

from generator.catalog import Catalog
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



def gpu_model(gpu_type: str) -> str:
    """The GPU model a catalog key names, without its variant: H100-96GB, H100-PCIe -> H100; GB200 -> GB200."""
    return gpu_type.split("-", 1)[0]


def gpu_models_named(text: str, catalog: Catalog) -> set[str]:
    """The catalog's GPU models a text names as words ("DGX-B200", "8x H100", "XE9680x8H100-SXM-80GB", "Nebius B200
    n1"): not inside another name ("GB200" is not "B200", "AS-A126GS" no A100), an "x" of a count before it allowed."""
    found = set()
    for model in {gpu_model(key) for key in catalog.gpus}:
        if model in text and re.search(rf"(?:(?<![A-Za-z])|(?<=[0-9]x)){re.escape(model)}(?![A-Za-z0-9])", text):
            found.add(model)
    return found


def stack_gpu_name(ctx: RecipeContext) -> None:
    """stack.gpu_name is the driver's name of the recipe's GPU: not one the catalog lists for another GPU type, nor
    one that names another GPU model."""
    r, name = ctx.recipe, ctx.recipe.stack.gpu_name
    if not name or ctx.gpu is None:
        return
    folded = name.strip().lower()
    if folded in (n.lower() for n in ctx.gpu.nvml_names):
        return
    other = next((key for key, spec in ctx.catalog.gpus.items()
                  if key != r.gpu.type and folded in (n.lower() for n in spec.nvml_names)), None)
    named = gpu_models_named(name, ctx.catalog)
    if other is None and named and gpu_model(r.gpu.type) not in named:
        other = " or ".join(sorted(named))
    if other is not None:
        ctx.bad(f"stack.gpu_name '{name}' is the name of a {other}, but gpu.type is {r.gpu.type}", "stack", "gpu_name")


def publication_system(ctx: RecipeContext) -> None:
    """The system a publication names ("DGX-H100", "Nebius B200 n2 (16x B200-SXM-180GB)") holds the recipe's GPU
    model, where it names one."""
    r = ctx.recipe
    system = r.publication.system if r.publication else None
    if not system or ctx.gpu is None:
        return
    named = gpu_models_named(system, ctx.catalog)
    if named and gpu_model(r.gpu.type) not in named:
        ctx.bad(f"the publication's system '{system}' has {' and '.join(sorted(named))} GPUs, but gpu.type is "
                f"{r.gpu.type}", "publication", "system")


# A release in a recipe's file name, as the importers write it: "mb-25.09-dgx-b200-...", "dgxc-25.04.01-...".
_RELEASE_IN_NAME = re.compile(r"(?:^|-)(\d{2}\.\d{2}(?:\.\d{2})?)(?=-|$)")


def release_in_file_name(ctx: RecipeContext) -> None:
    """A file name that states a release (mb-25.09-...) states the publication's release."""
    r = ctx.recipe
    release = r.publication.release if r.publication else None
    if release is None:
        return
    name = ctx.loaded.path.stem
    stated = _RELEASE_IN_NAME.findall(name)
    if stated and release not in stated:
        ctx.bad(f"the file name {name}.yaml says release {' and '.join(stated)}, but publication.release is "
                f"{release}", "publication", "release")


RULES = (catalog_references, file_placement, run_names_itself, stack_gpu_name, publication_system,
         release_in_file_name)
