"""The figures module on the reference recipe's own numbers."""

import pytest
from suitehelpers import ROOT

from generator import figures
from generator.registry import load_catalog


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
    cat = load_catalog(ROOT)
    gemma = cat.models["Gemma-4-31B"].architecture
    assert figures.param_count(gemma, include_norms=False) == 30_696_013_824
    assert figures.param_count(cat.models["Llama-3.2-1B"].architecture, include_norms=True) == 1_235_814_400
    assert figures.param_count(cat.models["Llama-3.2-3B"].architecture, include_norms=True) == 3_212_749_824


def test_derive_reference() -> None:
    from suitehelpers import REFERENCE

    from generator.load import load_recipe

    cat = load_catalog(ROOT)
    d = figures.derive(load_recipe(REFERENCE).recipe, cat)
    assert d.usd_per_million_tokens == pytest.approx(1.6222, abs=5e-5)
    assert d.mfu == pytest.approx(0.21939, abs=5e-6)
    assert d.window_tokens == 15_728_640


# --- required precision of stated figures ----------------------------------------------------------------


def test_written_decimals_reads_the_text_not_the_float() -> None:
    assert figures.written_decimals("0.2190") == 4  # the float 0.219 has lost the zero
    assert figures.written_decimals("2.0") == 1 and figures.written_decimals("12") == 0
    assert figures.written_decimals("1.5e-3") == 4 and figures.written_decimals("2.5E+1") == 0
    assert figures.written_decimals(".5") == 1
    assert figures.written_decimals("0:20") is None and figures.written_decimals(".inf") is None


def test_required_decimals_of_each_figure() -> None:
    p = figures.PRECISIONS
    assert p["tokens_per_s_per_gpu"].required_decimals(1178.1) == 1
    assert p["mfu"].required_decimals(0.2194) == 4
    assert p["step_time_cv_percent"].required_decimals(2.19) == 2 and p["gpu_hours"].required_decimals(5.69) == 2
    usd = p["usd_per_million_tokens"]
    assert usd.required_decimals(1.62) == 2 and usd.required_decimals(12.5) == 2  # cents at least
    assert usd.required_decimals(0.0230) == 3 and usd.required_decimals(0.0012) == 4  # 2 significant figures
    assert usd.required_decimals(0.09, 0.0093) == 4  # the more demanding of stated and recomputed


@pytest.mark.parametrize(("figure", "written", "stated", "computed", "required"), [
    ("mfu", "0.0", 0.0, 0.21939, 4), ("mfu", "0.2", 0.2, 0.21939, 4), ("usd_per_million_tokens", "2.0", 2.0, 1.6222, 2),
    ("step_time_cv_percent", "2.0", 2.0, 2.22, 2), ("gpu_hours", "5.0", 5.0, 4.83, 2),
    ("usd_per_million_tokens", "0.02", 0.02, 0.02301, 3), ("tokens_per_s_per_gpu", "1178", 1178.0, None, 1),
])
def test_the_issues_loopholes_are_coarser_than_required(figure: str, written: str, stated: float,
                                                       computed: float | None, required: int) -> None:
    assert figures.coarser_than_required(figure, written, stated, computed) == required


@pytest.mark.parametrize(("figure", "written", "stated"), [
    ("mfu", "0.2190", 0.219), ("usd_per_million_tokens", "1.62", 1.62), ("usd_per_million_tokens", "0.023", 0.023),
    ("step_time_cv_percent", "12.80", 12.8), ("gpu_hours", "0.0099", 0.0099), ("tokens_per_s_per_gpu", "29925.0", 29925.0),
])
def test_figures_written_at_their_precision_pass(figure: str, written: str, stated: float) -> None:
    assert figures.coarser_than_required(figure, written, stated) is None


def test_agreement_at_the_required_precision() -> None:
    # The old rule took the tolerance from the stated value (0.2 +/- 0.05 covers 0.2194); the figure's does not.
    assert figures.agrees(0.2, 0.21939) and not figures.agrees(0.2, 0.21939, "mfu")
    assert not figures.agrees(2.0, 2.22, "step_time_cv_percent") and not figures.agrees(5.0, 4.83, "gpu_hours")
    assert figures.agrees(0.219, 0.21904, "mfu", places=4)  # '0.2190' written with its zero: 0.21904 rounds to it
    assert not figures.agrees(0.219, 0.21939, "mfu", places=4)
    assert figures.agrees(0.2194, 0.21939, "mfu") and figures.agrees(1178.1, 1178.0739, "tokens_per_s_per_gpu")
    # Stated finer than required, it must hold at the precision it claims.
    assert not figures.agrees(0.21950, 0.21939, "mfu", places=5)


def test_window_gpu_hours_is_the_window_on_every_gpu() -> None:
    # The reference: 15,728,640 tokens at 1178.1 tokens/s/GPU on 8 GPUs take 1,668.9 s, 3.71 GPU-hours.
    assert figures.window_gpu_hours(15_728_640, 1178.1, 8) == pytest.approx(8 * 15_728_640 / (1178.1 * 8) / 3600)
    assert figures.window_gpu_hours(15_728_640, 1178.1, 8) == pytest.approx(3.7086, abs=5e-5)


def test_ceiling_share_is_6n_rate_over_the_measured_ceiling() -> None:
    """The reference recipe on the H100: MFU 0.2194 of the 989 TFLOP/s datasheet peak is 0.2194 x 989 / 777.8 =
    0.2790 of the bf16 matrix-product rate measured on the card (benchmarks/matmul_ceiling.py, 2026-12-06)."""
    from pathlib import Path

    from generator import figures
    from generator.load import load_recipe
    from generator.registry import load_catalog

    root = Path(__file__).resolve().parents[1]
    catalog = load_catalog(root)
    recipe = load_recipe(root / "recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml").recipe
    share, ceiling, key = figures.ceiling_share(recipe, catalog)
    assert key == "bf16" and ceiling == 777.8e12
    assert abs(share - 0.2194 * 989 / 777.8) < 5e-4
    h200 = load_recipe(root / "recipes/llama-3.2-1b/h200/engine-sdpa-4k.yaml").recipe
    assert figures.ceiling_share(h200, catalog) is None  # no ceiling measured on the H200 here
