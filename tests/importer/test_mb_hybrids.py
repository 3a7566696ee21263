"""Nemotron 3 rows of Megatron-Bridge's 067f987d documents: one Super and one Nano row's recipe against a hand count,
and the Mamba-2 term of the Super card by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import figures
from generator.importers.megatron_bridge import SOURCE, build
from generator.registry import load_catalog

ROOT = Path(__file__).resolve().parents[2]
SUMMARY = Path(__file__).resolve().parent / "sources" / "mb-performance-summary-067f987d.md"
COMMIT = "067f987df03b8355b03192d88d70f1709fedf51a"
URL = f"https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/{COMMIT}/docs/performance-summary.md"


@pytest.fixture(scope="module")
def rows():  # noqa: ANN201 - the summary's parsed rows by line
    return {r.line: r for r in SOURCE.read(SUMMARY).rows}


@pytest.fixture(scope="module")
def catalog():  # noqa: ANN201
    return load_catalog(ROOT)


def test_super_mamba_layer_by_hand(catalog) -> None:  # noqa: ANN001
    arch = catalog.models["Nemotron-3-Super-120B-A12B"].architecture
    flops = figures.mamba2_forward_flops(arch.hidden_size, arch.mamba)
    # h 4096, 128 heads x 64 = inner 8192, 8 groups x state 128, kernel 4:
    # in_proj 2 x 4096 x (2 x 8192 + 2 x 8 x 128 + 128) = 2 x 4096 x 18,560 = 152,043,520
    # conv1d 2 x 4 x (8192 + 2048) = 81,920; scan 5 x 8192 x 128 = 5,242,880; out_proj 2 x 8192 x 4096 = 67,108,864
    assert (flops.in_proj, flops.conv1d, flops.scan, flops.out_proj) == (152_043_520, 81_920, 5_242_880, 67_108_864)
    assert flops.forward == 224_477_184


def test_super_row_line_92(rows, catalog) -> None:  # noqa: ANN001
    # | DGX-GB300 | 64 | MXFP8 | 512 | 1 | 8192 | 1 | 1 | 1 | n/a | 64 | 9856 | 831 |
    row = rows[92]
    recipe = build(row, catalog, URL, COMMIT)
    assert recipe["model"] == "Nemotron-3-Super-120B-A12B"
    assert (recipe["gpu"]["type"], recipe["gpu"]["count"], recipe["workload"]["precision"]) == ("GB300", 64, "fp8-mx")
    lay = recipe["layout"]
    assert (lay["tp"], lay["pp"], lay["cp"], lay["ep"], lay["dp"], lay["mtp_layers"]) == (1, 1, 1, 64, 64, 2)
    assert "layout.mtp_layers" in {i["field"] for i in recipe["inferred"]}
    result = recipe["result"]
    # MFU = 6 x 12,770,237,440 x 9856 / 5.0e15 (GB300's dense FP8 peak) = 7.5518e14 / 5e15 = 0.15104 -> 0.1510
    assert result["tokens_per_s_per_gpu"] == 9856 and result["mfu"] == 0.1510
    # The published 831 TFLOP/s is 0.68% from the registry's count, 0.49% from Megatron-Bridge's hybrid count.
    assert result["published_model_tflops_convention"]["hybrid_count"] == figures.MB_HYBRID_COUNT
    assert "published_figures_disagree" not in result


def test_nano_row_line_80_is_a_recorded_discrepancy(rows, catalog) -> None:  # noqa: ANN001
    # | DGX-GB300 | 8 | MXFP8 | 512 | 4 | 8192 | 1 | 1 | 1 | n/a | 8 | 39936 | 901 |
    recipe = build(rows[80], catalog, URL, COMMIT)
    result = recipe["result"]
    assert recipe["layout"]["mtp_layers"] is None
    # MFU = 6 x 3,580,076,352 x 39936 / 5.0e15 = 0.17157 -> 0.1716
    assert result["mfu"] == 0.1716
    # Megatron-Bridge's count gives 889.7 (1.25% under 901), the registry's 826.9: neither within 0.5%.
    assert result["published_figures_disagree"] is True
    assert "no MTP projection): 889.7." in result["published_model_tflops_note"]


def test_lightning_row_line_86_is_nano_with_two_mtp_depths(rows, catalog) -> None:  # noqa: ANN001
    # | DGX-GB200 | 8 | MXFP8 | 512 | 2 | 8192 | 1 | 1 | 1 | n/a | 8 | 28672 | 807 |
    recipe = build(rows[86], catalog, URL, COMMIT)
    assert recipe["model"] == "Nemotron-3.5-Lightning-30B-A3B" and recipe["layout"]["mtp_layers"] == 2
    result = recipe["result"]
    # MFU = 6 x 3,580,076,352 x 28672 / 5.0e15 (GB200's dense FP8 peak) = 6.1589e14 / 5e15 = 0.12318 -> 0.1232
    assert result["mfu"] == 0.1232
    # Megatron-Bridge's count with the MTP layer at two depths gives 807.0, the published 807; without them 638.8.
    arch = catalog.models["Nemotron-3.5-Lightning-30B-A3B"].architecture
    mb = figures.model_tflops_per_gpu(arch, 8192, 28672, mtp_layers=2, hybrid_count=figures.MB_HYBRID_COUNT)
    assert round(mb, 1) == 807.0
    assert result["published_model_tflops_convention"]["hybrid_count"] == figures.MB_HYBRID_COUNT
