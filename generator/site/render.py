"""render_site(registry) -> {docs path: Page}: every generated page and download, in memory.

The pipeline: read each recipe's evidence and compute its figures once (prepare), then build each page kind
(generator.site.pages.<kind>) from that one SiteRun. Pure apart from reading the evidence files and the committed
schema (the recipe's text is LoadedRecipe.text). MkDocs is not imported here: the hook and `python -m generator
export` both call this.

Recipe text reaches Markdown pages only inside raw HTML blocks, escaped (Jinja2 autoescape plus
formatting.html_text in `finalize`), so Python-Markdown never interprets it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from generator.load import LoadedRecipe
from generator.problems import Problem
from generator.registry import Registry
from generator.site import evidence_view, predicted, views
from generator.site import formatting as fmt
from generator.site.page import Page, SiteRun
from generator.site.pages import compare, downloads, gpu, home, methodology, model, recipe, recipes_index, schema
from generator.site.serve import ServeState

TEMPLATES = Path(__file__).parent / "templates"


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


def _inputs_key(registry: Registry) -> str:
    from generator.site.live import fingerprint

    return fingerprint(list((registry.root / "catalog").rglob("*.yaml")) + list(TEMPLATES.glob("*.j2")))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _recipe_key(loaded: LoadedRecipe, ev: evidence_view.Evidence | None, by_id: dict[str, LoadedRecipe],
                inputs: str) -> tuple[str, ...]:
    """What a recipe's memoised results depend on: its id and path, its text, its evidence, the recipe it names as
    its reference (the page shows its figure and label), the catalog and templates."""
    ref = views.named_reference(loaded, by_id)
    ref_key = f"{ref.id}={ref.recipe.result.tokens_per_s_per_gpu!r}={ref.recipe.layout.label}" if ref else ""
    return (loaded.id, loaded.display, _digest(recipe.recipe_text(loaded)), _digest(ev.text) if ev else "", ref_key,
            inputs)


def prepare(registry: Registry, state: ServeState, problems: list[Problem] | None = None) -> SiteRun:
    """Once per recipe: its evidence file read (a problem reported, and the file left out, where it does not read),
    its memo key, and its figures (memoised under that key, so a serve rebuild keeps them)."""
    inputs = _inputs_key(registry)
    run = SiteRun(state.environment(environment), registry, {}, inputs, state, set(), {}, {},
                  {x.id: x for x in registry.recipes})
    for loaded in registry.recipes:
        ev = run.evidence[loaded.id] = evidence_view.read(loaded)
        for message in ev.problems if ev else []:
            if problems is not None:
                problems.append(Problem(views.evidence_display(loaded), 1, 1, "(document)",
                                        f"{message}; left out of the page"))
        if ev is not None and ev.text and not ev.problems:
            run.with_evidence.add(loaded.id)
        key = run.keys[loaded.id] = _recipe_key(loaded, ev, run.by_id, inputs)
        run.figures[loaded.id] = state.memo.get(("figures", key), lambda loaded=loaded: views.recipe_figures(
            loaded, registry.catalog))
    return run


def render_site(registry: Registry, problems: list[Problem] | None = None,
                state: ServeState | None = None) -> dict[str, Page]:
    """Every generated page and download of the site, keyed by its docs path.

    Problems found while rendering (an unreadable evidence file: left out of the page) go to `problems`. `state`
    is what a process keeps between renders (the MkDocs hook's, generator.site.serve); without one, a render of
    its own that keeps nothing."""
    state = state if state is not None else ServeState()
    run = prepare(registry, state, problems)
    advised = predicted.begin(state.memo.get, registry, run.inputs)  # answered while the recipe pages render
    pages: dict[str, Page] = {"index.md": home.page(run), "recipes.md": recipes_index.page(run)}
    for loaded in registry.recipes:
        pages.update(recipe.files(run, loaded))
    pages.update(compare.like_files(run))
    pages.update(model.pages(run, advised.result()))
    pages.update(gpu.pages(run, advised.result()))
    pages["methodology.md"] = methodology.page(run.env, registry)  # Markdown proper (lists, emphasis): not direct
    pages["schema.md"] = schema.page(run.env, registry, state.memo)
    pages["compare.md"] = compare.page(run)
    pages.update(downloads.files(run))
    state.memo.prune()
    return pages
