"""Ctrl-C and SIGTERM end a launched run even where the runner's parent ignores them (a background job `cmd &`,
some CI runners): the runner exits 130, its trainer and the trainer's `sleep` child are gone, nothing is written."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from runner_support import H100_ENV, HERE, ROOT, alive, fixture_run, registry

from runner import cli

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

WAIT_S = 20.0


def _ignore_stop_signals() -> None:
    """The runner's parent as a shell starts a background job: SIGINT (and here SIGTERM too) ignored, which exec
    passes on to the runner."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _ignored_signals(pid: int) -> int:
    """The SigIgn mask of a process (bit n-1 set: signal n ignored)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigIgn:"):
            return int(line.split()[1], 16)
    raise AssertionError(f"no SigIgn line for pid {pid}")


def _with_marker(marker: str) -> list[int]:
    """Live processes whose command line contains `marker`."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            argv = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in argv and alive(int(name)):
            found.append(int(name))
    return found


def _kill(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


@pytest.fixture
def started() -> Iterator[list[tuple[subprocess.Popen[str], Path]]]:
    """Runners this test started, each with its pid file: whatever of them outlives a failing test is killed here,
    by pid (the runner, its trainer and the trainer's child), so no process of the test outlives it."""
    runs: list[tuple[subprocess.Popen[str], Path]] = []
    yield runs
    for proc, pids in runs:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        if pids.exists():
            _kill([int(p) for p in pids.read_text().split()])


def _wait_for(pids: Path, count: int) -> list[int]:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        found = pids.read_text().split() if pids.exists() else []
        if len(found) == count:
            return [int(p) for p in found]
        time.sleep(0.05)
    raise AssertionError(f"the trainer did not write {count} pids to {pids} within {WAIT_S:g} s")


@pytest.mark.parametrize("mode", ["hang", "hang-detached"])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
def test_interrupt_ends_the_run_when_the_parent_ignores_sigint(
    tmp_path: Path, mode: str, sig: signal.Signals, started: list[tuple[subprocess.Popen[str], Path]]
) -> None:
    pids = tmp_path / "pids"
    # The pid file's path is in the trainer's argv: a marker to find it by in /proc.
    recipe = registry(tmp_path, run=fixture_run("miles", f"--mode {mode} --pid-file {pids}"))
    before = {p: p.read_bytes() for p in (tmp_path / "recipes").rglob("*") if p.is_file()}
    proc = subprocess.Popen(
        [sys.executable, "-m", "runner", "remeasure", str(recipe), "--workdir", str(HERE), "--yes"],
        cwd=ROOT, env=dict(os.environ) | H100_ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_ignore_stop_signals,
    )
    started.append((proc, pids))
    trainer, child = _wait_for(pids, 2)
    assert _ignored_signals(proc.pid) & (1 << (signal.SIGINT - 1)) == 0, "the runner still ignores SIGINT"
    for pid in (trainer, child):  # the run starts with the default dispositions, not its parent's
        assert _ignored_signals(pid) & (1 << (signal.SIGINT - 1) | 1 << (signal.SIGTERM - 1)) == 0, pid
    proc.send_signal(sig)  # to the runner only, as a terminal's Ctrl-C or a job controller's SIGTERM reaches it
    _, err = proc.communicate(timeout=WAIT_S)
    assert proc.returncode == cli.EXIT_INTERRUPTED, err
    assert "interrupted" in err and "nothing written" in err
    assert not alive(trainer) and not alive(child)
    assert _with_marker(str(pids)) == []
    after = {p: p.read_bytes() for p in (tmp_path / "recipes").rglob("*") if p.is_file()}
    assert after == before  # nothing written, no temporary file left


def test_child_signal_reset_undoes_an_inherited_ignore() -> None:
    """The reset the run's leader gets between fork and exec, seen in a child started by a process that ignores
    SIGINT and SIGTERM (as pytest does when it runs as a background job)."""
    from runner.launchers.process import _default_signals_in_child

    code = ("import signal, sys; "
            "sys.exit(signal.getsignal(signal.SIGINT) is signal.SIG_IGN or signal.getsignal(signal.SIGTERM) is signal.SIG_IGN)")

    def ignore_then_reset() -> None:
        _ignore_stop_signals()
        _default_signals_in_child()

    ignoring = subprocess.run([sys.executable, "-c", code], preexec_fn=_ignore_stop_signals, timeout=30)
    reset = subprocess.run([sys.executable, "-c", code], preexec_fn=ignore_then_reset, timeout=30)
    assert ignoring.returncode == 1  # the control: an ignored signal stays ignored across exec
    assert reset.returncode == 0
