"""The methodology page states the numbers generator/figures.py owns (precisions, tolerances, the change gate) from
figures.py itself: rendered alone from the reference recipe's registry, it says what check does, and a changed
figure constant changes the page (no whole-site build needed)."""

from __future__ import annotations

import pytest
from suitehelpers import REFERENCE, ROOT

from generator import figures
from generator.registry import load_registry
from generator.site import render
from generator.site.pages import methodology as methodology_page


def methodology() -> str:
    registry = load_registry(ROOT, [REFERENCE])
    return methodology_page.page(render.environment(), registry).content


def test_the_page_states_figures_numbers() -> None:
    page = methodology()
    # By hand from figures.py: tokens/s to 1 decimal, $/1M to 2 significant figures and at least 2 decimals, MFU to
    # 4, CV and GPU-hours to 2; published TFLOP/s within 0.005 = 0.5%; the gate max(5%, 3 x CV) capped at 10%;
    # noisy above a CV of 5%; convergence correlation 0.95 and 10% failing points; LoRA 6 x 2/3 = 4N.
    for row in ("| tokens/s per GPU | 0.1 (1 decimal place) |",
                "| $ per 1M tokens | 2 significant figures, never fewer than 2 decimal places (1.62; 0.023) |",
                "| MFU | 0.0001 (4 decimal places) |",
                "| step-time CV | 0.01 (2 decimal places) |",
                "| GPU-hours | 0.01 (2 decimal places) |",
                "| Published Model TFLOP/s per GPU | within 0.5% of"):
        assert row in page
    assert "the larger of 5% and 3 x the recorded step-time CV, capped at 10%" in page
    assert "whose step-time CV is above 5% is flagged as noisy" in page
    assert "at least 0.95; at most 10% of the compared steps" in page
    # the convergence check's other three: pointwise 10% / 5% / 2% by the reference's loss, final loss 3%, outliers 3 sigma
    assert "loss: 10% above 2, 5% above 0.5, 2% otherwise)" in page
    assert "the final losses differ by at most 3% of the reference's" in page
    assert "further than 3 standard deviations from their" in page
    assert "counts 4N, two thirds of 6N" in page


def test_a_changed_figure_changes_the_page(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(figures, "CHANGE_TOLERANCE_MAX_PERCENT", 12.0)
    monkeypatch.setattr(figures, "PUBLISHED_TFLOPS_TOLERANCE", 0.01)
    monkeypatch.setitem(figures.PRECISIONS, "mfu", figures.StatedPrecision("MFU", 5))
    page = methodology()
    assert "capped at 12%" in page and "capped at 10%" not in page
    # (not a bare "0.5%": the advisor's validation table states errors such as 20.5%)
    assert "agree within 1% with Megatron's count" in page and "within 0.5%" not in page and "held to 0.5%" not in page
    assert "| MFU | 0.00001 (5 decimal places) |" in page
