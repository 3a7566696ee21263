"""MLPerf Training v6.0's MoE benchmarks (generator/importers/mlperf_training.py) against a real excerpt of the round:
NVIDIA's deepseekv3_671b on 256 GB300 (tests/importer/data/mlperf_training/SOURCES.md, "v6.0"). The result files,
the config and the systems JSON are read by hand below; the recipe the importer builds must say the same.

Hand computation (the lines are in the excerpt's result files):
- result_0.txt: run_start 1778675007757, run_stop 1778677053080 (success, samples_count 768000): 2,045,323 ms;
  last eval_accuracy 3.5603420734405518.
- result_1.txt: run_start 1778678123306, run_stop 1778680129118 (752640): 2,005,812 ms; last eval 3.5988962650299072.
- result_2.txt: run_start 1778678187197, run_stop 1778680152076 (737280): 1,964,879 ms; last eval 3.574981927871704.
- Median run result_1: 752,640 samples x 4,096 tokens = 3,082,813,440 tokens / 2,005.812 s = 1,536,940.4 tokens/s
  / 256 GPUs = 6,003.7 tokens/s per GPU. MLPerf's score (the mean of 3 runs without the fastest and the slowest) is
  the same run: 2,005,812 ms = 33.430 min.
- Layout: config_GB300_64x4x240xtp1pp4ep32cp1_mxfp8_full_cg.sh: DGXNNODES 64 x DGXNGPU 4 = 256; TP1 PP4 VP4 CP1 EP32,
  MINIBS 240 -> 256 / (1 x 4 x 1) = DP 64 x 240 = global batch 15,360, as logged. The config sets no micro-batch; the
  logged gradient_accumulation_steps 240 gives 15,360 / (64 x 240) = 1. PIPELINE_LAYOUT "Et*4|(t*4|)*14tmL":
  1 + 14 + 1 = 16 virtual stages = PP 4 x VP 4, 4 + 14 x 4 + 1 = 61 decoder layers (the card's 61) and 1 MTP layer.
- MFU by 6N: 6 x 37,551,290,880 active parameters = 225,307,745,280 FLOPs a token x 6,003.7 = 1.35268e15 / the
  GB300's dense FP8 peak 5.0e15 = 0.2705.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from generator import figures
from generator.importers import mlperf_training as mlperf
from generator.importers.base import Document, render
from generator.models import Recipe
from generator.registry import load_catalog

ROOT = Path(__file__).resolve().parents[2]
ROUND = ROOT / "tests/importer/data/mlperf_training/training_results_v6.0"
COMMIT = "eabf23a07b2a0c60a289ff871dc3a46fff0d0421"
RESULTS = ROUND / "NVIDIA/results/theia_ngpu256_ngc26.04_nemo/deepseekv3_671b"
CONFIG = ("NVIDIA/benchmarks/deepseekv3_671b/implementations/theia_ngpu512_ngc26.04_nemo/"
          "config_GB300_64x4x240xtp1pp4ep32cp1_mxfp8_full_cg.sh")

RUNS = {"result_0.txt": (2_045_323, 768_000, 3.5603420734405518),
        "result_1.txt": (2_005_812, 752_640, 3.5988962650299072),
        "result_2.txt": (1_964_879, 737_280, 3.574981927871704)}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_each_result_file_by_hand(name: str) -> None:
    run = mlperf.read_run(name, (RESULTS / name).read_text(encoding="utf-8"), "deepseekv3_671b")
    run_ms, samples, reached = RUNS[name]
    assert run.success and run.problems == []
    assert (run.run_ms, run.samples, run.global_batch, run.seq, run.accumulation) == (run_ms, samples, 15360, 4096, 240)
    assert run.target == 3.6 and run.reached == pytest.approx(reached)


def test_the_config_states_expert_parallelism_and_the_pipeline_layout() -> None:
    values = mlperf.read_config(ROUND / CONFIG)
    config = mlperf.config_from(values, CONFIG)
    assert (config.tp, config.pp, config.vp, config.cp, config.ep, config.etp) == (1, 4, 4, 1, 32, None)
    assert (config.nodes, config.per_node, config.minibs, config.mbs) == (64, 4, 240, None)
    assert config.global_batch(256) == 15360
    assert (config.precision, config.precision_stated) == ("fp8", True)  # FP8=True from config_common_mxfp8.sh
    stages = mlperf.expand_pipeline_layout(values["PIPELINE_LAYOUT"])
    assert stages == ["Etttt"] + ["tttt"] * 14 + ["tmL"]


@pytest.mark.parametrize("text", ["", "Et*4|x", "(t*4|"])
def test_a_layout_string_not_of_the_notation_is_none(text: str) -> None:
    assert mlperf.expand_pipeline_layout(text) is None


def test_the_round_excerpt_gives_one_row() -> None:
    parsed = mlperf.read_round(ROUND)
    assert (parsed.table_rows, parsed.skips, len(parsed.rows)) == (1, [], 1)
    row = parsed.rows[0]
    assert (row.round, row.model, row.gpu, row.gpus, row.seq, row.global_batch) == (
        "v6.0", "DeepSeek-V3", "GB300", 256, 4096, 15360)
    assert (row.target, row.target_stated, row.config.path, row.config.mbs) == (3.6, True, CONFIG, 1)


def test_the_recipe_of_the_row() -> None:
    catalog = load_catalog(ROOT)
    row = mlperf.read_round(ROUND).rows[0]
    assert mlperf.SOURCE.admit(row, catalog) is None
    document = mlperf.SOURCE.row_document(Document("https://github.com/mlcommons/training_results_v6.0", COMMIT), row)
    assert document.url == (f"https://github.com/mlcommons/training_results_v6.0/tree/{COMMIT}/"
                            "NVIDIA/results/theia_ngpu256_ngc26.04_nemo/deepseekv3_671b")
    recipe = mlperf.SOURCE.build(row, catalog, document, [], [])
    Recipe.model_validate(yaml.safe_load(render(recipe, "")))  # as written
    result = recipe["result"]
    assert (result["tokens_per_s_per_gpu"], result["runs"], result["mfu"]) == (6003.7, 3, 0.2705)
    assert figures.run_tokens_per_s_per_gpu(752_640, 4096, 2_005_812, 256) == pytest.approx(6003.67, abs=0.01)
    tt = result["time_to_train"]
    assert tt["runs_ms"] == [v[0] for v in RUNS.values()] and tt["samples"] == [v[1] for v in RUNS.values()]
    assert (tt["median_ms"], tt["score_ms"], tt["failed_runs"]) == (2_005_812.0, 2_005_812.0, 0)
    layout = recipe["layout"]
    assert layout["label"] == "TP1 PP4 VPP4 CP1 EP32 DP64"
    assert {k: layout[k] for k in ("tp", "pp", "vpp", "cp", "ep", "etp", "dp", "rows_per_microbatch",
                                   "gradient_accumulation", "mtp_layers")} == {
        "tp": 1, "pp": 4, "vpp": 4, "cp": 1, "ep": 32, "etp": 1, "dp": 64, "rows_per_microbatch": 1,
        "gradient_accumulation": 240, "mtp_layers": 1}
    assert "16 virtual stages = PP 4 x VP 4" in layout["pipeline_layout"]
    assert "stage 16: 1 decoder layer(s) + the MTP layer(s) + the loss" in layout["pipeline_layout"]
    assert recipe["workload"] == {"row_tokens": 4096, "rows": mlperf.BENCHMARKS["deepseekv3_671b"].rows,
                                  "global_batch": 15360, "precision": "fp8", "training": "pre-training"}
    quality = recipe["correctness"]["quality_target"]
    assert (quality["target"], quality["reached"], quality["runs_reached"]) == (3.6, 3.598896, 3)
    inferred = {i["field"]: i["reason"] for i in recipe["inferred"]}
    assert "gradient_accumulation_steps 240: global batch 15360 / (DP 64 x 240) = 1" in inferred[
        "layout.rows_per_microbatch"]
    assert mlperf.SOURCE.target(ROOT, catalog, row) == ROOT / (
        "recipes/deepseek-v3/gb300/mlperf-v6.0-nvidia-theia-ngpu256-ngc26-04-nemo.yaml")


def test_a_v6_benchmark_whose_runs_log_no_target_is_skipped(tmp_path: Path) -> None:
    """The v6.0 benchmarks have no target in the rules' revision the importer cites: without target_accuracy in the
    logs the row is skipped, with its folder and the reason."""
    copy = tmp_path / "training_results_v6.0"
    shutil.copytree(ROUND, copy)
    for path in (copy / RESULTS.relative_to(ROUND)).glob("result_*.txt"):
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        path.write_text("".join(line for line in lines if '"target_accuracy"' not in line), encoding="utf-8")
    parsed = mlperf.read_round(copy)
    assert parsed.rows == [] and len(parsed.skips) == 1
    assert parsed.skips[0].reason == (
        "NVIDIA/results/theia_ngpu256_ngc26.04_nemo/deepseekv3_671b: the runs log target_accuracy nowhere: not one "
        "target, and deepseekv3_671b has no target of the rules' table to fall back on")
