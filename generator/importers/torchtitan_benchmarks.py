"""pytorch/torchtitan's benchmarks/ documents as `reported` recipes.

Each document is prose with small tables: a caption (a "**Table N**" line or a "#### ..." heading) states the model,
GPUs, parallelism, batch and activation checkpointing; each row adds techniques (torch.compile, Float8, AsyncTP, a
pipeline schedule) or a degree split, and TPS/GPU. The captions are free text, so this importer knows each caption it
imports (CAPTIONS, transcribed from the caption and cited) and skips a table whose caption it does not know. Settings
a caption does not state (sequence length, checkpointing mode, pipeline stages and micro-batches) come from
torchtitan's train configs and code at the torchtitan commit the document names, each cited in the recipe.
Published figures recomputed: each Async TP speedup (async / vanilla tokens/s, 2 decimals).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from generator import figures
from generator.catalog import Catalog
from generator.importers import base
from generator.importers.base import Document, Parsed, Skip, Source, derive_figures, imported_result, no_command_line, number

TITAN = "https://github.com/pytorch/torchtitan/blob"


@dataclass(frozen=True)
class Versions:
    """The dependency commits a document states, and where its unstated defaults are read."""

    torch: str
    torchao: str
    torchtitan: str  # full commit
    configs: str  # the train configs' folder at that commit


V2412 = Versions("pytorch/pytorch 1963fc83a1c32e162162e2414f78b043f0674bae (2024-12-23)",
                 "pytorch/ao eab345c2268a7506355d506ebfc27b5d28e5e7d0 (2024-12-23)",
                 "9dec370ad26b5f8e9a7333a0e36165018262644b", "train_configs")
V2506 = Versions("pytorch/pytorch 38410cf9b57079f3360c1e79601973a01cb2588c (2025-06-14)",
                 "pytorch/ao 6243040807b9ceee889a58cba8e68c5fc4e2ebd8 (the document dates it 2024/06/13)",
                 "820504e20d1149fbf0b98c567af24c4b0433b22d", "torchtitan/models/llama3/train_configs")
VTRAINY = Versions("2.8.0a0+5228986c39 (NVIDIA PyTorch container 25.05, 2025-05-29)",
                   "pytorch/ao 0afa4c1bd28c82921e360ddbd1b27c9d6da5b947 (2025-06-13)",
                   "e7c0cae934df78d6e9c2835f42ff1f757dc3fddc", "torchtitan/models/llama3/train_configs")

# torchtitan's Llama 3.1 model args (torchtitan/models/llama*/__init__.py at each commit) are the catalog cards'
# architectures: 8B dim 4096, 32 layers, 32 heads, 8 KV heads, FFN 14336 (1.3 x, multiple of 1024), rope_theta
# 500000; 70B dim 8192, 80 layers, 64 heads, FFN 28672; 405B dim 16384, 126 layers, 128 heads, FFN 53248.
MODELS = {"8B": ("Llama-3.1-8B", "llama3_8b.toml"), "70B": ("Llama-3.1-70B", "llama3_70b.toml"),
          "405B": ("Llama-3.1-405B", "llama3_405b.toml")}


@dataclass(frozen=True)
class Caption:
    """What one table's caption states (transcribed), and its document's versions."""

    tag: str  # file-name part
    flavor: str  # torchtitan model flavor: 8B, 70B, 405B
    gpu: str  # catalog GPU type
    gpus: int
    fsdp: int | None  # None: the row states it (Parallelism column), or all GPUs over TP x PP
    local_batch: int
    checkpointing: str  # "selective" or "full", as the caption (or the train config) states
    versions: Versions
    # A degree or technique the caption does not name is 1 or off.
    tp: int = 1
    pp: int = 1
    compile: bool = False
    float8: bool = False
    async_tp: bool = False
    schedule: str | None = None
    checkpointing_source: str = "the caption"
    seq: int = 8192  # every train config named here sets seq_len = 8192
    per_node: int = 8


_H100 = "H100-96GB"
_2412 = dict(gpu=_H100, versions=V2412)  # the December 2024 document's
# Caption text (whitespace squeezed) -> what it states.
CAPTIONS: dict[str, Caption] = {
    "**Table 1** 1D Parallelism (FSDP). Llama 3.1 8B model. 8 GPUs. Local batch size 2, global batch size 16. "
    "Selective activation checkpointing.": Caption(
        tag="t1", flavor="8B", gpus=8, fsdp=8, local_batch=2, checkpointing="selective", **_2412),
    "**Table 2** FSDP + CP + torch.compile + Float8. Llama 3.1 8B model. 8 GPUs. Local batch size 1. Full activation "
    "checkpointing.": Caption(
        tag="t2", flavor="8B", gpus=8, fsdp=None, local_batch=1, checkpointing="full", compile=True, float8=True,
        **_2412),
    "**Table 3** 1D Parallelism (FSDP). Llama 3.1 8B model. 128 GPUs. Local batch size 2, global batch size 256. "
    "Selective activation checkpointing.": Caption(
        tag="t3", flavor="8B", gpus=128, fsdp=128, local_batch=2, checkpointing="selective", **_2412),
    "**Table 4** 2D parallelism (FSDP + TP) + torch.compile + Float8. Llama 3.1 70B model. 256 GPUs (FSDP 32, TP 8). "
    "Local batch size 16, global batch size 512. Full activation checkpointing.": Caption(
        tag="t4", flavor="70B", gpus=256, fsdp=32, tp=8, local_batch=16, checkpointing="full", compile=True,
        float8=True, **_2412),
    "**Table 5** 3D parallelism (FSDP + TP + PP) + torch.compile + Float8 + AsyncTP. Llama 3.1 405B model. 512 GPUs "
    "(FSDP 8, TP 8, PP8). Local batch size 32, global batch size 256. Full activation checkpointing.": Caption(
        tag="t5", flavor="405B", gpus=512, fsdp=8, tp=8, pp=8, local_batch=32, checkpointing="full", compile=True,
        float8=True, async_tp=True, **_2412),
    "**Table 6** 4D parallelism (FSDP + TP + PP + CP) + torch.compile + Float8 + AsyncTP + 1F1B. Llama 3.1 405B model. "
    "512 GPUs (TP 8, PP8). Local batch size 8. Full activation checkpointing.": Caption(
        tag="t6", flavor="405B", gpus=512, fsdp=None, tp=8, pp=8, local_batch=8, checkpointing="full", compile=True,
        float8=True, async_tp=True, schedule="1F1B", **_2412),
    "#### Llama3 70b on 256 H100s with FSDP=32, TP=8, torch.compile, full AC, local batch size 16": Caption(
        tag="70b", flavor="70B", gpu=_H100, gpus=256, fsdp=32, tp=8, local_batch=16, checkpointing="full",
        compile=True, versions=V2506),
    "#### Llama3 8b on 64 H100s with FSDP=8, TP=8, torch.compile, per op SAC, local batch size 12": Caption(
        tag="8b", flavor="8B", gpu=_H100, gpus=64, fsdp=8, tp=8, local_batch=12, checkpointing="selective",
        checkpointing_source="the caption (per-op selective)", compile=True, versions=V2506),
    "Detailed performance results and training configurations can be found in the tables below along and can "
    "visualized in [this WandB report](https://api.wandb.ai/links/asaiacai/w4c46stp). `TPS` and `Memory(GiB)` are "
    "arbitrarily sampled at the 100th iteration:": Caption(
        tag="whitefiber", flavor="8B", gpu="H200", gpus=0, fsdp=None, local_batch=2, checkpointing="selective",
        checkpointing_source="llama3_8b.toml at the torchtitan commit (mode selective, selective_ac_option op)",
        compile=True, float8=True, versions=VTRAINY),
}
# Row texts of the technique tables -> what they add to the caption.
TECHNIQUES = {"FSDP": {}, "FSDP + torch.compile": {"compile": True},
              "FSDP + torch.compile + Float8": {"compile": True, "float8": True},
              "2D": {}, "2D + AsyncTP": {"async_tp": True},
              "1F1B": {"schedule": "1F1B"}, "Interleaved 1F1B": {"schedule": "Interleaved1F1B"}}
QUANTIZATION = {"None (bfloat16)": False, "float8 tensorwise": True}


@dataclass(frozen=True)
class Row:
    """One published throughput: a table row, or one of an Async TP row's two figures."""

    line: int
    caption: Caption
    text: str  # the row's first cell as published
    fsdp: int
    cp: int
    seq: int
    tokens: float  # TPS/GPU as published
    memory_gib: float | None
    variant: str  # "" or "vanilla-tp" / "async-tp"
    speedup: float | None = None  # the Async TP row's published speedup (on the async-tp variant)
    vanilla_tokens: float | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    seq_stated: bool = False  # the row states its sequence length (else the train config's)

    @property
    def setup(self) -> Caption:
        return replace(self.caption, **self.settings)

    @property
    def model(self) -> str:
        return MODELS[self.caption.flavor][0]

    @property
    def gpus(self) -> int:
        return self.fsdp * self.cp * self.caption.tp * self.caption.pp

    def key(self) -> str:
        slug = re.sub(r"[^a-z0-9]+", "-", self.text.lower()).strip("-")
        parts = ["titan", self.caption.versions.torchtitan[:7], self.caption.tag, slug, self.variant]
        return "-".join(p for p in parts if p)


