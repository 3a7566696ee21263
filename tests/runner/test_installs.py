"""The runner on the README's site install (`pip install -e .`: no torch, megatron-core, nvidia-ml-py or rich):
`remeasure --from-log` works; every path that needs the runner extra names it in one line. And the provenance the
evidence records (git commit and dirty state), whatever git or the folder is."""

from __future__ import annotations

import argparse
import importlib.machinery
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
from runner_support import FIXTURES, ROOT, registry

from runner import cli, environment
from runner.engine import cli as engine_cli
from runner.preflight import Gpus, Refusal, check_gpus, detect_gpus

EXTRA = "pip install -e '.[runner]'"
ENGINE_RECIPE = ROOT / "recipes/llama-3.2-1b/h200/engine-sdpa-4k.yaml"
INSTALL_TIMEOUT_S = 300


def _hide(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    """Make `modules` not installed for this process (find_spec answers None, import raises ImportError)."""
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)


def _fake_module(monkeypatch: pytest.MonkeyPatch, name: str, **attrs: object) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__spec__ = importlib.machinery.ModuleSpec(name, None)
    for key, value in attrs.items():
        setattr(module, key, value)
    monkeypatch.setitem(sys.modules, name, module)
    return module


def _reference(tmp_path: Path):  # -> (Recipe, Catalog)
    from generator.load import load_recipe
    from generator.registry import load_catalog

    recipe = registry(tmp_path)
    return load_recipe(recipe).recipe, load_catalog(tmp_path)


# --- preflight: a missing library is not a missing GPU ---------------------------------------------------------


def test_without_nvidia_ml_py_the_refusal_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _hide(monkeypatch, "pynvml", "torch")
    found = detect_gpus()
    assert found.count == 0 and found.not_installed == ["nvidia-ml-py", "torch"]
    assert found.error == "NVML: nvidia-ml-py is not installed; torch is not installed"
    recipe, catalog = _reference(tmp_path)
    with pytest.raises(Refusal) as refused:
        check_gpus(recipe, catalog, found, "r.yaml")
    message = str(refused.value)
    assert "nvidia-ml-py (NVML, the runner extra) is not installed" in message and EXTRA in message
    assert "No NVIDIA GPU" not in message


def test_with_nvml_and_no_driver_the_refusal_blames_the_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_driver() -> None:
        raise RuntimeError("Driver Not Loaded")

    _fake_module(monkeypatch, "pynvml", nvmlInit=no_driver)
    _fake_module(monkeypatch, "torch", cuda=types.SimpleNamespace(is_available=lambda: False))
    found = detect_gpus()
    assert found.count == 0 and found.not_installed == []
    assert found.error == "NVML: Driver Not Loaded; torch: CUDA not available"
    recipe, catalog = _reference(tmp_path)
    with pytest.raises(Refusal) as refused:
        check_gpus(recipe, catalog, found, "r.yaml")
    message = str(refused.value)
    assert message.startswith("No NVIDIA GPU or driver found on this machine (NVML: Driver Not Loaded;")
    assert EXTRA not in message


def test_without_nvml_torch_still_lists_the_gpus(monkeypatch: pytest.MonkeyPatch) -> None:
    _hide(monkeypatch, "pynvml")
    cuda = types.SimpleNamespace(is_available=lambda: True, device_count=lambda: 2,
                                 get_device_name=lambda i: "NVIDIA H100 80GB HBM3")
    _fake_module(monkeypatch, "torch", cuda=cuda)
    assert detect_gpus() == Gpus(["NVIDIA H100 80GB HBM3"] * 2, "torch")


def test_train_without_torch_says_which_extra_in_one_line(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    _hide(monkeypatch, "torch", "megatron", "megatron.core")
    parser = argparse.ArgumentParser()
    engine_cli.add_parser(parser.add_subparsers())
    code = engine_cli.main(parser.parse_args(["train", str(ENGINE_RECIPE)]))  # the recipe's refusals first: none
    err = capsys.readouterr().err
    assert code == engine_cli.EXIT_CANNOT_TRAIN == 2
    assert err.count("\n") == 1 and err.startswith("error: `python -m runner train` needs the runner extra: ")
    assert "torch and megatron-core are not installed" in err and EXTRA in err


def test_missing_runner_extra_names_distributions_not_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    _hide(monkeypatch, "pynvml", "rich")
    assert environment.missing_runner_extra("pynvml", "rich", "json") == ["nvidia-ml-py", "rich"]
    assert environment.importable("json") and not environment.importable("no_such_package.sub")


# --- provenance --------------------------------------------------------------------------------------------------


def _git(folder: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "commit.gpgsign=false",
                           "-C", str(folder), *args], capture_output=True, text=True, env=env, check=True)
    return done.stdout.strip()


