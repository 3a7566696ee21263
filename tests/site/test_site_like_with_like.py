"""Every view that ranks or compares recipes (home page best lines, best layouts, Pareto frontiers, charts) ranks
within one training kind and one precision and names them; an unstated training kind is shown as not stated."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from sitehelpers import make_registry, reference_data, synthetic

from generator.registry import load_registry
from generator.site import formatting as fmt
from generator.site import render_site, views
from generator.site.pages import compare as compare_page

# On 8 H100: a LoRA run far faster than the pre-training runs, an SFT run, and the reference (no training kind).
RECIPES = {
    "gemma-4-31b/h100/pre-bf16": synthetic(900.0, name="pre-bf16", training="pre-training"),
    "gemma-4-31b/h100/pre-bf16-slow": synthetic(700.0, name="pre-bf16-slow", training="pre-training"),
    "gemma-4-31b/h100/pre-fp8": synthetic(1200.0, name="pre-fp8", training="pre-training", precision="fp8-cs"),
    "gemma-4-31b/h100/lora-bf16": synthetic(5000.0, name="lora-bf16", training="lora"),
    "gemma-4-31b/h100/sft-bf16": synthetic(950.0, name="sft-bf16", training="sft"),
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    root = make_registry(tmp_path_factory.mktemp("like"), RECIPES)
    registry = load_registry(root)
    return registry, render_site(registry)


def _home_lines(content: str) -> list[list[str]]:
    table = content.split('<table class="or-best">', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>", 1)[1], re.S)
    return [[re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
            for row in rows]


def test_home_has_one_best_line_per_training_kind_and_precision(site) -> None:  # noqa: ANN001
    _, pages = site
    lines = _home_lines(pages["index.md"].content)
    # model, training, precision, throughput, recipes, best tokens/s, on, lowest $, on
    assert {line[3] for line in lines} == {views.THROUGHPUT_STEADY}
    got = {(line[1], line[2]): (line[4], line[5]) for line in lines}
    assert got == {
        ("pre-training", "BF16"): ("2", "900"),  # the LoRA run's 5,000 is not a pre-training answer
        ("pre-training", "FP8-CS"): ("1", "1,200"),
        ("not stated", "BF16"): ("1", fmt.short(reference_data()["result"]["tokens_per_s_per_gpu"])),
        ("SFT", "BF16"): ("1", "950"),
        ("LoRA", "BF16"): ("1", "5,000"),
    }
    # pre-training first, the unstated one next, fine-tuning last
    assert [line[1] for line in lines][:3] == ["pre-training", "pre-training", "not stated"]


def test_reference_row_says_not_stated_never_pre_training(site) -> None:  # noqa: ANN001
    registry, pages = site
    content = pages["recipes.md"].content
    row = re.search(r'<tr data-or-recipe="gemma-4-31b/h100/attune-tp2-pp4-split13".*?</tr>', content, re.S).group(0)
    assert 'data-training="not stated"' in row
    assert re.search(r'data-or-col="training">not stated<', row)
    assert re.search(r'data-or-col="precision">BF16<', row)
    # the filters offer the training kinds as the rows carry them, "not stated" among them
    assert '<option value="not stated">' in content and '<option value="lora">' in content


def test_best_layouts_never_mix_training_kinds(site) -> None:  # noqa: ANN001
    _, pages = site
    content = pages["models/gemma-4-31b.md"].content
    table = content.split('id="or-best"', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr><td>.*?</tr>", table, re.S)
    cells = [[re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)] for r in rows]
    best = {(c[4], c[5]): (c[8], c[9]) for c in cells}  # (training, precision): (fastest recipe, of)
    assert best[("pre-training", "BF16")] == ("pre-bf16", "2")
    assert best[("LoRA", "BF16")] == ("lora-bf16", "1")
    assert best[("not stated", "BF16")][1] == "1"


def _chart(content: str, kind: str) -> list[dict]:
    canvas = re.search(rf'data-or-chart="([^"]+)" data-or-chart-kind="{kind}"', content).group(1)
    return json.loads(re.search(rf'<script type="application/json" id="{canvas}">(.*?)</script>', content, re.S).group(1))


def test_pareto_frontier_is_per_like_group(site) -> None:  # noqa: ANN001
    _, pages = site
    points = _chart(pages["models/gemma-4-31b.md"].content, "cost")
    by_group: dict[str, list[dict]] = {}
    for p in points:
        by_group.setdefault(p["group"], []).append(p)
    assert set(by_group) == {f"{group}, steady-state" for group in (
        "pre-training, BF16", "pre-training, FP8-CS", "training kind not stated, BF16", "SFT, BF16", "LoRA, BF16")}
    # On one GPU type at one price the fastest of a group is its cheapest: each group's frontier is that one point.
    # Across groups the LoRA point (fastest and cheapest) would have hidden every other: it does not.
    for group, members in by_group.items():
        front = [p for p in members if p["front"]]
        assert len(front) == 1 and front[0]["y"] == max(p["y"] for p in members), group
    scaling = _chart(pages["models/gemma-4-31b.md"].content, "scaling")
    assert {p["group"] for p in scaling} == set(by_group)


def test_views_like_groups_order(site) -> None:  # noqa: ANN001
    registry, _ = site
    order = [like.text for like, _ in views.by_like(registry.recipes)]
    assert order == [f"{group}, steady-state" for group in (
        "pre-training, BF16", "pre-training, FP8-CS", "training kind not stated, BF16", "SFT, BF16", "LoRA, BF16")]


def test_csv_download_leaves_the_unstated_training_kind_empty(site) -> None:  # noqa: ANN001
    _, pages = site
    # read as a CSV reader does: a stated framework ("miles 0.1.0 (... a slime fork), no local changes") is quoted
    rows = {row["id"]: row for row in csv.DictReader(io.StringIO(pages["downloads/recipes.csv"].content))}
    assert rows["gemma-4-31b/h100/attune-tp2-pp4-split13"]["training"] == ""
    assert rows["gemma-4-31b/h100/lora-bf16"]["training"] == "lora"



def test_recipe_pages_say_the_training_kind_an_unstated_one_as_not_stated(site) -> None:  # noqa: ANN001
    _, pages = site
    reference = pages["recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.md"].content
    assert views.TRAINING_NOT_STATED in reference and "pre-training: every weight" not in reference
    assert views.TRAINING_TEXT["pre-training"] in pages["recipes/gemma-4-31b/h100/pre-bf16.md"].content
    assert views.TRAINING_TEXT["lora"] in pages["recipes/gemma-4-31b/h100/lora-bf16.md"].content


def test_compare_records_lead_with_what_makes_them_like_with_like(site) -> None:  # noqa: ANN001
    _, pages = site
    record = json.loads(pages["recipes/gemma-4-31b/h100/pre-fp8.compare.json"].content)
    decides = [label for label, _ in record["sections"][0][1]]
    assert decides[:5] == ["GPU count", "Tokens per row", "Training", "Precision", "Throughput"]
    assert {key: f["value"] for key, f in record["like"].items()} == {
        "gpu_count": 8, "row_tokens": 8192, "kind": "pre-training", "precision": "fp8-cs",
        "throughput": views.THROUGHPUT_STEADY}
    assert [key for key, _ in compare_page.LIKE_FIELDS] == list(record["like"])
    assert record["like_src"] == "recipes/gemma-4-31b/h100.like.json"


def test_like_twins_keep_each_like_keys_fastest_recipes(site) -> None:  # noqa: ANN001
    _, pages = site
    twins = json.loads(pages["recipes/gemma-4-31b/h100.like.json"].content)
    assert (twins["model"], twins["gpu_type"]) == ("Gemma-4-31B", "H100")
    ids = [t["id"].split("/")[-1] for t in twins["recipes"]]
    # fastest first; both pre-training BF16 recipes (one key, up to TWINS_PER_KEY kept), every other key once
    assert ids == ["lora-bf16", "pre-fp8", "attune-tp2-pp4-split13", "sft-bf16", "pre-bf16", "pre-bf16-slow"]
    assert twins["recipes"][1]["like"]["precision"] == {"value": "fp8-cs", "text": "FP8-CS"}
