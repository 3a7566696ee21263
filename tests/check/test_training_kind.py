"""workload.training: a LoRA run's MFU counts 4N (its frozen base has no weight gradients), an SFT or pre-training
run's 6N. The figure follows the field everywhere (check, importers, card, best-layout table), never the name."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from recipe_edits import edited_registry
from suitehelpers import check_registry

from generator import figures
from generator.registry import load_registry
from generator.site import views
from generator.site.pages import recipe as recipe_page

ROOT = Path(__file__).resolve().parents[2]
LORA = "recipes/llama-3-70b/gb300/mb-26.06-dgx-gb300-8gpu-fp8-cs-lora.yaml"
SFT = "recipes/llama-3-70b/gb300/mb-26.06-dgx-gb300-32gpu-fp8-cs-sft.yaml"


def _registry(tmp_path: Path, rel: str, edits: list[tuple[str, str]]):  # noqa: ANN202
    return load_registry(edited_registry(tmp_path, rel, edits))


def test_lora_mfu_is_4n_over_the_peak_by_hand() -> None:
    # 4 x 70,553,706,496 x 7,481 = 2,111,249,113,186,304 FLOP/s over GB300's FP8 dense peak of 5,000 TFLOP/s
    # = 0.42225 (6N would be 0.63337, the figure this recipe stated before the field existed).
    text = (ROOT / LORA).read_text(encoding="utf-8")
    assert "  training: lora\n" in text and "  mfu: 0.4222\n" in text
    assert round(figures.mfu(70_553_706_496, 7481.0, 5000e12, frozen_base=True), 4) == 0.4222
    assert round(figures.mfu(70_553_706_496, 7481.0, 5000e12), 4) == 0.6334


def test_the_check_follows_the_field_not_the_name(tmp_path: Path) -> None:
    assert check_registry(_registry(tmp_path / "ok", LORA, [])) == []
    # Without the field the run is pre-training: 6N, so the stated 0.4222 is a problem that names the count.
    problems = check_registry(_registry(tmp_path / "no-field", LORA, [("  training: lora\n", "")]))
    assert len(problems) == 1 and problems[0].field == "result.mfu", problems
    assert problems[0].message == "stated 0.4222 but 6 x 70,553,706,496 x 7481.0 / 5e+15 = 0.633375"
    # The same row restated at 6N passes once the field is gone, and fails with it (4N named).
    problems = check_registry(_registry(tmp_path / "six", LORA, [("  mfu: 0.4222\n", "  mfu: 0.6334\n")]))
    assert len(problems) == 1 and problems[0].field == "result.mfu" and "4 x 70,553,706,496" in problems[0].message


def test_sft_counts_like_pre_training_and_an_unknown_kind_is_refused(tmp_path: Path) -> None:
    assert check_registry(_registry(tmp_path / "sft", SFT, [])) == []
    registry = _registry(tmp_path / "bad", SFT, [("  training: sft\n", "  training: qlora\n")])
    assert [(p.field, p.line) for p in registry.problems] == [("workload.training", 23)]


def test_card_and_best_layout_table_say_the_kind(tmp_path: Path) -> None:
    registry = _registry(tmp_path, LORA, [])
    loaded = registry.recipes[0]
    assert views.training_kind(loaded) == "LoRA"
    assert ("Training", views.TRAINING_TEXT["lora"]) in views.workload_rows(loaded)["workload"]
    card = recipe_page.card(loaded, views.recipe_figures(loaded, registry.catalog))
    assert [row["text"] for row in card["rows"] if row["label"] == "MFU"] == [
        "42.2% of the FP8 dense peak (N = 70,553,706,496 active parameters per token; 4N FLOPs a token: LoRA's frozen "
        "base has no weight gradients)"]
    reference = load_registry(ROOT, [ROOT / "recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml"]).recipes[0]
    # The reference (an SFT run) does not state its training kind: shown as not stated, never as pre-training.
    assert reference.recipe.workload.training is None
    assert views.training_kind(reference) == "training kind not stated"
    assert [text for label, text in views.workload_rows(reference)["workload"] if label == "Training"] == [
        "not stated: the recipe does not say whether it pre-trains or fine-tunes, so it is ranked with neither"]


def test_the_csv_export_says_what_the_mfu_is_against(tmp_path: Path) -> None:
    import csv
    import io

    from generator.site import render_site

    registry = _registry(tmp_path, LORA, [])
    shutil.copytree(ROOT / "schema", tmp_path / "schema")  # the site ships the schema among its downloads
    rows = list(csv.DictReader(io.StringIO(render_site(registry)["downloads/recipes.csv"].content)))
    assert [(r["id"], r["precision"], r["training"], r["mfu_peak"]) for r in rows] == [
        ("llama-3-70b/gb300/mb-26.06-dgx-gb300-8gpu-fp8-cs-lora", "fp8-cs", "lora", "fp8")]
    assert float(rows[0]["mfu"]) == pytest.approx(2_111_249_113_186_304 / 5e15, rel=1e-12)  # 4N, by hand above
