"""Preflight pieces on the real catalog and the reference recipe's real run script."""

from __future__ import annotations

from runner_support import REFERENCE, ROOT

from generator.load import load_recipe
from generator.registry import load_catalog
from runner.preflight import detect_gpus, entry_points, gpu_type, script_env, visible

DEVICES = [(0, "NVIDIA H200", "GPU-aaaa1111"), (1, "NVIDIA H200", "GPU-bbbb2222"), (2, "NVIDIA H200", "GPU-cccc3333")]


def test_nvml_product_names_map_to_catalog_types() -> None:
    catalog = load_catalog(ROOT)
    assert gpu_type("NVIDIA H100 80GB HBM3", catalog) == "H100"
    assert gpu_type("NVIDIA H200", catalog) == "H200"
    assert gpu_type("nvidia a100-sxm4-80gb", catalog) == "A100"  # case as some drivers print it
    assert gpu_type("NVIDIA L4", catalog) is None
    # Every name the catalog lists maps back to its own type (no name claimed by two GPUs).
    for key, spec in catalog.gpus.items():
        for name in spec.nvml_names:
            assert gpu_type(name, catalog) == key


def test_cuda_visible_devices_as_cuda_reads_it() -> None:
    assert visible(DEVICES, None) == DEVICES
    assert visible(DEVICES, "") == []
    assert [d[0] for d in visible(DEVICES, "2,0")] == [2, 0]  # the listed order
    assert [d[0] for d in visible(DEVICES, "1,-1,2")] == [1]  # ends at the first entry naming no device
    assert [d[0] for d in visible(DEVICES, "GPU-cccc,GPU-aaaa1111")] == [2, 0]  # UUIDs and unique prefixes
    assert visible(DEVICES, "GPU-") == []  # a prefix of several devices names none
    assert visible(DEVICES, "0,0") == []  # a device twice: no device at all
    assert visible(DEVICES, "7") == []


def test_the_reference_script_needs_hf_ckpt_and_sft_data_and_two_entry_points() -> None:
    recipe = load_recipe(REFERENCE).recipe
    reads, sets = script_env(recipe.run)
    assert reads - sets - set(recipe.env) == {"HF_CKPT", "SFT_DATA"}
    assert entry_points(recipe.run) == [("file", "miles/utils/external_utils/model_args_utils.py"),
                                        ("file", "train.py")]


def test_defaults_and_torchrun_options_are_understood() -> None:
    reads, _ = script_env('echo "${OUT:-/tmp}" "${A:?}" $B\nC=1 ; echo $C\nfor D in 1 2; do echo $D; done')
    assert reads == {"B", "C", "D"}  # OUT has a default, A only tests; C and D are set by the script
    assert entry_points("torchrun --nproc_per_node 8 --master-port=29500 pretrain_gpt.py --tp 2\n"
                        "python -m runner.engine train x.yaml") == [("file", "pretrain_gpt.py"),
                                                                     ("module", "runner.engine")]


def test_this_machine_without_nvml_falls_back_to_torch_and_says_why() -> None:
    found = detect_gpus()  # CI and this checkout's CPU machines: no NVML library, CPU torch
    if found.count == 0:
        assert found.source == "none" and "NVML" in (found.error or "") and "torch" in (found.error or "")
    else:  # a GPU machine: NVML (or torch) named its GPUs
        assert found.source in ("nvml", "torch") and all(found.names)
