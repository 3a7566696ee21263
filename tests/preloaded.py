"""Imported once by tests/forked.py's server before it forks: the runner and generator, and where they are installed,
torch, megatron-core and the engine."""

import importlib.util

import generator.check  # noqa: F401
import runner.cli  # noqa: F401
import runner.remeasure  # noqa: F401

if importlib.util.find_spec("torch") and importlib.util.find_spec("megatron"):
    from tests.engine.forked_ranks import import_once

    import_once()
