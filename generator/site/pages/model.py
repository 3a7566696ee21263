"""The model pages (models/<slug>.md) and their index: facts from the model card, the best layouts per GPU type,
the recipes table, references, the release matrix, charts, the run planner, frameworks side by side and the failed
layouts."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from generator import figures
from generator.frameworks import framework_name
from generator.load import LoadedRecipe
from generator.site import formatting as fmt
from generator.site import predicted, tables, views
from generator.site.charts import chart
from generator.site.page import DATA_PAGE, Page, SiteRun, as_direct, group_by, json_script, markdown_page
from generator.site.pages import failed_layouts
from generator.site.views import (
    Figures,
    FiguresById,
    Like,
    by_like,
    compact_name,
    evidence_src,
    href,
    is_reported,
    like,
    named_reference,
    peak_memory_cell,
    recipe_src,
    release_order,
    slug,
    speedup_text,
)


def plan_rows(recipes: list[LoadedRecipe], page: str) -> list[dict[str, Any]]:
    """What the run planner (site_src/assets/js) needs of each recipe of a page: its GPUs, tokens/s per GPU and like
    group. The planner keeps the recipes of the chosen GPU type that need no more GPUs than one has, and costs each
    with figures.py's formulas at one's price and token count, best first within each like group."""
    out = []
    for group, members in by_like(recipes):
        for loaded in members:
            r = loaded.recipe
            out.append({"id": loaded.id, "href": href(page, recipe_src(loaded)), "name": compact_name(loaded),
                        "label": fmt.plain_title(r.layout.label), "gpu_type": r.gpu.type, "count": r.gpu.count,
                        "tokens": r.result.tokens_per_s_per_gpu, "group": group.text,
                        "kind": group.kind.removeprefix("training kind ")})
    return out


def reference_rows(recipes: list[LoadedRecipe], by_id: dict[str, LoadedRecipe], page: str) -> list[dict[str, str]]:
    """Each recipe against the recipe it names as its reference, with the speed-up."""
    out = []
    for loaded in sorted(recipes, key=lambda x: x.id):
        ref = named_reference(loaded, by_id)
        if ref is not None:
            out.append({"name": loaded.id.split("/")[-1], "href": href(page, recipe_src(loaded)),
                        "label": loaded.recipe.layout.label, "ref_name": ref.id.split("/")[-1],
                        "ref_href": href(page, recipe_src(ref)), "ref_label": ref.recipe.layout.label,
                        "speedup": speedup_text(ref, loaded)})
    return out


def _qualifier(loaded: LoadedRecipe) -> str:
    """What tells a row apart beyond its system, GPUs and precision: the name's other words ('tokendrop', 'mtp')."""
    r = loaded.recipe
    pub = r.publication
    if pub is None:
        return ""
    known = {"mb", f"{r.gpu.count}gpu", *slug(r.gpu.type).split("-"), *slug(pub.system or "").split("-"),
             *slug(r.workload.precision.value).split("-")}
    name = loaded.id.split("/")[-1]
    if pub.release:
        name = name.replace(pub.release, " ")
    return " ".join(w for w in slug(name).split("-") if w not in known and not w.isdigit())


