"""MLPerf's time-to-train rows in Chromium, on the committed registry's built site (tests/site/conftest.py): the
Llama-2-70B planner keeps them apart from NeMo's steady-state LoRA row, the table's CSV says each row's throughput
as recipes.csv does, and the pages this work changed have no serious axe-core violation at 1400 and 390 px."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from sitehelpers import no_sideways_scroll, open_folds, serious_axe_violations

from generator import figures
from generator.site import views

pytestmark = [pytest.mark.browser, pytest.mark.slow]

MI355X = "llama-2-70b/mi355x/mlperf-v5.1-amd-mi355x-epyc-9575f-pytorch"
NEMO_LORA = "llama-2-70b/h100/nemo-24.07-lora-dgx-h100-8gpu-fp8"
PLAN = "plan.gpu=H100&plan.n=8&p.H100=2.10&budget=1T"
# The other pages this work changed, the home and methodology pages, are checked in both colour schemes by
# test_site_committed_browser.py's axe test, on the same site, folds open.
PAGES = [f"recipes/{MI355X}/", "gpus/mi355x/", "gpus/l40s/", f"models/llama-2-70b/?{PLAN}", "models/gpt-3-175b/",
         "recipes/?gpu_type=MI300X"]


def test_llama_2_70b_planner_keeps_mlperf_apart_from_nemo(wide, registry) -> None:  # noqa: ANN001
    """8 H100 at $2.10, 1T tokens. NeMo 24.07's LoRA row, 2,621 tokens/s per GPU: 1e12 / 2,621 / 3,600 = 105,982
    GPU-hours, $222,561, 552 days on its 8 GPUs; alone in "LoRA, FP8, steady-state". The MLPerf rows that fit (8 or
    fewer H100) are in their own time-to-train groups."""
    by_id = {x.id: x for x in registry.recipes}
    wide.goto(f"models/llama-2-70b/?{PLAN}")
    plan = wide.evaluate("""() => [...document.querySelectorAll('table[data-or-plan-group]')].map(t => ({
        group: t.dataset.orPlanGroup, ids: [...t.tBodies[0].rows].map(r => r.dataset.orRecipe),
        first: [...t.tBodies[0].rows[0].querySelectorAll('[data-or-col]')].map(c => c.innerText)}))""")
    groups = {g["group"]: g for g in plan}
    steady = groups["LoRA, FP8, steady-state"]
    assert steady["ids"] == [NEMO_LORA]
    hours = figures.gpu_hours_for_tokens(1e12, 2621.0)
    assert round(hours) == 105_982 and round(figures.training_usd(hours, 2.10)) == 222_561
    assert round(figures.wall_clock_days(hours, 8)) == 552
    assert steady["first"] == ["106k", "$223k", "552"]  # hours, cost, days as the planner writes them
    fitting = sorted(x.id for x in registry.recipes if x.recipe.model == "Llama-2-70B" and x.recipe.gpu.type == "H100"
                     and x.recipe.gpu.count <= 8 and x.recipe.result.time_to_train is not None)
    timed = [g for g in plan if g["group"].endswith(views.THROUGHPUT_TIME_TO_TRAIN)]
    assert sorted(i for g in timed for i in g["ids"]) == fitting and fitting
    for group in plan:
        assert {views.like(by_id[i]).text for i in group["ids"]} == {group["group"]}


def test_table_csv_has_the_throughput_column(wide, registry) -> None:  # noqa: ANN001
    """The CSV of the rows in view (table.js) writes each row's throughput as recipes.csv does."""
    by_id = {x.id: x for x in registry.recipes}
    wide.goto("recipes/?model=Llama-2-70B&gpu_type=H100")
    with wide.expect_download() as info:
        wide.locator("button[data-or-csv=or-recipes]").click()
    rows = list(csv.DictReader(io.StringIO(Path(info.value.path()).read_text())))
    assert len(rows) == sum(x.recipe.model == "Llama-2-70B" and x.recipe.gpu.type == "H100" for x in registry.recipes)
    assert {r["throughput"] for r in rows} == {views.THROUGHPUT_STEADY, views.THROUGHPUT_TIME_TO_TRAIN}
    for row in rows:
        assert row["throughput"] == views.throughput_kind(by_id[row["id"]]), row["id"]


def test_recipe_page_quality_target_link_opens_the_correctness_fold(wide) -> None:  # noqa: ANN001
    wide.goto(f"recipes/{MI355X}/")
    wide.locator(".or-evidence a[href$='#quality-target']").click()
    assert wide.locator("#quality-target").is_visible()
    assert wide.locator("[data-or-tile=ttt] .or-tile__value").inner_text() == "9.83 min"


def test_axe_no_serious_violations_on_the_changed_pages(new_page, site) -> None:  # noqa: ANN001
    """Each page loaded once at 390 px, every fold opened, checked; then widened to 1400 px and checked again
    (sitehelpers.serious_axe_violations). At each width the page scrolls no wider than the window."""
    page = new_page(site, viewport={"width": 390, "height": 900})
    assert serious_axe_violations(page, PAGES, prepare=open_folds, at_width=no_sideways_scroll) == []