def _split(line: str) -> list[str]:
    return [c.strip() for c in line.strip().removeprefix("|").removesuffix("|").split("|")]


def _number(cells: dict[str, str], key: str) -> float:
    """A figure of the row (a throughput, a memory, a speedup): positive, read by base.number."""
    return float(number(cells[key], key, positive=True))


def _count(text: str, what: str) -> int:
    return int(number(text, what, integer=True, positive=True))


def parse(text: str) -> Parsed:
    out = Parsed()
    lines = text.splitlines()
    caption_text, caption_line = "", 0
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = re.sub(r"\s+", " ", line.strip())
        if stripped.startswith(("**Table", "#### ", "Detailed performance results")):
            caption_text, caption_line = stripped, i + 1
        elif (end := base.table_end(lines, i)) is not None:
            _table(out, lines, i, end, caption_text, caption_line)
            i = end
            continue
        i += 1
    return out


def _table(out: Parsed, lines: list[str], start: int, end: int, caption_text: str, caption_line: int) -> None:
    header = [h.lower() for h in _split(lines[start])]
    body = range(start + 2, end)
    out.table_rows += len(body)
    if header[:2] == ["repo", "commit"]:
        out.skips.extend(Skip(n + 1, "versions table (the dependency commits, recorded on every recipe)")
                         for n in body)
        return
    caption = CAPTIONS.get(caption_text)
    if caption is None:
        out.skips.extend(Skip(n + 1, f"the caption at line {caption_line} ({caption_text[:60]!r}) is not one the "
                                     "importer knows (its settings are transcribed per caption)") for n in body)
        return
    # A KeyError names the missing column in quotes: the reason drops them.
    base.read_table_body(out, lines, body, header, start + 1, _split, lambda line, cells: _rows(line, caption, cells),
                         (ValueError, KeyError), lambda exc: str(exc).strip("'\""))


