"""A config whose folder lacks the file it sources (generator/importers/mlperf_training.py read_config): University of
Florida's v5.1 llama31_8b configs in hpg.dgxb200x8/ source config_common.sh, which only b200_nemo/ holds, and the
folder's README.md says "Please refer to the implementation directory [b200_nemo](../b200_nemo)". The precision read
there is imported, marked inferred with where it was read (excerpt: SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

from generator.importers import mlperf_training as mlperf

ROOT = Path(__file__).resolve().parents[2]
ROUND = ROOT / "tests/importer/data/mlperf_training/training_results_v5.1"
IMPLS = ROUND / "University-of-Florida/benchmarks/llama31_8b/implementations"
CONFIG = IMPLS / "hpg.dgxb200x8/config_DGXB200_4x8x1xtp1pp1cp2_8b.sh"


def test_the_readme_names_the_implementation_referred_to() -> None:
    assert mlperf.referred_implementations(IMPLS / "hpg.dgxb200x8") == [IMPLS / "b200_nemo"]
    assert mlperf.referred_implementations(IMPLS / "b200_nemo") == []  # no README


def test_a_sourced_file_missing_beside_the_config_is_read_where_the_readme_refers() -> None:
    """config_common.sh line 54 FP8=True, line 91 FP8_RECIPE="tensorwise" -> fp8-cs; the config itself sets TP1 PP1
    CP2, MBS 1, MINIBS 1, 4 nodes x 8: 32 GPUs / (1 x 1 x 2) x 1 = global batch 16."""
    origin: dict[str, Path] = {}
    values = mlperf.read_config(CONFIG, origin=origin)
    assert (values["FP8"], values["FP8_RECIPE"]) == ("True", "tensorwise")
    assert origin["FP8"] == IMPLS / "b200_nemo/config_common.sh" and origin["DGXNNODES"] == CONFIG
    rel = CONFIG.relative_to(ROUND).as_posix()
    referred = mlperf._referred(values, origin, CONFIG, ROUND)
    assert "DGXNNODES" not in referred and "TENSOR_MODEL_PARALLEL" not in referred
    config = mlperf.config_from(values, rel, {}, referred)
    assert (config.tp, config.pp, config.cp, config.mbs, config.global_batch(32)) == (1, 1, 2, 1, 16)
    assert (config.precision, config.precision_stated) == ("fp8-cs", False)
    (field, where), = config.from_defaults
    assert field == "workload.precision"
    assert where == ("FP8=True in University-of-Florida/benchmarks/llama31_8b/implementations/b200_nemo/"
                     "config_common.sh: the config sources config_common.sh, which its own folder lacks, and "
                     "hpg.dgxb200x8/README.md refers to ../b200_nemo for the details")


def test_without_the_referral_the_precision_stays_unstated(tmp_path: Path) -> None:
    folder = tmp_path / "impl" / "a"
    folder.mkdir(parents=True)
    config = folder / CONFIG.name
    config.write_bytes(CONFIG.read_bytes())
    (tmp_path / "impl" / "b").mkdir()
    (tmp_path / "impl" / "b" / "config_common.sh").write_text("export FP8=True\n", encoding="utf-8")
    values = mlperf.read_config(config)
    assert "FP8" not in values
    assert mlperf.config_from(values, "a/c.sh").precision == ""
