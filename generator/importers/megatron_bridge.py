"""Megatron-Bridge's performance tables (docs/performance-summary*.md) as `reported` recipes.

The document holds release sections ("## 25.11 NeMo Container"), each with tables either per system
("#### System: DGX-H100", a Model column) or per model ("#### Model: LLAMA3_70B", a System column), with or
without Precision and GA columns. A cell "a (b)" gives a second configuration of the row: the row becomes two
recipes, the second taking b wherever a cell has one. A row whose cells do not match its header, or whose
figures cannot be read, is reported with its line and skipped, never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator import figures
from generator.catalog import Architecture, Catalog
from generator.importers import base
from generator.importers.base import Document, ParallelRow, Parsed, Skip, Source, derive_figures, drop_repeats, imported_result

RELEASE_RE = re.compile(r"^##\s+(\d+\.\d+(?:\.\d+)?)\s+NeMo Container\s*$")
HEADING_RE = re.compile(r"^####\s+(System|Model):\s*(.+?)\s*$")
SECTION_RE = re.compile(r"^###\s+(.+?)\s*$")
ALT_RE = re.compile(r"^(.*?)\s*\(([^()]*)\)\s*$")

# Header text (lower case, spaces squeezed) -> field key.
COLUMNS = {
    "model": "model", "system": "system", "#-gpus": "gpus", "precision": "precision", "gbs": "gbs",
    "mbs": "mbs", "sequence length": "seq", "fsdp": "fsdp", "tp": "tp", "pp": "pp", "cp": "cp", "vp": "vp",
    "ep": "ep", "ga": "ga", "tokens / sec / gpu": "tokens", "model tflop / sec / gpu": "tflops",
}
REQUIRED = ("model", "system", "gpus", "gbs", "mbs", "seq", "tp", "pp", "cp", "tokens", "tflops")
INTEGER_KEYS = ("gpus", "gbs", "mbs", "seq", "fsdp", "tp", "pp", "cp", "vp", "ep", "ga")

# The publication's system names: GPU type of the catalog and GPUs per node (GB200/GB300 trays hold 4).
SYSTEMS = {"DGX-H100": ("H100", 8), "DGX-B200": ("B200", 8), "DGX-B300": ("B300", 8),
           "DGX-GB200": ("GB200", 4), "DGX-GB300": ("GB300", 4)}

# The publication's model names (letters and digits only, lower case) -> catalog model.
MODELS = {"llama38b": "Llama-3-8B", "llama370b": "Llama-3-70B", "llama31405b": "Llama-3.1-405B",
          "deepseekv3": "DeepSeek-V3", "gptoss120b": "GPT-OSS-120B", "qwen330ba3b": "Qwen3-30B-A3B",
          "qwen3235ba22b": "Qwen3-235B-A22B", "kimik2": "Kimi-K2", "nemotron3nano": "Nemotron-3-Nano-30B-A3B",
          "nemotron3super": "Nemotron-3-Super-120B-A12B", "nemotron35lightning": "Nemotron-3.5-Lightning-30B-A3B"}

# Models the publication names whose architecture the catalog cannot describe from a source: their rows are skipped
# with this reason (a card needs the architecture the FLOPs count is recomputed from; none is invented).
UNSOURCED_HYBRID = ("a hybrid Mamba-2 / attention / MoE model (NVIDIA Nemotron-H family) whose config.json (block "
                    "pattern, Mamba-2 sizes, LatentMoE width, MTP layer) was not found in the stored public sources; "
                    "Megatron-Bridge's recipes read it from Hugging Face at run time (AutoBridge.from_hf_pretrained), "
                    "so N and the model FLOPs per token cannot be recomputed; no catalog card")
UNSUPPORTED_MODELS = {
    "nemotron3ultra": UNSOURCED_HYBRID,
    "deepseekv4flash": "DeepSeek-V4 Flash: its configuration is published (NeMo AutoModel's DeepseekV4Config, "
                       "whose defaults are Flash's: 43 layers, hidden 4096, 64 heads of 512, one KV head, 256 experts "
                       "top-6), but its compressed sparse / heavily compressed attention with a top-512 indexer, "
                       "grouped low-rank output projection, hyper-connections (hc_mult 4) and hash-routed layers "
                       "are not expressible in the catalog's architecture, so its FLOPs per token cannot be "
                       "recomputed; no catalog card",
}

# Multi-token-prediction depths a model's performance recipe trains where the table does not say (its qualifier
# would): (depths, where that is set). Nemotron 3 Super's one MTP layer runs at two depths, its weights shared.
MTP_DEPTHS = {"Nemotron-3-Super-120B-A12B": (
    2, "Megatron-Bridge's Nemotron 3 Super recipe (src/megatron/bridge/recipes/nemotronh/h100/nemotron_3_super.py at "
       "commit 067f987d, which its performance recipes build on) sets mtp_num_layers = 2 with "
       "mtp_use_repeated_layer = True: the one MTP layer at two depths"),
    "Nemotron-3.5-Lightning-30B-A3B": (
    2, "Megatron-Bridge's Nemotron 3.5 Lightning performance recipes (src/megatron/bridge/perf_recipes/nemotronh/"
       "gb300/nemotronh.py at commit 067f987d) set mtp_num_layers = 2 with mtp_use_repeated_layer = True: the one "
       "MTP layer at two depths")}

# What the publication states about a model outside its tables (a bullet under each of the model's tables).
MODEL_REMARKS = {"Kimi-K2": "The publication states under the Kimi_K2 table: \"Muon optimizer was used for "
                            "pre-training Kimi-K2.\" (the optimizer does not change the model FLOPs counted)."}

# Section headings of the fine-tuning tables -> a tag in the file name (pre-training rows have none).
SECTION_TAGS = {"sft performance": "sft", "lora performance": "lora"}
FOOTNOTE_RE = re.compile(r"\[\^([^\]]+)\]")
FOOTNOTE_DEF_RE = re.compile(r"^\[\^([^\]]+)\]:\s*(.+?)\s*$")

PRECISIONS = {"bf16": "bf16", "fp8-cs": "fp8-cs", "fp8": "fp8-cs", "fp8-mx": "fp8-mx", "mxfp8": "fp8-mx",
              "nvfp4": "nvfp4", "fp8-ds": "fp8-ds"}

# Model qualifiers: what the run changed (mtp_layers) and a tag for the file name.
QUALIFIERS = {"w/o mtp": ("no-mtp", 0), "w/ mtp": ("mtp", None), "tokendrop": ("tokendrop", None),
              "dropless": ("dropless", None)}


@dataclass
class Row(ParallelRow):
    """One configuration of a table row (a row with alternatives yields two)."""

    line: int
    release: str
    section: str
    system: str
    model: str  # catalog name
    model_text: str  # as the publication writes it
    qualifier: str | None
    mtp_layers: int | None
    variant: int  # 0: the row as written, 1: its parenthesised alternative
    precision: str
    precision_inferred: bool
    gpus: int
    gbs: int
    mbs: int
    seq: int
    fsdp: int | None
    tp: int
    pp: int
    cp: int
    vp: int | None
    ep: int | None
    ga: int | None
    tokens: float
    tflops: float
    cells: dict[str, str] = field(default_factory=dict)
    footnotes: tuple[str, ...] = ()  # texts of the footnotes marked inside the row's cells
    gbs_tag: bool = False  # the document has another row with this key at another GBS: the file name says GBS

    @property
    def tag(self) -> str | None:
        return QUALIFIERS[self.qualifier][0] if self.qualifier else None

    def key(self) -> str:
        """Stable file name: release, system, GPUs, precision and qualifier (re-imports land on it)."""
        parts = ["mb", self.release, self.system.lower(), f"{self.gpus}gpu", self.precision]
        if self.tag:
            parts.append(self.tag)
        if section_tag := SECTION_TAGS.get(self.section.lower()):
            parts.append(section_tag)
        if self.gbs_tag:
            parts.append(f"gbs{self.gbs}")
        return "-".join(parts)


def _split(line: str) -> list[str]:
    text = line.strip()
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|"):
        text = text[:-1]
    return [c.strip() for c in text.split("|")]


def _alternatives(cell: str) -> tuple[str, str | None]:
    match = ALT_RE.match(cell)
    if match and match.group(1):
        return match.group(1).strip(), match.group(2).strip()
    return cell.strip(), None


def _footnote_precision(system: str, variant: int) -> str:
    """Tables without a Precision column (25.09): the footnote says the parenthesised figures use other
    quantization granularities: 32x32 (MXFP8) on GB200/B200, 128x128 weights / 1x128 activations (DeepSeek's
    blockwise FP8) on H100; the plain figures are FP8 with per-tensor current scaling."""
    if variant == 0:
        return "fp8-cs"
    return "fp8-ds" if system == "DGX-H100" else "fp8-mx"


def parse(text: str) -> Parsed:
    out = Parsed()
    release: str | None = None
    section = ""
    heading: tuple[str, str] | None = None
    lines = text.splitlines()
    footnotes = {m.group(1): m.group(2) for line in lines if (m := FOOTNOTE_DEF_RE.match(line))}
    i = 0
    while i < len(lines):
        line = lines[i]
        if m := RELEASE_RE.match(line):
            release, heading, section = m.group(1), None, ""
        elif m := HEADING_RE.match(line):
            heading = (m.group(1).lower(), m.group(2))
        elif m := SECTION_RE.match(line):
            section = m.group(1)
        elif (end := base.table_end(lines, i)) is not None:
            if release is not None:
                _table(out, lines, i, end, release, section, heading, footnotes)
            i = end
            continue
        i += 1
    return out


def _table(out: Parsed, lines: list[str], start: int, end: int, release: str, section: str,
           heading: tuple[str, str] | None, footnotes: dict[str, str]) -> None:
    header = [re.sub(r"\s+", " ", h.lower()) for h in _split(lines[start])]
    unknown = [h for h in header if h not in COLUMNS]
    keys = [COLUMNS.get(h, h) for h in header]
    fixed: dict[str, str] = {}
    if heading is not None:
        fixed[heading[0]] = heading[1]
    missing = [k for k in REQUIRED if k not in keys and k not in fixed]
    body = range(start + 2, end)
    if unknown or missing:
        reason = (f"unknown column(s) {', '.join(repr(u) for u in unknown)}" if unknown
                  else f"table has no {', '.join(missing)} column (nor a heading naming it)")
        out.skips.extend(Skip(n + 1, reason) for n in body)
        out.table_rows += len(body)
        return
    for n in body:
        out.table_rows += 1
        cells = _split(lines[n])
        if len(cells) != len(keys):
            out.skips.append(Skip(n + 1, f"{len(cells)} cells but the header at line {start + 1} has "
                                         f"{len(keys)} columns"))
            continue
        values = dict(fixed)
        values.update(zip(keys, cells, strict=True))
        # A footnote marker inside a cell ("661[^gpt-oss-note]") annotates the figure: the figure is the number,
        # the footnote's text goes to the recipe's notes (an undefined marker: the row is skipped, not guessed).
        marks = [m for v in values.values() for m in FOOTNOTE_RE.findall(v)]
        undefined = [m for m in marks if m not in footnotes]
        if undefined:
            out.skips.append(Skip(n + 1, f"footnote marker(s) {', '.join(undefined)} without a definition"))
            continue
        values = {k: FOOTNOTE_RE.sub("", v).strip() for k, v in values.items()}
        rows, skips = _row(n + 1, release, section, values)
        for row in rows:
            row.footnotes = tuple(f"[^{m}]: {footnotes[m]}" for m in marks)
        out.rows.extend(rows)
        out.skips.extend(skips)


def _row(line: int, release: str, section: str, values: dict[str, str]) -> tuple[list[Row], list[Skip]]:
    model_text, qualifier_text = _alternatives(values["model"])
    qualifier = qualifier_text.lower() if qualifier_text else None
    model_key = re.sub(r"[^a-z0-9]", "", model_text.lower())
    model = MODELS.get(model_key)
    if model_key in UNSUPPORTED_MODELS:
        return [], [Skip(line, f"model {values['model']!r} is {UNSUPPORTED_MODELS[model_key]}")]
    if model is None:
        return [], [Skip(line, f"unknown model {values['model']!r} (not in the importer's model map)")]
    if qualifier is not None and qualifier not in QUALIFIERS:
        return [], [Skip(line, f"unknown model qualifier ({qualifier_text})")]
    system = values["system"].strip()
    if system not in SYSTEMS:
        return [], [Skip(line, f"unknown system {system!r}")]
    split = {k: _alternatives(v) for k, v in values.items() if k not in ("model", "system")}
    has_alt = any(alt is not None for _, alt in split.values())
    rows: list[Row] = []
    skips: list[Skip] = []
    for variant in (0, 1) if has_alt else (0,):
        if variant == 1 and (split["tokens"][1] is None or split["tflops"][1] is None):
            which = "Model TFLOP/s" if split["tokens"][1] is None else "tokens/s"
            skips.append(Skip(line, f"second configuration skipped: only {which} has a parenthesised figure, "
                                    "so its tokens/s and TFLOP/s are not both stated"))
            continue
        cell = {k: (alt if variant == 1 and alt is not None else main) for k, (main, alt) in split.items()}
        try:
            rows.append(_make_row(line, release, section, system, model, model_text, qualifier, variant, cell))
        except ValueError as exc:
            skips.append(Skip(line, f"{'second configuration: ' if variant else ''}{exc}"))
    return rows, skips


def _number(key: str, text: str) -> int | float | None:
    return base.table_number(key, text, INTEGER_KEYS)


def _make_row(line: int, release: str, section: str, system: str, model: str, model_text: str,
              qualifier: str | None, variant: int, cell: dict[str, str]) -> Row:
    nums: dict[str, Any] = {k: _number(k, v) for k, v in cell.items() if k != "precision"}
    for key in ("gpus", "gbs", "mbs", "seq", "tp", "pp", "cp", "tokens", "tflops"):
        if nums.get(key) is None:
            raise ValueError(f"{key} is n/a")
        if nums[key] <= 0:
            raise ValueError(f"{key} {cell[key]!r} is not positive")
    if "precision" in cell:
        precision = PRECISIONS.get(cell["precision"].lower())
        if precision is None:
            raise ValueError(f"unknown precision {cell['precision']!r}")
        inferred = False
    else:
        precision, inferred = _footnote_precision(system, variant), True
    tp, pp, cp, gpus = nums["tp"], nums["pp"], nums["cp"], nums["gpus"]
    if gpus % (tp * pp * cp):
        raise ValueError(f"{gpus} GPUs do not divide by TP x PP x CP = {tp * pp * cp}")
    ep = nums.get("ep") or 1
    if (gpus // pp) % ep:
        raise ValueError(f"EP {ep} does not divide TP x CP x DP = {gpus} / PP {pp} = {gpus // pp} (the GPUs of one "
                         "pipeline stage)")
    return Row(line=line, release=release, section=section, system=system, model=model, model_text=model_text,
               qualifier=qualifier, mtp_layers=_mtp_layers(model, qualifier), variant=variant,
               precision=precision, precision_inferred=inferred, gpus=gpus, gbs=nums["gbs"], mbs=nums["mbs"],
               seq=nums["seq"], fsdp=nums.get("fsdp"), tp=tp, pp=pp, cp=cp, vp=nums.get("vp"),
               ep=nums.get("ep"), ga=nums.get("ga"), tokens=float(nums["tokens"]), tflops=float(nums["tflops"]),
               cells=dict(cell))


def _mtp_layers(model: str, qualifier: str | None) -> int | None:
    """MTP depths the row trains: its qualifier's, else the model's performance recipe's (MTP_DEPTHS), else the
    model's own (None)."""
    if qualifier:
        return QUALIFIERS[qualifier][1]
    return MTP_DEPTHS[model][0] if model in MTP_DEPTHS else None


