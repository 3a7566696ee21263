"""NVIDIA NeMo's performance summary of the NeMo 24.07 container (docs/source/performance/performance_summary.md of
NVIDIA/NeMo, before Megatron-Bridge took the tables over) as `reported` recipes.

The document has two tables under "### Pretraining" and "### Finetuning", each after a bullet list that states the
container ("NeMo24.07"), the system ("DGX-H100") and the precision ("at FP8 precision", no scaling recipe named:
recorded as `fp8`). Pretraining columns: Model, #-GPUs, GBS, MBS, Sequence Length, TP, PP, CP, VP, Tokens / sec /
GPU, Model TFLOP / sec / GPU and an estimated time to train; Finetuning columns: Model, Task (SFT or LoRA), #-GPUs,
GBS, MBS, Packed Sequence Length, TP, PP, Tokens / sec / GPU, Model TFLOP / sec / GPU and an estimated time (no CP
or VP column: recorded as 1 and listed as inferred). A figure may be a Markdown link ("[888](url)"): its text is
the figure. Every data row is a recipe or a skip with its line and reason (a model without a catalog card).

The published Model TFLOP/s counts the core attention against every key (no causal halving): 12,273 tok/s of
Llama 3 8B at 8,192 tokens give 711 TFLOP/s under that count, 632 under Megatron's causal one. Recorded as the
publication's convention (`causal_attention: false`), which check recomputes.

Later releases (25.02, 25.04, 25.07) were published only on docs.nvidia.com (the file above was deleted from
NVIDIA/NeMo on 2024-12-12, commit d31653f792, its README pointing to the user guide; no branch or tag holds a later
version). What could be read of them is a stored text rendering of each page's beginning: "Container: NeMo 25.04",
"System: DGX-GB200" lines and one-cell-per-line tables ("LLAMA3-8B |" ... under a "---|---|" separator), with FSDP,
EP and GA columns and, from 25.07, "a (b)" cells (a second configuration, as Megatron-Bridge's tables write it).
`parse` reads both forms; a row the copy cuts off is a skip at its line, saying so.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from generator import figures
from generator.catalog import Catalog
from generator.importers import base
from generator.importers.base import Document, ParallelRow, Parsed, Skip, Source, SourceError, catalog_gap, derive_figures, number

REPOSITORY = "NVIDIA/NeMo"
PATH = "docs/source/performance/performance_summary.md"
COMMIT = "8e3d65dcfe3504689bfc5b6e67d502780aacad41"  # "24.07 perf numbers", the table's last change
# GPUs per node of each system the tables name (a GB200 compute tray holds 4 GPUs).
GPUS_PER_NODE = {"DGX-H100": 8, "DGX-B200": 8, "DGX-GB200": 4}

# The document's model names -> catalog cards. GPT-3 (learned positional embeddings, NeMo's own sizes) and
# Nemotron have no card: their rows are skipped with that reason.
MODELS = {"LLAMA2-7B": "Llama-2-7B", "LLAMA2-13B": "Llama-2-13B", "LLAMA2-70B": "Llama-2-70B",
          "LLAMA3-8B": "Llama-3-8B", "LLAMA3-70B": "Llama-3-70B",
          # 25.02 and 25.04 write "LLAMA3-405B", 25.07 "LLAMA3.1-405B": one model, Llama 3.1 405B (Meta released
          # no Llama 3 405B; NeMo's script for it is scripts/performance/llm/pretrain_llama31_405b.py).
          "LLAMA3-405B": "Llama-3.1-405B", "LLAMA3.1-405B": "Llama-3.1-405B", "Mixtral-8x7B": "Mixtral-8x7B"}
SECTIONS = {"pretraining": "pre-training", "finetuning": None}  # finetuning: the row's Task says SFT or LoRA
# The columns each section's table must have (the estimated-time column is not read).
REQUIRED = {"pretraining": {"model", "gpus", "gbs", "mbs", "seq", "tp", "pp", "cp", "vp", "tokens", "tflops"},
            "finetuning": {"model", "task", "gpus", "gbs", "mbs", "seq", "tp", "pp", "tokens", "tflops"}}
TASKS = {"SFT": "sft", "LoRA": "lora"}
SYSTEMS = {"DGX-H100": "H100", "DGX-B200": "B200", "DGX-GB200": "GB200"}

SECTION_RE = re.compile(r"^###\s+(\w+)\s*$")
CONTAINER_RE = re.compile(r"Container:\s*\[?NeMo\s*([0-9.]+)\]?")
SYSTEM_RE = re.compile(r"System:\s*(\S+)")
PRECISION_RE = re.compile(r"\b(?:at|using) (FP8|BF16) precision\b")
# 25.04 onwards: "We apply per-tensor FP8 quantization, leveraging scaling factors computed in the current step".
CURRENT_SCALING_RE = re.compile(r"per-tensor FP8 quantization.*\bcurrent step\b")
SEPARATOR_RE = re.compile(r"^\|\s*-+")
LINK_RE = re.compile(r"^\[([^\]]+)\]\((https?://[^)]+)\)$")
NUMBER_RE = re.compile(r"^[0-9]+$")

COLUMNS = {"model": "model", "task": "task", "#-gpus": "gpus", "gbs": "gbs", "mbs": "mbs",
           "sequence length": "seq", "packed sequence length": "seq", "tp": "tp", "pp": "pp", "cp": "cp",
           "vp": "vp", "fsdp": "fsdp", "ep": "ep", "ga": "ga", "tokens / sec / gpu": "tokens",
           "model tflop / sec / gpu": "tflops"}
# A rendered page (the later releases): a section heading ends in "#", context lines start the line, a table is its
# header cells one a line ("Model |"), a separator ("---|---|"), then its cells one a line ("8192 |", "|" if empty).
PAGE_SEPARATOR_RE = re.compile(r"^(?:-{3,}\|)+\s*$")
PAGE_SECTIONS = {"pretraining": "pretraining", "pretrainingperformance": "pretraining",
                 "finetuning": "finetuning", "finetuningperformance": "finetuning"}
PAGE_SYSTEM_RE = re.compile(r"^\s*(?:[-•]\s*)?System:\s*(\S+)\s*$")
ALT_RE = re.compile(r"^(.*?)\s*\(([^()]*)\)\s*$")
# How a layout summary names each precision the tables state.
PRECISION_WORDS = {"fp8": "FP8", "fp8-cs": "FP8 with per-tensor current scaling", "bf16": "BF16"}


@dataclass(frozen=True)
class Row(ParallelRow):
    line: int
    section: str  # "pretraining" or "finetuning"
    container: str
    system: str
    precision: str
    model_text: str
    task: str | None
    gpus: int
    gbs: int
    mbs: int
    seq: int
    tp: int
    pp: int
    cp: int | None  # None: the table has no CP column
    vp: int | None
    tokens: float
    tflops: float
    tflops_link: str | None  # the URL a linked Model TFLOP/s figure points to
    fsdp: int | None = None  # None: the table has no FSDP column
    ep: int | None = None  # None: the table has no EP column
    ga: int | None = None  # None: the table has no GA column
    variant: str | None = None  # a row with "a (b)" cells: which configuration (its layout, for the file name)
    bracketed: bool = False  # the second configuration of "a (b)" cells: the section's precision is not its own
    page: bool = False  # read from a stored rendering of a docs.nvidia.com page (the later releases)

    @property
    def model(self) -> str:
        return MODELS[self.model_text]

    @property
    def training(self) -> str:
        return TASKS[self.task] if self.task else "pre-training"

    def key(self) -> str:
        kind = self.task.lower() if self.task else "pretrain"
        key = f"nemo-{self.container}-{kind}-{self.system.lower()}-{self.gpus}gpu-{self.precision}"
        return f"{key}-{self.variant}" if self.variant else key


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _no_card_reason(model_text: str) -> str:
    if model_text.lower().startswith(("mixtral", "llama4")):
        return ("a mixture-of-experts model the catalog has no card for, with the moe block its FLOPs are counted "
                "from")
    return "NeMo's own GPT-3 and Nemotron configurations are not in the catalog: no architecture to count FLOPs from"


def _figure(cell: str) -> tuple[str, str | None]:
    """A cell's figure and the URL it links to, if it is a Markdown link."""
    m = LINK_RE.match(cell)
    return (m.group(1), m.group(2)) if m else (cell, None)


