"""render_site(registry) -> {docs path: Page}: every generated page and download, in memory.

Pure apart from reading the recipe files (the YAML source shown and offered for download) and the
committed schema. MkDocs is not imported here: the hook and `python -m generator export` both call this.

Recipe text reaches Markdown pages only inside raw HTML blocks, escaped (Jinja2 autoescape plus
formatting.html_text in `finalize`), so Python-Markdown never interprets it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import jinja2
import yaml
from markupsafe import Markup

from generator import figures
from generator.frameworks import framework_name
from generator.load import LoadedRecipe
from generator.models import Recipe
from generator.problems import Problem
from generator.registry import Registry
from generator.site import direct, evidence_view, predicted, schema_doc, views
from generator.site import failed as failed_view
from generator.site import formatting as fmt
from generator.site.direct import DirectHtml
from generator.site.rowdata import compact_rows, split_row
from generator.site.serve import Memo, ServeState

TEMPLATES = Path(__file__).parent / "templates"
DOWNLOADS = "downloads"


@dataclass(frozen=True)
class Page:
    """A generated file. Markdown pages (path ending .md) carry a title; others are downloads."""

    content: str
    title: str | None = None
    in_nav: bool = False
    direct: DirectHtml | None = None  # the page as HTML, for the hook to skip Python-Markdown (generator.site.direct)


def _direct(page: Page) -> Page:
    return Page(page.content, page.title, page.in_nav, direct.to_html(page.content))


def _finalize(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, Markup):
        return value
    return Markup(fmt.html_text(str(value)))


def environment() -> jinja2.Environment:
    """A new template environment. Its loader checks each template's mtime on use (auto_reload), so one
    environment serves every render of a process and `mkdocs serve` still picks up template edits."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True,
        finalize=_finalize,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    # The label every table puts beside a time-to-train figure, and what it means (views.TTT_*).
    env.globals.update(ttt_label=views.TTT_LABEL, ttt_title=views.TTT_TITLE, ttt_meaning=views.TTT_MEANING)
    return env


# Pages built around a recipe table: no sidebars (the tabs navigate), so every figure column fits at 1400 px.
DATA_PAGE = ["navigation", "toc"]


def _markdown(title: str, body: str, hide: list[str] | None = None) -> str:
    meta: dict[str, Any] = {"title": fmt.plain_title(title)}
    if hide:
        meta["hide"] = hide
    return "---\n" + "".join(f"{k}: {json.dumps(v)}\n" for k, v in meta.items()) + "---\n\n" + body


def render_card(env: jinja2.Environment, loaded: LoadedRecipe, registry: Registry, lead: Markup | None = None) -> str:
    """The card alone, as HTML (the golden test reads this). `lead` (the recipe page's status, headline tiles and
    evidence summary) goes under its title; it holds no element the card's text is read from."""
    src = views.recipe_src(loaded)
    extra = {"lead": lead} if lead is not None else {}
    return env.get_template("card.html.j2").render(card=views.card(loaded, registry.catalog, src), **extra)


def _lead(env: jinja2.Environment, loaded: LoadedRecipe, registry: Registry) -> Markup:
    cat = registry.catalog
    r = loaded.recipe
    src = views.recipe_src(loaded)
    lead = {"status": r.status.value, "status_meaning": views.STATUS_MEANING[r.status.value],
            "status_line": views.status_line(loaded), "id": loaded.id, "model": r.model,
            "model_href": views.href(src, views.model_src(cat, r.model)), "gpu_type": r.gpu.type,
            "gpu_href": views.href(src, views.gpu_src(r.gpu.type)), "tiles": views.headline_tiles(loaded, cat),
            "evidence": views.evidence_summary(loaded), "evidence_missing": views.evidence_missing(loaded),
            "tokens_raw": repr(r.result.tokens_per_s_per_gpu)}
    return Markup(env.get_template("recipe_lead.html.j2").render(lead=lead))


