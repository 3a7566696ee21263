"""The GPU type pages (gpus/<slug>.md) and their index: the card's peaks and price, the best layouts per model, the
recipes table and the scaling chart."""

from __future__ import annotations

from urllib.parse import urlencode

from generator.load import LoadedRecipe
from generator.site import formatting as fmt
from generator.site import predicted, tables, views
from generator.site.charts import chart
from generator.site.page import DATA_PAGE, Page, SiteRun, as_direct, group_by, markdown_page


def _facts(run: SiteRun, gpu_type: str) -> list[tuple[str, str]]:
    """What the catalog's GPU card says of the type: product, memory, dense peaks, on-demand price."""
    cat = run.registry.catalog
    spec = cat.gpus.get(gpu_type)
    if spec is None:
        return []
    return [("Product", spec.name), ("Memory", f"{spec.memory_gb} GB"),
            ("Dense BF16 peak", f"{fmt.number(spec.peak_flops.bf16 / 1e12, 0)} TFLOP/s"),
            *([("Dense FP8 peak", f"{fmt.number(spec.peak_flops.fp8 / 1e12, 0)} TFLOP/s")]
              if spec.peak_flops.fp8 else []),
            ("On-demand price", views.gpu_price_text(cat, gpu_type))]


def page(run: SiteRun, gpu_type: str, group: list[LoadedRecipe], advised: predicted.Predictions) -> Page:
    """gpus/<slug>.md: the recipes on this GPU type (`group`)."""
    src = views.gpu_src(gpu_type)
    # No cost chart: on one GPU type cost against speed is y = k/x by construction.
    body = run.env.get_template("group.md.j2").render(
        heading=f"{gpu_type}", kind="GPU", facts=_facts(run, gpu_type),
        best=tables.best_layouts(tables.rows(run, group, src), by="model"),
        table=tables.table(run, group, src, "or-group"), references=[],
        matrix=None, chart=chart(group, run.figures, "chart-" + views.slug(gpu_type), src, cost=False), plan=None,
        frameworks=[], predicted=advised.gpu_view(gpu_type, src),
        all_href=views.href(src, "recipes.md"), all_query=urlencode({"gpu_type": gpu_type}))
    return as_direct(Page(markdown_page(gpu_type, body, hide=DATA_PAGE), fmt.plain_title(gpu_type)))


def pages(run: SiteRun, advised: predicted.Predictions) -> dict[str, Page]:
    """Each GPU type's page, then their index (gpus/index.md)."""
    out: dict[str, Page] = {}
    index_rows = []
    for gpu_type, group in group_by(run.registry.recipes, lambda x: x.recipe.gpu.type).items():
        src = views.gpu_src(gpu_type)
        out[src] = page(run, gpu_type, group, advised)
        index_rows.append({"name": gpu_type, "href": views.href("gpus/index.md", src), "count": len(group)})
    out["gpus/index.md"] = as_direct(Page(markdown_page("GPUs", run.env.get_template("list.md.j2").render(
        heading="GPU types", items=index_rows)), "GPUs", in_nav=True))
    return out
