"""MkDocs hook: adds the pages generator.site.render_site makes. Nothing is written to the docs dir (site_src/).

Pages go to .openrecipes-cache/site/ (rewritten only when their text changes) and are added as generated
files backed by those copies, so `mkdocs serve --dirty` rebuilds only the pages an edit changed.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".openrecipes-cache" / "site"
# Under "mkdocs." so that --strict counts these warnings.
log = logging.getLogger("mkdocs.plugins.openrecipes")


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
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    import generator

    generator._hook_code_stamp = stamp
    return config


def on_files(files, config):  # noqa: ANN001, ANN201
    from mkdocs.structure.files import File, InclusionLevel

    from generator.site import render_site
    from generator.site.live import load_registry_memo, write_if_changed

    registry = load_registry_memo(ROOT)
    problems = list(registry.problems)
    pages = render_site(registry, problems)
    for problem in problems:
        # A recipe (or evidence file) that does not load is left out and reported (fatal under --strict).
        log.warning("openrecipes: %s", problem)
    for path, page in pages.items():
        level = InclusionLevel.UNDEFINED if (page.in_nav or not path.endswith(".md")) else InclusionLevel.NOT_IN_NAV
        existing = files.get_file_from_path(path)
        if existing is not None:
            files.remove(existing)
        source = write_if_changed(CACHE, path, page.content)
        files.append(File.generated(config, path, abs_src_path=str(source), inclusion=level))
    return files
