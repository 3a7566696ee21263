"""Imported once by tests/forked.py's server before it forks: the runner and generator (the advisor with scipy),
MkDocs with the theme, plugin and Markdown extensions of mkdocs.yml, and where they are installed, torch,
megatron-core and the engine."""

import importlib.util

import markdown_it  # noqa: F401
import material.plugins.search.plugin  # noqa: F401
import mkdocs.__main__  # noqa: F401
import mkdocs.commands.build  # noqa: F401
import pymdownx.highlight  # noqa: F401
import pymdownx.superfences  # noqa: F401
import ruamel.yaml  # noqa: F401
import scipy.optimize  # noqa: F401

import generator.advise.advisor  # noqa: F401
import generator.advise.model  # noqa: F401
import generator.check  # noqa: F401
import runner.cli  # noqa: F401
import runner.convergence  # noqa: F401
import runner.launchers.from_log  # noqa: F401
import runner.logs  # noqa: F401
import runner.measure  # noqa: F401
import runner.remeasure  # noqa: F401

if importlib.util.find_spec("torch") and importlib.util.find_spec("megatron"):
    from tests.engine.forked_ranks import import_once

    import_once()
