"""Step time of a layout: its compute and communication terms, before any fitting.

Each term is seconds (or bytes moved) per optimizer step on one GPU, computed from the layout and the architecture:
the fitted model (generator/advise/model.py) weighs them by non-negative least squares on the registry's rows of
one GPU type. What a term counts, and from where:

- compute: the model FLOPs of the step's tokens (Megatron's count, generator.figures.model_flops_per_token; LoRA
  two thirds of it; full recompute adds a forward pass, 8/6) over the GPU count and the GPU's dense BF16 peak.
  One column per precision family (BF16, FP8, FP4), so each gets its own fitted efficiency.
- pipeline bubble: the compute term x (p - 1) / (m v), the 1F1B and interleaved schedules' idle fraction (Narayanan
  et al. 2021) for p stages, m micro-batches and v virtual stages.
- tensor parallel: per micro-batch and layer, sequence parallelism's 4 all-gathers / reduce-scatters forward and 4
  backward of the layer's s b h activation (2 bytes) x (t - 1) / t; within a node (t <= GPUs per node) or across.
- context parallel: ring attention's K and V chunks passed cp - 1 times forward and twice backward.
- data parallel: the gradients' reduction, 2 (d - 1) / d x the stage's parameters / t x 2 bytes (ring all-reduce or
  reduce-scatter + all-gather); FSDP (ZeRO-3) also gathers the weights forward and backward of every micro-batch.
  Within a node or across (the data-parallel group spans t x cp x d consecutive ranks).
- pipeline: each micro-batch's activation sent to the next stage and its gradient back.
- per layer and micro-batch: a fixed cost (kernel launches, synchronisation) that makes small micro-batches slow.
- tensor parallel under a pipeline, per framework family: m x (layers on the stage) x (t - 1) when p > 1, a cost
  per layer, micro-batch and extra TP rank that only pipelined runs pay. The Ultra-Scale Playbook's nanotron sweep
  shows it (at the same TP degree and GPU count, its TP >= 4 layouts with PP > 1 run at a fraction of those
  without, slower the more micro-batches), Megatron's runs do not; each family's weight is its own.
- ZeRO-0 under a pipeline with data parallelism, per framework family: a cost per micro-batch (m when ZeRO stage 0,
  p > 1 and d > 1). nanotron's ZeRO-0 layouts with PP and DP in the playbook's sweep run up to 30x slower than the
  same layout with ZeRO-1, in proportion to the micro-batches, as if the gradients were reduced every micro-batch.
- optimizer: the optimizer's pass over its (sharded) state, proportional to the bytes it touches.
- per step: a constant.
"""

from __future__ import annotations

import math

from generator import figures
from generator.advise.memory import Plan, Shape, stage_layers, stage_params

GB = 1e9
BUCKET_BYTES = 25 * 2**20  # DDP's and nanotron's default gradient bucket (25 MB)
PRECISION_FAMILY = {"fp8": "fp8", "fp8-cs": "fp8", "fp8-mx": "fp8", "fp8-ds": "fp8", "nvfp4": "fp4"}
TERMS = ("compute_bf16", "compute_fp8", "compute_fp4", "tp_pp_layer_microbatches", "zero0_pp_microbatches",
         "bubble", "tp_intra", "tp_inter", "tp_calls_intra", "tp_calls_inter", "cp_intra", "cp_inter", "dp_intra",
         "dp_inter", "pp", "pp_microbatches", "layer_microbatches", "dp_hops", "elementwise", "loss", "optimizer",
         "step", "step_nodes", "step_nodes2")
# Terms fitted with one weight per framework family (the rest share one weight): what a framework's kernels, overlap
# and schedule make of the same work.
FAMILY_TERMS = ("compute_bf16", "compute_fp8", "compute_fp4", "tp_pp_layer_microbatches", "zero0_pp_microbatches")
RECOMPUTE_FACTOR = {"none": 1.0, "selective": 1.0, "full": 8 / 6}


def step_tokens(shape: Shape, plan: Plan) -> int:
    return figures.step_tokens(plan.global_batch, shape.seq)


def flops_per_token(shape: Shape) -> float:
    flops = figures.model_flops_per_token(shape.arch, shape.seq)
    return flops * (figures.FROZEN_BASE_FRACTION if shape.lora else 1.0)


# GPUs joined by NVLink beyond a node: a GB200 / GB300 NVL72 rack is one NVLink domain of 72 GPUs (NVIDIA's NVL72
# pages, the catalog's sources for those GPUs: "72 Blackwell GPUs ... in a single NVLink domain"), though each
# node (compute tray) holds 4.
NVLINK_DOMAIN = {"GB200": 72, "GB300": 72}


def nvlink_domain(gpu_type: str, per_node: int) -> int:
    return max(per_node, NVLINK_DOMAIN.get(gpu_type, per_node))