_DEGREES_RE = re.compile(r"^FSDP (\d+), CP (\d+)$")


def _rows(line: int, caption: Caption, cells: dict[str, str]) -> list[Row]:
    memory = _number(cells, "memory(gib)") if "memory(gib)" in cells else None
    if "num_nodes" in cells:  # the WhiteFiber table: FSDP over every GPU (data_parallel_shard_degree -1)
        gpus = _count(cells["num_nodes"], "num_nodes") * caption.per_node
        return [Row(line, replace(caption, gpus=gpus), f"{cells['num_nodes']} nodes", gpus, 1, caption.seq,
                    _number(cells, "tps/gpu"), memory, "")]
    if "quantization" in cells:
        quant = cells["quantization"]
        if quant not in QUANTIZATION:
            raise ValueError(f"quantization {quant!r}: torchao's float8 rowwise scaling has no registry precision "
                             "(fp8-cs is per-tensor current scaling); not imported rather than mislabelled"
                             if quant == "float8 rowwise" else f"unknown quantization {quant!r}")
        settings = {"float8": QUANTIZATION[quant]}
        vanilla = _number(cells, "vanilla tp tokens/sec")
        async_ = _number(cells, "async tp tokens/sec")
        speedup = _number(cells, "async tp speedup")
        base = Row(line, caption, quant, caption.fsdp or 0, 1, caption.seq, vanilla, None, "vanilla-tp",
                   settings=settings)
        return [base, replace(base, tokens=async_, variant="async-tp", speedup=speedup, vanilla_tokens=vanilla,
                              settings={**settings, "async_tp": True})]
    first = cells.get("techniques") or cells.get("schedule") or cells.get("parallelism")
    if first is None:
        raise ValueError(f"no Techniques, Schedule or Parallelism column in {sorted(cells)}")
    tokens = _number(cells, "tps/gpu")
    if "parallelism" in cells:
        m = _DEGREES_RE.match(first)
        if m is None:
            raise ValueError(f"parallelism {first!r} is not 'FSDP n, CP m'")
        fsdp, cp = _count(m.group(1), "FSDP"), _count(m.group(2), "CP")
        return [Row(line, caption, first, fsdp, cp, _count(cells["sequence length"], "sequence length"), tokens, memory, "",
                    seq_stated=True)]
    if first not in TECHNIQUES:
        raise ValueError(f"unknown technique {first!r}")
    return [Row(line, caption, first, caption.fsdp or 0, 1, caption.seq, tokens, memory, "",
                settings=TECHNIQUES[first])]


