"""The llm-foundry importer: every row of the committed document accounted for, every published figure recomputed,
the committed recipes reproduced byte for byte, and the check holding the published Model TFLOP to its convention."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml
from suitehelpers import check_registry

from generator import figures
from generator.catalog import Catalog
from generator.importers.base import Document, run_source
from generator.importers.llm_foundry import SOURCE, parse, recompute
from generator.registry import load_catalog, load_registry

ROOT = Path(__file__).resolve().parents[2]
DOCUMENT = ROOT / "tests/importer/sources/foundry-benchmarking-readme-8c8dd48f.md"
COMMIT = "8c8dd48f72168c5d51e2f7b151595892a8fba43d"
SOURCE_DOC = Document.github("mosaicml/llm-foundry", COMMIT, "scripts/train/benchmarking/README.md")
FP8_LINES = set(range(154, 161))  # the "H100 80GB FP8" table: amp_fp8 has no registry precision
# Rows whose Model TFLOP is not int() of their throughput's figure, each with its found explanation.
EXPLAINED_TFLOP = {246, 257}


def _data_lines(text: str) -> set[int]:
    """Table body lines, counted without the importer: a '|' line after a header and separator."""
    lines = text.splitlines()
    body: set[int] = set()
    in_table = False
    for n, line in enumerate(lines, 1):
        if not line.startswith("|"):
            in_table = False
        elif re.match(r"^\|\s*---", line):
            in_table = True
        elif in_table:
            body.add(n)
    return body


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(ROOT)


@pytest.fixture
def tmp_root(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "catalog", tmp_path / "catalog")
    (tmp_path / "recipes").mkdir()
    return tmp_path


@pytest.fixture(scope="module")
def _imported_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("foundry-imported")
    shutil.copytree(ROOT / "catalog", root / "catalog")
    (root / "recipes").mkdir()
    run_source(SOURCE, root, DOCUMENT, SOURCE_DOC, dry_run=False)
    return root


@pytest.fixture
def imported(_imported_once: Path, tmp_path: Path) -> Path:
    """A registry of the catalog and the document's import, a copy of its own (the import runs once per module)."""
    return Path(shutil.copytree(_imported_once, tmp_path / "imported"))


def test_every_row_is_imported_or_skipped_with_its_line() -> None:
    text = DOCUMENT.read_text(encoding="utf-8")
    parsed = SOURCE.parse(text)
    data = _data_lines(text)
    assert len(data) == 216 == parsed.table_rows
    imported = {r.line for r in parsed.rows}
    skipped = {s.line for s in parsed.skips}
    assert imported | skipped == data and not imported & skipped
    assert skipped == FP8_LINES
    assert all("amp_fp8" in s.reason and "no registry precision" in s.reason for s in parsed.skips)


def test_every_published_figure_is_recomputed(catalog: Catalog) -> None:
    """NumParams, the throughputs, the global batch in tokens, GradAccum, Model TFLOP, MFU and HFU of every row
    follow from its inputs as collect_results.py computes them; the two that do not carry their explanation."""
    parsed = SOURCE.parse(DOCUMENT.read_text(encoding="utf-8"))
    unexplained, explained = [], set()
    for row in parsed.rows:
        card = catalog.models[row.model]
        for check in recompute(row, card.architecture, card.active_params.count):
            if check.agrees:
                continue
            if check.figure == "Model TFLOP" and check.explanation:
                explained.add(row.line)
            else:
                unexplained.append((row.line, check.figure, check.recomputed))
    assert unexplained == []
    assert explained == EXPLAINED_TFLOP


def test_published_params_follow_from_the_card(catalog: Catalog) -> None:
    """The card's N plus the learned positions and LayerNorms is the run's n_params (so the card's architecture is
    the benchmark's): 125m at 2048 by hand, embeddings and positions 768 x (50368 + 2048), per block 12 x 768^2
    weights, 9 x 768 biases (QKV 3, output 1, up 4, down 1) and two LayerNorms' 4 x 768, and the final LayerNorm."""
    d, layers = 768, 12
    by_hand = d * (50368 + 2048) + layers * (12 * d * d + 9 * d + 4 * d) + 2 * d
    row = next(r for r in SOURCE.parse(DOCUMENT.read_text(encoding="utf-8")).rows if r.size == "125m" and r.seq == 2048)
    assert row.params == by_hand
    card = catalog.models["MPT-125M"]
    assert card.active_params.count == figures.param_count(card.architecture, card.active_params.includes_norms)


