"""NVIDIA DGX Cloud Benchmarking's training READMEs (NVIDIA/dgxc-benchmarking, llama3.1/README_70b.md and the like,
later one README.md per workload) as `reported` recipes.

A README publishes figure tables, one per model and precision: a title cell ("Llama 3.1 70b 24.09 FP8 (TP=4, PP=4,
CP=2, VP=5, MBS=1, GA=64)" or plain "Llama3.1 405b BF16") and one column per GPU count ("Throughput on 64x H100
GPUs (GBS=128)", or "128x GB200 GPUs"), then rows "Training step time (seconds per step)", "Throughput in tokens
per second" (over all GPUs), "Model flops utilization" and a time to train. Every column is one recipe (its line:
the table's title line) or a skip with that line and a reason. The layout is the title's "(TP=.., ...)" where the
title states one, else the one row of a configuration table of the same README ("| GPUs | SeqLen | ... | TP | PP
|...") whose GPU type (the heading or bold line above it), size, precision and GPU count (a count, or a range
"64-512") match the column; a column no single configuration row matches is skipped, never guessed.

Sequence length: the configuration row's SeqLen, the title's "SEQ=", or the Notes' "sequence length = 8192" (the
README's stated FLOPs count). The release is the container the README states (nvcr.io/nvidia/nemo:24.09, or the
title's "24.09"). A README that names none takes the release its folder's launch.sh at the same commit states
("export FW_VERSION=25.02.01", or the default image "nvidia+nemo+24.12.sqsh"; a branch "if [[ $MODEL_SIZE = 15b ]]"
counts for the sizes it names), read when the README is imported from a checkout with launch.sh beside it, and cited
in the recipe's notes; with no launch.sh, or one stating several releases for the row's size, it stays "unstated".

The READMEs compute MFU from the Notes' "model flops" count: Megatron's count with the core attention over the full
sequence (the term s/h in 12 L h^2 (1 + g/a + s/h), no causal halving), against peaks the README states (H100
989/1979, GB200 2450/4900 TFLOPS). The published MFU x that peak is the publication's Model TFLOP/s per GPU, which
`_published` compares with the registry's count of the same convention (figures.model_tflops_per_gpu).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator import figures
from generator.catalog import Architecture, Catalog
from generator.importers import base
from generator.importers.base import Document, ParallelRow, Parsed, Skip, Source, SourceError, catalog_gap, derive_figures, number

AUTHOR = "NVIDIA DGX Cloud Benchmarking"
AUTHOR_URL = "https://github.com/NVIDIA/dgxc-benchmarking"
GPUS_PER_NODE = {"H100": 8, "B200": 8, "B300": 8, "GB200": 4, "GB300": 4}
PRECISIONS = {"bf16": "bf16", "fp8": "fp8", "nvfp4": "nvfp4"}

COLUMN_RE = re.compile(r"^(?:Throughput on\s+)?(\d+)x?\s+([A-Z0-9]+)\s+GPUs?\b(.*)$")
GBS_RE = re.compile(r"\bGBS\s*=\s*(\d+)")
PARAMS_RE = re.compile(r"\(([^()]*=[^()]*)\)")
PARAM_RE = re.compile(r"([A-Za-z]+)\s*=\s*([A-Za-z0-9]+)")
PRECISION_RE = re.compile(r"\b(BF16|FP8|NVFP4)\b", re.IGNORECASE)
TITLE_RELEASE_RE = re.compile(r"\b(2[4-9]\.\d\d(?:\.\d+)?)\b")
CONTAINER_RE = re.compile(r"nvcr\.io[/#]+nvidia/nemo:(\d\d\.\d\d(?:\.\d+)?)")
# The Notes' worked count: "attention flops = 12 * 126 * 16384^2 * (1 + 16/128 + 8192/16384)": its query groups.
NOTES_GROUPS_RE = re.compile(r"attention flops\s*=\s*12\s*\*.*\(1\s*\+\s*(\d+)\s*/\s*(\d+)\s*\+")
# The earlier Notes' count: "attention flops = (24 * (number of layers) * (hidden size)^2) + ...": every projection
# of hidden size (multi-head attention, as many KV groups as query heads).
NOTES_MHA_RE = re.compile(r"attention flops\s*=\s*\(?\s*24\s*\*\s*\(number of layers\)")
NOTES_SEQ_RE = re.compile(r"^\s*sequence length\s*=\s*(\d+)\s*$", re.IGNORECASE)
GPU_CONTEXT_RE = re.compile(r"^\s*(?:#+\s*|\*\*)\s*(GB300|GB200|B300|B200|H100)s?\b")  # "# H100s specifications"
TRAINING_CONTEXT_RE = re.compile(r"^\s*#+\s*(SFT|LoRA)\s*$", re.IGNORECASE)  # "### SFT" above a configuration table
PRECISION_CONTEXT_RE = re.compile(r"^\s*#+\s*(BF16|FP8|NVFP4)\s*$", re.IGNORECASE)
PEAK_SENTENCE_RE = re.compile(r"(H100|GB200|B200)\s+(FP8|BF16)\s+is\s+\**([\d.]+)\**\s*([TP])FLOPS", re.IGNORECASE)
NUMBER_RE = re.compile(r"^\d+(?:\.\d+)?$")
UNSTATED = "unstated"
# launch.sh beside the README (same folder, same commit): the container release it runs.
LAUNCH_SCRIPT = "launch.sh"
LAUNCH_RELEASE_RES = (re.compile(r"^\s*export\s+FW_VERSION=(\d\d\.\d\d(?:\.\d+)?)\s*$"),
                      re.compile(r"^\s*export\s+IMAGE=.*nvidia\+nemo\+(\d\d\.\d\d(?:\.\d+)?)\.sqsh"))
LAUNCH_SIZE_IF_RE = re.compile(r"^\s*if\s+\[\[\s*\$\{?MODEL_SIZE,*\}?\s*==?\s*(\w+)\s*\]\]")
MODEL_SIZE_RE = re.compile(r"(\d+(?:\.\d+)?b)$")
PERCENT_RE = re.compile(r"^(\d+(?:\.\d+)?)\s*%$")

# Config-table header text (lower case) -> key.
CONFIG_COLUMNS = {"size": "size", "model size": "size", "precision": "precision", "datatype": "precision",
                  "gpus": "gpus", "seqlen": "seq", "tp": "tp", "pp": "pp", "cp": "cp", "ep": "ep", "etp": "etp",
                  "vp": "vp",
                  "mbs": "mbs", "gbs": "gbs", "ga": "ga", "fsdp": "fsdp", "dp": "dp"}
METRICS = {"training step time": "step", "throughput in tokens per second": "tokens",
           "model flops utilization": "mfu", "tflops_per_gpu": "tflops",
           # Per-column settings some tables state as rows (the 24.09 405B table: Layers, GBS, PP, VP).
           "layers": "layers", "gbs": "gbs", "tp": "tp", "pp": "pp", "cp": "cp", "vp": "vp"}
COLUMN_SETTINGS = ("gbs", "tp", "pp", "cp", "vp")

# Title model words (letters and digits, lower case, release and precision removed) -> (catalog model, training).
MODELS = {"llama318b": ("Llama-3.1-8B", "pre-training"), "llama3170b": ("Llama-3.1-70B", "pre-training"),
          "llama31405b": ("Llama-3.1-405B", "pre-training"),
          "llama38bfinetuningsft": ("Llama-3-8B", "sft"), "llama38bfinetuninglora": ("Llama-3-8B", "lora"),
          "llama370bfinetuningsft": ("Llama-3-70B", "sft"), "llama370bfinetuninglora": ("Llama-3-70B", "lora"),
          "nemomegatron": ("GPT-3-175B", "pre-training"), "deepseekv3": ("DeepSeek-V3", "pre-training"),
          "nemotron415b": ("Nemotron-4-15B", "pre-training"), "nemotron4340b": ("Nemotron-4-340B", "pre-training"),
          "nemotron340b": ("Nemotron-4-340B", "pre-training")}
STRONG_SCALING = "strongscaling"  # a title word: the same GPU counts at one fixed GBS (a second recipe per count)
# Titles of models the registry does not import from this source, with why.
UNIMPORTED = (
    ("nemotronh", "NVIDIA Nemotron-H (a hybrid Mamba-2 / attention model): no catalog card (its block pattern and "
                  "Mamba sizes were not sourced here)"),
    ("grok", "Grok-1 314B: no catalog card (the README's Notes count NVIDIA's benchmark configuration with a "
             "128,256-token vocabulary, not xAI's released 131,072; the expert count and FFN width it runs with were "
             "not sourced here)"),
    ("llama4", "Llama 4 Maverick: no catalog card (mixture of experts with interleaved dense layers, not sourced "
               "here)"),
    ("maxtext", "a MaxText (JAX) run: its layout is stated only as FSDP+DP, which the table does not split into "
                "the recipe's layout fields"),
    ("paxml", "a PaxML (JAX) GPT run of NVIDIA's own size: no catalog card"),
)


@dataclass(frozen=True)
class Config:
    """One row of a configuration table: its line, GPU type above it, and cells by key."""

    line: int
    gpu_type: str | None
    precision: str | None  # a "### FP8" heading above the table
    training: str | None  # a "### SFT" or "### LORA" heading above the table
    cells: dict[str, str]


@dataclass(frozen=True)
class LaunchRelease:
    """A container release launch.sh states: the release, its line and the line as written."""

    release: str
    line: int
    text: str


def launch_releases(text: str) -> list[tuple[LaunchRelease, tuple[str, bool] | None]]:
    """Every release launch.sh states, with the model-size branch it sits in: (size, True) inside
    "if [[ $MODEL_SIZE = size ]]", (size, False) in its else, None outside any."""
    found: list[tuple[LaunchRelease, tuple[str, bool] | None]] = []
    branch: tuple[str, bool] | None = None
    for line_no, line in enumerate(text.splitlines(), 1):
        if m := LAUNCH_SIZE_IF_RE.match(line):
            branch = (m.group(1).lower(), True)
        elif line.strip() == "else" and branch is not None:
            branch = (branch[0], False)
        elif line.strip() == "fi":
            branch = None
        elif m := next((m for r in LAUNCH_RELEASE_RES if (m := r.match(line))), None):
            found.append((LaunchRelease(m.group(1), line_no, line.strip()), branch))
    return found


def launch_release(text: str, model: str) -> LaunchRelease | None:
    """The one release launch.sh states for a model of this size (its first stating line); None when it states
    none or several."""
    size_match = MODEL_SIZE_RE.search(model.lower())
    size = size_match.group(1) if size_match else None
    applies = [release for release, branch in launch_releases(text)
               if branch is None or (size is not None and (branch[0] == size) == branch[1])]
    return applies[0] if len({r.release for r in applies}) == 1 else None


@dataclass
class Row(ParallelRow):
    line: int  # the title line of the figure table
    title: str
    model: str
    training: str
    release: str
    precision: str
    gpu_type: str
    gpus: int
    gbs: int
    seq: int
    tp: int
    pp: int
    cp: int
    vp: int
    ep: int
    etp: int  # expert tensor parallelism (a configuration table's ETP; 1 where not stated or NA)
    mbs: int
    fsdp: bool
    stated_ga: int | None
    stated_dp: int | None  # a configuration table's DP column
    step_time: float
    step_text: str
    tokens_total: float
    mfu_percent: float | None
    tflops: float | None  # a TFLOPS_per_GPU row (the DeepSeek-V3 README): the publication's own Model TFLOP/s
    peak_tflops: float | None  # the README's stated peak for this GPU and precision
    layout_from: str  # "the title" or "the configuration table's line N"
    strong_scaling: bool  # a strong-scaling table (one GBS for every count): its own recipe per count
    notes_query_groups: dict[int, int]  # query heads -> query groups of the README's worked FLOPs counts
    notes_mha: bool  # the README's count takes K and V as wide as Q (multi-head attention)
    layers: int | None  # a Layers row of the table (a proxy run has fewer than the model)
    seq_from: str
    inferred: list[dict[str, str]] = field(default_factory=list)
    release_from_launch: LaunchRelease | None = None  # the README names none; launch.sh at the same commit does


    @property
    def tokens_per_gpu(self) -> float:
        return self.tokens_total / self.gpus

    def key(self) -> str:
        kind = {"pre-training": "pretrain", "sft": "sft", "lora": "lora"}[self.training]
        key = f"dgxc-{self.release}-{kind}-{self.gpus}gpu-{self.precision}"
        return f"{key}-strong-scaling-gbs{self.gbs}" if self.strong_scaling else key


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _plain(cell: str) -> str:
    return cell.replace("**", "").replace("\\", "").strip()


def _model_words(title: str) -> str:
    text = PARAMS_RE.sub(" ", title)
    text = TITLE_RELEASE_RE.sub(" ", text)
    text = PRECISION_RE.sub(" ", text)
    text = re.sub(r"\b(H100|GB200|B200)\b", " ", text)
    return re.sub(r"[^a-z0-9]", "", text.lower())


@dataclass(frozen=True)
class Context:
    """What a README states once for all its tables."""

    release: str | None
    notes_seq: int | None
    peaks: dict[tuple[str, str], float]
    notes_query_groups: dict[int, int]  # query heads -> the query groups the Notes' worked FLOPs counts use
    notes_mha: bool  # the Notes count K and V projections of hidden size (no grouped-query attention)


def _document_context(lines: list[str]) -> Context:
    """The container release, the Notes' sequence length and query groups, the stated peaks (GPU, precision)."""
    text = "\n".join(lines)
    # Query groups by query heads: a README of several models (8B, 70B, 405B) works one count per model.
    groups = {int(m.group(2)): int(m.group(1)) for line in lines if (m := NOTES_GROUPS_RE.search(line))}
    m = CONTAINER_RE.search(text)
    release = m.group(1) if m else None
    seq = next((int(m.group(1)) for line in lines if (m := NOTES_SEQ_RE.match(line))), None)
    # "... for GB200 BF16 is **2.45** PFLOPS": in TFLOPS, 2450.
    peaks = {(g.upper(), p.lower()): float(v) * (1000 if unit.upper() == "P" else 1)
             for g, p, v, unit in PEAK_SENTENCE_RE.findall(text)}
    # A peak table: "| Data Type | GB200 | H100 |" then "| BF16 | 2450 | 989 |".
    for i, line in enumerate(lines[:-1]):
        cells = _cells(line) if line.startswith("|") else []
        if cells and cells[0].lower() == "data type" and base.TABLE_SEPARATOR.match(lines[i + 1]):
            for body in lines[i + 2:]:
                if not body.startswith("|"):
                    break
                row = _cells(body)
                for gpu, value in zip(cells[1:], row[1:], strict=False):
                    if NUMBER_RE.match(value.replace("*", "")):
                        peaks[(gpu.upper(), row[0].lower())] = float(value.replace("*", ""))
    return Context(release, seq, peaks, groups, any(NOTES_MHA_RE.search(line) for line in lines))


