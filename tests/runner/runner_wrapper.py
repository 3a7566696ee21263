"""TEST WRAPPER, not part of the runner: ``python runner_wrapper.py [--clock K] [--fault N:SIG] [--count FILE] --
ARGS...`` runs ``python -m runner ARGS...`` with one of two test doubles installed first.

--clock K: runner.launchers.process reads a clock K times faster than the real one. The fixture trainer prints step times of
  ~111 s but finishes in a fraction of a second; check refuses GPU-hours fewer than the window's steps take, so a
  launch test that writes needs the runner's wall clock to agree with the fixture's pretend time.
--fault N:SIG: the N-th file-system step (os.open for writing, os.write, os.fchmod, os.fsync, os.replace, os.rename,
  os.unlink, os.rmdir, os.mkdir) sends SIG (KILL, INT, TERM) to this process just before it runs; SIGKILL ends it
  there, SIGINT and SIGTERM take effect as the runner lets them.
--count FILE: each file-system step appends its name and path to FILE (to enumerate the steps to fault).
"""

from __future__ import annotations

import os
import runpy
import signal
import sys
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout, as `python -m runner` finds it

STEPS = ("open", "write", "fchmod", "fsync", "replace", "rename", "unlink", "rmdir", "mkdir")
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _install_clock(factor: float) -> None:
    import runner.launchers.process

    start = time.monotonic()
    warped = types.ModuleType("time")
    warped.__dict__.update(time.__dict__)
    warped.monotonic = lambda: start + (time.monotonic() - start) * factor  # type: ignore[attr-defined]
    runner.launchers.process.time = warped  # type: ignore[attr-defined]


def _install_faults(at: int | None, sig: int | None, count_file: str | None) -> None:
    seen = [0]

    def wrap(name: str, real):  # noqa: ANN001, ANN202 - a thin shim around each os function
        def step(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
            if name == "open" and (len(args) > 1 and not args[1] & _WRITE_FLAGS or str(args[0]).startswith("/dev/")):
                return real(*args, **kwargs)  # reading (or /dev/null for a child process) changes no file
            seen[0] += 1
            if count_file:
                with open(count_file, "a") as handle:
                    handle.write(f"{seen[0]} {name} {args[0] if args else ''}\n")
            if at is not None and seen[0] == at and sig is not None:
                os.kill(os.getpid(), sig)
            return real(*args, **kwargs)

        return step

    for name in STEPS:
        setattr(os, name, wrap(name, getattr(os, name)))


def main() -> None:
    argv = sys.argv[1:]
    split = argv.index("--")
    options, rest = argv[:split], argv[split + 1 :]
    clock = fault = count = None
    while options:
        flag, value = options.pop(0), options.pop(0)
        if flag == "--clock":
            clock = float(value)
        elif flag == "--fault":
            fault = value
        elif flag == "--count":
            count = value
    if clock:
        _install_clock(clock)
    if fault or count:
        at, sig = (None, None)
        if fault:
            n, name = fault.split(":")
            at, sig = int(n), getattr(signal, f"SIG{name}")
        _install_faults(at, sig, count)
    sys.argv = ["runner", *rest]
    runpy.run_module("runner", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