@pytest.mark.slow
def test_import_reproduces_the_committed_recipes(tmp_root: Path) -> None:
    parsed, report, problems = run_source(SOURCE, tmp_root, DOCUMENT, SOURCE_DOC, dry_run=False)
    assert problems == [] and parsed is not None and report is not None
    written = sorted(p.relative_to(tmp_root) for p in report.created)
    committed = sorted(p.relative_to(ROOT) for p in (ROOT / "recipes").glob("mpt-*/*/foundry-*.yaml"))
    assert written == committed and len(written) == len(parsed.rows) == 209
    for rel in written:
        assert (tmp_root / rel).read_bytes() == (ROOT / rel).read_bytes(), rel
    again = run_source(SOURCE, tmp_root, DOCUMENT, SOURCE_DOC, dry_run=False)[1]
    assert again is not None and len(again.unchanged) == 209 and not again.created and not again.updated
    assert check_registry(load_registry(tmp_root)) == []


def test_recipe_carries_provenance_and_the_convention() -> None:
    recipe = yaml.safe_load((ROOT / "recipes/mpt-70b/h100/foundry-bf16-s2048-512gpu-gbs4096.yaml").read_text())
    assert recipe["publication"]["url"] == SOURCE_DOC.url and recipe["publication"]["commit"] == COMMIT
    assert recipe["publication"]["line"] == 75
    assert recipe["result"]["published_model_tflops_per_gpu"] == 408.0
    assert recipe["result"]["published_model_tflops_convention"]["six_n_params"] == 64862437376
    assert recipe["result"]["tokens_per_s_per_gpu"] == round(515636 / 512, 1)
    assert "MFU 41.25" in recipe["notes"] and "HFU 55" in recipe["notes"]


def _check_one(tmp_root: Path, rel: str, edit: tuple[str, str]) -> list[str]:
    path = tmp_root / rel
    text = path.read_text()
    assert edit[0] in text
    path.write_text(text.replace(edit[0], edit[1], 1))
    return [str(p) for p in check_registry(load_registry(tmp_root)) if rel in p.path]


@pytest.mark.slow
def test_check_holds_the_published_figure_to_the_convention(imported: Path) -> None:
    rel = "recipes/mpt-70b/h100/foundry-bf16-s2048-512gpu-gbs4096.yaml"
    problems = _check_one(imported, rel, ("published_model_tflops_per_gpu: 408.0", "published_model_tflops_per_gpu: 418.0"))
    assert len(problems) == 1 and "published_model_tflops_convention" in problems[0]


@pytest.mark.slow
def test_check_without_the_convention_flags_the_count(imported: Path) -> None:
    """Megatron's count (causal attention, matrices only) does not reproduce llm-foundry's figure: the convention is
    what makes it agree, not a tolerance."""
    rel = "recipes/mpt-7b/h100/foundry-bf16-s65536-8gpu-gbs16.yaml"
    problems = _check_one(imported, rel, ("    six_n_params: 6918905856\n", ""))
    assert len(problems) == 1 and "from the published 282" in problems[0]


def test_truncated_figure_is_judged_on_its_interval() -> None:
    assert figures.truncated_relative_difference(153, 153.7) == 0.0
    assert figures.truncated_relative_difference(153, 152.99) == pytest.approx(0.01 / 153)
    assert figures.truncated_relative_difference(153, 155.0) == pytest.approx(1.0 / 153)


@pytest.mark.parametrize(("cell", "reason"), [
    ("| 7b | 2048 | 8 | v100_32gb |", "unknown GPU"),
    ("| 7b | 2048 | 8 | a100_40gb |", None),
    ("| 7b | 2O48 | 8 | a100_40gb |", "seq '2O48' is not a whole number"),
    ("| 7b | 2048 | 12 | a100_40gb |", "12 GPUs is not whole 8-GPU nodes"),
])
def test_bad_cells_are_skipped_with_a_reason(cell: str, reason: str | None) -> None:
    text = DOCUMENT.read_text(encoding="utf-8").splitlines()
    header, sep = text[229], text[230]
    row = cell + (" 50.92 | 67.89 | 158 | 12 | 4 | 384 | 14 | 29436 | 3679 | 786432 | bf16 | PURE | FULL_SHARD | True | "
                  "False | 6658859008 |")
    parsed = parse(f"## A100\n{header}\n{sep}\n{row}\n")
    assert parsed.table_rows == 1
    if reason is None:
        assert [r.line for r in parsed.rows] == [4] and parsed.skips == []
    else:
        assert parsed.rows == [] and [s.line for s in parsed.skips] == [4] and reason in parsed.skips[0].reason