def _code_commit() -> str | None:
    """HEAD of this checkout, or None where the tests run from a copy that is not one."""
    try:
        _git(ROOT, "ls-files", "--error-unmatch", "runner/environment.py")
        return _git(ROOT, "rev-parse", "HEAD")
    except (OSError, subprocess.CalledProcessError):
        return None


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A registry in its own git checkout, committed clean."""
    root = tmp_path / "registry"
    registry(root)
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "registry")
    return root


def test_provenance_of_a_registry_in_its_own_checkout(repo: Path) -> None:
    got = environment.provenance(repo)
    assert got["commit"] == _code_commit()
    assert got["registry_commit"] == _git(repo, "rev-parse", "HEAD") and got["registry_dirty"] is False
    runs = repo / ".openrecipes-runs/attune/20261020T120000Z"
    runs.mkdir(parents=True)
    (runs / "run1.log").write_text("a run's log\n")
    assert environment.provenance(repo)["registry_dirty"] is False  # the runner's own files do not count
    (repo / "notes.txt").write_text("untracked\n")
    assert environment.provenance(repo)["registry_dirty"] is True
    (repo / "notes.txt").unlink()
    recipe = next((repo / "recipes").rglob("*.yaml"))
    recipe.write_text(recipe.read_text() + "\n")
    assert environment.provenance(repo)["registry_dirty"] is True


def test_provenance_where_nothing_is_a_checkout_or_git_is_missing(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    got = environment.provenance(plain)
    assert got["registry_commit"] is None and got["registry_dirty"] is None
    assert got["commit"] == _code_commit()
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))
    assert environment.provenance(plain) == {"commit": None, "dirty": None, "registry_commit": None,
                                            "registry_dirty": None}
    assert environment.provenance(tmp_path / "missing") == {"commit": None, "dirty": None, "registry_commit": None,
                                                           "registry_dirty": None}


def test_provenance_of_the_registry_inside_the_code_checkout_is_said_once() -> None:
    if _code_commit() is None:
        pytest.skip("the tests run from a copy that is not a git checkout")
    got = environment.provenance(ROOT)
    assert set(got) == {"commit", "dirty"} and got["commit"] == _code_commit() and isinstance(got["dirty"], bool)


# --- the README's site install, for real -------------------------------------------------------------------------


def _clean_env() -> dict[str, str]:
    """This environment without what would let the fresh venv see another one's packages."""
    drop = {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "OPENRECIPES_GPUS", "PYTHONSTARTUP"}
    return {k: v for k, v in os.environ.items() if k not in drop} | {"PYTHONNOUSERSITE": "1"}


