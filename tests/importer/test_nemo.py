"""NeMo 24.07's performance summary (generator/importers/nemo.py): every data row of the committed document is a
recipe or a skip with its line and reason, the figures are the row's, the published Model TFLOP/s is reproduced under
the publication's own count (no causal halving) or recorded as not reproduced, and the committed recipes are
exactly what the importer writes."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

import pytest

from generator import figures
from generator.importers import nemo
from generator.importers.base import Document, build_recipe, copy_read, render
from generator.registry import load_catalog

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "tests/importer/sources/nemo-performance-summary-8e3d65dc.md"
DOCUMENT = Document.github(nemo.REPOSITORY, nemo.COMMIT, nemo.PATH)


@lru_cache(maxsize=1)
def parsed():  # noqa: ANN201
    return nemo.SOURCE.parse(DOC.read_text(encoding="utf-8"))


def test_the_committed_document_is_the_blob_at_its_commit() -> None:
    source = DOC.with_name(DOC.name + ".source.md").read_text(encoding="utf-8")
    assert hashlib.sha256(DOC.read_bytes()).hexdigest() in source and nemo.COMMIT in source


def test_every_row_is_a_recipe_or_a_located_skip() -> None:
    p = parsed()
    assert p.table_rows == 18
    assert [r.line for r in p.rows] == [18, 19, 20, 24, 25, 37, 38, 39, 40, 41, 42]
    assert [s.line for s in p.skips] == [14, 15, 16, 17, 21, 22, 23]
    lines = DOC.read_text(encoding="utf-8").splitlines()
    for skip in p.skips:
        model = lines[skip.line - 1].split("|")[1].strip()
        assert skip.reason.startswith(f"model {model} has no catalog card"), skip
    assert {r.line for r in p.rows} | {s.line for s in p.skips} == {
        i + 1 for i, text in enumerate(lines) if text.startswith("| ") and not text.startswith(("| Model", "| -"))}


def test_a_row_as_written_and_by_hand() -> None:
    """Line 24: LLAMA3-8B, 8 GPUs, GBS 128, MBS 1, 8,192 tokens, TP1 PP1 CP2 VP1, 12,273 tok/s, 711 TFLOP/s.
    DP = 8 / (1 x 1 x 2) = 4; GA = 128 / (1 x 4) = 32. Megatron's count without causal halving: 51,470,401,536 +
    the attention over every key 6,442,450,944 = 57,912,852,480 FLOPs a token x 12,273 = 710.76 TFLOP/s (711).
    MFU 6N over H100's FP8 1,979 TFLOP/s: 6 x 8,030,261,248 x 12,273 / 1.979e15 = 0.2988."""
    row = next(r for r in parsed().rows if r.line == 24)
    assert (row.model, row.gpus, row.gbs, row.mbs, row.seq, row.tp, row.pp, row.cp, row.vp, row.tokens, row.tflops) == (
        "Llama-3-8B", 8, 128, 1, 8192, 1, 1, 2, 1, 12273.0, 711.0)
    assert (row.dp, row.gradient_accumulation, row.precision, row.training) == (4, 32, "fp8", "pre-training")
    cat = load_catalog(ROOT)
    arch = cat.models["Llama-3-8B"].architecture
    assert figures.model_flops_per_token(arch, 8192, causal=False) == 57_912_852_480
    recipe = nemo.SOURCE.build(row, cat, DOCUMENT, [], [])
    assert float(recipe["result"]["mfu"]) == 0.2988
    assert recipe["result"]["published_model_tflops_convention"]["causal_attention"] is False
    assert "710.8 under that count" in recipe["result"]["published_model_tflops_note"]


def test_finetuning_rows_say_what_the_table_does_not() -> None:
    """The finetuning table has no CP or VP column (recorded as 1, listed as inferred); its packed sequences make
    the publication's attention count unrecoverable: recorded as not reproduced, with the reason."""
    cat = load_catalog(ROOT)
    for row in (r for r in parsed().rows if r.section == "finetuning"):
        recipe = nemo.SOURCE.build(row, cat, DOCUMENT, [], [])
        fields = {i["field"] for i in recipe["inferred"]}
        assert {"layout.cp", "layout.vpp"} <= fields
        assert recipe["workload"]["training"] == {"SFT": "sft", "LoRA": "lora"}[row.task]
        assert recipe["result"]["published_figures_disagree"] is True
        assert "packed sequences" in recipe["result"]["published_model_tflops_note"]


@pytest.mark.parametrize("line", [18, 19, 20, 24, 25, 37, 38, 39, 40, 41, 42])
def test_committed_recipes_are_the_import(line: int) -> None:
    cat = load_catalog(ROOT)
    row = next(r for r in parsed().rows if r.line == line)
    path = nemo.SOURCE.target(ROOT, cat, row)
    built = build_recipe(nemo.SOURCE, row, cat, copy_read(DOCUMENT, DOC), [], [])
    assert path.read_text(encoding="utf-8") == render(built, nemo.SOURCE.header)


def test_a_malformed_figure_is_skipped_at_its_line() -> None:
    text = DOC.read_text(encoding="utf-8").replace("| 12273 ", "| 12k ")
    p = nemo.SOURCE.parse(text)
    assert any(s.line == 24 and s.reason == "tokens '12k' is not a positive whole number" for s in p.skips)
    assert len(p.rows) == 10
