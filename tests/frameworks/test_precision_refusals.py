"""No precision run silently as another: every launcher refuses, before anything starts, a recipe precision it cannot
run, naming it and what it runs. Decided from the recipe alone: the refusal comes on a machine without torch too
(here torch is made unimportable by a package of that name that raises on import, first on the path)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.engine.support import ROOT, make_registry

LAUNCHERS = {
    "engine": (["-m", "runner", "train"], "the engine runs bf16 or fp32"),
    "torchtitan": (["-m", "runner.frameworks.torchtitan"], "torchtitan cannot run {p} here; it runs bf16, fp32, "
                   "fp8-cs, fp8-rw"),
    "transformers": (["-m", "runner.frameworks.transformers"], "transformers cannot run {p} here; it runs bf16, fp32"),
}
REFUSED = {"engine": ("fp8-cs", "fp8-mx", "nvfp4"), "torchtitan": ("fp8", "fp8-mx", "fp8-ds", "nvfp4"),
           "transformers": ("fp8-cs", "fp8-rw", "nvfp4")}


def no_torch(tmp: Path) -> dict[str, str]:
    fake = tmp / "no-torch" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('torch is not installed here (test)')\n")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(fake.parent), str(ROOT)])}


def framework_recipe(tmp: Path, precision: str, framework: str) -> Path:
    recipe = make_registry(tmp, steps=2, precision=precision)
    if framework != "engine":
        text = recipe.read_text().replace("framework: openrecipes-engine 0.1.0", f"framework: {framework} 0.0.0")
        recipe.write_text(text)
    return recipe


@pytest.mark.parametrize("launcher,precision", [(k, p) for k, ps in REFUSED.items() for p in ps])
def test_a_precision_the_launcher_cannot_run_is_refused_without_torch(tmp_path: Path, launcher: str,
                                                                     precision: str) -> None:
    recipe = framework_recipe(tmp_path, precision, launcher)
    args, expected = LAUNCHERS[launcher]
    done = subprocess.run([sys.executable, *args, str(recipe)], cwd=ROOT, env=no_torch(tmp_path),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "workload.precision" in lines[0] and precision in lines[0], lines
    assert expected.format(p=precision) in lines[0]
    assert "Traceback" not in done.stderr and "ImportError" not in done.stderr


@pytest.mark.parametrize("launcher", ["torchtitan", "transformers"])
def test_a_precision_the_launcher_runs_gets_past_the_refusal(tmp_path: Path, launcher: str) -> None:
    recipe = framework_recipe(tmp_path, "bf16", launcher)
    args, _ = LAUNCHERS[launcher]
    done = subprocess.run([sys.executable, *args, str(recipe)], cwd=ROOT, env=no_torch(tmp_path),
                          capture_output=True, text=True, timeout=60)
    # past the recipe's refusals, the missing packages are named (torch first among them)
    assert done.returncode == 2 and "pip install" in done.stderr and "workload.precision" not in done.stderr
