"""Every benchmark in benchmarks/ runs here at a small size, as a user would start it (a real subprocess from the
repository root): it exits 0 and prints its figures, so that a benchmark cannot rot unseen. The benchmarks that need
a GPU (CUDA, megatron-core on a device, nvidia-smi) or packages the test environment does not have (transformers,
torchtitan) run their --help: their arguments parse and their imports at start-up hold. The browser smoke runs are
tests/benchmarks/test_benchmarks_browser_smoke.py.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"

# What runs only with a GPU or packages the tests do not install, and so runs its --help here.
HELP_ONLY = {
    "attention_component_test.py": "CUDA and megatron-core on a GPU",
    "attention_layout_timing.py": "CUDA events on a GPU",
    "engine_hf_parity.py": "transformers (its --cpu path too)",
    "engine_profile.py": "torch.profiler's CUDA kernels",
    "engine_vs_hf.py": "a GPU and transformers",
    "step_noise.py": "a GPU and nvidia-smi",
    "swiglu_check.py": "Triton on a GPU and CUDA events",
    "h200_call.sh": "the lent H200 and its carried wheels",
    "h200_frameworks.sh": "the lent H200, torchtitan and transformers",
    "h100_recipes.sh": "the lent H100, its carried wheels, torchtitan, transformers and torchao",
    "matmul_ceiling.py": "a CUDA GPU",
}
# Run at a small size, here or in the browser file; suite_cpu_plugin.py is loaded by suite_cpu.py's run.
RUN = {"check_scale.py", "runner_overhead.py", "engine_log_figures.py", "suite_cpu.py", "suite_cpu_plugin.py",
       "site_scale.py", "site_screenshots.py", "advise_validate.py", "h100_recipe_seeds.py", "h100_losses.py"}


def run(*args: str, timeout: int = 300) -> str:
    """A benchmark's stdout after it exits 0 (stderr shown where it does not)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}  # not this run's xdist worker
    env["PYTHONPATH"] = str(ROOT)
    command = [sys.executable, *args] if args[0].endswith(".py") else ["bash", *args]
    proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    assert proc.returncode == 0, f"{' '.join(args)} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


def test_every_benchmark_has_a_smoke_run() -> None:
    files = {p.name for p in BENCHMARKS.iterdir() if p.suffix in (".py", ".sh")}
    assert files == RUN | set(HELP_ONLY), (files - RUN - set(HELP_ONLY), (RUN | set(HELP_ONLY)) - files)


@pytest.mark.parametrize("name", sorted(HELP_ONLY))
def test_help(name: str) -> None:
    out = run(f"benchmarks/{name}", "--help", timeout=60)
    assert ("usage:" in out) if name.endswith(".py") else (f"bash benchmarks/{name}" in out), out[:2000]


def test_check_scale() -> None:
    out = run("benchmarks/check_scale.py", "--recipes", "40", "--repeat", "2")
    assert "40 recipes" in out and re.search(r"cold check\s+:\s+[\d.]+ s .* ratio [\d.]+", out), out
    assert re.search(r"warm re-check \(cache\)\s+:\s+[\d.]+ s", out), out


def test_runner_overhead() -> None:
    out = run("benchmarks/runner_overhead.py", "--steps", "2000", "--paced-steps", "20", "--paced-step-s", "0.005")
    assert "parsing a 2,000-step log" in out, out
    assert re.search(r"program alone [\d.]+ s, through the runner [\d.]+ s", out), out
    assert re.search(r"20 steps of 5 ms: lines read and dropped [\d.]+ s, through the runner [\d.]+ s", out), out


def test_engine_log_figures() -> None:
    # An engine log the H200 wrote (benchmarks/results/README.md: the 3B recipe's run of 2026-12-03).
    out = run("benchmarks/engine_log_figures.py", "benchmarks/results/h200-2026-12-03-final/3b.run.log.txt",
              "--gpu", "H200")
    figures = json.loads(out)
    assert figures["window"] == [3, 19] and figures["tokens_per_s_per_gpu"] == 22156.4, figures


def test_suite_cpu() -> None:
    """With --per-process: the pytest process it starts is logged at its exit (the .pth's module), and its .pth and
    module are gone from site-packages afterwards (a run of the whole suite under --per-process keeps its own)."""
    site = Path(sysconfig.get_paths()["purelib"])
    before = set(site.glob("*suite_cpu_processes_*"))
    out = run("benchmarks/suite_cpu.py", "--per-process", "-q", "-p", "no:cacheprovider", "tests/test_positions.py")
    assert re.search(r"pytest exit 0; wall [\d.]+ s", out), out
    assert re.search(r"machine: \d+ busy core-seconds", out), out
    files, programs = out.split("files with the most CPU")[1].split("Python processes by program")
    assert "tests/test_positions.py" in files, out  # suite_cpu_plugin.py's record
    assert re.search(r"^ +[\d.]+ +1  pytest$", programs, re.M), out
    assert set(site.glob("*suite_cpu_processes_*")) == before


@pytest.mark.slow
def test_site_scale_sizes_and_serve() -> None:
    """Two synthetic sizes (the build against plain pages, the growth between them) and `mkdocs serve` with and
    without --dirty; the browser's part, and the committed registry's build, are the browser file's."""
    out = run("benchmarks/site_scale.py", "--sizes", "20", "30", "--smoke", "--no-browser")
    for n in (20, 30):
        assert re.search(rf"^\s+{n}\s+[\d.]+\s+[\d.]+\s+[\d.]+", out, re.MULTILINE), out
    assert "growth 20 -> 30" in out, out
    assert re.search(r"mkdocs serve --dirty at 30: up in [\d.]+ s; 1 recipe edits", out), out
    assert re.search(r"mkdocs serve at 30: up in [\d.]+ s", out), out



def test_h100_recipe_seeds(tmp_path: Path) -> None:
    """The H100 recipes' starting texts, written into a copy of the catalog and the H200 recipes they start from."""
    import shutil

    shutil.copytree(ROOT / "catalog", tmp_path / "catalog")
    for model in ("llama-3.2-1b", "llama-3.2-3b"):
        shutil.copytree(ROOT / "recipes" / model / "h200", tmp_path / "recipes" / model / "h200")
    out = run("benchmarks/h100_recipe_seeds.py", "--root", str(tmp_path))
    assert out.count(": seeded") == 8
    text = (tmp_path / "recipes/llama-3.2-1b/h100/engine-sdpa-4k.yaml").read_text()
    assert "  type: H100\n" in text and "    peak_lr: 1.0e-4\n" in text and text.count("schedule:") == 1
    assert "python3 -m runner train recipes/llama-3.2-1b/h100/engine-sdpa-4k.yaml" in text


def test_h100_losses() -> None:
    log = ROOT / "benchmarks/results/h200-2026-12-04-frameworks/call5/conv-1b-engine.log.gz"
    out = run("benchmarks/h100_losses.py", str(log))
    assert '"first_step": 0' in out and '"falls": true' in out