def _positive_count(digits: str, key: str) -> bool:
    """Whether a cell of digits is a count base.number takes (above 0, at most MAX_FIGURE: no 400-digit count)."""
    try:
        number(digits, key, integer=True, positive=True)
    except SourceError:
        return False
    return True


def _row(line: int, section: str, context: dict[str, str], values: dict[str, str], variant: str | None = None,
         page: bool = False) -> Row | Skip:
    if values["model"] not in MODELS:
        return Skip(line, f"model {values['model']} has no catalog card ({_no_card_reason(values['model'])})")
    numbers: dict[str, int] = {}
    for key in ("gpus", "gbs", "mbs", "seq", "tp", "pp", "cp", "vp", "fsdp", "ep", "ga", "tokens", "tflops"):
        if key not in values:
            continue
        text, _ = _figure(values[key])
        if key == "fsdp":  # 1: FSDP, 0: DDP (the page's abbreviations)
            if text not in ("0", "1"):
                return Skip(line, f"fsdp '{values[key]}' is neither 0 (DDP) nor 1 (FSDP)")
        elif not NUMBER_RE.match(text) or not _positive_count(text, key):
            return Skip(line, f"{key} '{values[key]}' is not a positive whole number")
        numbers[key] = int(text)
    task = values.get("task")
    if section == "finetuning" and task not in TASKS:
        return Skip(line, f"task '{task}' is neither SFT nor LoRA")
    row = Row(line=line, section=section, container=context["container"], system=context["system"],
              precision=context["precision"], model_text=values["model"], task=task, gpus=numbers["gpus"],
              gbs=numbers["gbs"], mbs=numbers["mbs"], seq=numbers["seq"], tp=numbers["tp"], pp=numbers["pp"],
              cp=numbers.get("cp"), vp=numbers.get("vp"), tokens=float(numbers["tokens"]),
              tflops=float(numbers["tflops"]), tflops_link=_figure(values["tflops"])[1], fsdp=numbers.get("fsdp"),
              ep=numbers.get("ep"), ga=numbers.get("ga"), variant=variant, page=page)
    if row.gpus % (row.tp * row.pp * (row.cp or 1)) or row.gbs % (row.mbs * row.dp):
        return Skip(line, f"{row.gpus} GPUs, TP {row.tp}, PP {row.pp}, CP {row.cp}, MBS {row.mbs}, GBS {row.gbs} "
                          "give no whole data-parallel size and accumulation")
    if row.ga is not None and row.ga != row.gradient_accumulation:
        return Skip(line, f"GA {row.ga} contradicts GBS {row.gbs} / (MBS {row.mbs} x DP {row.dp}) = "
                          f"{row.gradient_accumulation}")
    return row


