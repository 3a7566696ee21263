"""The torchtitan importer: every row of the three benchmarks/ documents accounted for, the published Async TP
speedups recomputed, the unstated pipeline settings as torchtitan's code sets them, and the committed recipes
reproduced byte for byte."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml
from suitehelpers import check_registry

from generator import figures
from generator.importers.base import Document, run_source
from generator.importers.torchtitan_benchmarks import SOURCE, parse
from generator.registry import load_catalog, load_registry

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ROOT / "tests/importer/sources"
COMMIT = "b5bcd76c66d0acb1a08b176d9639425bc55e0b2a"
DOCS = {
    "llama3_h100_202412_torchtitan": {"rows": 18, "skips": {75: "versions table", 76: "versions table",
                                                           77: "versions table"}},
    "asyncTP_llama3_h100_2025-06_torchtitan": {"rows": 8, "skips": {26: "float8 rowwise", 34: "float8 rowwise",
                                                                    42: "versions table", 43: "versions table",
                                                                    44: "versions table"}},
    "llama3-8b_h200_202506_trainy-whitefiber": {"rows": 2, "skips": {54: "versions table", 55: "versions table",
                                                                     56: "versions table"}},
}


def _file(name: str) -> Path:
    return SOURCES / f"titan-{name}-b5bcd76c.md"


def _document(name: str) -> Document:
    return Document.github("pytorch/torchtitan", COMMIT, f"benchmarks/{name}.md")


def _data_lines(text: str) -> set[int]:
    """Table body lines, counted without the importer: '|' lines after a separator line."""
    body: set[int] = set()
    in_table = False
    for n, line in enumerate(text.splitlines(), 1):
        if not line.startswith("|"):
            in_table = False
        elif re.match(r"^\|\s*:?-", line):
            in_table = True
        elif in_table:
            body.add(n)
    return body


@pytest.mark.parametrize("name", sorted(DOCS))
def test_every_row_is_imported_or_skipped_with_its_line(name: str) -> None:
    text = _file(name).read_text(encoding="utf-8")
    parsed = SOURCE.parse(text)
    data = _data_lines(text)
    assert parsed.table_rows == len(data)
    imported = {r.line for r in parsed.rows}
    skipped = {s.line: s.reason for s in parsed.skips}
    assert imported | set(skipped) == data and not imported & set(skipped)
    assert len(parsed.rows) == DOCS[name]["rows"]
    assert set(skipped) == set(DOCS[name]["skips"])
    for line, words in DOCS[name]["skips"].items():
        assert words in skipped[line]


def test_thirty_two_published_throughputs() -> None:
    """28 recipes plus the 4 float8 rowwise figures (2 skipped lines of two figures each)."""
    recipes = sum(len(SOURCE.parse(_file(n).read_text(encoding="utf-8")).rows) for n in DOCS)
    assert recipes == 28 and recipes + 2 * 2 == 32


def test_every_async_tp_speedup_is_recomputed() -> None:
    """All six published speedups, the skipped rowwise rows' included, are async / vanilla at 2 decimals."""
    text = _file("asyncTP_llama3_h100_2025-06_torchtitan").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if re.match(r"^\| (None|float8)", line)]
    assert len(rows) == 6
    for line in rows:
        vanilla, async_, speedup = (float(c) for c in line.strip("|").split("|")[1:4])
        assert figures.agrees(speedup, async_ / vanilla, places=2), line
    parsed = SOURCE.parse(text)
    assert all(figures.agrees(r.speedup, r.tokens / r.vanilla_tokens, places=2) for r in parsed.rows if r.speedup)


def test_import_reproduces_the_committed_recipes(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "catalog", tmp_path / "catalog")
    (tmp_path / "recipes").mkdir()
    written = []
    for name in DOCS:
        parsed, report, problems = run_source(SOURCE, tmp_path, _file(name), _document(name), dry_run=False)
        assert problems == [] and report is not None
        written += report.created
        again = run_source(SOURCE, tmp_path, _file(name), _document(name), dry_run=False)[1]
        assert again is not None and not again.created and not again.updated
    rel = sorted(p.relative_to(tmp_path) for p in written)
    assert rel == sorted(p.relative_to(ROOT) for p in (ROOT / "recipes").glob("*/*/titan-*.yaml"))
    for r in rel:
        assert (tmp_path / r).read_bytes() == (ROOT / r).read_bytes(), r
    assert check_registry(load_registry(tmp_path)) == []


def _recipe(rel: str) -> dict:
    return yaml.safe_load((ROOT / "recipes" / rel).read_text(encoding="utf-8"))