def release_matrix(recipes: list[LoadedRecipe], page: str) -> dict[str, Any] | None:
    """Published layouts of one model across releases (columns) and systems (rows), with the change per release."""
    # A release that names no version ("unstated") has no place in the order; a row is one publisher's line of one
    # like group (a change between two publishers' figures, or between LoRA and pre-training, says nothing).
    published = [x for x in recipes if x.recipe.publication is not None and x.recipe.publication.release
                 and re.search(r"\d", x.recipe.publication.release)]
    if not published:
        return None
    releases = sorted({x.recipe.publication.release for x in published}, key=release_order)  # type: ignore[union-attr]
    groups: dict[tuple[str, int, str, str, str], dict[str, list[LoadedRecipe]]] = {}
    for loaded in published:
        r = loaded.recipe
        pub = r.publication
        kind = like(loaded).kind
        qualifier = ", ".join(q for q in (_qualifier(loaded), "" if kind == "pre-training" else kind) if q)
        key = (r.gpu.type, r.gpu.count, pub.system or r.author.name, r.workload.precision.value, qualifier)
        groups.setdefault(key, {}).setdefault(pub.release, []).append(loaded)
    rows = []
    for key in sorted(groups, key=lambda k: (k[0].lower(), k[1], k[3], k[4])):
        gpu_type, count, system, precision, qualifier = key
        cells, previous = [], None
        for release in releases:
            found = sorted(groups[key].get(release, []), key=lambda x: x.id)
            entries = [{"href": href(page, recipe_src(x)), "tokens": fmt.short(x.recipe.result.tokens_per_s_per_gpu),
                        "label": x.recipe.layout.label} for x in found]
            change = None
            if len(found) == 1 and previous is not None:
                change = fmt.signed_percent(figures.speedup(previous.recipe.result.tokens_per_s_per_gpu,
                                                            found[0].recipe.result.tokens_per_s_per_gpu))
            if len(found) == 1:
                previous = found[0]
            elif found:
                previous = None  # two rows in one cell: no single figure to compare the next release with
            cells.append({"entries": entries, "change": change})
        rows.append({"gpus": f"{count} x {gpu_type}", "system": system, "precision": precision,
                     "qualifier": qualifier, "cells": cells})
    return {"releases": releases, "rows": rows}


def mfu_formula(loaded: LoadedRecipe, f: Figures) -> str:
    """How the site's MFU of a recipe is computed (figures.mfu), with its numbers: '6 x N (1.2B) x tokens/s per GPU
    / BF16 peak (989 TFLOP/s)'; 4N for a frozen base; the stated figure where the site does not recompute it."""
    r = loaded.recipe
    if f.mfu is None:
        return fmt.DASH
    if f.derived.mfu is None or r.result.mfu_note:
        return "as stated by the recipe" + (f": {r.result.mfu_note}" if r.result.mfu_note else "")
    flops = "4" if figures.frozen_base(r) else "6"
    peak = fmt.peak_name(f.derived.peak_precision or "bf16")
    return (f"{flops} x N ({fmt.params(r.result.active_params.count)}) x tokens/s per GPU / {peak} peak "
            f"({fmt.number(f.derived.peak_flops / 1e12, 0)} TFLOP/s)")


def convergence_summary(loaded: LoadedRecipe) -> str:
    """A recipe's convergence check in one line, or the publication's quality target reached (a benchmark's
    convergence criterion, the submitter's runs), or that it has neither."""
    corr = loaded.recipe.correctness
    c = corr.convergence if corr is not None else None
    if c is None:
        qt = corr.quality_target if corr is not None else None
        if qt is not None:
            return (f"quality target reached in {qt.runs_reached} of {fmt.plural(qt.runs, 'run')} (the submitter's; "
                    "no convergence check published)")
        return "none published" if is_reported(loaded) else "none yet"
    return (f"{c.result.value}: {fmt.plural(c.steps, 'step')}, loss correlation {fmt.stated(c.correlation)}, final "
            f"loss difference {fmt.stated(c.final_loss_difference)}"
            + views.convergence_failure(c))


def runs_text(loaded: LoadedRecipe) -> str:
    """How many runs a recipe's tokens/s per GPU comes from: 'median of 3 runs', '1 run', or that the publication
    does not say (one figure as stated)."""
    res = loaded.recipe.result
    runs = len(res.time_to_train.runs_ms) if res.time_to_train is not None else res.runs
    if runs is None:
        return "not stated (one published figure)"
    return "1 run" if runs == 1 else f"median of {fmt.plural(runs, 'run')}"


_REFERENCE_ARM = re.compile(r"\breference arm:\s*", re.IGNORECASE)


