"""The figures module on the reference recipe's own numbers."""

import pytest
from conftest import ROOT

from generator import figures
from generator.catalog import Catalog


def test_usd_per_million_reference() -> None:
    value = figures.usd_per_million_tokens(55.04, 8, 1178.1)
    assert value == pytest.approx(1.6222, abs=5e-5)
    assert figures.agrees(1.62, value)
    assert not figures.agrees(1.70, value)


def test_mfu_reference() -> None:
    value = figures.mfu(30_696_013_824, 1178.1, 989e12)
    assert value == pytest.approx(0.21939, abs=5e-6)
    assert figures.agrees(0.2194, value)
    assert not figures.agrees(0.2184, value)


def test_window_tokens_reference() -> None:
    assert figures.window_tokens([5, 19], 128, 8192) == 15 * 128 * 8192 == 15_728_640


def test_tokens_per_s_uses_only_the_window() -> None:
    times = [100.0] * 5 + [2.0] * 15  # warm-up steps are slow and must not count
    tps = figures.tokens_per_s_per_gpu(times, [5, 19], 128, 8192, 8)
    assert tps == pytest.approx(15 * 128 * 8192 / 30.0 / 8)
    with pytest.raises(ValueError, match="only 20 steps"):
        figures.tokens_per_s_per_gpu(times, [5, 20], 128, 8192, 8)


def test_cv_and_median() -> None:
    assert figures.cv_percent([1.0, 1.0, 1.0]) == 0.0
    assert figures.cv_percent([9.0, 11.0]) == pytest.approx(14.142135, rel=1e-6)
    assert figures.median_index([3.0, 1.0, 2.0]) == 2
    assert figures.median_index([4.0, 1.0, 2.0, 3.0]) == 2


def test_param_counts_from_architecture() -> None:
    cat = Catalog.load(ROOT)
    gemma = cat.models["Gemma-4-31B"].architecture
    assert figures.param_count(gemma, include_norms=False) == 30_696_013_824
    assert figures.param_count(cat.models["Llama-3.2-1B"].architecture, include_norms=True) == 1_235_814_400
    assert figures.param_count(cat.models["Llama-3.2-3B"].architecture, include_norms=True) == 3_212_749_824


def test_derive_reference() -> None:
    from conftest import REFERENCE

    from generator.load import load_recipe

    cat = Catalog.load(ROOT)
    d = figures.derive(load_recipe(REFERENCE).recipe, cat)
    assert d.usd_per_million_tokens == pytest.approx(1.6222, abs=5e-5)
    assert d.mfu == pytest.approx(0.21939, abs=5e-6)
    assert d.window_tokens == 15_728_640