# --- the recipe --------------------------------------------------------------------------------------------------


def _pipeline(row: Row, layers: int) -> tuple[int, dict[str, int] | None, str | None, int, int]:
    """(vpp, layer_split, pipeline_layout, micro-batches, rows per micro-batch) as torchtitan sets them at the
    document's commit: 8 micro-batches (pipeline_parallel_microbatches defaults to the PP degree), 2 stages per rank
    for multi-stage schedules, generate_split_points' layers per stage (one fewer on the first and last)."""
    s = row.setup
    if s.pp == 1:
        return 1, None, None, 1, s.local_batch
    vpp = 2 if s.schedule == "Interleaved1F1B" else 1
    stages = s.pp * vpp
    base, extra = divmod(layers, stages)
    first = base
    bigger = min(extra, stages - 2)  # the first `extra` middle stages take one more layer
    middle = [base + 1] * bigger + [base] * (stages - 2 - bigger)
    last = layers - first - sum(middle)
    microbatches = s.pp
    where = (f"{TITAN}/{s.versions.torchtitan}/torchtitan/parallelisms/pipelining_utils.py (generate_split_points) "
             "and pipeline_llama.py (microbatches = the PP degree)")
    if vpp == 1 and len(set(middle)) == 1:
        return 1, {"first": first, "last": last}, None, microbatches, s.local_batch // microbatches
    layout = (f"torchtitan's generate_split_points over {stages} virtual stages ({s.pp} ranks x {vpp}, the default "
              f"for a multi-stage schedule): {first} layers, then {', '.join(map(str, middle))}, then {last} "
              f"(inferred from the code at the document's commit, {where})")
    return vpp, None, layout, microbatches, s.local_batch // microbatches


def _label(row: Row, vpp: int) -> str:
    s = row.setup
    return (f"TP{s.tp} PP{s.pp}" + (f" VPP{vpp}" if vpp > 1 else "") + f" CP{row.cp} DP{row.fsdp} FSDP"
            + (" AsyncTP" if s.async_tp else "") + (" torch.compile" if s.compile else "")
            + (" Float8" if s.float8 else ""))


