"""The home page (index.md): counts, each model's fastest and cheapest recipe per training kind and precision, the
latest measured recipes and the downloads."""

from __future__ import annotations

from typing import Any

from generator.site import formatting as fmt
from generator.site import tables, views
from generator.site.page import DATA_PAGE, Page, SiteRun, as_direct, group_by, markdown_page
from generator.site.pages.downloads import download_links


def page(run: SiteRun) -> Page:
    """index.md."""
    recipes = run.registry.recipes
    cat = run.registry.catalog
    # One line per model, training kind and precision: a LoRA run's tokens/s is no answer to a pre-training question.
    per_model = []
    for model, group in group_by(recipes, lambda x: x.recipe.model).items():
        for like, members in views.by_like(group):
            rows = [row for _, row in tables.rows(run, members, "index.md")]
            priced = [row for row in rows if row["usd"] != fmt.DASH]
            cheapest = min(priced, key=lambda row: float(row["usd_sort"])) if priced else None
            per_model.append({"model": model, "href": views.href("index.md", views.model_src(cat, model)),
                              "kind": like.kind.removeprefix("training kind "), "precision": fmt.peak_name(like.precision),
                              "throughput": like.throughput, "ttt": like.time_to_train,
                              "count": len(rows), "fastest": rows[0], "cheapest": cheapest,
                              "candidates": _cheapest_candidates(rows)})
    dated = sorted((x for x in recipes if x.recipe.result.measured), key=lambda x: x.recipe.result.measured,
                   reverse=True)
    latest = tables.table(run, dated[:10], "index.md", "or-latest", ordered=True)
    counts = {"recipes": len(recipes), "models": len({x.recipe.model for x in recipes}),
              "gpus": len({x.recipe.gpu.type for x in recipes}),
              "verified": sum(x.recipe.status.value == "verified" for x in recipes)}
    body = run.env.get_template("home.md.j2").render(counts=counts, per_model=per_model, latest=latest,
                                                 downloads=download_links("index.md"))
    return as_direct(Page(markdown_page("OpenRecipes", body, hide=DATA_PAGE), "OpenRecipes", in_nav=True))


def _cheapest_candidates(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per GPU type (rows come fastest first): its fastest recipe, the cheapest at any price of one's own ($ / 1M
    is the price over tokens/s), and its cheapest at the served figures (each recipe's own catalog instance). The
    home page reprices a model's lowest $ / 1M from these when prices are entered (site_src/assets/js)."""
    def pick(row: dict[str, Any]) -> dict[str, Any]:
        return {"id": row["id"], "href": row["href"], "tokens": float(row["tokens_sort"]),
                "usd": float(row["usd_sort"]) if row["usd_sort"] else None, "gpus": row["gpus"], "label": row["label"]}

    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        entry = out.setdefault(row["gpu_type"], {"gpu_type": row["gpu_type"], "fastest": pick(row), "served": None})
        if row["usd_sort"] and (entry["served"] is None or float(row["usd_sort"]) < entry["served"]["usd"]):
            entry["served"] = pick(row)
    return list(out.values())