def _reference_arm(note: str) -> str | None:
    """The reference arm a convergence note names ('candidate arm: ...; reference arm: X; ...' -> X): up to the
    first ';' outside brackets."""
    found = _REFERENCE_ARM.search(note)
    if found is None:
        return None
    depth = 0
    for i, ch in enumerate(note[found.end():]):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == ";" and depth <= 0:
            return note[found.end():found.end() + i].strip()
    return note[found.end():].strip()


def convergence_against(loaded: LoadedRecipe) -> str:
    """What a recipe's convergence evidence compared against: its convergence check's reference arm (and the recipe
    it names as its reference), or the publication's quality target, or that there was nothing to compare."""
    corr = loaded.recipe.correctness
    if corr is None:
        return "nothing: no convergence check"
    parts = []
    c = corr.convergence
    if c is not None:
        arm = c.reference or _reference_arm(c.note or "")  # the stated field first; older checks name it in the note
        kind = f", {views.IMPLEMENTATION_TEXT[c.implementation.value]}" if c.implementation else ""
        parts.append(f"reference arm: {arm}{kind}" if arm else (c.note or "its reference arm (not described)"))
        parts += [f"also: {a.reference}" for a in corr.convergence_also if a.reference]
        if corr.reference:
            parts.append(f"the reference: {corr.reference}")
    qt = corr.quality_target
    if qt is not None:
        parts.append(f"the benchmark's quality target, {qt.metric} {qt.direction} {fmt.stated(qt.target)} (median run "
                     f"{fmt.stated(qt.reached)})")
    return "; ".join(parts) if parts else "nothing: no convergence check"


@dataclass(frozen=True)
class FrameworkGroup:
    """Recipes of one model on one GPU type, of one training kind, precision and sequence length, from two or more
    frameworks: the fastest recipe of each framework, side by side."""

    gpu_type: str
    like: Like
    row_tokens: int
    rows: tuple[LoadedRecipe, ...]  # one per framework, fastest first

    @property
    def title(self) -> str:
        return f"{self.gpu_type}, {self.like.text}, sequence {fmt.sequence(self.row_tokens)}"


def framework_groups(recipes: list[LoadedRecipe]) -> list[FrameworkGroup]:
    """Every like line of a model's recipes (GPU type, training kind, precision, sequence) that two or more
    frameworks (generator.frameworks.framework_name of stack.framework) have recipes on."""
    lines: dict[tuple[str, Like, int], dict[str, LoadedRecipe]] = {}
    for loaded in recipes:
        r = loaded.recipe
        key = (r.gpu.type, like(loaded), r.workload.row_tokens)
        name = framework_name(r.stack.framework)
        best = lines.setdefault(key, {}).get(name)
        if best is None or (r.result.tokens_per_s_per_gpu, best.id) > (best.recipe.result.tokens_per_s_per_gpu, loaded.id):
            lines[key][name] = loaded
    out = []
    for (gpu_type, group, tokens), by_framework in lines.items():
        if len(by_framework) >= 2:
            rows = sorted(by_framework.values(), key=lambda x: (-x.recipe.result.tokens_per_s_per_gpu, x.id))
            out.append(FrameworkGroup(gpu_type, group, tokens, tuple(rows)))
    return sorted(out, key=lambda g: (g.gpu_type.lower(), g.like.order, g.row_tokens))