def terms(shape: Shape, plan: Plan, peak_bf16: float, per_node: int, domain: int | None = None) -> dict[str, float]:
    """The step-time terms of one layout (see the module's docstring), by name. `domain`: the GPUs one NVLink
    reaches (default: a node's)."""
    domain = per_node if domain is None else domain
    arch = shape.arch
    h = arch.hidden_size
    gpus = plan.gpus
    m = plan.microbatches
    layers = stage_layers(arch, plan.pp, 0)
    tokens = plan.micro_batch * math.ceil(shape.seq / plan.cp)  # a micro-batch's tokens on one rank
    out = dict.fromkeys(TERMS, 0.0)

    compute = flops_per_token(shape) * step_tokens(shape, plan) * RECOMPUTE_FACTOR[plan.recompute] / gpus / peak_bf16
    out["compute_" + PRECISION_FAMILY.get(shape.precision, "bf16")] = compute
    if plan.pp > 1:
        out["bubble"] = compute * (plan.pp - 1) / (m * plan.vpp)

    if plan.tp > 1:
        passes = 12 if plan.recompute == "full" else 8
        tp_bytes = m * layers * passes * tokens * h * 2 * (plan.tp - 1) / plan.tp
        where = "intra" if plan.tp <= domain else "inter"
        out["tp_" + where] = tp_bytes / GB
        out["tp_calls_" + where] = m * layers * passes / 1000
    if plan.cp > 1:
        kv = arch.attention[arch.layer_pattern[0]].kv_heads * arch.attention[arch.layer_pattern[0]].head_dim
        cp_bytes = m * layers * 3 * (plan.cp - 1) * 2 * tokens * kv * 2 / plan.tp
        out["cp_intra" if plan.tp * plan.cp <= domain else "cp_inter"] = cp_bytes / GB

    params = max(stage_params(arch, plan.pp, s) for s in {0, plan.pp - 1}) / plan.tp
    shard = plan.dp * plan.cp
    if shard > 1:
        grad_bytes = 2 * (shard - 1) / shard * params * 2
        if plan.zero >= 3:
            grad_bytes += m * 2 * (shard - 1) / shard * params * 2  # gather the weights forward and backward
        if shape.lora:
            grad_bytes = 0.0
        spans = plan.tp * plan.cp * plan.dp > domain
        out["dp_inter" if spans else "dp_intra"] = grad_bytes / GB
        if spans and not shape.lora:
            # a ring's latency: every bucket of gradients passes d - 1 hops (buckets of BUCKET_BYTES)
            out["dp_hops"] = (shard - 1) * math.ceil(params * 4 / BUCKET_BYTES) / 1000
    if plan.pp > 1:
        out["pp"] = m * plan.vpp * 2 * tokens * h * 2 / (plan.tp if plan.sequence_parallel else 1) / GB
        out["pp_microbatches"] = m * plan.vpp

    out["layer_microbatches"] = m * layers / 1000
    out["tp_pp_layer_microbatches"] = tp_pp_layer_microbatches(plan, layers)
    out["zero0_pp_microbatches"] = zero0_pp_microbatches(plan)
    # Memory-bound work beside the matrix products (norms, rotary, the FFN's activation, residual adds): bytes of
    # the layer's h- and f-wide activations read and written, per token; and the loss's pass over the logits.
    width = (arch.hidden_size + arch.ffn_hidden_size) / plan.tp
    out["elementwise"] = m * layers * tokens * width * 2 / GB
    out["loss"] = m * tokens * arch.vocab_size / plan.tp * 4 / GB
    state = 0.0 if shape.lora else 16 * params / (shard if plan.zero >= 1 else 1)
    out["optimizer"] = state / GB
    out["step"] = 1.0
    nodes = math.ceil(gpus / per_node)
    out["step_nodes"] = nodes / 100  # per-step work that grows with the nodes (barriers, the loss's all-reduce)
    out["step_nodes2"] = (nodes / 100) ** 2  # ... and with the nodes squared (what the sweep's 32- and 64-node runs show)
    return out


def tp_pp_layer_microbatches(plan: Plan, layers: int) -> float:
    """Per thousand: micro-batches x the stage's layers x the TP ranks beyond the first, for a pipelined layout."""
    if plan.pp == 1 or plan.tp == 1:
        return 0.0
    return plan.microbatches * layers * (plan.tp - 1) / 1000


def zero0_pp_microbatches(plan: Plan) -> float:
    """The micro-batches of a ZeRO-0 layout with pipeline and data parallelism (else 0)."""
    if plan.zero != 0 or plan.pp == 1 or plan.dp * plan.cp == 1:
        return 0.0
    return float(plan.microbatches)


def step_seconds_measured(shape: Shape, plan: Plan, tokens_per_s_per_gpu: float) -> float:
    """A row's step time from its stated throughput: the step's tokens / (tokens/s per GPU x GPUs)."""
    return step_tokens(shape, plan) / (tokens_per_s_per_gpu * plan.gpus)


def tokens_per_s_per_gpu(shape: Shape, plan: Plan, step_seconds: float) -> float:
    return step_tokens(shape, plan) / (step_seconds * plan.gpus)
