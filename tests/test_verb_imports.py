"""A broken import inside one of the project's own verbs fails loudly, with its traceback, in `python -m generator`
and `python -m runner` (it once made the verb vanish from --help); only a missing runner extra (torch,
megatron-core) gets the one-line "install the runner extra" message, and only when the missing module is the
extra's. Real subprocesses on a copy of the packages with one import broken."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from suitehelpers import REFERENCE, ROOT

BROKEN = "openrecipes_no_such_module"


def copy_packages(target: Path, *packages: str) -> None:
    for package in packages:
        shutil.copytree(ROOT / package, target / package, ignore=shutil.ignore_patterns("__pycache__"))


def break_import(path: Path) -> None:
    """An import of a module that exists nowhere, at the top of `path` (after its docstring and __future__)."""
    text = path.read_text(encoding="utf-8")
    anchor = "from __future__ import annotations\n"
    assert anchor in text, path
    path.write_text(text.replace(anchor, f"{anchor}import {BROKEN}  # noqa\n", 1), encoding="utf-8")


def run(cwd: Path, *args: str, path: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`python ARGS` with `path` (else the checkout) first on the import path and nothing else of the checkout's."""
    inherited = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and Path(p).resolve() != ROOT]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(path or ROOT), *inherited])}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def assert_traceback_of_the_broken_import(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback (most recent call last)" in done.stderr
    assert f"ModuleNotFoundError: No module named '{BROKEN}'" in done.stderr
    assert "runner extra" not in done.stderr


def test_a_generator_verb_with_a_broken_import_fails_with_its_traceback(tmp_path: Path) -> None:
    copy_packages(tmp_path, "generator")
    break_import(tmp_path / "generator" / "new.py")
    assert_traceback_of_the_broken_import(run(tmp_path, "-m", "generator", "--help", path=tmp_path))
    # Every verb, not only the broken one: the parser is built whole or not at all.
    assert_traceback_of_the_broken_import(run(tmp_path, "-m", "generator", "check", "--help", path=tmp_path))


def test_an_importer_with_a_broken_shared_import_fails_with_its_traceback(tmp_path: Path) -> None:
    copy_packages(tmp_path, "generator")
    break_import(tmp_path / "generator" / "importers" / "base.py")
    assert_traceback_of_the_broken_import(run(tmp_path, "-m", "generator", "--help", path=tmp_path))


def test_the_generator_lists_every_verb() -> None:
    done = run(ROOT, "-m", "generator", "--help")
    assert done.returncode == 0, done.stderr
    for verb in ("check", "schema", "export", "new", "import", "advise"):
        assert verb in done.stdout


def test_the_runner_with_a_broken_engine_parser_fails_with_its_traceback(tmp_path: Path) -> None:
    copy_packages(tmp_path, "generator", "runner")
    break_import(tmp_path / "runner" / "engine" / "cli.py")
    assert_traceback_of_the_broken_import(run(tmp_path, "-m", "runner", "--help", path=tmp_path))


def test_train_with_a_broken_engine_import_fails_with_its_traceback(tmp_path: Path) -> None:
    """torch and megatron-core are installed (this environment has the runner extra): a module of the engine that
    imports something missing is a bug, not a missing extra."""
    copy_packages(tmp_path, "generator", "runner")
    break_import(tmp_path / "runner" / "engine" / "train.py")
    done = run(tmp_path, "-m", "runner", "train", str(REFERENCE), "--cpu", "--steps", "1", path=tmp_path)
    assert_traceback_of_the_broken_import(done)


# The runner run with the named top-level packages absent, as in an install without the runner extra: a finder
# ahead of every other answers that they do not exist.
WITHOUT = """
import runpy, sys

class Absent:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {absent!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Absent())
sys.argv = ["runner", *{argv!r}]
runpy.run_module("runner", run_name="__main__", alter_sys=True)
"""


# An engine recipe the engine can train: the recipe's own refusals come first (they need no torch), then the extra.
ENGINE_RECIPE = ROOT / "recipes/llama-3.2-1b/h200/engine-sdpa-4k.yaml"


def test_train_without_torch_says_to_install_the_runner_extra(tmp_path: Path) -> None:
    done = run(tmp_path, "-c", WITHOUT.format(absent={"torch"}, argv=["train", str(ENGINE_RECIPE)]))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "`python -m runner train` needs the runner extra: torch is not installed" in done.stderr
    assert "pip install" in done.stderr


def test_train_without_megatron_core_names_only_megatron_core(tmp_path: Path) -> None:
    done = run(tmp_path, "-c", WITHOUT.format(absent={"megatron"}, argv=["train", str(ENGINE_RECIPE)]))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "needs the runner extra: megatron-core is not installed" in done.stderr