def _tables(lines: list[str]) -> list[tuple[int, list[str], list[tuple[int, list[str]]], str | None, str | None,
                                            str | None]]:
    """Every table: (header line, header cells, [(line, cells)], GPU-type, precision and training headings above)."""
    out = []
    gpu_ctx: str | None = None
    prec_ctx: str | None = None
    train_ctx: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if m := GPU_CONTEXT_RE.match(line):
            gpu_ctx, prec_ctx = m.group(1).upper(), None
        elif m := PRECISION_CONTEXT_RE.match(line):
            prec_ctx = m.group(1).lower()
        elif m := TRAINING_CONTEXT_RE.match(line):
            train_ctx = m.group(1).lower()
        if line.lstrip().startswith("|") and i + 1 < len(lines) and base.TABLE_SEPARATOR.match(lines[i + 1].strip()):
            header = _cells(line)
            body = []
            j = i + 2
            # Some tables drop a body row's leading "|" ("Training step time (seconds per step)| 52.04 |").
            while j < len(lines) and "|" in lines[j] and lines[j].strip():
                body.append((j + 1, _cells(lines[j])))
                j += 1
            out.append((i + 1, header, body, gpu_ctx, prec_ctx, train_ctx))
            i = j
            continue
        i += 1
    return out


def _configs(tables: list) -> list[Config]:
    configs = []
    for _, header, body, gpu_ctx, prec_ctx, train_ctx in tables:
        keys = [CONFIG_COLUMNS.get(_plain(h).lower()) for h in header]
        if "gpus" not in keys or "tp" not in keys:
            continue
        for line, cells in body:
            values = {k: _plain(c) for k, c in zip(keys, cells, strict=False) if k}
            configs.append(Config(line, gpu_ctx, prec_ctx, train_ctx, values))
    return configs


