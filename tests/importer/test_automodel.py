"""NeMo AutoModel's performance summary (commit 36044ad3): all 16 rows accounted for (13 recipes, 3 skips with their
lines and reasons), every published figure recomputed (tokens/s from the step time, Model TFLOP/s from the
architecture, MFU from the catalog peak), the LoRA convention, and the committed recipes equal to the import."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from generator import figures
from generator.importers import run_import
from generator.importers.automodel import SOURCE, recomputed_tokens
from generator.importers.base import Document
from generator.registry import load_catalog, load_registry

ROOT = Path(__file__).resolve().parents[2]
DOC = Path(__file__).resolve().parent / "sources" / "automodel-performance-summary-36044ad3.mdx"
COMMIT = "36044ad3d139363fb6c73c24af2e7c6b65ec52f6"
URL = f"https://github.com/NVIDIA-NeMo/Automodel/blob/{COMMIT}/docs/performance-summary.mdx"
SOURCE_DOCUMENT = Document(URL, COMMIT)
SKIPS = {16: "hybrid Mamba-2", 17: "hybrid Mamba-2", 18: "hybrid Mamba-2"}
# Rows whose published Model TFLOP/s needs a stated convention: LoRA (frozen base) and GPT-OSS (AutoModel's count
# of 2025-10-02 took the head dimension as hidden size / heads = 45). No discrepancy remains.
CONVENTIONS = {"gpt-oss-120b/h100/automodel-pretrain-h100-64gpu-bf16-gbs512": (False, 45),
               "gpt-oss-20b/h100/automodel-pretrain-h100-8gpu-bf16-gbs256": (False, 45)}


def _data_lines() -> list[int]:
    lines = DOC.read_text(encoding="utf-8").splitlines()
    return [i + 1 for i, line in enumerate(lines) if line.startswith("| ") and not line.startswith("| Model")]


def test_every_row_is_a_recipe_or_a_skip_with_its_line() -> None:
    parsed = SOURCE.read(DOC)
    assert parsed.table_rows == len(_data_lines()) == 16
    assert sorted([r.line for r in parsed.rows] + [s.line for s in parsed.skips]) == _data_lines()
    assert {s.line: s.reason for s in parsed.skips}.keys() == SKIPS.keys()
    for skip in parsed.skips:
        assert SKIPS[skip.line] in skip.reason


def test_published_tokens_agree_with_the_step_time() -> None:
    for row in SOURCE.read(DOC).rows:
        assert figures.relative_difference(row.tokens, recomputed_tokens(row)) < 0.001, row.line


@pytest.mark.slow
def test_committed_recipes_are_the_import_and_recompute(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "catalog", tmp_path / "catalog")
    (tmp_path / "recipes").mkdir()
    parsed, report, problems = run_import(tmp_path, DOC, URL, COMMIT, dry_run=False, source="automodel")
    assert problems == [] and len(report.created) == 13
    imported = {str(p.relative_to(tmp_path)): p.read_bytes() for p in (tmp_path / "recipes").rglob("*.yaml")}
    files = sorted((ROOT / "recipes").rglob("automodel-*.yaml"))
    committed = {str(p.relative_to(ROOT)): p.read_bytes() for p in files}
    assert imported == committed
    registry = load_registry(ROOT, files)  # the committed automodel recipes (every file named so), not all 2,781
    assert not registry.problems, registry.problems
    catalog = load_catalog(ROOT)
    mine = [r for r in registry.recipes if r.id.split("/")[-1].startswith("automodel-")]
    assert len(mine) == 13
    for loaded in mine:
        r = loaded.recipe
        arch = catalog.models[r.model].architecture
        conv = r.result.published_model_tflops_convention
        expected = CONVENTIONS.get(loaded.id, (True, None) if "-lora-" in loaded.id else None)
        assert (None if conv is None else (conv.frozen_base, conv.attention_head_dim)) == expected, loaded.id
        ours = figures.model_tflops_per_gpu(arch, r.workload.row_tokens, r.result.tokens_per_s_per_gpu,
                                            mtp_layers=r.layout.mtp_layers, frozen_base=bool(conv and conv.frozen_base),
                                            head_dim=conv.attention_head_dim if conv else None)
        diff = figures.relative_difference(r.result.published_model_tflops_per_gpu, ours)
        assert not r.result.published_figures_disagree and diff <= figures.PUBLISHED_TFLOPS_TOLERANCE, loaded.id
        # The registry's MFU (6 N per token, N from the card; 4 N for the LoRA section's rows: a frozen base) at the
        # BF16 peak, at its 4 decimals.
        lora = "-lora-" in loaded.id
        assert r.workload.training.value == ("lora" if lora else "pre-training"), loaded.id
        peak = catalog.gpus["H100"].peak_flops.bf16
        n = catalog.models[r.model].active_params.count
        per_token = (4 if lora else 6) * n
        assert r.result.mfu == pytest.approx(per_token * r.result.tokens_per_s_per_gpu / peak, abs=5e-5)
        assert (r.publication.url, r.publication.commit) == (URL, COMMIT)
        line = DOC.read_text(encoding="utf-8").splitlines()[r.publication.line - 1]
        assert re.search(rf"\| {r.gpu.count} \| {r.workload.global_batch} \|", line), loaded.id


# (active, total) in billions as the publishers state them, embeddings included (GPT-OSS-20B: OpenAI's 3.61B active
# leave out the 0.58B input embedding; Qwen2.5's stated 7.61B / 32.8B include both embedding matrices).
STATED = {"GPT-OSS-20B": (3.61 + 0.58, 20.91), "Qwen2.5-7B": (7.61, 7.61), "Qwen2.5-32B": (32.76, 32.76)}


@pytest.mark.parametrize("name", sorted(STATED))
def test_new_cards_count_their_parameters(name: str) -> None:
    card = load_catalog(ROOT).models[name]
    active = figures.param_count(card.architecture, card.active_params.includes_norms)
    total = figures.param_count(card.architecture, card.active_params.includes_norms, total=True)
    assert active == card.active_params.count and total == (card.total_params or active)
    assert (active / 1e9, total / 1e9) == pytest.approx(STATED[name], abs=0.02)


def test_check_holds_the_head_dimension_convention(tmp_path: Path) -> None:
    """The stated head dimension is what reproduces the figure: the model's own (64) does not."""
    from suitehelpers import check_registry

    shutil.copytree(ROOT / "catalog", tmp_path / "catalog")
    name = "recipes/gpt-oss-120b/h100/automodel-pretrain-h100-64gpu-bf16-gbs512.yaml"
    (tmp_path / name).parent.mkdir(parents=True)
    text = (ROOT / name).read_text(encoding="utf-8")
    assert "    attention_head_dim: 45\n" in text
    (tmp_path / name).write_text(text.replace("    attention_head_dim: 45\n", "    attention_head_dim: 64\n"))
    problems = check_registry(load_registry(tmp_path))
    assert [p.field for p in problems] == ["result.published_model_tflops_convention"]
    assert "head dimension 64" in problems[0].message