def dedupe(parsed: Parsed) -> Parsed:
    """Two rows of one document with the same stable key: rows that differ in GBS get it in their file names
    (both are kept); other repeats are reported and skipped (the later one)."""
    gbs_by_key: dict[tuple[str, str], set[int]] = {}
    for row in parsed.rows:
        gbs_by_key.setdefault((row.model, row.key()), set()).add(row.gbs)
    for row in parsed.rows:
        row.gbs_tag = len(gbs_by_key[(row.model, row.key())]) > 1
    return drop_repeats(parsed, lambda row: (row.model, row.key()),
                        lambda row, line: f"same release, system, GPUs, precision and model as line {line} ({row.key()})")


def read(path: Path) -> Parsed:
    return dedupe(parse(base.read_document(path)))


# --- the recipe of a row ------------------------------------------------------------------------------------

AUTHOR = "NVIDIA Megatron-Bridge"
AUTHOR_URL = "https://github.com/NVIDIA-NeMo/Megatron-Bridge"

PRECISION_TEXT = {"bf16": "BF16", "fp8-cs": "FP8 with per-tensor current scaling", "fp8-mx": "MXFP8 (32-element blocks)",
                  "fp8-ds": "FP8 with DeepSeek-style blockwise scaling (128x128 weights, 1x128 activations)",
                  "nvfp4": "NVFP4", "fp16": "FP16", "fp32": "FP32"}


