"""The contributor path (issue 15, item 10): the wheel, the pre-commit hook, --version and the LICENSE.

The wheel is built from a copy of the working tree (never in the checkout: no build/ or egg-info left behind),
installed into a fresh venv in tmp_path, and used from outside the checkout: it renders the reference recipe's
card from a registry copy, and runs the pre-commit hook's entry as pre-commit would (the command plus the changed
files' names, from the registry's root and from elsewhere). Offline: no build isolation, no index; the new venv
reuses this venv's installed dependencies through a .pth line (not this venv's editable install of the checkout,
which only its own site folder's .pth files activate). About 20 s.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
import yaml
from suitehelpers import REFERENCE, ROOT

HOOKS = ROOT / ".pre-commit-hooks.yaml"
REFERENCE_REL = str(REFERENCE.relative_to(ROOT))
TEMPLATES = sorted(p.name for p in (ROOT / "generator/site/templates").glob("*.j2"))
# The text of https://www.apache.org/licenses/LICENSE-2.0.txt, byte for byte.
APACHE_2_MD5 = "3b83ef96387f14655fc854ddc3c6bd57"

RENDER_CARD = """
import sys
from pathlib import Path

import generator
from generator.registry import load_registry
from generator.site import render_card
from generator.site.render import environment

root = Path(sys.argv[1])
registry = load_registry(root)
assert not registry.problems, registry.problems
loaded = next(x for x in registry.recipes if x.id == "gemma-4-31b/h100/attune-tp2-pp4-split13")
print(generator.__file__)
print(render_card(environment(), loaded, registry))
"""


def _run(cmd: list[str], cwd: Path, timeout: int = 120) -> subprocess.CompletedProcess:
    # Without PYTHONPATH: a checkout on it (the engineers' `export PYTHONPATH=$PWD`) would shadow the installed wheel.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def _source_copy(dest: Path) -> Path:
    """What the sdist would hold: pyproject, README, LICENSE and the two packages (no caches)."""
    dest.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, dest / name)
    for package in ("generator", "runner"):
        shutil.copytree(ROOT / package, dest / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return dest


def _registry_copy(dest: Path) -> Path:
    """A contributor's checkout, as far as check and the renderer read it: catalogs, schema, the reference."""
    for name in ("catalog", "schema"):
        shutil.copytree(ROOT / name, dest / name)
    target = dest / REFERENCE_REL
    target.parent.mkdir(parents=True)
    shutil.copy(REFERENCE, target)
    return dest


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The built wheel and a fresh venv with it installed."""
    tmp = tmp_path_factory.mktemp("packaging")
    source = _source_copy(tmp / "src")
    dist = tmp / "dist"
    built = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
                  "-w", str(dist), str(source)], cwd=tmp, timeout=300)
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = dist.glob("openrecipes-*.whl")
    venv = tmp / "venv"
    made = _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=tmp)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], cwd=tmp)
                .stdout.strip())
    # The dependencies, offline: this venv's site folder as a plain path (after the new venv's own).
    (site / "zz_openrecipes_test_deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    done = _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q",
                 str(wheel)], cwd=tmp, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return {"wheel": wheel, "python": python, "site": site, "tmp": tmp}


@pytest.mark.slow
def test_the_wheel_holds_every_template(installed: dict[str, Path]) -> None:
    names = set(zipfile.ZipFile(installed["wheel"]).namelist())
    missing = [t for t in TEMPLATES if f"generator/site/templates/{t}" not in names]
    assert TEMPLATES and not missing, f"templates missing from the wheel: {missing}"


@pytest.mark.slow
def test_the_installed_package_renders_a_card_outside_the_checkout(installed: dict[str, Path]) -> None:
    registry = _registry_copy(installed["tmp"] / "card-registry")
    elsewhere = installed["tmp"] / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    script = elsewhere / "render_card.py"
    script.write_text(RENDER_CARD)
    done = _run([str(installed["python"]), str(script), str(registry)], cwd=elsewhere)
    assert done.returncode == 0, done.stderr
    module_file, card = done.stdout.split("\n", 1)
    assert Path(module_file).is_relative_to(installed["site"]), f"imported {module_file}, not the installed wheel"
    assert "1,178.1" in card and "Gemma-4-31B" in card, card[:2000]


@pytest.mark.slow
def test_version_flag(installed: dict[str, Path]) -> None:
    expected = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    done = _run([str(installed["python"]), "-m", "generator", "--version"], cwd=installed["tmp"])
    assert done.returncode == 0 and done.stdout.strip() == f"python -m generator {expected}", done
    # From the checkout too (the editable install, or pyproject's version with no install at all).
    here = _run([sys.executable, "-m", "generator", "--version"], cwd=ROOT)
    assert here.returncode == 0 and expected in here.stdout, here


# --- the pre-commit hook ----------------------------------------------------------------------------------------


def hook() -> dict:
    (only,) = yaml.safe_load(HOOKS.read_text())
    return only


def test_the_hook_definition() -> None:
    h = hook()
    assert h["id"] == "openrecipes-check" and h["language"] in ("python", "system")
    assert shlex.split(h["entry"])[:4] == ["python", "-m", "generator", "check"]
    files = re.compile(h["files"])
    for path in (REFERENCE_REL, "recipes/a/b/c.yml", "recipes/a/b/C.YAML"):
        assert files.search(path), path
    for path in ("catalog/gpus.yaml", "recipes/a/b/c.evidence.json", "schema/recipe.schema.yaml", "README.md"):
        assert not files.search(path), path


def as_pre_commit_runs(python: Path, files: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """The entry with `python` the hook environment's interpreter, then the file names (pass_filenames)."""
    entry = shlex.split(hook()["entry"])
    assert entry[0] == "python"
    return _run([str(python), *entry[1:], *files], cwd=cwd)


