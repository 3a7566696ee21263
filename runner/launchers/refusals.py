"""The ways a launch ends without figures, one family: each kind names the outcome (the exit code, runner/cli.py) it
ends the pipeline with, so `remeasure` turns any of them into a Stop by one `except LaunchRefused`. Each message is
the one line said on stderr."""

from __future__ import annotations

from pathlib import Path

from runner.outcomes import Outcome


class LaunchRefused(Exception):
    """A launch that ended, or never started, without a run to measure."""

    outcome = Outcome.RUN_FAILED


class PreflightRefused(LaunchRefused):
    """A node refused the run before training (its GPUs, or a stack that differs); the message names the node."""

    outcome = Outcome.PREFLIGHT


class RunFailed(LaunchRefused):
    """The run crashed, exited non-zero or passed --timeout; its process group was ended, nothing written."""

    def __init__(self, message: str, log_path: Path | None = None) -> None:
        super().__init__(message)
        self.log_path = log_path


class Interrupted(LaunchRefused):
    """Ctrl-C or SIGTERM: the run (or job) was ended; nothing written."""

    outcome = Outcome.INTERRUPTED
