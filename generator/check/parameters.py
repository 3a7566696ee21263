"""Rules: the parameter counts the recipe and its model card state are the architecture's."""

from __future__ import annotations

from generator import figures
from generator.check.context import RecipeContext


def active_params(ctx: RecipeContext) -> None:
    r, card = ctx.recipe, ctx.card
    if card is None:
        return
    if r.result.active_params.count != card.active_params.count:
        ctx.bad(f"N = {r.result.active_params.count:,} but the catalog states {card.active_params.count:,}",
                "result", "active_params", "count")


def architecture_counts(ctx: RecipeContext) -> None:
    card, arch = ctx.card, ctx.arch
    if card is None or arch is None:
        return
    n = figures.param_count(arch, card.active_params.includes_norms)
    if n != card.active_params.count:
        ctx.bad(f"the architecture gives {n:,} parameters, the catalog states {card.active_params.count:,}", "model")
    if card.total_params is not None:
        total = figures.param_count(arch, card.active_params.includes_norms, total=True)
        if total != card.total_params:
            ctx.bad(f"the architecture gives {total:,} parameters in all, the catalog states {card.total_params:,}",
                    "model")


def mtp_layers(ctx: RecipeContext) -> None:
    # Training fewer MTP layers than the model has (0: none) is a choice; more is another model than `model`.
    r, lay, arch = ctx.recipe, ctx.recipe.layout, ctx.arch
    if ctx.card is None or not lay.mtp_layers or arch is None:
        return
    if not arch.mtp_layers:
        ctx.bad(f"mtp_layers {lay.mtp_layers} but {r.model} has no multi-token-prediction layers", "layout",
                "mtp_layers")
    elif lay.mtp_layers > arch.mtp_layers and not arch.mtp_repeated:
        ctx.bad(f"mtp_layers {lay.mtp_layers} but {r.model} has {arch.mtp_layers} multi-token-prediction "
                f"layer{'s' if arch.mtp_layers > 1 else ''}", "layout", "mtp_layers")


RULES = (active_params, architecture_counts, mtp_layers)