def _json_script(value: Any) -> Markup:
    """JSON for a <script type="application/json">: "<", ">" and "&" escaped so no text can close the element."""
    data = json.dumps(value, allow_nan=False)
    return Markup(data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


def _published(loaded: LoadedRecipe) -> dict[str, str] | None:
    pub = loaded.recipe.publication
    url = fmt.safe_url(pub.url) if pub else None
    if pub is None or url is None or not views.is_reported(loaded):
        return None
    where = [part for part in (f"release {pub.release}" if pub.release else None, pub.system,
                               f"line {pub.line}" if pub.line else None) if part]
    return {"url": url, "name": url.rstrip("/").rsplit("/", 1)[-1] or url, "where": ", ".join(where)}


def _reference(loaded: LoadedRecipe, by_id: dict[str, LoadedRecipe], src: str) -> dict[str, str] | None:
    ref = views.named_reference(loaded, by_id)
    if ref is None:
        return None
    return {"href": views.href(src, views.recipe_src(ref)), "name": ref.id.split("/")[-1],
            "label": ref.recipe.layout.label, "speedup": views.speedup_text(ref, loaded)}


def _evidence_ctx(ev: evidence_view.Evidence | None, loaded: LoadedRecipe, src: str) -> dict[str, Any] | None:
    if ev is None or not ev.text or ev.problems:
        return None
    steps = evidence_view.steps_chart(ev)
    chart_id = "chart-steps-" + views.slug(loaded.id)
    return {
        "steps": {"id": chart_id, "json": _json_script(steps)} if steps else None,
        "history": {"id": "chart-history-" + views.slug(loaded.id), "json": _json_script(ev.history_points)}
        if len(ev.history_points) >= 2 else None,
        "history_rows": ev.history, "runs": ev.runs, "source": ev.source,
        "window": f"steps {ev.window[0]}{fmt.DASH}{ev.window[1]}" if ev.window else None,
        "href": views.href(src, views.evidence_src(loaded)), "name": views.evidence_src(loaded).rsplit("/", 1)[-1],
    }


def _recipe_page(env: jinja2.Environment, loaded: LoadedRecipe, registry: Registry,
                 by_id: dict[str, LoadedRecipe], ev: evidence_view.Evidence | None) -> Page:
    cat = registry.catalog
    r = loaded.recipe
    src = views.recipe_src(loaded)
    try:
        source = loaded.path.read_text(encoding="utf-8")
    except OSError:
        source = yaml.safe_dump(loaded.data, sort_keys=False, allow_unicode=True)
    ctx = {
        "published": _published(loaded),
        "reference": _reference(loaded, by_id, src),
        "evidence": _evidence_ctx(ev, loaded, src),
        "superseded": [{"url": fmt.safe_url(s.url), "text": s.url, "commit": s.commit or fmt.DASH,
                        "line": str(s.line) if s.line else fmt.DASH, "tokens": fmt.tokens_per_s(s.tokens_per_s_per_gpu),
                        "tflops": fmt.stated(s.published_model_tflops_per_gpu)
                        if s.published_model_tflops_per_gpu is not None else fmt.DASH}
                       for s in (r.publication.superseded if r.publication else [])],
        "card_html": Markup(render_card(env, loaded, registry, _lead(env, loaded, registry))),
        "status": r.status.value,
        "status_meaning": views.STATUS_MEANING[r.status.value],
        "model": r.model,
        "model_href": views.href(src, views.model_src(cat, r.model)),
        "gpu_type": r.gpu.type,
        "gpu_href": views.href(src, views.gpu_src(r.gpu.type)),
        "all_href": views.href(src, "recipes.md"),
        "methodology_href": views.href(src, "methodology.md"),
        "env_script": views.env_script(loaded),
        "results": views.result_rows(loaded, cat),
        "time_to_train": views.time_to_train(loaded),
        "layout": views.layout_rows(loaded, cat),
        "stages": views.pipeline_stages(loaded, cat),
        "vpp": r.layout.vpp,
        "stack": views._field_rows(r.stack, fmt.STACK_LABELS),
        "workload": views.workload_rows(loaded),
        "correctness": views.correctness(loaded),
        "patches": [{"file": p.file, "sha256": p.sha256, "description": p.description} for p in r.patches],
        "publication": views._field_rows(r.publication) if r.publication else None,
        "notes_html": Markup(views.notes_html(r.notes)) if r.notes else None,
        "source": source.rstrip("\n"),
        "yaml_href": views.href(src, views.yaml_src(loaded)),
        "yaml_name": loaded.id.split("/")[-1] + ".yaml",
    }
    title = f"{fmt.title(r.model, r.gpu.type)} · {r.layout.label}"
    # No sidebar navigation (recipe pages are not in it; the tabs navigate); the table of contents stays.
    return Page(_markdown(title, env.get_template("recipe.md.j2").render(**ctx), hide=["navigation"]),
                fmt.plain_title(title))


@dataclass
class _Render:
    """One render_site call: the environment, the registry, each recipe's memo key, the serve-time state."""

    env: jinja2.Environment
    registry: Registry
    keys: dict[str, tuple[str, ...]]
    inputs: str  # the catalog's and templates' fingerprint (render_site's _inputs_key)
    state: ServeState
    with_evidence: set[str]  # ids of the recipes whose evidence file the site serves

    def frameworks(self, recipes: list[LoadedRecipe], page: str) -> list[dict[str, Any]]:
        """The model page's frameworks side by side: one table per like line two or more frameworks share."""
        return [{"title": group.title, "rows": views.framework_rows(group, self.registry.catalog, page,
                                                                   lambda x: x.id in self.with_evidence)}
                for group in views.framework_groups(recipes)]

    @property
    def memo(self) -> Memo:
        return self.state.memo

    def row(self, loaded: LoadedRecipe, page: str) -> dict[str, Any]:
        return self.memo.get(("row", self.keys[loaded.id], page),
                         lambda: views.table_row(loaded, self.registry.catalog, page))

    def plan_gpus(self) -> list[dict[str, Any]]:
        """The planner's GPU types: the catalog's, each with its catalog price per GPU-hour where it has one."""
        cat = self.registry.catalog
        return self.memo.get(("plan_gpus", self.inputs), lambda: views.gpu_prices(cat, list(cat.gpus)))

    def rows(self, recipes: list[LoadedRecipe], page: str) -> list[tuple[LoadedRecipe, dict[str, Any]]]:
        """(recipe, row) pairs, fastest first."""
        pairs = [(loaded, self.row(loaded, page)) for loaded in recipes]
        return sorted(pairs, key=lambda pair: -float(pair[1]["tokens_sort"]))

    def table(self, recipes: list[LoadedRecipe], page: str, table_id: str, show_model: bool = True,
              show_gpu: bool = True, ordered: bool = False) -> dict[str, Any]:
        """An index table of recipes (fastest first unless `ordered`), each row's HTML rendered once."""
        pairs = [(x, self.row(x, page)) for x in recipes] if ordered else self.rows(recipes, page)
        # A column shows only where at least one row in SPARSE has its value: step-time CV and the measured date
        # were empty in 2,214 of the committed 2,218 rows (the recipe pages and the CSV keep them).
        flags = {"show_model": show_model, "show_gpu": show_gpu,
                 "show_release": any(row["release"] for _, row in pairs),
                 "show_cv": _dense(pairs, "cv_sort"), "show_measured": _dense(pairs, "measured_sort")}
        template = self.env.get_template("recipe_row.html.j2")
        html = [self.memo.get(("row_html", self.keys[loaded.id], page, *flags.values()),
                          lambda row=row: Markup(template.render(row=row, **flags))) for loaded, row in pairs]
        # Past LIVE_ROWS, the rows go as compact JSON (rowdata), each row split once.
        parts = [self.memo.get(("row_parts", self.keys[loaded.id], page, *flags.values()), lambda h=h: split_row(h))
                 for (loaded, _), h in zip(pairs[LIVE_ROWS:], html[LIVE_ROWS:], strict=True)]
        prices = views.gpu_prices(self.registry.catalog, [loaded.recipe.gpu.type for loaded, _ in pairs])
        return {"id": table_id, "rows_html": html[:LIVE_ROWS], "rows_json": Markup(compact_rows(parts)) if parts else "",
                "count": len(html), "sorted_by": "measured" if ordered else "tokens",
                "prices": prices, "plan_gpus": self.plan_gpus(), "compare_href": views.href(page, "compare.md"),
                "live": LIVE_ROWS, "ttt": any(row["ttt"] for _, row in pairs),
                "partial": len(html) > ALL_ROWS_UP_TO, **flags}


SPARSE = 10


def _dense(pairs: list[tuple[LoadedRecipe, dict[str, Any]]], key: str) -> bool:
    return bool(pairs) and sum(bool(row[key]) for _, row in pairs) * SPARSE >= len(pairs)


# A recipes table serves its first LIVE_ROWS rows live, the rest as compact JSON (rowdata); one without filters shows
# every row up to ALL_ROWS_UP_TO, else its first LIVE_ROWS and says so (site_src/assets/js's LIVE and BIG).
# LIVE_ROWS is the all-recipes table's first view (table.js LIMIT): 500 live rows were 1 MB of the 10,000-row page,
# whose parsing put a shared link's first paint at 2.2-2.6 s against 1.0-1.3 s with 60 (benchmarks/site_scale.py).
LIVE_ROWS = 60
ALL_ROWS_UP_TO = 1000


def _chart(recipes: list[LoadedRecipe], registry: Registry, chart_id: str, page: str = "",
           cost: bool = True) -> dict[str, Any]:
    """The group page's charts: cost against speed with the Pareto frontier (models: on one GPU type it is y = k/x
    by construction, so GPU pages leave it out), and speed against GPU count (scaling)."""
    points = views.chart_points(recipes, registry.catalog, page) if cost else []
    scaling = views.scaling_points(recipes, registry.catalog, page, by_model=not cost) if page else []
    return {"id": chart_id, "json": _json_script(points), "count": len(points), "cost": cost,
            "scaling": {"id": chart_id + "-scaling", "json": _json_script(scaling), "count": len(scaling)}}


def _by(recipes: list[LoadedRecipe], key: Callable[[LoadedRecipe], str]) -> dict[str, list[LoadedRecipe]]:
    out: dict[str, list[LoadedRecipe]] = {}
    for loaded in recipes:
        out.setdefault(key(loaded), []).append(loaded)
    return dict(sorted(out.items(), key=lambda kv: kv[0].lower()))


def _home(run: _Render) -> Page:
    recipes = run.registry.recipes
    cat = run.registry.catalog
    # One line per model, training kind and precision: a LoRA run's tokens/s is no answer to a pre-training question.
    per_model = []
    for model, group in _by(recipes, lambda x: x.recipe.model).items():
        for like, members in views.by_like(group):
            rows = [row for _, row in run.rows(members, "index.md")]
            priced = [row for row in rows if row["usd"] != fmt.DASH]
            cheapest = min(priced, key=lambda row: float(row["usd_sort"])) if priced else None
            per_model.append({"model": model, "href": views.href("index.md", views.model_src(cat, model)),
                              "kind": like.kind.removeprefix("training kind "), "precision": fmt.peak_name(like.precision),
                              "throughput": like.throughput, "ttt": like.time_to_train,
                              "count": len(rows), "fastest": rows[0], "cheapest": cheapest,
                              "candidates": _cheapest_candidates(rows)})
    dated = sorted((x for x in recipes if x.recipe.result.measured), key=lambda x: x.recipe.result.measured,
                   reverse=True)
    latest = run.table(dated[:10], "index.md", "or-latest", ordered=True)
    counts = {"recipes": len(recipes), "models": len({x.recipe.model for x in recipes}),
              "gpus": len({x.recipe.gpu.type for x in recipes}),
              "verified": sum(x.recipe.status.value == "verified" for x in recipes)}
    body = run.env.get_template("home.md.j2").render(counts=counts, per_model=per_model, latest=latest,
                                                 downloads=_download_links("index.md"))
    return Page(_markdown("OpenRecipes", body, hide=DATA_PAGE), "OpenRecipes", in_nav=True)


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


def _download_links(page: str) -> list[dict[str, str]]:
    return [{"name": name, "href": views.href(page, f"{DOWNLOADS}/{name}"), "what": what} for name, what in (
        ("recipes.json", "every recipe with its derived figures"),
        ("recipes.csv", "one row per recipe, the table's figures (in a text cell, a =, +, -, @, tab or carriage "
                        "return at its start or after a , ; | tab or line end gets a ' before it, so that no "
                        "spreadsheet runs it as a formula whatever separator it splits on; figures are numbers)"),
        ("frameworks.csv", "frameworks side by side: per model, GPU type, training kind, precision and sequence that "
                           "two or more frameworks share, each framework's fastest recipe with its figures, MFU "
                           "formula, convergence result and evidence file"),
        ("recipe.schema.json", "the recipe's JSON Schema (2020-12)"))]


def _all_recipes(run: _Render) -> Page:
    recipes = run.registry.recipes
    rows = [run.row(loaded, "recipes.md") for loaded in recipes]
    body = run.env.get_template("recipes.md.j2").render(
        table=run.table(recipes, "recipes.md", "or-recipes"), filters=views.filter_options(rows),
        downloads=_download_links("recipes.md"))
    return Page(_markdown("All recipes", body, hide=DATA_PAGE), "All recipes", in_nav=True)


def _group_pages(run: _Render) -> dict[str, Page]:
    env, registry = run.env, run.registry
    cat = registry.catalog
    pages: dict[str, Page] = {}
    models = _by(registry.recipes, lambda x: x.recipe.model)
    by_id = {x.id: x for x in registry.recipes}
    advised = predicted.begin(run.memo.get, registry, run.inputs).result()
    index_rows = []
    for model, group in models.items():
        src = views.model_src(cat, model)
        card = cat.models.get(model)
        facts = []
        if card is not None:
            facts = [("Hugging Face id", card.hf_id), ("Revision", card.revision or fmt.DASH),
                     ("Active parameters per token (N)", fmt.integer(card.active_params.count))]
            if card.architecture is not None:
                a = card.architecture
                facts += [("Layers", str(a.layers)), ("Hidden size", fmt.integer(a.hidden_size)),
                          ("Attention heads", str(a.attention_heads)), ("Vocabulary", fmt.integer(a.vocab_size))]
        body = env.get_template("group.md.j2").render(
            heading=f"{model}", kind="model", facts=facts,
            best=views.best_layouts(run.rows(group, src), by="gpu_type"),
            table={**run.table(group, src, "or-group", show_model=False), "plan_gpus": []},  # asked in "Plan a run"
            references=views.reference_rows(group, by_id, src), matrix=views.release_matrix(group, src),
            chart=_chart(group, registry, "chart-" + views.slug(model), src), all_href=views.href(src, "recipes.md"),
            plan=_json_script(views.plan_rows(advised.family_recipes(model), src)), frameworks=run.frameworks(group, src),
            predicted=advised.model_view(model, src), planner={
                "families": advised.family_options(model, src), "gpus": run.plan_gpus(),
                "predicted": _json_script(advised.planner(model, src))},
            all_query=urlencode({"model": model}),
            failed=failed_view.for_model(registry.root, model, group, src, run.state.failed))
        pages[src] = Page(_markdown(model, body, hide=DATA_PAGE), fmt.plain_title(model))
        index_rows.append({"name": model, "href": views.href("models/index.md", src), "count": len(group)})
    pages["models/index.md"] = Page(_markdown("Models", env.get_template("list.md.j2").render(
        heading="Models", items=index_rows)), "Models", in_nav=True)
    index_rows = []
    for gpu_type, group in _by(registry.recipes, lambda x: x.recipe.gpu.type).items():
        src = views.gpu_src(gpu_type)
        spec = cat.gpus.get(gpu_type)
        facts = []
        if spec is not None:
            facts = [("Product", spec.name), ("Memory", f"{spec.memory_gb} GB"),
                     ("Dense BF16 peak", f"{fmt.number(spec.peak_flops.bf16 / 1e12, 0)} TFLOP/s"),
                     *([("Dense FP8 peak", f"{fmt.number(spec.peak_flops.fp8 / 1e12, 0)} TFLOP/s")]
                       if spec.peak_flops.fp8 else []),
                     ("On-demand price", views.gpu_price_text(cat, gpu_type))]
        body = env.get_template("group.md.j2").render(
            heading=f"{gpu_type}", kind="GPU", facts=facts, best=views.best_layouts(run.rows(group, src), by="model"),
            table=run.table(group, src, "or-group"), references=[],
            matrix=None, chart=_chart(group, registry, "chart-" + views.slug(gpu_type), src, cost=False), plan=None,
            frameworks=[], predicted=advised.gpu_view(gpu_type, src),
            all_href=views.href(src, "recipes.md"), all_query=urlencode({"gpu_type": gpu_type}))
        pages[src] = Page(_markdown(gpu_type, body, hide=DATA_PAGE), fmt.plain_title(gpu_type))
        index_rows.append({"name": gpu_type, "href": views.href("gpus/index.md", src), "count": len(group)})
    pages["gpus/index.md"] = Page(_markdown("GPUs", env.get_template("list.md.j2").render(
        heading="GPU types", items=index_rows)), "GPUs", in_nav=True)
    return pages


def methodology_numbers() -> dict[str, Any]:
    """The numbers of generator/figures.py the methodology page states (tolerances, thresholds, the change gate, each
    figure's least precision), written here from their one home so the page cannot drift from what check does."""
    def places(n: int) -> str:
        return f"{n} decimal place{'' if n == 1 else 's'}"

    def at_least(stated: figures.StatedPrecision) -> str:
        if stated.significant:
            return f"{stated.significant} significant figures, never fewer than {places(stated.decimals)}"
        return f"{10 ** -stated.decimals:.{stated.decimals}f} ({places(stated.decimals)})"

    return {
        "lora_n": f"{6 * figures.FROZEN_BASE_FRACTION:g}N",
        "gate_min": f"{figures.CHANGE_TOLERANCE_MIN_PERCENT:g}%",
        "gate_cv_factor": f"{figures.CHANGE_TOLERANCE_CV_FACTOR:g}",
        "gate_max": f"{figures.CHANGE_TOLERANCE_MAX_PERCENT:g}%",
        "noisy_cv": f"{figures.NOISY_STEP_TIME_CV_PERCENT:g}%",
        "tflops_tolerance": f"{figures.PUBLISHED_TFLOPS_TOLERANCE * 100:g}%",
        "min_correlation": f"{figures.CONVERGENCE_MIN_CORRELATION:g}",
        "max_failing": f"{figures.CONVERGENCE_MAX_FAILING_FRACTION * 100:g}%",
        "loss_fall": f"{figures.LOSS_FALL_RATIO:g}",
        "loss_fall_from": figures.LOSS_FALL_FROM.isoformat(),
        "floor_tolerance": f"{figures.CONVERGENCE_FLOOR_TOLERANCE * 100:g}%",
        "step0_tolerance": f"{figures.STEP0_LOSS_TOLERANCE:g}",
        "stated_params": f"{figures.STATED_PARAMS_TOLERANCE * 100:g}%",
        "pointwise": ", ".join(f"{tol * 100:g}% " + (f"above {above:g}" if above > float("-inf") else "otherwise")
                               for above, tol in figures.CONVERGENCE_POINTWISE_TOLERANCE),
        "final_loss": f"{figures.CONVERGENCE_FINAL_LOSS_TOLERANCE * 100:g}%",
        "outlier_sigmas": f"{figures.CONVERGENCE_OUTLIER_SIGMAS:g}",
        "imported_usd_decimals": f"{figures.IMPORTED_USD_DECIMALS}",
        "ttt_score": f"{10 ** -figures.TIME_TO_TRAIN_SCORE_DECIMALS:.{figures.TIME_TO_TRAIN_SCORE_DECIMALS}f} ms",
        "precisions": {name: {"label": stated.label, "at_least": at_least(stated)}
                       for name, stated in figures.PRECISIONS.items()},
        "mamba2_terms": [{"term": term, "formula": formula} for term, formula in figures.MAMBA2_TERMS],
        "mb_mamba_scan": f"{figures.MB_MAMBA_SCAN_FLOPS_PER_STATE}",
    }


def _methodology(env: jinja2.Environment, registry: Registry) -> Page:
    cat = registry.catalog

    def tflops(value: float | None) -> str:
        return fmt.DASH if value is None else fmt.number(value / 1e12, 0)

    def source(text: str) -> dict[str, str | None]:
        url, rest = fmt.split_source(text)
        return {"url": url, "text": rest if url else text}

    gpus = [{"type": k, "name": g.name, "memory": f"{g.memory_gb} GB", "bf16": tflops(g.peak_flops.bf16),
             "fp8": tflops(g.peak_flops.fp8), "fp4": tflops(g.peak_flops.fp4), "source": source(g.source),
             "date": fmt.date(g.date)} for k, g in sorted(cat.gpus.items())]
    instances = [{"name": k, "provider": i.provider, "gpu": f"{i.gpu_count} x {i.gpu_type}",
                  "usd_hour": fmt.usd(i.usd_per_hour), "usd_gpu_hour": fmt.usd(i.usd_per_hour / i.gpu_count),
                  "region": i.region or fmt.DASH, "source": source(i.source), "date": fmt.date(i.date)}
                 for k, i in sorted(cat.instances.items())]
    body = env.get_template("methodology.md.j2").render(gpus=gpus, instances=instances, numbers=methodology_numbers(),
                                                        statuses=list(views.STATUS_MEANING.items()),
                                                        mfu_bound=figures.MFU_BOUND,
                                                        verified_min_runs=figures.VERIFIED_MIN_RUNS,
                                                        verified_min_runs_from=figures.VERIFIED_MIN_RUNS_FROM.isoformat(),
                                                        drift_percent=f"{figures.STEP_TIME_DRIFT_PERCENT:g}")
    return Page(_markdown("Methodology", body), "Methodology", in_nav=True)


def _schema_page(env: jinja2.Environment, registry: Registry, memo: Memo) -> Page:
    rows = schema_doc.field_rows(_schema(registry, memo))
    body = env.get_template("schema.md.j2").render(
        rows=rows, schema_href=views.href("schema.md", f"{DOWNLOADS}/recipe.schema.json"))
    return Page(_markdown("Recipe schema", body, hide=["toc"]), "Recipe schema", in_nav=True)


# precision, training and mfu_peak say what an MFU is against: the precision's peak for reported rows, 4N for LoRA;
# throughput what tokens/s per GPU is (views.throughput_kind: steady-state, or a time to train with its evaluations);
# the last three are figures.comparable_mfu's: 6N over the dense BF16 peak, Megatron's count (with the causal
# attention term) over the row's peak and over BF16.
CSV_COLUMNS = ["id", "model", "gpu_type", "gpu_count", "instance", "status", "framework", "framework_stated", "layout",
               "precision",
               "training", "tokens_per_s_per_gpu", "throughput", "usd_per_million_tokens", "mfu", "mfu_peak",
               "step_time_cv_percent", "measured", "mfu_6n_bf16", "mfu_megatron", "mfu_megatron_bf16",
               "flops_per_token_6n", "published_tflops_per_gpu", "published_flops_per_token", "published_mfu",
               "peak_memory_allocated_gib", "peak_memory_reserved_gib"]


def _json_record(loaded: LoadedRecipe, registry: Registry) -> str:
    """One recipe of recipes.json, as json.dumps(indent=1) writes it two levels down ({"recipes": [here]})."""
    d = views.recipe_figures(loaded, registry.catalog).derived
    b = figures.published_beside(loaded.recipe, registry.catalog)
    record = {"id": loaded.id, "path": loaded.display, "recipe": loaded.data, "derived": {
        "usd_per_million_tokens": d.usd_per_million_tokens, "mfu": d.mfu, "window_tokens": d.window_tokens,
        "peak_flops": d.peak_flops, "peak_precision": d.peak_precision,
        "instance_usd_per_hour": d.instance_usd_per_hour,
        **({"published_flops_per_token": b.published_flops_per_token, "published_mfu": b.published_mfu,
            "flops_per_token_6n": b.ours_flops_per_token} if b is not None else {})}}
    return "  " + json.dumps(record, indent=1, default=str).replace("\n", "\n  ")


def _csv_record(loaded: LoadedRecipe, registry: Registry) -> str:
    r = loaded.recipe
    f = views.recipe_figures(loaded, registry.catalog)
    c = figures.comparable_mfu(r, registry.catalog)
    # Text cells neutralised against formula injection (fmt.csv_text) and quoted where they hold any separator
    # (fmt.csv_line), figures and the GPU count left as numbers.
    text = [fmt.csv_text(cell) for cell in (loaded.id, r.model, r.gpu.type)]
    return fmt.csv_line([
        *text, str(r.gpu.count), fmt.csv_text(r.gpu.instance or ""), fmt.csv_text(r.status.value),
        fmt.csv_text(framework_name(r.stack.framework)), fmt.csv_text(r.stack.framework), fmt.csv_text(r.layout.label),
        r.workload.precision.value, r.workload.training.value if r.workload.training else "",
        fmt.csv_number(f.tokens_per_s), views.throughput_kind(loaded), fmt.csv_number(f.usd), fmt.csv_number(f.mfu),
        f.derived.peak_precision or "", fmt.csv_number(f.cv),
        fmt.csv_text(fmt.date(r.result.measured)) if r.result.measured else "",
        *(fmt.csv_number(x) for x in (c.six_n_bf16, c.megatron, c.megatron_bf16)),
        *_published_cells(r, registry),
        *(fmt.csv_number(getattr(r.result.peak_memory, k, None)) for k in ("allocated_gib", "reserved_gib"))])


def _published_cells(recipe: Recipe, registry: Registry) -> list[str]:
    """recipes.csv's FLOP counts a token (6N, 4N on a frozen base) and, where the publication states Model TFLOP/s
    per GPU, its figure, the count it implies and its MFU over the same peak as `mfu` (figures.published_beside)."""
    six_n = 6.0 * recipe.result.active_params.count * (figures.FROZEN_BASE_FRACTION if figures.frozen_base(recipe)
                                                         else 1.0)
    b = figures.published_beside(recipe, registry.catalog)
    if b is None:
        return [fmt.csv_number(six_n), "", "", ""]
    return [fmt.csv_number(six_n), *(fmt.csv_number(x) for x in (b.published_tflops_per_gpu,
                                                                 b.published_flops_per_token, b.published_mfu))]


FRAMEWORK_COLUMNS = ["model", "gpu_type", "training", "precision", "throughput", "sequence", "framework",
                     "framework_stated", "id", "status", "tokens_per_s_per_gpu", "runs", "mfu", "mfu_formula",
                     "usd_per_million_tokens", "peak_memory", "convergence", "convergence_against", "evidence"]


def _frameworks_csv(run: _Render) -> str:
    """downloads/frameworks.csv: the model pages' side-by-side tables, one line per framework's recipe."""
    lines = [fmt.csv_line(FRAMEWORK_COLUMNS)]
    for model, group in _by(run.registry.recipes, lambda x: x.recipe.model).items():
        for side in views.framework_groups(group):
            for row in views.framework_rows(side, run.registry.catalog, "index.md", lambda x: x.id in run.with_evidence):
                lines.append(fmt.csv_line([
                    fmt.csv_text(model), fmt.csv_text(side.gpu_type), fmt.csv_text(side.like.kind),
                    side.like.precision, side.like.throughput, str(side.row_tokens), fmt.csv_text(row["framework"]),
                    fmt.csv_text(row["stack"]), fmt.csv_text(row["id"]),
                    row["status"], fmt.csv_number(row["tokens_value"]), fmt.csv_text(row["runs"]),
                    fmt.csv_number(row["mfu_value"]), fmt.csv_text(row["mfu_formula"]), fmt.csv_number(row["usd_value"]),
                    fmt.csv_text(row["memory"]), fmt.csv_text(row["convergence"]), fmt.csv_text(row["against"]),
                    fmt.csv_text(f"recipes/{row['id']}.evidence.json") if row["evidence_href"] else ""]))
    return "".join(lines)


def _exports(run: _Render) -> dict[str, Page]:
    registry = run.registry
    ordered = sorted(registry.recipes, key=lambda x: x.id)
    records = [run.memo.get(("json", run.keys[x.id]), lambda x=x: _json_record(x, registry)) for x in ordered]
    # What json.dumps({"recipes": [...]}, indent=1) writes, assembled from the memoised records.
    recipes_json = '{\n "recipes": [\n' + ",\n".join(records) + "\n ]\n}\n" if records else '{\n "recipes": []\n}\n'
    rows = [run.memo.get(("csv", run.keys[x.id]), lambda x=x: _csv_record(x, registry)) for x in ordered]
    return {
        f"{DOWNLOADS}/recipes.json": Page(recipes_json),
        f"{DOWNLOADS}/recipes.csv": Page(fmt.csv_line(CSV_COLUMNS) + "".join(rows)),
        f"{DOWNLOADS}/frameworks.csv": Page(_frameworks_csv(run)),
        f"{DOWNLOADS}/recipe.schema.json": Page(json.dumps(_schema(registry, run.memo), indent=1, default=str) + "\n"),
    }


def _schema(registry: Registry, memo: Memo) -> dict[str, Any]:
    """The committed recipe schema, parsed once per content (the schema page and its JSON download share it)."""
    text = (registry.root / "schema" / "recipe.schema.yaml").read_bytes()
    return memo.get(("schema", _digest_bytes(text)), lambda: schema_doc.parse_schema(text))


def _inputs_key(registry: Registry) -> str:
    from generator.site.live import fingerprint

    return fingerprint(list((registry.root / "catalog").rglob("*.yaml")) + list(TEMPLATES.glob("*.j2")))


def _digest(text: str) -> str:
    return _digest_bytes(text.encode())


def _digest_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def render_site(registry: Registry, problems: list[Problem] | None = None,
                state: ServeState | None = None) -> dict[str, Page]:
    """Every generated page and download of the site, keyed by its docs path.

    Problems found while rendering (an unreadable evidence file: left out of the page) go to `problems`. `state`
    is what a process keeps between renders (the MkDocs hook's, generator.site.serve); without one, a render of
    its own that keeps nothing."""
    state = state if state is not None else ServeState()
    memo = state.memo
    env = state.environment(environment)
    inputs = _inputs_key(registry)
    by_id = {x.id: x for x in registry.recipes}
    predicted.begin(memo.get, registry, inputs)  # the advisor's questions, answered while the recipe pages render
    keys: dict[str, tuple[str, ...]] = {}
    recipe_pages: dict[str, Page] = {}
    with_evidence: set[str] = set()
    for loaded in registry.recipes:
        try:
            text = loaded.path.read_text(encoding="utf-8")
        except OSError:
            text = yaml.safe_dump(loaded.data, sort_keys=False, allow_unicode=True)
        ev = evidence_view.read(loaded)
        for message in ev.problems if ev else []:
            if problems is not None:
                problems.append(Problem(views.evidence_display(loaded), 1, 1, "(document)",
                                        f"{message}; left out of the page"))
        ref = views.named_reference(loaded, by_id)
        ref_key = f"{ref.id}={ref.recipe.result.tokens_per_s_per_gpu!r}={ref.recipe.layout.label}" if ref else ""
        key = keys[loaded.id] = (loaded.id, loaded.display, _digest(text), _digest(ev.text) if ev else "", ref_key,
                                 inputs)
        recipe_pages[views.recipe_src(loaded)] = memo.get(
            ("page", key), lambda loaded=loaded, ev=ev: _direct(_recipe_page(env, loaded, registry, by_id, ev)))
        recipe_pages[views.yaml_src(loaded)] = Page(text)
        recipe_pages[views.compare_src(loaded)] = memo.get(
            ("compare", key), lambda loaded=loaded: Page(json.dumps(views.compare_record(loaded, registry.catalog),
                                                                    indent=None, ensure_ascii=False) + "\n"))
        if ev is not None and ev.text and not ev.problems:
            recipe_pages[views.evidence_src(loaded)] = Page(ev.text)
            with_evidence.add(loaded.id)
    # Each folder's (a model on a GPU type) twins, from which the compare view offers a like-with-like recipe.
    for src, folder in _by(registry.recipes, views.like_src).items():
        recipe_pages[src] = memo.get(("like", tuple(keys[x.id] for x in folder)), lambda folder=folder: Page(
            json.dumps(views.like_twins(folder), indent=None, ensure_ascii=False) + "\n"))
    run = _Render(env, registry, keys, inputs, state, with_evidence)
    pages: dict[str, Page] = {"index.md": _direct(_home(run)), "recipes.md": _direct(_all_recipes(run))}
    pages.update(recipe_pages)
    pages.update({path: _direct(page) for path, page in _group_pages(run).items()})
    pages["methodology.md"] = _methodology(env, registry)  # Markdown proper (lists, emphasis): Python-Markdown's
    pages["schema.md"] = _direct(_schema_page(env, registry, memo))
    pages["compare.md"] = _direct(Page(_markdown("Compare recipes", env.get_template("compare.md.j2").render(
        all_href=views.href("compare.md", "recipes.md")), hide=DATA_PAGE), "Compare recipes"))
    pages.update(_exports(run))
    memo.prune()
    return pages
