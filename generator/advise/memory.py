"""Peak memory per GPU of a layout: the formulas, term by term, before any fitting.

Every term is a count a reader can check by hand against the Ultra-Scale Playbook ("Memory usage in Transformers",
the 2 + 2 + 12 bytes per parameter of mixed-precision Adam and how ZeRO shards them) and Korthikanti et al. 2022
("Reducing Activation Recomputation in Large Transformer Models": activations per layer, sequence parallelism,
selective and full recompute, the pipeline schedules' in-flight micro-batches). The fitted model
(generator/advise/model.py) scales these terms by least squares; nothing here is fitted.

Units: bytes. The advisor reports GB as 2**30 bytes, the unit nanotron's "GB" and torchtitan's "GiB" are printed in
(torch.cuda.max_memory_* / 1024**3), the two sources in the registry that state peak memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from generator.catalog import Architecture

GIB = 2**30

# Bytes per parameter, mixed precision with Adam (the Ultra-Scale Playbook's count): BF16 weights (2) used by the
# forward and backward passes, FP32 gradients (4: Megatron's main_grad buffer, nanotron's accumulate_grad_in_fp32),
# and the optimizer's FP32 master weights plus Adam's two moments (4 + 4 + 4).
WEIGHT_BYTES = 2
GRAD_BYTES = 4
OPTIMIZER_BYTES = 12
# An FP8 run keeps an FP8 copy of each linear weight beside the BF16 one (Transformer Engine, torchao).
FP8_WEIGHT_BYTES = 1
# Activation bytes per element (BF16).
ACT_BYTES = 2
# The loss over the vocabulary, per logit element of the last stage: the BF16 logits (2), their FP32 copy for a
# stable softmax (4) and its FP32 gradient (4).
LOGIT_BYTES = 2 + 4 + 4
# ZeRO-3 / FSDP gathers a layer's weights before use and prefetches the next: two layers unsharded at a time.
FSDP_GATHERED_LAYERS = 2

RECOMPUTE = ("none", "selective", "full")
LOW_PRECISION = {"fp8", "fp8-cs", "fp8-mx", "fp8-ds", "nvfp4"}


@dataclass(frozen=True)
class Plan:
    """A layout: what the advisor ranks, and what a registry row is read into."""

    tp: int
    pp: int
    dp: int
    micro_batch: int
    global_batch: int
    cp: int = 1
    vpp: int = 1
    ep: int = 1
    zero: int = 1  # 0: none; 1: optimizer state sharded over DP (Megatron's distributed optimizer); 2: + gradients;
    #                3: + weights (FSDP)
    recompute: str = "none"  # none, selective, full
    sequence_parallel: bool = True  # with TP > 1

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.cp * self.dp

    @property
    def fsdp(self) -> bool:
        return self.zero >= 3

    @property
    def microbatches(self) -> int:
        """Micro-batches per step per data-parallel replica (gradient accumulation)."""
        return max(1, self.global_batch // (self.dp * self.micro_batch))

    def as_dict(self) -> dict[str, object]:
        return {"tp": self.tp, "pp": self.pp, "vpp": self.vpp, "cp": self.cp, "dp": self.dp, "ep": self.ep,
                "zero": self.zero, "fsdp": self.fsdp, "recompute": self.recompute, "micro_batch": self.micro_batch,
                "global_batch": self.global_batch}

    def label(self) -> str:
        parts = [f"TP{self.tp}", f"PP{self.pp}"]
        if self.vpp > 1:
            parts.append(f"VPP{self.vpp}")
        if self.cp > 1:
            parts.append(f"CP{self.cp}")
        parts.append(f"DP{self.dp}")
        parts.append("FSDP" if self.fsdp else f"ZeRO-{self.zero}")
        parts.append(f"recompute {self.recompute}")
        parts.append(f"mbs {self.micro_batch}")
        parts.append(f"gbs {self.global_batch}")
        return " ".join(parts)


@dataclass(frozen=True)
class Shape:
    """What the layout trains: the architecture, the sequence length, the precision and the training kind."""

    arch: Architecture
    seq: int
    precision: str = "bf16"
    training: str = "pre-training"  # pre-training, sft or lora

    @property
    def lora(self) -> bool:
        return self.training == "lora"


# --- parameters on a pipeline stage -----------------------------------------------------------------------------


def _attention(arch: Architecture) -> tuple[float, float, float]:
    """Query width (heads x head dim), key-value width (kv heads x head dim) and key-value matrices (2; 1 where keys
    and values share a projection), each averaged over the layers' attention kinds."""
    # Layer i takes the pattern's entry i mod its length: each entry's count of layers, not a pass over every layer
    # (the advisor asks this of every row and candidate layout). Integer sums, one division: the same floats.
    pattern = arch.layer_pattern
    whole, rest = divmod(arch.layers, len(pattern))
    counted = [(arch.attention[name], whole + (j < rest)) for j, name in enumerate(pattern)]
    q = sum(arch.attention_heads * k.head_dim * n for k, n in counted) / arch.layers
    kv = sum(k.kv_heads * k.head_dim * n for k, n in counted) / arch.layers
    mats = sum((1 if k.shared_kv else 2) * n for k, n in counted) / arch.layers
    return q, kv, mats


