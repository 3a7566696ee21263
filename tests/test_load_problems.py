"""The loader's promises as units: a problem is one escaped line; characters are reported where they are; the
YAML 1.1 / 1.2 comparison flags every scalar the runner's ruamel.yaml reads differently from PyYAML."""

from __future__ import annotations

import io
import math
import shutil
from pathlib import Path

import pytest
import yaml
from ruamel.yaml import YAML
from suitehelpers import REFERENCE, ROOT

from generator.check import format_problems
from generator.load import MAX_DEPTH, load_recipe, read_yaml
from generator.problems import InputError, Problem, escape
from generator.registry import load_catalog


def test_problem_prints_one_line_whatever_its_parts_hold() -> None:
    p = Problem("recipes/a\n:b.yaml", 3, 4, "env.A\nB: c", "got 'x\n recipes/x.yaml:1:1: forged\x1b[31m\u202e\x85'")
    text = str(p)
    assert "\n" not in text and "\x1b" not in text and "\u202e" not in text and "\x85" not in text
    assert text == ("recipes/a\\n\\x3ab.yaml:3:4: env.A\\nB\\x3a c: "
                    "got 'x\\n recipes/x.yaml:1:1: forged\\x1b[31m\\u202e\\x85'")
    assert text.count(": ") >= 2 and text.split(":")[1:3] == ["3", "4"]


def test_escape_leaves_ordinary_text_alone() -> None:
    text = "TP2 PP4 — 13/16/16/15 layers, 8,192 tokens; ümlaut 中文 \\n stays"
    assert escape(text) == text


def test_json_output_keeps_raw_parts_but_escapes_them_as_json() -> None:
    out = format_problems([Problem("a.yaml", 1, 1, "model", "x\x1b[31m\ny")], "json")
    assert "\x1b" not in out and "\\u001b[31m\\ny" in out


def write(tmp_path: Path, text: str | bytes, name: str = "r.yaml") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def problems(path: Path) -> list[Problem]:
    with pytest.raises(InputError) as err:
        load_recipe(path, path.name)
    return err.value.problems


def test_control_character_at_its_real_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, "a: 1\nnotes: 'héllo wörld \x07 bell'\n")
    (p,) = problems(path)
    assert (p.line, p.col, p.field) == (2, 21, "(document)") and "U+0007" in p.message


@pytest.mark.parametrize("char", ["\x00", "\x1b", "\x7f", "\x85", "\x9b", "\u2028", "\u202e", "\u2066", "\ufeff"])
def test_every_unsafe_character_is_refused_where_it_is(tmp_path: Path, char: str) -> None:
    path = write(tmp_path, f"a: 1\nb: x{char}y\n")
    (p,) = problems(path)
    assert (p.line, p.col) == (2, 5) and f"U+{ord(char):04X}" in p.message


def test_crlf_lines_and_a_leading_bom_do_not_move_positions(tmp_path: Path) -> None:
    text = "\ufeff" + REFERENCE.read_text().replace("status: verified\n", "status: approved\n").replace("\n", "\r\n")
    (p,) = problems(write(tmp_path, text))
    assert (p.line, p.col, p.field) == (14, 9, "status")


def test_nesting_past_the_limit_is_one_problem(tmp_path: Path) -> None:
    path = write(tmp_path, "a: " + "[" * 900 + "]" * 900 + "\n")
    (p,) = problems(path)
    assert p.message == f"nested deeper than {MAX_DEPTH} levels" and p.line == 1


def test_a_value_that_cannot_be_built_is_reported_once(tmp_path: Path) -> None:
    """The loader says why; validation does not add 'valid integer (got None)' for the same field."""
    path = write(tmp_path, REFERENCE.read_text().replace("  count: 8\n", "  count: !!int two\n"))
    assert [str(p) for p in problems(path)] == ["r.yaml:8:10: gpu.count: 'two' is not an integer (remove the tag "
                                                "or fix the value)"]


