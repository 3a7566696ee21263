"""NVIDIA-NeMo/Automodel's docs/performance-summary.mdx: PyTorch-native (FSDP2) runs as `reported` recipes.

The document has sections ("## Pre-Training Performance", "## Fine-Tuning (LoRA) Performance"), each with one
"### System: DGX-H100, Precision: BF16" table whose columns state the layout, the step time and two figures (Model
TFLOP/s and tokens/s per GPU). A row whose model has no catalog card, or whose cells cannot be read, is skipped with
its line and reason, never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from generator import figures
from generator.catalog import Architecture, Catalog
from generator.importers import base
from generator.importers.base import Document, ParallelRow, Parsed, Skip, Source, derive_figures, imported_result, no_command_line
from generator.importers.megatron_bridge import PRECISION_TEXT, SYSTEMS

AUTHOR = "NVIDIA NeMo AutoModel"
AUTHOR_URL = "https://github.com/NVIDIA-NeMo/Automodel"
AUTOMODEL_COMMIT = "36044ad3d139363fb6c73c24af2e7c6b65ec52f6"  # the commit the document and the code were read at
BENCHMARK_PY = "nemo_automodel/recipes/llm/benchmark.py"

SECTION_RE = re.compile(r"^##\s+(.+?)\s*$")
TABLE_RE = re.compile(r"^###\s+System:\s*([\w-]+),\s*Precision:\s*(\w+)\s*$")

COLUMNS = {"model": "model", "#gpus": "gpus", "gbs": "gbs", "mbs": "mbs", "lbs": "lbs", "ga": "ga",
           "seq length": "seq", "tp": "tp", "pp": "pp", "cp": "cp", "ep": "ep", "vp": "vp", "fsdp": "fsdp",
           "kernel optimizations": "kernels", "time per global step (s)": "step_time",
           "model tflops/sec/gpu": "tflops", "tokens/sec/gpu": "tokens"}
INTEGERS = ("gpus", "gbs", "mbs", "lbs", "ga", "seq", "tp", "pp", "cp", "ep", "vp", "fsdp")
SECTIONS = {"pre-training performance": "pretrain", "fine-tuning (lora) performance": "lora"}

# The publication's model names (letters and digits, lower case, without a trailing "2-node") -> catalog model, and
# what the run's checkpoint is where it is another release of the same architecture (the example configs' names).
MODELS = {"deepseekv3671b": "DeepSeek-V3", "kimik2": "Kimi-K2", "qwen3moe30b": "Qwen3-30B-A3B",
          "gptoss120b": "GPT-OSS-120B", "llama370b": "Llama-3-70B", "llama38b": "Llama-3-8B",
          "gptoss20b": "GPT-OSS-20B", "qwen257b": "Qwen2.5-7B", "qwen2532b": "Qwen2.5-32B"}
LORA_CHECKPOINTS = {
    "Llama-3-70B": ("Llama-3.3-70B-Instruct (examples/llm_benchmark/llama3_3/custom_llama3_3_70b_instruct_peft_"
                    "benchmark*.yaml); the same architecture and matrix shapes as Llama-3-70B, whose card counts its "
                    "FLOPs"),
    "Llama-3-8B": ("Llama-3.1-8B (examples/llm_benchmark/llama3_1/llama3_1_8b_peft_benchmark.yaml); the same "
                   "architecture and matrix shapes as Llama-3-8B, whose card counts its FLOPs"),
}
HYBRID = ("a hybrid Mamba-2 / attention / MoE model (NVIDIA Nemotron-H family): the catalog's architecture has no "
          "Mamba layer, so neither N nor the model FLOPs can be recomputed; no catalog card")
UNSUPPORTED = {"nemotronv3super120b": HYBRID, "nemotronv3nano30b": HYBRID, "nemotronv3ultra550b": HYBRID}
# AutoModel's DeepSeek-V3 model (nemo_automodel/components/models/deepseek_v3 at the document's commit) has no
# multi-token-prediction module: the run trains without it.
NO_MTP = {"DeepSeek-V3"}


@dataclass
class Row(ParallelRow):
    line: int
    section: str  # "pretrain" or "lora"
    system: str
    precision: str
    model: str
    model_text: str
    gpus: int
    gbs: int
    mbs: int
    lbs: int
    ga: int
    seq: int
    tp: int
    pp: int
    cp: int
    ep: int | None
    vp: int | None
    fsdp: int
    kernels: str
    step_time: float
    tflops: float
    tokens: float

    def key(self) -> str:
        parts = ["automodel", self.section, SYSTEMS[self.system][0].lower(), f"{self.gpus}gpu", self.precision,
                 f"gbs{self.gbs}"]
        return "-".join(parts)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _number(key: str, text: str) -> int | float | None:
    return base.table_number(key, text, INTEGERS)


def _row(line: int, section: str, system: str, precision: str, values: dict[str, str]) -> Row | Skip:
    text = values["model"]
    key = re.sub(r"[^a-z0-9]", "", re.sub(r"\s*\(\d+\.\d+\)$", "", text.lower()).replace("2-node", ""))
    if key in UNSUPPORTED:
        return Skip(line, f"model {text!r} is {UNSUPPORTED[key]}")
    if key not in MODELS:
        return Skip(line, f"unknown model {text!r} (not in the importer's model map)")
    if system not in SYSTEMS:
        return Skip(line, f"unknown system {system!r}")
    try:
        nums: dict[str, Any] = {k: _number(k, v) for k, v in values.items() if k not in ("model", "kernels")}
    except ValueError as exc:
        return Skip(line, str(exc))
    for name in ("gpus", "gbs", "mbs", "lbs", "ga", "seq", "tp", "pp", "cp", "fsdp", "step_time", "tflops", "tokens"):
        if nums.get(name) is None or nums[name] <= 0:
            return Skip(line, f"{name} {values[name]!r} is not a positive figure")
    row = Row(line=line, section=section, system=system, precision=precision.lower(), model=MODELS[key],
              model_text=text, kernels=values["kernels"], ep=nums["ep"], vp=nums["vp"],
              **{k: nums[k] for k in ("gpus", "gbs", "mbs", "lbs", "ga", "seq", "tp", "pp", "cp", "fsdp",
                                      "step_time", "tflops", "tokens")})
    if row.gpus % (row.tp * row.pp * row.cp):
        return Skip(line, f"{row.gpus} GPUs do not divide by TP x PP x CP = {row.tp * row.pp * row.cp}")
    if row.gbs % (row.mbs * row.dp) or row.gbs != row.lbs * row.dp * row.ga:
        return Skip(line, f"GBS {row.gbs} is not LBS {row.lbs} x DP {row.dp} x GA {row.ga} (local batches per "
                          "step), nor a whole number of micro-batches per rank")
    return row


class Automodel(Source):
    """docs/performance-summary.mdx of NVIDIA-NeMo/Automodel."""

    name = "automodel"
    needs_architecture = False  # the model's card and the GPU type are enough

    def parse(self, text: str) -> Parsed:
        out = Parsed()
        section, table = "", None
        lines = text.splitlines()
        i = 0
        while i < len(lines):
            if m := TABLE_RE.match(lines[i]):
                table = (m.group(1), m.group(2))
            elif m := SECTION_RE.match(lines[i]):
                section, table = m.group(1).lower(), None
            elif lines[i].startswith("|") and i + 1 < len(lines) and base.TABLE_SEPARATOR.match(lines[i + 1]):
                keys = [COLUMNS.get(h.lower(), h) for h in _cells(lines[i])]
                i += 2
                while i < len(lines) and lines[i].startswith("|"):
                    out.table_rows += 1
                    cells = _cells(lines[i])
                    if table is None or section not in SECTIONS:
                        out.skips.append(Skip(i + 1, "table outside a known section and system heading"))
                    elif set(keys) != set(COLUMNS.values()) or len(cells) != len(keys):
                        out.skips.append(Skip(i + 1, f"cells {len(cells)} / header {keys} do not match the format"))
                    else:
                        got = _row(i + 1, SECTIONS[section], table[0], table[1], dict(zip(keys, cells, strict=True)))
                        (out.skips if isinstance(got, Skip) else out.rows).append(got)
                    i += 1
                continue
            i += 1
        return out

    def gpu_type(self, row: Row) -> str:
        return SYSTEMS[row.system][0]


    def build(self, row: Row, catalog: Catalog, document: Document, superseded: list[dict[str, Any]],
              skipped: list[str]) -> dict[str, Any]:
        return build(row, catalog, document, superseded)


def recomputed_tokens(row: Row) -> float:
    """Tokens/s per GPU from the row's own step time: GBS x sequence / (step time x GPUs)."""
    return row.gbs * row.seq / (row.step_time * row.gpus)


