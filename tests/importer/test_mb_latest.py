"""Megatron-Bridge's documents at commit 067f987d (26.02.01-26.08): every table row is a committed recipe citing its
line, or a skip with its line and reason; footnotes, fine-tuning sections, repeated keys and the new Kimi-K2 card;
the recorded-discrepancy flag as check holds it."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from suitehelpers import check_registry

from generator import figures
from generator.importers.megatron_bridge import SOURCE
from generator.registry import load_catalog, load_registry
from generator.site.pages import recipe as recipe_page

ROOT = Path(__file__).resolve().parents[2]
SOURCES = Path(__file__).resolve().parent / "sources"
COMMIT = "067f987df03b8355b03192d88d70f1709fedf51a"
SUMMARY = SOURCES / "mb-performance-summary-067f987d.md"
ARCHIVE = SOURCES / "mb-performance-summary-archive-067f987d.md"
URL = f"https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/{COMMIT}/docs/"

# Skips by reason: (document, lines). Nemotron 3 Ultra (hybrid Mamba, no sourced config) and
# DeepSeek-V4 Flash have no catalog card; the 25.09 rows' half-stated or impossible second configurations. Nemotron 3
# Nano, Super and 3.5 Lightning (lines 80, 86, 92-95 and the archive's 45 rows) are imported.
HYBRID = "hybrid Mamba-2 / attention / MoE"
EXPECTED_SKIPS = {
    (SUMMARY, "DeepSeekV4 Flash"): [52, 53],
    (SUMMARY, HYBRID): [101, 102],
    (ARCHIVE, "EP 64 does not divide"): [610],
    (ARCHIVE, "only Model TFLOP/s has a parenthesised figure"): [631],
}


@pytest.fixture(scope="module")
def registry(committed):  # noqa: ANN001, ANN201 - the committed registry, loaded once per test process
    return committed


def _table_lines(path: Path) -> list[tuple[int, str]]:
    """(line, release) of every body row of every table under a release heading, scanned without the importer."""
    out = []
    release = None
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        if m := re.match(r"^## (\d+\.\d+(?:\.\d+)?) NeMo Container$", lines[i]):
            release = m.group(1)
        if lines[i].startswith("|") and i + 1 < len(lines) and re.match(r"^\|[-|: ]+\|$", lines[i + 1]):
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                assert release is not None
                out.append((i + 1, release))
                i += 1
            continue
        i += 1
    return out


@pytest.mark.parametrize("path, table_rows, rows, skips", [(SUMMARY, 18, 14, 4), (ARCHIVE, 260, 273, 2)])
def test_every_row_is_parsed_or_skipped_with_its_line(path: Path, table_rows: int, rows: int, skips: int) -> None:
    parsed = SOURCE.read(path)
    lines = _table_lines(path)
    assert parsed.table_rows == len(lines) == table_rows
    assert (len(parsed.rows), len(parsed.skips)) == (rows, skips)
    accounted = {r.line for r in parsed.rows} | {s.line for s in parsed.skips}
    assert accounted == {line for line, _ in lines}
    for (doc, reason), expected in EXPECTED_SKIPS.items():
        if doc == path:
            assert [s.line for s in parsed.skips if reason in s.reason] == expected, reason
    assert all(any(r in s.reason for (d, r) in EXPECTED_SKIPS if d == path) for s in parsed.skips)


@pytest.mark.slow
@pytest.mark.parametrize("path", [SUMMARY, ARCHIVE])
def test_every_parsed_row_is_a_committed_recipe_citing_its_line(path: Path, registry) -> None:  # noqa: ANN001
    url = URL + path.name.replace("mb-", "").replace("-067f987d", "")
    cited: dict[tuple[int, float], str] = {}
    for loaded in registry.recipes:
        pub = loaded.recipe.publication
        if pub is not None and pub.url == url:
            assert pub.commit == COMMIT
            cited[(pub.line, loaded.recipe.result.tokens_per_s_per_gpu)] = loaded.id
    parsed = SOURCE.read(path)
    expected = {(r.line, r.tokens) for r in parsed.rows}
    assert set(cited) == expected


def test_footnotes_sections_and_repeated_keys_reach_the_recipes(registry) -> None:  # noqa: ANN001
    by_id = {r.id: r.recipe for r in registry.recipes}
    gpt = by_id["gpt-oss-120b/gb300/mb-26.06.01-dgx-gb300-64gpu-fp8-mx"]
    assert (gpt.result.published_model_tflops_per_gpu, gpt.publication.line) == (661, 57)
    assert "[^gpt-oss-note]: Performance regression in GPT-OSS 120B pre-training is a [known issue]" in gpt.notes
    assert "has no FSDP column" in gpt.notes
    sft = by_id["llama-3-70b/h100/mb-26.06-dgx-h100-32gpu-fp8-cs-sft"]
    assert "A fine-tuning row (SFT Performance)" in sft.notes
    small = by_id["deepseek-v3/gb300/mb-26.06-dgx-gb300-256gpu-fp8-mx-gbs4096"]
    large = by_id["deepseek-v3/gb300/mb-26.06-dgx-gb300-256gpu-fp8-mx-gbs15360"]
    assert (small.workload.global_batch, small.publication.line, large.workload.global_batch,
            large.publication.line) == (4096, 112, 15360, 113)
    kimi = by_id["kimi-k2/gb300/mb-26.06-dgx-gb300-256gpu-fp8-mx"]
    assert "Muon optimizer" in kimi.notes and "Kimi-K2 recipe" in kimi.layout.pipeline_layout
    assert "mtp" not in kimi.layout.pipeline_layout


def test_kimi_k2_card_counts_its_parameters() -> None:
    card = load_catalog(ROOT).models["Kimi-K2"]
    active = figures.param_count(card.architecture, card.active_params.includes_norms)
    total = figures.param_count(card.architecture, card.active_params.includes_norms, total=True)
    assert (active, total) == (card.active_params.count, card.total_params)
    assert active / 1e9 == pytest.approx(32.9, abs=0.1) and total / 1e12 == pytest.approx(1.03, abs=0.01)


def _flag_problems(tmp_path: Path, recipe_id: str, edit: str) -> list[str]:
    """check's problems on the one recipe after appending/replacing text in a copy of the registry."""
    shutil.copytree(ROOT / "catalog", tmp_path / "catalog")
    source = ROOT / "recipes" / f"{recipe_id}.yaml"
    target = tmp_path / "recipes" / f"{recipe_id}.yaml"
    target.parent.mkdir(parents=True)
    old, new = edit.split(" -> ")
    text = source.read_text(encoding="utf-8")
    assert old in text
    target.write_text(text.replace(old, new, 1), encoding="utf-8")
    return [f"{p.field}: {p.message}" for p in check_registry(load_registry(tmp_path))]


