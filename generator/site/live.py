"""What `mkdocs serve` needs to rebuild quickly: memoised loads and pages, pages written only when changed.

A rebuild re-runs the hook in the same process. Loads are kept by (file, mtime, size) and recipe pages by
(file bytes, catalog, templates), so one edited recipe costs one load and one render; pages are then written to
a cache folder (outside the docs dir) only if their text changed, which lets `mkdocs serve --dirty` rebuild just
the pages that changed. The memos live on the hook's generator.site.serve.ServeState (a new one when code changes).
A dirty rebuild indexes only the pages it built: `merge_search_entries` keeps the others' entries.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from generator.registry import LoadMemo, Registry, atomic_write, load_registry


def load_registry_memo(root: Path, loads: LoadMemo) -> Registry:
    """generator.registry.load_registry, reusing the loads (the serve-time state's) of files unchanged since."""
    return load_registry(root, memo=loads)


def write_if_changed(folder: Path, rel: str, content: str, written: dict[Path, tuple[str, int]] | None = None) -> Path:
    """folder/rel holding content; rewritten (atomically) only when it differs, so its mtime means 'changed'.
    `written` (the serve-time state's) remembers what each file last held, so an unchanged page costs a stat."""
    seen = written if written is not None else {}
    target = folder / rel
    try:
        mtime = target.stat().st_mtime_ns
    except OSError:
        mtime = None
    known = seen.get(target)
    if known is not None and known[1] == mtime and known[0] == content:
        return target
    data = content.encode("utf-8")
    try:
        if mtime is not None and target.read_bytes() == data:
            seen[target] = (content, mtime)
            return target
    except OSError:
        pass
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, data, durable=False)  # made again from the registry on the next build
    seen[target] = (content, target.stat().st_mtime_ns)
    return target


def fingerprint(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in sorted(paths):
        try:
            digest.update(str(path).encode() + path.read_bytes())
        except OSError:
            digest.update(str(path).encode())
    return digest.hexdigest()


def _page_of(location: str) -> str:
    page = location.split("#", 1)[0]
    return "" if page in (".", "./") else page  # the home page: File.url "./", Page.url and entries ""


def merge_search_entries(previous_index: Path, built: set[str], entries: list[dict],
                         pages: list[str]) -> list[dict]:
    """The search entries of the whole site after a build that indexed only the pages in `built`.

    `entries` are that build's (Material's search plugin, one or more per built page, "location" = page URL plus
    an optional "#anchor"); `previous_index` is the last build's search_index.json in the site dir (absent after a
    clean build, which builds every page). Pages not built keep their previous entries; pages that left the site
    (not in `pages`, the site's page URLs in order) lose theirs. Material's own carry-over assumes one page per
    rebuild and keeps nothing when the home page ("") is among them."""
    site = list(dict.fromkeys(map(_page_of, pages)))
    old: list[dict] = []
    if not set(site) <= {_page_of(url) for url in built}:  # a clean build built every page: nothing to carry
        try:
            old = json.loads(previous_index.read_text(encoding="utf-8"))["docs"]
        except (OSError, ValueError, KeyError, TypeError):
            old = []
    by_page: dict[str, list[dict]] = {}
    for entry in old:
        by_page.setdefault(_page_of(entry["location"]), []).append(entry)
    for url in built:
        by_page[_page_of(url)] = []
    for entry in entries:
        by_page.setdefault(_page_of(entry["location"]), []).append(entry)
    return [entry for url in site for entry in by_page.get(url, [])]
