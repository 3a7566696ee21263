"""Where MLPerf submitters keep their configs (generator/importers/mlperf_training.py benchmark_folders, match_config):
not every submitter follows NVIDIA's benchmarks/<benchmark>/implementations/<name>/ layout. Nebius's v5.1 llama2_70b_lora
folder has no implementations/ and keeps one config folder per system (configs/nebius_b300_n1/...); its B300 system
ran a config named config_DGXB200_... (excerpt: SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.importers import mlperf_training as mlperf

ROOT = Path(__file__).resolve().parents[2]
ROUND = ROOT / "tests/importer/data/mlperf_training/training_results_v5.1"
NEBIUS = "Nebius/benchmarks/llama2_70b_lora"


@pytest.mark.parametrize(("folder", "benchmark"), [
    ("gpt3.4.28", "gpt3"),  # smc, v4.0
    ("llama2-70b_lora", "llama2_70b_lora"),  # smc, v4.0
    ("llama2_70b", "llama2_70b_lora"),  # Fujitsu, v4.1
    ("llama3_8b", "llama31_8b"),  # HPE, v5.1
    ("llama31_405b", "llama31_405b"),
    ("bert", "bert"),
])
def test_a_folder_name_names_its_benchmark(folder: str, benchmark: str) -> None:
    assert mlperf._folder_benchmark(folder) == benchmark


def test_configs_of_a_benchmark_folder_without_implementations() -> None:
    assert mlperf.benchmark_folders(ROUND, "Nebius", "llama2_70b_lora") == [ROUND / NEBIUS]
    paths = sorted(c.path for _, c in mlperf._configs(ROUND, "Nebius", "llama2_70b_lora"))
    assert paths == [f"{NEBIUS}/config_DGXB200_1x8x1xtp1pp1cp1.sh",
                     f"{NEBIUS}/configs/nebius_b200_n1/config_DGXB200_1x8x1xtp1pp1cp1_fp4.sh",
                     f"{NEBIUS}/configs/nebius_b300_n1/config_DGXB200_1x8x1xtp1pp1cp1.sh"]


def test_a_config_in_the_folder_named_as_the_system_breaks_the_tie() -> None:
    """nebius_b200_n1 (1 x 8 B200, global batch 8, as its log states): all three configs have 1 node x 8 GPUs and 8 /
    (TP1 x PP1 x CP1) x MINIBS 1 = 8, but the top-level one states FP8 and the other two FP4 (config_common_fp4.sh:
    FP4=True, FP4_RECIPE="nvfp4"); the one in configs/nebius_b200_n1/ is the one that ran."""
    config, how = mlperf.match_config(ROUND, "Nebius", "nebius_b200_n1", "llama2_70b_lora", 1, 8, 8, "B200")
    assert config is not None, how
    assert config.path == f"{NEBIUS}/configs/nebius_b200_n1/config_DGXB200_1x8x1xtp1pp1cp1_fp4.sh"
    assert config.precision == "nvfp4" and how.endswith("chosen by the config named for B200 and the config's own "
                                                        "folder named as the system)")


def test_a_config_named_for_another_gpu_counts_in_the_folder_named_as_the_system() -> None:
    """nebius_b300_n1 (1 x 8 B300): every config is named for B200, so none is made for B300; the one in
    configs/nebius_b300_n1/ is taken, and the recipe's configuration note says why."""
    config, how = mlperf.match_config(ROUND, "Nebius", "nebius_b300_n1", "llama2_70b_lora", 1, 8, 8, "B300")
    assert config is not None, how
    assert config.path == f"{NEBIUS}/configs/nebius_b300_n1/config_DGXB200_1x8x1xtp1pp1cp1.sh"
    assert (config.tp, config.cp, config.mbs, config.precision) == (1, 1, 1, "nvfp4")
    assert "named as the system (the config's name names another GPU than B300)" in how
    # A system with no folder of its own gets no config named for another GPU.
    none, why = mlperf.match_config(ROUND, "Nebius", "nebius_b300_n2", "llama2_70b_lora", 1, 8, 8, "B300")
    assert none is None and why.startswith(f"none of 3 config_*.sh under {NEBIUS}/ has 1 node(s) x 8 GPUs")