def _placement(arch: Architecture, row: Row) -> str | None:
    stages = row.pp * (row.vp or 1)
    if row.pp == 1 or arch.layers % stages == 0:
        return None
    return (f"not stated by the publication: {arch.layers} layers over PP x VP = {stages} virtual stages do not "
            "divide evenly; AutoModel's pipeline splitter places them (its own rule)")


def _tflops_result(row: Row, arch: Architecture, mtp: int | None) -> dict[str, Any]:
    """The published Model TFLOP/s, and its explanation or recorded discrepancy where it differs beyond 0.5%."""
    out: dict[str, Any] = {"published_model_tflops_per_gpu": row.tflops}
    ours = figures.model_tflops_per_gpu(arch, row.seq, row.tokens, mtp_layers=mtp)
    diff = figures.relative_difference(row.tflops, ours)
    if diff <= figures.PUBLISHED_TFLOPS_TOLERANCE:
        return out
    if row.section == "lora":
        frozen = figures.model_tflops_per_gpu(arch, row.seq, row.tokens, mtp_layers=mtp, frozen_base=True)
        if figures.relative_difference(row.tflops, frozen) <= figures.PUBLISHED_TFLOPS_TOLERANCE:
            out["published_model_tflops_note"] = (
                f"A convention of the publication, not an error: its {row.tflops:g} TFLOP/s counts LoRA's frozen base "
                f"without weight gradients, as AutoModel's benchmark recipe does ({BENCHMARK_PY} at commit "
                f"{AUTOMODEL_COMMIT[:8]}: the count times (2 + lora/frozen parameters) / 3). Two thirds of the "
                f"registry's full count gives {frozen:.1f} ({figures.relative_difference(row.tflops, frozen) * 100:.2f}% "
                f"apart; the adapters' own share is not counted); the full count is {ours:.1f}.")
            out["published_model_tflops_convention"] = {"gated_experts": True, "sliding_windows": True,
                                                        "frozen_base": True}
            return out
    if row.model.startswith("GPT-OSS"):
        # The benchmarking recipe's first count (flops_utils.py at 79d0ccfd, 2025-10-02; the table was added at
        # 89e3a9fd, 2025-10-06) took kv_channels as hidden size / heads, not the config's head_dim.
        dim = arch.hidden_size // arch.attention_heads
        theirs = figures.model_tflops_per_gpu(arch, row.seq, row.tokens, mtp_layers=mtp, head_dim=dim)
        off = figures.relative_difference(row.tflops, theirs)
        if off <= figures.PUBLISHED_TFLOPS_TOLERANCE:
            out["published_model_tflops_note"] = (
                f"A convention of the publication, not an error in the table: its {row.tflops:g} TFLOP/s is "
                f"reproduced ({theirs:.1f}, {off * 100:.2f}% apart) by AutoModel's FLOPs count as it stood when the "
                "table was written (nemo_automodel/components/utils/flops_utils.py at commit 79d0ccfd, 2025-10-02; "
                "the table was added at 89e3a9fd, 2025-10-06): gpt_oss_flops took kv_channels as hidden size / "
                f"heads = {arch.hidden_size} / {arch.attention_heads} = {dim} when the config has no kv_channels, "
                f"instead of the config's head_dim {next(iter(arch.attention.values())).head_dim}. The registry "
                f"counts the model's head dimension: {ours:.1f} TFLOP/s (AutoModel's count at 36044ad3 reads "
                "head_dim, as the registry does).")
            out["published_model_tflops_convention"] = {"gated_experts": True, "sliding_windows": True,
                                                        "attention_head_dim": dim}
            return out
    implied = row.tflops / ours * row.tokens
    text = (f"A discrepancy in the publication, not explained: its {row.tokens:g} tokens/s per GPU give {ours:.1f} "
            f"Model TFLOP/s per GPU by the registry's count, {diff * 100:.2f}% from the published {row.tflops:g} "
            f"(tolerance {figures.PUBLISHED_TFLOPS_TOLERANCE * 100:g}%); the published TFLOP/s implies "
            f"{implied:.0f} tokens/s. AutoModel computes its figure with its own FLOPs formulas "
            "(nemo_automodel/components/utils/flops_utils.py), which the table does not state per row.")
    out["published_model_tflops_note"] = text
    out["published_figures_disagree"] = True
    return out


