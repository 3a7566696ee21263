"""A re-measured recipe's page plots its evidence file (written by the real runner): step times and loss of the
median run, and the re-measurement history; bad evidence is reported and left out, never fatal or live."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sitehelpers import make_registry, remeasured
from suitehelpers import mkdocs_build, site_project

from generator.evidence import path_for as evidence_path
from generator.registry import load_registry
from generator.site import render_site

pytestmark = pytest.mark.slow

RID = "gemma-4-31b/h100/remeasured"


@pytest.fixture(scope="module")
def reg(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_registry(tmp_path_factory.mktemp("evidence") / "reg")
    remeasured(root, "remeasured")
    return root


def _chart(page: str, kind: str) -> list:
    marker = f'data-or-chart-kind="{kind}"'
    assert marker in page
    start = page.index('<script type="application/json"', page.index(marker))
    body = page[page.index(">", start) + 1: page.index("</script>", start)]
    return json.loads(body)


def test_the_page_plots_the_runners_evidence(reg: Path) -> None:
    recipe = reg / f"recipes/{RID}.yaml"
    evidence = json.loads(evidence_path(recipe).read_text())
    problems: list = []
    pages = render_site(load_registry(reg), problems)
    assert problems == []
    page = pages[f"recipes/{RID}.md"].content
    assert "## Measurements" in page
    steps = _chart(page, "steps")
    first, last = evidence["window"]
    assert [p["x"] for p in steps] == [s["step"] for s in evidence["steps"]]
    assert [p["time"] for p in steps] == [s["time_s"] for s in evidence["steps"]]
    assert [p["loss"] for p in steps] == [s["loss"] for s in evidence["steps"]]
    assert [p["in"] for p in steps] == [first <= s["step"] <= last for s in evidence["steps"]]
    history = _chart(page, "history")
    expected = [h["tokens_per_s_per_gpu"] for h in evidence["history"]] + [evidence["result"]["tokens_per_s_per_gpu"]]
    assert [p["y"] for p in history] == expected and len(expected) == 3
    assert "the recipe before its first re-measurement" in page and "(this result)" in page
    # the evidence file is offered for download, as committed
    assert pages[f"recipes/{RID}.evidence.json"].content == evidence_path(recipe).read_text()
    assert 'href="../remeasured.evidence.json" download="remeasured.evidence.json"' in page
    # a recipe without evidence has no such section
    assert "## Measurements" not in pages["recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.md"].content


def test_bad_evidence_is_reported_and_left_out(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "reg")
    remeasured(root, "remeasured", times=1)
    path = evidence_path(root / f"recipes/{RID}.yaml")
    path.write_text("{not json")
    problems: list = []
    pages = render_site(load_registry(root), problems)
    assert [str(p) for p in problems] == [
        f"recipes/{RID}.evidence.json:1:1: (document): remeasured.evidence.json is not readable JSON "
        "(Expecting property name enclosed in double quotes: line 1 column 2 (char 1)); left out of the page"]
    assert "## Measurements" not in pages[f"recipes/{RID}.md"].content
    assert f"recipes/{RID}.evidence.json" not in pages


def test_evidence_text_is_inert(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "reg")
    remeasured(root, "remeasured", times=2)
    path = evidence_path(root / f"recipes/{RID}.yaml")
    data = json.loads(path.read_text())
    payload = "</script><script>window.__xss=1</script><img src=x onerror=alert(1)>"
    data["source"] = payload
    data["history"][0]["measured"] = payload
    data["history"][0]["source"] = payload
    path.write_text(json.dumps(data))
    page = render_site(load_registry(root))[f"recipes/{RID}.md"].content
    assert "<script>window" not in page and "<img src=x" not in page
    assert "&lt;/script&gt;&lt;script&gt;window.__xss=1" in page  # shown as text in the table
    assert "\\u003c/script\\u003e" in page  # and escaped inside the chart's JSON


def test_strict_build_with_evidence(reg: Path, tmp_path: Path) -> None:
    import shutil

    project = tmp_path / "proj"
    shutil.copytree(reg, project)
    result = mkdocs_build(site_project(tmp_path, project), tmp_path / "out")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "WARNING" not in result.stderr
    html = (tmp_path / f"out/recipes/{RID}/index.html").read_text()
    assert 'data-or-chart-kind="steps"' in html and 'data-or-chart-kind="history"' in html
    assert (tmp_path / f"out/recipes/{RID}.evidence.json").is_file()
