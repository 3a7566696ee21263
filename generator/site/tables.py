"""The recipes tables of the home, all-recipes, model and GPU pages: a row per recipe (memoised per page), the
columns shown, the filters and the best layouts."""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from generator.catalog import Catalog
from generator.frameworks import framework_name
from generator.load import LoadedRecipe
from generator.site import formatting as fmt
from generator.site import views
from generator.site.page import SiteRun
from generator.site.rowdata import compact_rows, split_row
from generator.site.views import (
    ORIGIN_MEASURED,
    ORIGIN_PUBLISHED,
    PEAK_MEMORY_BANDS,
    Figures,
    Like,
    compact_name,
    evidence_kind,
    gpu_src,
    href,
    is_reported,
    is_time_to_train,
    like,
    model_src,
    peak_memory_band,
    recipe_src,
    release_order,
    throughput_kind,
    training_kind,
)


def table_row(loaded: LoadedRecipe, f: Figures, catalog: Catalog, page: str) -> dict[str, Any]:
    """One recipe in an index table: display text plus the raw numbers tablesort and the filters read."""
    r = loaded.recipe
    pub = r.publication
    return {
        "href": href(page, recipe_src(loaded)),
        "id": loaded.id,
        "name": loaded.id.split("/")[-1],
        "short_name": compact_name(loaded),
        "model": r.model,
        "model_href": href(page, model_src(catalog, r.model)),
        "gpu_type": r.gpu.type,
        "gpu_href": href(page, gpu_src(r.gpu.type)),
        "gpu_count": str(r.gpu.count),
        "gpus": f"{r.gpu.count} x {r.gpu.type}",
        "label": r.layout.label,
        "status": r.status.value,
        "origin": ORIGIN_PUBLISHED if is_reported(loaded) else ORIGIN_MEASURED,
        "source_href": fmt.safe_url(pub.url) if pub else None,
        "release": (pub.release or "") if pub else "",
        # Sort keys: numbers as text, "" where the value is unknown (sorted last either way; site_src/assets/js).
        "release_sort": ".".join(f"{n:04d}" for n in release_order(pub.release)) if pub and pub.release else "",
        "gpu_sort": f"{r.gpu.type.lower()} {r.gpu.count:06d}",
        "framework": framework_name(r.stack.framework),
        "precision": r.workload.precision.value,
        "training": r.workload.training.value if r.workload.training else "not stated",
        "peak_memory": peak_memory_band(loaded),
        "training_short": training_kind(loaded).removeprefix("training kind "),
        "precision_name": fmt.peak_name(r.workload.precision.value),
        "mfu_peak": f.derived.peak_precision or "",
        "tokens": fmt.short(f.tokens_per_s),
        "tokens_sort": repr(f.tokens_per_s),
        "ttt": is_time_to_train(loaded),
        "throughput": throughput_kind(loaded),
        "usd": fmt.usd_short(f.usd),
        "usd_sort": repr(f.usd) if f.usd is not None else "",
        "mfu": fmt.mfu_cell(f.mfu, f.mfu_peak),
        "mfu_sort": repr(f.mfu) if f.mfu is not None else "",
        "cv": fmt.percent_value(f.cv, 1),
        "cv_sort": repr(f.cv) if f.cv is not None else "",
        "seq": fmt.sequence(r.workload.row_tokens),
        "seq_sort": str(r.workload.row_tokens),
        "global_batch": str(r.workload.global_batch) if r.workload.global_batch else "not stated",
        **params_cell(loaded, catalog),
        "evidence": evidence_kind(loaded),
        "measured": fmt.date(r.result.measured),
        "measured_sort": r.result.measured.isoformat() if r.result.measured else "",
    }


