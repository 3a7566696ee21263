"""Frameworks side by side (issue 27 item 4): per model, GPU type, training kind, precision and sequence length that
two or more frameworks share, one table of each framework's fastest recipe (tokens/s per GPU, MFU with its formula,
$ / 1M, convergence result), each linking to its recipe and evidence; also in downloads/frameworks.csv. Built from
a small registry made here: the real mkdocs build, read in Chromium."""

from __future__ import annotations

import copy
import csv
import io
from pathlib import Path

import pytest
import yaml
from sitehelpers import (
    CHROMIUM,
    make_registry,
    reference_data,
    remeasured,
    static_server,
    synthetic,
    watched_page,
)
from sitehelpers import free_port as _free_port
from suitehelpers import mkdocs_build, site_project

from generator import figures
from generator.registry import load_registry
from generator.site import formatting as fmt
from generator.site import render_site, views
from generator.site.pages import model as model_page


def _framework(name: str, stack: str, tokens: float, seq: int = 8192) -> dict:
    data = synthetic(tokens, name=name)
    data["stack"]["framework"] = stack
    data["workload"]["training"] = "pre-training"
    data["workload"]["row_tokens"] = seq
    return data


# On 8 H100, pre-training BF16 at 8k: three frameworks (two torchtitan recipes: the faster one is its row); at 4k only
# one framework (no table); the reference (training kind not stated) is a like line of its own with one framework.
RECIPES = {
    "gemma-4-31b/h100/titan-a": _framework("titan-a", "torchtitan 0.2.2", 1300.0),
    "gemma-4-31b/h100/titan-b": _framework("titan-b", "torchtitan 0.2.2", 1250.0),
    "gemma-4-31b/h100/hf-loop": _framework("hf-loop", "transformers 4.57.1 (a plain training loop)", 900.0),
    "gemma-4-31b/h100/engine": _framework("engine", "openrecipes-engine 0.1.0 (runner/engine)", 1400.0),
    "gemma-4-31b/h100/titan-4k": _framework("titan-4k", "torchtitan 0.2.2", 2000.0, seq=4096),
}


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_registry(tmp_path_factory.mktemp("frameworks") / "reg", RECIPES)
    # the engine recipe gets a convergence check (the reference's)
    engine = root / "recipes/gemma-4-31b/h100/engine.yaml"
    data = copy.deepcopy(RECIPES["gemma-4-31b/h100/engine"])
    data["correctness"] = copy.deepcopy(reference_data()["correctness"])
    engine.write_text(yaml.safe_dump(data, sort_keys=False))
    # a fourth framework, miles, measured by the real runner (so with its evidence file), made pre-training
    miles = remeasured(root, "miles-run", times=1)
    text = miles.read_text()
    miles.write_text(text.replace("  precision: bf16\n", "  precision: bf16\n  training: pre-training\n", 1))
    return root


def test_one_row_per_framework_fastest_first_with_formula_and_convergence(registry: Path) -> None:
    reg = load_registry(registry)
    groups = model_page.framework_groups([x for x in reg.recipes if x.recipe.model == "Gemma-4-31B"])
    assert [g.title for g in groups] == ["H100, pre-training, BF16, steady-state, sequence 8k"]  # 4k: one framework, no table
    rows = model_page.framework_rows(groups[0], views.figures_by_id(reg.recipes, reg.catalog), "models/gemma-4-31b.md",
                                     lambda x: True)
    miles = next(x for x in reg.recipes if x.id == "gemma-4-31b/h100/miles-run").recipe.result.tokens_per_s_per_gpu
    expected = sorted([("OpenRecipes engine", "engine", 1400.0), ("torchtitan", "titan-a", 1300.0),
                       ("Transformers", "hf-loop", 900.0), ("miles", "miles-run", miles)], key=lambda x: -x[2])
    assert [(r["framework"], r["id"].split("/")[-1]) for r in rows] == [(f, n) for f, n, _ in expected]
    rows = {r["framework"]: r for r in rows}
    engine = next(x for x in reg.recipes if x.id == "gemma-4-31b/h100/engine")
    n = engine.recipe.result.active_params.count
    peak = reg.catalog.gpus["H100"].peak_flops.bf16
    # by hand: 6 x N x 1,400 / peak
    engine_row = rows["OpenRecipes engine"]
    assert engine_row["mfu_value"] == figures.mfu(n, 1400.0, peak)
    assert engine_row["mfu_formula"] == (f"6 x N ({fmt.params(n)}) x tokens/s per GPU / BF16 peak "
                                         f"({peak / 1e12:,.0f} TFLOP/s)")
    assert engine_row["convergence"].startswith("pass: ") and rows["torchtitan"]["convergence"] == "none yet"
    # what each figure rests on: its run count, and what its convergence check compared against (the reference
    # recipe's: "reference arm: ..." of its note, to the first ';' outside brackets; and the recipe it names)
    reference = reference_data()
    assert reference["result"]["runs"] == 1 and engine_row["runs"] == "1 run"
    assert rows["miles"]["runs"] == "1 run"  # the runner's measured run
    arm = reference["correctness"]["convergence"]["note"].split("reference arm: ", 1)[1].split(";", 1)[0]
    assert engine_row["against"] == f"reference arm: {arm}; the reference: {reference['correctness']['reference']}"
    assert rows["torchtitan"]["against"] == "nothing: no convergence check"
    assert rows["torchtitan"]["stack"] == "torchtitan 0.2.2"
    assert engine_row["href"] == "../../recipes/gemma-4-31b/h100/engine/"


