"""The Ultra-Scale Playbook sweep (generator/importers/playbook.py): every entry of the committed figure is accounted
for (a recipe, a failed layout or a merged repeat, skipped with its line, column and reason), which runs worked is
read from the circles' markers (held cell by cell to the recipes' stated MFU and tok/s), the published MFU is
reproduced by the playbook's count or flagged as a discrepancy, and the committed recipes are what the importer
writes."""

from __future__ import annotations

import hashlib
import random
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path

import pytest

from generator import figures
from generator.catalog import Catalog
from generator.importers import playbook as pb
from generator.importers.base import Document, build_recipe, copy_read, render
from generator.registry import load_catalog

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "tests/importer/sources/playbook-benchmarks_interactive-924e4d0b.html"
SOURCE_MD = DOC.with_name(DOC.name + ".source.md")
HOVER_START = '"\\u003cb\\u003eConfiguration:'


@lru_cache(maxsize=1)
def text() -> str:
    return DOC.read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def sweep() -> pb.Sweep:
    return pb.read_sweep(text())


@lru_cache(maxsize=1)
def catalog() -> Catalog:
    return load_catalog(ROOT)


def test_the_committed_document_is_the_blob_at_its_commit() -> None:
    digest = hashlib.sha256(DOC.read_bytes()).hexdigest()
    assert digest in SOURCE_MD.read_text(encoding="utf-8")
    assert pb.COMMIT in SOURCE_MD.read_text(encoding="utf-8") and pb.PATH in SOURCE_MD.read_text(encoding="utf-8")


@pytest.mark.slow
def test_every_hover_text_of_the_document_is_a_row_or_a_repeat_of_one() -> None:
    """Counted independently of the parser: every hover text written in the file starts with the same bytes; the
    crosses' traces repeat their cell's text array, so each text is written twice except in cells without crosses
    and in the 80B cells that are all crosses."""
    line2 = text().splitlines()[1]
    written = [m.start() + 1 for m in re.finditer(re.escape(HOVER_START), line2)]
    rows = sweep().rows + sweep().merged
    assert len(rows) == sweep().entries == 3306
    assert len(written) == 6468
    columns = [row.column for row in rows]
    assert len(set(columns)) == len(columns)
    assert set(columns) <= set(written)
    assert all(row.line == 2 for row in rows)
    # The texts not taken as rows are exactly the repeated traces' copies, each equal to a row's text.
    repeats = sorted(set(written) - set(columns))
    assert len(repeats) == len(written) - len(rows)
    assert sweep().cells == 28
    assert len(sweep().repeated_traces) == 26


@pytest.mark.slow
def test_parse_accounts_for_every_row_as_a_recipe_or_a_failed_layout() -> None:
    """1,721 recipes (1,728 circles, 7 of them a configuration that worked earlier in its cell too), 1,536 failed
    layouts (1,506 without figures, 30 with figures no circle is drawn with) and 49 repeats merged: 3,306 entries."""
    parsed = pb.SOURCE.parse(text())
    assert parsed.table_rows == 3306
    assert len(parsed.rows) == 1721
    assert len(parsed.skips) == 1585
    located = {(r.line, r.column) for r in parsed.rows}
    skipped = {(s.line, int(re.match(r"column (\d+): ", s.reason).group(1))) for s in parsed.skips}
    assert not located & skipped
    assert located | skipped == {(r.line, r.column) for r in sweep().rows + sweep().merged}
    reasons = Counter((s.reason.split(" (")[0].split(": ", 1)[1], "no figures (nan)" in s.reason) for s in parsed.skips)
    assert reasons == {("failed layout", True): 1506, ("failed layout", False): 30, ("repeat", True): 42,
                       ("repeat", False): 7}
    assert parsed.skips[0].line == 2
    assert parsed.skips[0].reason == ("column 15500: failed layout (1B, 8 GPUs, DP4 TP1 PP2 ZeRO-1, MBS 64, GradAcc 1): "
                                      "drawn as a cross, the figure's 'crashed/oom', with no figures (nan)")
    repeat = next(s for s in parsed.skips if "repeat" in s.reason)
    assert repeat.reason == ("column 25856: repeat (1B, 8 GPUs, DP2 TP4 PP1 ZeRO-0, MBS 16, GradAcc 8; with no "
                             "figures (nan), not a circle): the same configuration as column 8312 of this cell, "
                             "merged into its recipe")


