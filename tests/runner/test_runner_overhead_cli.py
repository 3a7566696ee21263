"""benchmarks/runner_overhead.py keeps its command lines working (the figures themselves are the script's output)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from runner_support import ROOT

pytestmark = pytest.mark.slow

SCRIPT = ROOT / "benchmarks/runner_overhead.py"


def test_cpu_mode_parses_every_format_and_times_the_launch_path() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--steps", "2000", "--paced-steps", "10", "--paced-step-s",
                           "0.01", "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert [r["format"] for r in report["parse"]] == ["openrecipes", "megatron", "miles", "nemo", "torchtitan"]
    assert all(r["steps"] == 2000 and r["us_per_line"] > 0 for r in report["parse"])
    assert report["parse"][2]["lines"] == 3 * 2000 + 3  # miles: rollout perf, train perf and step lines
    assert report["launch"]["lines"] == 2003 and report["launch"]["runner_seconds"] > 0
    assert [(r["format"], r["steps"]) for r in report["paced"]] == [("openrecipes", 10), ("megatron", 10)]
    assert all(r["bare_seconds"] >= 10 * 0.01 and r["runner_seconds"] >= 10 * 0.01 for r in report["paced"])


def test_gpu_mode_without_cuda_says_why_without_a_traceback() -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA machine: the real --gpu measurement runs there instead")
    done = subprocess.run([sys.executable, str(SCRIPT), "--gpu", "--gpu-steps", "8"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1
    assert done.stderr.startswith("GPU mode failed: the run failed (exit status 1)")
    assert "CUDA" in done.stderr and "Traceback (most recent call last):\n  File \"" not in done.stderr.split("|")[0]
