"""NeMo's performance summaries after 24.07 (generator/importers/nemo.py, the rendered-page form): releases 25.02,
25.04 and 25.07 as far as their stored copies reach (tests/importer/data/nemo-docs-pages.md says why no repository
holds them and what the copies are). Every table row of each copy is a recipe or a skip with its line and reason;
one row per release is checked against a hand computation; the committed recipes are exactly the import."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from generator import figures
from generator.importers import nemo
from generator.importers.base import Document, Parsed, run_source
from generator.registry import load_catalog

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests/importer/data"
# Each release's own (versioned) page, the URL its recipes cite; the copies read are nemo.STORED_PAGES.
PAGES = "https://docs.nvidia.com/nemo-framework/user-guide"
NO_CARD = "has no catalog card"
CUT = "the stored copy of the page ends inside this row"
SECOND = "second configuration: only its figures are in parentheses"


@dataclass(frozen=True)
class Release:
    url: str
    table_rows: int
    rows: tuple[int, ...]  # the line of each recipe (a row of two configurations appears twice)
    skips: tuple[tuple[int, str], ...]  # (line, how the reason starts), in the parser's order


RELEASES = {
    "25.02": Release(f"{PAGES}/25.02/performance/performance_summary.html", 8, (45, 58, 71, 110), (
        (32, f"model GPT3-175B {NO_CARD}"), (84, f"model Nemotron-15B {NO_CARD}"),
        (97, f"model Nemotron-340B {NO_CARD}"), (123, f"model Mixtral-8x22B {NO_CARD}"))),
    "25.04": Release(f"{PAGES}/25.04/performance/performance_summary.html", 6, (50, 64, 78), (
        (36, f"model GPT3-175B {NO_CARD}"), (92, f"model Nemotron-15B {NO_CARD}"), (106, CUT))),
    "25.07": Release(f"{PAGES}/25.07/performance/performance-summary.html", 5, (36, 50, 50, 64, 64), (
        (36, SECOND), (78, SECOND), (78, f"model LLAMA4-Scout-LLM {NO_CARD}"), (92, CUT))),
}


def copy(release: str) -> Path:
    return DATA / f"nemo-docs-{release}.txt"


@cache
def parsed(release: str) -> Parsed:
    return nemo.SOURCE.parse(copy(release).read_text(encoding="utf-8"))


def row_starts(text: str) -> set[int]:
    """Lines that start a table row, found without the parser: after a "---|" separator, each line whose cell
    names a model (it starts with a letter), up to the first line that is no cell; the copy's last line counts
    too when it is a model name cut short."""
    lines = text.splitlines()
    out: set[int] = set()
    inside = False
    for number, line in enumerate(lines, start=1):
        if line.startswith("---|"):
            inside = True
            continue
        if inside and not line.rstrip().endswith("|"):
            inside = False
            if number == len(lines) and line[:1].isalpha():
                out.add(number)
        if inside and line[:1].isalpha():
            out.add(number)
    return out


def record(release: str, line: int, variant: str | None = None) -> dict:
    row = next(r for r in parsed(release).rows if r.line == line and r.variant == variant)
    catalog = load_catalog(ROOT)
    return nemo.SOURCE.build(row, catalog, Document(RELEASES[release].url, None), [], [])


def test_the_copies_are_the_documented_ones() -> None:
    """Each copy's SHA-256 and length are the ones tests/importer/data/nemo-docs-pages.md states."""
    note = (DATA / "nemo-docs-pages.md").read_text(encoding="utf-8")
    for release in RELEASES:
        body = copy(release).read_bytes()
        assert f"| {len(body)} | {hashlib.sha256(body).hexdigest()} |" in note, release


@pytest.mark.parametrize("release", sorted(RELEASES))
def test_every_row_is_a_recipe_or_a_located_skip(release: str) -> None:
    want = RELEASES[release]
    got = parsed(release)
    assert got.table_rows == want.table_rows
    assert tuple(r.line for r in got.rows) == want.rows
    assert len(got.skips) == len(want.skips)
    for skip, (line, start) in zip(got.skips, want.skips, strict=True):
        assert (skip.line, skip.reason[:len(start)]) == (line, start), skip
        assert "\n" not in skip.reason
    text = copy(release).read_text(encoding="utf-8")
    assert {r.line for r in got.rows} | {s.line for s in got.skips} == row_starts(text)
    assert all(r.container == release for r in got.rows)


