"""mosaicml/llm-foundry's MPT benchmark tables (scripts/train/benchmarking/README.md) as `reported` recipes.

The document holds one table per "## <hardware>" heading, each row one run of collect_results.py: model size,
sequence length, GPUs, GPU, MFU, HFU, Model TFLOP, micro-batch, GradAccum, global batch, throughput (samples/s,
tokens/s, tokens/s/GPU), global batch in tokens, precision, FSDP mixed-precision mode and sharding strategy,
activation checkpointing and CPU offload, and the run's parameter count. Every published figure is recomputed here
from the others, as collect_results.py (same commit) computes it: int() truncation of the throughputs and of Model
TFLOP, MFU and HFU rounded to 2 decimals of a percent, GradAccum = ceil(GBS / GPUs / MBS), n_params = the model's
parameters with its learned positional embedding (max_seq_len x d_model) and LayerNorm weights and biases.
A row whose figures cannot all be read, or whose precision has no registry equivalent, is skipped with its line.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from generator import figures
from generator.catalog import Architecture, Catalog
from generator.importers import base
from generator.importers.base import Document, Parsed, Skip, Source, derive_figures, drop_repeats, imported_result, number

REPOSITORY = "mosaicml/llm-foundry"
DOCUMENT_PATH = "scripts/train/benchmarking/README.md"
COLLECT = "scripts/train/benchmarking/collect_results.py"
AUTHOR = "MosaicML (Databricks) llm-foundry"
AUTHOR_URL = "https://github.com/mosaicml/llm-foundry"

HEADING_RE = re.compile(r"^##\s+(.+?)\s*$")

# Header text -> field key; every column is required (the tables all have the same 20).
COLUMNS = {
    "model": "model", "seqlen (t)": "seq", "# gpus": "gpus", "gpu": "gpu", "mfu": "mfu", "hfu": "hfu",
    "model tflop": "tflop", "microbatchsize": "mbs", "gradaccum": "ga", "globalbatchsize": "gbs",
    "throughput (s/s)": "samples", "throughput (t/s)": "tokens", "throughput (t/s/gpu)": "tokens_gpu",
    "globalbatchsize (t)": "gbs_tokens", "precision": "precision", "mp mode": "mp_mode",
    "sharding strategy": "sharding", "activation checkpointing": "checkpointing",
    "activation cpuoffload": "offload", "numparams": "params",
}
INTEGERS = ("seq", "gpus", "tflop", "mbs", "ga", "gbs", "samples", "tokens", "tokens_gpu", "gbs_tokens", "params")
PERCENTS = ("mfu", "hfu")

# The table's GPU names: catalog GPU type. Node size is not published; the MosaicML platform's A100 and H100 nodes
# hold 8 (every GPU count in the document is a multiple of 8).
GPUS = {"h100_80gb": "H100", "a100_80gb": "A100", "a100_40gb": "A100-40GB"}
GPUS_PER_NODE = 8
# Composer's speed_monitor GPU_AVAILABLE_FLOPS, which collect_results.py divides by (H100 SXM: 1.979e15 / 2 and
# 3.958e15 / 2; A100: 312e12): the peaks the published MFU and HFU use.
SOURCE_PEAKS = {("H100", "bf16"): 1.979e15 / 2, ("H100", "amp_bf16"): 1.979e15 / 2,
                ("A100", "bf16"): 312e12, ("A100", "amp_bf16"): 312e12,
                ("A100-40GB", "bf16"): 312e12, ("A100-40GB", "amp_bf16"): 312e12}
# Composer precisions the registry can state. amp_fp8 (Transformer Engine's FP8 with delayed scaling) has no
# registry precision: fp8-cs is per-tensor current scaling, another recipe.
PRECISIONS = {"amp_bf16": "bf16", "bf16": "bf16"}
PRECISION_TEXT = {"amp_bf16": "BF16 autocast (Composer amp_bf16, FSDP mixed precision DEFAULT)",
                  "bf16": "pure BF16 (Composer bf16, FSDP mixed precision PURE)"}
SHARDING = ("FULL_SHARD", "SHARD_GRAD_OP")


@dataclass(frozen=True)
class Row:
    """One table row as published (figures as printed)."""

    line: int
    table: str  # the "## ..." heading the table sits under
    size: str  # "70b"
    seq: int
    gpus: int
    gpu: str  # as published, e.g. a100_40gb
    mfu: float  # percent
    hfu: float  # percent
    tflop: int
    mbs: int
    ga: int
    gbs: int
    samples: int
    tokens: int
    tokens_gpu: int
    gbs_tokens: int
    precision: str
    mp_mode: str
    sharding: str
    checkpointing: bool
    offload: bool
    params: int

    @property
    def model(self) -> str:
        return f"MPT-{self.size.upper()}"

    @property
    def gpu_type(self) -> str:
        return GPUS[self.gpu]

    @property
    def tokens_per_s_per_gpu(self) -> float:
        """Throughput (T/s) / GPUs: finer than the T/s/GPU column, which truncates the same figure."""
        return self.tokens / self.gpus

    def key(self) -> str:
        """Stable file name: precision, sequence, GPUs and global batch (two rows of one table differ there)."""
        return f"foundry-{PRECISIONS[self.precision]}-s{self.seq}-{self.gpus}gpu-gbs{self.gbs}"


def _split(line: str) -> list[str]:
    text = line.strip().removeprefix("|").removesuffix("|")
    return [c.strip() for c in text.split("|")]


def _bool(text: str) -> bool:
    if text not in ("True", "False"):
        raise ValueError(f"{text!r} is not True or False")
    return text == "True"


def parse(text: str) -> Parsed:
    out = Parsed()
    lines = text.splitlines()
    heading = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        if m := HEADING_RE.match(line):
            heading = m.group(1)
        elif (end := base.table_end(lines, i)) is not None:
            _table(out, lines, i, end, heading)
            i = end
            continue
        i += 1
    return out


def _table(out: Parsed, lines: list[str], start: int, end: int, heading: str) -> None:
    header = [re.sub(r"\s+", " ", h.lower()) for h in _split(lines[start])]
    unknown = [h for h in header if h not in COLUMNS]
    missing = [h for h in COLUMNS if h not in header]
    body = range(start + 2, end)
    out.table_rows += len(body)
    if unknown or missing:
        reason = (f"unknown column(s) {', '.join(map(repr, unknown))}" if unknown
                  else f"table has no {', '.join(map(repr, missing))} column")
        out.skips.extend(Skip(n + 1, reason) for n in body)
        return
    base.read_table_body(out, lines, body, [COLUMNS[h] for h in header], start + 1, _split,
                         lambda line, cells: [_row(line, heading, cells)])


def _row(line: int, heading: str, cells: dict[str, str]) -> Row:
    values: dict[str, Any] = {}
    for key in INTEGERS:
        if not re.fullmatch(r"\d+", cells[key]):
            raise ValueError(f"{key} {cells[key]!r} is not a whole number")
        values[key] = number(cells[key], key, integer=True)
    for key in PERCENTS:
        values[key] = number(cells[key], key)
    for key in ("seq", "gpus", "mbs", "ga", "gbs", "tokens", "params"):
        if values[key] <= 0:
            raise ValueError(f"{key} {cells[key]!r} is not positive")
    if not re.fullmatch(r"\d+(\.\d+)?[mb]", cells["model"]):
        raise ValueError(f"model {cells['model']!r} is not an MPT size (e.g. 125m, 7b)")
    if cells["gpu"] not in GPUS:
        raise ValueError(f"unknown GPU {cells['gpu']!r}")
    if cells["precision"] not in PRECISIONS:
        raise ValueError(f"precision {cells['precision']} (Composer's FP8 through Transformer Engine, delayed scaling) "
                         "has no registry precision (fp8-cs is per-tensor current scaling); not imported rather than "
                         "mislabelled" if cells["precision"] == "amp_fp8" else f"unknown precision {cells['precision']!r}")
    if cells["sharding"] not in SHARDING:
        raise ValueError(f"unknown sharding strategy {cells['sharding']!r}")
    if values["gpus"] % GPUS_PER_NODE:
        raise ValueError(f"{values['gpus']} GPUs is not whole {GPUS_PER_NODE}-GPU nodes")
    return Row(line=line, table=heading, size=cells["model"], gpu=cells["gpu"], precision=cells["precision"],
               mp_mode=cells["mp_mode"], sharding=cells["sharding"], checkpointing=_bool(cells["checkpointing"]),
               offload=_bool(cells["offload"]), **values)


# --- recomputing the published figures -------------------------------------------------------------------------


def published_params(arch: Architecture, n: int, seq: int) -> int:
    """llm-foundry's n_params for a run: the card's N (embeddings, linear weights and biases) plus the learned
    positional embedding (max_seq_len x d_model) and every LayerNorm's weight and bias (two per block, one final)."""
    return n + seq * arch.hidden_size + (2 * arch.layers + 1) * 2 * arch.hidden_size


