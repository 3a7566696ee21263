"""Running a recipe's script: its own process group, output streamed to the console and a log file, a
live progress bar, and the whole group ended on Ctrl-C or a timeout."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from generator import figures
from runner.environment import missing_runner_extra, runner_extra_message
from runner.launchers.refusals import Interrupted, RunFailed
from runner.logs import ParsedLog, parser


@dataclass
class Launched:
    log_path: Path
    parsed: ParsedLog
    wall_seconds: float
    returncode: int


# The signals a terminal or a job controller ends a run with: the runner and its run must act on them.
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _default_signals_in_child() -> None:
    """In the run's leader between fork and exec: default SIGINT/SIGTERM, unblocked. An ignored signal stays ignored
    across exec (and bash cannot trap one ignored on entry), so a runner embedded in a process that ignores SIGINT
    would otherwise start a run deaf to it and to the group-wide SIGTERM that ends it."""
    for sig in _STOP_SIGNALS:
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)


def _become_subreaper() -> None:
    """Orphans of the run reparent to the runner, not to init (Linux PR_SET_CHILD_SUBREAPER), so a process that
    left the group (setsid: a daemon, a Ray worker) is still found and ended with the run."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: the process group alone is ended


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process (from /proc; empty where there is none)."""
    out = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        out[int(name)] = int(stat[stat.rindex(b")") + 2 :].split()[1])
    return out


def _run_tree(leader: int, before: set[int]) -> set[int]:
    """The run's processes: the leader's descendants and the runner's children that the run left behind (orphans
    reparented here), whatever their process group."""
    parents = _parents()
    children: dict[int, list[int]] = {}
    for pid, ppid in parents.items():
        children.setdefault(ppid, []).append(pid)
    me = os.getpid()
    todo = [leader] if leader in parents else []  # a reaped leader's pid may be another process's by now
    todo += [pid for pid in children.get(me, []) if pid not in before and pid != leader]
    found: set[int] = set()
    while todo:
        pid = todo.pop()
        if pid in found or pid == me:
            continue
        found.add(pid)
        todo.extend(children.get(pid, []))
    return found


def _signal(proc: subprocess.Popen[bytes], members: set[int], sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
    for pid in members:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _kill_group(proc: subprocess.Popen[bytes], before: set[int] | None = None, grace_s: float = 5.0) -> None:
    """SIGTERM to the whole group and every process of the run, SIGKILL to what is left after the grace period."""
    before = set() if before is None else before
    _signal(proc, _run_tree(proc.pid, before), signal.SIGTERM)
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        pass
    # The leader is gone (or would not go): nothing of the run outlives it.
    members = _run_tree(proc.pid, before)
    _signal(proc, members, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5.0)
    _reap(members - {proc.pid})  # the leader is Popen's to reap


def _reap(pids: set[int], wait_s: float = 2.0) -> None:
    """Collect the exit status of the run's orphans that became the runner's children (no zombies left)."""
    me = os.getpid()
    deadline = time.monotonic() + wait_s
    pending = {pid for pid in pids if _parents().get(pid) == me}
    while pending and time.monotonic() < deadline:
        for pid in list(pending):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                pending.discard(pid)
        if pending:
            time.sleep(0.01)


def run_script(
    script: Path,
    env: dict[str, str],
    workdir: Path,
    log_path: Path,
    fmt: str,
    total_steps: int | None,
    tokens_per_step: int,
    gpu_count: int,
    timeout_s: float | None,
    console: TextIO,
    progress: bool = True,
) -> Launched:
    """Runs `bash script`; returns the parsed log, raises RunFailed or Interrupted (the group is ended)."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    bar, live = _progress_bar(console, progress)
    p = parser(fmt, str(log_path))
    _become_subreaper()
    before = {pid for pid, ppid in _parents().items() if ppid == os.getpid()}
    started = time.monotonic()
    proc = subprocess.Popen(
        ["bash", str(script)],
        cwd=workdir,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # own session and process group: signals reach every rank, and only them
        preexec_fn=_default_signals_in_child,  # runs before any thread of this call starts (the timer, the bar)
    )
    timed_out = threading.Event()
    timer = None
    if timeout_s:
        def expire() -> None:
            timed_out.set()
            _kill_group(proc, before)

        timer = threading.Timer(timeout_s, expire)
        timer.daemon = True
        timer.start()
    previous_term = signal.getsignal(signal.SIGTERM)

    def on_term(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, on_term)
    try:
        with log_path.open("w", encoding="utf-8") as log, bar:
            task = bar.add_task("run", total=total_steps, rate="")
            window_time = 0.0
            number = 0
            assert proc.stdout is not None
            for raw in proc.stdout:
                number += 1
                line = raw.decode("utf-8", errors="replace").rstrip("\n")
                log.write(line + "\n")
                log.flush()  # the log is whole up to the last line even if the runner dies
                if live:
                    bar.console.print(line)
                else:
                    console.write(line + "\n")
                for step in p.feed(line, number):
                    window_time += step.time_s
                    # The card's formula over a one-step window (tokens_per_step as one row of that length).
                    rate = figures.tokens_per_s_per_gpu([step.time_s], (0, 0), tokens_per_step, 1, gpu_count) \
                        if step.time_s > 0 else 0.0
                    bar.update(task, completed=step.step + 1, rate=f"{rate:,.1f} tokens/s/GPU")
            code = proc.wait()
    except KeyboardInterrupt:
        main = threading.current_thread() is threading.main_thread()
        previous_int = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None  # a second Ctrl-C waits
        try:
            _kill_group(proc, before)
        finally:
            if main:
                signal.signal(signal.SIGINT, previous_int)
        raise Interrupted(f"interrupted: the run's process group was ended; nothing written (log: {log_path})") from None
    finally:
        if timer is not None:
            timer.cancel()
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, previous_term)
    wall = time.monotonic() - started
    if timed_out.is_set():
        raise RunFailed(f"the run passed --timeout {timeout_s:g} s; its process group was ended; nothing written", log_path)
    # A clean exit still needs its group gone: a rank left behind holds GPUs.
    leftover = _run_tree(proc.pid, before) - {proc.pid}
    _signal(proc, leftover, signal.SIGKILL)
    _reap(leftover)
    if code != 0:
        reason = f"signal {-code}" if code < 0 else f"exit status {code}"
        raise RunFailed(f"the run failed ({reason}); nothing written; see the log {log_path}", log_path)
    return Launched(log_path, p.finish(), wall, code)