def test_a_2502_row_by_hand() -> None:
    """25.02, line 45: LLAMA3-8B on 8 DGX-B200 GPUs, GBS 128, MBS 2, 8,192 tokens, TP1 PP1 CP1 VP1 EP1 GA8, 26,006
    tok/s, 1,506 TFLOP/s, "at FP8 precision" (no scaling recipe named: fp8). DP = 8 / 1 = 8; GA = 128 / (2 x 8) = 8
    (the table's 8). MFU 6N over B200's FP8 4,500 TFLOP/s: 6 x 8,030,261,248 x 26,006 / 4.5e15 = 0.278447 -> 0.2784.
    $ per 1M: AWS p6-b200.48xlarge $113.9328/h over 8 GPUs = $14.2416 a GPU-hour over 26,006 x 3,600 = 93,621,600
    tokens -> $0.152119 -> 0.1521. Model TFLOP/s with every query against every key: 57,912,852,480 FLOPs a token x
    26,006 = 1,506.08 (the table's 1,506)."""
    recipe = record("25.02", 45)
    assert recipe["result"]["tokens_per_s_per_gpu"] == 26006.0
    assert (recipe["workload"]["precision"], recipe["gpu"]["type"], recipe["gpu"]["per_node"]) == ("fp8", "B200", 8)
    layout = recipe["layout"]
    assert (layout["dp"], layout["gradient_accumulation"], layout["fsdp"]) == (8, 8, False)
    assert float(recipe["result"]["mfu"]) == 0.2784
    assert float(recipe["result"]["usd_per_million_tokens"]) == 0.1521
    assert "1506.1 under that count" in recipe["result"]["published_model_tflops_note"]
    assert {"field": "layout.fsdp", "reason": "the 25.02 table has no FSDP column: recorded as off"} in (
        recipe["inferred"])


def test_a_2504_row_by_hand() -> None:
    """25.04, line 64: LLAMA3-70B on 64 DGX-GB200 GPUs, GBS 128, MBS 1, 8,192 tokens, FSDP 1, TP1 PP1 CP1 VP1 EP1
    GA2, 4,035 tok/s, 1,943 TFLOP/s, per-tensor FP8 with current-step scaling (fp8-cs). DP = 64; GA = 128 / 64 = 2.
    MFU 6N over GB200's FP8 5,000 TFLOP/s: 6 x 70,553,706,496 x 4,035 / 5e15 = 0.341621 -> 0.3416. $ per 1M:
    CoreWeave gb200-4x $42/h over 4 GPUs = $10.50 a GPU-hour over 4,035 x 3,600 = 14,526,000 tokens -> $0.722842
    -> 0.7228. Four GPUs a node (a GB200 tray), 16 nodes."""
    recipe = record("25.04", 64)
    assert recipe["result"]["tokens_per_s_per_gpu"] == 4035.0
    assert (recipe["workload"]["precision"], recipe["gpu"]["type"], recipe["gpu"]["per_node"]) == (
        "fp8-cs", "GB200", 4)
    layout = recipe["layout"]
    assert (layout["dp"], layout["gradient_accumulation"], layout["fsdp"], layout["label"]) == (
        64, 2, True, "TP1 PP1 CP1 DP64 FSDP")
    assert float(recipe["result"]["mfu"]) == 0.3416
    assert float(recipe["result"]["usd_per_million_tokens"]) == 0.7228
    assert recipe["result"].get("published_figures_disagree") is not True


def test_a_2507_row_by_hand() -> None:
    """25.07, line 64: LLAMA3.1-405B on 128 DGX-GB200 GPUs, GBS 64, MBS 1, 8,192 tokens; cells "1 (0)", "2 (4)",
    "1 (8)", "1 (2)", "1 (8)", GA "1 (32)", "706 (638)", "1854 (1675)". The second configuration: FSDP 0, TP4 PP8 CP2
    VP8, DP = 128 / 64 = 2, GA = 64 / 2 = 32 (the table's 32), 638 tok/s. MFU 6N over 5,000 TFLOP/s:
    6 x 405,853,388,800 x 638 / 5e15 = 0.310721 -> 0.3107. $ per 1M: $10.50 / (638 x 3,600 = 2,296,800) x 1e6 =
    $4.571578 -> 4.5716. 126 layers over PP x VP = 64 virtual stages do not divide: the placement is NeMo's own."""
    recipe = record("25.07", 64, "tp4-pp8-cp2-vp8")
    assert recipe["result"]["tokens_per_s_per_gpu"] == 638.0
    layout = recipe["layout"]
    assert (layout["tp"], layout["pp"], layout["cp"], layout["vpp"], layout["dp"], layout["fsdp"]) == (
        4, 8, 2, 8, 2, False)
    assert layout["gradient_accumulation"] == 32
    assert float(recipe["result"]["mfu"]) == 0.3107
    assert float(recipe["result"]["usd_per_million_tokens"]) == 4.5716
    assert layout["pipeline_layout"].startswith("not stated by the publication: 126 layers")
    first = record("25.07", 64, "tp2-pp1-cp1-vp1-fsdp")
    assert (first["result"]["tokens_per_s_per_gpu"], first["layout"]["fsdp"], first["layout"]["dp"]) == (
        706.0, True, 64)


def test_the_405b_name_and_its_count() -> None:
    """25.02 and 25.04 name the model LLAMA3-405B: the card is Llama 3.1 405B's, and the notes say why. Their
    Model TFLOP/s is 1.0% above that card's count (625 tok/s: 1,640.9 against the stated 1,658), while 25.07's
    LLAMA3.1-405B agrees within 0.02%: the earlier rows are recorded as not reproduced, not bent to fit."""
    early = record("25.02", 71)
    assert early["model"] == "Llama-3.1-405B" and "LLAMA3-405B" in early["notes"]
    assert early["result"]["published_figures_disagree"] is True
    assert "1.0% from the nearer" in early["result"]["published_model_tflops_note"]
    late = record("25.07", 64, "tp2-pp1-cp1-vp1-fsdp")
    arch = load_catalog(ROOT).models["Llama-3.1-405B"].architecture
    full = figures.model_tflops_per_gpu(arch, 8192, 706.0, causal=False)
    assert figures.relative_difference(1854.0, full) < 0.0005
    assert late["result"].get("published_figures_disagree") is not True


