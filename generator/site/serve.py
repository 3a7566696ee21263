"""The site's serve-time state: everything one process keeps between renders (`mkdocs serve` re-runs the hook per
rebuild in the same process), on one object. The MkDocs hook owns one ServeState and passes it down; a one-off render
(`python -m generator export`, a test) makes its own, so nothing is kept between unrelated renders.

What it holds and why:
- loads: each recipe file's load by (file, mtime, size), so an edit costs one load (generator.registry.LoadMemo);
- memo: results of pure functions of one recipe (rows, row HTML, pages, exports), keyed by the recipe's content,
  the catalog and the templates (render.render_site), pruned to what the last render used;
- env: one Jinja environment (its loader checks template mtimes, so edits show);
- theme_code: Material's compiled page templates, kept across MkDocs' per-build theme environments;
- written: what write_if_changed last found in each page file, so an unchanged page costs a stat;
- failed: failed/*.yaml by model, for the file stamps it was read at;
- this build's pages already rendered to HTML (direct), the site's page URLs in order (page_urls), and the pages
  built (built), for the hook's later events of the same build;
- page_modules: the page script's module files (site_src/assets/js), preloaded by every page's <head>.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2

from generator.registry import LoadMemo


class Memo:
    """Results of pure functions of one recipe, kept across the renders of one process.

    Keys hold the recipe's key (id, display path, file and evidence digests, named reference, catalog and
    templates: see render_site), so an edit to any of those misses. Entries a render did not use are dropped after it."""

    def __init__(self) -> None:
        self.store: dict[tuple[Any, ...], Any] = {}
        self.used: set[tuple[Any, ...]] = set()

    def get(self, key: tuple[Any, ...], make: Callable[[], Any]) -> Any:
        self.used.add(key)
        if key not in self.store:
            self.store[key] = make()
        return self.store[key]

    def prune(self) -> None:
        for stale in set(self.store) - self.used:
            del self.store[stale]
        self.used = set()


class TemplateCodeCache(jinja2.BytecodeCache):
    """Compiled templates kept in memory across rebuilds. MkDocs makes a new theme environment per build, which
    compiled Material's page templates again each time (about a third of a one-recipe rebuild at 1,000 recipes).
    Jinja stores each template's source checksum with its code, so an edited template is compiled afresh."""

    def __init__(self) -> None:
        self._code: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if bucket.key in self._code:
            bucket.bytecode_from_string(self._code[bucket.key])

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self._code[bucket.key] = bucket.bytecode_to_string()


@dataclass
class ServeState:
    """One process's site state (see the module's docstring); the hook owns one, a one-off render makes its own."""

    loads: LoadMemo = field(default_factory=dict)
    memo: Memo = field(default_factory=Memo)
    theme_code: TemplateCodeCache = field(default_factory=TemplateCodeCache)
    written: dict[Path, tuple[str, int]] = field(default_factory=dict)
    failed: dict[tuple[Any, ...], Any] = field(default_factory=dict)
    env: jinja2.Environment | None = None
    direct: dict[str, Any] = field(default_factory=dict)
    page_urls: list[str] = field(default_factory=list)
    built: set[str] = field(default_factory=set)
    page_modules: list[str] = field(default_factory=list)  # site_src/assets/js's modules, for preload_page_modules

    def environment(self, make: Callable[[], jinja2.Environment]) -> jinja2.Environment:
        """The process's template environment, made once by `make` (the renderer's; this module imports no renderer)."""
        if self.env is None:
            self.env = make()
        return self.env
