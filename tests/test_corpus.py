"""The bad-input corpus: each case must be reported at its exact line and field, and Pydantic and
jsonschema must agree on whether the document is schema-valid."""

from __future__ import annotations

import shutil
import time
import tracemalloc
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError
from suitehelpers import REFERENCE, ROOT, check_registry

from generator.load import read_yaml
from generator.models import Recipe
from generator.problems import InputError
from generator.registry import load_registry
from generator.schema import json_schema, validator

CORPUS = ROOT / "tests/corpus"
CASES = sorted(p.stem for p in CORPUS.glob("*.yaml"))
DEFAULT_PLACE = "recipes/gemma-4-31b/h100/case.yaml"


def make_root(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "catalog", tmp_path / "catalog")
    (tmp_path / "recipes").mkdir()
    return tmp_path


def expected(case: str) -> dict:
    return yaml.safe_load((CORPUS / f"{case}.expected").read_text())


def test_corpus_is_large_enough() -> None:
    assert len(CASES) >= 30


@pytest.mark.parametrize("case", CASES)
def test_case_is_reported_at_its_line_and_field(case: str, tmp_path: Path) -> None:
    exp = expected(case)
    root = make_root(tmp_path)
    target = root / exp.get("place", DEFAULT_PLACE)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(CORPUS / f"{case}.yaml", target)
    problems = check_registry(load_registry(root))
    assert problems, f"{case}: no problem reported"
    hits = [p for p in problems if p.line == exp["line"] and p.field == exp["field"] and exp["message"] in p.message]
    assert hits, f"{case}: expected line {exp['line']} {exp['field']}: ...{exp['message']}...; got\n" + "\n".join(
        map(str, problems)
    )
    assert all(p.path == str(target.relative_to(root)) for p in problems)


@pytest.mark.parametrize("case", [c for c in CASES if expected(c).get("agree", True)])
def test_pydantic_and_jsonschema_agree(case: str) -> None:
    doc = read_yaml(CORPUS / f"{case}.yaml")
    try:
        Recipe.model_validate(doc.data)
        pydantic_ok = True
    except ValidationError:
        pydantic_ok = False
    schema_ok = not list(validator(json_schema("recipe")).iter_errors(doc.data))
    assert pydantic_ok == schema_ok, f"{case}: pydantic {pydantic_ok}, jsonschema {schema_ok}"


def test_duplicate_id_across_files(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    d = root / "recipes/gemma-4-31b/h100"
    d.mkdir(parents=True)
    shutil.copyfile(REFERENCE, d / "same.yaml")
    shutil.copyfile(REFERENCE, d / "Same.yml")
    problems = check_registry(load_registry(root))
    assert [p.message for p in problems if "duplicate recipe id" in p.message], problems


def test_symlink_outside_recipes_is_refused(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    d = root / "recipes/gemma-4-31b/h100"
    d.mkdir(parents=True)
    outside = tmp_path / "elsewhere.yaml"
    shutil.copyfile(REFERENCE, outside)
    (d / "link.yaml").symlink_to(outside)
    problems = check_registry(load_registry(root))
    assert len(problems) == 1 and "symlink points outside recipes/" in problems[0].message
    assert problems[0].path == "recipes/gemma-4-31b/h100/link.yaml"


def test_alias_bomb_is_rejected_fast_with_bounded_memory() -> None:
    tracemalloc.start()
    start = time.perf_counter()
    with pytest.raises(InputError) as err:
        read_yaml(CORPUS / "alias_bomb.yaml")
    elapsed = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert "aliases" in err.value.problems[0].message
    assert elapsed < 1.0 and peak < 20 * 2**20


def test_every_problem_is_one_line_with_position(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    d = root / "recipes/gemma-4-31b/h100"
    d.mkdir(parents=True)
    for case in CASES:
        if expected(case).get("place") is None:
            shutil.copyfile(CORPUS / f"{case}.yaml", d / f"{case}.yaml")
    problems = check_registry(load_registry(root))
    assert {p.path.rsplit("/", 1)[1][:-5] for p in problems} >= {c for c in CASES if not expected(c).get("place")}
    for p in problems:
        assert "\n" not in str(p) and p.line >= 1 and p.col >= 1
