"""Failed layouts on a model page: each distinct layout once (with how often the publication lists it), sorted by
GPU type, count and layout, the outcome as the publication tells it (out of memory, crashed, or not told apart),
the nearest layout that worked on the same GPU type and count (or none), and where the publication states it in its
own terms (the figure's panel, node row, trace and hover text), reachable from the top of the model page."""

from __future__ import annotations

import re

import pytest
from sitehelpers import ROOT

from generator import failed
from generator.load import load_recipe
from generator.site.pages import failed_layouts as failed_view


@pytest.fixture(scope="module")
def section():  # noqa: ANN201
    data, problems = failed.load_all(ROOT)
    assert problems == []
    recipes_root = ROOT / "recipes"
    group = [load_recipe(p, str(p.relative_to(ROOT)), recipes_root)
             for p in sorted((recipes_root / "playbook-llama-80b").rglob("*.yaml"))]
    group = [x for x in group if x.recipe is not None]
    return data["Playbook-Llama-80B"], group, failed_view.section(data["Playbook-Llama-80B"], group,
                                                                  "models/playbook-llama-80b.md")


def test_each_failed_layout_once_sorted_and_counted(section) -> None:  # noqa: ANN001
    data, _, out = section
    distinct = out["distinct"]
    keys = [(d["count"], d["tp"], d["pp"], d["dp"], d["zero"], d["micro"], d["accumulation"]) for d in distinct]
    # the file's 666 entries (the importer already merges the publication's repeats: 687 before), each layout once
    # with how often it is listed
    assert sum(d["times"] for d in distinct) == len(data.layouts) == 666
    assert len(distinct) == len(data.layouts)
    assert keys == sorted(keys)
    by_hand = {(x.gpu.count, x.layout.tp, x.layout.pp, x.layout.dp, x.layout.zero_stage, x.layout.rows_per_microbatch,
                x.layout.gradient_accumulation, x.layout.global_batch, x.layout.row_tokens) for x in data.layouts}
    assert len(distinct) == len(by_hand)


def test_outcome_as_the_publication_tells_it(section) -> None:  # noqa: ANN001
    _, _, out = section
    # the playbook writes "crashed/oom" for every failure: not told apart, never guessed
    assert out["kinds"] == ["crashed or out of memory"] and out["untold"]
    assert failed_view.outcome_kind("OOM") == "out of memory"
    assert failed_view.outcome_kind("out of memory at step 3") == "out of memory"
    assert failed_view.outcome_kind("crashed (NCCL timeout)") == "crashed"
    assert failed_view.outcome_kind("diverged") == "diverged"


def test_nearest_that_worked_is_on_the_same_gpu_type_and_count_and_closest(section) -> None:  # noqa: ANN001
    data, group, out = section
    counts = {(x.recipe.gpu.type, x.recipe.gpu.count) for x in group}
    for item in data.layouts[:: 37]:
        near = failed_view.nearest_worked(item, group)
        same = [x for x in group if (x.recipe.gpu.type, x.recipe.gpu.count) == (item.gpu.type, item.gpu.count)]
        if not same:
            assert near is None
            continue
        assert near is not None and (near.recipe.gpu.type, near.recipe.gpu.count) == (item.gpu.type, item.gpu.count)
        assert failed_view._distance(item, near) == min(failed_view._distance(item, x) for x in same)
    # the 80B model's 1- and 2-node cells hold crosses only: nothing worked there, and the page says so
    assert ("H100", 8) not in counts and ("H100", 16) not in counts
    nones = [d for d in out["distinct"] if d["near"] is None]
    assert nones and {d["count"] for d in nones} == {8, 16} and out["no_neighbour"] == len(nones)
    assert all(d["near"]["gpus"] == d["gpus"] for d in out["distinct"] if d["near"] is not None)


def test_no_8b_neighbour_is_on_another_gpu_count() -> None:
    """Issue 42: 21 of the 352 failed 8B layouts had their "nearest that worked" on another GPU count."""
    data, _ = failed.load_all(ROOT)
    recipes_root = ROOT / "recipes"
    group = [load_recipe(p, str(p.relative_to(ROOT)), recipes_root)
             for p in sorted((recipes_root / "playbook-llama-8b").rglob("*.yaml"))]
    out = failed_view.section(data["Playbook-Llama-8B"], [x for x in group if x.recipe is not None],
                              "models/playbook-llama-8b.md")
    assert out["total"] == 352
    assert all(d["near"] is None or d["near"]["gpus"] == d["gpus"] for d in out["distinct"])


def test_source_is_located_in_the_figures_own_terms(section) -> None:  # noqa: ANN001
    data, _, out = section
    for d in out["distinct"][:: 50]:
        c = d["count"] // 8
        where = d["where"]
        # the panel, the node row and the hover text (data[trace].text[i]) with the configuration it states; the line
        # and column stay in the link's title
        assert re.fullmatch(rf"the 80B panel, {c}-node row: hover text (\d+) of \d+ \(data\[\d+\]\.text\[(\d+)\]\)",
                            where), where
        assert d["line_col"].startswith("line 2, column ")
    assert all(x.publication.locator for x in data.layouts)


def test_locator_names_the_hover_text_that_states_the_layout() -> None:
    """The importer's locator, read back in the document: data[trace].text[i] is the hover text of that layout."""
    import json

    from generator.importers import playbook

    text = (ROOT / "tests/importer/sources/playbook-benchmarks_interactive-924e4d0b.html").read_text(encoding="utf-8")
    figure, _, _ = playbook._figure_data(text)
    data, _ = failed.load_all(ROOT)
    for item in data["Playbook-Llama-8B"].layouts[:: 25]:
        found = re.search(r"\(data\[(\d+)\]\.text\[(\d+)\]\)$", item.publication.locator)
        hover = playbook._fields(figure[int(found.group(1))]["text"][int(found.group(2))])
        lay = item.layout
        assert {k: int(hover[k]) for k in ("Nodes", "MBS", "GradAcc", "GBS", "DP", "PP", "TP", "ZeRO")} == {
            "Nodes": item.gpu.count // 8, "MBS": lay.rows_per_microbatch, "GradAcc": lay.gradient_accumulation,
            "GBS": lay.global_batch, "DP": lay.dp, "PP": lay.pp, "TP": lay.tp, "ZeRO": lay.zero_stage}
        assert json.dumps(figure[int(found.group(1))]["xaxis"]) == '"x3"'  # the third panel, 8B's


@pytest.mark.slow
def test_every_group_page_links_its_sections_from_its_top(committed_site) -> None:  # noqa: ANN001
    """Each model and GPU page opens with links to its sections; each link's target is a heading of the built page,
    and a model page with failed layouts links them, with their count, before its first table."""
    pages = sorted((committed_site.out / "models").glob("*/index.html")) + sorted(
        (committed_site.out / "gpus").glob("*/index.html"))
    assert len(pages) > 40
    for page in pages:
        html = page.read_text(encoding="utf-8")
        nav = re.search(r'<nav class="or-contents".*?</nav>', html, re.S)
        assert nav, page
        ids = set(re.findall(r'<h2 id="([^"]+)"', html))
        targets = re.findall(r'href="#([^"]+)"', nav.group(0))
        assert targets and set(targets) <= ids, (page, set(targets) - ids)
    top = (committed_site.out / "models/playbook-llama-8b/index.html").read_text(encoding="utf-8")
    jump = top.index("data-or-failed-jump")
    assert jump < top.index("<table id=\"or-best\"") and "(352 failed layouts)" in top[jump:jump + 200]