# Megatron-Bridge's DeepSeek-V3 pretrain recipe places layers by a layout_map keyed by (PP, VP); its layouts depend
# only on the virtual stages PP x VP: (4, 1) -> 4, (8, 1) and (4, 2) -> 8, (16, 1), (8, 2) and (4, 4) -> 16.
DEEPSEEK_V3_LAYOUTS = {
    4: "[embedding + 16 decoder] [16 decoder] [16 decoder] [13 decoder + mtp + loss]",
    8: "[embedding + 8 decoder] [8 decoder] x 6 [5 decoder + mtp + loss]",
    16: "[embedding + 4 decoder] [4 decoder] x 14 [1 decoder + mtp + loss]",
}
DEEPSEEK_V3_MAPPED = {(4, 1), (8, 1), (4, 2), (16, 1), (8, 2), (4, 4)}


PRE_TRAINING_SECTION = "pre-training performance"


def _training(row: Row) -> dict[str, str]:
    """workload.training where the row's section states the kind (a pre-training, SFT or LoRA table)."""
    section = row.section.lower()
    if section == PRE_TRAINING_SECTION:
        return {"training": "pre-training"}
    return {"training": SECTION_TAGS[section]} if section in SECTION_TAGS else {}


def _inferred(row: Row, split: dict[str, int] | None, placement: str | None) -> list[dict[str, str]]:
    """The fields of a Megatron-Bridge row its table does not state, with where each value comes from."""
    out = [{"field": "layout.sequence_parallel", "reason": "not in the table: on when TP > 1, as Megatron-Bridge's "
            "performance recipes set it"}]
    if row.precision_inferred:
        out.append({"field": "workload.precision", "reason": f"the {row.release} table has no Precision column: "
                    f"{PRECISION_TEXT[row.precision]} from its footnote (plain figures FP8, parenthesised figures a "
                    "finer quantization granularity)"})
    if row.qualifier is None and row.model in MTP_DEPTHS:
        out.append({"field": "layout.mtp_layers", "reason": f"not in the table: {MTP_DEPTHS[row.model][1]}"})
    if "fsdp" not in row.cells:
        out.append({"field": "layout.fsdp", "reason": f"the {row.release} table has no FSDP column: recorded as off"})
    if split is not None:
        out.append({"field": "layout.layer_split", "reason": "not in the table: Megatron's uneven split for these "
                    "layers and stages"})
    if placement is not None:
        out.append({"field": "layout.pipeline_layout", "reason": "not in the table: " + placement})
    return out