@pytest.mark.slow
def test_the_rows_as_written() -> None:
    first = sweep().rows[0]
    assert first.config == pb.Config(model="1B", nodes=1, mbs=2, grad_acc=16, gbs=256, dp=8, pp=1, tp=1, zero=0)
    assert first.figures == pb.Figures(mfu_percent=39.2, tokens_per_s_per_gpu=40150, tokens_per_s=321200,
                                       memory_gb=50.2)
    per_model = Counter((r.config.model, r.outcome) for r in sweep().rows)
    assert per_model == {("1B", "measured"): 531, ("1B", "crashed"): 267, ("3B", "measured"): 581,
                         ("3B", "crashed"): 251, ("8B", "measured"): 481, ("8B", "crashed"): 352,
                         ("80B", "measured"): 128, ("80B", "crashed"): 666}
    assert all(r.config.gpus == r.config.dp * r.config.tp * r.config.pp for r in sweep().rows)
    assert len({(r.cell, r.config) for r in sweep().rows}) == len(sweep().rows)


def test_the_playbooks_flop_count_by_hand() -> None:
    """1B (16 layers, h 2048, FFN 8192, 32 heads, vocabulary 131072), s 4096: per layer 8h^2 + 4hs + 6hf forward
    FLOPs per token, logits 2hV; x3 for forward and backward: 9,663,676,416; at 40,150 tok/s on 989 TFLOP/s 39.23%."""
    arch = catalog().models["Playbook-Llama-1B"].architecture
    h, s, f, v = 2048, 4096, 8192, 131072
    expected = 3 * (16 * (8 * h * h + 4 * h * s + 6 * h * f) + 2 * h * v)
    assert figures.nanotron_model_flops_per_token(arch, s, 1) == expected == 9_663_676_416
    assert round(figures.flops_utilisation(expected, 40150, 989e12), 4) == 0.3923


@pytest.mark.slow
def test_published_mfu_reproduced_or_flagged() -> None:
    """The playbook's MFU counts nanotron's FLOPs with the logits once per vocabulary matrix: 1,573 of the 1,721 rows
    agree at the stated 0.1 point from their tok/s per GPU, 19 more from their total tok/s; 118 more are within one
    unit of the stated figure's last decimal (gaps up to 0.09 point: rounding, not a discrepancy); 10 80B rows agree
    only with 8 key-value heads and 1 row (a 3.2-point gap) with nothing found: those 11 are flagged DISCREPANCY."""
    peak = catalog().gpus["H100"].peak_flops.bf16
    measured = [r for r in sweep().rows if r.outcome == pb.MEASURED]
    verdicts = {id(r): pb.mfu_verdict(r, catalog().models[r.model].architecture, peak) for r in measured}
    assert Counter((r.config.model, verdicts[id(r)]) for r in measured) == {
        ("1B", "count"): 493, ("1B", "rounding"): 38, ("3B", "count"): 511, ("3B", "total"): 4,
        ("3B", "rounding"): 66, ("8B", "count"): 462, ("8B", "total"): 6, ("8B", "rounding"): 13,
        ("80B", "count"): 107, ("80B", "gqa"): 10, ("80B", "total"): 9, ("80B", "rounding"): 1,
        ("80B", "unexplained"): 1}
    for row in measured:
        note = pb.mfu_note(row, catalog().models[row.model].architecture, peak)
        assert note.startswith("DISCREPANCY") == (verdicts[id(row)] in ("gqa", "unexplained"))
        if verdicts[id(row)] == "rounding":
            gap = pb.rounding_gap(row, catalog().models[row.model].architecture, peak)
            assert gap is not None and gap <= 0.1 and "Rounding, not a discrepancy" in note


