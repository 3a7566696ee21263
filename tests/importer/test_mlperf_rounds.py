"""Every source row of every MLPerf Training round imported (generator/importers/mlperf_training.py) accounted for:
tests/importer/data/mlperf_training/rounds.yaml lists each round's LLM rows (the importer's ordinal, the result folder)
with the recipe it became or the reason it was skipped. The registry's MLPerf recipes are exactly the ledger's; when
copies of the rounds are at hand (MLPERF_TRAINING_ROUNDS: a folder of training_results_vX.Y copies, made as
SOURCES.md says), the ledger is re-derived from them and must be equal.

Hand checks, one row per new round (the arithmetic of tokens/s per GPU = samples x 2,048 / run time / GPUs):
- v3.0 NVIDIA dgxh100_n64_nemo gpt3: 64 x 8 H100; config_DGXH100_64x8x128x4x8_mbs1.sh: TP4 PP8, MINIBS 128 ->
  512 / 32 x 128 = global batch 2,048, as logged. Median run result_1.txt: 589,824 samples in 3,855,826 ms:
  589,824 x 2,048 = 1,207,959,552 tokens / 3,855.826 s = 313,282.3 tokens/s / 512 = 611.9 per GPU.
- v3.1 NVIDIA eos-dfw_n1344_ngc23.09_nemo gpt3: 1,344 x 8 = 10,752 H100; config_DGXH100_1344x8x8x4x8_mbs1.sh: TP4 PP8,
  MINIBS 8 -> 10,752 / 32 x 8 = 2,688, as logged. Runs 234,939 / 235,030 / 236,021 ms, 591,360 samples each; median
  result_1.txt: 591,360 x 2,048 = 1,211,105,280 tokens / 235.030 s = 5,152,938 tokens/s / 10,752 = 479.3 per GPU.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from suitehelpers import read_yaml

from generator.importers import mlperf_training as mlperf
from generator.registry import load_catalog

ROOT = Path(__file__).resolve().parents[2]
LEDGER = ROOT / "tests/importer/data/mlperf_training/rounds.yaml"
URL = "https://github.com/mlcommons/training_results_{round}"

# Per round: source rows, recipes (by hand from the ledger's rows; the skip reasons are in the ledger).
TOTALS = {"v3.0": (7, 5), "v3.1": (11, 7), "v4.0": (42, 30), "v4.1": (43, 33), "v5.0": (65, 59), "v5.1": (110, 103)}


def load_ledger() -> dict[str, Any]:
    return read_yaml(LEDGER)


def derive(rounds: Path, round_name: str, commit: str) -> list[dict[str, Any]]:
    """The ledger rows of one round as the importer reads it now (admission by the catalog included)."""
    catalog = load_catalog(ROOT)
    parsed = mlperf.read_round(rounds / f"training_results_{round_name}")
    out = [{"line": s.line, "skipped": s.reason} for s in parsed.skips]
    for row in parsed.rows:
        gap = mlperf.SOURCE.admit(row, catalog)
        entry = {"line": row.line, "rel": row.rel}
        if gap:
            entry["skipped"] = gap
        else:
            entry["recipe"] = mlperf.SOURCE.target(ROOT, catalog, row).relative_to(ROOT).as_posix()
        out.append(entry)
    return sorted(out, key=lambda e: e["line"])


def registry_recipes(round_name: str) -> dict[str, str]:
    """recipe path -> publication URL, for every registry recipe citing the round."""
    out = {}
    for path in sorted((ROOT / "recipes").glob("*/*/mlperf-*.yaml")):
        url = read_yaml(path)["publication"]["url"]
        if url.startswith(URL.format(round=round_name) + "/"):
            out[path.relative_to(ROOT).as_posix()] = url
    return out


@pytest.mark.parametrize("round_name", sorted(TOTALS))
def test_every_row_of_the_round_is_a_recipe_or_a_skip_with_its_reason(round_name: str) -> None:
    entry = load_ledger()[round_name]
    rows = entry["rows"]
    assert [r["line"] for r in rows] == list(range(1, len(rows) + 1))
    recipes = {r["recipe"]: r for r in rows if "recipe" in r}
    skipped = [r for r in rows if "skipped" in r]
    assert len(recipes) + len(skipped) == len(rows) and all(r["skipped"] for r in skipped)
    assert (len(rows), len(recipes)) == TOTALS[round_name]
    cited = registry_recipes(round_name)
    assert sorted(cited) == sorted(recipes)
    for path, url in cited.items():
        assert url == f"{URL.format(round=round_name)}/tree/{entry['commit']}/{recipes[path]['rel']}"


def test_the_hand_checked_rows() -> None:
    v30 = yaml.safe_load((ROOT / "recipes/gpt-3-175b/h100/mlperf-v3.0-nvidia-dgxh100-n64-nemo.yaml").read_text())
    assert (v30["gpu"]["count"], v30["workload"]["global_batch"], v30["layout"]["tp"], v30["layout"]["pp"]) == (
        512, 2048, 4, 8)
    assert v30["result"]["time_to_train"]["median_ms"] == 3_855_826 and v30["result"]["tokens_per_s_per_gpu"] == 611.9
    v31 = yaml.safe_load((ROOT / "recipes/gpt-3-175b/h100/mlperf-v3.1-nvidia-eos-dfw-n1344-ngc23-09-nemo.yaml")
                         .read_text())
    tt = v31["result"]["time_to_train"]
    assert (v31["gpu"]["count"], v31["workload"]["global_batch"]) == (10_752, 2688)
    assert tt["runs_ms"] == [234_939, 235_030, 236_021] and tt["median_ms"] == 235_030
    assert v31["result"]["tokens_per_s_per_gpu"] == 479.3


@pytest.mark.skipif(not os.environ.get("MLPERF_TRAINING_ROUNDS"), reason="no copies of the rounds (MLPERF_TRAINING_ROUNDS)")
@pytest.mark.parametrize("round_name", sorted(TOTALS))
def test_the_ledger_is_what_the_importer_reads_from_the_round(round_name: str) -> None:
    entry = load_ledger()[round_name]
    assert derive(Path(os.environ["MLPERF_TRAINING_ROUNDS"]), round_name, entry["commit"]) == entry["rows"]