def pipeline_placement(arch: Architecture | None, pp: int, vp: int, model: str = "",
                       mtp: bool = True) -> tuple[dict[str, int] | None, str | None]:
    """(layer_split, pipeline_layout) for PP x VP, neither stated by the publication. Even when the layers divide;
    else Megatron's embedding/loss accounting (each takes one layer's place) when L + 2 divides; else unknown."""
    if arch is None or pp == 1:
        return None, None
    stages = pp * vp
    layers = arch.layers
    if layers % stages == 0:
        return None, None
    if model in ("DeepSeek-V3", "Kimi-K2") and stages in DEEPSEEK_V3_LAYOUTS:
        # Kimi-K2's recipe (recipes/kimi/h100/kimi_k2.py) maps (PP, VP) to the same layouts, without an MTP module.
        mtp = mtp and arch.mtp_layers != 0
        layout = DEEPSEEK_V3_LAYOUTS[stages] if mtp else DEEPSEEK_V3_LAYOUTS[stages].replace(" + mtp", "")
        mapped = "" if (pp, vp) in DEEPSEEK_V3_MAPPED else (
            f"; the recipe's map has no ({pp}, {vp}) entry, this is its layout for {stages} virtual stages")
        return None, (f"pipeline_model_parallel_layout over {stages} virtual stages, as Megatron-Bridge's {model} "
                      f"recipe sets it: {layout} (inferred, the publication does not state "
                      f"it{mapped})")
    if (layers + 2) % stages == 0:
        chunk = (layers + 2) // stages
        edge = chunk * vp - 1
        return ({"first": edge, "last": edge},
                f"account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split: the embedding and "
                f"the loss each take one layer's place, {chunk} layers per virtual stage, one fewer on the first and "
                f"the last, as Megatron-Bridge's Llama 3.1 405B and Qwen3-235B-A22B recipes set it (inferred: "
                f"{layers} + 2 divides over PP x VP = {stages}; the publication does not state the split)")
    return None, (f"custom, not stated by the publication: {layers} layers divide neither evenly nor with the "
                  f"embedding and loss counted over PP x VP = {stages} (Megatron-Bridge sets "
                  f"pipeline_model_parallel_layout for this model)")


