"""How `remeasure` ends: one Outcome a way, which runner/cli.py maps to an exit code. Its own module, importing
nothing, so that what runs on every node (the torchrun wrapper, runner/launchers/rendezvous.py) stays light."""

from __future__ import annotations

import enum


class Outcome(enum.Enum):
    OK = "ok"
    USAGE = "usage"
    PREFLIGHT = "preflight"
    RUN_FAILED = "run-failed"
    BAD_LOG = "bad-log"
    CHANGE = "change"
    LOCKED = "locked"
    DECLINED = "declined"
    WRITE = "write"
    CHECK = "check"
    INTERRUPTED = "interrupted"
