"""Fault injection on real `python -m runner remeasure --from-log` processes: SIGKILL, SIGINT and SIGTERM at each
file-system step (tests/runner/runner_wrapper.py --fault N:SIG), a full disk (RLIMIT_FSIZE), concurrent runs. The
~120 runs faulted by a signal are forks of a process that imported the runner once (tests/forked.py); the runs on a
full disk or tmpfs and the concurrent runs start their processes from scratch.

After each: `check` passes on the tree, nothing but the recipe and its sidecar is under recipes/, the pair is both
old or both new in meaning (or, after a SIGKILL between the two renames, the old recipe beside the new sidecar, which
check holds to the old evidence it embeds, and the next run rolls back), and what the runner said is true.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from runner_support import FIXTURES, HERE, ROOT, registry

from generator import evidence
from generator.check import check_tree
from tests.forked import run_forked, run_script

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

NAME = "attune-tp2-pp4-split13"
WRAPPER = str(HERE / "runner_wrapper.py")


def _recipe(root: Path) -> Path:
    return root / "recipes/gemma-4-31b/h100" / f"{NAME}.yaml"


def _faster_log(tmp: Path) -> Path:
    """The miles fixture with every step 2% faster: a new figure inside the gate (timestamps kept, so the log's
    span still covers the window)."""
    text = (FIXTURES / "miles_gemma4_31b.txt").read_text()
    out = re.sub(r"('perf/step_time': )([\d.]+)", lambda m: f"{m.group(1)}{float(m.group(2)) * 0.98:.4f}", text)
    path = tmp / "faster.log"
    path.write_text(out)
    return path


def _command(root: Path, log: Path, *wrapper: str) -> list[str]:
    """`python runner_wrapper.py WRAPPER -- remeasure RECIPE --from-log LOG`."""
    return [sys.executable, WRAPPER, *wrapper, "--", "remeasure", str(_recipe(root)), "--from-log", str(log)]


def _run(root: Path, log: Path, *wrapper: str) -> subprocess.CompletedProcess[str]:
    """_command as a process forked from one that imported the runner once (tests/forked.py: the runner's own
    start-up, signals and exit status, without Python's start-up and imports, most of a run's CPU)."""
    command = _command(root, log, *wrapper)
    return run_forked(run_script, command[1:], argv=command, env=os.environ, cwd=ROOT, timeout=60)


def _meaning(raw: bytes | None) -> object:
    """A sidecar without its provenance (the checkout's dirty flag may change between runs while others edit)."""
    if raw is None:
        return None

    def strip(value: object) -> object:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "provenance"}
        return value

    return strip(json.loads(raw))


class Registry:
    """A base registry measured once (the old pair), and the pair a clean second measurement gives (the new)."""

    def __init__(self, tmp: Path) -> None:
        self.base = tmp / "base"
        registry(self.base)
        first = _run(self.base, FIXTURES / "miles_gemma4_31b.txt")
        assert first.returncode == 0, first.stderr
        self.log = _faster_log(tmp)
        self.old = self.pair(self.base)
        clean = self.copy(tmp / "clean")
        done = _run(clean, self.log, "--count", str(tmp / "steps"))
        assert done.returncode == 0, done.stderr
        self.new = self.pair(clean)
        assert self.new[0] != self.old[0] and self.new[1] != self.old[1]
        self.steps = len((tmp / "steps").read_text().splitlines())

    def copy(self, to: Path) -> Path:
        shutil.copytree(self.base, to, symlinks=True)
        return to

    @staticmethod
    def pair(root: Path) -> tuple[bytes, object]:
        recipe = _recipe(root)
        side = evidence.path_for(recipe)
        return recipe.read_bytes(), _meaning(side.read_bytes() if side.exists() else None)


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> Registry:
    return Registry(tmp_path_factory.mktemp("faults"))


def assert_consistent(reg: Registry, root: Path, done: subprocess.CompletedProcess[str], where: str) -> str:
    """Check passes, recipes/ holds the two files only, the pair is old, new or an interrupted write; the
    messages agree with it. Returns the state."""
    files = sorted(p.relative_to(root / "recipes").as_posix() for p in (root / "recipes").rglob("*") if p.is_file())
    assert files == [f"gemma-4-31b/h100/{NAME}.evidence.json", f"gemma-4-31b/h100/{NAME}.yaml"], (where, files)
    problems = check_tree(root, use_cache=False).problems
    assert not problems, (where, [str(p) for p in problems], done.stderr)
    recipe, side = reg.pair(root)
    said = done.stdout + done.stderr
    if (recipe, side) == reg.old:
        state = "old"
    elif (recipe, side) == reg.new:
        state = "new"
    elif recipe == reg.old[0] and side == reg.new[1]:
        state = "interrupted"
        raw_side = evidence.path_for(_recipe(root)).read_bytes()
        which = evidence.describing(json.loads(raw_side), recipe)
        old_side = dict(reg.old[1])  # type: ignore[arg-type]
        old_side.pop("previous", None)
        assert which.interrupted and _meaning(json.dumps(which.data).encode()) == old_side, where
    else:
        raise AssertionError(f"{where}: neither old nor new: {said}")
    if "nothing written" in said:
        assert state == "old", (where, said)
    if done.returncode == 0 or re.search(r"^wrote ", said, re.M) or "after writing" in said or "both new" in said:
        assert state == "new", (where, said)
    if state == "interrupted":
        assert done.returncode == -signal.SIGKILL, (where, said)
    return state


# Runs of the runner at once: each step's run is a process of its own on a copy of its own, so they may overlap
# (a run waits on fsync much of its time); what each one did is checked one after another, as before.
AT_ONCE = 4


