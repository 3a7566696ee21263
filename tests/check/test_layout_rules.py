"""Layout rules: each contradiction between two statements of one recipe is exactly one located problem.

Every case is a committed recipe with one line changed, checked in a temporary registry; the test asserts the whole
list of problems (path, line, field, message), so a rule that also fires elsewhere, or twice, fails here."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from suitehelpers import check_registry

from generator.problems import Problem
from generator.registry import load_registry

ROOT = Path(__file__).resolve().parents[2]
REF = "recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml"
LLAMA_8B = "recipes/llama-3-8b/b200/mb-25.09-dgx-b200-8gpu-fp8-cs.yaml"
GPT_OSS = "recipes/gpt-oss-120b/h100/mb-25.11-dgx-h100-64gpu-bf16.yaml"
QWEN_30B = "recipes/qwen3-30b-a3b/b200/mb-25.09-dgx-b200-8gpu-fp8-cs-tokendrop.yaml"
DEEPSEEK = "recipes/deepseek-v3/b200/mb-25.11-dgx-b200-256gpu-fp8-mx-mtp.yaml"


def _registry(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "catalog", tmp_path / "catalog")
    (tmp_path / "recipes").mkdir()
    return tmp_path


def _line_of(text: str, line: str) -> int:
    (number,) = [n for n, ln in enumerate(text.splitlines(), 1) if ln == line]
    return number


def check_edited(tmp_path: Path, recipe: str, old: str, new: str, *more: str) -> tuple[str, list[Problem]]:
    """The committed recipe with `old` (whole lines, once) replaced by `new` (and each further old, new pair in
    `more`), checked alone; (text, problems)."""
    text = (ROOT / recipe).read_text(encoding="utf-8")
    for before, after in zip((old, *more[::2]), (new, *more[1::2]), strict=True):
        assert text.count(before) == 1, before
        text = text.replace(before, after)
    root = _registry(tmp_path)
    target = root / recipe
    target.parent.mkdir(parents=True)
    target.write_text(text, encoding="utf-8")
    return text, check_registry(load_registry(root))


CASES = {
    # name: (recipe, old line, new line(s), the line the problem is at, field, message)
    "ga_vs_global_batch": (
        REF, "  dp: 1\n", "  dp: 1\n  gradient_accumulation: 64\n", "  gradient_accumulation: 64",
        "layout.gradient_accumulation", "gradient accumulation 64 x micro-batch 1 x dp 1 = 64 rows, but global_batch "
        "is 128 (where a publication states this itself, record its figure as publication.stated_gradient_accumulation)"),
    "ga_publication_unrecorded": (
        GPT_OSS, "  stated_gradient_accumulation: 2\n", "", "  gradient_accumulation: 2",
        "layout.gradient_accumulation", "gradient accumulation 2 x micro-batch 4 x dp 16 = 128 rows, but global_batch "
        "is 512 (where a publication states this itself, record its figure as publication.stated_gradient_accumulation)"),
    "ga_stated_other_figure": (
        GPT_OSS, "  stated_gradient_accumulation: 2\n", "  stated_gradient_accumulation: 4\n",
        "  stated_gradient_accumulation: 4", "publication.stated_gradient_accumulation",
        "the publication's stated gradient accumulation 4 is not layout.gradient_accumulation (2)"),
    "ga_stated_without_contradiction": (
        LLAMA_8B, "  system: DGX-B200\n", "  system: DGX-B200\n  stated_gradient_accumulation: 8\n",
        "  stated_gradient_accumulation: 8", "publication.stated_gradient_accumulation",
        "gradient accumulation 8 agrees with global_batch / (micro-batch x dp); record the publication's statement "
        "only where it contradicts the row"),
    "ga_unstated_consistent": (
        LLAMA_8B, "  gradient_accumulation: 8\n", "  gradient_accumulation: null\n", "", None, None),
    "ep_on_dense": (
        REF, "  ep: 1\n", "  ep: 2\n", "  ep: 2", "layout.ep",
        "ep 2 but Gemma-4-31B is a dense model (no moe in its catalog architecture): expert parallelism needs experts"),
    "etp_on_dense": (
        REF, "  etp: 1\n", "  etp: 2\n", "  etp: 2", "layout.etp",
        "etp 2 but Gemma-4-31B is a dense model (no moe in its catalog architecture): expert tensor parallelism needs "
        "experts"),
    "dispatcher_on_dense": (
        REF, "  dispatcher: null\n", "  dispatcher: deepep\n", "  dispatcher: deepep", "layout.dispatcher",
        "dispatcher deepep but Gemma-4-31B is a dense model (no moe in its catalog architecture): a token dispatcher "
        "routes tokens to experts"),
    "dispatcher_on_moe": (QWEN_30B, "  dispatcher: null\n", "  dispatcher: alltoall\n", "", None, None),
    "vpp_without_pp": (
        LLAMA_8B, "  vpp: 1\n", "  vpp: 2\n", "  vpp: 2", "layout.vpp",
        "vpp 2 needs pp > 1 (virtual pipeline stages interleave pipeline stages; pp is 1)"),
    "label_other_layout": (
        REF, "  label: TP2 PP4 DP1\n", "  label: TP4 PP2 DP1\n", "  label: TP4 PP2 DP1", "layout.label",
        "the label says 'TP4', 'PP2', but layout.tp is 2, layout.pp is 4"),
    "label_switch": (
        LLAMA_8B, "  label: TP1 PP1 CP1 DP8\n", "  label: TP1 PP1 CP1 DP8 FSDP\n", "  label: TP1 PP1 CP1 DP8 FSDP",
        "layout.label", "the label says 'FSDP', but layout.fsdp is false"),
    "label_implied_ga": (
        LLAMA_8B, "  label: TP1 PP1 CP1 DP8\n", "  label: TP1 PP1 CP1 DP8 GA4\n", "  label: TP1 PP1 CP1 DP8 GA4",
        "layout.label", "the label says 'GA4', but layout.gradient_accumulation is 8"),
    "label_in_prose": (REF, "  label: TP2 PP4 DP1\n", "  label: the split-13 layout\n", "", None, None),
    "dataset_row_tokens": (
        REF, "      row_tokens: 8192\n", "      row_tokens: 4096\n", "      row_tokens: 4096",
        "workload.dataset.build.row_tokens", "the built rows hold 4096 tokens, but workload.row_tokens is 8192"),
    "recompute_method": (
        REF, "    method: null\n", "    method: block\n", "    method: block", "layout.recompute.method",
        "method block is a full-recompute method, but granularity is selective"),
    "recompute_layers": (
        REF, "    num_layers: null\n", "    num_layers: 2\n", "    num_layers: 2", "layout.recompute.num_layers",
        "num_layers 2 counts fully recomputed layers, but granularity is selective"),
    "recompute_modules": (
        LLAMA_8B, "  recompute: null\n", "  recompute:\n    granularity: none\n    modules: [mlp]\n", "    modules: [mlp]",
        "layout.recompute.modules", "modules are recomputed under selective recompute, but granularity is none"),
    "layer_split_vpp": (
        REF, "  vpp: 1\n", "  vpp: 2\n", "  layer_split:", "layout.layer_split",
        "13 layers on the first stage, 15 layers on the last stage do not split into vpp 2 equal chunks; state an "
        "uneven placement in pipeline_layout"),
    "layer_split_vpp_with_placement": (
        REF, "  vpp: 1\n", "  vpp: 2\n  pipeline_layout: first stage 7 + 6 layers, middle 8 + 8, last 8 + 7\n", "",
        None, None),
}


@pytest.mark.parametrize("name", CASES)
def test_one_change_is_one_problem_at_its_line(name: str, tmp_path: Path) -> None:
    recipe, old, new, at, field, message = CASES[name]
    text, problems = check_edited(tmp_path, recipe, old, new)
    if field is None:
        assert problems == []  # a consistent change: nothing to report
        return
    ((path, line, col, got_field, got_message),) = [(p.path, p.line, p.col, p.field, p.message) for p in problems]
    assert (path, line, got_field, got_message) == (recipe, _line_of(text, at), field, message)
    assert col > 1


def test_ep_must_divide_the_routed_experts(tmp_path: Path) -> None:
    # With 100 routed experts (a catalog edit), EP 8 leaves ranks holding 12.5 experts.
    text = (ROOT / QWEN_30B).read_text(encoding="utf-8")
    root = _registry(tmp_path)
    card = root / "catalog/models/qwen3-30b-a3b.yaml"
    card.write_text(card.read_text(encoding="utf-8").replace("experts: 128", "experts: 100", 1), encoding="utf-8")
    (root / QWEN_30B).parent.mkdir(parents=True)
    (root / QWEN_30B).write_text(text, encoding="utf-8")
    problems = check_registry(load_registry(root))
    layout = [(p.line, p.message) for p in problems if p.field.startswith("layout.")]
    assert layout == [(_line_of(text, "  ep: 8"), "ep 8 does not divide the model's 100 routed experts")]


def test_vpp_with_pp_1_is_not_also_an_uneven_split(tmp_path: Path) -> None:
    # 32 layers over pp x vpp = 1 x 3 do not divide, but the one contradiction is VPP without a pipeline.
    _, problems = check_edited(tmp_path, LLAMA_8B, "  vpp: 1\n", "  vpp: 3\n")
    assert [p.field for p in problems] == ["layout.vpp"]


def test_global_batch_without_ga_must_be_whole_micro_batches(tmp_path: Path) -> None:
    text, problems = check_edited(tmp_path, LLAMA_8B, "  gradient_accumulation: 8\n", "  gradient_accumulation: null\n",
                                  "  global_batch: 128\n", "  global_batch: 120\n")
    assert [(p.line, p.field, p.message) for p in problems] == [
        (_line_of(text, "  global_batch: 120"), "workload.global_batch",
         "global batch 120 is not a multiple of micro-batch x dp = 16")]


def _layout_problems(problems: list[Problem]) -> list[tuple[int, str, str]]:
    return [(p.line, p.field, p.message) for p in problems if p.field.startswith("layout.")]


def test_more_mtp_layers_than_the_model_has(tmp_path: Path) -> None:
    # Two MTP layers on DeepSeek-V3 (one) is another model (its published TFLOP/s then disagree too, as they should).
    text, problems = check_edited(tmp_path, DEEPSEEK, "  mtp_layers: null\n", "  mtp_layers: 2\n")
    assert _layout_problems(problems) == [
        (_line_of(text, "  mtp_layers: 2"), "layout.mtp_layers",
         "mtp_layers 2 but DeepSeek-V3 has 1 multi-token-prediction layer")]


def test_fewer_mtp_layers_than_the_model_has_is_a_choice(tmp_path: Path) -> None:
    _, problems = check_edited(tmp_path, DEEPSEEK, "  mtp_layers: null\n", "  mtp_layers: 0\n")
    assert _layout_problems(problems) == []
