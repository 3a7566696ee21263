"""The methodology page states every required precision as figures.PRECISIONS defines it (the page is written by
hand, so this keeps the two from drifting)."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import figures

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_methodology_page_states_each_precision(committed_pages) -> None:  # noqa: ANN001
    page = committed_pages["methodology.md"].content
    rows = {line.split(" | ")[0].removeprefix("| "): line for line in page.splitlines() if line.startswith("| ")}
    for spec in figures.PRECISIONS.values():
        row = rows[spec.label]
        assert f"{10 ** -spec.decimals:g} ({spec.decimals} decimal place" in row or \
            f"never fewer than {spec.decimals} decimal places" in row, row
        if spec.significant:
            assert f"{spec.significant} significant figures" in row, row
    assert f"within {figures.PUBLISHED_TFLOPS_TOLERANCE:.1%}" in rows["Published Model TFLOP/s per GPU"]
    assert f"at least {figures.CONVERGENCE_MIN_CORRELATION}" in page
    assert f"at most {figures.CONVERGENCE_MAX_FAILING_FRACTION:.0%}" in page
    assert f"step-time CV above {figures.NOISY_STEP_TIME_CV_PERCENT:g}%" in page
