"""MLPerf Training's time-to-train figures on the committed registry's site: compared only with each other, their
quality target and run times in view, and the new accelerators and model with pages of their own.

A time-to-train tokens/s (every sample's tokens over run_start to run_stop, evaluation included) reads lower than the
same layout's steady-state step rate, so `views.Like` carries the kind of throughput as its third part: every view
that ranks (home page lines, best layouts, Pareto frontiers, chart groups, the planner, frameworks side by side)
keeps MLPerf rows apart from Megatron-Bridge / NeMo rows and names which it is.

Hand-computed expectations come from recipes/llama-2-70b/mi355x/mlperf-v5.1-amd-mi355x-epyc-9575f-pytorch.yaml (AMD's
MLPerf Training v5.1 llama2_70b_lora result files, training_results_v5.1 at 441d65f4): its ten runs_ms and samples.
"""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from generator.site import formatting as fmt
from generator.site import views
from generator.site.pages import compare as compare_page
from generator.site.pages import model as model_page
from generator.site.rowdata import expand

MI355X = "llama-2-70b/mi355x/mlperf-v5.1-amd-mi355x-epyc-9575f-pytorch"
NEMO_LORA = "llama-2-70b/h100/nemo-24.07-lora-dgx-h100-8gpu-fp8"
NEW_GPUS = ("MI300X", "MI325X", "MI350X", "MI355X", "L40S")


def _ttt(loaded) -> bool:  # noqa: ANN001
    return loaded.recipe.result.time_to_train is not None


def _by_id(registry) -> dict:  # noqa: ANN001
    return {x.id: x for x in registry.recipes}


def _id_from_href(href: str) -> str:
    return re.search(r"recipes/(.+?)/$", href).group(1)


def _json_block(content: str, pattern: str) -> list[dict]:
    return json.loads(re.search(pattern, content, re.S).group(1))


def _chart(content: str, kind: str) -> list[dict]:
    canvas = re.search(rf'data-or-chart="([^"]+)" data-or-chart-kind="{kind}"', content).group(1)
    return _json_block(content, rf'<script type="application/json" id="{canvas}">(.*?)</script>')


def _cells(row: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]


# --- like with like ----------------------------------------------------------------------------------------------

def test_no_like_group_mixes_time_to_train_with_steady_state(committed) -> None:  # noqa: ANN001
    groups = views.by_like(committed.recipes)
    assert any(g.time_to_train for g, _ in groups) and any(not g.time_to_train for g, _ in groups)
    for group, members in groups:
        assert {_ttt(x) for x in members} == {group.time_to_train}, group.text
        assert group.text.endswith(views.THROUGHPUT_TIME_TO_TRAIN if group.time_to_train
                                   else views.THROUGHPUT_STEADY), group.text
    # the 237 MLPerf recipes (v3.0-v5.1), every one a time to train with evaluation included
    assert sum(len(m) for g, m in groups if g.time_to_train) == sum(_ttt(x) for x in committed.recipes) == 237


