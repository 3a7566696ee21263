"""What every page kind makes and reads: Page (a generated file), SiteRun (one render's inputs: the template
environment, the registry, each recipe's memo key and figures), a Markdown page's front matter, JSON for a script."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jinja2
from markupsafe import Markup

from generator.load import LoadedRecipe
from generator.registry import Registry
from generator.site import direct
from generator.site import formatting as fmt
from generator.site.direct import DirectHtml
from generator.site.evidence_view import Evidence
from generator.site.serve import Memo, ServeState
from generator.site.views import Figures

DOWNLOADS = "downloads"


@dataclass(frozen=True)
class Page:
    """A generated file. Markdown pages (path ending .md) carry a title; others are downloads."""

    content: str
    title: str | None = None
    in_nav: bool = False
    direct: DirectHtml | None = None  # the page as HTML, for the hook to skip Python-Markdown (generator.site.direct)


def as_direct(page: Page) -> Page:
    """The page with its HTML made here (generator.site.direct), for the hook to skip Python-Markdown."""
    return Page(page.content, page.title, page.in_nav, direct.to_html(page.content))


# Pages built around a recipe table: no sidebars (the tabs navigate), so every figure column fits at 1400 px.
DATA_PAGE = ["navigation", "toc"]


def markdown_page(title: str, body: str, hide: list[str] | None = None) -> str:
    """A Markdown page: its front matter (title, the sidebars it hides), then `body`."""
    meta: dict[str, Any] = {"title": fmt.plain_title(title)}
    if hide:
        meta["hide"] = hide
    return "---\n" + "".join(f"{k}: {json.dumps(v)}\n" for k, v in meta.items()) + "---\n\n" + body


def json_script(value: Any) -> Markup:
    """JSON for a <script type="application/json">: "<", ">" and "&" escaped so no text can close the element."""
    data = json.dumps(value, allow_nan=False)
    return Markup(data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


@dataclass
class SiteRun:
    """One render_site call, as every page kind reads it: the environment, the registry, each recipe's memo key and
    figures (computed once), the recipes whose evidence the site serves, the serve-time state."""

    env: jinja2.Environment
    registry: Registry
    keys: dict[str, tuple[str, ...]]
    inputs: str  # the catalog's and templates' fingerprint (render._inputs_key)
    state: ServeState
    with_evidence: set[str]  # ids of the recipes whose evidence file the site serves
    figures: dict[str, Figures]  # each recipe's figures, computed once (render.prepare)
    evidence: dict[str, Evidence | None]  # each recipe's evidence file as read (None: it has none)
    by_id: dict[str, LoadedRecipe]

    @property
    def memo(self) -> Memo:
        return self.state.memo

    def has_evidence(self, loaded: LoadedRecipe) -> bool:
        return loaded.id in self.with_evidence


def group_by(recipes: list[LoadedRecipe], key: Callable[[LoadedRecipe], str]) -> dict[str, list[LoadedRecipe]]:
    """Recipes grouped by `key`, the groups in caseless order of their keys."""
    out: dict[str, list[LoadedRecipe]] = {}
    for loaded in recipes:
        out.setdefault(key(loaded), []).append(loaded)
    return dict(sorted(out.items(), key=lambda kv: kv[0].lower()))
