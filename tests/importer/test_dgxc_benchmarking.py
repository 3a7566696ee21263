"""NVIDIA DGX Cloud Benchmarking's READMEs (generator/importers/dgxc_benchmarking.py): every figure column of the
committed README copies is a recipe or a skip with its line and reason, a column read by hand gives the recipe's
figures, a later README version supersedes an earlier one's row, and the table reader survives mutated input."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from functools import lru_cache
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator import figures
from generator.importers import dgxc_benchmarking as dgxc
from generator.importers.base import Document, run_source
from generator.registry import load_catalog

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests/importer/data/dgxc"
REPO = "NVIDIA/dgxc-benchmarking"
V2409_FIRST = DATA / "dgxc-35a9aec-llama3.1-README_70b.md"  # the repository's first release with tables
V2409_LATER = DATA / "dgxc-143b90d-llama3.1-README_70b.md"  # the next version of the same README (same figures)
V2504 = DATA / "dgxc-1f6d9f4-llama3.1-README.md"  # one README per workload, layouts in configuration tables
COMMITS = {V2409_FIRST: "35a9aecc8d5b17d99d80f52f38c75ade0dbab7ae",
           V2409_LATER: "143b90dd91f9be958fed4773ae95d941a3356a82",
           V2504: "1f6d9f40e4117d7c71b726f86074ac01c29f87f5"}
PATHS = {V2409_FIRST: "llama3.1/README_70b.md", V2409_LATER: "llama3.1/README_70b.md", V2504: "llama3.1/README.md"}
COLUMN = re.compile(r"\|\s*(?:Throughput on\s+)?\d+x?\s+[A-Z0-9]+\s+GPUs")


def document(path: Path) -> Document:
    return Document.github(REPO, COMMITS[path], PATHS[path])


@lru_cache(maxsize=4)
def parsed(path: Path) -> dgxc.Parsed:
    return dgxc.SOURCE.parse(path.read_text(encoding="utf-8"))


def test_the_committed_copies_are_the_blobs_listed_in_sources() -> None:
    sources = (DATA / "SOURCES.md").read_text(encoding="utf-8")
    for path, commit in COMMITS.items():
        row = next(line for line in sources.splitlines() if line.startswith(f"| {path.name} |"))
        assert commit in row and f"/blob/{commit}/{PATHS[path]}" in row
        assert hashlib.sha256(path.read_bytes()).hexdigest() in row


def test_every_column_is_a_recipe_or_a_located_skip() -> None:
    """Columns counted independently: every 'Nx GPU GPUs' cell of a table header line."""
    for path, expected in ((V2409_FIRST, 12), (V2504, 8)):
        lines = path.read_text(encoding="utf-8").splitlines()
        headers = {i + 1: len(COLUMN.findall(text)) for i, text in enumerate(lines) if COLUMN.search(text)
                   and text.startswith("|") and i + 1 < len(lines) and lines[i + 1].startswith("|-")}
        p = parsed(path)
        assert sum(headers.values()) == expected == p.table_rows == len(p.rows) + len(p.skips)
        assert {r.line for r in p.rows} | {s.line for s in p.skips} == set(headers)
    assert not parsed(V2409_FIRST).skips and not parsed(V2504).skips


def test_a_column_by_hand() -> None:
    """35a9aec, line 58: 'Llama 3.1 70b 24.09 FP8 (TP=4, PP=4, CP=2, VP=5, MBS=1, GA=64)', column 'Throughput on
    64x H100 GPUs (GBS=128)': step 11.01 s, 95,239 tokens/s, MFU 36.17%.
    - tokens/s per GPU: 95,239 / 64 = 1,488.109 -> 1488.1; from the step time 8,192 x 128 / 11.01 = 95,238.5
      (within 11.01's rounding: 8,192 x 128 / 11.015 = 95,195 to / 11.005 = 95,282).
    - DP = 64 / (4 x 4 x 2) = 2; GA = 128 / (1 x 2) = 64, as the title states.
    - MFU 6N over H100's FP8 1,979 TFLOP/s: 6 x 70,553,706,496 x 1,488.1 / 1.979e15 = 0.3183.
    - $ per 1M: AWS p5.48xlarge $55.04/h over 8 GPUs = $6.88 per GPU-hour; 6.88 / (1,488.1 x 3,600) x 1e6 = 1.2843.
    - The README's Notes count per token: 12 x 80 x 8192^2 x (1 + 8/64 + 8192/8192) = 136,902,082,560 (attention)
      + 18 x 80 x 28,672 x 8,192 = 338,228,674,560 (MLP) + 6 x 128,256 x 8,192 = 6,304,038,912 (logits)
      = 481,434,796,032 FLOPs, the registry's count with full attention; x 1,488.1 = 716.4 TFLOP/s against the
      README's 36.17% x 1,979 = 715.8 (0.09% apart): the publication's convention, not an error."""
    row = next(r for r in parsed(V2409_FIRST).rows if r.line == 58 and r.gpus == 64)
    assert (row.model, row.release, row.precision, row.gpu_type, row.gbs, row.seq) == (
        "Llama-3.1-70B", "24.09", "fp8", "H100", 128, 8192)
    assert (row.tp, row.pp, row.cp, row.vp, row.mbs, row.dp, row.gradient_accumulation) == (4, 4, 2, 5, 1, 2, 64)
    assert (row.step_time, row.tokens_total, row.mfu_percent, row.peak_tflops) == (11.01, 95239.0, 36.17, 1979.0)
    catalog = load_catalog(ROOT)
    arch = catalog.models["Llama-3.1-70B"].architecture
    assert figures.model_flops_per_token(arch, 8192, causal=False) == 481_434_796_032
    recipe = dgxc.SOURCE.build(row, catalog, document(V2409_FIRST), [], [])
    result = recipe["result"]
    assert result["tokens_per_s_per_gpu"] == 1488.1
    assert float(result["mfu"]) == 0.3183
    assert float(result["usd_per_million_tokens"]) == 1.2843
    assert result["published_model_tflops_per_gpu"] == 715.8
    assert result["published_model_tflops_convention"]["causal_attention"] is False
    assert "published_figures_disagree" not in result
    assert recipe["gpu"]["instance"] == "AWS p5.48xlarge"
    assert recipe["publication"]["release"] == "24.09" and recipe["publication"]["line"] == 58
    assert "8192 x 128 / 11.01 s = 95239 over 64 GPUs" in recipe["notes"]
    assert "within the step time's rounding to 2 decimals (95195 to 95282)" in recipe["notes"]


def test_a_configuration_table_column_and_the_readme_query_group_error() -> None:
    """1f6d9f4, line 86 'Llama3.1 405b BF16', column '128x GB200 GPUs': the layout is the GB200 configuration row at
    line 14 (128 GPUs: TP4 PP8 CP2 VP8, MBS 1, GBS 64, GA 32; DP = 128 / 64 = 2, 64 / (1 x 2) = 32). 56,092 / 128 =
    438.2 tokens/s per GPU. The README's MFU 47.4% x 2,450 = 1,161.3 TFLOP/s; the registry's full-attention count
    gives 1,150.5 (0.9% apart): the Notes count 16 query groups (1 + 16/128), Llama 3.1 405B has 8 KV heads; with 16
    the count reproduces the MFU, and the recipe records the publication's error as a discrepancy."""
    row = next(r for r in parsed(V2504).rows if r.line == 86 and r.gpus == 128)
    assert (row.gpu_type, row.release, row.layout_from) == ("GB200", "25.04.01", "the configuration table's line 14")
    assert (row.tp, row.pp, row.cp, row.vp, row.mbs, row.gbs, row.dp, row.gradient_accumulation) == (
        4, 8, 2, 8, 1, 64, 2, 32)
    assert row.notes_query_groups == {128: 16}
    recipe = dgxc.SOURCE.build(row, load_catalog(ROOT), document(V2504), [], [])
    result = recipe["result"]
    assert result["tokens_per_s_per_gpu"] == 438.2
    assert result["published_model_tflops_per_gpu"] == 1161.3
    assert result["published_figures_disagree"] is True
    assert "16 query groups" in result["published_model_tflops_note"]
    assert "reproduces the published MFU" in result["published_model_tflops_note"]


def test_a_later_readme_version_supersedes_the_earlier_row(tmp_path: Path) -> None:
    """Importing the first 24.09 README, then its next version: one recipe per column, each citing the later
    version and keeping the earlier one's line and figures under publication.superseded."""
    (tmp_path / "catalog").symlink_to(ROOT / "catalog")
    for path in (V2409_FIRST, V2409_LATER):
        got, report, problems = run_source(dgxc.SOURCE, tmp_path, path, document(path), dry_run=False)
        assert not problems and got is not None and report is not None
    assert len(report.updated) == 12 and not report.created
    written = yaml.safe_load((tmp_path / "recipes/llama-3.1-70b/h100/dgxc-24.09-pretrain-64gpu-fp8.yaml")
                             .read_text(encoding="utf-8"))
    assert written["publication"]["commit"] == COMMITS[V2409_LATER]
    [earlier] = written["publication"]["superseded"]
    assert (earlier["commit"], earlier["line"], earlier["tokens_per_s_per_gpu"]) == (COMMITS[V2409_FIRST], 58, 1488.1)
    # Re-importing the superseded version changes nothing.
    _, again, _ = run_source(dgxc.SOURCE, tmp_path, V2409_FIRST, document(V2409_FIRST), dry_run=False)
    assert again is not None and len(again.kept) == 12 and not again.updated


def test_bad_cells_are_located_skips() -> None:
    text = V2409_FIRST.read_text(encoding="utf-8").replace("| 11.01  |", "| 11.0 1 |").replace(
        "(TP=4, PP=4, CP=2, VP=5, MBS=1, GA=64) | Throughput on 64x H100 GPUs (GBS=128) | Throughput on 128x",
        "(TP=0, PP=4, CP=2, VP=5, MBS=1, GA=64) | Throughput on 64x H100 GPUs (GBS=128) | Throughput on 128x", 1)
    p = dgxc.SOURCE.parse(text)
    assert p.table_rows == 12 == len(p.rows) + len(p.skips)
    reasons = {(s.line, s.reason.split(":")[0]) for s in p.skips}
    assert (51, "64x H100") in reasons  # TP=0 in the BF16 title: every column of that table
    assert len([s for s in p.skips if s.line == 51]) == 6 and all("0" in s.reason for s in p.skips if s.line == 51)
    assert any(s.line == 58 and "no step time" in s.reason for s in p.skips)


JUNK = st.sampled_from(["", "x", "-1", "0", "1e3", "²", "NA", "n/a", "GPUs*0", "GPUs/0", "99999999999", "|",
                        "FP8", "12.5%", "8x H100 GPUs", "(TP=2)", "**GB200**:", "### FP8"])


@st.composite
def mutants(draw: st.DrawFn) -> str:
    lines = V2504.read_text(encoding="utf-8").splitlines()
    for _ in range(draw(st.integers(1, 5))):
        i = draw(st.integers(0, len(lines) - 1))
        kind = draw(st.sampled_from(["delete", "duplicate", "swap", "cell", "line"]))
        if kind == "delete" and len(lines) > 1:
            del lines[i]
        elif kind == "duplicate":
            lines.insert(i, lines[i])
        elif kind == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "line":
            lines.insert(i, draw(JUNK))
        elif "|" in lines[i]:
            cells = lines[i].split("|")
            k = draw(st.integers(0, len(cells) - 1))
            cells[k] = f" {draw(JUNK)} "
            lines[i] = "|".join(cells)
    return "\n".join(lines) + "\n"


@settings(max_examples=80, deadline=dt.timedelta(seconds=5), derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(mutants())
def test_mutants_are_rows_or_located_skips(text: str) -> None:
    p = dgxc.parse(text)
    assert p.table_rows == len(p.rows) + len(p.skips)
    count = len(text.splitlines())
    assert all(1 <= r.line <= count for r in p.rows)
    assert all(1 <= s.line <= count and s.reason and "\n" not in s.reason for s in p.skips)
    for row in p.rows:
        assert row.gpus % (row.tp * row.pp * row.cp) == 0 and row.gbs % (row.mbs * row.dp) == 0
        assert row.step_time > 0 and row.tokens_total > 0 and row.seq > 0


# --- the container release from launch.sh ------------------------------------------------------------------------

LAUNCHES = {  # copy -> (commit, path): blobs of NVIDIA/dgxc-benchmarking, their SHA-256 in SOURCES.md
    DATA / "dgxc-741c886-llama3.1-launch.sh": ("741c886025a7665a1d690c05ff12ac29c1be7252", "llama3.1/launch.sh"),
    DATA / "dgxc-741c886-ft_llama3-launch.sh": ("741c886025a7665a1d690c05ff12ac29c1be7252", "ft_llama3/launch.sh"),
    DATA / "dgxc-8f5cbb3-nemotron-launch.sh": ("8f5cbb3799ea8cc031ed2c2cee1cbdbc15b240ad", "nemotron/launch.sh"),
}


def test_the_launch_script_copies_are_the_blobs_listed_in_sources() -> None:
    sources = (DATA / "SOURCES.md").read_text(encoding="utf-8")
    for path, (commit, blob) in LAUNCHES.items():
        row = next(line for line in sources.splitlines() if line.startswith(f"| {path.name} |"))
        assert f"/blob/{commit}/{blob}" in row and hashlib.sha256(path.read_bytes()).hexdigest() in row


def test_the_release_a_launch_script_states_read_by_hand() -> None:
    """741c886 llama3.1/launch.sh line 31 'export FW_VERSION=25.02.01'; ft_llama3/launch.sh line 38 'export
    IMAGE=${RUN_CONF_IMAGE:-$STAGE_PATH/nvidia+nemo+24.12.sqsh}' (no FW_VERSION); 8f5cbb3 nemotron/launch.sh lines
    41-46 'if [[ $MODEL_SIZE = 15b ]]; then FW_VERSION=24.12 (line 42) else # for 340b FW_VERSION=24.09 (line 45)'."""
    text = {path.name.split("-", 2)[2]: path.read_text(encoding="utf-8") for path in LAUNCHES}
    assert dgxc.launch_release(text["llama3.1-launch.sh"], "Llama-3.1-405B") == dgxc.LaunchRelease(
        "25.02.01", 31, "export FW_VERSION=25.02.01")
    got = dgxc.launch_release(text["ft_llama3-launch.sh"], "Llama-3-8B")
    assert got is not None and (got.release, got.line) == ("24.12", 38)
    assert dgxc.launch_release(text["nemotron-launch.sh"], "Nemotron-4-340B").release == "24.09"
    assert dgxc.launch_release(text["nemotron-launch.sh"], "Nemotron-4-15B").release == "24.12"
    # A model size the branch cannot place (no size in the name) meets both releases: none is chosen.
    assert dgxc.launch_release(text["nemotron-launch.sh"], "Nemotron") is None
    assert dgxc.launch_release("#!/bin/bash\necho no release here\n", "Llama-3.1-8B") is None


def test_a_readme_read_beside_its_launch_script_records_the_release_and_cites_it(tmp_path: Path) -> None:
    """741c886's llama3.1/README.md names no container; read alone its rows stay 'unstated', read beside the same
    commit's llama3.1/launch.sh they take 25.02.01, and the recipe cites launch.sh at that commit and line."""
    readme = DATA / "dgxc-741c886-llama3.1-README.md"
    commit = LAUNCHES[DATA / "dgxc-741c886-llama3.1-launch.sh"][0]
    alone = dgxc.SOURCE.read(readme)
    assert alone.rows and {row.release for row in alone.rows} == {dgxc.UNSTATED}
    folder = tmp_path / "llama3.1"
    folder.mkdir()
    (folder / "README.md").write_bytes(readme.read_bytes())
    (folder / "launch.sh").write_bytes((DATA / "dgxc-741c886-llama3.1-launch.sh").read_bytes())
    beside = dgxc.SOURCE.read(folder / "README.md")
    assert len(beside.rows) == len(alone.rows) and {row.release for row in beside.rows} == {"25.02.01"}
    recipe = dgxc.SOURCE.build(beside.rows[0], load_catalog(ROOT), Document.github(REPO, commit, "llama3.1/README.md"),
                               [], [])
    assert recipe["publication"]["release"] == "25.02.01"
    launch_url = f"https://github.com/{REPO}/blob/{commit}/llama3.1/launch.sh"
    assert f"{launch_url} (line 31: 'export FW_VERSION=25.02.01')" in recipe["notes"]
    assert "launch.sh line 31" in recipe["stack"]["source"]


def test_no_committed_dgx_cloud_recipe_leaves_a_release_unstated_that_launch_sh_states() -> None:
    """Every README version that names no release takes the one its launch.sh states: 118 recipes (the 84 that read
    'unstated' before held several README versions under that one release, each version superseding the last; with
    each version's own release, 24.05 to 25.04.01, they are 108 recipes, and 10 more whose rows now match a release
    another README states). Every recipe names the SHA-256 of the README bytes read."""
    unstated, from_launch = [], 0
    for path in (ROOT / "recipes").glob("*/*/dgxc-*.yaml"):
        recipe = yaml.safe_load(path.read_text(encoding="utf-8"))
        if recipe["publication"]["release"] == dgxc.UNSTATED:
            unstated.append(path)
        from_launch += "launch.sh" in recipe["stack"]["source"]
        assert re.fullmatch(r"[0-9a-f]{64}", recipe["publication"].get("sha256") or ""), path
    assert unstated == [] and from_launch == 118
