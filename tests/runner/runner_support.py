"""Helpers for the runner tests: a temporary registry holding a copy of the reference recipe."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from tests.forked import python_m

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
REFERENCE = ROOT / "recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml"
H100_ENV = {"OPENRECIPES_GPUS": "8xNVIDIA H100 80GB HBM3"}


def registry(tmp: Path, run: str | None = None, name: str = "attune-tp2-pp4-split13") -> Path:
    """tmp/catalog (a copy of the real one) and tmp/recipes/.../<name>.yaml, optionally with another run script."""
    shutil.copytree(ROOT / "catalog", tmp / "catalog", dirs_exist_ok=True)
    target = tmp / "recipes/gemma-4-31b/h100" / f"{name}.yaml"
    target.parent.mkdir(parents=True, exist_ok=True)
    text = REFERENCE.read_text(encoding="utf-8")
    if run is not None:
        block = "run: |\n" + "".join(f"  {line}\n" for line in run.splitlines())
        text, n = re.subn(r"(?ms)^run: \|\n.*?(?=^notes: )", lambda _: block, text)
        assert n == 1
    target.write_text(text, encoding="utf-8")
    return target


def fixture_run(fmt: str = "miles", extra: str = "") -> str:
    return f"python3 fixture_trainer.py --format {fmt} --steps 20 {extra}".strip()


def runner(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`python -m runner ARGS` from the repository root, in a fork of the suite's preloaded server (tests/forked.py:
    ~0.14 s of CPU a run instead of ~0.31, ~100 runs a suite); the tests of how the runner's process starts, stops and
    is signalled start it themselves."""
    return python_m("runner", args, env=dict(os.environ) | H100_ENV | (env or {}), cwd=ROOT, timeout=timeout)


def remeasure(recipe: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return runner("remeasure", str(recipe), "--workdir", str(HERE), *args, env=env)


def outside_result(text: str) -> str:
    """The recipe text with the result block cut out."""
    return re.sub(r"(?ms)^result:\n.*?(?=^correctness:)", "", text)


def alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie (a test's children must not outlive it)."""
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in state

REAL_LOGS = HERE / "real_logs"  # logs from public repositories, each with its <name>.source.md


def log_recipe(global_batch: int, row_tokens: int, gpus: int, window: tuple[int, int], steps: int | None):  # noqa: ANN201
    """The reference recipe restated as the run behind a real log: its workload, GPU count, window and
    steps_per_run, and N of a 125M model (those runs' models are not the reference's 30.7B and their MFU is not
    under test; at 30.7B a 1B run's tokens/s would give an MFU above generator.figures.MFU_BOUND and be refused)."""
    from generator.load import load_recipe

    base = load_recipe(REFERENCE).recipe
    return base.model_copy(update={
        "workload": base.workload.model_copy(update={"global_batch": global_batch, "row_tokens": row_tokens}),
        "gpu": base.gpu.model_copy(update={"count": gpus, "per_node": None, "instance": None}),
        "result": base.result.model_copy(update={"window": list(window), "steps_per_run": steps,
                                                 "active_params": base.result.active_params.model_copy(
                                                     update={"count": 125_000_000})}),
    })


MEASURED_1B = ROOT / "recipes/llama-3.2-1b/h200/engine-unfused-4k.yaml"


def log_registry(tmp: Path, framework: str, global_batch: int, row_tokens: int, gpus: int, window: tuple[int, int],
                 steps: int | None, name: str = "from-log") -> Path:
    """A registry in tmp (a copy of the catalog) holding the committed Llama-3.2-1B H200 recipe restated as the run
    behind a real log: its framework, workload, GPU count (one node, no instance), window and steps_per_run."""
    shutil.copytree(ROOT / "catalog", tmp / "catalog", dirs_exist_ok=True)
    path = tmp / "recipes/llama-3.2-1b/h200" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = MEASURED_1B.read_text(encoding="utf-8").replace("engine-unfused-4k", name)
    window_tokens = (window[1] - window[0] + 1) * global_batch * row_tokens
    for key, value in (("framework", framework), ("count", str(gpus)), ("per_node", str(gpus)),
                       ("row_tokens", str(row_tokens)), ("global_batch", str(global_batch)), ("dp", str(gpus)),
                       ("label", f"TP1 PP1 DP{gpus}"), ("steps_per_run", "null" if steps is None else str(steps)),
                       ("window", f"[{window[0]}, {window[1]}]"), ("window_tokens", str(window_tokens)),
                       ("instance", "null")):
        text, n = re.subn(rf"(?m)^  {key}:.*$", f"  {key}: {value}", text, count=1)
        assert n == 1, key
    text = re.sub(r"(?m)^  (usd_per_million_tokens|gpu_hours|gpu_hours_note):.*\n", "", text)
    path.write_text(text, encoding="utf-8")
    return path
