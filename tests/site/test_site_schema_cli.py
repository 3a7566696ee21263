"""Schema reference page covers every model field; `generator new` scaffolds a recipe to fill in; export writes."""

from __future__ import annotations

import subprocess
import types
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel
from sitehelpers import make_registry
from suitehelpers import generator_cli

from generator.models import Recipe
from generator.registry import load_registry
from generator.site import render_site


def _model_of(annotation: object) -> tuple[type[BaseModel] | None, bool]:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType, typing.Annotated):
        for arg in typing.get_args(annotation):
            found = _model_of(arg)
            if found[0] is not None:
                return found
        return None, False
    if origin is list:
        inner, _ = _model_of(typing.get_args(annotation)[0])
        return inner, inner is not None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    return None, False


def model_paths(model: type[BaseModel], prefix: str = "") -> list[str]:
    out = []
    for name, info in model.model_fields.items():
        path = prefix + name
        out.append(path)
        inner, many = _model_of(info.annotation)
        if inner is not None:
            out.extend(model_paths(inner, f"{path}[]." if many else f"{path}."))
    return out


@pytest.mark.slow
def test_schema_page_lists_every_model_field(committed_pages) -> None:  # noqa: ANN001
    page = committed_pages["schema.md"].content
    paths = model_paths(Recipe)
    assert len(paths) > 100
    missing = [p for p in paths if f"<code>{p}</code>" not in page]
    assert not missing, missing


@pytest.mark.slow
def test_schema_page_has_types_and_units(committed_pages) -> None:  # noqa: ANN001
    page = committed_pages["schema.md"].content.replace("</td> <td", "</td><td")  # cells are space-separated
    assert "<code>gpu.memory_gb</code></td><td>integer</td><td>yes</td><td>GB</td>" in page
    assert "<code>result.tokens_per_s_per_gpu</code></td><td>number</td><td>yes</td><td>tokens per second per GPU" in page
    assert "verified | measured | reported" in page


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return generator_cli(*args, cwd=cwd)


@pytest.mark.slow
def test_new_scaffolds_a_recipe_that_is_not_publishable_until_filled_in(tmp_path: Path) -> None:
    reg = make_registry(tmp_path / "reg", keep_reference=False)
    made = _cli("new", "gemma-4-31b", "h100", "my-layout", cwd=reg)
    assert made.returncode == 0, made.stderr
    path = reg / "recipes/gemma-4-31b/h100/my-layout.yaml"
    assert "TODO" in path.read_text()
    checked = _cli("check", "--no-cache", str(path), cwd=reg)  # filling it in: tests/check/test_results_scaffold.py
    assert checked.returncode == 1 and "placeholder TODO" in checked.stdout, checked.stdout + checked.stderr
    again = _cli("new", "gemma-4-31b", "h100", "my-layout", cwd=reg)
    assert again.returncode == 1 and "already exists" in again.stderr
    bad = _cli("new", "no-such-model", "h100", "x", cwd=reg)
    assert bad.returncode == 1 and "unknown model 'no-such-model'" in bad.stderr and "Traceback" not in bad.stderr


def test_export_writes_the_rendered_pages(tmp_path: Path) -> None:
    reg = make_registry(tmp_path / "reg")
    done = _cli("export", "--out", str(tmp_path / "out"), cwd=reg)
    assert done.returncode == 0, done.stderr
    pages = render_site(load_registry(reg))
    for rel, page in pages.items():
        assert (tmp_path / "out" / rel).read_text(encoding="utf-8") == page.content