def _gpus_match(cell: str, gpus: int) -> bool:
    if m := re.match(r"^(\d+)\s*-\s*(\d+)$", cell):
        low, high = int(m.group(1)), int(m.group(2))
        # A range of a weak-scaling table: the powers of two from low to high.
        return low <= gpus <= high and gpus & (gpus - 1) == 0
    return _whole(cell) == gpus


def _size(title: str) -> str | None:
    found = re.findall(r"\b(\d+)b\b", title.lower())
    return f"{found[-1]}b" if found else None


def _matching_configs(configs: list[Config], gpu_type: str, gpus: int, precision: str,
                      size: str | None, gbs: int | None, training: str) -> list[Config]:
    out = []
    for c in configs:
        if c.training not in (None, training):
            continue
        if gbs is not None and "gbs" in c.cells and _count(c.cells["gbs"], gpus) != gbs:
            continue  # the column states its GBS (weak and strong scaling tables list the same GPU counts)
        if c.gpu_type not in (None, gpu_type):
            continue
        if c.precision not in (None, precision):
            continue
        if "precision" in c.cells and precision not in c.cells["precision"].lower().split("/"):
            continue
        if "size" in c.cells and size is not None and c.cells["size"].lower() != size:
            continue
        if _gpus_match(c.cells.get("gpus", ""), gpus):
            out.append(c)
    return out