def _committed() -> set[str]:
    return {str(p.relative_to(ROOT)) for p in ROOT.glob("recipes/playbook-llama-*/h100/pb-*.yaml")}


@pytest.mark.slow
def test_committed_recipes_are_the_measured_rows() -> None:
    cat = catalog()
    targets = {str(pb.SOURCE.target(ROOT, cat, r).relative_to(ROOT)) for r in pb.SOURCE.parse(text()).rows}
    assert len(targets) == 1721
    assert _committed() == targets


@pytest.mark.slow
@pytest.mark.parametrize("seed", [18])
def test_reimport_is_byte_identical_on_a_sample(seed: int) -> None:
    cat = catalog()
    document = copy_read(pb.ORIGINAL, DOC)
    rows = random.Random(seed).sample(pb.SOURCE.parse(text()).rows, 60)
    for row in rows:
        path = pb.SOURCE.target(ROOT, cat, row)
        built = render(build_recipe(pb.SOURCE, row, cat, document, [], []), pb.SOURCE.header)
        assert path.read_text(encoding="utf-8") == built, path


def test_a_figure_that_is_not_the_sweep_is_refused() -> None:
    with pytest.raises(pb.DocumentError, match="not a Plotly figure"):
        pb.read_sweep("<div>no figure</div>\n")
    first = text().splitlines()[1][sweep().rows[0].column - 1:].split('",', 1)[0]
    # Both copies of the entry (the circles' and the crosses' text arrays) change, so the cell stays one cell.
    broken = text().replace(first, first.replace("GradAcc: 16", "GradAcc: x"))
    with pytest.raises(pb.DocumentError, match=r"line 2, column \d+: GradAcc 'x' is not a whole number"):
        pb.read_sweep(broken)


@pytest.mark.slow
def test_each_recipe_names_the_column_where_its_row_starts() -> None:
    """publication.line and .column locate the row's hover text in the document (line 2 holds all of them)."""
    cat = catalog()
    line2 = text().splitlines()[1]
    for row in random.Random(7).sample(pb.SOURCE.parse(text()).rows, 40):
        recipe = pb.SOURCE.build(row, cat, pb.ORIGINAL, [], [])
        pub = recipe["publication"]
        assert (pub["line"], pub["column"]) == (2, row.column)
        hover = line2[pub["column"] - 1:].split('",', 1)[0]
        c = row.config
        assert f"DP: {c.dp}\\u003cbr\\u003ePP: {c.pp}\\u003cbr\\u003eTP: {c.tp}" in hover


def test_cited_at_its_original_home_with_the_copy_read_named() -> None:
    """publication.url is the playbook's Space at revision 67f1072 (Leandro von Werra's "yet-another-fix (#9)",
    2025-02-15, the file's last change in the copy of the Space's history, shivam-raval96/idyll-js: `git show
    67f1072:assets/data/benchmarks/benchmarks_interactive.html | sha256sum` gives 22bcd7a4...); read_from names the
    GitHub copy at its commit, whose bytes are the committed document's (the SHA-256 in the .source.md)."""
    recipe = pb.SOURCE.build(sweep().rows[0], catalog(), pb.ORIGINAL, [], [])
    pub = recipe["publication"]
    assert pub["url"] == ("https://huggingface.co/spaces/nanotron/ultrascale-playbook/blob/"
                          "67f1072bdf476f9d05ef5bb66358c1027ae7163e/" + pb.PATH)
    assert pub["commit"] == "67f1072bdf476f9d05ef5bb66358c1027ae7163e" and "/blob/main/" not in pub["url"]
    assert pub["read_from"]["url"] == f"https://github.com/{pb.REPOSITORY}/blob/{pb.COMMIT}/{pb.PATH}"
    assert pb.MIRROR_SHA256 in pub["read_from"]["note"]
    assert hashlib.sha256(DOC.read_bytes()).hexdigest() == pb.MIRROR_SHA256
    # Read from the copy itself, nothing names a second copy.
    assert "read_from" not in pb.SOURCE.build(sweep().rows[0], catalog(), Document.github(
        pb.REPOSITORY, pb.COMMIT, pb.PATH), [], [])["publication"]