class _NoBar(contextlib.nullcontext):
    """The progress bar's interface where none is drawn (no terminal, or rich not installed)."""

    def add_task(self, description: str, **fields: object) -> int:
        return 0

    def update(self, task: int, **fields: object) -> None:
        pass


def _progress_bar(console: TextIO, progress: bool) -> tuple[Any, bool]:
    """(bar, live): rich's bar where the console is a terminal, else one that draws nothing. live: lines go through
    the bar's console (rich's print is ~100 us a line: only when the bar is drawn). Without rich (the site install)
    the run goes on without a bar, and the terminal is told how to get one."""
    if not progress:
        return _NoBar(), False
    missing = missing_runner_extra("rich")
    if missing:
        if hasattr(console, "isatty") and console.isatty():
            console.write(f"{runner_extra_message('The progress bar', missing)} The run goes on without it.\n")
        return _NoBar(), False
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    out = Console(file=console, highlight=False, markup=False, soft_wrap=True)
    if not out.is_terminal:  # rich decides what a terminal is (FORCE_TERMINAL, TTY_COMPATIBLE and the like)
        return _NoBar(), False
    bar = Progress(TextColumn("step"), MofNCompleteColumn(), BarColumn(), TextColumn("{task.fields[rate]}"),
                   TextColumn("ETA"), TimeRemainingColumn(), console=out, transient=True)
    return bar, True


def shell_word(value: str) -> str:
    """`value` as one bash word on one line: shlex.quote's, or, where it holds a control, line-separator or bidi
    character, bash's $'...' with each such character written as the \\xHH escapes of its UTF-8 bytes. A script or
    a terminal shows it on one line (a newline cannot start a line of its own, ESC cannot reach the terminal), and
    bash reads back the same value."""
    import shlex

    from generator.problems import unsafe_character

    if unsafe_character(value) is None:
        return shlex.quote(value)
    out = []
    for char in value:
        if unsafe_character(char) is not None:
            out.extend(f"\\x{byte:02x}" for byte in char.encode("utf-8"))
        elif char in "\\'":
            out.append("\\" + char)
        else:
            out.append(char)
    return "$'" + "".join(out) + "'"


def shell_quote_env(env: dict[str, str]) -> str:
    return " ".join(f"{k}={shell_word(v)}" for k, v in env.items())
