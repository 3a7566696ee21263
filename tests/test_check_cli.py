"""`python -m generator check` as a user runs it: a real subprocess."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from suitehelpers import ROOT


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "generator", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


@pytest.mark.slow
def test_registry_is_clean() -> None:
    proc = run(["check", "--no-cache"], ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("ok: ")


@pytest.mark.slow
def test_bad_files_all_reported_no_traceback(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "catalog", tmp_path / "catalog")
    d = tmp_path / "recipes/gemma-4-31b/h100"
    d.mkdir(parents=True)
    for case in ("inconsistent_mfu", "syntax_error", "misspelt_key"):
        shutil.copyfile(ROOT / f"tests/corpus/{case}.yaml", d / f"{case}.yaml")
    proc = run(["check"], tmp_path)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert any(ln.startswith("recipes/gemma-4-31b/h100/inconsistent_mfu.yaml:92:8: result.mfu: ") for ln in lines)
    assert any(ln.startswith("recipes/gemma-4-31b/h100/syntax_error.yaml:68:") for ln in lines)
    assert any("did you mean 'window_tokens'" in ln for ln in lines)
    proc = run(["check", "--format", "json"], tmp_path)
    data = json.loads(proc.stdout)
    assert proc.returncode == 1 and {p["field"] for p in data} >= {"result.mfu", "result.window_token"}


@pytest.mark.slow
def test_warm_cache_sees_edits(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "catalog", tmp_path / "catalog")
    d = tmp_path / "recipes/gemma-4-31b/h100"
    d.mkdir(parents=True)
    target = d / "attune-tp2-pp4-split13.yaml"
    shutil.copyfile(ROOT / "recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml", target)
    assert run(["check"], tmp_path).returncode == 0
    assert run(["check"], tmp_path).returncode == 0  # warm
    target.write_text(target.read_text().replace("  mfu: 0.2194\n", "  mfu: 0.3194\n"))
    proc = run(["check"], tmp_path)
    assert proc.returncode == 1 and "result.mfu" in proc.stdout


def test_schema_check_verb() -> None:
    proc = run(["schema", "--check"], ROOT)
    assert proc.returncode == 0, proc.stdout
