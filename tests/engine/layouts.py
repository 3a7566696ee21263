"""Multi-process layouts of the bundled engine on CPU (gloo): launching tests/engine/layout_train.py on N ranks,
reading its step lines with the runner's parser, and holding a run step by step to the one-process run of the same
tokens. Shared by tests/engine/test_engine_parallel.py and tests/runner/test_cluster_rendezvous.py; the tolerances are
explained in test_engine_parallel.py's docstring."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from runner.engine import STEP_PREFIX, SUMMARY_PREFIX
from runner.logs import parse_lines
from tests.engine import forked_ranks
from tests.engine.support import ROOT, VOCAB

LAYOUT_TRAIN = ROOT / "tests" / "engine" / "layout_train.py"
TORCHRUN = Path(sys.executable).with_name("torchrun")  # torch's console script, beside the interpreter
STEPS = 12
GLOBAL_BATCH = 4
ROW_TOKENS = 32
# lr 1e-2 so the tiny model learns the synthetic pattern within the 12 steps (the loss falls by ~1 nat).
FLAGS = ("--cpu", "--lr", "1e-2", "--init", "megatron")  # layout_train.py draws the layout-invariant model
STEP0_TOL = 1e-5  # relative: one forward and backward, fp32 reductions in another order
REL_TOL = 1e-3  # relative, any step: that rounding grown by 12 steps of training


@dataclass
class Run:
    losses: list[float]
    grad_norms: list[float]
    summary: dict
    output: str


def torchrun_env() -> dict[str, str]:
    # One intra-op thread per rank: CI has two cores and runs up to eight ranks on them.
    return dict(os.environ) | {"OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1", "PYTHONWARNINGS": "ignore",
                               "PATH": f"{TORCHRUN.parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def launch(recipe: Path, ranks: int, *, script: Path = LAYOUT_TRAIN, extra: tuple[str, ...] = (),
           timeout: float = 300, torchrun: bool = False) -> subprocess.CompletedProcess[str]:
    """`script train recipe` on `ranks` processes: torchrun's ranks (`torchrun=True`), or one plain process or ranks
    forked from a process that imported torch and megatron once (forked_ranks.py: torchrun's rank environment, a
    fraction of the CPU on a 2-core machine)."""
    argv = [str(script), "train", str(recipe), *FLAGS, *extra]
    if torchrun:
        return subprocess.run([str(TORCHRUN), "--standalone", "--nproc-per-node", str(ranks), *argv], cwd=ROOT,
                              env=torchrun_env(), capture_output=True, text=True, timeout=timeout)
    return forked_ranks.run(argv, env=torchrun_env(), cwd=ROOT, timeout=timeout, ranks=None if ranks == 1 else ranks)


def parse_run(stdout: str, source: str) -> Run:
    lines = stdout.splitlines()
    log = parse_lines(lines, "openrecipes", source)  # the runner's own parser of the engine's step lines
    assert [s.step for s in log.steps] == list(range(STEPS)), stdout[-3000:]
    assert all(s.tokens == GLOBAL_BATCH * ROW_TOKENS for s in log.steps)
    # Only rank 0 prints: one line per step, however many ranks ran.
    assert sum(line.startswith(STEP_PREFIX) for line in lines) == STEPS
    summaries = [json.loads(line[len(SUMMARY_PREFIX):]) for line in lines if line.startswith(SUMMARY_PREFIX)]
    assert len(summaries) == 1, stdout[-3000:]
    summary = summaries[0]
    return Run([s.loss for s in log.steps], [s["grad_norm"] for s in summary["per_step"]], summary, stdout)


def train_layout(recipe: Path, ranks: int, **kwargs) -> Run:
    proc = launch(recipe, ranks, **kwargs)
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-6000:])
    return parse_run(proc.stdout, str(recipe))


def worst(run: Run, reference: Run, steps: int = STEPS) -> float:
    """Largest relative difference of a step's loss or gradient norm from the reference run's, over the first steps."""
    pairs = list(zip(run.losses, reference.losses, strict=True))[:steps] + list(
        zip(run.grad_norms, reference.grad_norms, strict=True))[:steps]
    return max(abs(a - b) / abs(b) for a, b in pairs)


def assert_matches(run: Run, reference: Run) -> None:
    detail = (run.losses, reference.losses, run.grad_norms, reference.grad_norms)
    assert worst(run, reference, 1) < STEP0_TOL, detail
    assert worst(run, reference) < REL_TOL, detail


def assert_learns(run: Run) -> None:
    # The untrained model starts at the uniform loss ln(V); on the learnable pattern it falls (seen: 4.91 -> ~3.9).
    assert abs(run.losses[0] - math.log(VOCAB)) < 0.3
    assert all(math.isfinite(x) for x in run.losses + run.grad_norms)
    assert sum(run.losses[-3:]) / 3 < run.losses[0] - 0.5
