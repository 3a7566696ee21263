"""The parts that make a cold check fast keep its answers: remembered architecture figures are the figures, the
builder's shortcut for plain text keys still refuses a key YAML 1.2 reads as a number, and the paused cycle
collector comes back as it was."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from generator import figures
from generator.check import collector_paused
from generator.load import read_yaml
from generator.problems import InputError
from generator.registry import load_catalog

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(ROOT)


def test_remembered_parameter_count_is_the_catalog_count(catalog) -> None:
    # catalog/models/gemma-4-31b.yaml: 30,696,013,824 active parameters (embeddings and linear weights, no norms),
    # from the model's Hugging Face card; the architecture's count must give it, first time and remembered.
    arch = catalog.models["Gemma-4-31B"].architecture
    assert figures.param_count(arch, False) == 30_696_013_824
    assert figures.param_count(arch, False) == 30_696_013_824
    assert figures.param_count(arch, False, total=True) == figures.param_count.__wrapped__(arch, False, total=True)


def test_remembered_figures_follow_every_argument(catalog) -> None:
    for card in catalog.models.values():
        arch = card.architecture
        for seq in (4096, 8192):
            for mtp in (None, 0):
                for causal in (True, False):
                    assert figures.model_flops_per_token(arch, seq, mtp, causal=causal) == \
                        figures.model_flops_per_token.__wrapped__(arch, seq, mtp, causal=causal)
        assert figures.param_count(arch, True) == figures.param_count.__wrapped__(arch, True)


def test_a_remembered_architecture_leaves_with_its_object(catalog) -> None:
    arch = next(iter(catalog.models.values())).architecture.model_copy()  # equal values, another object
    figures.param_count(arch, False)
    key = id(arch)
    assert key in figures._PER_ARCHITECTURE
    del arch
    gc.collect()
    assert key not in figures._PER_ARCHITECTURE  # so a later object at that id starts from nothing


def test_plain_key_that_yaml_1_2_reads_as_a_number_is_refused(tmp_path: Path) -> None:
    # '1e3' is text to YAML 1.1 (no '.' before the exponent) but 1000.0 to YAML 1.2; quoted, it is text to both.
    path = tmp_path / "keys.yaml"
    path.write_text("a: 1\n1e3: 2\n'1e4': 3\n")
    with pytest.raises(InputError) as refused:
        read_yaml(path, "keys.yaml")
    assert [(p.line, p.message) for p in refused.value.problems] == [
        (2, "a key must be text, and YAML reads '1e3' as the number 1000.0; quote it")]
    path.write_text("a: 1\n'1e3': 2\n")
    assert read_yaml(path, "keys.yaml").data == {"a": 1, "1e3": 2}


@pytest.mark.parametrize("was_on", [True, False])
def test_collector_comes_back_as_it_was(was_on: bool) -> None:
    before = gc.isenabled()
    (gc.enable if was_on else gc.disable)()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert gc.isenabled() is was_on
    finally:
        (gc.enable if before else gc.disable)()