def test_a_config_named_for_the_h200_nvl_is_not_an_sxm_h200s() -> None:
    """Dell's v5.0 llama2_70b_lora configs: config_XE7740lx8H200-NVL-141GB_... ran on the XE7740 (H200 NVL), and
    config_XE9680lx8H200-SXM-141GB_... on the XE9680L (H200 SXM); "H200" inside "H200-NVL" names no SXM part."""
    nvl = mlperf.config_from({"DGXNNODES": "1"}, "x/config_XE7740lx8H200-NVL-141GB_1x8x2xtp1pp1cp2.sh")
    sxm = mlperf.config_from({"DGXNNODES": "1"}, "x/config_XE9680lx8H200-SXM-141GB_1x8x2xtp1pp1cp2.sh")
    assert mlperf._for_gpu(nvl, "H200-NVL") and not mlperf._for_gpu(nvl, "H200")
    assert mlperf._for_gpu(sxm, "H200") and not mlperf._for_gpu(sxm, "H200-NVL")


def test_a_maxtext_submission_is_skipped_for_its_int8(tmp_path: Path) -> None:
    """Google's v4.0 gpt3 rows ship MaxText launch scripts, not config_*.sh; v5p-1024.sh (SOURCES.md) states its
    layout but quantization=int8, which Precision has no value for: the skip reason says so."""
    impl = tmp_path / "Google/benchmarks/gpt3/implementations/maxtext"
    impl.mkdir(parents=True)
    script = ROOT / "tests/importer/data/mlperf_training/maxtext/v5p-1024.sh"
    (impl / script.name).write_bytes(script.read_bytes())
    config, why = mlperf.match_config(tmp_path, "Google", "cloud-tpu-v5p-1024-maxtext", "gpt3", 128, 4, 1536, "TPU-v5p")
    assert config is None
    assert why.endswith("; its 1 MaxText launch script(s) (v5p-1024.sh) set quantization=int8, a precision the schema "
                        "has no value for")


def test_the_logged_gradient_accumulation_breaks_a_tie(tmp_path: Path) -> None:
    """Lambda's v4.1 lambda_1cc_n2 llama2_70b_lora row: 2 x 8 H100, global batch 8 and gradient_accumulation_steps 2
    as its logs state. Three configs give 8: TP4 CP1 MINIBS 2 (DP4), TP4 CP2 MINIBS 4 (DP2), TP8 CP1 MINIBS 4 (DP2),
    all with MBS 1 (config_common_1cc.sh); their accumulation 8 / (1 x DP) is 2, 4 and 4: only the first is the run's.
    Without the logged accumulation the row stays ambiguous."""
    impl = tmp_path / "Lambda/benchmarks/llama2_70b_lora/implementations/nemo/configs"
    impl.mkdir(parents=True)
    for path in (ROOT / "tests/importer/data/mlperf_training/lambda_v4.1_configs").iterdir():
        (impl / path.name).write_bytes(path.read_bytes())
    system = "lambda_1cc_n2_H100-SXM-80GB_ngc24.04_nemo"
    config, how = mlperf.match_config(tmp_path, "Lambda", system, "llama2_70b_lora", 2, 8, 8, "H100", 2)
    assert config is not None and config.path.endswith("/config_1cc_2x8x2xtp4pp1cp1.sh"), how
    assert (config.tp, config.cp, config.mbs, config.minibs) == (4, 1, 1, 2)
    assert "the gradient accumulation the log states (2)" in how
    none, why = mlperf.match_config(tmp_path, "Lambda", system, "llama2_70b_lora", 2, 8, 8, "H100")
    assert none is None and why.startswith("3 configs fit 2 x 8 GPUs and global batch 8 but differ")


def test_a_config_beside_implementations(tmp_path: Path) -> None:
    """GigaComputing's v5.0 llama2_70b_lora folder keeps NVIDIA configs under implementations/pytorch/ and its MI325X
    config, config_MI325X_1x8x1.sh (SOURCES.md), beside implementations/: that one is the MI325X row's (1 x 8 GPUs,
    8 / (TP1 x PP1 x CP1) x MINIBS 1 = global batch 8, FP8=True, ROCm variables)."""
    folder = tmp_path / "GigaComputing/benchmarks/llama2_70b_lora"
    (folder / "implementations/pytorch").mkdir(parents=True)
    source = ROOT / "tests/importer/data/mlperf_training/gigacomputing_v5.0/config_MI325X_1x8x1.sh"
    (folder / source.name).write_bytes(source.read_bytes())
    config, how = mlperf.match_config(tmp_path, "GigaComputing", "G893-ZX1-AAX2_pytorch", "llama2_70b_lora", 1, 8, 8,
                                      "MI325X", 1)
    assert config is not None, how
    assert config.path == "GigaComputing/benchmarks/llama2_70b_lora/config_MI325X_1x8x1.sh"
    assert (config.tp, config.cp, config.mbs, config.precision, config.rocm) == (1, 1, 1, "fp8", True)