@pytest.mark.browser
@pytest.mark.slow
def test_model_page_and_csv_in_the_browser(registry: Path, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    if not CHROMIUM.exists():
        pytest.skip("Debian's Chromium is not installed at /usr/bin/chromium")
    pages = render_site(load_registry(registry))
    rows = list(csv.DictReader(io.StringIO(pages["downloads/frameworks.csv"].content)))
    assert {r["framework"]: r["id"] for r in rows} == {
        "OpenRecipes engine": "gemma-4-31b/h100/engine", "torchtitan": "gemma-4-31b/h100/titan-a",
        "Transformers": "gemma-4-31b/h100/hf-loop", "miles": "gemma-4-31b/h100/miles-run"}
    by = {r["framework"]: r for r in rows}
    assert by["OpenRecipes engine"]["sequence"] == "8192" and float(by["OpenRecipes engine"]["tokens_per_s_per_gpu"]) == 1400
    assert by["OpenRecipes engine"]["framework_stated"] == "openrecipes-engine 0.1.0 (runner/engine)"
    assert by["torchtitan"]["runs"] and by["OpenRecipes engine"]["convergence_against"].startswith("reference arm: ")
    # the runner's evidence file is linked where there is one
    assert by["miles"]["evidence"] == "recipes/gemma-4-31b/h100/miles-run.evidence.json"
    assert by["torchtitan"]["evidence"] == ""
    result = mkdocs_build(site_project(tmp_path, registry), tmp_path / "out")
    assert result.returncode == 0, result.stderr[-3000:]
    browser = request.getfixturevalue("browser")  # the test process's Chromium (tests/site/conftest.py)
    with static_server(tmp_path / "out", _free_port()) as base:
        page = watched_page(browser, base, viewport={"width": 1400, "height": 900})
        context, watch = page.context, page.watch
        page.goto("models/gemma-4-31b/")
        tables = page.eval_on_selector_all("table.or-frameworks", """ts => ts.map(t => ({title: t.dataset.orFrameworks,
            rows: [...t.tBodies[0].rows].map(r => [r.dataset.orRecipe, r.querySelector('[data-or-col=tokens]').innerText,
                   new URL(r.querySelector('a').href).pathname,
                   r.querySelector('a[download]') ? new URL(r.querySelector('a[download]').href).pathname : null])}))""")
        assert [t["title"] for t in tables] == ["H100, pre-training, BF16, steady-state, sequence 8k"]
        shown = {row[0]: row for row in tables[0]["rows"]}
        assert [row[0] for row in tables[0]["rows"]] == [r["id"] for r in rows]  # the CSV's order: fastest first
        assert shown["gemma-4-31b/h100/engine"][1:] == ["1,400", "/recipes/gemma-4-31b/h100/engine/", None]
        assert shown["gemma-4-31b/h100/miles-run"][3] == "/recipes/gemma-4-31b/h100/miles-run.evidence.json"
        page.locator("table.or-frameworks a[href$='/engine/']").click()
        page.wait_for_url("**/recipes/gemma-4-31b/h100/engine/")
        context.close()
    watch.assert_clean()


def test_mlperf_rows_say_their_runs_and_the_quality_target_they_met(committed) -> None:  # noqa: ANN001
    """MLPerf's time-to-train rows are medians of their submission's runs and rest on the benchmark's quality target
    (the submitter's runs), not on a convergence check of ours; each row says so, and its framework is the one its
    stated text names (NeMo where the system's list names it)."""
    llama = [x for x in committed.recipes if x.recipe.model == "Llama-2-70B"]
    groups = model_page.framework_groups(llama)
    figures_of = views.figures_by_id(llama, committed.catalog)
    rows = [row for g in groups for row in model_page.framework_rows(g, figures_of, "models/llama-2-70b.md",
                                                                lambda x: False)]
    by_id = {x.id: x for x in llama}
    assert {r["framework"] for r in rows} >= {"NeMo", "PyTorch"}
    for row in rows:
        r = by_id[row["id"]].recipe
        qt = r.correctness.quality_target if r.correctness else None
        if r.result.time_to_train is not None:
            assert row["runs"] == f"median of {len(r.result.time_to_train.runs_ms)} runs", row["id"]
        if qt is not None and r.correctness.convergence is None:
            assert row["convergence"] == (f"quality target reached in {qt.runs_reached} of {qt.runs} runs (the "
                                          "submitter's; no convergence check published)")
            assert row["against"].startswith(f"the benchmark's quality target, {qt.metric} {qt.direction} ")
    assert any(r["runs"] == "median of 10 runs" for r in rows)


def test_h100_rows_name_the_other_framework_they_were_checked_against_and_why_the_check_failed(committed) -> None:  # noqa: ANN001
    """The H100 1B recipes of ours (2026-12-06): each convergence check compares the framework with another one from
    the same weights, records its reference arm in `reference`, and fails on the floor rule alone; the row says
    against what (both checks) and why it failed, not the note whole."""
    ours = [x for x in committed.recipes if x.id.startswith("llama-3.2-1b/h100/")]
    assert len(ours) == 3
    (group,) = [g for g in model_page.framework_groups(ours)]
    rows = model_page.framework_rows(group, views.figures_by_id(ours, committed.catalog), "models/llama-3.2-1b.md",
                                     lambda x: False)
    by_id = {x.id: x.recipe for x in ours}
    for row in rows:
        conv = by_id[row["id"]].correctness
        main, (also,) = conv.convergence, conv.convergence_also
        assert row["against"] == (f"reference arm: {main.reference}, another implementation (another framework, from "
                                  f"the same initial weights and rows); also: {also.reference}")
        assert row["convergence"].startswith("fail: 200 steps, loss correlation 0.999")
        assert row["convergence"].endswith(f"; failed because {main.failed_because}")
        assert "more than 10% above the stream's floor 2.0794" in main.failed_because
