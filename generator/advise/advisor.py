"""The advisor's answer: every layout a framework can run for a model on N GPUs of a type, its predicted peak memory
and tokens/s per GPU with their ranges, whether it fits, what it would cost, the nearest measured recipes, and what
the prediction is based on. Or a located one-line refusal where the registry has nothing to base one on.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from generator import figures
from generator.advise.memory import Plan, Shape
from generator.advise.model import (
    MIN_GPU_ROWS,
    MemoryModel,
    MemoryPrediction,
    ThroughputModel,
    fit_memory,
    fit_throughput,
    framework_family,
    throughput_rows,
)
from generator.advise.observations import Observation, dense_architecture
from generator.advise.throughput import nvlink_domain
from generator.catalog import Architecture, Catalog

MICRO_BATCHES = (1, 2, 4, 8)
RECOMPUTES = ("none", "full")  # selective (Korthikanti's: core attention) equals none under flash attention
VPPS = (1, 2, 4)
MAX_PP = 16
CP_MIN_TOKENS = 4096  # context parallelism only where each rank keeps at least this many tokens of a sequence
DEFAULT_GLOBAL_TOKENS = 4 * 2**20  # a step of ~4M tokens where the registry has no row of the model
NEAREST = 3
PREDICTED = "predicted"


class Refusal(Exception):
    """A located one-line reason the advisor gives no answer (path:line: subject: reason)."""


@dataclass(frozen=True)
class Question:
    model: str
    gpu: str
    gpus: int
    seq: int | None = None
    precision: str = "bf16"
    training: str = "pre-training"
    tokens: float | None = None
    price: float | None = None  # USD per GPU-hour
    global_batch: int | None = None
    framework: str | None = None  # a framework family; None: the one with most rows (see Answer.basis)
    top: int = 10


@dataclass
class Layout:
    plan: Plan
    memory: MemoryPrediction
    fits: bool
    tokens: tuple[float, float, float]  # predicted, low, high tokens/s per GPU
    nearest: list[tuple[str, float, float]] = field(default_factory=list)  # (recipe id, its tokens/s, our prediction)
    cost: dict[str, float] | None = None


@dataclass
class Answer:
    question: Question
    model: str
    seq: int
    family: str
    layouts: list[Layout]
    basis: str
    card_memory_gb: float
    usd_per_gpu_hour: float | None
    price_source: str | None


# --- locating a refusal ---------------------------------------------------------------------------------------


def _key_line(path: Path, key: str) -> int:
    pattern = re.compile(rf"^{re.escape(key)}\s*:")
    try:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.match(line):
                return number
    except OSError:
        pass
    return 1


def _card_where(root: Path, catalog: Catalog, model: str) -> str:
    slug = catalog.model_slugs.get(model, model.lower())
    path = root / "catalog" / "models" / f"{slug}.yaml"
    return f"catalog/models/{slug}.yaml:{_key_line(path, model)}"


def resolve_model(root: Path, catalog: Catalog, name: str) -> tuple[str, Architecture]:
    by_lower = {m.lower(): m for m in catalog.models}
    by_lower.update({slug.lower(): m for m, slug in catalog.model_slugs.items()})
    model = by_lower.get(name.lower())
    if model is None:
        raise Refusal(f"catalog/models: {name}: no model card of this name or slug (known: "
                      f"{', '.join(sorted(catalog.model_slugs.values()))})")
    card = catalog.models[model]
    arch = dense_architecture(catalog, model)
    if arch is None:
        why = ("has no architecture" if card.architecture is None else
               "is not a dense attention + FFN model (mixture of experts, multi-latent attention or hybrid blocks); "
               "the advisor's memory and step-time terms are written for dense layers only")
        raise Refusal(f"{_card_where(root, catalog, model)}: {model}: the card {why}")
    return model, arch


def gpu_type(catalog: Catalog, name: str) -> str:
    by_lower = {g.lower(): g for g in catalog.gpus}
    gpu = by_lower.get(name.lower())
    if gpu is None:
        raise Refusal(f"catalog/gpus.yaml: {name}: no GPU type of this name (known: {', '.join(sorted(catalog.gpus))})")
    return gpu


def precheck(root: Path, catalog: Catalog, q: Question) -> None:
    """The refusals the catalogs alone decide (no such card, not a dense model, no such GPU type), before the
    recipes are read."""
    if q.gpus < 1:
        raise Refusal(f"--gpus: {q.gpus}: must be at least 1")
    resolve_model(root, catalog, q.model)
    gpu_type(catalog, q.gpu)


def resolve_gpu(root: Path, catalog: Catalog, name: str, rows: list[Observation]) -> str:
    gpu = gpu_type(catalog, name)
    count = sum(1 for r in throughput_rows(rows) if r.gpu == gpu)
    if count < MIN_GPU_ROWS:
        raise Refusal(f"catalog/gpus.yaml:{_key_line(root / 'catalog' / 'gpus.yaml', gpu)}: {gpu}: {count} dense "
                      f"steady-state row(s) of this GPU type in the registry, at least {MIN_GPU_ROWS} needed to "
                      "calibrate the step-time model on it")
    return gpu


# --- the layouts ------------------------------------------------------------------------------------------------


def _powers(limit: int) -> list[int]:
    return [2**i for i in range(int(math.log2(max(1, limit))) + 1)]


def _tp_ok(arch: Architecture, tp: int) -> bool:
    kinds = {arch.layer_pattern[i % len(arch.layer_pattern)] for i in range(arch.layers)}
    return arch.attention_heads % tp == 0 and all(arch.attention[k].kv_heads % tp == 0 for k in kinds)


def candidate_plans(arch: Architecture, gpus: int, tp_limit: int, seq: int, global_batch: int) -> list[Plan]:
    """Every layout of TP (up to tp_limit: within NVLink, at most 8; dividing the query and key-value heads), PP
    (dividing the layers), VPP (interleaving, where the layers split evenly and the micro-batches fill the stages),
    CP (where each rank keeps at least CP_MIN_TOKENS of a sequence), DP (the rest), ZeRO-1 (Megatron's distributed
    optimizer) or FSDP (ZeRO-3, without pipelining), no or full recompute, and the micro-batch sizes that divide the
    batch."""
    plans = []
    for tp in _powers(min(tp_limit, gpus)):
        if not _tp_ok(arch, tp):
            continue
        for cp in _powers(gpus // tp):
            if cp > 1 and seq // cp < CP_MIN_TOKENS:
                continue
            for pp in _powers(min(MAX_PP, gpus // (tp * cp))):
                if arch.layers % pp or pp > arch.layers:
                    continue
                if gpus % (tp * cp * pp):
                    continue
                dp = gpus // (tp * cp * pp)
                for mbs in MICRO_BATCHES:
                    if global_batch % (dp * mbs):
                        continue
                    m = global_batch // (dp * mbs)
                    for vpp in VPPS if pp > 1 else (1,):
                        if vpp > 1 and (arch.layers % (pp * vpp) or m % pp):
                            continue
                        for zero in ((1, 3) if dp * cp > 1 and pp == 1 else (1,) if dp * cp > 1 else (0,)):
                            for recompute in RECOMPUTES:
                                plans.append(Plan(tp=tp, pp=pp, dp=dp, cp=cp, vpp=vpp, micro_batch=mbs,
                                                  global_batch=global_batch, zero=zero, recompute=recompute,
                                                  sequence_parallel=tp > 1))
    return plans


def architecture_key(arch: Architecture) -> tuple[object, ...]:
    """Cards that are one question (Llama-3-70B and Llama-3.1-70B): the shapes the terms read."""
    kinds = tuple(sorted((k.kv_heads, k.head_dim) for k in arch.attention.values()))
    return (arch.layers, arch.hidden_size, arch.ffn_hidden_size, arch.gated_ffn, arch.attention_heads, kinds,
            arch.vocab_size, arch.tied_embeddings)


def _distance(row: Observation, plan: Plan, seq: int, precision: str, training: str) -> float:
    p = row.plan
    logs = [(p.gpus, plan.gpus), (p.tp, plan.tp), (p.pp, plan.pp), (p.cp, plan.cp), (p.dp, plan.dp),
            (p.micro_batch, plan.micro_batch), (row.shape.seq, seq), (p.global_batch, plan.global_batch)]
    d = sum(abs(math.log2(a) - math.log2(b)) for a, b in logs)
    d += (p.recompute != plan.recompute) + (p.fsdp != plan.fsdp) + 2 * (row.shape.precision != precision)
    d += 4 * ((row.shape.training == "lora") != (training == "lora"))
    return d


def default_global_batch(rows: list[Observation], key: tuple[object, ...], seq: int) -> tuple[int, str]:
    """The median step (in tokens) of the registry's rows of the model family, as rows of `seq`; else ~4M tokens."""
    steps = sorted(r.plan.global_batch * r.shape.seq for r in rows if architecture_key(r.shape.arch) == key)
    if steps:
        tokens = steps[len(steps) // 2]
        return max(1, round(tokens / seq)), f"the median step of the registry's {len(steps)} rows of this model family"
    return max(1, round(DEFAULT_GLOBAL_TOKENS / seq)), "about 4M tokens a step (no row of this model family)"


def default_family(rows: list[Observation], gpu: str, key: tuple[object, ...]) -> tuple[str, str]:
    same = Counter(framework_family(r.framework) for r in throughput_rows(rows)
                   if r.gpu == gpu and architecture_key(r.shape.arch) == key)
    if same:
        family = same.most_common(1)[0][0]
        return family, f"the framework family with most rows of this model family on {gpu}"
    on_gpu = Counter(framework_family(r.framework) for r in throughput_rows(rows) if r.gpu == gpu)
    family = on_gpu.most_common(1)[0][0]
    return family, f"the framework family with most rows on {gpu}"


def _price(catalog: Catalog, gpu: str, price: float | None) -> tuple[float | None, str | None]:
    if price is not None:
        return price, "--price"
    counts = sorted({i.gpu_count for i in catalog.instances.values() if i.gpu_type == gpu}, reverse=True)
    for count in counts:
        name = catalog.instance_for(gpu, count)
        if name is not None:
            inst = catalog.instances[name]
            return inst.usd_per_hour / inst.gpu_count, f"catalog/instances.yaml: {name}"
    return None, None


def per_node_of(catalog: Catalog, gpu: str, gpus: int, rows: list[Observation]) -> int:
    seen = Counter(r.per_node for r in rows if r.gpu == gpu)
    per_node = seen.most_common(1)[0][0] if seen else 8
    return min(per_node, gpus)


def answer(root: Path, catalog: Catalog, rows: list[Observation], q: Question,
           memory: MemoryModel | None = None, speed: ThroughputModel | None = None) -> Answer:
    precheck(root, catalog, q)
    model, arch = resolve_model(root, catalog, q.model)
    gpu = resolve_gpu(root, catalog, q.gpu, rows)
    key = architecture_key(arch)
    family_rows = [r for r in rows if architecture_key(r.shape.arch) == key]
    seq = q.seq or (Counter(r.shape.seq for r in family_rows).most_common(1)[0][0] if family_rows else 4096)
    gbs, gbs_why = ((q.global_batch, "--global-batch") if q.global_batch
                    else default_global_batch(rows, key, seq))
    if q.framework:
        family, family_why = framework_family(q.framework), "--framework"
    else:
        family, family_why = default_family(rows, gpu, key)
    memory = memory or fit_memory(rows)
    speed = speed or fit_throughput(rows, catalog)
    usable = speed.family_for(q.precision, family)
    if usable is None:
        raise Refusal(f"--precision {q.precision}: no registry row trains at this precision's family, nothing to "
                      "calibrate its compute efficiency on")
    if usable != family:
        family_why += f"; no {family} row at {q.precision}: the {usable} family's efficiency at it"
        family = usable
    spec = catalog.gpus[gpu]
    per_node = per_node_of(catalog, gpu, q.gpus, rows)
    shape = Shape(arch, seq, q.precision, q.training)
    plans = candidate_plans(arch, q.gpus, min(8, nvlink_domain(gpu, per_node)), seq, gbs)
    if not plans:
        raise Refusal(f"--gpus {q.gpus}: no layout of {model} on {q.gpus} GPU(s) with a global batch of {gbs} rows "
                      "(TP must divide the heads and DP x micro-batch the global batch); try --global-batch")
    usd, price_source = _price(catalog, gpu, q.price)
    layouts = []
    for plan in plans:
        mem = memory.predict(shape, plan)
        tps = speed.predict(shape, plan, gpu, spec.peak_flops.bf16, per_node, family)
        layouts.append(Layout(plan, mem, memory.fits(mem.peak_gb, spec.memory_gb), tps))
    layouts.sort(key=lambda lay: (not lay.fits, -lay.tokens[0] if lay.fits else lay.memory.peak_gb))
    chosen = layouts[: q.top]
    measured = [r for r in throughput_rows(family_rows) if r.gpu == gpu]
    # Like with like: the nearest measured recipes share the question's precision and training kind where any does
    # (a BF16 layout is not set beside FP8 figures); only where none does do the others stand in, farther by _distance.
    like = [r for r in measured if r.shape.precision == q.precision and
            (r.shape.training == "lora") == (q.training == "lora")]
    pool = like or measured
    for lay in chosen:
        near = sorted(pool, key=lambda r: (_distance(r, lay.plan, seq, q.precision, q.training), r.id))[:NEAREST]
        for r in near:
            own = speed.predict(r.shape, r.plan, r.gpu, catalog.gpus[r.gpu].peak_flops.bf16, r.per_node,
                                framework_family(r.framework))[0]
            lay.nearest.append((r.id, float(r.tokens_per_s_per_gpu or 0.0), own))
        if q.tokens:
            lay.cost = cost(q.tokens, lay.tokens, q.gpus, usd)
    basis = describe_basis(memory, speed, gpu, family, family_why, gbs, gbs_why, seq, len(measured), per_node,
                           spec.memory_gb)
    return Answer(q, model, seq, family, chosen, basis, float(spec.memory_gb), usd, price_source)


def cost(tokens: float, tps: tuple[float, float, float], gpus: int, usd: float | None) -> dict[str, float]:
    """GPU-hours, days and USD to train `tokens` at the predicted tokens/s per GPU (and at its low and high)."""
    out: dict[str, float] = {}
    for label, value in zip(("predicted", "low", "high"), tps, strict=True):
        hours = figures.gpu_hours_for_tokens(tokens, value)
        out[f"gpu_hours_{label}"] = hours
        out[f"days_{label}"] = figures.wall_clock_days(hours, gpus)
        if usd is not None:
            out[f"usd_{label}"] = figures.training_usd(hours, usd)
    if usd is not None:
        out["usd_per_gpu_hour"] = usd
    return out


def describe_basis(memory: MemoryModel, speed: ThroughputModel, gpu: str, family: str, family_why: str, gbs: int,
                   gbs_why: str, seq: int, measured: int, per_node: int, card_gb: float) -> str:
    c = memory.coef
    gpu_rows = speed.rows_by_gpu.get(gpu, 0)
    families = ", ".join(f"{f} {n}" for f, n in sorted(speed.families_by_gpu.get(gpu, {}).items(),
                                                         key=lambda kv: -kv[1]))
    lo, hi = speed.range(gpu, family)
    return (f"{PREDICTED}, not measured. Memory: the formulas of generator/advise/memory.py (weights, gradients, "
            f"optimizer state under its ZeRO sharding, activations per Korthikanti et al. for the recompute, sequence "
            f"and context parallelism and pipeline schedule, logits) scaled by a fit on {memory.rows} rows stating "
            f"peak memory ({', '.join(memory.sources)}): {c[0]:.2f} GB buffers + {c[1]:.2f} x states + {c[2]:.2f} x "
            f"kept activations + {c[3]:.2f} x one layer's working activations + {c[4]:.2f} x logits; range: the fit's "
            f"10th-90th percentile ({memory.low:.2f}-{memory.high:.2f} x); fits: peak <= {memory.threshold:.2f} x "
            f"the card's {card_gb:g} GB (the threshold "
            f"that classifies most of {memory.classified} worked and failed playbook layouts). Tokens/s: step-time "
            f"terms of generator/advise/throughput.py weighted by non-negative least squares on {gpu_rows} {gpu} rows "
            f"({families}) pulled towards the fit over every GPU type; compute efficiency of the {family} family "
            f"({family_why}); {per_node} GPUs per node; range: the fit's 10th-90th percentile of measured / predicted "
            f"step time ({lo:.2f}-{hi:.2f} x). Global batch {gbs} rows of {seq} tokens ({gbs_why}). "
            f"{measured} measured recipe(s) of this model family on {gpu}. Accuracy, leave one model out: "
            "benchmarks/results/advise_validate.txt.")