def _count(cell: str | None, gpus: int) -> int | None:
    """A configuration cell as a whole number: '4', 'GPUs*4', 'GPUs/32', 'GPUs'; None for 'NA' or missing."""
    if cell is None:
        return None
    cell = cell.replace(" ", "")
    if (whole := _whole(cell)) is not None:
        return whole
    if m := re.match(r"^GPUs(?:([*/])(\d+))?$", cell, re.IGNORECASE):
        if m.group(1) is None:
            return gpus
        n = _whole(m.group(2)) or 0
        return gpus * n if m.group(1) == "*" else (gpus // n if n and gpus % n == 0 else None)
    return None


def _whole(text: str | None) -> int | None:
    """A cell as a whole number (ASCII digits only: str.isdigit takes '²') that base.number takes (no 400-digit
    count), else None."""
    text = (text or "").strip()
    value = _bounded(text, integer=True) if re.fullmatch(r"[0-9]+", text) else None
    return None if value is None else int(value)


def _bounded(text: str, integer: bool = False) -> float | None:
    """base.number's reading of a cell the README's patterns matched, None where it refuses it (1e308, a
    400-digit figure): the column is then skipped as stating no such figure."""
    try:
        return number(text, "cell", integer=integer)
    except SourceError:
        return None


def _fsdp(cell: str | None) -> bool | None:
    if cell is None:
        return None
    return {"1": True, "true": True, "0": False, "false": False}.get(cell.lower())


def _column_settings(title: str, header_cell: str, gpus: int, configs: list[Config], gpu_type: str,
                     precision: str, size: str | None, training: str) -> tuple[dict[str, Any], str] | str:
    """The column's settings (tp, pp, cp, vp, ep, mbs, gbs, ga, seq, fsdp) and where they are stated, or why not."""
    settings: dict[str, Any] = {}
    if m := GBS_RE.search(header_cell):
        settings["gbs"] = _whole(m.group(1))
    params = PARAMS_RE.search(title)
    if params:
        for key, value in PARAM_RE.findall(params.group(1)):
            key = key.lower()
            if key in ("tp", "pp", "cp", "vp", "ep", "mbs", "ga", "seq"):
                settings[key] = _whole(value)
        return settings, "the title"
    matches = _matching_configs(configs, gpu_type, gpus, precision, size, settings.get("gbs"), training)
    if len(matches) != 1:
        return (f"{len(matches)} rows of the README's configuration tables match {gpus}x {gpu_type} {precision}"
                + (f" {size}" if size else "") + ": the layout is not stated unambiguously")
    c = matches[0]
    for key in ("tp", "pp", "cp", "vp", "ep", "etp", "mbs", "ga", "seq", "dp"):
        settings[key] = _count(c.cells.get(key), gpus)
    if "gbs" not in settings:
        settings["gbs"] = _count(c.cells.get("gbs"), gpus)
    settings["fsdp"] = _fsdp(c.cells.get("fsdp"))
    return settings, f"the configuration table's line {c.line}"


def _metric_rows(body: list[tuple[int, list[str]]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for _, cells in body:
        label = re.sub(r"\s*\(.*\)\s*$", "", cells[0]).strip().lower()
        if label in METRICS:
            out[METRICS[label]] = cells[1:]
    return out


def _number(cell: str) -> float | None:
    cell = cell.replace(",", "").strip()
    return _bounded(cell) if NUMBER_RE.match(cell) else None


def _model_of(words: str) -> tuple[str, str] | str:
    words = words.removesuffix(STRONG_SCALING)
    if words in MODELS:
        return MODELS[words]
    for stem, reason in UNIMPORTED:
        if stem in words:
            return reason
    return f"model '{words}' is not one this importer maps to a catalog card"


def _column(out: Parsed, line: int, title: str, header_cell: str, metrics: dict[str, list[str]], index: int,
            context: Context, configs: list[Config]) -> None:
    """One figure column: a Row in out.rows or a Skip at the title's line."""
    release, notes_seq, peaks = context.release, context.notes_seq, context.peaks
    col = COLUMN_RE.match(_plain(header_cell))
    if col is None:
        out.skips.append(Skip(line, f"column '{header_cell}' names no 'Nx GPU GPUs'"))
        return
    gpus, gpu_type = _whole(col.group(1)) or 0, col.group(2).upper()
    words = _model_words(title)
    model = _model_of(words)
    if isinstance(model, str):
        out.skips.append(Skip(line, f"{gpus}x {gpu_type}: {model}"))
        return
    precisions = {p.lower() for p in PRECISION_RE.findall(title)}
    if len(precisions) != 1:
        out.skips.append(Skip(line, f"{gpus}x {gpu_type}: the title states no single precision"))
        return
    precision = precisions.pop()
    values = {k: (cells[index] if index < len(cells) else "") for k, cells in metrics.items()}
    step, tokens = _number(values.get("step", "")), _number(values.get("tokens", ""))
    if step is None or tokens is None or step <= 0 or tokens <= 0:
        out.skips.append(Skip(line, f"{gpus}x {gpu_type}: no step time and tokens/s figures in the column "
                                    f"({values.get('step', '')!r}, {values.get('tokens', '')!r})"))
        return
    mfu_cell = values.get("mfu", "")
    mfu = _bounded(m.group(1)) if (m := PERCENT_RE.match(mfu_cell.strip())) else None
    tflops = _number(values.get("tflops", ""))
    got = _column_settings(title, header_cell, gpus, configs, gpu_type, precision, _size(title), model[1])
    if isinstance(got, str):
        out.skips.append(Skip(line, f"{gpus}x {gpu_type}: {got}"))
        return
    settings, layout_from = got
    column_keys = [key for key in COLUMN_SETTINGS if values.get(key, "").strip()]
    for key in column_keys:
        settings[key] = _whole(values[key])
    if column_keys:
        layout_from += f" and the table's {', '.join(k.upper() for k in column_keys)} rows"
    layers = _whole(values.get("layers"))
    title_release = TITLE_RELEASE_RE.search(PARAMS_RE.sub(" ", title))
    inferred: list[dict[str, str]] = []
    seq = settings.get("seq")
    seq_from = f"stated in {layout_from}"
    if seq is None:
        if notes_seq is None:
            out.skips.append(Skip(line, f"{gpus}x {gpu_type}: the README states no sequence length"))
            return
        seq, seq_from = notes_seq, "the README's Notes (its FLOPs count: 'sequence length = " f"{notes_seq}')"
    for key in ("tp", "pp", "mbs", "gbs"):
        if settings.get(key) is None:
            out.skips.append(Skip(line, f"{gpus}x {gpu_type}: {key.upper()} not stated in {layout_from}"))
            return
    if gpus == 0 or seq == 0 or any(settings.get(key) == 0 for key in ("tp", "pp", "cp", "vp", "ep", "mbs", "gbs")):
        out.skips.append(Skip(line, f"{gpus}x {gpu_type}: a GPU count or parallel size of 0 in {layout_from}"))
        return
    for key in ("cp", "vp", "ep"):
        if settings.get(key) is None:
            settings[key] = 1
            inferred.append({"field": f"layout.{'vpp' if key == 'vp' else key}",
                             "reason": f"not stated in {layout_from} (absent or NA): recorded as 1"})
    tp, pp, cp = settings["tp"], settings["pp"], settings["cp"]
    if gpus % (tp * pp * cp) or settings["gbs"] % (settings["mbs"] * (gpus // (tp * pp * cp))):
        out.skips.append(Skip(line, f"{gpus}x {gpu_type}: TP {tp} x PP {pp} x CP {cp}, MBS {settings['mbs']}, GBS "
                                    f"{settings['gbs']} give no whole data-parallel size and accumulation"))
        return
    fsdp = settings.get("fsdp")
    if fsdp is None:
        inferred.append({"field": "layout.fsdp", "reason": f"not stated in {layout_from}: recorded as off"})
    peak_key = (gpu_type, "fp8" if precision == "fp8" else "bf16")
    out.rows.append(Row(
        line=line, title=title, model=model[0], training=model[1],
        release=title_release.group(1) if title_release else (release or UNSTATED), precision=precision,
        gpu_type=gpu_type, gpus=gpus, gbs=settings["gbs"], seq=seq, tp=tp, pp=pp, cp=cp, vp=settings["vp"],
        ep=settings["ep"], etp=settings.get("etp") or 1, mbs=settings["mbs"], fsdp=bool(fsdp),
        stated_ga=settings.get("ga"),
        stated_dp=settings.get("dp"), step_time=step,
        step_text=values["step"].strip(), tokens_total=tokens, mfu_percent=mfu, tflops=tflops,
        peak_tflops=peaks.get(peak_key) if precision != "nvfp4" else None, layout_from=layout_from, layers=layers,
        notes_query_groups=context.notes_query_groups, notes_mha=context.notes_mha,
        strong_scaling=words.endswith(STRONG_SCALING),
        seq_from=seq_from, inferred=inferred))


def parse(text: str) -> Parsed:
    out = Parsed()
    lines = text.splitlines()
    context = _document_context(lines)
    tables = _tables(lines)
    configs = _configs(tables)
    for line, header, body, _, _, _ in tables:
        if len(header) < 2 or not any(COLUMN_RE.match(_plain(h)) for h in header[1:]):
            continue
        metrics = _metric_rows(body)
        for index, cell in enumerate(header[1:]):
            if not cell.strip():
                continue
            out.table_rows += 1
            if "step" not in metrics or "tokens" not in metrics:
                out.skips.append(Skip(line, f"column '{cell}': the table has no step-time or tokens/s row"))
                continue
            _column(out, line, header[0], cell, metrics, index, context, configs)
    return out


def recomputed_total_tokens(row: Row) -> float:
    """Tokens/s over all GPUs from the column's own step time: sequence x GBS / step time (the README's formula)."""
    return row.seq * row.gbs / row.step_time


def _tokens_note(row: Row) -> str:
    ours = recomputed_total_tokens(row)
    places = figures.written_decimals(row.step_text) or 0
    half = 0.5 * 10 ** -places
    low, high = row.seq * row.gbs / (row.step_time + half), row.seq * row.gbs / (row.step_time - half)
    gap = figures.relative_difference(row.tokens_total, ours) * 100
    text = (f"Tokens/s recomputed from the column's step time: {row.seq} x {row.gbs} / {row.step_text} s = {ours:.0f} "
            f"over {row.gpus} GPUs against the published {row.tokens_total:g} ({gap:.2f}% apart)")
    if low - 0.5 <= row.tokens_total <= high + 0.5:
        return text + f"; within the step time's rounding to {places} decimals ({low:.0f} to {high:.0f})."
    return (text + f": DISCREPANCY beyond the step time's rounding to {places} decimals ({low:.0f} to {high:.0f}); "
            "the recipe keeps the published tokens/s.")


# The READMEs' Notes count: Megatron's matrices with every query against every key (s/h, no causal halving).
CONVENTION = {"gated_experts": True, "sliding_windows": True, "causal_attention": False}


def _published(row: Row, catalog: Catalog) -> dict[str, Any]:
    """The publication's MFU as Model TFLOP/s per GPU (MFU x the README's peak), compared with Megatron's causal
    count and with the README's Notes count (the core attention over the full sequence), each at 2/3 for LoRA."""
    if row.tflops is None and (row.mfu_percent is None or row.peak_tflops is None):
        return {}
    arch = catalog.models[row.model].architecture
    assert arch is not None
    if row.tflops is not None:
        published = row.tflops
        stated = f"the README's TFLOPS_per_GPU row states {row.tflops:g} TFLOP/s per GPU"
    else:
        assert row.mfu_percent is not None and row.peak_tflops is not None
        published = round(row.mfu_percent / 100 * row.peak_tflops, 1)
        stated = (f"the README's MFU {row.mfu_percent:g}% x its stated peak {row.peak_tflops:g} TFLOPS = "
                  f"{published:.1f} TFLOP/s per GPU")
    frozen = row.training == "lora"
    causal = figures.model_tflops_per_gpu(arch, row.seq, row.tokens_per_gpu, frozen_base=frozen)
    full = figures.model_tflops_per_gpu(arch, row.seq, row.tokens_per_gpu, causal=False, frozen_base=frozen)
    tolerance = figures.PUBLISHED_TFLOPS_TOLERANCE
    lora = ", both at 2/3 for LoRA's frozen base" if frozen else ""
    out: dict[str, Any] = {"published_model_tflops_per_gpu": published}
    if figures.relative_difference(published, causal) <= tolerance:
        out["published_model_tflops_note"] = (
            f"Published: {stated}; Megatron's causal count gives {causal:.1f} "
            f"({figures.relative_difference(published, causal) * 100:.2f}% apart), the count without causal halving "
            f"{full:.1f}{lora}.")
        if frozen:
            out["published_model_tflops_convention"] = {**CONVENTION, "causal_attention": True, "frozen_base": True}
        return out
    off = figures.relative_difference(published, full)
    if off <= tolerance:
        out["published_model_tflops_note"] = (
            f"A convention of the publication, not an error: {stated}; its Notes count the core attention over the "
            f"full sequence (no causal halving), which gives {full:.1f} ({off * 100:.2f}% apart), {causal:.1f} "
            f"under Megatron's causal count{lora}.")
        out["published_model_tflops_convention"] = {**CONVENTION, "frozen_base": frozen}
        return out
    # The figure is printed to a few decimals: the TFLOP/s it gives is exact only to half a unit of the last one.
    rounding = (0.5 * 10 ** -figures.decimals(row.tflops) / row.tflops if row.tflops is not None else
                0.5 * 10 ** -figures.decimals(row.mfu_percent or 1.0) / (row.mfu_percent or 1.0))
    out["published_model_tflops_note"] = (
        f"DISCREPANCY: {stated}; its {row.tokens_per_gpu:.1f} tokens/s per GPU give {full:.1f} under the README's "
        f"count (full attention) and {causal:.1f} under Megatron's causal count{lora}: {off * 100:.2f}% from the "
        f"nearer convention's, beyond the {tolerance * 100:g}% tolerance and the published figure's own rounding "
        f"({rounding * 100:.2f}%)." + _query_groups_explanation(row, arch, published, frozen))
    out["published_figures_disagree"] = True
    return out


def _query_groups_explanation(row: Row, arch: Architecture, published: float, frozen: bool) -> str:
    """Where the README's worked count states other query groups than the model's KV heads: the count with the
    README's groups (the same formula on the card with those KV heads), and whether it reproduces the MFU."""
    if len(arch.attention) != 1:
        return ""
    name, kind = next(iter(arch.attention.items()))
    groups = arch.attention_heads if row.notes_mha else row.notes_query_groups.get(arch.attention_heads)
    if groups is None:
        return ""
    if groups == kind.kv_heads:
        return ""
    theirs_arch = arch.model_copy(update={"attention": {name: kind.model_copy(update={"kv_heads": groups})}})
    theirs = figures.model_tflops_per_gpu(theirs_arch, row.seq, row.tokens_per_gpu, causal=False,
                                          frozen_base=frozen)
    off = figures.relative_difference(published, theirs)
    verdict = "reproduces the published MFU" if off <= figures.PUBLISHED_TFLOPS_TOLERANCE else "does not reproduce it"
    how = ("as multi-head attention (24 L h^2: keys and values as wide as the queries)" if row.notes_mha else
           f"with {groups} query groups (1 + {groups}/{arch.attention_heads})")
    return (f" The README's Notes count the attention projections {how}, where {row.model} has {kind.kv_heads} KV "
            f"heads: counted with {groups} KV heads the formula gives {theirs:.1f} "
            f"({off * 100:.2f}% apart), which {verdict}; the error is the README's.")


def _mark_superseded(superseded: list[dict[str, Any]], row: Row, catalog: Catalog,
                     convention: dict[str, Any] | None) -> list[dict[str, Any]]:
    """An earlier README's figures judged by the count this recipe states (as check judges them): one beyond the
    tolerance is flagged figures_disagree (that document's MFU and tokens/s do not agree by that count)."""
    arch = catalog.models[row.model].architecture
    assert arch is not None
    out = []
    for entry in superseded:
        entry = dict(entry)
        if entry.get("published_model_tflops_per_gpu") is not None:
            conv = convention or {}
            ours = figures.model_tflops_per_gpu(arch, row.seq, entry["tokens_per_s_per_gpu"],
                                                causal=conv.get("causal_attention", True),
                                                frozen_base=conv.get("frozen_base", False))
            off = figures.relative_difference(entry["published_model_tflops_per_gpu"], ours)
            if off > figures.PUBLISHED_TFLOPS_TOLERANCE:
                entry["figures_disagree"] = True
            else:
                entry.pop("figures_disagree", None)
        out.append(entry)
    return out


def _placement(row: Row, catalog: Catalog) -> str | None:
    arch = catalog.models[row.model].architecture
    assert arch is not None
    stages = row.pp * row.vp
    if row.pp == 1 or arch.layers % stages == 0:
        return None
    return (f"not stated by the publication: {arch.layers} layers over PP x VP = {stages} virtual stages do not "
            "divide evenly; NeMo's placement is its own")


KIND = {"pre-training": "pre-training", "sft": "supervised fine-tuning (SFT)", "lora": "LoRA fine-tuning"}


def build(row: Row, catalog: Catalog, document: Document, superseded: list[dict[str, Any]],
          skipped: list[str]) -> dict[str, Any]:
    card = catalog.models[row.model]
    per_node = min(GPUS_PER_NODE.get(row.gpu_type, 8), row.gpus)
    label = (f"TP{row.tp} PP{row.pp}" + (f" VP{row.vp}" if row.vp > 1 else "") + f" CP{row.cp}"
             + (f" EP{row.ep}" if row.ep > 1 else "") + f" DP{row.dp}" + (" FSDP" if row.fsdp else ""))
    ga = row.gradient_accumulation
    notes = [
        f"Reported by NVIDIA in DGX Cloud Benchmarking's README ({document.path or document.url}), NeMo "
        f"{row.release} container, {row.gpus}x {row.gpu_type}, {KIND[row.training]}; the table titled "
        f"'{row.title}' at line {row.line}, a step of {row.step_text} s per global batch of {row.gbs}.",
        f"Layout from {row.layout_from}; sequence length {row.seq} from {row.seq_from}. Not re-measured here. "
        "Settings the publication does not state are not invented: recompute and the MoE dispatcher are not stated "
        "(null), the data is not stated; " + ("FP8's scaling recipe is not named (recorded as fp8); "
                                              if row.precision == "fp8" else "") + "sequence "
        "parallelism is recorded as on when TP > 1 and listed as inferred.",
        _tokens_note(row),
        f"Tokens/s per GPU: the published {row.tokens_total:g} over {row.gpus} GPUs = {row.tokens_per_gpu:.1f}.",
    ]
    if row.stated_ga is not None and row.stated_ga != ga:
        notes.append(f"DISCREPANCY: {row.layout_from} states GA {row.stated_ga}; GBS {row.gbs} / (MBS {row.mbs} x "
                     f"DP {row.dp}) = {ga}, which the layout records.")
    if row.mfu_percent is not None and row.peak_tflops is None and row.tflops is None:
        notes.append(f"The README's MFU {row.mfu_percent:g}% is not compared: it states no {row.gpu_type} "
                     f"{row.precision.upper()} peak.")
    if row.stated_dp is not None and row.stated_dp != row.dp:
        notes.append(f"DISCREPANCY: {row.layout_from} states DP {row.stated_dp}; {row.gpus} GPUs / (TP {row.tp} x PP "
                     f"{row.pp} x CP {row.cp}) = {row.dp}, which the layout records.")
    if row.release == UNSTATED:
        notes.append("The README names no container release: recorded as 'unstated'.")
    if (launch := row.release_from_launch) is not None:
        notes.append(f"The README names no container release; {_launch_url(document)} (line {launch.line}: "
                     f"'{launch.text}'), the launch script of the same folder and commit, runs NeMo {launch.release}: "
                     "recorded as the release.")
    if skipped:
        notes.append("Other columns of the same table were not imported: " + "; ".join(skipped) + ".")
    if row.training == "lora":
        notes.append("A LoRA row: adapters on a frozen base; the MFU counts 4N FLOPs a token.")
    inferred = [{"field": "layout.sequence_parallel", "reason": "not in the README: on when TP > 1, as NeMo's "
                 "performance configurations set it"}, *row.inferred]
    result = base.imported_result(card, round(row.tokens_per_gpu, 1), **_published(row, catalog))
    superseded = _mark_superseded(superseded, row, catalog, result.get("published_model_tflops_convention"))
    recipe: dict[str, Any] = {
        "schema_version": 1,
        "model": row.model,
        "gpu": {"type": row.gpu_type, "memory_gb": catalog.gpus[row.gpu_type].memory_gb, "count": row.gpus,
                "per_node": per_node, "instance": catalog.instance_for(row.gpu_type, per_node)},
        "author": {"name": AUTHOR, "url": AUTHOR_URL},
        "status": "reported",
        "stack": {"framework": f"nemo (NeMo {row.release} container)",
                  "source": (f"the README; the NeMo {row.release} container from launch.sh line "
                             f"{row.release_from_launch.line} at the same commit" if row.release_from_launch
                             else f"the README (NeMo {row.release} container)")},
        "workload": {"row_tokens": row.seq, "rows": "not stated by the publication", "global_batch": row.gbs,
                     "precision": PRECISIONS[row.precision], "training": row.training},
        "layout": {
            "label": label,
            "summary": f"{row.gpus} {row.gpu_type}, {label}, micro-batch {row.mbs}, global batch {row.gbs} x "
                       f"{row.seq} tokens, {row.precision.upper()}; as published.",
            "tp": row.tp, "pp": row.pp, "vpp": row.vp, "cp": row.cp, "ep": row.ep, "etp": row.etp, "dp": row.dp,
            "fsdp": row.fsdp, "gradient_accumulation": ga, "sequence_parallel": row.tp > 1,
            "layer_split": None, "rows_per_microbatch": row.mbs, "recompute": None, "dispatcher": None,
            "mtp_layers": None, "pipeline_layout": _placement(row, catalog),
        },
        "result": result,
        "publication": {"url": document.url, "commit": document.commit, "release": row.release, "line": row.line,
                        "system": f"{row.gpus}x {row.gpu_type}", "superseded": superseded},
        "run": base.no_command_line(
            f"# Not published as a command line. NVIDIA ran this column with DGX Cloud Benchmarking's recipe\n"
            f"# (NeMo {row.release}); the table states: {row.title} | {row.gpus}x {row.gpu_type} GPUs,\n"
            f"# step time {row.step_text} s, {row.tokens_total:g} tokens/s.\n", document.url, row.line),
        "notes": "\n\n".join(notes) + "\n",
        "inferred": inferred,
    }
    derive_figures(recipe, catalog)
    return recipe


def _launch_url(document: Document) -> str:
    """launch.sh of the README's folder at the README's commit (its blob URL on GitHub, else its name)."""
    if document.repository is None or document.path is None or document.commit is None:
        return LAUNCH_SCRIPT
    folder = document.path.rsplit("/", 1)[0] + "/" if "/" in document.path else ""
    return Document.github(document.repository, document.commit, folder + LAUNCH_SCRIPT).url


def with_launch_releases(parsed: Parsed, launch_text: str) -> Parsed:
    """The README's rows without a stated release take the one launch.sh states for their model size."""
    for row in parsed.rows:
        if row.release == UNSTATED and (launch := launch_release(launch_text, row.model)) is not None:
            row.release, row.release_from_launch = launch.release, launch
    return parsed


class DgxcBenchmarking(Source):
    """A training README of NVIDIA/dgxc-benchmarking at one commit."""

    name = "dgxc-benchmarking"

    parse = staticmethod(parse)

    def read(self, path: Path) -> Parsed:
        text = base.read_document(path)  # the guarded read (regular file, size bound, UTF-8): SourceError, located
        parsed = self.parse(text)  # the README's SHA-256 is recorded by base.run_source, as for every source
        launch = path.parent / LAUNCH_SCRIPT
        return with_launch_releases(parsed, base.read_document(launch)) if launch.is_file() else parsed

    def admit(self, row: Row, catalog: Catalog) -> str | None:
        if gap := catalog_gap(catalog, row.model, row.gpu_type):
            return f"{row.gpus}x {row.gpu_type}: {gap}"
        arch = catalog.models[row.model].architecture
        if arch is not None and row.layers is not None and row.layers != arch.layers:
            return (f"{row.gpus}x {row.gpu_type}: a proxy run of {row.layers} layers (the table's Layers row), not "
                    f"{row.model}'s {arch.layers}")
        if row.ep > 1 and (arch is None or arch.moe is None):
            return f"{row.gpus}x {row.gpu_type}: EP {row.ep} on {row.model}, a dense model"
        # Megatron carves the expert groups (EP x ETP) out of TP x CP x DP.
        if (row.tp * row.cp * row.dp) % (row.ep * row.etp):
            return (f"{row.gpus}x {row.gpu_type}: EP {row.ep} x ETP {row.etp} does not divide TP x CP x DP = "
                    f"{row.tp * row.cp * row.dp}")
        return None

    build = staticmethod(build)


SOURCE = DgxcBenchmarking()
