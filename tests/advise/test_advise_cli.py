"""`python -m generator advise` as a user runs it (a process of its own, forked: suitehelpers.generator_cli), on a
small registry: the catalogs, three models' recipes (Llama-3.1-8B, Llama-3-8B, the playbook's 1B) and the playbook
1B's failed layouts. The tests that read the recipes and fit (2-4 s each) are marked slow; the refusals the catalogs
alone decide are not."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from suitehelpers import ROOT, generator_cli

from generator.advise.report import JSON_KEYS

LAYOUT_KEYS = {"tp", "pp", "vpp", "cp", "dp", "ep", "zero", "fsdp", "recompute", "micro_batch", "global_batch"}
RANGE_KEYS = {"predicted", "low", "high"}


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("advise")
    for part in ("catalog", "schema"):
        shutil.copytree(ROOT / part, root / part)
    for model in ("llama-3.1-8b", "llama-3-8b", "playbook-llama-1b"):
        shutil.copytree(ROOT / "recipes" / model, root / "recipes" / model)
    (root / "failed").mkdir()
    shutil.copyfile(ROOT / "failed/playbook-llama-1b.yaml", root / "failed/playbook-llama-1b.yaml")
    return root


def advise(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return generator_cli("advise", *args, cwd=root)


@pytest.mark.slow
def test_json_has_the_issue_keys_and_every_figure_is_a_labelled_prediction(registry: Path) -> None:
    done = advise(registry, "Llama-3.1-8B", "--gpu", "H100", "--gpus", "16", "--json", "--top", "5")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert len(answer) == 5
    for item in answer:
        assert tuple(item) == JSON_KEYS == ("layout", "memory_gb_per_gpu", "fits", "tokens_per_s_per_gpu", "nearest",
                                            "basis")
        assert set(item["layout"]) == LAYOUT_KEYS
        layout = item["layout"]
        assert layout["tp"] * layout["pp"] * layout["cp"] * layout["dp"] == 16
        for figure in ("memory_gb_per_gpu", "tokens_per_s_per_gpu"):
            assert set(item[figure]) == RANGE_KEYS
            assert item[figure]["low"] <= item[figure]["predicted"] <= item[figure]["high"]
        assert isinstance(item["fits"], bool)
        assert item["basis"].startswith("predicted, not measured.")
        assert item["nearest"] and all((registry / "recipes" / f"{rid}.yaml").is_file() for rid in item["nearest"])
    # Ranked: the layouts that fit first, by predicted tokens/s.
    fitting = [i["tokens_per_s_per_gpu"]["predicted"] for i in answer if i["fits"]]
    assert fitting == sorted(fitting, reverse=True)


@pytest.mark.slow
def test_tokens_add_cost_and_days(registry: Path) -> None:
    done = advise(registry, "llama-3.1-8b", "--gpu", "h100", "--gpus", "8", "--tokens", "1T", "--price", "2",
                  "--json", "--top", "1")
    assert done.returncode == 0, done.stderr
    (item,) = json.loads(done.stdout)
    cost = item["cost"]
    tps = item["tokens_per_s_per_gpu"]["predicted"]
    assert cost["gpu_hours_predicted"] == pytest.approx(1e12 / tps / 3600, rel=1e-3)
    assert cost["days_predicted"] == pytest.approx(cost["gpu_hours_predicted"] / 8 / 24, rel=1e-3)
    assert cost["usd_predicted"] == pytest.approx(cost["gpu_hours_predicted"] * 2, rel=1e-3)


@pytest.mark.slow
def test_text_says_predicted(registry: Path) -> None:
    done = advise(registry, "Llama-3.1-8B", "--gpu", "H100", "--gpus", "8", "--top", "3")
    assert done.returncode == 0, done.stderr
    assert "PREDICTED tokens/s per GPU (none of these figures is measured)" in done.stdout
    assert "nearest measured: llama-3.1-8b/h100/" in done.stdout
    assert "\nBasis: predicted, not measured." in done.stdout


@pytest.mark.parametrize(("args", "line"), [
    (("DeepSeek-V3", "--gpu", "H100", "--gpus", "64"),
     "catalog/models/deepseek-v3.yaml:1: DeepSeek-V3: the card is not a dense attention + FFN model"),
    pytest.param(("Llama-3.1-8B", "--gpu", "H100-PCIe", "--gpus", "8"),
                 "catalog/gpus.yaml:16: H100-PCIe: 0 dense steady-state row(s) of this GPU type in the registry, at "
                 "least 3 needed", marks=pytest.mark.slow),  # counts the rows: reads every recipe
    (("No-Such-Model", "--gpu", "H100", "--gpus", "8"), "catalog/models: No-Such-Model: no model card of this name"),
    (("Llama-3.1-8B", "--gpu", "Z9", "--gpus", "8"), "catalog/gpus.yaml: Z9: no GPU type of this name"),
])
def test_refusals_are_one_located_line(registry: Path, args: tuple[str, ...], line: str) -> None:
    done = advise(registry, *args)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(line), done.stderr


def test_a_refused_line_points_at_the_card(registry: Path) -> None:
    path, number = "catalog/models/deepseek-v3.yaml", 1
    assert (registry / path).read_text().splitlines()[number - 1].startswith("DeepSeek-V3:")
    assert (registry / "catalog/gpus.yaml").read_text().splitlines()[15].startswith("H100-PCIe:")


@pytest.mark.slow
def test_validate_hold_out_one_model(registry: Path) -> None:
    done = advise(registry, "--validate", "--hold-out-model", "playbook-llama-1b", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert set(result) == {"oom_accuracy", "memory_mape", "tokens_mape", "rank_spearman", "rows"}
    assert {r["model"] for r in result["rows"]} == {"Playbook-Llama-1B"}
    assert result["oom_accuracy"]["n"] == 531 + 267  # every worked and failed layout of the 1B
    bad = advise(registry, "--validate", "--hold-out-model", "Llama-2-7B")
    assert bad.returncode == 1 and bad.stderr.startswith("--hold-out-model: Llama-2-7B: not a model with at least 20")


def test_without_a_question_it_says_what_it_needs(registry: Path) -> None:
    done = advise(registry, "Llama-3.1-8B")
    assert done.returncode == 2 and "advise needs --gpu, --gpus (or --validate)" in done.stderr