@dataclass(frozen=True)
class Recomputed:
    """Each published figure of a row next to what its inputs give, and whether they agree as printed."""

    figure: str
    published: float
    recomputed: str  # the recomputation as text, with its formula
    agrees: bool
    explanation: str | None = None  # why a figure that does not follow from the row's inputs is what it is


# The A100 40GB table's rows were measured before collect_results.py had a Model TFLOP column (the rows as of commit
# 9fa3ceb, 2023-04-04); commit b2a43a1 (2023-10-19) added the column to them, and its figures are int() of the
# published, rounded MFU x 312 TFLOP/s where the throughput would give one less.
ADDED_COLUMN = {"a100_40gb": ("9fa3ceb", "2023-04-04", "b2a43a1", "2023-10-19")}


def _tflop_explanation(row: Row) -> str | None:
    """Why the published Model TFLOP is not int() of the throughput's figure, where a reason was found."""
    if row.gpu not in ADDED_COLUMN:
        return None
    peak = SOURCE_PEAKS[(row.gpu_type, row.precision)]
    from_mfu = row.mfu / 100 * peak / 1e12
    if math.floor(from_mfu + 1e-9) != row.tflop:
        return None
    measured, measured_on, added, added_on = ADDED_COLUMN[row.gpu]
    return (f"the table's rows date from llm-foundry commit {measured} ({measured_on}), before {COLLECT} had a Model "
            f"TFLOP column; commit {added} ({added_on}) added the column, and this figure is int() of the published, "
            f"rounded MFU: {row.mfu:g}% x {peak / 1e12:g} = {from_mfu:.4f}")