def layer_params(arch: Architecture) -> int:
    """One decoder layer: Q, K, V and output projections, the (gated: three-matrix) FFN, two norm gains."""
    h = arch.hidden_size
    q, kv, mats = _attention(arch)
    attn = h * q + mats * h * kv + q * h
    ffn = (3 if arch.gated_ffn else 2) * h * arch.ffn_hidden_size
    return round(attn + ffn + 2 * h)


def stage_layers(arch: Architecture, pp: int, stage: int) -> int:
    """Decoder layers on a pipeline stage: an even split, the remainder on the first stages."""
    base, extra = divmod(arch.layers, pp)
    return base + (1 if stage < extra else 0)


def stage_params(arch: Architecture, pp: int, stage: int) -> int:
    """Parameters a pipeline stage holds (before the tensor-parallel split): its layers, the input embedding on the
    first stage, the output layer and final norm on the last (a tied output layer is a second copy there when the
    two ends are on different stages, as Megatron and nanotron keep it)."""
    h, vocab = arch.hidden_size, arch.vocab_size
    params = stage_layers(arch, pp, stage) * layer_params(arch)
    if stage == 0:
        params += vocab * h
    if stage == pp - 1:
        params += h
        if not arch.tied_embeddings or pp > 1:
            params += vocab * h
    return params


# --- activations --------------------------------------------------------------------------------------------------


def layer_activation_bytes(arch: Architecture, tokens: int, tp: int, sequence_parallel: bool) -> float:
    """Bytes one decoder layer keeps for its backward pass, for `tokens` tokens of a micro-batch on this rank
    (micro-batch x sequence / CP): Korthikanti et al.'s count (34 s b h for a GPT layer: 10 s b h held by every TP
    rank, 24 s b h split by TP; 32 s b h without its two dropout masks) written for a pre-norm, gated-FFN,
    grouped-query layer with flash attention:

    - held by every rank unless sequence parallel splits them: the inputs of the two norms and of the two column-
      parallel linears (QKV, FFN up): 4 x 2h
    - split by TP: Q (2q), K and V (2 x 2kv), the attention output that the output projection reads (2q), the FFN's
      inner activations (gated: the gate and up outputs the SwiGLU reads, 2 x 2f, and its output the down projection
      reads, 2f; plain: 2f + 2f)

    No s x s attention scores: flash attention recomputes them (Korthikanti's 5 a s / h term is what selective
    recompute removes; with flash attention it is never stored). Llama-3-8B (h 4096, q 4096, kv 1024, f 14336):
    12h + 4kv + 6f = 139,264 bytes per token, 34 h."""
    h = arch.hidden_size
    q, kv, _ = _attention(arch)
    f = arch.ffn_hidden_size
    held = 4 * ACT_BYTES * h
    split = ACT_BYTES * (2 * q + 2 * kv) + ACT_BYTES * (3 if arch.gated_ffn else 2) * f
    if tp > 1 and sequence_parallel:
        per_token = (held + split) / tp
    else:
        per_token = held + split / tp
    return per_token * tokens


