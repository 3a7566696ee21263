"""`python -m generator new` writes a scaffold the runner can load but check does not pass: every TODO is a problem at
its own line, and the result is a placeholder (measured: null) until measured. Filled in, it checks clean."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from suitehelpers import generator_cli

ROOT = Path(__file__).resolve().parents[2]
SCAFFOLD = "recipes/gemma-4-31b/h100/my-layout.yaml"

FILLED = {
    "  name: TODO your name\n": "  name: A. Contributor\n",
    "  framework: TODO framework and version (e.g. megatron-lm 0.16.0)\n": "  framework: megatron-lm 0.16.0\n",
    "  rows: TODO what a row holds (e.g. SFT conversations)\n": "  rows: SFT conversations\n",
    "  summary: TODO one paragraph describing the layout\n": "  summary: data parallel over 8 GPUs, no recompute\n",
    "  tokens_per_s_per_gpu: 1.0\n": "  tokens_per_s_per_gpu: 812.4\n",
    "  step_time_cv_percent: null\n": "  step_time_cv_percent: 1.37\n",
    "  measured: null\n": "  measured: 2026-10-01\n",
    "  # TODO the exact command\n": "  torchrun --nproc-per-node 8 train.py\n",
}


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return generator_cli(*args, cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT)})


def _registry(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "catalog", tmp_path / "catalog")
    (tmp_path / "recipes").mkdir()
    return tmp_path


def test_the_scaffold_is_not_publishable_until_filled_in(tmp_path: Path) -> None:
    root = _registry(tmp_path)
    made = _cli("new", "gemma-4-31b", "h100", "my-layout", cwd=root)
    assert made.returncode == 0, made.stderr
    text = (root / SCAFFOLD).read_text(encoding="utf-8")
    lines = text.splitlines()
    # Every TODO but the header comment's (a comment is not the recipe's text; the indented one is inside `run: |`).
    todo_lines = {i for i, line in enumerate(lines, 1) if "TODO" in line and not line.startswith("#")}
    assert len(todo_lines) == 5

    checked = _cli("check", "--no-cache", SCAFFOLD, cwd=root)
    assert checked.returncode == 1
    reported = [line for line in checked.stdout.splitlines() if line.startswith(SCAFFOLD)]
    placeholder_lines = {int(line.split(":")[1]) for line in reported if "placeholder TODO" in line}
    assert placeholder_lines == todo_lines, checked.stdout
    measured_line = lines.index("  measured: null") + 1
    cv_line = lines.index("  step_time_cv_percent: null") + 1
    assert any(line.startswith(f"{SCAFFOLD}:{measured_line}:") and "result.measured" in line and
               "placeholders until measured" in line for line in reported), checked.stdout
    assert any(line.startswith(f"{SCAFFOLD}:{cv_line}:") and "result.step_time_cv_percent" in line
               for line in reported), checked.stdout
    assert len(reported) == len(todo_lines) + 2, checked.stdout  # nothing else

    for old, new in FILLED.items():
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    (root / SCAFFOLD).write_text(text, encoding="utf-8")
    clean = _cli("check", "--no-cache", SCAFFOLD, cwd=root)
    assert clean.returncode == 0, clean.stdout + clean.stderr