def _unreadable(line: int, section: str | None, context: dict[str, str], header: list[str], cells: list[str],
                width: int) -> Skip | None:
    """Why a table row of either form cannot be read (a skip at its line), or None. `width`: the cells a row must
    have (the Markdown form's header's, the page form's separator's)."""
    missing = [k for k in ("container", "system", "precision") if k not in context]
    if section not in SECTIONS or missing:
        return Skip(line, f"table outside a known section, or its section does not state "
                          f"{', '.join(missing) or 'a known kind'}")
    if len(cells) != width or len(header) != width:
        return Skip(line, f"{len(cells)} cells for a header of {width}")
    if lacking := sorted(REQUIRED[section] - set(header)):
        return Skip(line, f"the table's header lacks {', '.join(lacking)}")
    if context["system"] not in SYSTEMS:
        return Skip(line, f"system {context['system']} is not one this importer knows")
    return None


def parse(text: str) -> Parsed:
    """The committed Markdown document (24.07) or a stored rendering of a later release's page."""
    if any(PAGE_SEPARATOR_RE.match(line) for line in text.splitlines()):
        return parse_page(text)
    return parse_markdown(text)


# One form's reading: how a line changes the section and its context, and where a table starts (its rows read into
# the Parsed, the index after it returned; None: no table starts at that line).
ContextReader = Callable[[str, str | None, dict[str, str]], tuple[str | None, dict[str, str]]]
TableReader = Callable[[Parsed, list[str], int, str | None, dict[str, str]], int | None]


