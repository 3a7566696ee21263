"""The compare page (compare.md) and the JSON it reads: each recipe's record (recipes/<id>.compare.json) and each
folder's like-with-like twins."""

from __future__ import annotations

import json
from typing import Any

from generator.catalog import Catalog
from generator.load import LoadedRecipe
from generator.site import formatting as fmt
from generator.site import views
from generator.site.page import DATA_PAGE, Page, SiteRun, as_direct, group_by, markdown_page
from generator.site.views import (
    Figures,
    Like,
    compact_name,
    evidence_kind,
    evidence_summary,
    layout_rows,
    like,
    like_src,
    model_field_rows,
    page_url,
    peak_memory_cell,
    recipe_src,
    status_line,
    workload_rows,
)

# What must be equal for two columns of the compare view to be like with like (design.md's data rules): the GPU
# count, tokens per row, training kind, precision and kind of throughput. (field, the label the view names it by)
LIKE_FIELDS = (("gpu_count", "GPU count"), ("row_tokens", "tokens per row"), ("kind", "training kind"),
               ("precision", "precision"), ("throughput", "kind of throughput"))


def like_fields(loaded: LoadedRecipe) -> dict[str, dict[str, Any]]:
    """A recipe's LIKE_FIELDS, each as the value the compare view matches on and the text it shows."""
    r = loaded.recipe
    group = like(loaded)
    return {"gpu_count": {"value": r.gpu.count, "text": fmt.integer(r.gpu.count)},
            "row_tokens": {"value": r.workload.row_tokens, "text": fmt.integer(r.workload.row_tokens)},
            "kind": {"value": group.kind, "text": group.kind.removeprefix("training kind ")},
            "precision": {"value": group.precision, "text": fmt.peak_name(group.precision)},
            "throughput": {"value": group.throughput, "text": group.throughput}}


# How many recipes of each like key a folder's twins keep: one more than the compare view's other columns (a column
# already shown is never offered), compare.js MAX_COMPARE.
TWINS_PER_KEY = 4


def like_twins(recipes: list[LoadedRecipe]) -> dict[str, Any]:
    """What the compare view offers in place of a column that is not like with like: the fastest TWINS_PER_KEY
    recipes of one folder (a model on a GPU type) for each GPU count, tokens per row, training kind, precision and
    kind of throughput, fastest first."""
    fastest = sorted(recipes, key=lambda x: (-x.recipe.result.tokens_per_s_per_gpu, x.id))
    kept: dict[tuple[int, int, Like], int] = {}
    out = []
    for loaded in fastest:
        r = loaded.recipe
        key = (r.gpu.count, r.workload.row_tokens, like(loaded))
        kept[key] = kept.get(key, 0) + 1
        if kept[key] > TWINS_PER_KEY:
            continue
        out.append({"id": loaded.id, "name": compact_name(loaded), "href": page_url(recipe_src(loaded)),
                    "gpus": f"{r.gpu.count} x {r.gpu.type}", "label": r.layout.label,
                    "tokens": fmt.short(r.result.tokens_per_s_per_gpu), "like": like_fields(loaded)})
    first = recipes[0].recipe
    return {"model": first.model, "gpu_type": first.gpu.type, "recipes": out}


def compare_record(loaded: LoadedRecipe, f: Figures, catalog: Catalog) -> dict[str, Any]:
    """What the compare view lays side by side, every value already text (formatted here, computed by figures)."""
    r = loaded.recipe
    evidence = [(e["name"], f"{e['result']}: {e['key']}") for e in evidence_summary(loaded)]
    if r.correctness is not None:
        evidence.insert(0, ("Correctness", r.correctness.result.value))
    fields = like_fields(loaded)
    # What decides between layouts comes first (the compare view shows it, and folds every later section): what
    # makes two columns like with like (LIKE_FIELDS), then the layout and its figures.
    sections = [
        ("Decides", [("GPU count", fields["gpu_count"]["text"]), ("Tokens per row", fields["row_tokens"]["text"]),
                     ("Training", fields["kind"]["text"]), ("Precision", fields["precision"]["text"]),
                     ("Throughput", fields["throughput"]["text"]), ("Layout", r.layout.label),
                     ("Tokens/s per GPU", fmt.short(f.tokens_per_s)),
                     ("$ / 1M tokens", fmt.usd_short(f.usd)),
                     ("MFU", fmt.mfu_cell(f.mfu, f.mfu_peak)), ("Memory per GPU", f"{r.gpu.memory_gb} GB"),
                     ("Evidence", evidence_kind(loaded))]),
        ("Recipe", [("Model", r.model), ("GPUs", fmt.gpus(r.gpu.count, r.gpu.type, r.gpu.memory_gb, r.gpu.per_node,
                                                          r.gpu.instance)),
                    ("Status", f"{r.status.value} ({status_line(loaded)})"), ("Author", r.author.name)]),
        ("Figures", [("Step-time CV", fmt.percent_value(f.cv)), ("GPU-hours", fmt.hours(r.result.gpu_hours)),
                     ("Peak memory per GPU", peak_memory_cell(loaded))]),
        ("Layout", layout_rows(loaded, catalog)),
        ("Stack", model_field_rows(r.stack, fmt.STACK_LABELS)),
        ("Workload", workload_rows(loaded)["workload"]),
        ("Evidence", evidence or [("Correctness", "none")]),
    ]
    return {"id": loaded.id, "title": f"{fmt.title(r.model, r.gpu.type)} · {r.layout.label}",
            "href": page_url(recipe_src(loaded)), "gpu_type": r.gpu.type, "tokens": f.tokens_per_s,
            "model": r.model, "like": fields, "like_src": like_src(loaded),
            "sections": [[name, [[label, text] for label, text in rows]] for name, rows in sections]}


def like_files(run: SiteRun) -> dict[str, Page]:
    """Each folder's (a model on a GPU type) twins, from which the compare view offers a like-with-like recipe."""
    return {src: run.memo.get(("like", tuple(run.keys[x.id] for x in folder)), lambda folder=folder: Page(
                json.dumps(like_twins(folder), indent=None, ensure_ascii=False) + "\n"))
            for src, folder in group_by(run.registry.recipes, like_src).items()}


def page(run: SiteRun) -> Page:
    """compare.md: the view itself is the page script's (site_src/assets/js), from the JSON above."""
    body = run.env.get_template("compare.md.j2").render(all_href=views.href("compare.md", "recipes.md"))
    return as_direct(Page(markdown_page("Compare recipes", body, hide=DATA_PAGE), "Compare recipes"))
