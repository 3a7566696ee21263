"""The committed schemas are what the models generate; every recipe validates under them."""

from __future__ import annotations

import pytest
import yaml
from suitehelpers import ROOT

from generator.load import read_yaml
from generator.models import Recipe
from generator.registry import recipe_files
from generator.schema import SCHEMAS, schema_path, schema_text, validator


def test_committed_schemas_are_generated() -> None:
    for name in SCHEMAS:
        assert schema_path(ROOT, name).read_text() == schema_text(name), (
            f"schema/{name}.schema.yaml is stale: run `python -m generator schema`"
        )


def test_schema_is_2020_12_with_descriptions_and_units() -> None:
    schema = yaml.safe_load(schema_path(ROOT, "recipe").read_text())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["title"] == "OpenRecipes recipe"

    def walk(model: type, where: str) -> None:
        for name, info in model.model_fields.items():
            assert info.description, f"{where}.{name} has no description"
    for defn in (Recipe, *[m for m in _submodels(Recipe)]):
        walk(defn, defn.__name__)


def _submodels(model: type) -> set[type]:
    from pydantic import BaseModel

    found: set[type] = set()
    stack = [model]
    while stack:
        current = stack.pop()
        for info in current.model_fields.values():
            for arg in _args(info.annotation):
                if isinstance(arg, type) and issubclass(arg, BaseModel) and arg not in found:
                    found.add(arg)
                    stack.append(arg)
    return found


def _args(annotation: object) -> list[object]:
    out = [annotation]
    for arg in getattr(annotation, "__args__", ()) or ():
        out.extend(_args(arg))
    return out


@pytest.mark.slow
def test_every_recipe_validates_under_jsonschema() -> None:
    schema = yaml.safe_load(schema_path(ROOT, "recipe").read_text())
    check = validator(schema)
    files = recipe_files(ROOT)
    assert files
    for path in files:
        errors = list(check.iter_errors(read_yaml(path).data))
        assert not errors, f"{path}: {errors[0].message}"


def test_catalogs_validate_under_their_schemas() -> None:
    for name, rel in (("gpus", "catalog/gpus.yaml"), ("instances", "catalog/instances.yaml")):
        schema = yaml.safe_load(schema_path(ROOT, name).read_text())
        assert not list(validator(schema).iter_errors(read_yaml(ROOT / rel).data))
    schema = yaml.safe_load(schema_path(ROOT, "models").read_text())
    for path in (ROOT / "catalog/models").glob("*.yaml"):
        assert not list(validator(schema).iter_errors(read_yaml(path).data)), path
