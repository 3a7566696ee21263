"""The registry's rows as the advisor reads them: a layout, what it trained, on what, and what the source states
(tokens/s per GPU, peak memory per GPU, or that it crashed / ran out of memory).

Recipes come from generator.registry (every recipe under recipes/), failed layouts from generator.failed
(failed/*.yaml). Peak memory per GPU is read from `result.peak_memory` where a recipe has that field
(reserved_gib, else allocated_gib: the largest over ranks, 2**30 bytes; else stated_gb, a publication's figure of
unstated kind: the Ultra-Scale Playbook's sweep, nanotron's figure, logged by world rank 0, the first pipeline stage,
read as 2**30 bytes); else from torchtitan's benchmarks, which state it in their text ("memory X GiB (the maximum
over GPUs)" in the notes). A failed layout's stated memory (figures the playbook states for a run it marks as
crashed) is read from `stated.memory_gb`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from generator import failed
from generator.advise.memory import Plan, Shape
from generator.catalog import Architecture, Catalog
from generator.models import Recipe
from generator.registry import Registry

WORKED = "worked"
FAILED = "failed"
# Where a stated peak was measured: the first pipeline stage (nanotron logs world rank 0) or the largest over GPUs.
FIRST_STAGE = "first stage"
MAX_OVER_GPUS = "max over GPUs"

_TORCHTITAN_MEMORY = re.compile(r"memory (?P<gb>[0-9]+(?:\.[0-9]+)?) GiB \(the maximum over GPUs\)")
_ZERO = re.compile(r"\bZeRO-(?P<stage>[0-3])\b")
# Frameworks that run Megatron's distributed optimizer by default (optimizer state sharded over DP: ZeRO-1).
_MEGATRON = ("megatron", "nemo", "miles", "slime")
# Framework families: the step-time model fits one compute efficiency each (what a framework's kernels and overlap
# make of the peak). Megatron's: Megatron-LM, Megatron-Bridge, NeMo, NVIDIA's MLPerf and NGC submissions.
FAMILIES = ("megatron", "nanotron", "llm-foundry", "torchtitan", "other")
_MEGATRON_NAMES = ("megatron", "nemo", "nvidia", "ngc", "miles", "slime")


def framework_family(framework: str) -> str:
    name = framework.lower()
    if name.startswith(_MEGATRON_NAMES):
        return "megatron"
    return name if name in FAMILIES else "other"


@dataclass(frozen=True)
class Observation:
    """One row: a recipe (worked) or a failed layout."""

    id: str  # the recipe's id (model/gpu/name) or failed/<model>.yaml layouts[i]
    model: str
    gpu: str
    gpu_memory_gb: float
    per_node: int
    framework: str
    shape: Shape
    plan: Plan
    outcome: str  # WORKED or FAILED
    tokens_per_s_per_gpu: float | None = None
    memory_gb: float | None = None  # stated peak memory per GPU, 2**30 bytes
    memory_scope: str | None = None  # FIRST_STAGE or MAX_OVER_GPUS
    steady: bool = True  # a steady-state step rate (not an MLPerf time-to-train throughput)
    source: str = ""  # the document the row comes from (publication URL), for grouping


def dense_architecture(catalog: Catalog, model: str) -> Architecture | None:
    """The model's architecture where the advisor can model it: a dense attention + FFN stack (no MoE, MLA or
    hybrid blocks)."""
    card = catalog.models.get(model)
    if card is None or card.architecture is None:
        return None
    arch = card.architecture
    if arch.moe is not None or arch.mla is not None or arch.hybrid_pattern is not None:
        return None
    return arch


def _framework(recipe: Recipe) -> str:
    return recipe.stack.framework.split()[0].rstrip(",").lower()


def _zero(recipe: Recipe, framework: str) -> int:
    if recipe.layout.fsdp:
        return 3
    stated = _ZERO.search(recipe.layout.label)
    if stated:
        return int(stated.group("stage"))
    return 1 if framework.startswith(_MEGATRON) else 0


def recipe_memory(recipe: Recipe) -> tuple[float | None, str | None]:
    """A recipe's stated peak memory per GPU (2**30 bytes) and where it was measured, or (None, None)."""
    # The recipe format's own field (result.peak_memory: allocated_gib, reserved_gib, the largest over ranks), read
    # through getattr so that this module runs on a recipe model with or without it. Reserved first: what the card
    # must hold.
    field = getattr(recipe.result, "peak_memory", None)
    if field is not None:
        value = getattr(field, "reserved_gib", None) or getattr(field, "allocated_gib", None)
        if value:
            return float(value), MAX_OVER_GPUS
        # A figure of unstated kind (stated_gb), read as the card must hold it; nanotron logs it on world rank 0 (the
        # first pipeline stage), every other framework's is taken as the largest over GPUs.
        stated = getattr(field, "stated_gb", None)
        if stated:
            return float(stated), FIRST_STAGE if _framework(recipe).startswith("nanotron") else MAX_OVER_GPUS
    match = _TORCHTITAN_MEMORY.search(recipe.notes or "")
    if match:
        return float(match.group("gb")), MAX_OVER_GPUS
    return None, None