def flops_figures(row: Row, arch: Architecture) -> tuple[float, float]:
    """(registry Model TFLOP/s per GPU, relative difference from the published figure)."""
    ours = figures.model_tflops_per_gpu(arch, row.seq, row.tokens, mtp_layers=row.mtp_layers)
    return ours, figures.relative_difference(row.tflops, ours)


# Megatron-Bridge's model providers: the activation its older FLOPs count tests for the gated factor.
MB_ACTIVATION = {"GPT-OSS-120B": "quick_gelu (GPTOSSProvider: gated_linear_unit=True, activation_func=quick_gelu, "
                                 "window_size=(128, 0), window_attn_skip_freq=2)"}
MB_FLOP_UTILS = "src/megatron/bridge/training/utils/flop_utils.py"


def explain_flops(row: Row, arch: Architecture, ours: float) -> tuple[str, dict[str, bool]] | None:
    """(explanation, convention) reproducing a published figure the registry's count does not (None: none found).

    The one convention found: Megatron-Bridge's flop_utils as of commit a5b3b5a4 multiplies the FFN by 3/2 (gated)
    only when gated_linear_unit is set and activation_func is F.silu, and has no sliding-window term."""
    if arch.hybrid_pattern is not None:
        return _explain_hybrid_flops(row, arch, ours)
    if arch.moe is None or not arch.gated_ffn:
        return None
    windows = sorted({k.window for k in arch.attention.values() if k.window})
    convention = {"gated_experts": False, "sliding_windows": False}
    alt = figures.model_tflops_per_gpu(arch, row.seq, row.tokens, mtp_layers=row.mtp_layers, **convention)
    if figures.relative_difference(row.tflops, alt) > figures.PUBLISHED_TFLOPS_TOLERANCE:
        return None
    activation = MB_ACTIVATION.get(row.model)
    text = (f"A convention of the publication, not an error in the table: its {row.tflops:g} TFLOP/s is reproduced "
            f"({alt:.1f}) by an earlier version of Megatron-Bridge's own FLOPs count ({MB_FLOP_UTILS} at commit "
            "a5b3b5a4), "
            "which applies the gated factor 3/2 only when gated_linear_unit is set and activation_func is F.silu, "
            "and has no sliding-window term. "
            + (f"{row.model}'s provider uses {activation}, so each routed expert counts as two matrices instead of "
               "three" if activation else f"{row.model}'s experts then count as two matrices instead of three")
            + (f" and every layer's core attention as full causal attention, ignoring the "
               f"{'/'.join(str(w) for w in windows)}-token window of the sliding layers" if windows else "")
            + ". The registry counts what the model computes (gated experts" + (", the window" if windows else "")
            + f"): {ours:.1f} TFLOP/s. A later version of that file (commit 0494433) tests gated_linear_unit alone "
            "and counts window_size, as the registry does.")
    return text, convention


# The convention of Megatron-Bridge's hybrid count (figures.MB_HYBRID_COUNT); the experts are not gated in Nemotron 3
# and there are no sliding windows, so the other two terms are the registry's.
MB_HYBRID_CONVENTION = {"gated_experts": False, "sliding_windows": True, "hybrid_count": figures.MB_HYBRID_COUNT}


def _mb_hybrid_tflops(row: Row, arch: Architecture) -> float:
    return figures.model_tflops_per_gpu(arch, row.seq, row.tokens, mtp_layers=row.mtp_layers, gated_experts=False,
                                        hybrid_count=figures.MB_HYBRID_COUNT)


def _explain_hybrid_flops(row: Row, arch: Architecture, ours: float) -> tuple[str, dict[str, Any]] | None:
    """A hybrid's published figure reproduced by Megatron-Bridge's own hybrid count (None: it is not)."""
    alt = _mb_hybrid_tflops(row, arch)
    if figures.relative_difference(row.tflops, alt) > figures.PUBLISHED_TFLOPS_TOLERANCE:
        return None
    text = (f"A convention of the publication, not an error in the table: its {row.tflops:g} TFLOP/s is reproduced "
            f"({alt:.1f}) by Megatron-Bridge's hybrid FLOPs count ({MB_FLOP_UTILS} at commit 067f987d, "
            "mamba_layer_flops and hybrid_flops), which takes every Mamba layer's inner width as 2 x hidden size "
            "whatever its heads, counts the SSD scan as 7 x inner x state FLOPs and no conv1d, and leaves out the "
            "MTP layer's 2h x h projection. The registry counts the mixer as the model's config sizes it (inner = "
            f"heads x head_dim, figures.mamba2_forward_flops): {ours:.1f} TFLOP/s.")
    return text, dict(MB_HYBRID_CONVENTION)