def framework_rows(group: FrameworkGroup, figures_of: FiguresById, page: str,
                   has_evidence: Callable[[LoadedRecipe], bool]) -> list[dict[str, Any]]:
    """A side-by-side group's rows as text, each linking to its recipe and, where it has one, its evidence file."""
    out = []
    for loaded in group.rows:
        r = loaded.recipe
        f = figures_of[loaded.id]
        out.append({"framework": framework_name(r.stack.framework), "stack": r.stack.framework, "id": loaded.id,
                    "name": compact_name(loaded), "href": href(page, recipe_src(loaded)),
                    "evidence_href": href(page, evidence_src(loaded)) if has_evidence(loaded) else None,
                    "status": r.status.value, "gpus": f"{r.gpu.count} x {r.gpu.type}", "label": r.layout.label,
                    "tokens": fmt.short(f.tokens_per_s), "tokens_value": f.tokens_per_s,
                    "mfu": fmt.mfu_cell(f.mfu, f.mfu_peak), "mfu_value": f.mfu,
                    "mfu_formula": mfu_formula(loaded, f), "usd": fmt.usd_short(f.usd), "usd_value": f.usd,
                    "runs": runs_text(loaded), "convergence": convergence_summary(loaded),
                    "against": convergence_against(loaded), "memory": peak_memory_cell(loaded)})
    return out


def frameworks(run: SiteRun, recipes: list[LoadedRecipe], page: str) -> list[dict[str, Any]]:
    """The model page's frameworks side by side: one table per like line two or more frameworks share."""
    return [{"title": group.title, "rows": framework_rows(group, run.figures, page, run.has_evidence)}
            for group in framework_groups(recipes)]


def _facts(run: SiteRun, model: str) -> list[tuple[str, str]]:
    """What the catalog's model card says of the model."""
    card = run.registry.catalog.models.get(model)
    if card is None:
        return []
    facts = [("Hugging Face id", card.hf_id), ("Revision", card.revision or fmt.DASH),
             ("Active parameters per token (N)", fmt.integer(card.active_params.count))]
    if card.architecture is not None:
        a = card.architecture
        facts += [("Layers", str(a.layers)), ("Hidden size", fmt.integer(a.hidden_size)),
                  ("Attention heads", str(a.attention_heads)), ("Vocabulary", fmt.integer(a.vocab_size))]
    return facts


def page(run: SiteRun, model: str, group: list[LoadedRecipe], advised: predicted.Predictions) -> Page:
    """models/<slug>.md: the model's recipes (`group`), and the advisor's predicted layouts for its family apart."""
    src = views.model_src(run.registry.catalog, model)
    body = run.env.get_template("group.md.j2").render(
        heading=f"{model}", kind="model", facts=_facts(run, model),
        best=tables.best_layouts(tables.rows(run, group, src), by="gpu_type"),
        table={**tables.table(run, group, src, "or-group", show_model=False), "plan_gpus": []},  # asked in "Plan a run"
        references=reference_rows(group, run.by_id, src), matrix=release_matrix(group, src),
        chart=chart(group, run.figures, "chart-" + views.slug(model), src), all_href=views.href(src, "recipes.md"),
        plan=json_script(plan_rows(advised.family_recipes(model), src)), frameworks=frameworks(run, group, src),
        predicted=advised.model_view(model, src), planner={
            "families": advised.family_options(model, src), "gpus": tables.plan_gpus(run),
            "predicted": json_script(advised.planner(model, src))},
        all_query=urlencode({"model": model}),
        failed=failed_layouts.for_model(run.registry.root, model, group, src, run.state.failed))
    return as_direct(Page(markdown_page(model, body, hide=DATA_PAGE), fmt.plain_title(model)))


def pages(run: SiteRun, advised: predicted.Predictions) -> dict[str, Page]:
    """Each model's page, then their index (models/index.md)."""
    out: dict[str, Page] = {}
    index_rows = []
    for model, group in group_by(run.registry.recipes, lambda x: x.recipe.model).items():
        src = views.model_src(run.registry.catalog, model)
        out[src] = page(run, model, group, advised)
        index_rows.append({"name": model, "href": views.href("models/index.md", src), "count": len(group)})
    out["models/index.md"] = as_direct(Page(markdown_page("Models", run.env.get_template("list.md.j2").render(
        heading="Models", items=index_rows)), "Models", in_nav=True))
    return out