def recipe_plan(recipe: Recipe, framework: str) -> Plan:
    layout = recipe.layout
    recompute = layout.recompute.granularity.value if layout.recompute is not None else "none"
    return Plan(tp=layout.tp, pp=layout.pp, dp=layout.dp, cp=layout.cp, vpp=layout.vpp, ep=layout.ep,
                micro_batch=layout.rows_per_microbatch, global_batch=recipe.workload.global_batch,
                zero=_zero(recipe, framework), recompute=recompute,
                sequence_parallel=layout.sequence_parallel)


def from_recipe(recipe: Recipe, rid: str, catalog: Catalog) -> Observation | None:
    arch = dense_architecture(catalog, recipe.model)
    gpu = catalog.gpus.get(recipe.gpu.type)
    if arch is None or gpu is None:
        return None
    framework = _framework(recipe)
    training = recipe.workload.training.value if recipe.workload.training is not None else "pre-training"
    shape = Shape(arch, recipe.workload.row_tokens, recipe.workload.precision.value, training)
    memory, scope = recipe_memory(recipe)
    return Observation(
        id=rid, model=recipe.model, gpu=recipe.gpu.type, gpu_memory_gb=float(recipe.gpu.memory_gb),
        per_node=recipe.gpu.per_node, framework=framework, shape=shape, plan=recipe_plan(recipe, framework),
        outcome=WORKED, tokens_per_s_per_gpu=recipe.result.tokens_per_s_per_gpu, memory_gb=memory,
        memory_scope=scope, steady=recipe.result.time_to_train is None,
        source=recipe.publication.url if recipe.publication else recipe.author.name)


def from_failed(entry: failed.FailedLayout, model: str, index: int, slug: str, catalog: Catalog,
                framework: str) -> Observation | None:
    arch = dense_architecture(catalog, model)
    gpu = catalog.gpus.get(entry.gpu.type)
    if arch is None or gpu is None:
        return None
    shape_ = entry.layout
    plan = Plan(tp=shape_.tp, pp=shape_.pp, dp=shape_.dp, micro_batch=shape_.rows_per_microbatch,
                global_batch=shape_.global_batch, zero=shape_.zero_stage, sequence_parallel=shape_.tp > 1)
    stated = entry.stated
    return Observation(
        id=f"{failed.FOLDER}/{slug}.yaml layouts[{index}]", model=model, gpu=entry.gpu.type,
        gpu_memory_gb=float(gpu.memory_gb), per_node=entry.gpu.per_node, framework=framework,
        shape=Shape(arch, shape_.row_tokens), plan=plan, outcome=FAILED,
        tokens_per_s_per_gpu=None, memory_gb=stated.memory_gb if stated and stated.memory_gb > 0 else None,
        memory_scope=FIRST_STAGE if stated else None, source=entry.publication.url)


def observations(registry: Registry, failed_layouts: dict[str, failed.FailedLayouts] | None = None) -> list[Observation]:
    """Every dense row of the registry the advisor can model, recipes first (in the registry's order), then the
    failed layouts (by model, in their files' order). A failed layout is of the framework of the recipes from the
    same publication (the playbook's: nanotron)."""
    catalog = registry.catalog
    out: list[Observation] = []
    framework_of: dict[str, str] = {}
    for loaded in registry.recipes:
        row = from_recipe(loaded.recipe, loaded.id, catalog)
        if row is not None:
            out.append(row)
            framework_of.setdefault(row.source, row.framework)
    if failed_layouts is None:
        failed_layouts, _ = failed.load_all(registry.root)
    for model, data in sorted(failed_layouts.items()):
        slug = catalog.model_slugs.get(model, model.lower())
        for index, entry in enumerate(data.layouts):
            framework = framework_of.get(entry.publication.url, "unknown")
            row = from_failed(entry, model, index, slug, catalog, framework)
            if row is not None:
                out.append(row)
    return out


def load(root: Path) -> tuple[Registry, list[Observation]]:
    from generator.registry import load_registry

    registry = load_registry(root)
    return registry, observations(registry)
