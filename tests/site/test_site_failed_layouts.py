"""Failed layouts on a model page: each distinct layout once (with how often the publication lists it), sorted by
GPU type, count and layout, the outcome as the publication tells it (out of memory, crashed, or not told apart),
and the nearest layout that worked on the same GPU type."""

from __future__ import annotations

import pytest
from sitehelpers import ROOT

from generator import failed
from generator.load import load_recipe
from generator.site import failed as failed_view


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


def test_nearest_that_worked_is_on_the_same_gpu_type_and_closest(section) -> None:  # noqa: ANN001
    data, group, out = section
    item = data.layouts[0]
    near = failed_view.nearest_worked(item, group)
    assert near is not None and near.recipe.gpu.type == item.gpu.type
    best = min(failed_view._distance(item, x) for x in group if x.recipe.gpu.type == item.gpu.type)
    assert failed_view._distance(item, near) == best
    assert all(d["near"] is not None for d in out["distinct"])