def recompute(row: Row, arch: Architecture, n: int) -> list[Recomputed]:
    """Every published figure of the row, recomputed from the row's own inputs as collect_results.py computes it.
    Throughput is known only to int() truncation (T/s in [T, T + 1)), so MFU, HFU and Model TFLOP are ranges."""
    low, high = figures.truncated_range(row.tokens)
    peak = SOURCE_PEAKS[(row.gpu_type, row.precision)]
    mfu_lo = figures.six_n_utilisation(arch, row.seq, low / row.gpus, row.params, peak)
    mfu_hi = figures.six_n_utilisation(arch, row.seq, high / row.gpus, row.params, peak)
    factor = figures.SIX_N_HFU_FACTOR if row.checkpointing else 1.0
    tflop_lo = figures.six_n_model_tflops_per_gpu(arch, row.seq, low / row.gpus, row.params)
    tflop_hi = figures.six_n_model_tflops_per_gpu(arch, row.seq, high / row.gpus, row.params)
    expected_params = published_params(arch, n, row.seq)
    ga = math.ceil(row.gbs / row.gpus / row.mbs)
    return [
        Recomputed("NumParams", row.params, f"N {n:,} + positions {row.seq} x {arch.hidden_size} + LayerNorms "
                   f"{2 * arch.layers + 1} x 2 x {arch.hidden_size} = {expected_params:,}", row.params == expected_params),
        Recomputed("Throughput (T/s/GPU)", row.tokens_gpu, f"int({row.tokens} / {row.gpus}) = {row.tokens // row.gpus}",
                   row.tokens_gpu == row.tokens // row.gpus),
        Recomputed("Throughput (S/s)", row.samples, f"int({row.tokens} / {row.seq}) = {row.tokens // row.seq}",
                   row.samples == row.tokens // row.seq),
        Recomputed("GlobalBatchSize (T)", row.gbs_tokens, f"{row.gbs} x {row.seq} = {row.gbs * row.seq}",
                   row.gbs_tokens == row.gbs * row.seq),
        Recomputed("GradAccum", row.ga, f"ceil({row.gbs} / {row.gpus} / {row.mbs}) = {ga}", row.ga == ga),
        Recomputed("Model TFLOP", row.tflop, f"(6 x {row.params:,} + 12 x {arch.layers} x {arch.hidden_size} x "
                   f"{row.seq}) x [{row.tokens}, {row.tokens + 1}) / {row.gpus} / 1e12 = [{tflop_lo:.4f}, "
                   f"{tflop_hi:.4f})", math.floor(tflop_lo) <= row.tflop <= math.floor(tflop_hi),
                   _tflop_explanation(row)),
        Recomputed("MFU", row.mfu, f"the same FLOPs over {peak / 1e12:g} TFLOP/s = [{mfu_lo * 100:.3f}, "
                   f"{mfu_hi * 100:.3f}]%", figures.rounded_percent_agrees(row.mfu, mfu_lo, mfu_hi)),
        Recomputed("HFU", row.hfu, ("MFU x 4/3 (activation checkpointing repeats the forward pass)" if row.checkpointing
                                    else "MFU (no activation checkpointing)")
                   + f" = [{mfu_lo * factor * 100:.3f}, {mfu_hi * factor * 100:.3f}]%",
                   figures.rounded_percent_agrees(row.hfu, mfu_lo * factor, mfu_hi * factor)),
    ]


# --- the recipe --------------------------------------------------------------------------------------------------


def _label(row: Row) -> str:
    return f"TP1 PP1 CP1 DP{row.gpus} FSDP {row.sharding}"


def _figure(value: float) -> str:
    """A published figure as printed: whole numbers with thousands separators, percentages as they are."""
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"


def _notes(row: Row, checks: list[Recomputed], instance: str | None, document: Document) -> list[str]:
    notes = [
        f"Reported by MosaicML in llm-foundry's MPT training benchmarks, table \"{row.table}\", line {row.line} of "
        f"{DOCUMENT_PATH}; run on the MosaicML platform with llm-foundry's {row.size} pretrain configuration "
        f"(scripts/train/yamls/pretrain/mpt-{row.size}.yaml) and Composer, figures collected by {COLLECT}.",
        "Not re-measured here. The publication states no data set, software versions or node size: the data is "
        "recorded as not stated, the stack as llm-foundry at the document's commit, and 8 GPUs per node as the "
        "MosaicML platform's A100 and H100 nodes hold (every GPU count of the document is a multiple of 8).",
        f"Precision: {PRECISION_TEXT[row.precision]}; sharding {row.sharding} (PyTorch FSDP"
        + (", ZeRO-2-like: parameters stay gathered between forward and backward" if row.sharding == "SHARD_GRAD_OP"
           else "") + f"); activation checkpointing {row.checkpointing} (recorded as full recompute of every block "
        f"where True); activation CPU offload {row.offload}.",
    ]
    if row.ga * row.mbs * row.gpus != row.gbs:
        notes.append(f"GradAccum {row.ga} is ceil(GBS / GPUs / MBS) = ceil({row.gbs} / {row.gpus} / {row.mbs}): "
                     f"Composer's microbatching splits each replica's {row.gbs / row.gpus:g} rows into micro-batches "
                     f"of {row.mbs} and a smaller last one (the document's own explanation), so GA x MBS x DP = "
                     f"{row.ga * row.mbs * row.gpus} is not the global batch; recorded as published in "
                     "publication.stated_gradient_accumulation.")
    agreeing = [c for c in checks if c.agrees]
    disagreeing = [c for c in checks if not c.agrees]
    notes.append("Published figures recomputed from the row's inputs as collect_results.py computes them "
                 "(throughputs and Model TFLOP truncated by int(), MFU and HFU rounded to 2 decimals of a percent): "
                 + "; ".join(f"{c.figure} {_figure(c.published)}: {c.recomputed}" for c in agreeing)
                 + (". All agree." if not disagreeing else "."))
    for c in disagreeing:
        notes.append(f"Discrepancy: the published {c.figure} {_figure(c.published)} does not follow from the row's inputs: "
                     f"{c.recomputed}. Recorded as published; "
                     + (f"explained: {c.explanation}." if c.explanation else "not explained by any convention found."))
    if instance:
        notes.append(f"$/1M tokens prices the throughput at the {instance} on-demand price ({GPUS_PER_NODE} "
                     f"{row.gpu_type} per node); the publication ran on the MosaicML platform and states no price.")
    return notes


def _mfu_note(row: Row, n: int, catalog: Catalog) -> str:
    peak = SOURCE_PEAKS[(row.gpu_type, row.precision)]
    ours = catalog.gpus[row.gpu_type].peak_flops.bf16
    return (f"llm-foundry publishes MFU {row.mfu:g}% and HFU {row.hfu:g}% under its own count: 6 x its n_params "
            f"{row.params:,} (positional embedding, norms and biases included) plus attention 12 x layers x d_model x "
            f"sequence per token (every query against every key), over Composer's {peak / 1e12:g} TFLOP/s. The "
            f"registry's MFU counts 6 x N = 6 x {n:,} only, over the catalog's {ours / 1e12:g} TFLOP/s.")


def build(row: Row, catalog: Catalog, document: Document, superseded: list[dict[str, Any]],
          skipped: list[str]) -> dict[str, Any]:
    card = catalog.models[row.model]
    arch = card.architecture
    assert arch is not None  # admit() keeps rows whose model has no architecture out
    n = card.active_params.count
    gpu = catalog.gpus[row.gpu_type]
    instance = catalog.instance_for(row.gpu_type, GPUS_PER_NODE)
    checks = recompute(row, arch, n)
    notes = _notes(row, checks, instance, document)
    notes.extend(f"The importer also reports line {row.line}: {reason}." for reason in skipped)
    label = _label(row)
    stated_ga = row.ga if row.ga * row.mbs * row.gpus != row.gbs else None
    recipe: dict[str, Any] = {
        "schema_version": 1,
        "model": row.model,
        "gpu": {"type": row.gpu_type, "memory_gb": gpu.memory_gb, "count": row.gpus, "per_node": GPUS_PER_NODE,
                "instance": instance},
        "author": {"name": AUTHOR, "url": AUTHOR_URL},
        "status": "reported",
        "stack": {"framework": "llm-foundry with Composer (PyTorch FSDP)",
                  "source": f"{REPOSITORY} at the document's commit {document.commit} (the versions the benchmark "
                            "ran with are not stated)"},
        "workload": {"row_tokens": row.seq, "rows": "not stated by the publication", "global_batch": row.gbs,
                     "precision": PRECISIONS[row.precision]},
        "layout": {
            "label": label,
            "summary": f"{row.gpus} {row.gpu_type} ({row.gpu}), {label}, micro-batch {row.mbs}, global batch {row.gbs} "
                       f"x {row.seq} tokens, {PRECISION_TEXT[row.precision]}, gradient accumulation {row.ga}, "
                       f"activation checkpointing {'on' if row.checkpointing else 'off'}; as published.",
            "tp": 1, "pp": 1, "vpp": 1, "cp": 1, "ep": 1, "etp": 1, "dp": row.gpus, "fsdp": True,
            "gradient_accumulation": row.ga, "sequence_parallel": False, "layer_split": None,
            "rows_per_microbatch": row.mbs,
            "recompute": {"granularity": "full" if row.checkpointing else "none", "method": None, "num_layers": None},
            "dispatcher": None, "mtp_layers": None, "pipeline_layout": None,
        },
        "result": imported_result(
            # T/s / GPUs at the precision check requires (a plain float always renders a decimal).
            card, round(row.tokens_per_s_per_gpu, figures.PRECISIONS["tokens_per_s_per_gpu"].decimals),
            _mfu_note(row, n, catalog),
            published_model_tflops_per_gpu=float(row.tflop),
            published_model_tflops_note=(
                f"llm-foundry's Model TFLOP ({COLLECT}): int((6 x n_params + 12 x layers x d_model x sequence) x "
                "tokens/s per GPU / 1e12), every parameter counted at 6 FLOPs per token and attention without causal "
                "halving; the stated convention recomputes it from this row's n_params."),
            published_model_tflops_convention={"gated_experts": False, "sliding_windows": False,
                                               "six_n_params": row.params},
        ),
        "publication": {"url": document.url, "commit": document.commit, "line": row.line, "system": row.table,
                        **({"stated_gradient_accumulation": stated_ga} if stated_ga is not None else {}),
                        "superseded": superseded},
        "run": _run(row, document),
        "notes": "\n\n".join(notes) + "\n",
    }
    derive_figures(recipe, catalog)
    return recipe


def _run(row: Row, document: Document) -> str:
    return base.no_command_line(
        f"# Not published as a command line. llm-foundry's {DOCUMENT_PATH} reproduces its tables with sweep.sh /\n"
        f"# submit_benchmarks.py on the MosaicML platform (mpt-{row.size}.yaml, {row.gpus} x {row.gpu}, sequence\n"
        f"# {row.seq}, global batch {row.gbs}, micro-batch {row.mbs}, precision {row.precision}, FSDP "
        f"{row.sharding} {row.mp_mode},\n# activation checkpointing {row.checkpointing}).\n", document.url, row.line)


class LlmFoundry(Source):
    """scripts/train/benchmarking/README.md of mosaicml/llm-foundry."""

    name = "llm-foundry"

    def parse(self, text: str) -> Parsed:
        return dedupe(parse(text))

    def admit(self, row: Row, catalog: Catalog) -> str | None:
        card = catalog.models.get(row.model)
        if card is None:
            return f"model {row.model} not in the catalog"
        if card.architecture is None:
            return f"model {row.model} has no architecture in the catalog (its FLOPs cannot be recomputed)"
        if row.gpu_type not in catalog.gpus:
            return f"GPU {row.gpu_type} not in the catalog"
        return None

    build = staticmethod(build)


def dedupe(parsed: Parsed) -> Parsed:
    """Two rows with one stable key: the later one is reported and skipped."""
    return drop_repeats(parsed, lambda row: (row.model, row.gpu, row.key()),
                        lambda row, line: f"same model, GPU, precision, sequence, GPUs and global batch as line {line}")


SOURCE = LlmFoundry()
