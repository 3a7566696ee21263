"""Derived figures (MFU, $ per 1M) are computed from tokens/s as the recipe states it, so that `generator check`,
which recomputes them from the written figure, gets what the runner wrote.

The case is the H200 torchtitan 3B run of 2026-12-04 (benchmarks/results/h200-2026-12-04-frameworks/call2): its
unrounded 22,443.8356 tokens/s gave an MFU of 0.43745053 -> 0.4375, but check recomputes 6 x 3,212,749,824 x
22,443.8 / 9.89e14 = 0.43744984 -> 0.4374, and refused the runner's own write."""

from __future__ import annotations

import gzip
from pathlib import Path

from generator import figures
from generator.load import load_recipe
from generator.registry import load_catalog
from runner.logs import parse_file
from runner.measure import run_figures

ROOT = Path(__file__).resolve().parents[2]
N = 3_212_749_824
PEAK = 9.89e14
UNROUNDED = 22443.83561643836  # 983,040 window tokens over the window's 43.8 s (the evidence's runs[0])
RUN_LOG = ROOT / "benchmarks/results/h200-2026-12-04-frameworks/call2/torchtitan-8k.20261204T191532Z.run1.log.gz"
RECIPE = ROOT / "recipes/llama-3.2-3b/h200/torchtitan-8k.yaml"


def test_stated_rounds_tokens_per_s_as_written() -> None:
    assert figures.stated("tokens_per_s_per_gpu", UNROUNDED) == 22443.8
    assert figures.stated("mfu", 0.43744983518) == 0.4374
    assert figures.stated("gpu_hours", 0.0012) == 0.0012  # two significant digits where 0.00 would say nothing


def test_mfu_from_the_unrounded_rate_disagrees_with_check() -> None:
    # by hand: 6 x 3,212,749,824 = 19,276,498,944 FLOPs a token; x 22,443.8 = 4.32636e14; / 9.89e14 = 0.437450 - 5e-8
    from_written = figures.mfu(N, 22443.8, PEAK)
    assert 0.43744980 < from_written < 0.43744990
    from_unrounded = figures.mfu(N, UNROUNDED, PEAK)
    assert round(from_unrounded, 4) == 0.4375 and round(from_written, 4) == 0.4374
    assert not figures.agrees(0.4375, from_written, "mfu")  # what check refused
    assert figures.agrees(0.4374, from_written, "mfu")


def test_run_figures_derive_from_the_stated_rate(tmp_path: Path) -> None:
    log = tmp_path / RUN_LOG.name.removesuffix(".gz")
    log.write_bytes(gzip.decompress(RUN_LOG.read_bytes()))
    recipe = load_recipe(RECIPE).recipe
    catalog = load_catalog(ROOT)
    run = run_figures(recipe, catalog, parse_file(log, None))
    assert abs(run.tokens_per_s_per_gpu - UNROUNDED) < 1e-6  # the rate itself stays unrounded (median, gate)
    assert run.mfu == figures.mfu(N, 22443.8, PEAK)
    assert round(run.mfu, 4) == 0.4374
    instance = catalog.instances[recipe.gpu.instance]
    assert run.usd_per_million_tokens == figures.usd_per_million_tokens(instance.usd_per_hour, instance.gpu_count,
                                                                        22443.8)
    # and the committed recipe, written by `remeasure --from-log` from this log, states what check recomputes
    assert recipe.result.tokens_per_s_per_gpu == 22443.8 and recipe.result.mfu == 0.4374