def test_the_mixtral_card_and_its_row_by_hand() -> None:
    """Mixtral-8x7B's card (mistralai/Mixtral-8x7B-v0.1 config.json: 32 layers, hidden 4,096, 32 query and 8 KV
    heads of 128, 8 experts of FFN 14,336 gated, top-2, vocabulary 32,000, untied). A layer: attention
    2 x 4,096 x 4,096 + 2 x 4,096 x 1,024 = 41,943,040; one expert 3 x 4,096 x 14,336 = 176,160,768; router
    4,096 x 8 = 32,768; two norms 8,192. Active (2 experts): 32 x 394,305,536 + 2 x 32,000 x 4,096 + 4,096 =
    12,879,925,248 (Mistral AI states 12.9B); total (8): 32 x 1,451,270,144 + 262,148,096 = 46,702,792,704 (46.7B).
    25.02, line 110: 64 DGX-B200, GBS 256, MBS 2, 4,096 tokens, TP1 PP1 CP1 VP1 EP8 GA2: DP 64, GA 256 / 128 = 2;
    15,457 tok/s. MFU 6N over 4,500 TFLOP/s: 6 x 12,879,925,248 x 15,457 / 4.5e15 = 0.265447 -> 0.2654; $ per 1M:
    $14.2416 / (15,457 x 3,600) x 1e6 = $0.255936 -> 0.2559; the stated 1,282 TFLOP/s is 1,281.8 under the count
    with every query against every key and the gated experts."""
    card = load_catalog(ROOT).models["Mixtral-8x7B"]
    assert figures.param_count(card.architecture, True) == card.active_params.count == 12_879_925_248
    assert figures.param_count(card.architecture, True, total=True) == card.total_params == 46_702_792_704
    recipe = record("25.02", 110)
    layout = recipe["layout"]
    assert (layout["ep"], layout["dp"], layout["gradient_accumulation"], layout["label"]) == (
        8, 64, 2, "TP1 PP1 CP1 EP8 DP64")
    assert float(recipe["result"]["mfu"]) == 0.2654
    assert float(recipe["result"]["usd_per_million_tokens"]) == 0.2559
    assert "1281.8 under that count" in recipe["result"]["published_model_tflops_note"]


@pytest.mark.parametrize("release", sorted(RELEASES))
def test_committed_recipes_are_the_import(release: str) -> None:
    """A dry-run import of the copy into the repository finds every recipe already written, byte for byte."""
    got, report, problems = run_source(nemo.SOURCE, ROOT, copy(release), Document(RELEASES[release].url, None),
                                       dry_run=True)
    assert problems == [] and report is not None and got is not None
    assert report.created == [] and report.updated == []
    assert len(report.unchanged) == len(RELEASES[release].rows)
    for path in report.unchanged:
        assert path.name.startswith(f"nemo-{release}-pretrain-")


@pytest.mark.parametrize("release", sorted(RELEASES))
def test_cited_at_the_release_page_with_the_copy_read_and_its_sha256(release: str) -> None:
    """A row cites its release's versioned page ("/user-guide/25.07/", never "latest") and names the stored copy read
    (the page's "latest" address) with the SHA-256 of the committed copy's bytes."""
    recipe = record(release, RELEASES[release].rows[0])
    pub = recipe["publication"]
    assert f"/user-guide/{release}/" in pub["url"] and "/latest/" not in pub["url"]
    copy_read = pub["read_from"]
    assert "/user-guide/latest/" in copy_read["url"]
    assert copy_read["sha256"] == hashlib.sha256(copy(release).read_bytes()).hexdigest()


def test_a_bracketed_second_run_marks_its_precision_inferred() -> None:
    """25.07, line 50 (LLAMA3-70B, 64 GPUs): '1 (0)' FSDP, '1 (2)' TP, '1 (4)' PP, '1 (2)' CP, '1 (5)' VP; 4066 (2605)
    tokens/s. The section states FP8 with current scaling once, above the table; the run in parentheses states no
    precision of its own, so its recipe records the section's (fp8-cs) and lists workload.precision as inferred. The
    first configuration, the one the section's sentence describes as written, does not."""
    second = record("25.07", 50, "tp2-pp4-cp2-vp5")
    first = record("25.07", 50, "tp1-pp1-cp1-vp1-fsdp")
    assert second["workload"]["precision"] == first["workload"]["precision"] == "fp8-cs"
    marked = [i for i in second["inferred"] if i["field"] == "workload.precision"]
    assert len(marked) == 1 and "parentheses" in marked[0]["reason"]
    assert not [i for i in first["inferred"] if i["field"] == "workload.precision"]