def layer_input_bytes(arch: Architecture, tokens: int, tp: int, sequence_parallel: bool) -> float:
    """Full recompute keeps only each layer's input (2h per token; split by TP under sequence parallelism)."""
    per_token = ACT_BYTES * arch.hidden_size
    return per_token * tokens / (tp if tp > 1 and sequence_parallel else 1)


def inflight_microbatches(plan: Plan, stage: int) -> float:
    """Micro-batches whose activations a stage holds at its peak. One without pipelining (gradient accumulation
    frees each micro-batch's activations in its backward pass); 1F1B: pp - stage on stage `stage`, at most the
    micro-batches there are; interleaved (VPP v): the first stage holds (1 + (p - 1) / (p v)) x p (Korthikanti et
    al., section 4.2.3), the later ones proportionally fewer."""
    p, m = plan.pp, plan.microbatches
    if p == 1:
        return 1.0
    warm = min(p - stage, m)
    if plan.vpp > 1:
        return warm * (1 + (p - 1) / (p * plan.vpp))
    return float(warm)


@dataclass(frozen=True)
class Breakdown:
    """Bytes per GPU on one pipeline stage, term by term (before the fitted model's scales)."""

    stage: int
    weights: float
    grads: float
    optimizer: float
    activations: float  # kept for the backward pass: every in-flight micro-batch's layers
    working: float  # one layer's full activations for one micro-batch: what its backward (and, under full
    #                 recompute, its recomputed forward) holds at once beside the kept ones
    logits: float

    @property
    def states(self) -> float:
        return self.weights + self.grads + self.optimizer

    @property
    def total(self) -> float:
        return self.states + self.activations + self.working + self.logits


def stage_breakdown(shape: Shape, plan: Plan, stage: int) -> Breakdown:
    arch = shape.arch
    shard = plan.dp * plan.cp  # ZeRO shards over every data-parallel rank (Megatron: DP x CP)
    params = stage_params(arch, plan.pp, stage) / plan.tp
    weight_bytes = WEIGHT_BYTES + (FP8_WEIGHT_BYTES if shape.precision in LOW_PRECISION else 0)
    weights = params * weight_bytes
    grads = 0.0 if shape.lora else params * GRAD_BYTES
    optimizer = 0.0 if shape.lora else params * OPTIMIZER_BYTES
    if plan.zero >= 1:
        optimizer /= shard
    if plan.zero == 2:
        grads /= shard
    if plan.zero >= 3:
        # Gathered for use: two layers at a time (the one computing, the next prefetched), with their gradients;
        # under pipeline parallelism the stage's every layer stays gathered across the micro-batches
        # (torchtitan turns reshard_after_forward off with PP, so as not to gather once per micro-batch).
        gathered = layer_params(arch) / plan.tp * (stage_layers(arch, plan.pp, stage) if plan.pp > 1
                                                   else FSDP_GATHERED_LAYERS)
        weights = weights / shard + gathered * weight_bytes
        if not shape.lora:  # sharded, but the gathered layers' gradients exist whole until reduce-scattered
            grads = grads / shard + gathered * GRAD_BYTES
    tokens = plan.micro_batch * math.ceil(shape.seq / plan.cp)
    layers = stage_layers(arch, plan.pp, stage)
    full = layer_activation_bytes(arch, tokens, plan.tp, plan.sequence_parallel)
    if plan.recompute == "full":
        kept = layer_input_bytes(arch, tokens, plan.tp, plan.sequence_parallel)
        activations = layers * kept * inflight_microbatches(plan, stage)
    else:
        activations = layers * full * inflight_microbatches(plan, stage)
    logits = 0.0
    if stage == plan.pp - 1:
        logits = tokens * arch.vocab_size / plan.tp * LOGIT_BYTES
    return Breakdown(stage, weights, grads, optimizer, activations, full, logits)


def breakdowns(shape: Shape, plan: Plan) -> list[Breakdown]:
    """The first and the last pipeline stage (the two that peak: the first holds the most in-flight activations and
    the input embedding, the last the output layer and the logits); one stage without pipelining."""
    stages = [0] if plan.pp == 1 else [0, plan.pp - 1]
    return [stage_breakdown(shape, plan, s) for s in stages]