def test_converted_gradient_accumulation_is_marked_inferred() -> None:
    """Three rows state GA in local batches of LBS 8 rows, not in micro-batches of MBS 1 (lines 19-21, read by hand):
    DeepSeek V3 on 1024 GPUs, GBS 8192, PP 4: DP 256, GA 4 -> 8192 / (1 x 256) = 32; on 256 GPUs, GBS 512, PP 4: DP 64,
    GA 1 -> 8; Kimi K2 on 256 GPUs, GBS 512, PP 8: DP 32, GA 2 -> 16. Each recipe records the micro-batch count and
    lists layout.gradient_accumulation as inferred; the rows whose GA needs no conversion list nothing of it."""
    catalog = load_catalog(ROOT)
    converted = {}
    for row in SOURCE.read(DOC).rows:
        recipe = SOURCE.build(row, catalog, SOURCE_DOCUMENT, [], [])
        marks = [i["reason"] for i in recipe["inferred"] if i["field"] == "layout.gradient_accumulation"]
        assert bool(marks) == (row.ga != recipe["layout"]["gradient_accumulation"]), row.line
        if marks:
            converted[row.line] = (row.ga, recipe["layout"]["gradient_accumulation"])
            assert f"GA {row.ga} counts local batches of {row.lbs} rows" in marks[0]
    assert converted == {19: (4, 32), 20: (1, 8), 21: (2, 16)}