def _notes(row: Row, document: Document, catalog: Catalog) -> list[str]:
    s = row.setup
    v = s.versions
    config = f"{TITAN}/{v.torchtitan}/{v.configs}/{MODELS[s.flavor][1]}"
    notes = [
        f"Reported in torchtitan's benchmarks ({document.path}), line {row.line}: \"{row.text}\" under the caption "
        f"of its table; {s.gpus} {s.gpu}, torchtitan {v.torchtitan[:7]}, torch {v.torch}, torchao {v.torchao}.",
        "Not re-measured here. Taken from the document: the model, GPUs, parallel degrees, local batch, "
        "techniques (torch.compile, Float8, AsyncTP, schedule) and TPS/GPU"
        + (f", memory {row.memory_gib:g} GiB (the maximum over GPUs)" if row.memory_gib is not None else "")
        + f". Activation checkpointing: {s.checkpointing}, from {s.checkpointing_source}. Sequence length "
        + (f"{row.seq} from the row." if row.seq_stated
           else f"{row.seq}: not in the document, the seq_len of {config} (the model's train config at the "
                "document's torchtitan commit)."),
        f"Model: torchtitan's Llama 3.1 {s.flavor} model args at that commit, the catalog's {row.model} architecture "
        "(same dimensions, layers, heads, key-value heads and FFN size).",
    ]
    if s.float8:
        notes.append("Float8: torchao's float8 training with tensorwise dynamic scaling (the document's \"Float8\" "
                     "or \"float8 tensorwise\", torchao's default recipe), recorded as fp8-cs (per-tensor "
                     "current scaling). MFU is 6N over the FP8 peak; torchtitan itself reports no MFU for Float8 runs, "
                     "because its matrix products mix BF16 and FP8 tensor cores.")
    if s.gpu == _H100:
        notes.append("GPU: the document's H100 is a 96 GB HBM2e part at a 500 W power limit whose peak is not known "
                     "(its footnote 2); the catalog's H100-96GB records the H100 SXM peaks as an upper bound, so the "
                     "MFU here is a lower bound.")
    if s.pp > 1:
        notes.append(f"Pipeline: schedule {s.schedule} as the document states it, {s.pp} micro-batches of "
                     f"{s.local_batch // s.pp} rows per step (pipeline_parallel_microbatches defaults to the PP "
                     f"degree at the document's torchtitan commit); stages as generate_split_points cuts them.")
    prose = _prose_mfu(row, catalog)
    if prose:
        notes.append(prose)
    if row.speedup is not None and row.vanilla_tokens is not None:
        ours = row.tokens / row.vanilla_tokens
        agrees = figures.agrees(row.speedup, ours, places=2)
        notes.append(f"Published Async TP speedup {row.speedup:.2f} recomputed: {row.tokens:g} / {row.vanilla_tokens:g}"
                     f" = {ours:.4f}, " + ("which agrees at its 2 decimals." if agrees else
                                           "Discrepancy: it does not agree at the published 2 decimals."))
    return notes


# The December 2024 document's prose (its line 21) states an MFU for the 1D Llama 3.1 8B runs without Float8 on 8
# or 128 GPUs (Tables 1 and 3): "33% to 39% MFU (with or without torch.compile, respectively)".
PROSE_MFU = {"tables": ("t1", "t3"), "line": 21, "low": 33.0, "high": 39.0}
TORCHTITAN_PEAK = 989e12  # torchtitan's get_peak_flops for an H100 that is neither NVL nor PCIe (SXM); footnote 2


def _prose_mfu(row: Row, catalog: Catalog) -> str | None:
    """The prose MFU recomputed for a row it covers, with torchtitan's own count and peak."""
    s = row.setup
    if s.tag not in PROSE_MFU["tables"] or s.float8 or s.versions is not V2412:
        return None
    arch = catalog.models[row.model].architecture
    assert arch is not None
    ours = figures.torchtitan_flops_per_token(arch, row.seq) * row.tokens / TORCHTITAN_PEAK * 100
    within = PROSE_MFU["low"] - 0.5 <= ours < PROSE_MFU["high"] + 0.5
    return (f"The document's prose (line {PROSE_MFU['line']}) states 33% to 39% MFU for the 1D 8B runs without Float8 "
            f"(Tables 1 and 3), 'with or without torch.compile, respectively'. Recomputed with torchtitan's count "
            f"(utils.get_num_flop_per_token at {s.versions.torchtitan[:7]}: 6 x the parameters without the embedding + "
            f"12 x layers x heads x head dim x sequence) over its H100 SXM peak of 989 TFLOP/s, this row's "
            f"{row.tokens:g} tokens/s give {ours:.2f}%, "
            + ("within the stated range at its whole percents" if within else "outside the stated range: a discrepancy")
            + ". Discrepancy in the wording: the runs with torch.compile are the faster ones (about 39%), those "
            "without about 33%, the reverse of 'respectively'.")