def _read(text: str, context_of: ContextReader, table_at: TableReader) -> Parsed:
    """Either form's walk: every line may start a section or state its context; a table is read where one starts,
    under the context stated above it."""
    out = Parsed()
    lines = text.splitlines()
    section: str | None = None
    context: dict[str, str] = {}
    i = 0
    while i < len(lines):
        section, context = context_of(lines[i], section, context)
        after = table_at(out, lines, i, section, context)
        i = i + 1 if after is None else after
    return out


def parse_markdown(text: str) -> Parsed:
    return _read(text, _markdown_context, _markdown_table)


def _markdown_context(line: str, section: str | None, context: dict[str, str]) -> tuple[str | None, dict[str, str]]:
    """The committed document: a "### Pretraining" heading starts a section; its bullet list states the container,
    the system ("- System: DGX-H100") and the precision."""
    if m := SECTION_RE.match(line):
        section, context = m.group(1).lower(), {}
    elif m := CONTAINER_RE.search(line):
        context["container"] = m.group(1)
    elif (m := SYSTEM_RE.search(line)) and line.strip().startswith("- System"):
        context["system"] = m.group(1)
    if m := PRECISION_RE.search(line):
        context["precision"] = m.group(1).lower()
    return section, context


def _markdown_table(out: Parsed, lines: list[str], i: int, section: str | None, context: dict[str, str]) -> int | None:
    """A Markdown table whose header is lines[i] (a separator line under it): its rows, each a row or a skip."""
    if not (lines[i].startswith("|") and i + 1 < len(lines) and SEPARATOR_RE.match(lines[i + 1])):
        return None
    header = [COLUMNS.get(h.lower().strip("*"), h) for h in _cells(lines[i])]
    i += 2
    while i < len(lines) and lines[i].startswith("|"):
        out.table_rows += 1
        cells = _cells(lines[i])
        if unread := _unreadable(i + 1, section, context, header, cells, len(header)):
            out.skips.append(unread)
        else:
            got = _row(i + 1, section, context, dict(zip(header, cells, strict=True)))
            (out.skips if isinstance(got, Skip) else out.rows).append(got)
        i += 1
    return i


def _page_context(line: str, section: str | None, context: dict[str, str]) -> tuple[str | None, dict[str, str]]:
    """A rendered page's section heading ("Pre-Training Performance#") starts a section; its prose and context
    lines fill the section's context (container, system, precision)."""
    line = line.strip()
    if line.endswith("#") and (key := re.sub(r"[^a-z]", "", line.lower())) in PAGE_SECTIONS:
        return PAGE_SECTIONS[key], {}
    if m := CONTAINER_RE.search(line):
        context["container"] = m.group(1)
    if m := PAGE_SYSTEM_RE.match(line):
        context["system"] = m.group(1)
    if m := PRECISION_RE.search(line):
        context["precision"] = m.group(1).lower()
    if CURRENT_SCALING_RE.search(line) and context.get("precision") == "fp8":
        context["precision"] = "fp8-cs"
    return section, context