def test_an_ambiguous_scalar_is_reported_beside_the_schema_problem(tmp_path: Path) -> None:
    path = write(tmp_path, REFERENCE.read_text().replace("  memory_gb: 80\n", "  memory_gb: yes\n"))
    messages = [p.message for p in problems(path) if p.field == "gpu.memory_gb"]
    assert len(messages) == 2 and any("ambiguous YAML" in m for m in messages)
    assert any("valid integer" in m for m in messages)


def test_catalog_problems_are_located_not_raised(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "catalog", tmp_path / "catalog")
    gpus = tmp_path / "catalog/gpus.yaml"
    text = gpus.read_text()
    line = text[: text.index("  memory_gb: 80\n")].count("\n") + 1
    gpus.write_text(text.replace("  memory_gb: 80\n", "  memory_gb: !!int eighty\n", 1))
    catalog = load_catalog(tmp_path)
    assert [(p.path, p.line, p.message) for p in catalog.problems if p.path == "catalog/gpus.yaml"] == [
        ("catalog/gpus.yaml", line, "'eighty' is not an integer (remove the tag or fix the value)")]


# --- YAML 1.1 vs 1.2: ruamel.yaml (the runner's reader) as the independent oracle ------------------------------

SCALARS = [
    "yes", "no", "on", "off", "Yes", "NO", "y", "n", "true", "False", "null", "~", "Null",
    "0200", "012", "09", "0o7", "0x1F", "0x1_F", "0b11", "1_000", "1_000.5", "+12", "-0", "0",
    "1:20", "0:20", "190:20:30", "1e3", "1.5e3", "1.5e+3", "1.", ".5", "5.0", ".inf", "-.Inf", ".NaN",
    "2026-01-01", "2026-02-30", "2.17.0", "H100", "bf16", "expandable_segments:True", "=", "1e-3", "6.02e+23",
]


def _ruamel(text: str) -> object:
    try:
        value = YAML(typ="safe", pure=True).load(io.StringIO(f"v: {text}\n"))["v"]
    except Exception as exc:  # noqa: BLE001 - a reading that fails is a reading that differs
        return ("unreadable", type(exc).__name__)
    return value.isoformat() if hasattr(value, "isoformat") else value


def _pyyaml(text: str) -> object:
    try:
        value = yaml.safe_load(f"v: {text}\n")["v"]
    except Exception as exc:  # noqa: BLE001
        return ("unreadable", type(exc).__name__)
    return value.isoformat() if hasattr(value, "isoformat") else value


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("text", SCALARS)
def test_every_scalar_the_two_readers_disagree_on_is_a_problem(text: str, tmp_path: Path) -> None:
    path = write(tmp_path, f"schema_version: 1\nnotes: {text}\n")
    try:
        found = read_yaml(path, "r.yaml").problems
    except InputError as exc:
        found = exc.problems
    if not _same(_pyyaml(text), _ruamel(text)):
        assert [p for p in found if p.field == "notes" and p.line == 2], (text, _pyyaml(text), _ruamel(text))


@pytest.mark.parametrize("text", ["H100", "2.17.0", "bf16", "true", "null", "8192", "0.2194", "-5", "2026-10-20",
                                  "1.5e+3", ".inf", "expandable_segments:True", "0", "'0200'", '"yes"'])
def test_scalars_both_readers_agree_on_pass(text: str, tmp_path: Path) -> None:
    path = write(tmp_path, f"schema_version: 1\nnotes: {text}\n")
    assert read_yaml(path, "r.yaml").problems == []


def test_a_long_value_is_not_echoed_whole(tmp_path: Path) -> None:
    path = write(tmp_path, REFERENCE.read_text().replace("  count: 8\n", "  count: " + "x" * 300_000 + "\n"))
    (p,) = [p for p in problems(path) if p.field == "gpu.count"]
    assert len(str(p)) < 400 and "(300,002 characters)" in p.message