def bf16_representable(value: float) -> bool:
    """Whether a positive integer figure has at most 8 significant bits (a BF16 value): m x 2^e with m < 256."""
    n = int(value)
    if n != value or n <= 0:
        return False
    while n % 2 == 0:
        n //= 2
    return n < 256


def discrepancy_note(row: Row, arch: Architecture, ours: float, diff: float) -> str:
    """What was tried for a published Model TFLOP/s no convention reproduces (the recipe records the discrepancy)."""
    implied = row.tflops / ours * row.tokens
    parts = [f"A discrepancy in the publication, not explained: its {row.tokens:g} tokens/s per GPU give "
             f"{ours:.1f} Model TFLOP/s per GPU by the registry's count, {diff * 100:.2f}% from the published "
             f"{row.tflops:g} (tolerance {figures.PUBLISHED_TFLOPS_TOLERANCE * 100:g}%); the published TFLOP/s "
             f"implies {implied:.0f} tokens/s."]
    if arch.hybrid_pattern is not None:
        parts.append(f"Tried: Megatron-Bridge's hybrid FLOPs count ({MB_FLOP_UTILS} at commit 067f987d: every Mamba "
                     "layer's inner width taken as 2 x hidden size, the scan as 7 x inner x state, no conv1d, no MTP "
                     f"projection): {_mb_hybrid_tflops(row, arch):.1f}.")
    else:
        earlier = figures.model_tflops_per_gpu(arch, row.seq, row.tokens, mtp_layers=row.mtp_layers,
                                               gated_experts=False, sliding_windows=False)
        parts.append(f"Tried: Megatron-Bridge's earlier FLOPs count (no gated experts, no sliding windows): "
                     f"{earlier:.1f}.")
    if row.section.lower() == "lora performance":
        frozen = ours * 2 / 3
        parts.append(f"LoRA trains adapters only, so the frozen base needs no weight gradients: two thirds of the "
                     f"full count would be {frozen:.1f} ({figures.relative_difference(row.tflops, frozen) * 100:.2f}% "
                     "from the published figure).")
        no_attention = figures.model_tflops_per_gpu(arch, 1, row.tokens, mtp_layers=row.mtp_layers) * 2 / 3
        parts.append(f"Megatron-Bridge's {MB_FLOP_UTILS} at commit 067f987d counts a LoRA Llama-3-70B run on packed "
                     "SQuAD as 2/3 of the frozen matrices' FLOPs over the packed data's average tokens plus the core "
                     "attention over its average squared sequence length (calculate_avg_seqlen); those data "
                     "statistics are not published, so the figure cannot be recomputed here. The published figure "
                     f"lies {'within' if no_attention <= row.tflops <= frozen else 'outside'} the range that count "
                     f"allows for these tokens/s: from {no_attention:.1f} (no attention) to {frozen:.1f} (every "
                     "sequence the full length).")
    if bf16_representable(row.tokens):
        parts.append(f"The published {row.tokens:g} tokens/s has at most 8 significant bits (a BF16 value), as "
                     f"most of the {row.release} figures do; BF16 rounding moves a figure by at most 0.39%, less "
                     "than this difference, so it does not explain it.")
    parts.append("Both published figures are kept as published; the recipe's MFU follows its tokens/s.")
    return " ".join(parts)


def _superseded_notes(row: Row, arch: Architecture | None, superseded: list[dict[str, Any]]) -> list[str]:
    notes = []
    for e in superseded:
        where = f"{e['url']} (line {e['line']})"
        if (e["tokens_per_s_per_gpu"], e["published_model_tflops_per_gpu"]) == (row.tokens, row.tflops):
            notes.append(f"The same row, with the same figures, is also published at {where}; this later import "
                         "superseded it.")
            continue
        note = (f"An earlier publication of this row, {where}, stated {e['tokens_per_s_per_gpu']:g} tokens/s and "
                f"{e['published_model_tflops_per_gpu']:g} TFLOP/s per GPU; this recipe carries the later figures.")
        if arch is not None and e["published_model_tflops_per_gpu"]:
            theirs = figures.model_tflops_per_gpu(arch, row.seq, e["tokens_per_s_per_gpu"], mtp_layers=row.mtp_layers)
            if figures.relative_difference(e["published_model_tflops_per_gpu"], theirs) > figures.PUBLISHED_TFLOPS_TOLERANCE and \
                    flops_figures(row, arch)[1] <= figures.PUBLISHED_TFLOPS_TOLERANCE:
                note += (f" The earlier figures disagree with each other: {e['tokens_per_s_per_gpu']:g} tokens/s give "
                         f"{theirs:.1f} TFLOP/s by the registry's count, not {e['published_model_tflops_per_gpu']:g}; "
                         "the later document's figures agree.")
        notes.append(note)
    return notes


