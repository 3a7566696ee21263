"""Inputs a corpus file cannot express (symlinks, fifos, devices, folders named like recipes, an unwritable cache),
each through `python -m generator check` as a real subprocess: exit 1, no traceback, no hang, and every stdout line
one `path:line:col: field: message` problem at the right place."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from suitehelpers import REFERENCE, ROOT

PROBLEM_LINE = re.compile(r"^[^:\n]+:\d+:\d+: [^:]+: .+$")
PLACE = "recipes/gemma-4-31b/h100"
NAME = REFERENCE.name
EVIDENCE_RECIPE = ROOT / "recipes/llama-3.2-1b/h200/engine-sdpa-4k.yaml"


def make_root(tmp_path: Path) -> Path:
    root = tmp_path / "registry"
    shutil.copytree(ROOT / "catalog", root / "catalog")
    (root / PLACE).mkdir(parents=True)
    return root


def check(root: Path, *args: str, cache: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin",
           "OPENRECIPES_CACHE_DIR": str(cache or root.parent / "cache")}
    return subprocess.run([sys.executable, "-m", "generator", "check", *args], cwd=root, capture_output=True,
                          text=True, timeout=60, env=env)


def problems_of(proc: subprocess.CompletedProcess[str]) -> list[str]:
    """The problem lines, after asserting what every failing check must look like."""
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines, proc.stderr
    for line in lines:
        assert PROBLEM_LINE.match(line), line
    return lines


def test_symlink_loop_of_files_is_a_problem(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    (root / PLACE / "a.yaml").symlink_to("b.yaml")
    (root / PLACE / "b.yaml").symlink_to("a.yaml")
    lines = problems_of(check(root))
    assert lines == [f"{PLACE}/a.yaml:1:1: (document): symlink that does not resolve (dangling or a loop)",
                     f"{PLACE}/b.yaml:1:1: (document): symlink that does not resolve (dangling or a loop)"]


def test_symlink_loop_of_folders_neither_hangs_nor_is_silent(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    shutil.copyfile(REFERENCE, root / PLACE / NAME)
    (root / PLACE / "loop").symlink_to("..")  # recipes/gemma-4-31b/h100/loop -> recipes/gemma-4-31b
    (root / PLACE / "self").symlink_to("self")  # a link to itself: resolves nowhere
    lines = problems_of(check(root))
    assert lines == [f"{PLACE}/loop:1:1: (document): symlinked folder: not followed; recipes live in real folders "
                     "under recipes/",
                     f"{PLACE}/self:1:1: (document): symlink that does not resolve (dangling or a loop)"]


def test_symlinked_folder_given_on_the_command_line(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    shutil.copyfile(REFERENCE, root / PLACE / NAME)
    (root / "recipes/gemma-4-31b/h200").symlink_to("h100")
    lines = problems_of(check(root, "recipes/gemma-4-31b/h200"))
    assert lines == ["recipes/gemma-4-31b/h200:1:1: (document): symlinked folder: not followed; recipes live in "
                     "real folders under recipes/"]


def test_recipe_linked_to_a_device_is_not_read(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    (root / PLACE / "zero.yaml").symlink_to("/dev/zero")
    lines = problems_of(check(root))
    assert lines == [f"{PLACE}/zero.yaml:1:1: (document): symlink points outside recipes/"]


def test_recipe_that_is_a_fifo_is_not_opened(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    os.mkfifo(root / PLACE / "pipe.yaml")  # opening it for reading would block until a writer comes
    lines = problems_of(check(root))
    assert lines == [f"{PLACE}/pipe.yaml:1:1: (document): not a regular file (a fifo, socket or device is never "
                     "read)"]


def test_folder_named_like_a_recipe(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    (root / PLACE / "folder.yaml").mkdir()
    shutil.copyfile(REFERENCE, root / PLACE / "folder.yaml" / NAME)
    lines = problems_of(check(root))
    assert lines == [f"{PLACE}/folder.yaml/{NAME}:1:1: (document): at the wrong depth (3 folder(s) below recipes/); "
                     "a recipe is recipes/<model>/<gpu>/<name>.yaml"]


@pytest.mark.parametrize("kind", ["dev-zero", "fifo"])
def test_evidence_sidecar_that_is_not_a_regular_file(tmp_path: Path, kind: str) -> None:
    root = make_root(tmp_path)
    place = root / EVIDENCE_RECIPE.parent.relative_to(ROOT)
    place.mkdir(parents=True)
    shutil.copyfile(EVIDENCE_RECIPE, place / EVIDENCE_RECIPE.name)
    sidecar = place / f"{EVIDENCE_RECIPE.stem}.evidence.json"
    if kind == "fifo":
        os.mkfifo(sidecar)
    else:
        sidecar.symlink_to("/dev/zero")  # read whole, it would never end
    lines = problems_of(check(root))
    assert all(": result: " in line and "is not a regular file" in line for line in lines), lines
    assert lines[0].startswith(f"{EVIDENCE_RECIPE.relative_to(ROOT)}:")


def test_unwritable_cache_is_a_warning_and_the_exit_code_comes_from_problems(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    shutil.copyfile(REFERENCE, root / PLACE / NAME)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be\n")  # unwritable even for root
    proc = check(root, cache=blocker / "openrecipes")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("ok: 1 recipe(s) checked")
    assert "warning: the check cache" in proc.stderr and "Traceback" not in proc.stderr
    (root / PLACE / "bad.yaml").write_text(REFERENCE.read_text().replace("status: verified\n", "status: yes\n"))
    proc = check(root, cache=blocker / "openrecipes")
    lines = problems_of(proc)
    assert "warning: the check cache" in proc.stderr
    assert any(line.startswith(f"{PLACE}/bad.yaml:14:9: status: ambiguous YAML: 'yes'") for line in lines), lines


def test_read_only_checkout_with_a_writable_cache(tmp_path: Path) -> None:
    """The check writes nothing in the tree: a checkout whose folders cannot be written checks as usual."""
    root = make_root(tmp_path)
    shutil.copyfile(REFERENCE, root / PLACE / NAME)
    folders = [Path(d) for d, _, _ in os.walk(root)]
    for folder in folders:
        folder.chmod(0o555)
    try:
        proc = check(root)
    finally:
        for folder in folders:
            folder.chmod(0o755)
    assert proc.returncode == 0 and proc.stdout.startswith("ok: 1 recipe(s) checked"), proc.stdout + proc.stderr
    assert not list(root.rglob("*cache*"))


def test_forged_problem_line_and_escape_sequences_stay_in_one_escaped_line(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    forged = 'model: "Gemma\\n recipes/x.yaml:1:1: forged\\e[31m\\u202e"\n'
    (root / PLACE / "forged.yaml").write_text(REFERENCE.read_text().replace("model: Gemma-4-31B\n", forged))
    proc = check(root)
    lines = problems_of(proc)
    assert "\x1b" not in proc.stdout and "\u202e" not in proc.stdout
    assert not any(line.startswith("recipes/x.yaml") for line in lines)
    assert (f"{PLACE}/forged.yaml:4:8: model: unknown model 'Gemma\\n recipes/x.yaml:1:1: forged\\x1b[31m\\u202e' "
            "(not in catalog/models/)") in lines


def test_every_load_corpus_case_in_one_run(tmp_path: Path) -> None:
    """All load_* cases placed together: one run, one problem line each at its expected line, no traceback."""
    import yaml

    root = make_root(tmp_path)
    expected: dict[str, int] = {}
    for case in sorted((ROOT / "tests/corpus").glob("load_*.yaml")):
        exp = yaml.safe_load(case.with_suffix(".expected").read_text())
        place = exp.get("place", f"{PLACE}/{case.stem}.yaml").replace("case", case.stem)
        target = root / place
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(case, target)
        expected[place] = exp["line"]
    lines = problems_of(check(root, "--no-cache"))
    for place, line in expected.items():
        assert any(ln.startswith(f"{place}:{line}:") for ln in lines), (place, line)


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "folder"])
def test_evidence_reader_refuses_what_is_not_a_regular_file(tmp_path: Path, kind: str) -> None:
    from generator import evidence

    path = tmp_path / "x.evidence.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:
        path.symlink_to("/dev/zero")
    with pytest.raises(evidence.EvidenceError, match="is not a regular file"):
        evidence.read_bytes(path)
