"""MkDocs hook: adds the pages generator.site.render_site makes, in memory (nothing is written to site_src/)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Under "mkdocs." so that --strict counts these warnings.
log = logging.getLogger("mkdocs.plugins.openrecipes")


def on_config(config):  # noqa: ANN001, ANN201
    # `mkdocs serve` reloads this file but keeps imported modules: drop the generator's so that an edit
    # to its code (not only to recipes, catalogs or templates) shows on the next rebuild.
    for name in [n for n in sys.modules if n == "generator" or n.startswith("generator.")]:
        del sys.modules[name]
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    return config


def on_files(files, config):  # noqa: ANN001, ANN201
    from mkdocs.structure.files import File, InclusionLevel

    from generator.check import load_registry
    from generator.site import render_site

    registry = load_registry(ROOT)
    if registry.problems:
        # A recipe that does not load is left out and reported (fatal under --strict).
        for problem in registry.problems:
            log.warning("openrecipes: %s", problem)
    for path, page in render_site(registry).items():
        level = InclusionLevel.UNDEFINED if (page.in_nav or not path.endswith(".md")) else InclusionLevel.NOT_IN_NAV
        existing = files.get_file_from_path(path)
        if existing is not None:
            files.remove(existing)
        files.append(File.generated(config, path, content=page.content, inclusion=level))
    return files