def contradicted_gradient_accumulation(row: Row) -> int | None:
    """The row's GA where it contradicts its own GBS / (MBS x DP), else None: the recipe records it as the
    publication's statement (publication.stated_gradient_accumulation), written only on those rows."""
    if row.ga is not None and row.ga * row.mbs * row.dp != row.gbs:
        return row.ga
    return None


def build(row: Row, catalog: Catalog, source_url: str, commit: str | None,
          superseded: list[dict[str, Any]] | None = None, skipped: list[str] | None = None) -> dict[str, Any]:
    """The recipe of one row configuration; superseded: publication.superseded; skipped: the importer's skips at the
    same line (the row's other configuration), stated in the notes."""
    gpu_type, per_node = SYSTEMS[row.system]
    gpu = catalog.gpus[gpu_type]
    card = catalog.models[row.model]
    arch = card.architecture
    vp = row.vp or 1
    ep = row.ep or 1
    split, placement = pipeline_placement(arch, row.pp, vp, row.model, mtp=row.mtp_layers != 0)
    instance = catalog.instance_for(gpu_type, per_node)
    fsdp = bool(row.fsdp)
    label = f"TP{row.tp} PP{row.pp}" + (f" VP{vp}" if vp > 1 else "") + f" CP{row.cp}" + \
        (f" EP{ep}" if ep > 1 else "") + f" DP{row.dp}" + (" FSDP" if fsdp else "")
    notes: list[str] = [
        f"Reported by NVIDIA in Megatron-Bridge's performance summary, NeMo {row.release} container, "
        f"{row.section or 'pre-training'}, {row.system}, line {row.line} of the document"
        + (" (the second configuration of the row: its parenthesised figures)" if row.variant else "") + ".",
        "Not re-measured here. Settings the publication does not state are not invented: recompute is not stated "
        "(null), the MoE dispatcher is unset, and the data is the performance scripts' default mock data; "
        "sequence parallelism is recorded as on when TP > 1 and listed as inferred.",
    ]
    if row.precision_inferred:
        notes.append(f"The {row.release} table has no Precision column; {PRECISION_TEXT[row.precision]} is inferred "
                     "from its footnote (plain figures FP8, parenthesised figures a finer quantization granularity: "
                     "32x32 on GB200 and B200, 128x128 / 1x128 on H100).")
    if row.qualifier:
        notes.append(f"The publication qualifies the model as \"{row.model_text} ({row.qualifier})\"."
                     + (" Trained without the multi-token-prediction layer: its FLOPs are not counted."
                        if row.mtp_layers == 0 else "")
                     + (" Tokens may be dropped at expert capacity (the table's token-drop runs)."
                        if row.qualifier == "tokendrop" else ""))
    if row.qualifier is None and row.model in MTP_DEPTHS:
        notes.append(f"Multi-token prediction at {row.mtp_layers} depths, which the table does not state: "
                     f"{MTP_DEPTHS[row.model][1]} (inferred); the model FLOPs count every depth.")
    if arch is not None and arch.hybrid_pattern is not None:
        notes.append("A hybrid model: its layers are single Mamba-2, attention or MoE blocks (architecture."
                     "hybrid_pattern), and the model FLOPs count each Mamba-2 mixer from its architecture "
                     "(figures.mamba2_forward_flops: projections, conv1d and the scan's state updates); 6N stays "
                     "the MFU's convention.")
    if SECTION_TAGS.get(row.section.lower()):
        notes.append(f"A fine-tuning row ({row.section}): the publication's {row.section.split()[0]} run of the model "
                     "on its performance recipe's data, not pre-training.")
    for footnote in row.footnotes:
        notes.append(f"The publication marks this row's figure with a footnote: {footnote}")
    if row.model in MODEL_REMARKS:
        notes.append(MODEL_REMARKS[row.model])
    if row.gbs_tag:
        notes.append(f"The same table publishes this system, GPU count and precision at another global batch too; "
                     f"this recipe is the GBS {row.gbs} row (the file name says so).")
    if "fsdp" not in row.cells:
        notes.append(f"The {row.release} table has no FSDP column (dropped from 26.06 on): FSDP is recorded as off, "
                     "which the publication does not state.")
    if row.fsdp is not None and row.fsdp > 1:
        notes.append(f"FSDP {row.fsdp}: FSDP with a sharding group of {row.fsdp} GPUs.")
    stated_ga = contradicted_gradient_accumulation(row)
    if stated_ga is not None:
        notes.append(f"The published GA {stated_ga} disagrees with GBS / (MBS x DP) = {row.gbs} / ({row.mbs} x "
                     f"{row.dp}) = {row.gbs / (row.mbs * row.dp):g}; recorded as published in the layout, and as the "
                     "publication's own statement in publication.stated_gradient_accumulation (which is what lets "
                     "check accept exactly this contradiction).")
    if placement:
        notes.append(f"Pipeline placement: {placement}.")
    for reason in skipped or []:
        reason = re.sub(r"^second configuration( skipped)?: ", "", reason)
        notes.append(f"The row's other configuration (its parenthesised figures) is not imported; the importer "
                     f"reports it as skipped at line {row.line}: {reason}.")
    notes.extend(_superseded_notes(row, arch, superseded or []))
    if gpu_type == "H100" and instance:
        notes.append(f"$/1M tokens prices the DGX-H100 throughput at the {instance} on-demand price (8 H100 per node).")
    result = imported_result(card, row.tokens, published_model_tflops_per_gpu=row.tflops)
    if arch is not None:
        ours, diff = flops_figures(row, arch)
        if diff > figures.PUBLISHED_TFLOPS_TOLERANCE:
            # Only a found explanation is written: an unexplained difference stays for check to flag.
            why = explain_flops(row, arch, ours)
            if why:
                result["published_model_tflops_note"], result["published_model_tflops_convention"] = why
            else:
                # Never dropped: recorded as the publication's discrepancy, which check verifies and the page shows.
                result["published_model_tflops_note"] = discrepancy_note(row, arch, ours, diff)
                result["published_figures_disagree"] = True
    recipe: dict[str, Any] = {
        "schema_version": 1,
        "model": row.model,
        "gpu": {"type": gpu_type, "memory_gb": gpu.memory_gb, "count": row.gpus, "per_node": per_node,
                "instance": instance},
        "author": {"name": AUTHOR, "url": AUTHOR_URL},
        "status": "reported",
        "stack": {"framework": f"megatron-bridge (NeMo {row.release} container)",
                  "megatron_bridge": f"as shipped in the NeMo {row.release} container",
                  "source": f"the publication's release section (NeMo {row.release} container)"},
        "workload": {"row_tokens": row.seq, "rows": "mock data (the publication does not state the data)",
                     "global_batch": row.gbs, "precision": row.precision, **_training(row)},
        "layout": {
            "label": label,
            "summary": f"{row.gpus} {gpu_type} ({row.system}), {label}, micro-batch {row.mbs}, global batch "
                       f"{row.gbs} x {row.seq} tokens, {PRECISION_TEXT[row.precision]}"
                       + (f", gradient accumulation {row.ga}" if row.ga else "") + "; as published.",
            "tp": row.tp, "pp": row.pp, "vpp": vp, "cp": row.cp, "ep": ep, "etp": 1, "dp": row.dp,
            "fsdp": fsdp, "gradient_accumulation": row.ga, "sequence_parallel": row.tp > 1,
            "layer_split": split, "rows_per_microbatch": row.mbs,
            "recompute": None,
            "dispatcher": None, "mtp_layers": row.mtp_layers, "pipeline_layout": placement,
        },
        "result": result,
        "publication": {"url": source_url, "commit": commit, "release": row.release, "line": row.line,
                        "system": row.system,
                        **({"stated_gradient_accumulation": stated_ga} if stated_ga is not None else {}),
                        "superseded": superseded or []},
        "run": _run(row, source_url),
        "notes": "\n\n".join(notes) + "\n",
    }
    recipe["inferred"] = _inferred(row, split, placement)
    # $/1M and MFU are the figures module's, on the validated recipe (the precision's peak for reported rows).
    derive_figures(recipe, catalog)
    for earlier in superseded or []:
        if _superseded_disagrees(row, arch, earlier, result.get("published_model_tflops_convention")):
            earlier["figures_disagree"] = True
    return recipe


