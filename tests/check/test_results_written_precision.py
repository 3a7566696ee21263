"""What the runner writes (runner/yaml_edit.py render) meets check's required precision for every figure and value
range, and reads back agreeing with the value it was rendered from."""

from __future__ import annotations

import pytest

from generator import figures
from runner.yaml_edit import render

VALUES = [0.000221, 0.0009323, 0.0099, 0.02301, 0.05376, 0.09323, 0.2194, 1.6222, 2.2204, 12.8005, 1178.0739,
          54796.1712, 123456.789]


@pytest.mark.parametrize("figure", sorted(figures.PRECISIONS))
@pytest.mark.parametrize("value", VALUES)
def test_the_runner_writes_at_the_required_precision(figure: str, value: float) -> None:
    if figure == "mfu" and value > 1:
        pytest.skip("MFU is a fraction")
    text = render(figure, value)
    stated = float(text)
    assert figures.coarser_than_required(figure, text, stated, value) is None, text
    assert figures.agrees(stated, value, figure, figures.written_decimals(text)), text