def _page_cells(lines: list[str], start: int, width: int) -> tuple[list[tuple[int, list[str]]], int, int | None]:
    """The rows of a rendered table whose first cell is at lines[start]: (line, cells) each, the index after the
    table, and the line of a row the text ends inside (None: the table ends on a line that is not a cell)."""
    rows: list[tuple[int, list[str]]] = []
    i = start
    while i < len(lines):
        cells: list[str] = []
        first = i + 1
        while i < len(lines) and len(cells) < width and lines[i].rstrip().endswith("|"):
            cells.append(lines[i].rstrip()[:-1].strip())
            i += 1
        if len(cells) == width:
            rows.append((first, cells))
            continue
        if i >= len(lines) - 1 and (cells or (i < len(lines) and lines[i].strip())):
            return rows, len(lines), first  # the text stops inside this row: a copy cut short
        if cells:  # a row with too few cells, then a line that is no cell: the table is malformed here
            rows.append((first, cells))
        return rows, i, None
    return rows, i, None


def _variants(values: dict[str, str]) -> list[tuple[str | None, dict[str, str]]]:
    """The row's configurations: as written, and where a cell reads "a (b)" a second taking b in every such cell."""
    split = {k: (m.group(1), m.group(2)) if (m := ALT_RE.match(v)) else (v, None) for k, v in values.items()}
    if all(alt is None for _, alt in split.values()):
        return [(None, values)]
    out = []
    for second in (False, True):
        cells = {k: alt if second and alt is not None else main for k, (main, alt) in split.items()}
        tag = "-".join(f"{k}{cells.get(k, '1')}" for k in ("tp", "pp", "cp", "vp"))
        out.append((tag + ("-fsdp" if cells.get("fsdp") == "1" else ""), cells))
    return out


# Setting columns: a second configuration that changes none of them differs in something the table does not state.
SETTINGS = ("gpus", "gbs", "mbs", "seq", "fsdp", "tp", "pp", "cp", "vp", "ep", "ga")


def _second_states_its_setting(values: dict[str, str]) -> bool:
    return any(ALT_RE.match(values.get(k, "")) for k in SETTINGS)


def _page_row(out: Parsed, line: int, section: str, context: dict[str, str], values: dict[str, str]) -> None:
    """One row of a rendered table: its configuration(s) as rows, or skips at its line (one per reason)."""
    configurations = _variants(values)
    if len(configurations) == 2 and not _second_states_its_setting(values):
        # Only figures in parentheses: what the second run changed is said below the copy's end, if anywhere.
        out.skips.append(Skip(line, "second configuration: only its figures are in parentheses, no stated setting "
                                    "differs, and what it changed is not in the stored copy; not imported"))
        configurations = [(None, configurations[0][1])]
    for index, (variant, cells) in enumerate(configurations):
        got = _row(line, section, context, cells, variant, page=True)
        if isinstance(got, Row) and index == 1:
            got = replace(got, bracketed=True)
        if isinstance(got, Skip):
            if got not in out.skips:
                out.skips.append(got)
        else:
            out.rows.append(got)


def parse_page(text: str) -> Parsed:
    """A stored text rendering of a later release's page (see the module's docstring)."""
    return _read(text, _page_context, _page_table)


def _page_table(out: Parsed, lines: list[str], i: int, section: str | None, context: dict[str, str]) -> int | None:
    """A rendered table whose separator is lines[i] (its header cells the lines above it): its rows, each a row or a
    skip, and a skip where the stored copy ends inside a row."""
    if not PAGE_SEPARATOR_RE.match(lines[i]):
        return None
    width = lines[i].count("|")
    header_lines = lines[max(0, i - width):i]
    header = [COLUMNS.get(h.rstrip().removesuffix("|").strip().lower(), h.strip()) for h in header_lines]
    rows, after, cut = _page_cells(lines, i + 1, width)
    for line, cells in rows:
        out.table_rows += 1
        if unread := _unreadable(line, section, context, header, cells, width):
            out.skips.append(unread)
        else:
            _page_row(out, line, section, context, dict(zip(header, cells, strict=True)))
    if cut is not None:
        out.table_rows += 1
        out.skips.append(Skip(cut, "the stored copy of the page ends inside this row: its cells are not all in reach"))
    return after


# NeMo 24.07's Model TFLOP/s: Megatron's matrix count with every query against every key.
CONVENTION = {"gated_experts": True, "sliding_windows": True, "causal_attention": False}