def params_cell(loaded: LoadedRecipe, catalog: Catalog) -> dict[str, str]:
    """Model size as the tables show it: active parameters per token (N), and for a mixture of experts the total
    (the catalog's total_params) beside it, '3.3B of 30.5B', so that "30B" is never read as a dense 30B."""
    active = loaded.recipe.result.active_params.count
    card = catalog.models.get(loaded.recipe.model)
    total = card.total_params if card is not None else None
    text = fmt.params(active) if not total or total == active else f"{fmt.params(active)} of {fmt.params(total)}"
    return {"params": text, "params_sort": str(active), "params_size": fmt.params(active),
            "params_total": fmt.params(total) if total else fmt.params(active)}


def best_layouts(pairs: list[tuple[LoadedRecipe, dict[str, Any]]], by: str) -> list[dict[str, Any]]:
    """The fastest recipe (tokens/s per GPU) for each GPU count, per `by` ("gpu_type" on a model page, "model" on a
    GPU page), sequence length and like group (training kind, precision, throughput kind: none of those is a layout
    choice): the rows a page leads with. `pairs` come fastest first (render.SiteRun.rows), so the first of each key
    is its best; `tried` counts the key's recipes."""
    best: dict[tuple[str, int, Like, int], dict[str, Any]] = {}
    for loaded, row in pairs:
        r = loaded.recipe
        key = (row[by], r.gpu.count, like(loaded), r.workload.row_tokens)
        if key in best:
            best[key]["tried"] += 1
            continue
        group = key[2]
        best[key] = {"what": row[by], "what_href": row["gpu_href" if by == "gpu_type" else "model_href"],
                     "gpu_count": r.gpu.count, "precision": fmt.peak_name(group.precision),
                     "sequence": fmt.integer(key[3]), "kind": group.kind.removeprefix("training kind "),
                     "throughput": group.throughput, "ttt": group.time_to_train,
                     "href": row["href"], "id": row["id"],
                     "name": row["short_name"], "label": row["label"], "tokens": row["tokens"], "mfu": row["mfu"],
                     "tried": 1}
    return [best[k] for k in sorted(best, key=lambda k: (k[0].lower(), k[1], k[2].order, k[3]))]


