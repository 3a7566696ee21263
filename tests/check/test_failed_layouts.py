"""`python -m generator check` covers failed/<model>.yaml as it covers recipes: the committed files pass, and each kind
of bad input is one located problem (path:line:col: field: message), never a traceback, a hang or silence."""

from __future__ import annotations

import copy
import functools
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from suitehelpers import generator_cli, read_yaml

from generator import failed
from generator.check import check_tree

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "failed" / "playbook-llama-8b.yaml"


def _registry(tmp: Path, text: str, name: str = "playbook-llama-8b.yaml") -> Path:
    shutil.copytree(ROOT / "catalog", tmp / "catalog")
    (tmp / "recipes").mkdir()
    (tmp / "failed").mkdir()
    (tmp / "failed" / name).write_text(text, encoding="utf-8")
    return tmp


@functools.cache
def _committed_data() -> dict:
    return read_yaml(COMMITTED)


def _first_entry_text() -> str:
    """The committed file cut to its first layout (a real entry, as the importer wrote it)."""
    data = copy.deepcopy(_committed_data())
    data["layouts"] = data["layouts"][:1]
    return yaml.safe_dump(data, sort_keys=False)


def _check(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return generator_cli("check", "--no-cache", *args, cwd=root, env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.slow
def test_committed_failed_layouts_pass_and_are_counted() -> None:
    run = check_tree(ROOT, use_cache=False)
    assert run.failed_files == len(list((ROOT / "failed").glob("*.yaml"))) >= 4
    assert not [p for p in run.problems if p.path.startswith("failed/")]


def test_a_clean_copy_passes(tmp_path: Path) -> None:
    root = _registry(tmp_path, _first_entry_text())
    done = _check(root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "ok: 0 recipe(s) and 1 failed-layouts file(s) checked, no problems"


@pytest.mark.parametrize(("edit", "expected"), [
    # (old text, new text) on the first entry, and the one problem line it must give
    (("  layout:\n    dp: ", "  layout:\n    dp: 3\n    was_dp: "),
     "failed/playbook-llama-8b.yaml:{line}:5: layouts[0].layout.was_dp: unknown field"),
    (("model: Playbook-Llama-8B", "model: Playbook-Llama-9B"),
     "failed/playbook-llama-8b.yaml:1:8: model: unknown model 'Playbook-Llama-9B': not in catalog/models/"),
    (("    type: H100", "    type: H900"),
     "failed/playbook-llama-8b.yaml:{line}:11: layouts[0].gpu.type: unknown GPU type 'H900': not in catalog/gpus.yaml"),
])
def test_each_bad_entry_is_one_located_problem(tmp_path: Path, edit: tuple[str, str], expected: str) -> None:
    text = _first_entry_text()
    assert edit[0] in text
    bad = text.replace(edit[0], edit[1], 1)
    root = _registry(tmp_path, bad)
    done = _check(root)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stdout + done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1, lines
    line = next(n for n, ln in enumerate(bad.splitlines(), 1) if edit[1].splitlines()[-1] in ln)
    assert lines[0].startswith(expected.format(line=line)), (lines[0], expected.format(line=line))


def test_layout_that_does_not_fill_its_gpus(tmp_path: Path) -> None:
    data = yaml.safe_load(_first_entry_text())
    shape = data["layouts"][0]["layout"]
    shape["dp"] = shape["dp"] * 2  # DP x TP x PP now twice the GPU count
    text = yaml.safe_dump(data, sort_keys=False)
    root = _registry(tmp_path, text)
    done = _check(root)
    dp_line = next(n for n, ln in enumerate(text.splitlines(), 1) if ln.strip().startswith("dp:"))
    assert done.returncode == 1
    assert done.stdout.strip().startswith(f"failed/playbook-llama-8b.yaml:{dp_line}:9: layouts[0].layout.dp: DP "), \
        done.stdout


def test_file_named_for_another_model(tmp_path: Path) -> None:
    root = _registry(tmp_path, _first_entry_text(), name="playbook-llama-1b.yaml")
    done = _check(root, "failed")
    assert done.returncode == 1
    assert done.stdout.strip() == ("failed/playbook-llama-1b.yaml:1:8: model: the file for Playbook-Llama-8B is "
                                   "failed/playbook-llama-8b.yaml")


def test_broken_yaml_and_a_fifo_are_refused_without_reading(tmp_path: Path) -> None:
    root = _registry(tmp_path, "model: [unclosed\n")
    os.mkfifo(root / "failed" / "zz-fifo.yaml")  # opening it would block for ever
    done = _check(root)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    paths = sorted(ln.split(":", 1)[0] for ln in done.stdout.strip().splitlines())
    assert paths == ["failed/playbook-llama-8b.yaml", "failed/zz-fifo.yaml"], done.stdout
    assert "failed/zz-fifo.yaml:1:1: (document): not a regular file (a fifo, socket or device is never read)" in done.stdout


def test_the_cache_keeps_a_failed_file_until_its_bytes_change(tmp_path: Path) -> None:
    """A warm check reuses a failed-layouts file's result (its bytes unchanged) and reads it again once they change;
    a fifo beside it is neither hashed nor read with the cache on."""
    good = _first_entry_text()
    root = _registry(tmp_path / "reg", good)
    os.mkfifo(root / "failed" / "zz-fifo.yaml")
    cache = tmp_path / "cache"
    fifo_line = "failed/zz-fifo.yaml:1:1: (document): not a regular file (a fifo, socket or device is never read)"
    first = check_tree(root, use_cache=True, cache_folder=cache)
    assert [str(p) for p in first.problems] == [fifo_line]
    stored = json.loads(next(cache.glob("check-*.json")).read_text())["entries"]
    assert list(stored) == ["failed/playbook-llama-8b.yaml"]  # the fifo has no entry: it was never hashed
    assert [str(p) for p in check_tree(root, use_cache=True, cache_folder=cache).problems] == [fifo_line]
    (root / "failed" / "playbook-llama-8b.yaml").write_text(good.replace("model: Playbook-Llama-8B",
                                                                         "model: Playbook-Llama-9B"))
    changed = [str(p) for p in check_tree(root, use_cache=True, cache_folder=cache).problems]
    assert changed[0].startswith("failed/playbook-llama-8b.yaml:1:8: model: ") and changed[1:] == [fifo_line], changed


# Fuzzing: text-level mutations of a real two-entry file. Whatever the mutant, check answers with located one-line
# problems at lines the file has (or none), never an exception; the site's loader agrees on whether the file is valid.

PROBLEM_LINE = re.compile(r"^failed/playbook-llama-8b\.yaml:(\d+):(\d+): \S.*$")
JUNK = st.sampled_from(["!!int two", "!!bool null", "&a 1", "*a", "[", "{", "'", '"\\x00"', "\x07", "\u202e", "-1",
                        "1e309", "9" * 4301, "yes", "0200", "0:20", "~", "- x", ": y", "\t", "null", "[[[[[[[[[["])


def _two_entries() -> str:
    data = copy.deepcopy(_committed_data())
    data["layouts"] = data["layouts"][:2]
    return yaml.safe_dump(data, sort_keys=False)


TWO = _two_entries()


@st.composite
def mutants(draw: st.DrawFn) -> str:
    lines = TWO.splitlines()
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["delete", "duplicate", "value", "indent", "swap"]))
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "value" and ":" in lines[i]:
            key = lines[i].split(":", 1)[0]
            lines[i] = f"{key}: {draw(JUNK)}"
        elif op == "indent":
            lines[i] = " " * draw(st.integers(0, 7)) + lines[i].lstrip()
        elif op == "swap" and i + 1 < len(lines):
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
        if not lines:
            lines = ["{}"]
    return "\n".join(lines) + "\n"


@pytest.mark.slow
@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=mutants())
def test_fuzzed_failed_layouts_give_located_problems(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    root = _registry(tmp_path_factory.mktemp("fz"), text)
    run = check_tree(root, use_cache=False)
    count = len(text.splitlines()) or 1
    for problem in run.problems:
        line = str(problem)
        assert "\n" not in line and PROBLEM_LINE.match(line), line
        assert 1 <= problem.line <= count + 1, (line, count)
    _, data, problems = failed.read(root / "failed" / "playbook-llama-8b.yaml", root)
    assert (data is None) == bool(problems)  # the site refuses exactly what the loader reports
