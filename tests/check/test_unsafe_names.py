"""A recipe's path is its id: check refuses a control, line-separator or bidi character in it (issue 41, item 2).

The id is printed by check, on the site, in the runner's scripts and on terminals: a newline would start a line of
its own there, ESC would drive the terminal. Each such file is one located problem line, the file is not read, and
the line shows the character escaped."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator.load import load_recipe, name_problem
from generator.problems import InputError

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml"
NAMES = {  # file name below recipes/gemma-4-31b/h100 -> the character as the problem line writes it
    "a\ntouch pwned.yaml": "\\n",
    "b\rc.yaml": "\\r",
    "e\x1b[31mred.yaml": "\\x1b",
    "f\u202eeyl.yaml": "\\u202e",
    "g\x7f.yaml": "\\x7f",
    "h\x85.yaml": "\\x85",
}


def _registry(tmp_path: Path) -> Path:
    root = tmp_path / "registry"
    shutil.copytree(ROOT / "catalog", root / "catalog")
    folder = root / "recipes/gemma-4-31b/h100"
    folder.mkdir(parents=True)
    shutil.copyfile(REFERENCE, folder / REFERENCE.name)
    for name in NAMES:
        shutil.copyfile(REFERENCE, folder / name)
    bad_folder = root / "recipes/gemma-4-31b/h1\n00"
    bad_folder.mkdir()
    shutil.copyfile(REFERENCE, bad_folder / "x.yaml")
    return root


def test_check_names_each_file_on_one_line(tmp_path: Path) -> None:
    root = _registry(tmp_path)
    done = subprocess.run([sys.executable, "-m", "generator", "check", "--no-cache"], cwd=root, capture_output=True,
                          timeout=120, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 1
    out = done.stdout.decode()
    assert "\x1b" not in out and "\r" not in out and "\u202e" not in out and "\x85" not in out
    lines = out.splitlines()
    assert len(lines) == len(NAMES) + 1, out  # one line a file; the reference beside them passes
    expected = {f"recipes/gemma-4-31b/h100/{name.encode('unicode_escape').decode()}": char
                for name, char in NAMES.items()} | {"recipes/gemma-4-31b/h1\\n00/x.yaml": "\\n"}
    for line in lines:
        path, rest = line.split(":1:1: (document): ", 1)
        assert path in expected, line
        assert rest.startswith(f"the recipe's path holds the character {expected[path]} ("), line


@pytest.mark.parametrize("name", list(NAMES))
def test_load_refuses_the_name_before_reading_the_file(tmp_path: Path, name: str) -> None:
    path = tmp_path / "recipes/gemma-4-31b/h100" / name
    path.parent.mkdir(parents=True)
    path.write_text("not: [yaml")  # never read: the name is refused first
    with pytest.raises(InputError) as raised:
        load_recipe(path, None, tmp_path / "recipes")
    ((problem,),) = [raised.value.problems]
    assert (problem.line, problem.col, problem.field) == (1, 1, "(document)")
    assert f"holds the character {NAMES[name]} " in problem.message
    assert "\n" not in str(problem) and "\x1b" not in str(problem)


def test_plain_names_and_unicode_letters_pass() -> None:
    assert name_problem(Path("recipes/gemma-4-31b/h100/tp2-pp4_v1.2.yaml"), Path("recipes")) is None
    assert name_problem(Path("recipes/gemma-4-31b/h100/lauf-größe.yaml"), Path("recipes")) is None
    # Only the part below recipes/ is the recipe's name: the checkout's own folder is not judged here.
    assert name_problem(Path("/odd\nplace/recipes/m/g/r.yaml"), Path("/odd\nplace/recipes")) is None