def build(row: Row, catalog: Catalog, document: Document, superseded: list[dict[str, Any]],
          skipped: list[str]) -> dict[str, Any]:
    s = row.setup
    card = catalog.models[row.model]
    assert card.architecture is not None
    vpp, split, layout_text, microbatches, mbs = _pipeline(row, card.architecture.layers)
    gbs = s.local_batch * row.fsdp
    label = _label(row, vpp)
    notes = _notes(row, document, catalog)
    notes.extend(f"The importer also reports line {row.line}: {reason}." for reason in skipped)
    gpu = catalog.gpus[s.gpu]
    recipe: dict[str, Any] = {
        "schema_version": 1,
        "model": row.model,
        "gpu": {"type": s.gpu, "memory_gb": gpu.memory_gb, "count": row.gpus, "per_node": s.per_node,
                "instance": catalog.instance_for(s.gpu, s.per_node)},
        "author": {"name": "PyTorch torchtitan benchmarks" if s.versions is not VTRAINY else "Trainy (on WhiteFiber), "
                   "in torchtitan's benchmarks", "url": "https://github.com/pytorch/torchtitan"},
        "status": "reported",
        "stack": {"framework": f"torchtitan {s.versions.torchtitan[:7]}",
                  "source": f"pytorch/torchtitan {s.versions.torchtitan}; torch {s.versions.torch}; torchao "
                            f"{s.versions.torchao}"},
        "workload": {"row_tokens": row.seq, "rows": "not stated by the publication", "global_batch": gbs,
                     "precision": "fp8-cs" if s.float8 else "bf16"},
        "layout": {
            "label": label,
            "summary": f"{row.gpus} {s.gpu}, {label}, local batch {s.local_batch} x {row.seq} tokens per data-parallel "
                       f"rank (global batch {gbs}), activation checkpointing {s.checkpointing}; as published.",
            "tp": s.tp, "pp": s.pp, "vpp": vpp, "cp": row.cp, "ep": 1, "etp": 1, "dp": row.fsdp, "fsdp": True,
            "gradient_accumulation": microbatches if s.pp > 1 else None, "sequence_parallel": s.tp > 1,
            "layer_split": split, "rows_per_microbatch": mbs,
            "recompute": {"granularity": s.checkpointing, "method": None, "num_layers": None},
            "dispatcher": None, "mtp_layers": None, "pipeline_layout": layout_text,
        },
        "result": imported_result(card, float(row.tokens)),
        "publication": {"url": document.url, "commit": document.commit, "line": row.line, "system": s.gpu,
                        "superseded": superseded},
        "run": _run(row, document),
        "notes": "\n\n".join(notes) + "\n",
    }
    inferred = _inferred(row, vpp, split, layout_text)
    if inferred:
        recipe["inferred"] = inferred
    derive_figures(recipe, catalog)
    return recipe


def _inferred(row: Row, vpp: int, split: dict[str, int] | None, layout_text: str | None) -> list[dict[str, str]]:
    """The fields this row's document does not state, each with where its value comes from."""
    s = row.setup
    out: list[dict[str, str]] = []
    if not row.seq_stated:
        out.append({"field": "workload.row_tokens", "reason": f"not in the document: the seq_len of "
                    f"{MODELS[s.flavor][1]} at the document's torchtitan commit"})
    if s.pp > 1:
        code = "torchtitan's pipeline_llama.py at the document's commit (pipeline_parallel_microbatches defaults to " \
               "the PP degree)"
        out.append({"field": "layout.gradient_accumulation", "reason": f"not in the document: {s.pp} micro-batches "
                    f"per step, from {code}"})
        out.append({"field": "layout.rows_per_microbatch", "reason": f"not in the document: the local batch "
                    f"{s.local_batch} over {s.pp} micro-batches, from {code}"})
        if vpp > 1:
            out.append({"field": "layout.vpp", "reason": "not in the document: 2 stages per rank, torchtitan's "
                        f"default for the {s.schedule} schedule at the document's commit"})
        if split is not None:
            out.append({"field": "layout.layer_split", "reason": "not in the document: torchtitan's "
                        "generate_split_points at the document's commit"})
        if layout_text is not None:
            out.append({"field": "layout.pipeline_layout", "reason": "not in the document: torchtitan's "
                        "generate_split_points at the document's commit"})
    if not s.checkpointing_source.startswith("the caption"):
        out.append({"field": "layout.recompute", "reason": f"not in the document: {s.checkpointing_source}"})
    return out


def _run(row: Row, document: Document) -> str:
    s = row.setup
    return no_command_line(
        f"# Not published as a full command line for this row. torchtitan {s.versions.torchtitan[:7]},\n"
        f"# {MODELS[s.flavor][1]} with the settings the document states ({_label(row, 1)}, local batch "
        f"{s.local_batch}).\n", document.url, row.line)


class Torchtitan(Source):
    """benchmarks/*.md of pytorch/torchtitan."""

    name = "torchtitan-benchmarks"

    parse = staticmethod(parse)
    build = staticmethod(build)

    def gpu_type(self, row: Row) -> str:
        return row.setup.gpu


SOURCE = Torchtitan()
