"""MkDocs hook: adds the pages generator.site.render_site makes. Nothing is written to the docs dir (site_src/).

Pages go to .openrecipes-cache/site/ (rewritten only when their text changes) and are added as generated
files backed by those copies, so `mkdocs serve --dirty` rebuilds only the pages an edit changed; the search
index of such a build is completed from the last one's (generator.site.live.merge_search_entries).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".openrecipes-cache" / "site"
# Under "mkdocs." so that --strict counts these warnings.
log = logging.getLogger("mkdocs.plugins.openrecipes")


class _Hook:
    """The hook's one piece of state: the serve-time state (generator.site.serve.ServeState), made anew when the
    generator's code changes (its memos are the old code's)."""

    state = None


def _state():  # noqa: ANN202
    if _Hook.state is None:
        from generator.site.serve import ServeState

        _Hook.state = ServeState()
    return _Hook.state


def _code_stamp() -> tuple:
    return tuple(sorted((str(p), p.stat().st_mtime_ns) for p in (ROOT / "generator").rglob("*.py")))


def on_config(config):  # noqa: ANN001, ANN201
    # `mkdocs serve` re-runs this hook per rebuild but keeps imported modules: drop the generator's when its
    # code changed, so that the edit shows (and its memos go with it).
    stamp = _code_stamp()
    package = sys.modules.get("generator")
    if package is not None and getattr(package, "_hook_code_stamp", None) != stamp:
        for name in [n for n in sys.modules if n == "generator" or n.startswith("generator.")]:
            del sys.modules[name]
        _Hook.state = None
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    import generator

    generator._hook_code_stamp = stamp
    return config


def on_files(files, config):  # noqa: ANN001, ANN201
    from mkdocs.exceptions import PluginError
    from mkdocs.structure.files import File, InclusionLevel

    from generator.site import render_site
    from generator.site.live import load_registry_memo, write_if_changed
    from generator.site.pages.failed_layouts import FailedLayoutsInvalid

    state = _state()
    registry = load_registry_memo(ROOT, state.loads)
    if registry.problems:  # a recipe that does not load: check's located lines and a stop, not a site without it
        raise PluginError(f"openrecipes: {len(registry.problems)} problem(s) in the registry's files (python -m "
                          "generator check names the same):\n" + "\n".join(str(p) for p in registry.problems))
    problems: list = []
    try:
        pages = render_site(registry, problems, state)
    except FailedLayoutsInvalid as exc:  # check's located lines and a stop, not a traceback (issue 41)
        raise PluginError(f"openrecipes: a failed-layouts file does not validate (python -m generator check "
                          f"names the same):\n{exc}") from None
    for problem in problems:
        # An evidence file that does not read is left out of its page and reported (fatal under --strict).
        log.warning("openrecipes: %s", problem)
    state.direct.clear()
    for path, page in pages.items():
        if page.direct is not None:
            state.direct[path] = page.direct
        level = InclusionLevel.UNDEFINED if (page.in_nav or not path.endswith(".md")) else InclusionLevel.NOT_IN_NAV
        existing = files.get_file_from_path(path)
        if existing is not None:
            files.remove(existing)
        source = write_if_changed(CACHE, path, page.content, state.written)
        files.append(File.generated(config, path, abs_src_path=str(source), inclusion=level))
    state.page_urls[:] = [f.url for f in files.documentation_pages()]
    state.built.clear()
    return files


def on_env(env, config, files):  # noqa: ANN001, ANN201
    env.bytecode_cache = _state().theme_code
    return env


def on_page_markdown(markdown, page, config, files):  # noqa: ANN001, ANN201
    # Nothing for Python-Markdown to parse: on_page_content puts the page's HTML in.
    return "" if page.file.src_uri in _state().direct else markdown


def on_page_content(html, page, config, files):  # noqa: ANN001, ANN201
    from mkdocs.structure.toc import get_toc

    from generator.site.direct import search_view

    done = _state().direct.get(page.file.src_uri)
    if done is None:
        return html
    page.toc = get_toc(done.toc)
    page.present_anchor_ids = set(done.ids)
    # The search plugin reads page.content next (on_page_context): give it the page without the sections it
    # would skip anyway; on_page_context below puts the whole page back before the theme renders it.
    return _recipe_search_view(search_view(done.html)) if _is_recipe_page(page.file.src_uri) else search_view(done.html)


# A recipe page is indexed by its title (model, GPU type, layout), id, status, headline figures, evidence in brief
# and GPUs: the whole page was 7 KB of index a recipe (77 MB at 10,000 recipes, benchmarks/site_scale.py) for
# text that its sections and the all-recipes table already show.
_CARD_FACTS = '<dl class="or-card__facts">'


def _is_recipe_page(src: str) -> bool:
    return src.startswith("recipes/") and src.endswith(".md") and src.count("/") >= 3


def _recipe_search_view(html: str) -> str:
    import re

    at = html.find(_CARD_FACTS)
    if at < 0:
        return html
    kept = re.findall(r"(<dt>(?:Author|GPUs)</dt>\s*<dd>.*?</dd>)", html[at:], re.S)
    # The id's words apart ("gemma-4-31b/h100/attune-..." is one token to the search's separator, "/" not in it).
    words = re.search(r'<code class="or-lead__id">([^<]*)</code>', html)
    named = f"<dt>Recipe</dt> <dd>{words.group(1).replace('/', ' ')}</dd>" if words else ""
    return html[:at] + _CARD_FACTS + " ".join(kept) + named + "</dl></div>"


def _restore(context, page, config, nav):  # noqa: ANN001, ANN202
    state = _state()
    state.built.add(page.url)
    done = state.direct.get(page.file.src_uri)
    if done is not None:
        page.content = done.html
    return context


def _priority(value: int):  # noqa: ANN202
    from mkdocs.plugins import event_priority

    return event_priority(value)  # the search plugin's events run at the default, 0


on_page_context = _priority(-100)(_restore)  # after search has indexed the page


def _search_complete(config):  # noqa: ANN001, ANN202
    # Before Material's search plugin writes its index: under --dirty it holds only the pages just built.
    from generator.site.live import merge_search_entries

    search = config.plugins.get("material/search") or config.plugins.get("search")
    index = getattr(search, "search_index", None)
    if index is None:
        return
    previous = Path(config.site_dir) / "search" / "search_index.json"
    state = _state()
    index.entries = merge_search_entries(previous, state.built, index.entries, state.page_urls)
    search.search_index_prev = None  # its own carry-over (see merge_search_entries) would undo this


on_post_build = _priority(100)(_search_complete)  # before search writes its index


def on_pre_build(config):  # noqa: ANN001, ANN201
    _state().page_modules[:] = sorted(p.name for p in (Path(config.docs_dir) / "assets/js").glob("*.js"))


def on_post_page(output, page, config):  # noqa: ANN001, ANN201
    from generator.site.direct import hold_view_until_applied, preload_page_modules

    state = _state()
    output = preload_page_modules(output, state.page_modules)
    return hold_view_until_applied(output) if page.file.src_uri in state.direct else output
