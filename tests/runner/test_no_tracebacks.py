"""Inputs that once ended in a traceback get a one-line located message: a NUL in an env value, a tab after a
colon, a device given as a log, a log without newlines, and `generator export` / `new` / `schema` outside a
registry."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from runner_support import FIXTURES, ROOT, registry, remeasure
from suitehelpers import generator_cli

from runner import cli


def _generator(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return generator_cli(*args, cwd=cwd, env=dict(os.environ) | {"PYTHONPATH": str(ROOT)})


def test_a_nul_in_an_env_value_is_a_located_problem(tmp_path: Path) -> None:
    recipe = registry(tmp_path)
    text = recipe.read_text(encoding="utf-8").replace("CUDA_DEVICE_MAX_CONNECTIONS: '1'",
                                                      'CUDA_DEVICE_MAX_CONNECTIONS: "1\\0x"')
    recipe.write_text(text, encoding="utf-8")
    done = _generator(tmp_path, "check", "--no-cache")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "h100/attune-tp2-pp4-split13.yaml:162:32: env.CUDA_DEVICE_MAX_CONNECTIONS: an environment variable's " \
           "value cannot hold a NUL character" in done.stdout
    run = remeasure(recipe, "--from-log", str(FIXTURES / "miles_gemma4_31b.txt"), "--dry-run")
    assert run.returncode == cli.EXIT_USAGE and "Traceback" not in run.stderr and "NUL character" in run.stderr


def test_a_tab_after_a_colon_is_refused_before_measuring(tmp_path: Path) -> None:
    recipe = registry(tmp_path)
    recipe.write_text(recipe.read_text(encoding="utf-8").replace("  tp: 2\n", "  tp:\t2\n"), encoding="utf-8")
    run = remeasure(recipe, "--from-log", str(FIXTURES / "miles_gemma4_31b.txt"), "--dry-run")
    assert run.returncode == cli.EXIT_USAGE and "Traceback" not in run.stderr
    assert "line 67, column 6: the runner cannot edit this YAML" in run.stderr and "not a tab" in run.stderr


@pytest.mark.parametrize("log", ["/dev/zero", "folder"])
def test_a_log_that_is_not_a_file_is_refused(tmp_path: Path, log: str) -> None:
    recipe = registry(tmp_path)
    path = tmp_path / log if log == "folder" else Path(log)
    if log == "folder":
        path.mkdir()
    run = remeasure(recipe, "--from-log", str(path), "--dry-run")
    assert run.returncode == cli.EXIT_BAD_LOG and "Traceback" not in run.stderr
    assert f"{path}: is not a regular file (a device, a fifo or a folder)" in run.stderr


def test_a_log_without_newlines_is_read_in_pieces(tmp_path: Path) -> None:
    recipe = registry(tmp_path)
    log = tmp_path / "zeros.log"
    log.write_bytes(b"\0" * (3 << 20))  # 3 MiB, one "line"
    run = remeasure(recipe, "--from-log", str(log), "--dry-run")
    assert run.returncode == cli.EXIT_BAD_LOG and "no miles training step lines found" in run.stderr


@pytest.mark.parametrize("verb", [["export", "--out", "site"], ["new", "gemma-4-31b", "h100", "x"], ["schema"]])
def test_registry_verbs_outside_a_registry_say_where_one_is_expected(tmp_path: Path, verb: list[str]) -> None:
    done = _generator(tmp_path, *verb)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"`python -m generator {verb[0]}` runs inside a registry: no registry (a folder with catalog/ and " \
           f"recipes/) at or above {tmp_path}" in done.stderr
    assert not (tmp_path / "schema").exists() and not (tmp_path / "recipes").exists()
