"""``python -m runner``."""

import signal
import sys


def restore_default_signals() -> None:
    """Ctrl-C and SIGTERM work in the runner however it was started. A shell starts a background job (`pytest &`,
    some CI runners) with SIGINT ignored, and Python then leaves it ignored: Ctrl-C would neither stop the runner nor
    end its run. SIGINT raises KeyboardInterrupt again, SIGTERM takes its default action, neither is blocked. (The
    run's own processes get the defaults too: runner.launchers.process resets them in the child.)"""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})


# Before anything else, so that no import runs deaf to Ctrl-C.
restore_default_signals()

from runner.cli import main  # noqa: E402 - after the signals are restored

sys.exit(main())