def build(row: Row, catalog: Catalog, document: Document, superseded: list[dict[str, Any]]) -> dict[str, Any]:
    gpu_type, node = SYSTEMS[row.system]
    per_node = min(node, row.gpus)  # a 1-GPU row uses one GPU of a node
    card = catalog.models[row.model]
    arch = card.architecture
    assert arch is not None  # every mapped model's card has its architecture
    vp = row.vp or 1
    ep = row.ep or 1
    mtp = 0 if row.model in NO_MTP else None
    label = f"TP{row.tp} PP{row.pp}" + (f" VP{vp}" if vp > 1 else "") + f" CP{row.cp}" + \
        (f" EP{ep}" if ep > 1 else "") + f" DP{row.dp} FSDP"
    tokens = recomputed_tokens(row)
    kind = "pre-training" if row.section == "pretrain" else "fine-tuning (LoRA)"
    notes = [
        f"Reported by NVIDIA in NeMo AutoModel's performance summary, {kind}, {row.system}, line {row.line} of the "
        f"document; kernels: {row.kernels}; a step of {row.step_time:g} s per global batch.",
        "Not re-measured here. Settings the publication does not state are not invented: recompute is not stated "
        "(null); sequence parallelism, which the schema needs as yes or no, is recorded as off and listed as "
        "inferred; the MoE dispatcher is unset; the data is mock data (the document's note).",
        f"Tokens/s recomputed from the row's own step time: {row.gbs} x {row.seq} / ({row.step_time:g} s x "
        f"{row.gpus}) = {tokens:.1f} per GPU against the published {row.tokens:g} "
        f"({figures.relative_difference(row.tokens, tokens) * 100:.2f}% apart; the step time is published to "
        "3-4 significant digits).",
        f"FSDP {row.fsdp}: FSDP2 shards over {row.fsdp} GPUs. The publication's GA {row.ga} counts local batches "
        f"of {row.lbs} rows per GPU; the layout's gradient accumulation counts micro-batches of {row.mbs}: "
        f"{row.gbs} / ({row.mbs} x DP {row.dp}) = {row.gradient_accumulation}.",
    ]
    if row.model in LORA_CHECKPOINTS and row.section == "lora":
        notes.append(f"The checkpoint is {LORA_CHECKPOINTS[row.model]}.")
    if mtp == 0:
        notes.append("Trained without the multi-token-prediction layer: AutoModel's DeepSeek-V3 model has none "
                     "(nemo_automodel/components/models/deepseek_v3 at the document's commit); its FLOPs are not "
                     "counted.")
    if row.section == "lora":
        notes.append("A fine-tuning (LoRA) row: adapters trained on a frozen base, not pre-training; the MFU below "
                     "counts 4N FLOPs a token (the base has no weight gradients), as the publication's own count does.")
    placement = _placement(arch, row)
    result = imported_result(card, row.tokens, **_tflops_result(row, arch, mtp))
    recipe: dict[str, Any] = {
        "schema_version": 1,
        "model": row.model,
        "gpu": {"type": gpu_type, "memory_gb": catalog.gpus[gpu_type].memory_gb, "count": row.gpus,
                "per_node": per_node, "instance": catalog.instance_for(gpu_type, per_node)},
        "author": {"name": AUTHOR, "url": AUTHOR_URL},
        "status": "reported",
        "stack": {"framework": "nemo-automodel (PyTorch FSDP2)",
                  "source": f"the publication ({document.url}), which names no container or version per row"},
        "workload": {"row_tokens": row.seq, "rows": "mock data (the publication's note)", "global_batch": row.gbs,
                     "precision": row.precision, "training": "lora" if row.section == "lora" else "pre-training"},
        "layout": {
            "label": label,
            "summary": f"{row.gpus} {gpu_type} ({row.system}), {label}, micro-batch {row.mbs}, local batch "
                       f"{row.lbs}, global batch {row.gbs} x {row.seq} tokens, {PRECISION_TEXT[row.precision]}; "
                       "as published.",
            "tp": row.tp, "pp": row.pp, "vpp": vp, "cp": row.cp, "ep": ep, "etp": 1, "dp": row.dp,
            "fsdp": True, "gradient_accumulation": row.gradient_accumulation, "sequence_parallel": False,
            "layer_split": None, "rows_per_microbatch": row.mbs,
            "recompute": None,
            "dispatcher": None, "mtp_layers": mtp, "pipeline_layout": placement,
        },
        "result": result,
        "publication": {"url": document.url, "commit": document.commit, "release": None, "line": row.line,
                        "system": row.system, "superseded": superseded},
        "run": no_command_line(
            f"# Not published as a command line. NVIDIA ran this row with NeMo AutoModel's benchmark recipe\n"
            f"# (examples/llm_benchmark in the repository); the row states: model {row.model_text}, {row.gpus} GPUs,\n"
            f"# GBS {row.gbs}, MBS {row.mbs}, LBS {row.lbs}, GA {row.ga}, sequence {row.seq}, TP {row.tp}, PP {row.pp}, "
            f"CP {row.cp}, EP {row.ep or '-'}, VP {row.vp or '-'}, FSDP {row.fsdp}.\n", document.url, row.line),
        "notes": "\n\n".join(notes) + "\n",
    }
    recipe["inferred"] = [{"field": "layout.sequence_parallel", "reason": "not stated by the publication; recorded "
                           "as off (a yes/no the schema requires)"}]
    if row.gradient_accumulation != row.ga:
        # The publication's GA counts local batches (LBS rows); the layout's counts micro-batches (MBS rows).
        recipe["inferred"].append({"field": "layout.gradient_accumulation", "reason": (
            f"converted, not stated: the publication's GA {row.ga} counts local batches of {row.lbs} rows per GPU; "
            f"in micro-batches of {row.mbs}, GBS {row.gbs} / (MBS {row.mbs} x DP {row.dp}) = "
            f"{row.gradient_accumulation}")})
    derive_figures(recipe, catalog)
    return recipe


SOURCE = Automodel()
