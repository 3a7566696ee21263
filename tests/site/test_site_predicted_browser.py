"""The run planner's model family and predicted layouts in Chromium, on the committed registry's site: the question
(model family, GPU type, count, token budget) beside its answer at 1400 px; the layout advisor's PREDICTED layouts for
the family on that GPU type in a table of their own after the measured recipes, each row marked, their figures those
the model page states for the same (GPU type, count); another family is another page, the plan kept; nothing scrolls
the page sideways at 1400 or 390 px."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]
PLAN = "models/llama-3.1-70b/?plan.gpu=H100&plan.n={n}&budget=1T"


def _predicted(page) -> dict:  # noqa: ANN001
    return page.evaluate("""() => {
        const box = document.querySelector('[data-or-planner-predicted]');
        const table = box.querySelector('table');
        return {caption: table ? table.caption.textContent : '', note: box.textContent,
                insideMeasured: !!box.closest('[data-or-planner]'),
                measuredHasPredicted: !!document.querySelector(
                    '[data-or-planner] [data-or-predicted], [data-or-planner] .or-predicted-badge'),
                rows: table ? [...table.tBodies[0].rows].map(r => ({
                    badge: r.querySelector('.or-predicted-badge').textContent,
                    memory: r.querySelector('[data-or-predicted=memory]').textContent,
                    tokens: r.querySelector('[data-or-predicted=tokens]').textContent,
                    cost: (r.querySelector('[data-or-predicted=cost]') || {}).textContent})) : []};
    }""")


def test_the_planner_answers_with_predicted_layouts_apart_from_measured_ones(wide) -> None:  # noqa: ANN001
    # The largest count the site predicts at or below the planned one: the model page's own H100 rows.
    wide.goto("models/llama-3.1-70b/")
    static = wide.evaluate("""() => [...document.querySelectorAll(
        'table[data-or-predicted-table="H100"] tr[data-or-predicted-row]')].map(r => ({count: +r.dataset.orCount,
                    memory: r.querySelector('[data-or-predicted=memory]').textContent,
                    tokens: r.querySelector('[data-or-predicted=tokens]').textContent}))""")
    counts = sorted({r["count"] for r in static})
    assert len(counts) >= 2
    count = counts[1]
    wide.goto(PLAN.format(n=count + 1))
    wide.wait_for_selector("[data-or-planner-predicted] table")
    got = _predicted(wide)
    assert got["caption"].startswith(f"PREDICTED, not measured: Llama-3-70B / Llama-3.1-70B on {count} x H100")
    assert f"the nearest count at or below your {count + 1}" in got["caption"]
    assert not got["insideMeasured"] and not got["measuredHasPredicted"]
    assert [r["badge"] for r in got["rows"]] == ["PREDICTED"] * 3
    assert [(r["memory"], r["tokens"]) for r in got["rows"]] == [(s["memory"], s["tokens"]) for s in static
                                                                 if s["count"] == count]
    assert all(r["cost"] and r["cost"].startswith("$") for r in got["rows"])  # at the catalog's H100 price
    # The question sits beside the answer at 1400 px: the form's right edge left of the answer's left edge.
    boxes = wide.evaluate("""() => [document.querySelector('.or-planner__form').getBoundingClientRect().right,
        document.querySelector('.or-planner__answer').getBoundingClientRect().left,
        document.documentElement.scrollWidth, document.documentElement.clientWidth]""")
    assert boxes[0] <= boxes[1] and boxes[2] <= boxes[3], boxes
    # Below the smallest predicted count: says so, no table.
    wide.goto(PLAN.format(n=counts[0] - 1 if counts[0] > 1 else 1))
    wide.wait_for_selector("[data-or-plan-predicted-note]")
    if counts[0] > 1:
        assert "none at or below" in _predicted(wide)["note"]


def test_the_model_family_is_one_question_and_another_is_another_page(wide) -> None:  # noqa: ANN001
    wide.goto(PLAN.format(n=64))
    select = wide.locator("select[data-or-plan-family]")
    assert select.evaluate("s => s.options[s.selectedIndex].textContent") == "Llama-3-70B / Llama-3.1-70B"
    names = select.evaluate("s => [...s.options].map(o => o.textContent)")
    assert "Llama-3.1-70B" not in names and len(names) == len(set(names))
    target = next(n for n in names if n.startswith("Llama-3.1-405B"))
    with wide.expect_navigation():
        select.select_option(label=target)
    assert "/models/llama-3.1-405b/" in wide.url and "plan.gpu=H100" in wide.url and "plan.n=64" in wide.url
    assert wide.locator('select[data-or-plan="gpu"]').input_value() == "H100"


def test_the_planner_and_predicted_sections_fit_a_phone(phone) -> None:  # noqa: ANN001
    for url in (PLAN.format(n=64) + "#plan-a-run", "models/llama-3.1-70b/#layouts-nobody-measured-predicted",
                "gpus/h100/#layouts-nobody-measured-predicted", "models/mixtral-8x7b/"):
        phone.goto(url)
        width = phone.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert width[0] <= width[1], (url, width)
