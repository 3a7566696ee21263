"""check refuses a reserved name in a recipe's env (issue 41, item 2): the names that choose which programs,
libraries and Python run (PATH, LD_PRELOAD, PYTHONPATH, ...), HOME, what bash reads as it starts, and every name the
runner itself reads (generator/check/env.py, the list the launchers refuse too). Each is one problem at its line;
an ordinary name beside them passes."""

from __future__ import annotations

from pathlib import Path

import pytest
from recipe_edits import edited_registry
from suitehelpers import check_registry

from generator.registry import load_registry

REF = "recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml"
ENV = "env:\n  CUDA_DEVICE_MAX_CONNECTIONS: '1'\n"


@pytest.mark.parametrize("name", ["PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "PYTHONPATH", "PYTHONHOME",
                                  "PYTHONSTARTUP", "HOME", "TMPDIR", "CUDA_VISIBLE_DEVICES", "MASTER_ADDR", "RANK",
                                  "OPENRECIPES_GPUS", "SLURM_NNODES", "PET_NNODES", "BASH_ENV"])
def test_a_reserved_name_is_one_problem_at_its_line(tmp_path: Path, name: str) -> None:
    root = edited_registry(tmp_path, REF, [(ENV, f"env:\n  {name}: /opt/x\n  CUDA_DEVICE_MAX_CONNECTIONS: '1'\n")])
    text = (root / REF).read_text()
    line = text.splitlines().index(f"  {name}: /opt/x") + 1
    problems = check_registry(load_registry(root))
    assert [(p.line, p.field) for p in problems] == [(line, f"env.{name}")]
    assert problems[0].message.startswith(f"{name} is reserved (")


def test_ordinary_names_pass(tmp_path: Path) -> None:
    root = edited_registry(tmp_path, REF, [(ENV, ENV + "  NCCL_DEBUG: INFO\n  PYTHONUNBUFFERED: '1'\n"
                                                     "  HF_HOME: /data/hf\n")])
    assert check_registry(load_registry(root)) == []