def test_pipeline_settings_follow_torchtitan_code() -> None:
    """126 layers over PP 8 (1F1B): 15, six of 16, 15; over 16 virtual stages (Interleaved 1F1B, 2 per rank): 7,
    fourteen of 8, 7; 8 micro-batches (the PP degree) of local batch 32 / 8 = 4 rows."""
    one = _recipe("llama-3.1-405b/h100-96gb/titan-9dec370-t5-1f1b.yaml")["layout"]
    assert one["layer_split"] == {"first": 15, "last": 15} and one["vpp"] == 1
    assert (one["gradient_accumulation"], one["rows_per_microbatch"], one["dp"]) == (8, 4, 8)
    inter = _recipe("llama-3.1-405b/h100-96gb/titan-9dec370-t5-interleaved-1f1b.yaml")["layout"]
    assert inter["vpp"] == 2 and inter["layer_split"] is None
    assert "7 layers, then " + ", ".join(["8"] * 14) + ", then 7" in inter["pipeline_layout"]


def test_rows_state_their_degrees_and_sequence() -> None:
    r = _recipe("llama-3.1-8b/h100-96gb/titan-9dec370-t2-fsdp-2-cp-4.yaml")
    assert (r["layout"]["dp"], r["layout"]["cp"], r["gpu"]["count"]) == (2, 4, 8)
    assert r["workload"]["row_tokens"] == 131072 and r["workload"]["global_batch"] == 2
    assert r["publication"]["line"] == 37 and r["publication"]["commit"] == COMMIT
    assert r["result"]["tokens_per_s_per_gpu"] == 1071.0 and r["workload"]["precision"] == "fp8-cs"
    white = _recipe("llama-3.1-8b/h200/titan-e7c0cae-whitefiber-8-nodes.yaml")
    assert (white["gpu"]["count"], white["layout"]["dp"], white["workload"]["global_batch"]) == (64, 64, 128)


def test_catalog_cards_are_torchtitans_model_args() -> None:
    """torchtitan's FFN size: multiple_of x ceil(multiplier x int(2 x 4 x dim / 3) / multiple_of)."""
    catalog = load_catalog(ROOT)
    args = {"Llama-3.1-8B": (4096, 32, 32, 1.3, 1024), "Llama-3.1-70B": (8192, 80, 64, 1.3, 4096),
            "Llama-3.1-405B": (16384, 126, 128, 1.2, 4096)}
    for model, (dim, layers, heads, multiplier, multiple_of) in args.items():
        arch = catalog.models[model].architecture
        hidden = int(multiplier * int(2 * 4 * dim / 3))
        ffn = multiple_of * ((hidden + multiple_of - 1) // multiple_of)
        assert (arch.hidden_size, arch.layers, arch.attention_heads, arch.ffn_hidden_size) == (dim, layers, heads, ffn)
        assert arch.attention["global"].kv_heads == 8 and arch.vocab_size == 128256


def test_unknown_caption_is_skipped_with_its_line() -> None:
    text = "**Table 9** Something new.\n\n| Techniques | TPS/GPU | Memory(GiB) |\n| --- | ---: | ---: |\n| FSDP | 1 | 2 |\n"
    parsed = parse(text)
    assert parsed.rows == [] and [s.line for s in parsed.skips] == [5]
    assert "is not one the importer knows" in parsed.skips[0].reason


def test_prose_mfu_is_recomputed_with_torchtitans_count() -> None:
    """The 33% to 39% of the December 2024 document's line 21, by torchtitan's count over 989 TFLOP/s: by hand for
    Llama 3.1 8B at 8192, 6 x (8,030,261,248 - 128,256 x 4,096) + 12 x 32 x 32 x 128 x 8,192 FLOPs per token."""
    by_hand = 6 * (8_030_261_248 - 128_256 * 4_096) + 12 * 32 * 32 * 128 * 8_192
    arch = load_catalog(ROOT).models["Llama-3.1-8B"].architecture
    assert figures.torchtitan_flops_per_token(arch, 8192) == by_hand
    shares = {}
    for rel in ("t1-fsdp", "t1-fsdp-torch-compile", "t3-fsdp", "t3-fsdp-torch-compile"):
        notes = _recipe(f"llama-3.1-8b/h100-96gb/titan-9dec370-{rel}.yaml")["notes"]
        shares[rel] = float(re.search(r"tokens/s give ([\d.]+)%", notes).group(1))
        assert "within the stated range" in notes and "reverse of 'respectively'" in notes
    assert round(min(shares.values())) == 33 and round(max(shares.values())) == 39
    assert shares["t1-fsdp-torch-compile"] > shares["t1-fsdp"]  # the wording's "respectively" is reversed
