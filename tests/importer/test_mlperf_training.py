"""MLPerf Training results (generator/importers/mlperf_training.py) against a real excerpt of
mlcommons/training_results_v5.1 (tests/importer/data/mlperf_training/SOURCES.md): a result file read by hand, the
config and systems JSON, every row of the excerpt imported or skipped with its reason, a run without run_stop not
counted, the recipe's figures, and the MLLOG line parser fuzzed."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from generator import figures
from generator.__main__ import main
from generator.importers import mlperf_training as mlperf
from generator.importers.base import Document, Parsed, render
from generator.models import Recipe
from generator.registry import load_catalog

ROOT = Path(__file__).resolve().parents[2]
ROUND = ROOT / "tests/importer/data/mlperf_training/training_results_v5.1"
COMMIT = "441d65f4445cd59687466533fd9f55399136e7a4"
LORA = ROUND / "AMD/results/MI355X_EPYC_9575F_pytorch/llama2_70b_lora"
CONFIG = ROUND / "AMD/benchmarks/llama2_70b_lora/implementations/MI355X_EPYC_9575F_pytorch_llama2_70b"
DELL = ROUND / "Dell/results/1xXE9780x8B200-SXM-180GB/llama2_70b_lora/result_0.txt"


@lru_cache(maxsize=1)
def parsed() -> Parsed:
    return mlperf.read_round(ROUND)


def test_a_result_file_by_hand() -> None:
    """result_2.txt: run_start at time_ms 1759736133725 (line 21), run_stop at 1759736723548 (line 52, status
    success, samples_count 3072): 1759736723548 - 1759736133725 = 589,823 ms. Global batch 8 (line 9), the last
    eval_accuracy before run_stop 0.9230302572250366 (line 50). Time-to-train throughput: 3,072 samples x 8,192 tokens
    = 25,165,824 tokens / 589.823 s = 42,666.7 tokens/s / 8 GPUs = 5,333.3 tokens/s per GPU."""
    run = mlperf.read_run("result_2.txt", (LORA / "result_2.txt").read_text(encoding="utf-8"), "llama2_70b_lora")
    assert run.success and run.problems == []
    assert (run.run_ms, run.samples, run.global_batch, run.status) == (589_823, 3072, 8, "success")
    assert run.reached == pytest.approx(0.9230302572250366)
    assert run.seq is None  # the LoRA logs state no max_sequence_length
    assert figures.run_tokens_per_s_per_gpu(run.samples, 8192, run.run_ms, 8) == pytest.approx(5333.34, abs=0.01)


def test_a_run_without_run_stop_is_not_a_result() -> None:
    run = mlperf.read_run("result_0.txt", DELL.read_text(encoding="utf-8"), "llama2_70b_lora")
    assert not run.success and run.run_ms is None and run.status is None


def test_the_config_and_the_system() -> None:
    values = mlperf.read_config(CONFIG / "config_MI355X_1x8x1.sh")
    assert {k: values[k] for k in ("TP", "PP", "CP", "MBS", "MINIBS", "FP8", "DGXNNODES", "DGXNGPU")} == {
        "TP": "1", "PP": "1", "CP": "1", "MBS": "1", "MINIBS": "1", "FP8": "True", "DGXNNODES": "1", "DGXNGPU": "8"}
    defaults = mlperf.yaml_defaults(CONFIG, ROUND)
    assert defaults["MAX_SEQLEN"] == ("8192", "AMD/benchmarks/llama2_70b_lora/implementations/"
                                      "MI355X_EPYC_9575F_pytorch_llama2_70b/src/conf/megatron_gpt_peft_tuning_config.yaml")
    config = mlperf.config_from(values, "c.sh", defaults)
    # 8 GPUs / (TP1 x PP1 x CP1) x MINIBS 1 = global batch 8, as the log states
    assert (config.tp, config.pp, config.cp, config.mbs, config.global_batch(8)) == (1, 1, 1, 1, 8)
    assert (config.precision, config.precision_stated, config.seq) == ("fp8", True, 8192)
    assert dict(config.from_defaults) == {"workload.row_tokens": "MAX_SEQLEN=8192, the default of " + defaults[
        "MAX_SEQLEN"][1]}
    names = {"AMD Instinct MI355X": "MI355X", "AMD Instinct MI300X 192GB HBM3": "MI300X",
             "AMD Instinct MI325X 256GB HBM3E DLC": "MI325X", "NVIDIA Blackwell GPU (GB200)": "GB200",
             "NVIDIA Blackwell GPU (B200-SXM-180GB)": "B200", "NVIDIA Blackwell Ultra GPU (GB300)": "GB300",
             "NVIDIA Blackwell Ultra GPU (B300-SXM-270GB)": "B300", "NVIDIA H200-NVL-141GB": "H200-NVL",
             "NVIDIA H200-SXM5-141GB": "H200", "NVIDIA H100-SXM5-80GB": "H100", "TPU-v5p": "TPU-v5p"}
    assert {name: mlperf.gpu_type(name) for name in names} == names


def test_every_row_of_the_round_is_imported_or_skipped_with_its_reason() -> None:
    p = parsed()
    assert p.table_rows == 3 and len(p.rows) + len(p.skips) == p.table_rows
    assert [r.rel for r in p.rows] == ["AMD/results/MI355X_EPYC_9575F_pytorch/llama2_70b_lora",
                                       "AMD/results/MI355X_EPYC_9575F_pytorch/llama31_8b"]
    reasons = {s.line: s.reason for s in p.skips}
    assert reasons == {
        3: "Dell/results/1xXE9780x8B200-SXM-180GB/llama2_70b_lora: no successful run among 1 result file(s): "
           "result_0.txt (no run_stop)",
    }


def test_a_precision_the_implementation_code_hard_codes() -> None:
    """AMD's llama31_8b config sets no FP8 or FP4 and its implementation has no YAML, but src/train.py line 160
    passes fp8="hybrid" to MegatronMixedPrecision (line 154 opens the call): fp8, marked inferred with that place.
    result_0.txt: run_start 1759966206549, run_stop 1759971964686 (samples_count 172032): 5,758,137 ms; 172,032 x
    8,192 tokens / 5,758.137 s / 8 GPUs = 30,593.4 tokens/s per GPU."""
    impl = ROUND / "AMD/benchmarks/llama31_8b/implementations/MI355X_EPYC_9575F_pytorch_llama3_8b"
    where = ('fp8="hybrid" passed to MegatronMixedPrecision in AMD/benchmarks/llama31_8b/implementations/'
             "MI355X_EPYC_9575F_pytorch_llama3_8b/src/train.py line 160")
    assert mlperf.code_precision(impl, ROUND) == ("fp8", where)
    row = parsed().rows[1]
    assert (row.config.precision, row.config.precision_stated) == ("fp8", False)
    assert row.runs[0].run_ms == 5_758_137 and row.global_batch == 32 and row.seq == 8192
    recipe = mlperf.SOURCE.build(row, load_catalog(ROOT), Document("https://example.org", COMMIT), [], [])
    assert recipe["workload"]["precision"] == "fp8" and recipe["result"]["tokens_per_s_per_gpu"] == 30593.4
    precision = next(i for i in recipe["inferred"] if i["field"] == "workload.precision")
    assert precision["reason"].endswith(where)


def test_a_literal_outside_the_mixed_precision_call_states_nothing(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text('cfg.fp8 = "hybrid"\nplugin = MegatronMixedPrecision(precision="bf16-mixed",'
                                      " fp8=args.fp8, params_dtype=dtype(1))\n", encoding="utf-8")
    assert mlperf.code_precision(tmp_path, tmp_path) is None


def test_the_recipe_of_a_row() -> None:
    """3 runs: result_0 666,790 ms (3,456 samples), result_2 589,823 ms (3,072), result_8 589,814 ms (3,072). The
    median run is result_2 (589,814 < 589,823 < 666,790), 5,333.3 tokens/s per GPU (above); MLPerf's score, the mean
    without the fastest and the slowest of 3, is the same 589,823 ms. MFU: LoRA counts 4N = 4 x 68,976,648,192 =
    275,906,592,768 FLOPs a token x 5,333.3 = 1.4715e15 / the MI355X FP8 peak 5.0332e15 = 0.2924."""
    catalog = load_catalog(ROOT)
    row = parsed().rows[0]
    document = mlperf.SOURCE.row_document(Document("https://github.com/mlcommons/training_results_v5.1", COMMIT), row)
    assert document.url == (f"https://github.com/mlcommons/training_results_v5.1/tree/{COMMIT}/"
                            "AMD/results/MI355X_EPYC_9575F_pytorch/llama2_70b_lora")
    recipe = mlperf.SOURCE.build(row, catalog, document, [], [])
    Recipe.model_validate(yaml.safe_load(render(recipe, "")))  # as written
    result = recipe["result"]
    assert result["tokens_per_s_per_gpu"] == 5333.3 and result["runs"] == 3 and result["mfu"] == 0.2924
    tt = result["time_to_train"]
    assert tt["runs_ms"] == [666_790, 589_823, 589_814] and tt["samples"] == [3456, 3072, 3072]
    assert (tt["median_ms"], tt["score_ms"], tt["failed_runs"]) == (589_823.0, 589_823.0, 0)
    assert recipe["workload"] == {"row_tokens": 8192, "rows": mlperf.BENCHMARKS["llama2_70b_lora"].rows,
                                  "global_batch": 8, "precision": "fp8", "training": "lora"}
    assert (recipe["gpu"]["type"], recipe["gpu"]["count"], recipe["layout"]["dp"]) == ("MI355X", 8, 8)
    quality = recipe["correctness"]["quality_target"]
    assert (quality["metric"], quality["target"], quality["reached"], quality["runs"]) == (
        "eval loss", 0.925, 0.92303, 3)
    assert recipe["correctness"]["result"] == "not_run"  # the submitter's evidence, not ours
    assert {i["field"] for i in recipe["inferred"]} == {"workload.row_tokens", "layout.gradient_accumulation"}
    assert mlperf.SOURCE.target(ROOT, catalog, row) == ROOT / (
        "recipes/llama-2-70b/mi355x/mlperf-v5.1-amd-mi355x-epyc-9575f-pytorch.yaml")


def test_the_cli_wants_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "result_0.txt"
    file.write_text("", encoding="utf-8")
    assert main(["import", "mlperf-training", str(file), "--source-url", "https://example.org"]) == 2
    assert "not a directory" in capsys.readouterr().err


LOCATED = re.compile(r"^\d+:\d+: MLLOG: [^\n]+$")


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.text(max_size=120), st.integers(min_value=1, max_value=10_000))
def test_the_mllog_line_parser_never_crashes(tail: str, line: int) -> None:
    for text in (tail, ":::MLLOG " + tail, ' 0: :::MLLOG {"key": "run_stop", "time_ms": 1, ' + tail):
        try:
            event = mlperf.parse_line(text, line)
        except mlperf.MllogError as exc:
            assert LOCATED.match(str(exc)) and str(exc).startswith(f"{line}:"), str(exc)
        else:
            assert event is None or (isinstance(event.key, str) and isinstance(event.time_ms, int))


@settings(max_examples=100, derandomize=True, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                    max_leaves=8))
def test_any_json_value_after_mllog_is_an_event_or_a_located_message(value: object) -> None:
    import json

    text = ":::MLLOG " + json.dumps(value)
    try:
        mlperf.parse_line(text, 7)
    except mlperf.MllogError as exc:
        assert LOCATED.match(str(exc)) and str(exc).startswith("7:")


def test_a_config_fits_only_its_own_gpu() -> None:
    """GigaComputing's v5.0 folder holds only NVIDIA configs; its MI325X row once matched config_DGXB200_1x8x1...:
    a config named for another GPU type, or without ROCm variables on an AMD GPU (with them on NVIDIA's), fits no
    row of that GPU."""
    amd = mlperf.config_from(mlperf.read_config(CONFIG / "config_MI355X_1x8x1.sh"), "x/config_MI355X_1x8x1.sh")
    assert amd.rocm  # NVTE_USE_HIPBLASLT, USE_HIPBLASLT, ...
    assert mlperf._for_gpu(amd, "MI355X") and not mlperf._for_gpu(amd, "MI325X") and not mlperf._for_gpu(amd, "B200")
    nvidia = mlperf.config_from({"DGXNNODES": "1", "DGXNGPU": "8", "MINIBS": "1", "FP8": "True"},
                                "x/config_DGXB200_1x8x1xtp1pp1cp1.sh")
    assert mlperf._for_gpu(nvidia, "B200") and not mlperf._for_gpu(nvidia, "MI325X")
    assert not mlperf._for_gpu(nvidia, "GB200")  # named for B200: not GB200's
    unnamed = mlperf.config_from({"DGXNNODES": "1"}, "x/config_G893-SD1_1x8x1xtp1pp1cp1.sh")
    assert mlperf._for_gpu(unnamed, "H200") and not mlperf._for_gpu(unnamed, "MI325X")
