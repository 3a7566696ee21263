"""Imported once by forked_ranks.py's server before it forks: torch, megatron-core and the engine."""

from tests.engine.forked_ranks import import_once

import_once()