def _published(row: Row, catalog: Catalog) -> dict[str, Any]:
    arch = catalog.models[row.model].architecture
    assert arch is not None
    causal = figures.model_tflops_per_gpu(arch, row.seq, row.tokens)
    full = figures.model_tflops_per_gpu(arch, row.seq, row.tokens, causal=False)
    frozen = row.training == "lora"
    if frozen:
        causal, full = causal * figures.FROZEN_BASE_FRACTION, full * figures.FROZEN_BASE_FRACTION
    out: dict[str, Any] = {"published_model_tflops_per_gpu": row.tflops}
    if figures.relative_difference(row.tflops, causal) <= figures.PUBLISHED_TFLOPS_TOLERANCE:
        return out
    off = figures.relative_difference(row.tflops, full)
    link = f" The table links the figure to {row.tflops_link}." if row.tflops_link else ""
    if off <= figures.PUBLISHED_TFLOPS_TOLERANCE:
        out["published_model_tflops_note"] = (
            f"A convention of the publication, not an error: its {row.tflops:g} TFLOP/s counts the core attention "
            f"against every key (no causal halving): {full:.1f} under that count ({off * 100:.2f}% apart), "
            f"{causal:.1f} under Megatron's causal count" + (", both at 2/3 for LoRA's frozen base" if frozen else "")
            + "." + link)
        out["published_model_tflops_convention"] = {**CONVENTION, "frozen_base": frozen}
        return out
    out["published_model_tflops_note"] = (
        f"DISCREPANCY: the publication states {row.tflops:g} TFLOP/s; its {row.tokens:g} tokens/s give {causal:.1f} "
        f"under Megatron's causal count and {full:.1f} with every query against every key"
        + (" (both at 2/3 for LoRA's frozen base)" if frozen else "") + f": {off * 100:.1f}% from the nearer."
        + (" The row trains on packed sequences (SQuAD v1.1 packed to 4,096 tokens): a count of the attention over "
           "each packed sample's own length gives less than either, and the table does not state the samples' "
           "lengths, so the publication's count cannot be recomputed here." if row.section == "finetuning" else "")
        + link)
    out["published_figures_disagree"] = True
    return out


def _inferred(row: Row) -> list[dict[str, str]]:
    out = [{"field": "layout.sequence_parallel", "reason": "not in the table: on when TP > 1, as NeMo's performance "
            "configurations set it"}]
    if row.cp is None:
        out.append({"field": "layout.cp", "reason": "the finetuning table has no CP column: recorded as 1"})
    if row.vp is None:
        out.append({"field": "layout.vpp", "reason": "the finetuning table has no VP column: recorded as 1"})
    if row.page and row.fsdp is None:
        out.append({"field": "layout.fsdp", "reason": f"the {row.container} table has no FSDP column: recorded as "
                    "off"})
    if row.bracketed:
        out.append({"field": "workload.precision", "reason": "the row's second configuration (its figures in "
                    "parentheses) states no precision of its own: recorded as the section's, "
                    f"{PRECISION_WORDS[row.precision]}"})
    return out