@pytest.fixture(scope="module")
def site_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv holding the README's site install of this checkout (`pip install -e .`), from the configured
    package index: the base dependencies of pyproject.toml and nothing of the runner extra."""
    venv = tmp_path_factory.mktemp("site-install") / "venv"
    # No pip of its own (ensurepip takes seconds): this process's pip installs into it (`pip --python`).
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=INSTALL_TIMEOUT_S,
                   env=_clean_env())
    python = venv / "bin" / "python"
    # --no-compile: the tests import a few of the installed modules, which Python compiles as they are imported;
    # compiling every installed module first was a third of the install's CPU (10.8 s with it, 6.9 s without).
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-compile", "-e",
                           str(ROOT)], capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, env=_clean_env())
    assert done.returncode == 0, f"pip install -e {ROOT} failed:\n{done.stdout}\n{done.stderr}"
    return python  # pytest removes its old temporary folders itself (removing a venv here took 40 s on a busy disk)


def _run(python: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(python), *args], cwd=cwd, env=_clean_env(), capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_the_site_install_has_none_of_the_runner_extra(site_python: Path, tmp_path: Path) -> None:
    probe = ("from runner.environment import missing_runner_extra as m; "
             "print(','.join(m('torch', 'megatron.core', 'pynvml', 'rich')))")
    done = _run(site_python, "-c", probe, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "torch,megatron-core,nvidia-ml-py,rich"  # else this test would prove nothing


@pytest.mark.slow
def test_from_log_on_the_site_install_writes_the_figures(site_python: Path, tmp_path: Path) -> None:
    recipe = registry(tmp_path)
    before = recipe.read_text()
    done = _run(site_python, "-m", "runner", "remeasure", str(recipe), "--from-log",
                str(FIXTURES / "miles_gemma4_31b.txt"), cwd=tmp_path)
    assert done.returncode == cli.EXIT_OK, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert "+  tokens_per_s_per_gpu: " in done.stdout and "wrote " in done.stdout
    assert recipe.read_text() != before and recipe.with_name(recipe.stem + ".evidence.json").is_file()


@pytest.mark.slow
def test_train_on_the_site_install_names_the_extra_in_one_line(site_python: Path, tmp_path: Path) -> None:
    done = _run(site_python, "-m", "runner", "train", str(ENGINE_RECIPE), "--cpu", cwd=tmp_path)
    assert done.returncode == engine_cli.EXIT_CANNOT_TRAIN, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and EXTRA in lines[0] and "torch and megatron-core are not installed" in lines[0]


@pytest.mark.slow
def test_launch_on_the_site_install_names_the_extra_not_the_hardware(site_python: Path, tmp_path: Path) -> None:
    recipe = registry(tmp_path)
    before = recipe.read_bytes()
    done = _run(site_python, "-m", "runner", "remeasure", str(recipe), "--yes", cwd=tmp_path)
    assert done.returncode == cli.EXIT_PREFLIGHT, done.stderr
    assert "nvidia-ml-py (NVML, the runner extra) is not installed" in done.stderr and EXTRA in done.stderr
    assert "No NVIDIA GPU" not in done.stderr and "Traceback" not in done.stderr
    assert recipe.read_bytes() == before


def test_a_recipe_may_state_its_training_image_by_digest(tmp_path: Path) -> None:
    from generator.load import load_recipe
    from generator.schema import json_schema, validator
    from generator.site import views

    recipe = registry(tmp_path)
    digest = "sha256:" + "0123456789abcdef" * 4  # not the base image's digest that stack.source cites
    text = recipe.read_text().replace("\nworkload:\n", f"\n  image:\n    name: radixark/miles:v0.1.0-efa\n"
                                                       f"    digest: {digest}\n" "workload:\n", 1)
    recipe.write_text(text)
    loaded = load_recipe(recipe)
    assert loaded.recipe.stack.image is not None and loaded.recipe.stack.image.digest == digest
    assert not list(validator(json_schema("recipe")).iter_errors(loaded.data))
    # Recorded, not shown: the recipe page's stack table leaves it out (for now).
    rows = views.model_field_rows(loaded.recipe.stack)  # what the page's stack table lists (labels aside)
    assert rows and not any(digest in value or "radixark/miles:v0.1.0-efa" in value for _, value in rows)


def test_evidence_provenance_records_the_stated_image(tmp_path: Path) -> None:
    from generator.load import load_recipe

    recipe = registry(tmp_path)
    plain = load_recipe(recipe).recipe
    assert "image" not in environment.evidence_provenance(plain, tmp_path)
    digest = "sha256:" + "fedcba9876543210" * 4
    recipe.write_text(recipe.read_text().replace(
        "\nworkload:\n", f"\n  image:\n    name: example.org/train:1\n    digest: {digest}\nworkload:\n", 1))
    got = environment.evidence_provenance(load_recipe(recipe).recipe, tmp_path)
    assert got["image"] == {"name": "example.org/train:1", "digest": digest}
    assert got["commit"] == _code_commit() and got["registry_commit"] is None  # tmp_path is no checkout


def test_a_launch_on_a_terminal_without_rich_runs_without_a_bar_and_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from runner.launchers.process import _progress_bar

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    _hide(monkeypatch, "rich")
    console = Terminal()
    bar, live = _progress_bar(console, progress=True)
    assert live is False
    with bar:
        bar.update(bar.add_task("run", total=3, rate=""), completed=1, rate="1.0 tokens/s/GPU")
    said = console.getvalue()
    assert said.startswith("The progress bar needs the runner extra: rich is not installed")
    assert said.endswith("The run goes on without it.\n")
    assert EXTRA in said and said.count("\n") == 1
