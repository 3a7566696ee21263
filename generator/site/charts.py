"""The model and GPU pages' charts: cost against speed with its Pareto frontier, and speed against GPU count."""

from __future__ import annotations

from typing import Any

from generator.load import LoadedRecipe
from generator.site import formatting as fmt
from generator.site import views
from generator.site.page import json_script
from generator.site.views import FiguresById, href, like, recipe_src


def _point_label(loaded: LoadedRecipe) -> str:
    r = loaded.recipe
    # Only the id's name and catalog keys: no contributor text goes into a page's scripts, even as inert JSON.
    return fmt.plain_title(f"{loaded.id.split('/')[-1]} ({r.gpu.count} x {r.gpu.type})")


def chart_points(recipes: list[LoadedRecipe], figures_of: FiguresById, page: str = "") -> list[dict[str, Any]]:
    """$/1M tokens (x) against tokens/s per GPU (y) for the recipes with a price, each with its page's link, its like
    group ("pre-training, FP8-CS": points of one colour) and whether it is on its group's Pareto frontier (no other
    recipe of the same training kind and precision both cheaper-or-equal and faster-or-equal, one strictly): a LoRA
    point never hides a pre-training one."""
    out = []
    for loaded in sorted(recipes, key=lambda x: like(x).order):  # the scaling chart's group order: the same colours
        f = figures_of[loaded.id]
        if f.usd is not None:
            out.append({"x": round(f.usd, 4), "y": round(f.tokens_per_s, 2), "label": _point_label(loaded),
                        "href": href(page, recipe_src(loaded)) if page else "", "group": like(loaded).text})
    best_y: dict[str, float] = {}
    for point in sorted(out, key=lambda p: (p["x"], -p["y"])):
        point["front"] = point["y"] > best_y.get(point["group"], float("-inf"))
        best_y[point["group"]] = max(best_y.get(point["group"], float("-inf")), point["y"])
    return out


def scaling_points(recipes: list[LoadedRecipe], figures_of: FiguresById, page: str,
                   by_model: bool = False) -> list[dict[str, Any]]:
    """Tokens/s per GPU (y) against the GPU count (x), each point a link to its recipe, in its like group; on a GPU
    page (`by_model`) the group names the model too, so that scaling reads per model and precision (a 125M model's
    tokens/s is no point on a 405B model's curve). Groups come in a stable order: model, then like order."""
    def group(loaded: LoadedRecipe) -> str:
        return f"{loaded.recipe.model}: {like(loaded).text}" if by_model else like(loaded).text

    ordered = sorted(recipes, key=lambda x: ((x.recipe.model.lower() if by_model else ""), like(x).order))
    return [{"x": loaded.recipe.gpu.count, "y": round(figures_of[loaded.id].tokens_per_s, 2),
             "label": _point_label(loaded), "href": href(page, recipe_src(loaded)), "group": group(loaded)}
            for loaded in ordered]


def chart(recipes: list[LoadedRecipe], figures_of: views.FiguresById, chart_id: str, page: str = "",
           cost: bool = True) -> dict[str, Any]:
    """The group page's charts: cost against speed with the Pareto frontier (models: on one GPU type it is y = k/x
    by construction, so GPU pages leave it out), and speed against GPU count (scaling)."""
    points = chart_points(recipes, figures_of, page) if cost else []
    scaling = scaling_points(recipes, figures_of, page, by_model=not cost) if page else []
    return {"id": chart_id, "json": json_script(points), "count": len(points), "cost": cost,
            "scaling": {"id": chart_id + "-scaling", "json": json_script(scaling), "count": len(scaling)}}