def build(row: Row, catalog: Catalog, document: Document, superseded: list[dict[str, Any]]) -> dict[str, Any]:
    card = catalog.models[row.model]
    gpu_type = SYSTEMS[row.system]
    per_node = min(GPUS_PER_NODE[row.system], row.gpus)
    cp, vp = row.cp or 1, row.vp or 1
    ep = row.ep or 1
    label = (f"TP{row.tp} PP{row.pp}" + (f" VP{vp}" if vp > 1 else "") + f" CP{cp}" + (f" EP{ep}" if ep > 1 else "")
             + f" DP{row.dp}" + (" FSDP" if row.fsdp else ""))
    kind = {"pre-training": "pre-training", "sft": "supervised fine-tuning (SFT)", "lora": "LoRA fine-tuning"}
    notes = [
        f"Reported by NVIDIA in NeMo's performance summary, NeMo {row.container} container, {row.system}, "
        f"{kind[row.training]}, line {row.line} of the " + ("stored copy." if row.page else "document."),
        "Not re-measured here. Settings the publication does not state are not invented: recompute is not stated "
        "(null), the data is not stated" + (" (SQuAD v1.1 packed to 4,096 tokens, the table's note)"
                                             if row.section == "finetuning" else "")
        + "; " + _precision_note(row) + "; sequence parallelism is recorded as on when TP > 1 and listed as "
        "inferred.",
    ]
    if row.page:
        notes.append(_page_note(row))
    if row.training == "lora":
        notes.append("A LoRA row: adapters on a frozen base; the MFU counts 4N FLOPs a token.")
    result = base.imported_result(card, row.tokens, **_published(row, catalog))
    recipe: dict[str, Any] = {
        "schema_version": 1,
        "model": row.model,
        "gpu": {"type": gpu_type, "memory_gb": catalog.gpus[gpu_type].memory_gb, "count": row.gpus,
                "per_node": per_node, "instance": catalog.instance_for(gpu_type, per_node)},
        "author": {"name": "NVIDIA NeMo", "url": "https://github.com/NVIDIA/NeMo"},
        "status": "reported",
        "stack": {"framework": f"nemo (NeMo {row.container} container)",
                  "source": f"the publication's section (NeMo {row.container} container)"},
        "workload": {"row_tokens": row.seq,
                     "rows": ("SQuAD v1.1, packed to 4,096 tokens (the table's note)" if row.section == "finetuning"
                              else "not stated by the publication"),
                     "global_batch": row.gbs, "precision": row.precision, "training": row.training},
        "layout": {
            "label": label,
            "summary": f"{row.gpus} {gpu_type} ({row.system}), {label}, micro-batch {row.mbs}, global batch {row.gbs} "
                       f"x {row.seq} tokens, {PRECISION_WORDS[row.precision]}; as published.",
            "tp": row.tp, "pp": row.pp, "vpp": vp, "cp": cp, "ep": ep, "etp": 1, "dp": row.dp,
            "fsdp": bool(row.fsdp),
            "gradient_accumulation": row.gradient_accumulation, "sequence_parallel": row.tp > 1,
            "layer_split": None, "rows_per_microbatch": row.mbs, "recompute": None,
            "dispatcher": None, "mtp_layers": None,
            "pipeline_layout": _placement(row, catalog),
        },
        "result": result,
        "publication": {"url": document.url, "commit": document.commit, "release": row.container, "line": row.line,
                        **_page_copy(row, document), "system": row.system, "superseded": superseded},
        "run": base.no_command_line(
            f"# Not published as a command line. NVIDIA ran this row with NeMo {row.container}'s performance "
            f"scripts;\n# the row states: {row.model_text}, {row.gpus} GPUs, GBS {row.gbs}, MBS {row.mbs}, "
            f"sequence {row.seq},\n# TP {row.tp}, PP {row.pp}, CP {row.cp or '-'}, VP {row.vp or '-'}"
            + (_page_cells_stated(row) if row.page else "") + ".\n", document.url, row.line),
        "notes": "\n\n".join(notes) + "\n",
        "inferred": _inferred(row),
    }
    derive_figures(recipe, catalog)
    return recipe


def _page_cells_stated(row: Row) -> str:
    """The later tables' extra columns as the row states them ("-": the table has no such column)."""
    fsdp = "-" if row.fsdp is None else row.fsdp
    return f", FSDP {fsdp}, EP {row.ep or '-'}, GA {row.ga or '-'}"


def _precision_note(row: Row) -> str:
    if row.precision == "fp8":
        return "FP8 as the section states it, its scaling recipe not named (recorded as fp8)"
    if row.precision == "fp8-cs":
        return ("FP8 with per-tensor current scaling as the section states it (\"per-tensor FP8 quantization, "
                "leveraging scaling factors computed in the current step\"): recorded as fp8-cs")
    return f"{row.precision} as the section states it"