def _superseded_disagrees(row: Row, arch: Architecture | None, earlier: dict[str, Any],
                          convention: dict[str, bool] | None) -> bool:
    """Whether an earlier document's own tokens/s and Model TFLOP/s disagree (over 0.5%) under the count the recipe
    states (its convention, else Megatron's), as check recomputes them: recorded as that document's error."""
    if arch is None or not earlier.get("published_model_tflops_per_gpu"):
        return False
    theirs = figures.model_tflops_per_gpu(arch, row.seq, earlier["tokens_per_s_per_gpu"], mtp_layers=row.mtp_layers,
                                          **(convention or {}))
    return figures.relative_difference(earlier["published_model_tflops_per_gpu"], theirs) > \
        figures.PUBLISHED_TFLOPS_TOLERANCE


def _run(row: Row, source_url: str) -> str:
    settings = (f"model {row.model_text}, {row.gpus} GPUs ({row.system}), precision {row.cells.get('precision', row.precision)}, "
                f"GBS {row.gbs}, MBS {row.mbs}, sequence {row.seq}, FSDP {row.fsdp if row.fsdp is not None else 'n/a'}, "
                f"TP {row.tp}, PP {row.pp}, CP {row.cp}, VP {row.vp or 'n/a'}, EP {row.ep or 'n/a'}, "
                f"GA {row.ga or 'n/a'}")
    return base.no_command_line(
        f"# Not published as a command line. NVIDIA ran this row with Megatron-Bridge's performance recipes\n"
        f"# (scripts/performance in the repository) in the NeMo {row.release} container; the row states:\n"
        f"# {settings}.\n", source_url, row.line)


class MegatronBridge(Source):
    """docs/performance-summary.md and docs/performance-summary-archive.md of NVIDIA-NeMo/Megatron-Bridge."""

    name = "megatron-bridge"
    needs_architecture = False  # the model's card and the GPU type are enough

    def parse(self, text: str) -> Parsed:
        return dedupe(parse(text))

    def gpu_type(self, row: Row) -> str:
        return SYSTEMS[row.system][0]


    def build(self, row: Row, catalog: Catalog, document: Document, superseded: list[dict[str, Any]],
              skipped: list[str]) -> dict[str, Any]:
        return build(row, catalog, document.url, document.commit, superseded, skipped)


SOURCE = MegatronBridge()