def test_check_rejects_a_discrepancy_flag_on_agreeing_figures(tmp_path: Path) -> None:
    problems = _flag_problems(tmp_path, "llama-3-70b/h100/mb-26.06-dgx-h100-32gpu-fp8-cs-sft",
                              "  published_model_tflops_per_gpu: 710.0\n -> "
                              "  published_model_tflops_per_gpu: 710.0\n  published_figures_disagree: true\n")
    assert len(problems) == 1 and "result.published_figures_disagree" in problems[0] and "remove the flag" in \
        problems[0]


def test_check_requires_the_note_of_a_discrepancy(tmp_path: Path) -> None:
    recipe = "llama-3-70b/h100/mb-26.06-dgx-h100-8gpu-fp8-cs-lora"
    text = (ROOT / "recipes" / f"{recipe}.yaml").read_text(encoding="utf-8")
    note = re.search(r"  published_model_tflops_note: '.*?'\n(?=  published_figures_disagree)", text, re.S)
    assert note is not None
    problems = _flag_problems(tmp_path, recipe, f"{note.group(0)} -> ")
    assert len(problems) == 1 and "needs result.published_model_tflops_note" in problems[0]


def test_the_recipe_page_shows_a_recorded_discrepancy_recomputed(registry) -> None:  # noqa: ANN001
    from generator.site import views

    loaded = next(x for x in registry.recipes if x.id == "llama-3-70b/h100/mb-26.06-dgx-h100-8gpu-fp8-cs-lora")
    rows = dict(recipe_page.result_rows(loaded, views.recipe_figures(loaded, registry.catalog), registry.catalog))
    assert "published 735, its 2,643 tokens/s give 1144.7 by the registry's count (55.75% apart)" in rows["Discrepancy"]
    assert rows["Published model TFLOP/s note"].startswith("A discrepancy in the publication, not explained")