def _run_all(runs: dict[int, tuple[Path, tuple[str, ...]]], log: Path) -> dict[int, subprocess.CompletedProcess[str]]:
    """`_run(root, log, *wrapper)` for each step's (root, wrapper), AT_ONCE at a time."""
    with ThreadPoolExecutor(AT_ONCE) as pool:
        futures = {step: pool.submit(_run, root, log, *wrapper) for step, (root, wrapper) in runs.items()}
        return {step: future.result() for step, future in futures.items()}


@pytest.mark.parametrize("sig", ["KILL", "INT", "TERM"])
def test_a_signal_at_every_file_system_step(measured: Registry, tmp_path: Path, sig: str) -> None:
    roots = {step: measured.copy(tmp_path / f"{sig}-{step}") for step in range(1, measured.steps + 1)}
    faulted = _run_all({step: (root, ("--fault", f"{step}:{sig}")) for step, root in roots.items()}, measured.log)
    states = {step: assert_consistent(measured, roots[step], faulted[step], f"SIG{sig} at step {step}")
              for step in roots}
    # After a killed write the next run reports it, rolls it back and measures again.
    interrupted = [step for step, state in states.items() if state == "interrupted"]
    again = _run_all({step: (roots[step], ()) for step in interrupted}, measured.log)
    for step in interrupted:
        assert again[step].returncode == 0, again[step].stderr
        assert "an earlier remeasure was killed after writing" in again[step].stdout, again[step].stdout
        where = f"SIG{sig} at step {step}, then a clean run"
        assert assert_consistent(measured, roots[step], again[step], where) == "new"
    # The signal fell before, inside and after the commit: each outcome was reached.
    assert "old" in states.values() and "new" in states.values(), states
    if sig == "KILL":
        assert "interrupted" in states.values(), states


@pytest.mark.parametrize("limit", [0, 4_000, 12_000, 24_000, 40_000, 1_000_000])
def test_a_full_disk_leaves_the_pair_old_or_new(measured: Registry, tmp_path: Path, limit: int) -> None:
    """RLIMIT_FSIZE: a write past `limit` bytes fails with EFBIG (Python ignores SIGXFSZ), as on a full disk."""
    root = measured.copy(tmp_path / "disk")

    def small_disk() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    # A process started from scratch: what it prints goes to pipes, which the limit does not cover (a fork's output
    # files would be).
    done = subprocess.run(_command(root, measured.log), cwd=ROOT, capture_output=True, text=True, timeout=60,
                          preexec_fn=small_disk)
    state = assert_consistent(measured, root, done, f"file size limit {limit}")
    if state == "old":
        assert done.returncode == 9 and "nothing written" in done.stderr, done.stderr
    if limit == 1_000_000:
        assert state == "new"


@pytest.mark.parametrize("free_kib", [8, 24, 48, 200])
def test_a_small_tmpfs_fills_up(measured: Registry, tmp_path: Path, free_kib: int) -> None:
    """A real full file system, where this machine lets us mount one (root in a mount namespace): a tmpfs holding
    the registry and a filler that leaves `free_kib` KiB."""
    if shutil.which("unshare") is None or os.geteuid() != 0:
        pytest.skip("needs unshare and root to mount a tmpfs")
    mount = tmp_path / "mnt"
    mount.mkdir()
    script = (f"mount -t tmpfs -o size=8m tmpfs {mount} || exit 99; cp -a {measured.base}/. {mount}/ && "
              f"avail=$(df --output=avail -B1 {mount} | tail -1) && "
              f"head -c $((avail - {free_kib * 1024})) /dev/zero > {mount}/filler; "
              f"{sys.executable} {HERE / 'runner_wrapper.py'} -- remeasure {_recipe(mount)} --from-log {measured.log}; "
              f"echo rc=$?; {sys.executable} -m generator check --no-cache {_recipe(mount)}; echo check=$?; "
              f"find {mount}/recipes -type f | sort; cat {_recipe(mount)} > {tmp_path / 'recipe'}")
    try:
        done = subprocess.run(["unshare", "-m", "sh", "-c", script], cwd=ROOT, capture_output=True, text=True,
                              timeout=120, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"unshare failed: {exc}")
    if done.returncode == 99 or "rc=" not in done.stdout:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()[:200]}")
    assert "check=0" in done.stdout, done.stdout + done.stderr
    files = [ln for ln in done.stdout.splitlines() if ln.startswith(str(mount))]
    assert [Path(f).name for f in files] == [f"{NAME}.evidence.json", f"{NAME}.yaml"], files
    recipe = (tmp_path / "recipe").read_bytes()
    if "rc=9" in done.stdout:
        assert "No space left on device; nothing written" in done.stderr and recipe == measured.old[0], done.stderr
    else:
        assert "rc=0" in done.stdout and recipe == measured.new[0], done.stdout + done.stderr
    assert ("rc=9" in done.stdout) == (free_kib == 8) if free_kib in (8, 200) else True


def test_two_concurrent_runs(measured: Registry, tmp_path: Path) -> None:
    root = measured.copy(tmp_path / "both")
    procs = [subprocess.Popen(_command(root, measured.log), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=60) for p in procs]
    codes = sorted(p.returncode for p in procs)
    assert codes in ([0, 0], [0, 7]), outs  # the second waits for nobody: it is refused while the first holds the lock
    for (_out, err), p in zip(outs, procs, strict=True):
        if p.returncode == 7:
            assert "another remeasure of this recipe is running" in err or "changed while it was being" in err
    recipe, side = measured.pair(root)
    assert recipe == measured.new[0]
    assert check_tree(root, use_cache=False).problems == []
    assert not list((root / "recipes").rglob("*.tmp"))
