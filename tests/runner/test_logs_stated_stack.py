"""The stack a run of ours prints about itself (its closing `openrecipes-framework` / `openrecipes-engine` line), read
from the committed H200 logs of 2026-12-04: what `remeasure --from-log` records as the environment of a run made
elsewhere, instead of this machine's versions or nothing."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from runner.logs import parse_file, stated_stack

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks/results/h200-2026-12-04-frameworks"
# Expectations copied by hand from each log's last line.
CASES = {
    "call2/torchtitan-8k.20261204T191532Z.run1.log.gz": {"framework": "torchtitan 0.2.2", "pytorch": "2.11.0+cu130"},
    "call2/transformers-8k.20261204T191708Z.run1.log.gz": {"framework": "transformers 5.17.0",
                                                           "pytorch": "2.11.0+cu130"},
    "call1/engine-sdpa-4k-x3.20261204T191203Z.run3.log.gz": {
        "python": "3.12.3", "pytorch": "2.11.0+cu130", "cuda": "13.0", "nccl": "2.28.9", "megatron_core": "0.16.1",
        "gpu_name": "NVIDIA H200"},
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_run_s_own_versions(name: str, tmp_path: Path) -> None:
    log = tmp_path / Path(name).name.removesuffix(".gz")
    log.write_bytes(gzip.decompress((RESULTS / name).read_bytes()))
    assert parse_file(log, None).stated_stack == CASES[name]


def test_a_log_without_a_summary_states_nothing() -> None:
    lines = ['openrecipes-step {"step": 0, "steps": 1, "time_s": 1.0, "loss": 2.0}\n']
    assert stated_stack(lines) == {}
    assert stated_stack(["openrecipes-framework {not json\n"]) == {}
    assert stated_stack(["openrecipes-framework [1, 2]\n"]) == {}


def test_the_from_log_recipe_records_them() -> None:
    # recipes/llama-3.2-3b/h200/torchtitan-8k was written by `remeasure --from-log` of the first case's log
    evidence = json.loads((ROOT / "recipes/llama-3.2-3b/h200/torchtitan-8k.evidence.json").read_text())
    assert evidence["source"] == "from-log"
    env = evidence["environment"]
    assert env["framework"] == "torchtitan 0.2.2" and env["pytorch"] == "2.11.0+cu130"
    assert env["captured"].startswith("from the log") and evidence["stack_differences"] == []