def filter_options(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    def values(key: str, numeric: bool = False) -> list[str]:
        found = {row[key] for row in rows}
        return sorted(found, key=(lambda v: (int(v), v)) if numeric else views.caseless)

    return [{"key": "model", "label": "Model", "options": values("model")},
            {"key": "gpu_type", "label": "GPU type", "options": values("gpu_type")},
            {"key": "gpu_count", "label": "GPU count", "options": values("gpu_count", numeric=True)},
            {"key": "status", "label": "Status", "options": values("status")},
            {"key": "origin", "label": "Figures", "options": values("origin")},
            {"key": "framework", "label": "Framework", "options": values("framework")},
            {"key": "training", "label": "Training", "options": values("training")},
            {"key": "precision", "label": "Precision", "options": values("precision")},
            {"key": "seq", "label": "Sequence", "options": sorted({row["seq"] for row in rows},
                                                                  key=lambda v: (int(v.rstrip("k").replace(",", "")), v))},
            {"key": "global_batch", "label": "Global batch", "options": sorted(
                {row["global_batch"] for row in rows},
                key=lambda v: (not v.isdigit(), int(v) if v.isdigit() else 0, v))},
            {"key": "params_size", "label": "Active params", "options": _by_size({row["params_size"] for row in rows})},
            {"key": "params_total", "label": "Total params", "options": _by_size({row["params_total"] for row in rows})},
            {"key": "evidence", "label": "Evidence", "options": values("evidence")},
            {"key": "peak_memory", "label": "Peak memory", "options": sorted(
                {row["peak_memory"] for row in rows}, key=lambda v: PEAK_MEMORY_BANDS.index(v))}]


def _by_size(texts: set[str]) -> list[str]:
    return sorted(texts, key=lambda v: (float(v[:-1].replace(",", "")) * (1e9 if v.endswith("B") else 1e6), v))


SPARSE = 10


def _dense(pairs: list[tuple[LoadedRecipe, dict[str, Any]]], key: str) -> bool:
    return bool(pairs) and sum(bool(row[key]) for _, row in pairs) * SPARSE >= len(pairs)


# A recipes table serves its first LIVE_ROWS rows live, the rest as compact JSON (rowdata); one without filters shows
# every row up to ALL_ROWS_UP_TO, else its first LIVE_ROWS and says so (site_src/assets/js's LIVE and BIG).
# LIVE_ROWS is the all-recipes table's first view (table.js LIMIT): 500 live rows were 1 MB of the 10,000-row page,
# whose parsing put a shared link's first paint at 2.2-2.6 s against 1.0-1.3 s with 60 (benchmarks/site_scale.py).
LIVE_ROWS = 60


ALL_ROWS_UP_TO = 1000


def row(run: SiteRun, loaded: LoadedRecipe, page: str) -> dict[str, Any]:
    """The recipe's row on `page`, memoised under the recipe's key."""
    return run.memo.get(("row", run.keys[loaded.id], page),
                        lambda: table_row(loaded, run.figures[loaded.id], run.registry.catalog, page))


def plan_gpus(run: SiteRun) -> list[dict[str, Any]]:
    """The planner's GPU types: the catalog's, each with its catalog price per GPU-hour where it has one."""
    cat = run.registry.catalog
    return run.memo.get(("plan_gpus", run.inputs), lambda: views.gpu_prices(cat, list(cat.gpus)))


def rows(run: SiteRun, recipes: list[LoadedRecipe], page: str) -> list[tuple[LoadedRecipe, dict[str, Any]]]:
    """(recipe, row) pairs, fastest first."""
    pairs = [(loaded, row(run, loaded, page)) for loaded in recipes]
    return sorted(pairs, key=lambda pair: -float(pair[1]["tokens_sort"]))


def table(run: SiteRun, recipes: list[LoadedRecipe], page: str, table_id: str, show_model: bool = True,
          show_gpu: bool = True, ordered: bool = False) -> dict[str, Any]:
    """An index table of recipes (fastest first unless `ordered`), each row's HTML rendered once."""
    pairs = [(x, row(run, x, page)) for x in recipes] if ordered else rows(run, recipes, page)
    # A column shows only where at least one row in SPARSE has its value: step-time CV and the measured date
    # were empty in 2,214 of the committed 2,218 rows (the recipe pages and the CSV keep them).
    flags = {"show_model": show_model, "show_gpu": show_gpu,
             "show_release": any(r["release"] for _, r in pairs),
             "show_cv": _dense(pairs, "cv_sort"), "show_measured": _dense(pairs, "measured_sort")}
    template = run.env.get_template("recipe_row.html.j2")
    html = [run.memo.get(("row_html", run.keys[loaded.id], page, *flags.values()),
                         lambda r=r: Markup(template.render(row=r, **flags))) for loaded, r in pairs]
    # Past LIVE_ROWS, the rows go as compact JSON (rowdata), each row split once.
    parts = [run.memo.get(("row_parts", run.keys[loaded.id], page, *flags.values()), lambda h=h: split_row(h))
             for (loaded, _), h in zip(pairs[LIVE_ROWS:], html[LIVE_ROWS:], strict=True)]
    prices = views.gpu_prices(run.registry.catalog, [loaded.recipe.gpu.type for loaded, _ in pairs])
    return {"id": table_id, "rows_html": html[:LIVE_ROWS], "rows_json": Markup(compact_rows(parts)) if parts else "",
            "count": len(html), "sorted_by": "measured" if ordered else "tokens",
            "prices": prices, "plan_gpus": plan_gpus(run), "compare_href": views.href(page, "compare.md"),
            "live": LIVE_ROWS, "ttt": any(r["ttt"] for _, r in pairs),
            "partial": len(html) > ALL_ROWS_UP_TO, **flags}