@pytest.mark.slow
def test_the_hook_entry_passes_good_and_fails_bad_recipes(installed: dict[str, Path]) -> None:
    """From the wheel's venv, in a contributor's checkout (its root) and from another folder (absolute names)."""
    registry = _registry_copy(installed["tmp"] / "hook-registry")
    bad = registry / "recipes/gemma-4-31b/h100/bad.yaml"
    bad.write_text(REFERENCE.read_text().replace("mfu: 0.2194", "mfu: 0.3194"))
    python = installed["python"]
    good = as_pre_commit_runs(python, [REFERENCE_REL], registry)
    assert good.returncode == 0 and "ok: 1 recipe(s)" in good.stdout, good.stdout + good.stderr
    both = as_pre_commit_runs(python, [REFERENCE_REL, str(bad.relative_to(registry))], registry)
    assert both.returncode == 1, both.stdout + both.stderr
    assert re.search(r"^recipes/gemma-4-31b/h100/bad\.yaml:\d+:\d+: result\.mfu: ", both.stdout, re.M), both.stdout
    elsewhere = installed["tmp"] / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    away = as_pre_commit_runs(python, [str(registry / REFERENCE_REL)], elsewhere)
    assert away.returncode == 0, away.stdout + away.stderr


def test_the_hook_entry_on_this_checkout() -> None:
    """The hook as this repository's own contributors run it: the checkout's recipes, by relative name."""
    names = [REFERENCE_REL, "recipes/llama-3.2-1b/h200/engine-sdpa-4k.yaml"]
    done = as_pre_commit_runs(Path(sys.executable), names, ROOT)
    assert done.returncode == 0 and "ok: 2 recipe(s)" in done.stdout, done.stdout + done.stderr


def test_license_is_the_apache_2_text_pyproject_names() -> None:
    assert re.search(r'^license = \{ text = "Apache-2.0" \}', (ROOT / "pyproject.toml").read_text(), re.M)
    assert hashlib.md5((ROOT / "LICENSE").read_bytes()).hexdigest() == APACHE_2_MD5