# The stored copies of the later releases' pages (tests/importer/data/nemo-docs-<release>.txt, listed with their
# SHA-256 in nemo-docs-pages.md): each was stored from the docs' "latest" URL while it showed that release. A recipe
# cites the release's own page (the --source-url: docs.nvidia.com keeps one tree per release, .../user-guide/<release>/,
# as the stored 24.09 page shows) and names the copy read as read_from.
STORED_PAGES = {
    "25.02": ("https://docs.nvidia.com/nemo-framework/user-guide/latest/performance/performance_summary.html",
              "f73249094f5f67c57699007fa0368d9082a5a72a9613566a905ab123ea17896b"),
    "25.04": ("https://docs.nvidia.com/nemo-framework/user-guide/latest/performance/archive/25.04-performance-summary.html",
              "ff27724b0a2a20b9dac52e1aab36529881d73b127c2b92aad6aa51f5a810ec59"),
    "25.07": ("https://docs.nvidia.com/nemo-framework/user-guide/latest/performance/performance-summary.html",
              "ea83f21f3e817886f7536671a747cc9cfb75393291a4134c81a9179a3e00fdf5"),
}


def _page_copy(row: Row, document: Document) -> dict[str, Any]:
    """publication.read_from of a later release's row cited at its versioned page: the stored copy read."""
    if not row.page or row.container not in STORED_PAGES or document.url == STORED_PAGES[row.container][0]:
        return {}
    url, sha256 = STORED_PAGES[row.container]
    return {"read_from": {"url": url, "commit": None, "sha256": sha256, "note": (
        f"A stored text rendering of the page at the docs' 'latest' address while it showed the {row.container} "
        f"container; its first 2,000 characters, committed as tests/importer/data/nemo-docs-{row.container}.txt")}}


def _page_note(row: Row) -> str:
    """Where a later release's row was read: a stored rendering of the page, not a revision of a repository."""
    alt = (f" The row gives two configurations (\"a (b)\" cells: the first as written, the second in "
           f"parentheses); this recipe is the one with {row.variant} (its file name says which).") if row.variant else ""
    name = ({"LLAMA3-405B": " The table names the model LLAMA3-405B: Meta released no Llama 3 405B, and NeMo's "
             "performance script of that size is scripts/performance/llm/pretrain_llama31_405b.py, so the card is "
             "Llama 3.1 405B's."}).get(row.model_text, "")
    return (f"Read from a stored text rendering of NVIDIA's NeMo Framework user guide page of the {row.container} "
            "container (docs.nvidia.com; no repository holds it: NVIDIA/NeMo's copy of the summary was deleted on "
            "2024-12-12, commit d31653f792). The copy holds the page's beginning only; the line is its line in that "
            "copy (tests/importer/data/nemo-docs-" + row.container + ".txt)." + alt + name)


def _placement(row: Row, catalog: Catalog) -> str | None:
    arch = catalog.models[row.model].architecture
    assert arch is not None
    stages = row.pp * (row.vp or 1)
    if row.pp == 1 or arch.layers % stages == 0:
        return None
    return (f"not stated by the publication: {arch.layers} layers over PP x VP = {stages} virtual stages do not "
            "divide evenly; NeMo's placement is its own")


class Nemo(Source):
    """docs/source/performance/performance_summary.md of NVIDIA/NeMo (the 24.07 tables)."""

    name = "nemo"

    parse = staticmethod(parse)

    def gpu_type(self, row: Row) -> str:
        return SYSTEMS[row.system]

    def admit(self, row: Row, catalog: Catalog) -> str | None:
        if gap := catalog_gap(catalog, row.model, self.gpu_type(row)):
            return gap
        arch = catalog.models[row.model].architecture
        if (row.ep or 1) > 1 and (arch is None or arch.moe is None):
            return f"EP {row.ep} on {row.model}, a dense model: no experts to spread"
        if arch is not None and arch.moe is not None and row.dp % (row.ep or 1):
            return f"EP {row.ep} does not divide the data-parallel size {row.dp}"
        return None

    def build(self, row: Row, catalog: Catalog, document: Document, superseded: list[dict[str, Any]],
              skipped: list[str]) -> dict[str, Any]:
        return build(row, catalog, document, superseded)


SOURCE = Nemo()