@pytest.mark.slow
def test_home_page_llama_2_70b_lora_fp8_is_two_lines(committed, committed_pages) -> None:  # noqa: ANN001
    """Llama-2-70B LoRA FP8: NeMo 24.07's one steady-state row on 8 H100 (2,621 tokens/s at 4,096 tokens) and the 150
    MLPerf rows (B200 27, B300 4, GB200 12, GB300 4, H100 42, H200 29, H200-NVL 2, L40S 2, MI300X 11, MI325X 12,
    MI350X 1, MI355X 4)
    are two lines, each naming its throughput; the MLPerf line's best carries the TTT label."""
    content = committed_pages["index.md"].content
    table = content.split('<table class="or-best">', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>", 1)[1], re.S)
    lines = {tuple(_cells(r)[:4]): (_cells(r), r) for r in rows}
    steady, steady_html = lines[("Llama-2-70B", "LoRA", "FP8", views.THROUGHPUT_STEADY)]
    timed, timed_html = lines[("Llama-2-70B", "LoRA", "FP8", views.THROUGHPUT_TIME_TO_TRAIN)]
    assert steady[4] == "1" and steady[5] == "2,621" and NEMO_LORA in steady_html
    assert timed[4] == "150" and timed[5].endswith(" " + views.TTT_LABEL) and NEMO_LORA not in timed_html
    expected = max((x for x in committed.recipes if x.recipe.model == "Llama-2-70B" and _ttt(x)
                    and x.recipe.workload.precision.value == "fp8"), key=lambda x: x.recipe.result.tokens_per_s_per_gpu)
    assert f'title="{expected.id}"' in timed_html
    assert timed[5] == fmt.short(expected.recipe.result.tokens_per_s_per_gpu) + " " + views.TTT_LABEL
    # every line of every model names its throughput, one line per (model, training, precision, throughput)
    assert all(key[3] in (views.THROUGHPUT_STEADY, views.THROUGHPUT_TIME_TO_TRAIN) for key in lines)
    assert len(lines) == len(rows)


@pytest.mark.parametrize(("page", "subject"), [("models/llama-2-70b.md", "Llama-2-70B"), ("gpus/h100.md", "H100"),
                                               ("models/llama-3.1-8b.md", "Llama-3.1-8B"), ("gpus/mi300x.md", "MI300X")])
@pytest.mark.slow
def test_best_layouts_count_only_their_own_throughput(committed, committed_pages, page: str, subject: str) -> None:  # noqa: ANN001
    """Each best-layout row's recipe and its "of" count: recipes of the same GPU type (or model), GPU count, training
    kind, precision, sequence and throughput kind; a time-to-train row says TTT beside its figure, no other does."""
    by_id = _by_id(committed)
    content = committed_pages[page].content
    table = content.split('id="or-best"', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr><td>.*?</tr>", table, re.S)
    assert rows
    seen_ttt = False
    for row in rows:
        cells = _cells(row)
        loaded = by_id[re.search(r'<td class="or-name"><a href="[^"]*" title="([^"]+)"', row).group(1)]
        r = loaded.recipe
        seen_ttt |= _ttt(loaded)
        assert cells[2].endswith(" " + views.TTT_LABEL) == _ttt(loaded), (page, cells)  # tokens/s per GPU
        model, gpu = (subject, cells[0]) if page.startswith("models/") else (cells[0], subject)
        line = [x for x in committed.recipes if (x.recipe.model, x.recipe.gpu.type) == (model, gpu)
                and x.recipe.gpu.count == r.gpu.count and views.like(x) == views.like(loaded)
                and x.recipe.workload.row_tokens == r.workload.row_tokens]
        assert cells[9] == str(len(line)), (page, cells)  # "of"
        assert r.result.tokens_per_s_per_gpu == max(x.recipe.result.tokens_per_s_per_gpu for x in line)
    assert seen_ttt, page
    assert 'data-or-legend="ttt"' in content


@pytest.mark.slow
@pytest.mark.parametrize("page", ["models/llama-2-70b.md", "models/llama-3.1-405b.md", "gpus/h100.md"])
def test_chart_groups_and_pareto_fronts_keep_time_to_train_apart(committed, committed_pages, page: str) -> None:  # noqa: ANN001
    by_id = _by_id(committed)
    content = committed_pages[page].content
    kinds = ("cost", "scaling") if page.startswith("models/") else ("scaling",)
    for kind in kinds:
        points = _chart(content, kind)
        assert points, (page, kind)
        for point in points:
            loaded = by_id[_id_from_href(point["href"])]
            assert point["group"].endswith(views.like(loaded).text), (page, point)
        if kind == "cost":
            # the frontier: per group, no other point of that group cheaper-or-equal and faster-or-equal
            for point in points:
                dominated = any(o is not point and o["group"] == point["group"] and o["x"] <= point["x"]
                                and o["y"] >= point["y"] and (o["x"], o["y"]) != (point["x"], point["y"])
                                for o in points)
                assert point["front"] == (not dominated), point


@pytest.mark.slow
def test_planner_rows_rank_mlperf_apart_from_nemo(committed, committed_pages) -> None:  # noqa: ANN001
    """The Llama-2-70B page's planner data: NeMo's LoRA row and the MLPerf LoRA rows on H100 are in different
    groups, each named with its throughput."""
    by_id = _by_id(committed)
    plan = _json_block(committed_pages["models/llama-2-70b.md"].content,
                       r'<script type="application/json" data-or-plan-data>(.*?)</script>')
    assert len(plan) == sum(x.recipe.model == "Llama-2-70B" for x in committed.recipes)
    for row in plan:
        assert row["group"] == views.like(by_id[row["id"]]).text
    group_of = {row["id"]: row["group"] for row in plan}
    assert group_of[NEMO_LORA] == "LoRA, FP8, steady-state"
    mlperf_h100 = [row for row in plan if row["gpu_type"] == "H100" and _ttt(by_id[row["id"]])]
    assert len(mlperf_h100) == 43  # 42 FP8 and 1 BF16 (the Llama-2-70B H100 MLPerf rows)
    assert {row["group"] for row in mlperf_h100} == {"LoRA, FP8, time to train, evaluation included",
                                                     "LoRA, BF16, time to train, evaluation included"}


@pytest.mark.slow
def test_frameworks_side_by_side_never_pair_mlperf_with_steady_state(committed, committed_pages) -> None:  # noqa: ANN001
    seen = set()
    for model in {x.recipe.model for x in committed.recipes}:
        for group in model_page.framework_groups([x for x in committed.recipes if x.recipe.model == model]):
            assert {_ttt(x) for x in group.rows} == {group.like.time_to_train}, group.title
            assert group.like.throughput in group.title
            seen.add(group.like.time_to_train)
    assert seen == {True, False}  # MLPerf's frameworks (NeMo, PyTorch, ...) meet only each other
    by_id = _by_id(committed)
    rows = list(csv.DictReader(io.StringIO(committed_pages["downloads/frameworks.csv"].content)))
    assert rows and all(row["throughput"] == views.throughput_kind(by_id[row["id"]]) for row in rows)


def test_compare_record_says_the_throughput(committed) -> None:  # noqa: ANN001
    by_id = _by_id(committed)
    for rid, expected in ((MI355X, views.THROUGHPUT_TIME_TO_TRAIN), (NEMO_LORA, views.THROUGHPUT_STEADY)):
        decides = dict(compare_page.compare_record(by_id[rid], views.recipe_figures(by_id[rid], committed.catalog),
                                            committed.catalog)["sections"][0][1])
        assert decides["Throughput"] == expected


# --- evidence in view --------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_mlperf_recipe_page_shows_quality_target_and_time_to_train(committed_pages) -> None:  # noqa: ANN001
    """By hand from the recipe: runs_ms sorted 587,095 589,316 589,663 589,709 589,814 589,823 590,038 666,790
    667,120 667,358; the lower median (5th) is 589,814 ms, run 9: 9.83 min, 3,072 samples x 8,192 / 589.814 s / 8 =
    5,333.4 tokens/s per GPU. MLPerf's score drops 587,095 and 667,358: 4,872,273 / 8 = 609,034.1 ms = 10.151 min.
    Run 8: 3,072 x 8,192 / 587.095 / 8 = 5,358. Quality target: eval loss <= 0.925 in 10 of 10 runs, 0.92494."""
    content = committed_pages[f"recipes/{MI355X}.md"].content
    target = "eval loss &lt;= 0.925 reached in 10 of 10 runs: 0.92494 (median run)"
    lead = content.split('<div class="or-lead">', 1)[1].split('<dl class="or-card__facts">', 1)[0]
    assert f"{target}; the submitter&#x27;s runs, not re-run here" in lead
    assert "or-result--reached" in lead and 'href="&#35;quality-target"' in lead
    assert "No correctness evidence was published" not in lead  # a quality target was
    assert '<span class="or-tile__value">9.83 min</span> <span class="or-tile__label">Time to train, median run' in lead
    assert "Tokens/s per GPU, time to train" in lead
    facts = content.split('<dl class="or-card__facts">', 1)[1].split("</dl>", 1)[0]
    assert "<dd>5,333.40 (time to train, evaluation included)</dd>" in facts
    assert f"<dt>Quality target</dt>\n<dd>{target};" in facts
    block = content.split("## Time to train", 1)[1].split("</details>", 1)[0]
    assert "samples x 8,192 tokens / its run time / 8 GPUs" in block and "evaluations on the way included" in block
    assert "<td>run 9: 9.83 min (589,814 ms)</td>" in block
    assert "<td>10.151 min, the mean without the fastest and the slowest run" in block
    runs = re.findall(r"<tr[^>]*><td>(\d+)( <strong>\(median\)</strong>)?</td>(.*?)</tr>", block)
    assert [n for n, _, _ in runs] == [str(i) for i in range(1, 11)]
    assert [n for n, median, _ in runs if median] == ["9"]
    assert _cells("<td>" + runs[7][2])[-4:] == ["9.78 min", "587,095", "3,072", "5,358"]
    correctness = content.split('<h3 id="quality-target">', 1)[1].split("</table>", 1)[0]
    assert "<td>&lt;= 0.925</td>" in correctness and "<td>in 10 of 10 counted runs</td>" in correctness
    assert "<td>0.92494</td>" in correctness and "result_8.txt" in correctness


@pytest.mark.slow
def test_tables_mark_time_to_train_and_show_the_quality_target(committed, committed_pages) -> None:  # noqa: ANN001
    """Every row of the all-recipes table, the live ones and those served as JSON (rowdata), for every recipe."""
    content = committed_pages["recipes.md"].content
    live = content.split('id="or-recipes"', 1)[1].split("</tbody>", 1)[0]
    packed = expand(re.search(r'<template data-or-rows="or-recipes">(.*?)</template>', content, re.S).group(1))
    rows = [re.match(r'<tr data-or-recipe="([^"]+)"([^>]*)>(.*?)</tr>', row, re.S).groups()
            for row in re.findall(r"<tr data-or-recipe=.*?</tr>", live, re.S) + packed]
    by_id = _by_id(committed)
    assert sorted(rid for rid, _, _ in rows) == sorted(by_id)
    for rid, attrs, body in rows:
        ttt = _ttt(by_id[rid])
        tokens = re.search(r'data-or-col="tokens"[^>]*>(.*?)</td>', body, re.S).group(1)
        assert (f">{views.TTT_LABEL}</abbr>" in tokens) == ttt, rid
        assert ('data-throughput="time to train, evaluation included"' in attrs) == ttt, rid
        evidence = re.search(r'data-or-col="evidence">(.*?)</td>', body).group(1)
        assert (evidence == views.EVIDENCE_QUALITY_TARGET) == ttt, (rid, evidence)
    assert 'data-or-legend="ttt"' in content
    # the evidence filter offers it
    assert f'<option value="{views.EVIDENCE_QUALITY_TARGET}">' in content


@pytest.mark.slow
def test_recipes_csv_says_the_throughput(committed, committed_pages) -> None:  # noqa: ANN001
    rows = list(csv.DictReader(io.StringIO(committed_pages["downloads/recipes.csv"].content)))
    assert len(rows) == len(committed.recipes)
    by_id = _by_id(committed)
    for row in rows:
        assert row["throughput"] == views.throughput_kind(by_id[row["id"]])
    assert {row["throughput"] for row in rows} == {views.THROUGHPUT_STEADY, views.THROUGHPUT_TIME_TO_TRAIN}
    assert next(r for r in rows if r["id"] == MI355X)["throughput"] == "time to train, evaluation included"


# --- the new accelerators and model ------------------------------------------------------------------------------

@pytest.mark.slow
def test_new_gpu_and_model_pages_and_filters(committed, committed_pages) -> None:  # noqa: ANN001
    cat = committed.catalog
    for gpu in NEW_GPUS:
        page = committed_pages[views.gpu_src(gpu)].content
        assert f"<td>{cat.gpus[gpu].name}</td>" in page
        price = re.search(r'<th scope="row">On-demand price</th> <td>(.*?)</td>', page).group(1)
        if cat.gpus[gpu].unpriced:  # the reason, as the catalog states it
            assert price.startswith("none: ") and fmt.html_text(cat.gpus[gpu].unpriced) in price
        else:
            assert price.startswith("$")
    assert "none: no dated on-demand price of an MI350X instance" in committed_pages["gpus/mi350x.md"].content
    assert "OCI BM.GPU.MI355X.8" in committed_pages["gpus/mi355x.md"].content
    assert "GPT-3-175B" in committed_pages[views.model_src(cat, "GPT-3-175B")].content
    listing = committed_pages["recipes.md"].content
    for value in (*NEW_GPUS, "GPT-3-175B"):
        assert f'<option value="{value}">' in listing
    for index, names in (("gpus/index.md", NEW_GPUS), ("models/index.md", ("GPT-3-175B",))):
        for name in names:
            assert f">{name}</a>" in committed_pages[index].content


@pytest.mark.slow
def test_new_pages_in_the_strict_mkdocs_build(committed_site) -> None:  # noqa: ANN001
    """The committed site's `mkdocs build --strict` (tests/site/conftest.py) has the pages of the new GPU types, the
    model and an MLPerf recipe."""
    out = committed_site.out
    for path in [*(f"gpus/{views.slug(g)}/index.html" for g in NEW_GPUS), "models/gpt-3-175b/index.html",
                 f"recipes/{MI355X}/index.html"]:
        assert (out / path).is_file(), path
    page = (out / f"recipes/{MI355X}/index.html").read_text()
    assert 'id="quality-target"' in page and 'id="or-ttt-runs"' in page
