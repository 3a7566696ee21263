"""Every derived figure of the registry, in one place. The runner reuses these; nothing else computes them.

Conventions:
- window: first and last optimizer step, 0-based and inclusive; window tokens = steps x global batch x row tokens.
- tokens/s per GPU = window tokens / (sum of the window's step times) / GPUs.
- $ per 1M tokens = (instance $/h / instance GPUs) / (tokens/s/GPU x 3600) x 1e6.
- MFU = 6 x N x tokens/s/GPU / dense peak FLOP/s of the GPU at the recipe's precision (6N: forward 2N,
  backward 4N, attention not counted); N is the active parameters per token.
- step-time CV = sample standard deviation / mean x 100 over the window's step times.
"""

from __future__ import annotations

import functools
import math
import re
import statistics
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from generator.catalog import Architecture, AttentionKind, Catalog, Mamba, ModelCard
    from generator.models import Recipe

SECONDS_PER_HOUR = 3600.0
PUBLISHED_TFLOPS_TOLERANCE = 0.005  # |recomputed - published| / published allowed for Model TFLOP/s
# A verified recipe's step-time CV above this (percent) needs its reason stated (result.step_time_cv_note).
NOISY_STEP_TIME_CV_PERCENT = 5.0
# A figure that reproduces: a verified recipe's figure is the median of at least this many runs (the CV across
# them stated), so one best-case run is not the figure. In effect for recipes measured from this date on: the
# verified recipes measured before it (runs: 1) stay as they were until re-measured.
VERIFIED_MIN_RUNS = 3
VERIFIED_MIN_RUNS_FROM = date(2026, 12, 4)  # the day the rule came in: earlier figures (the reference's) keep theirs
# A run whose step times drift (last third against first third of the window) beyond this is reported.
STEP_TIME_DRIFT_PERCENT = 5.0
# The most of the GPU's dense peak a training run's MFU can show. Dense GEMMs alone reach about 0.8 of peak on
# H100/H200 (cuBLAS at large square shapes); a training step adds attention, norms, optimizer and communication,
# and the best published 6N MFUs stay near 0.6 (the registry's highest is 0.62). A measured MFU above 0.75 says the
# figure counts tokens the run did not train (wrong workload, active_params or GPU count), not a fast run.
MFU_BOUND = 0.75

# What a passing convergence check means (Megatron-Bridge's validate_convergence; runner/convergence.py compares two
# loss curves with these, check holds a recipe's recorded statistics to the first two): the Pearson correlation of
# the two loss curves at least CONVERGENCE_MIN_CORRELATION; at most CONVERGENCE_MAX_FAILING_FRACTION of the points
# outside the pointwise tolerance (CONVERGENCE_POINTWISE_TOLERANCE: the candidate's loss within this fraction of the
# reference's, by the reference's loss: above 2.0, above 0.5, else); the final losses within
# CONVERGENCE_FINAL_LOSS_TOLERANCE (relative); and at most CONVERGENCE_MAX_FAILING_FRACTION of the residuals
# (candidate - reference) further than CONVERGENCE_OUTLIER_SIGMAS standard deviations from their mean.
CONVERGENCE_MIN_CORRELATION = 0.95
CONVERGENCE_MAX_FAILING_FRACTION = 0.10
# A run of ours trains at the schedule its recipe states: its last logged loss is at most this fraction of its step-0
# loss (check refuses a measured recipe of ours whose evidence shows less of a fall).
LOSS_FALL_RATIO = 0.8
LOSS_FALL_FROM = date(2026, 12, 6)  # the day the rule came in: earlier runs' notes say under what schedule they ran
# A convergence arm on the learnable (markov) stream ends within this fraction above the stream's floor (ln 8).
CONVERGENCE_FLOOR_TOLERANCE = 0.10
# Frameworks that train the same model from the same initial checkpoint on the same rows agree at step 0 within
# this (nats, absolute): the difference is rounding, not the model.
STEP0_LOSS_TOLERANCE = 0.02


def scheduled_lr(peak_lr: float, warmup_steps: int, decay: str, min_lr: float, step: int, steps: int) -> float:
    """The learning rate of 0-based `step` of a run of `steps` steps: linear warm-up (step s of it trains at
    peak x (s + 1) / warmup), then constant, or linear or cosine decay from the peak to `min_lr` at the last step.
    Every framework the runner launches takes its rate from here, so their curves can be compared."""
    if step < warmup_steps:
        return peak_lr * (step + 1) / warmup_steps
    if decay == "constant":
        return peak_lr
    span = steps - 1 - warmup_steps
    progress = 1.0 if span <= 0 else min(1.0, (step - warmup_steps) / span)
    if decay == "linear":
        factor = 1.0 - progress
    elif decay == "cosine":
        factor = 0.5 * (1.0 + math.cos(math.pi * progress))
    else:
        raise ValueError(f"unknown learning-rate decay {decay!r} (constant, linear, cosine)")
    return min_lr + (peak_lr - min_lr) * factor


def loss_falls(first_loss: float, last_loss: float) -> bool:
    """Whether a run learned: its last logged loss is at most LOSS_FALL_RATIO of its step-0 loss."""
    return math.isfinite(first_loss) and math.isfinite(last_loss) and last_loss <= LOSS_FALL_RATIO * first_loss

CONVERGENCE_POINTWISE_TOLERANCE: tuple[tuple[float, float], ...] = ((2.0, 0.10), (0.5, 0.05), (-math.inf, 0.02))
CONVERGENCE_FINAL_LOSS_TOLERANCE = 0.03
CONVERGENCE_OUTLIER_SIGMAS = 3.0


def convergence_pointwise_tolerance(reference_loss: float) -> float:
    """The relative difference a candidate's loss may have from a reference loss at one step: the tolerance of the
    first CONVERGENCE_POINTWISE_TOLERANCE tier the reference loss is above (10% above 2.0, 5% above 0.5, 2% at 0.5
    and below)."""
    for above, tolerance in CONVERGENCE_POINTWISE_TOLERANCE:
        if reference_loss > above:
            return tolerance
    return CONVERGENCE_POINTWISE_TOLERANCE[-1][1]


def window_steps(window: Sequence[int]) -> int:
    first, last = window
    if last < first:
        raise ValueError(f"window [{first}, {last}] ends before it starts")
    return last - first + 1


def step_tokens(global_batch: int, row_tokens: int) -> int:
    """The tokens one training step trains on: global_batch rows of row_tokens each."""
    return global_batch * row_tokens


def window_tokens(window: Sequence[int], global_batch: int, row_tokens: int) -> int:
    return window_steps(window) * step_tokens(global_batch, row_tokens)


def tokens_per_s_per_gpu(
    step_times_s: Sequence[float], window: Sequence[int], global_batch: int, row_tokens: int, gpu_count: int
) -> float:
    """step_times_s is indexed by step (0-based); only the window's steps count."""
    first, last = window
    if last >= len(step_times_s):
        raise ValueError(f"window ends at step {last} but only {len(step_times_s)} steps were timed")
    seconds = math.fsum(step_times_s[first : last + 1])
    if seconds <= 0:
        raise ValueError("the window's step times sum to zero")
    return window_tokens(window, global_batch, row_tokens) / seconds / gpu_count


def usd_per_million_tokens(usd_per_hour: float, instance_gpus: int, tokens_per_s: float) -> float:
    return (usd_per_hour / instance_gpus) / (tokens_per_s * SECONDS_PER_HOUR) * 1e6


def mfu(active_params: int, tokens_per_s: float, peak_flops: float, frozen_base: bool = False) -> float:
    """6N FLOPs a token (forward 2N, backward 4N) over the peak; a frozen base (LoRA) has no weight gradients: 4N."""
    return 6.0 * active_params * tokens_per_s / peak_flops * (FROZEN_BASE_FRACTION if frozen_base else 1.0)


def cv_percent(values: Sequence[float]) -> float:
    if len(values) < 2:
        return 0.0
    mean = statistics.fmean(values)
    return statistics.stdev(values) / mean * 100.0


def step_time_cv_percent(step_times_s: Sequence[float], window: Sequence[int] | None = None) -> float:
    times = step_times_s if window is None else step_times_s[window[0] : window[1] + 1]
    return cv_percent(times)


def step_time_drift_percent(step_times_s: Sequence[float]) -> float:
    """How far a run's steps slow down (or speed up) over its window: the mean of the last third of the steps
    against the mean of the first third, in percent of the window's mean (0 for fewer than 3 steps)."""
    third = len(step_times_s) // 3
    if third == 0:
        return 0.0
    mean = statistics.fmean(step_times_s)
    return (statistics.fmean(step_times_s[-third:]) - statistics.fmean(step_times_s[:third])) / mean * 100.0


def median_index(values: Sequence[float]) -> int:
    """Index of the median run (the lower median for an even count), MLPerf-style."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    return order[(len(order) - 1) // 2]


# A time-to-train recipe's score (olympic_mean of its run times, in ms) is stated to this many decimals (0.1 ms).
TIME_TO_TRAIN_SCORE_DECIMALS = 1


def olympic_mean(values: Sequence[float]) -> float | None:
    """MLPerf Training's score over N runs: the mean without the fastest and the slowest (training_rules.adoc,
    'Benchmark results'); None for fewer than 3 runs."""
    if len(values) < 3:
        return None
    return math.fsum(sorted(values)[1:-1]) / (len(values) - 2)


def run_tokens_per_s_per_gpu(samples: int, row_tokens: int, run_ms: float, gpu_count: int) -> float:
    """Time-to-train throughput of one run: every sample's tokens over run_start to run_stop (evaluation
    included), per GPU."""
    return samples * row_tokens / (run_ms / 1000.0) / gpu_count


def time_to_train_tokens_per_s_per_gpu(samples: Sequence[int], runs_ms: Sequence[float], row_tokens: int,
                                       gpu_count: int) -> float:
    """The median run's (median_index of the run times) time-to-train throughput."""
    if len(samples) != len(runs_ms) or not runs_ms:
        raise ValueError(f"{len(samples)} sample counts for {len(runs_ms)} run times")
    i = median_index(runs_ms)
    return run_tokens_per_s_per_gpu(samples[i], row_tokens, runs_ms[i], gpu_count)


# The re-measurement gate: a new tokens/s further than this from the recorded one is a regression or an
# improvement, written only when the user accepts it (runner remeasure --accept-change).
CHANGE_TOLERANCE_MIN_PERCENT = 5.0
CHANGE_TOLERANCE_CV_FACTOR = 3.0
# The CV-based widening stops here: tokens/s is a mean over the window's steps, far steadier than one step, so a
# noisy recipe (CV 12.8% would give +/-38%) must not wave through any change; beyond 10% someone accepts it.
CHANGE_TOLERANCE_MAX_PERCENT = 10.0


def change_tolerance_percent(recorded_cv_percent: float | None) -> float:
    """The gate's half-width in percent: the larger of 5% and 3 x the recorded step-time CV, capped at 10%."""
    widened = CHANGE_TOLERANCE_CV_FACTOR * (recorded_cv_percent or 0.0)
    return min(CHANGE_TOLERANCE_MAX_PERCENT, max(CHANGE_TOLERANCE_MIN_PERCENT, widened))


def gpu_hours(gpu_count: int, seconds: float) -> float:
    return gpu_count * seconds / SECONDS_PER_HOUR


def window_gpu_hours(window_tokens_: int, tokens_per_s_per_gpu_: float, gpu_count: int) -> float:
    """GPU-hours of the measured window alone: window tokens / (tokens/s per GPU x GPUs) seconds on every GPU.
    A run's GPU-hours (start-up and the warm-up steps included) cannot be fewer."""
    seconds = window_tokens_ / (tokens_per_s_per_gpu_ * gpu_count)
    return gpu_hours(gpu_count, seconds)


def gpu_hours_for_tokens(tokens: float, tokens_per_s_per_gpu: float) -> float:
    """GPU-hours to train on `tokens` at a recipe's speed: tokens / (tokens/s per GPU) GPU-seconds, whatever the GPU
    count (the site's cost to train; openrecipes.js repeats this for a budget typed in the browser)."""
    return tokens / tokens_per_s_per_gpu / SECONDS_PER_HOUR


def training_usd(gpu_hours_: float, usd_per_gpu_hour: float) -> float:
    """Dollars of those GPU-hours at a $/GPU-hour price."""
    return gpu_hours_ * usd_per_gpu_hour


def wall_clock_days(gpu_hours_: float, gpu_count: int) -> float:
    """Wall-clock days of those GPU-hours on the recipe's GPU count."""
    return gpu_hours_ / gpu_count / 24.0


def speedup(before_tokens_per_s: float, after_tokens_per_s: float) -> float:
    """Relative change in tokens/s per GPU from a reference to a recipe: 743.4 -> 1178.1 is +0.585 (+58%)."""
    if before_tokens_per_s <= 0:
        raise ValueError("the reference's tokens/s per GPU must be positive")
    return after_tokens_per_s / before_tokens_per_s - 1.0


def decimals(value: float) -> int:
    """Decimal places of a stated figure's value (shortest repr: 2.190 and 2.19 both give 2)."""
    text = repr(float(value))
    if "e" in text:
        mantissa, exp = text.split("e")
        frac = len(mantissa.split(".")[1].rstrip("0")) if "." in mantissa else 0
        return max(0, frac - int(exp))
    frac = text.split(".")[1].rstrip("0")
    return len(frac)


# --- the precision every stated figure must carry -----------------------------------------------------------


@dataclass(frozen=True)
class StatedPrecision:
    """The least precision a stated figure is written to, and the precision it must agree with its recomputation at.

    `decimals` decimal places at least; with `significant`, also that many significant figures (a $/1M of 0.016
    needs 3 decimals where 1.62 needs 2)."""

    label: str
    decimals: int
    significant: int = 0

    def required_decimals(self, *values: float | None) -> int:
        """Decimal places the figure needs, for the most demanding of `values` (stated and recomputed)."""
        places = self.decimals
        if self.significant:
            for value in values:
                if value is not None and math.isfinite(value) and value != 0:
                    places = max(places, self.significant - 1 - math.floor(math.log10(abs(value))))
        return places

    def describe(self, places: int) -> str:
        """'4 decimal places', or with significant figures '3 decimal places (2 significant figures, never fewer
        than 2 decimals)'."""
        text = f"{places} decimal place{'' if places == 1 else 's'}"
        if self.significant:
            text += f" ({self.significant} significant figures, never fewer than {self.decimals} decimals)"
        return text


# Why these: tokens/s to 0.1 keeps a 1,000 tokens/s figure to 1e-4 of itself; MFU to 4 decimals is 0.01
# percentage points (a 0.2 would hide a 5% error); $ per 1M tokens to cents and 2 significant figures (an H200
# recipe's 0.016 is not 0.02); CV and GPU-hours to 0.01 (a CV of 2.0 hides 2.22, GPU-hours 5.0 hides 4.83).
# runner/yaml_edit.py writes each figure at (at least) these precisions.
PRECISIONS: dict[str, StatedPrecision] = {
    "tokens_per_s_per_gpu": StatedPrecision("tokens/s per GPU", 1),
    "usd_per_million_tokens": StatedPrecision("$ per 1M tokens", 2, significant=2),
    "mfu": StatedPrecision("MFU", 4),
    "step_time_cv_percent": StatedPrecision("step-time CV", 2),
    "gpu_hours": StatedPrecision("GPU-hours", 2),
    "runs_cv_percent": StatedPrecision("CV across runs", 2),
}

def stated(figure: str, value: float) -> float:
    """`value` as a recipe states it: rounded to the precision check requires of `figure` (a key of PRECISIONS), or to
    two significant digits where that would round a positive figure to zero (a seconds-long run's GPU-hours). Every
    figure derived from another is computed from the other as stated (MFU and $ per 1M from the stated tokens/s),
    so that check, which recomputes from the recipe's text, gets what the writer wrote."""
    return round(float(value), stated_places(figure, value))


def stated_places(figure: str, value: float) -> int:
    """The decimal places `figure` is written to (see :func:`stated`)."""
    v = abs(float(value))
    places = PRECISIONS[figure].decimals
    if 0 < v < 10 ** -places:
        places = 1 - math.floor(math.log10(v))
    return max(places, PRECISIONS[figure].required_decimals(v))


# The importers (and reprice, for a price it changes) write a recomputed $ per 1M tokens to at least 4 decimals, more
# where the required precision asks: a figure of the registry's own, kept to the digits a reader can recompute.
IMPORTED_USD_DECIMALS = 4

_WRITTEN_NUMBER = re.compile(r"^[-+]?(?P<int>[0-9][0-9_]*)?(?:\.(?P<frac>[0-9_]*))?(?:[eE](?P<exp>[-+]?[0-9]+))?$")


def written_decimals(text: str) -> int | None:
    """Decimal places of a number as the recipe spells it ('0.2190' -> 4, '2.0' -> 1, '1.5e-3' -> 4, '12' -> 0);
    None when the text is not a plain decimal number (then only its value can be judged)."""
    match = _WRITTEN_NUMBER.match(text.strip())
    if match is None or not (match.group("int") or match.group("frac")):
        return None
    places = len((match.group("frac") or "").replace("_", ""))
    exponent = int(match.group("exp") or 0)
    return max(0, places - exponent)


def coarser_than_required(figure: str, written: str | None, stated: float,
                          computed: float | None = None) -> int | None:
    """The decimal places `figure` must be written to when `written` (its text; None: judged by its value) has
    fewer, else None."""
    places = written_decimals(written) if written is not None else None
    if places is None:
        places = decimals(stated)
    required = PRECISIONS[figure].required_decimals(stated, computed)
    return required if places < required else None


def within_last_unit(stated: float, computed: float, places: int) -> bool:
    """A gap no larger than one unit in the stated figure's last decimal place (0.1 for a figure stated at one
    decimal): rounding-sized, where the stated figure was itself computed from unrounded inputs that are published
    rounded (a recomputation from them can land up to a unit away). Beyond it, a gap is a discrepancy."""
    return abs(stated - computed) <= 10.0 ** -places + 1e-9


def agrees(stated: float, computed: float, figure: str | None = None, places: int | None = None) -> bool:
    """Whether computed rounds to stated (with float slack) at the finest of: the stated value's own decimals,
    `places` (its decimals as written), and the required precision of `figure` (a key of PRECISIONS)."""
    own = decimals(stated) if places is None else max(places, decimals(stated))
    if figure is not None:
        own = max(own, PRECISIONS[figure].required_decimals(stated, computed))
    tol = 0.5 * 10 ** (-own)
    return abs(stated - computed) <= tol * (1 + 1e-9) + 1e-12


# --- parameter count from an architecture ----------------------------------------------------------------

_Figure = TypeVar("_Figure", int, float)
# Each live architecture's remembered figures, by the object's id: an architecture (a frozen catalog entry) holds a
# dict, so it cannot be a key itself; an entry goes when its architecture does (weakref.finalize), before its id can
# be another's.
_PER_ARCHITECTURE: dict[int, dict[tuple[Any, ...], Any]] = {}


def _per_architecture(figure: Callable[..., _Figure]) -> Callable[..., _Figure]:
    """Remembers a figure of an architecture for the same other arguments. A catalog architecture is frozen and
    shared by all its model's recipes, and these figures walk every layer: check recounted them for each recipe
    (a tenth of a cold check). Only plain arguments (numbers, text, None) follow the architecture."""

    @functools.wraps(figure)
    def remembered(arch: Architecture, *args: Any, **kwargs: Any) -> _Figure:
        memo = _PER_ARCHITECTURE.get(id(arch))
        if memo is None:
            memo = _PER_ARCHITECTURE[id(arch)] = {}
            weakref.finalize(arch, _PER_ARCHITECTURE.pop, id(arch), None)
        key = (figure.__name__, args, tuple(sorted(kwargs.items())))
        if key not in memo:
            memo[key] = figure(arch, *args, **kwargs)
        return memo[key]

    return remembered



def layer_kinds(arch: Architecture) -> list[str]:
    pattern = arch.layer_pattern
    return [pattern[i % len(pattern)] for i in range(arch.layers)]


@_per_architecture
def param_count(arch: Architecture, include_norms: bool, total: bool = False) -> int:
    """Embeddings plus every linear weight (plus norm gains when include_norms).

    For a mixture of experts this is the parameters one token uses (N: routed top-k plus shared experts and
    the router) unless total, which counts every expert. Multi-token-prediction layers are not counted
    (DeepSeek-V3's 671B / 37B exclude them)."""
    if arch.hybrid_pattern is not None:
        return _hybrid_param_count(arch, include_norms, total)
    h = arch.hidden_size
    total_params = arch.vocab_size * h * (1 if arch.tied_embeddings else 2)
    gate = 3 if arch.gated_ffn else 2
    dense_ffn = gate * h * arch.ffn_hidden_size
    moe = arch.moe
    for index, kind_name in enumerate(layer_kinds(arch)):
        kind = arch.attention[kind_name]
        if arch.mla is not None:
            attn, norms = _mla_params(arch), 2 * h
        else:
            q = arch.attention_heads * kind.head_dim
            kv = kind.kv_heads * kind.head_dim
            attn = h * q + h * kv * (1 if kind.shared_kv else 2) + q * h
            norms = 2 * h + (2 * kind.head_dim if arch.qk_norm else 0)
            if arch.linear_bias:
                attn += q + kv * (1 if kind.shared_kv else 2) + h
        if arch.attention_sinks:
            attn += arch.attention_heads
        if moe is None or index < moe.dense_layers:
            ffn = dense_ffn
            if arch.linear_bias:
                ffn += arch.ffn_hidden_size * (2 if arch.gated_ffn else 1) + h
        else:
            experts = moe.experts if total else moe.top_k
            expert = gate * h * moe.ffn_hidden_size
            if arch.linear_bias:
                expert += moe.ffn_hidden_size * (2 if arch.gated_ffn else 1) + h
            ffn = experts * expert + gate * h * moe.shared_ffn_hidden_size
            ffn += h * moe.experts + (moe.experts if moe.router_bias else 0)
        total_params += attn + ffn + (norms if include_norms else 0)
    if include_norms:
        total_params += h
    return total_params


# --- hybrid models (Mamba-2 / attention / MLP / MoE blocks, Nemotron-H) --------------------------------------


def _hybrid_attention(arch: Architecture) -> AttentionKind:
    """The attention kind of a hybrid pattern's * blocks: the first of layer_pattern."""
    return arch.attention[arch.layer_pattern[0]]


def mamba2_params(hidden_size: int, mamba: Mamba, include_norms: bool) -> int:
    """Parameters of one Mamba-2 mixer: in_proj (h -> z, x, B, C and dt), the depthwise conv1d over x, B and C (and
    its bias), A, D and the dt bias (one each a head), out_proj, and with include_norms its gated RMSNorm's gain."""
    inner = mamba.heads * mamba.head_dim
    conv_channels = inner + 2 * mamba.groups * mamba.state_size
    in_proj = hidden_size * (2 * inner + 2 * mamba.groups * mamba.state_size + mamba.heads)
    conv = conv_channels * mamba.conv_kernel + (conv_channels if mamba.conv_bias else 0)
    return in_proj + conv + 3 * mamba.heads + inner * hidden_size + (inner if include_norms else 0)


def _moe_block_params(arch: Architecture, experts: int) -> int:
    """One MoE block's weights for `experts` routed experts: the experts (in the latent width under LatentMoE, with
    its down and up projections), the shared experts and the router (with its bias)."""
    moe = arch.moe
    assert moe is not None
    h, gate = arch.hidden_size, 3 if arch.gated_ffn else 2
    width = moe.latent_size or h
    params = experts * gate * width * moe.ffn_hidden_size + gate * h * moe.shared_ffn_hidden_size
    if moe.latent_size is not None:
        params += 2 * h * moe.latent_size
    return params + h * moe.experts + (moe.experts if moe.router_bias else 0)


def _hybrid_block_params(arch: Architecture, block: str, include_norms: bool, total: bool) -> int:
    h = arch.hidden_size
    norm = h if include_norms else 0  # each block's pre-norm
    if block == "M":
        assert arch.mamba is not None
        return mamba2_params(h, arch.mamba, include_norms) + norm
    if block == "*":
        kind = _hybrid_attention(arch)
        q, kv = arch.attention_heads * kind.head_dim, kind.kv_heads * kind.head_dim
        return h * q + 2 * h * kv + q * h + norm
    if block == "-":
        return (3 if arch.gated_ffn else 2) * h * arch.ffn_hidden_size + norm
    assert arch.moe is not None
    return _moe_block_params(arch, arch.moe.experts if total else arch.moe.top_k) + norm


def _hybrid_param_count(arch: Architecture, include_norms: bool, total: bool) -> int:
    """param_count of a hybrid: embeddings, every block of the pattern, the final norm; MTP layers not counted."""
    assert arch.hybrid_pattern is not None
    params = arch.vocab_size * arch.hidden_size * (1 if arch.tied_embeddings else 2)
    params += sum(_hybrid_block_params(arch, b, include_norms, total) for b in arch.hybrid_pattern)
    return params + (arch.hidden_size if include_norms else 0)


# What one Mamba-2 mixer computes for a token, forward pass, in FLOPs (2 a multiply-add). The SSD scan is counted
# as its recurrence: each of the inner x state elements is decayed, takes the input's outer product with B
# (3 FLOPs: two multiplies and an add) and is read out against C (a multiply-add, 2 FLOPs). Element-wise work of
# one channel (dt x x, the D skip, the SiLU gate, the gated norm) is not counted, as norms and activations are not
# anywhere in the model FLOPs; nor is the chunked SSD kernel's extra intra-chunk work (hardware FLOPs, not the
# model's).
MAMBA2_SCAN_FLOPS_PER_STATE = 5


# The terms of mamba2_forward_flops as the methodology page states them (h hidden, inner = heads x head_dim, G groups,
# N state size, K conv kernel); each is forward FLOPs per token, 2 a multiply-add.
MAMBA2_TERMS = (
    ("in_proj", "2 x h x (2 x inner + 2 x G x N + heads): z, x, B, C and one dt a head"),
    ("conv1d", "2 x K x (inner + 2 x G x N): the depthwise causal conv over x, B and C"),
    ("scan", f"{MAMBA2_SCAN_FLOPS_PER_STATE} x inner x N: each state element decayed and given x times B (3), "
             "read out against C (2)"),
    ("out_proj", "2 x inner x h"),
)


@dataclass(frozen=True)
class Mamba2Flops:
    """Forward FLOPs per token of one Mamba-2 mixer, by term."""

    in_proj: float  # 2 x h x (2 x inner + 2 x groups x state + heads): z, x, B, C and dt
    conv1d: float  # 2 x kernel x (inner + 2 x groups x state): the depthwise causal conv over x, B and C
    scan: float  # MAMBA2_SCAN_FLOPS_PER_STATE x inner x state: the state updates and the readout
    out_proj: float  # 2 x inner x h

    @property
    def forward(self) -> float:
        return self.in_proj + self.conv1d + self.scan + self.out_proj


def mamba2_forward_flops(hidden_size: int, mamba: Mamba) -> Mamba2Flops:
    """One Mamba-2 layer's forward FLOPs per token from its architecture (inner width = heads x head_dim)."""
    inner = mamba.heads * mamba.head_dim
    bc = 2 * mamba.groups * mamba.state_size
    return Mamba2Flops(in_proj=2.0 * hidden_size * (2 * inner + bc + mamba.heads),
                       conv1d=2.0 * mamba.conv_kernel * (inner + bc),
                       scan=float(MAMBA2_SCAN_FLOPS_PER_STATE * inner * mamba.state_size),
                       out_proj=2.0 * inner * hidden_size)


def mamba2_flops_per_token(hidden_size: int, mamba: Mamba) -> float:
    """Training FLOPs per token of one Mamba-2 layer: 3 x its forward FLOPs (the backward at twice the forward, the
    convention of every term of model_flops_per_token). The one Mamba count of the registry: any hybrid's MFU uses
    it."""
    return 3.0 * mamba2_forward_flops(hidden_size, mamba).forward


# Megatron-Bridge's hybrid count (src/megatron/bridge/training/utils/flop_utils.py, mamba_layer_flops, at commit
# 067f987d), the count its performance tables publish: the Mamba inner width taken as 2 x hidden (whatever the
# heads), the scan as 7 x inner x state FLOPs, no conv1d; and no MTP projection (its MTP blocks and logits counted).
MB_HYBRID_COUNT = "megatron-bridge"
MB_MAMBA_SCAN_FLOPS_PER_STATE = 7


def mb_mamba2_forward_flops(hidden_size: int, mamba: Mamba) -> float:
    """Megatron-Bridge's forward FLOPs per token of one Mamba layer (MB_HYBRID_COUNT): in_proj 2h(2 x 2h + 2GN +
    heads), scan 7 x 2h x N, out_proj 2 x 2h x h."""
    inner = 2 * hidden_size
    return (2.0 * hidden_size * (2 * inner + 2 * mamba.groups * mamba.state_size + mamba.heads)
            + MB_MAMBA_SCAN_FLOPS_PER_STATE * inner * mamba.state_size + 2.0 * inner * hidden_size)


def _hybrid_block_macs(arch: Architecture, block: str, seq_len: int, causal: bool, count: str | None = None) -> float:
    """Forward multiply-adds per token of one block of a hybrid pattern (a Mamba mixer's FLOPs halved); count
    MB_HYBRID_COUNT: Megatron-Bridge's Mamba term."""
    h = arch.hidden_size
    gate = 3 if arch.gated_ffn else 2
    if block == "M":
        assert arch.mamba is not None
        if count == MB_HYBRID_COUNT:
            return mb_mamba2_forward_flops(h, arch.mamba) / 2
        return mamba2_forward_flops(h, arch.mamba).forward / 2
    if block == "*":
        kind = _hybrid_attention(arch)
        q, kv = arch.attention_heads * kind.head_dim, kind.kv_heads * kind.head_dim
        keys = _attended_keys(seq_len, kind.window, causal)
        return h * q + 2 * h * kv + q * h + _core_attention_macs(arch, kind, keys)
    if block == "-":
        return gate * h * arch.ffn_hidden_size
    moe = arch.moe
    assert moe is not None
    routed = moe.top_k * gate * (moe.latent_size or h) * moe.ffn_hidden_size
    latent = 2 * h * moe.latent_size if moe.latent_size is not None else 0
    return routed + latent + gate * h * moe.shared_ffn_hidden_size


def _hybrid_flops_per_token(arch: Architecture, seq_len: int, mtp: int, causal: bool,
                            count: str | None = None) -> float:
    """model_flops_per_token of a hybrid: every block of the pattern (Mamba-2 by mamba2_forward_flops), the logits,
    and each multi-token-prediction depth (its 2h x h projection, the blocks of mtp_pattern, a second logits).
    count MB_HYBRID_COUNT: Megatron-Bridge's count (its Mamba term, no MTP projection)."""
    assert arch.hybrid_pattern is not None
    h = arch.hidden_size
    macs = sum(_hybrid_block_macs(arch, b, seq_len, causal, count) for b in arch.hybrid_pattern)
    mtp_blocks = arch.mtp_pattern or ""
    projection = 0 if count == MB_HYBRID_COUNT else 2 * h * h
    macs += mtp * (projection + sum(_hybrid_block_macs(arch, b, seq_len, causal, count) for b in mtp_blocks))
    macs += (1 + mtp) * h * arch.vocab_size
    return 6.0 * macs


def _mla_params(arch: Architecture) -> int:
    """Linear weights of one multi-latent attention layer, with its latent norms (DeepSeek-V3)."""
    h, heads, mla = arch.hidden_size, arch.attention_heads, arch.mla
    assert mla is not None
    qk = mla.qk_head_dim + mla.qk_rope_head_dim
    if mla.q_lora_rank is None:
        q = h * heads * qk
    else:
        q = h * mla.q_lora_rank + mla.q_lora_rank * heads * qk
    kv = h * (mla.kv_lora_rank + mla.qk_rope_head_dim) + mla.kv_lora_rank * heads * (mla.qk_head_dim + mla.v_head_dim)
    return q + kv + heads * mla.v_head_dim * h


# --- model FLOPs per token (Megatron's convention) -------------------------------------------------------


@_per_architecture
def model_flops_per_token(arch: Architecture, seq_len: int, mtp_layers: int | None = None,
                          sliding_windows: bool = True, gated_experts: bool | None = None,
                          head_dim: int | None = None, causal: bool = True,
                          hybrid_count: str | None = None) -> float:
    """Training FLOPs per token as Megatron counts them (megatron/training/training.py,
    num_floating_point_operations): 3 passes (forward, and backward at twice the forward) x 2 FLOPs per
    multiply-add over every matrix product: QKV and output projections (GQA: kv_heads), causal core
    attention at half the full s x s products, the (SwiGLU: three-matrix) FFN, for MoE the top-k routed
    plus the shared experts, the logits, and each multi-token-prediction layer (a full decoder layer, its
    2h x h projection and a second logits). Norms, softmax, the router and RoPE are not counted.

    mtp_layers overrides the model's (0: trained without MTP). A sliding-window layer's core attention
    counts each query against min(position, window) keys (sliding_windows=False counts it as global, as
    Megatron's formula does when it ignores the window). gated_experts=False counts the experts' FFN as two
    matrices (null: as the model's gated_ffn says). head_dim replaces every (non-MLA) attention kind's head
    dimension in the projections and the core attention (a count that takes it as hidden size / heads).
    causal=False counts every query against every key (the full s x s products, as NeMo's 24.07 tables do).
    A hybrid (hybrid_pattern) counts its blocks instead: _hybrid_flops_per_token (hybrid_count MB_HYBRID_COUNT:
    Megatron-Bridge's count of them)."""
    h = arch.hidden_size
    mtp = (arch.mtp_layers or 0) if mtp_layers is None else mtp_layers
    if arch.hybrid_pattern is not None:
        return _hybrid_flops_per_token(arch, seq_len, mtp, causal, hybrid_count)
    gate = 3 if arch.gated_ffn else 2
    moe = arch.moe
    macs = 0.0  # multiply-adds per token of the forward pass
    kinds = layer_kinds(arch)
    # MTP layers are full decoder layers (MoE where the model is), after the last one.
    for index in range(arch.layers + mtp):
        kind = arch.attention[kinds[index % len(kinds)] if index < arch.layers else kinds[-1]]
        keys = _attended_keys(seq_len, kind.window if sliding_windows else None, causal)
        if arch.mla is not None:
            macs += _mla_params(arch)
        else:
            dim = kind.head_dim if head_dim is None else head_dim
            q = arch.attention_heads * dim
            kv = kind.kv_heads * dim
            macs += h * q + h * kv * (1 if kind.shared_kv else 2) + q * h
        macs += _core_attention_macs(arch, kind, keys, head_dim)
        if moe is None or index < moe.dense_layers:
            macs += gate * h * arch.ffn_hidden_size
        else:
            expert_gate = gate if gated_experts is None else (3 if gated_experts else 2)
            macs += h * (expert_gate * moe.top_k * moe.ffn_hidden_size + gate * moe.shared_ffn_hidden_size)
    macs += mtp * 2 * h * h  # each MTP layer's projection of [embedding; hidden] back to h
    macs += (1 + mtp) * h * arch.vocab_size  # logits, once more per MTP layer
    return 6.0 * macs


def _core_attention_macs(arch: Architecture, kind: AttentionKind, keys: float, head_dim: int | None = None) -> float:
    """Multiply-adds per token of one layer's core attention (QK^T and attention x V) against `keys` keys."""
    if arch.mla is not None:
        mla = arch.mla
        return keys * arch.attention_heads * (mla.qk_head_dim + mla.qk_rope_head_dim + mla.v_head_dim)
    dim = kind.head_dim if head_dim is None else head_dim
    return 2 * arch.attention_heads * dim * keys


def causal_attention_flops_per_token(arch: Architecture, seq_len: int, mtp_layers: int | None = None) -> float:
    """The core-attention term of Megatron's count (model_flops_per_token), alone: 3 passes x 2 FLOPs x QK^T and
    attention x V of every layer (and MTP layer), each query against the keys a causal mask leaves it (s / 2 for
    global attention; a sliding window's min(position, window)). What 6N leaves out."""
    mtp = (arch.mtp_layers or 0) if mtp_layers is None else mtp_layers
    if arch.hybrid_pattern is not None:
        kind = _hybrid_attention(arch)
        blocks = arch.hybrid_pattern.count("*") + mtp * (arch.mtp_pattern or "").count("*")
        return 6.0 * blocks * _core_attention_macs(arch, kind, _attended_keys(seq_len, kind.window))
    kinds = layer_kinds(arch)
    macs = 0.0
    for index in range(arch.layers + mtp):
        kind = arch.attention[kinds[index % len(kinds)] if index < arch.layers else kinds[-1]]
        macs += _core_attention_macs(arch, kind, _attended_keys(seq_len, kind.window))
    return 6.0 * macs


def _attended_keys(seq_len: int, window: int | None, causal: bool = True) -> float:
    """Keys a query attends to on average under a causal mask, Megatron's way: s / 2 for global attention;
    with a sliding window w < s, the mean of min(i + 1, w) over positions i. Not causal: s (or the window)."""
    if not causal:
        return float(seq_len if window is None else min(window, seq_len))
    if window is None or window >= seq_len:
        return seq_len / 2
    return (window * (window + 1) / 2 + (seq_len - window) * window) / seq_len


# LoRA on a frozen base: of the three passes (forward, activation gradients, weight gradients) the base needs no
# weight gradients, so a count that leaves them out is 2/3 of the full one.
FROZEN_BASE_FRACTION = 2 / 3


def model_tflops_per_gpu(arch: Architecture, seq_len: int, tokens_per_s_per_gpu: float,
                         mtp_layers: int | None = None, sliding_windows: bool = True,
                         gated_experts: bool | None = None, frozen_base: bool = False,
                         head_dim: int | None = None, causal: bool = True,
                         hybrid_count: str | None = None) -> float:
    """Model TFLOP/s per GPU = model FLOPs per token x tokens/s per GPU / 1e12 (x FROZEN_BASE_FRACTION when the
    count leaves out a frozen base's weight gradients)."""
    flops = model_flops_per_token(arch, seq_len, mtp_layers, sliding_windows, gated_experts, head_dim, causal,
                                  hybrid_count)
    return flops * tokens_per_s_per_gpu / 1e12 * (FROZEN_BASE_FRACTION if frozen_base else 1.0)


def nanotron_model_flops_per_token(arch: Architecture, seq_len: int, vocab_matrices: int = 1) -> float:
    """Training FLOPs per token as nanotron's get_flops counts them (src/nanotron/models/llama.py) for a dense
    model: 3 passes x 2 FLOPs per multiply-add over the QKV and output projections, the core attention over the
    full s x s scores (no causal halving, unlike Megatron's count), the gated FFN and the logits; the logits
    counted `vocab_matrices` times (the Ultra-Scale Playbook's MFU counts them once per vocabulary matrix a run
    holds: generator/importers/playbook.py)."""
    h = arch.hidden_size
    gate = 3 if arch.gated_ffn else 2
    macs = 0.0
    for kind_name in layer_kinds(arch):
        kind = arch.attention[kind_name]
        q = arch.attention_heads * kind.head_dim
        kv = kind.kv_heads * kind.head_dim
        macs += h * q + 2 * h * kv + q * h + 2 * q * seq_len + gate * h * arch.ffn_hidden_size
    macs += vocab_matrices * h * arch.vocab_size
    return 6.0 * macs


def flops_utilisation(flops_per_token: float, tokens_per_s: float, peak_flops: float) -> float:
    """FLOPs per token x tokens/s per GPU over the GPU's peak: an MFU under any FLOP count."""
    return flops_per_token * tokens_per_s / peak_flops


def relative_difference(reference: float, value: float) -> float:
    """|value - reference| / |reference|: how far a recomputed figure lies from the stated one, or a candidate loss
    from the reference loss. Against a reference of 0, |value| (as Megatron-Bridge's validate_convergence does)."""
    return abs(value - reference) / abs(reference) if reference else abs(value)


# A training log's stated parameter count (Megatron's "Total number of parameters in billions: 1.49", torchtitan's
# "size: 3,606,752,256 total parameters") against the recipe's model card: beyond this relative difference it is
# another model. Within it: norms counted or not, an MTP head (DeepSeek-V3: 1.7%), Megatron's padded vocabulary and
# its rounding to 0.01 B (4% of a 125M model).
STATED_PARAMS_TOLERANCE = 0.05


def stated_params_agree(stated: int, card: ModelCard) -> bool:
    """Whether a parameter count a log states can be the card's model: within STATED_PARAMS_TOLERANCE of its total
    (N for a dense model), or, for tied embeddings, of that total with the output layer counted apart (vocab x
    hidden: torchtitan's Llama unties it, 3,212,749,824 + 128,256 x 3,072 = 3,606,752,256 for Llama-3.2-3B)."""
    total = card.total_params or card.active_params.count
    counts = [total]
    arch = card.architecture
    if arch is not None and arch.tied_embeddings:
        counts.append(total + arch.vocab_size * arch.hidden_size)
    return any(relative_difference(count, stated) <= STATED_PARAMS_TOLERANCE for count in counts)


def six_n_flops_per_token(arch: Architecture, seq_len: int, params: int) -> float:
    """llm-foundry's training FLOPs per token (scripts/train/benchmarking/collect_results.py): 3 passes x 2 FLOPs
    per parameter (every parameter of the run's n_params, embeddings, learned positions, norms and biases included)
    plus attention 3 x n_layers x 2 x 2 x d_model x seq_len per token: QK^T and attention x V with every query against
    every key (no causal halving)."""
    return 6.0 * params + 12.0 * arch.layers * arch.hidden_size * seq_len


def six_n_model_tflops_per_gpu(arch: Architecture, seq_len: int, tokens_per_s_per_gpu: float, params: int) -> float:
    """Model TFLOP/s per GPU under llm-foundry's count."""
    return six_n_flops_per_token(arch, seq_len, params) * tokens_per_s_per_gpu / 1e12


def six_n_utilisation(arch: Architecture, seq_len: int, tokens_per_s_per_gpu: float, params: int,
                      peak_flops: float) -> float:
    """llm-foundry's MFU: its FLOPs per token x tokens/s per GPU over the peak Composer states (0-1)."""
    return six_n_flops_per_token(arch, seq_len, params) * tokens_per_s_per_gpu / peak_flops


# llm-foundry's HFU counts one more forward pass where activation checkpointing recomputes it: 4 passes, not 3.
SIX_N_HFU_FACTOR = 4.0 / 3.0


def torchtitan_flops_per_token(arch: Architecture, seq_len: int) -> float:
    """torchtitan's training FLOPs per token (torchtitan/utils.py get_num_flop_per_token, as of commit 9dec370):
    6 x the parameters without the input embedding (output layer and norm gains included) plus
    12 x layers x heads x head dim x sequence (attention without causal halving)."""
    params = param_count(arch, include_norms=True) - arch.vocab_size * arch.hidden_size
    kind = arch.attention[arch.layer_pattern[0]]
    return 6.0 * params + 12.0 * arch.layers * arch.attention_heads * kind.head_dim * seq_len


def truncated_range(value: int) -> tuple[float, float]:
    """The values a figure printed as int(x) (truncated, x >= 0) can come from: [value, value + 1)."""
    return float(value), float(value) + 1.0


def truncated_relative_difference(published: int, computed: float) -> float:
    """How far computed lies outside [published, published + 1), relative to published: 0 when int(computed) could
    print as the published figure (a publication that truncates, as llm-foundry's int() does)."""
    low, high = truncated_range(published)
    if low <= computed < high:
        return 0.0
    return (low - computed if computed < low else computed - high) / published


def rounded_percent_agrees(published_percent: float, low: float, high: float, places: int = 2) -> bool:
    """Whether a percentage published as round(x * 100, places) can come from a fraction x in [low, high]."""
    half = 0.5 * 10 ** (-places)
    return low * 100 - half - 1e-9 <= published_percent <= high * 100 + half + 1e-9


# --- figures of a recipe ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Derived:
    """Figures recomputed from a recipe and the catalog (None where an input is missing)."""

    usd_per_million_tokens: float | None
    mfu: float | None
    window_tokens: int | None
    peak_flops: float | None
    peak_precision: str | None
    instance_usd_per_hour: float | None


PRECISION_PEAK = {"bf16": "bf16", "fp16": "bf16", "fp32": "bf16", "fp8": "fp8", "fp8-cs": "fp8", "fp8-rw": "fp8", "fp8-mx": "fp8",
                  "fp8-ds": "fp8", "nvfp4": "fp4"}


def peak_for(recipe: Recipe, catalog: Catalog) -> tuple[float | None, str | None]:
    """Peak FLOP/s for the recipe's GPU: the precision's peak for reported rows, BF16 otherwise."""
    gpu = catalog.gpus.get(recipe.gpu.type)
    if gpu is None:
        return None, None
    key = PRECISION_PEAK[recipe.workload.precision.value] if recipe.status.value == "reported" else "bf16"
    value = getattr(gpu.peak_flops, key)
    return value, key


def ceiling_share(recipe: Recipe, catalog: Catalog) -> tuple[float, float, str] | None:
    """(share, ceiling FLOP/s, precision key): the recipe's model FLOPs per second per GPU (6N, 4N on a frozen base,
    x tokens/s per GPU) over the card's measured matrix-product ceiling at its precision, or None where the card has
    no measured ceiling at it."""
    gpu = catalog.gpus.get(recipe.gpu.type)
    key = PRECISION_PEAK.get(recipe.workload.precision.value)
    ceiling = getattr(gpu.measured_ceiling, key, None) if gpu is not None and gpu.measured_ceiling and key else None
    if not ceiling:
        return None
    n = recipe.result.active_params.count * (FROZEN_BASE_FRACTION if frozen_base(recipe) else 1.0)
    return 6.0 * n * recipe.result.tokens_per_s_per_gpu / ceiling, ceiling, key


def frozen_base(recipe: Recipe) -> bool:
    """Whether the run trains adapters on a frozen base (its MFU counts 4N, not 6N)."""
    training = recipe.workload.training
    return training is not None and training.value == "lora"


def derive(recipe: Recipe, catalog: Catalog) -> Derived:
    result = recipe.result
    tps = result.tokens_per_s_per_gpu
    instance = catalog.instances.get(recipe.gpu.instance) if recipe.gpu.instance else None
    usd = usd_per_million_tokens(instance.usd_per_hour, instance.gpu_count, tps) if instance else None
    peak, precision = peak_for(recipe, catalog)
    value = mfu(result.active_params.count, tps, peak, frozen_base(recipe)) if peak else None
    wt = (
        window_tokens(result.window, recipe.workload.global_batch, recipe.workload.row_tokens)
        if result.window is not None
        else None
    )
    return Derived(usd, value, wt, peak, precision, instance.usd_per_hour if instance else None)


# --- MFU that compares: beside the registry's 6N MFU ---------------------------------------------------------


@dataclass(frozen=True)
class ComparableMfu:
    """A recipe's MFU under the conventions that make rows comparable, beside `mfu` (6N over the peak of the
    recipe's precision for reported rows). None where an input is missing (no GPU peak, no architecture).

    - six_n_bf16: 6N over the GPU's dense BF16 peak, whatever the precision (an FP8 or FP4 row's `mfu` is over a
      peak 2-4x higher, so it does not compare with a BF16 row's).
    - megatron / megatron_bf16: Megatron's count (model_flops_per_token: every matrix product, the causal attention
      term included, the input embedding lookup not counted) over the same peak as `mfu` / over the BF16 peak. A
      LoRA row counts FROZEN_BASE_FRACTION of it, as its 6N MFU counts 4N.
    - attention_share: the causal attention term over 6N, what 6N leaves out (0.25: the term adds a quarter)."""

    six_n_bf16: float | None
    megatron: float | None
    megatron_bf16: float | None
    attention_share: float | None


def comparable_mfu(recipe: Recipe, catalog: Catalog) -> ComparableMfu:
    gpu = catalog.gpus.get(recipe.gpu.type)
    bf16 = gpu.peak_flops.bf16 if gpu is not None else None
    peak, _ = peak_for(recipe, catalog)
    n, tps = recipe.result.active_params.count, recipe.result.tokens_per_s_per_gpu
    frozen = frozen_base(recipe)
    six_n_bf16 = mfu(n, tps, bf16, frozen) if bf16 else None
    card = catalog.models.get(recipe.model)
    arch = card.architecture if card is not None else None
    if arch is None:
        return ComparableMfu(six_n_bf16, None, None, None)
    seq, mtp = recipe.workload.row_tokens, recipe.layout.mtp_layers
    count = model_flops_per_token(arch, seq, mtp_layers=mtp) * (FROZEN_BASE_FRACTION if frozen else 1.0)
    share = causal_attention_flops_per_token(arch, seq, mtp_layers=mtp) / (6.0 * n)
    return ComparableMfu(six_n_bf16, flops_utilisation(count, tps, peak) if peak else None,
                         flops_utilisation(count, tps, bf16) if bf16 else None, share)


# --- a publication's own MFU beside the registry's ------------------------------------------------------------


@dataclass(frozen=True)
class PublishedBeside:
    """A publication's stated Model TFLOP/s per GPU beside the registry's MFU, each with its FLOP count per token, so
    that a reader who compares with the source sees why the two differ (the count, not the run):

    - published_flops_per_token: the publication's count, as its own figures imply it: its TFLOP/s per GPU over its
      tokens/s per GPU (617.8e12 / 10,682.4 = 5.78e10 for DGX Cloud's Llama-3.1-8B on 8 H100).
    - published_mfu: its TFLOP/s over the same peak as the registry's `mfu` (the precision's, for reported rows);
      None without a peak.
    - ours_flops_per_token: 6N (4N on a frozen base), the count `mfu` uses; ours_mfu: `mfu` recomputed."""

    published_tflops_per_gpu: float
    published_flops_per_token: float
    published_mfu: float | None
    ours_flops_per_token: float
    ours_mfu: float | None
    peak_flops: float | None
    peak_precision: str | None


def published_beside(recipe: Recipe, catalog: Catalog) -> PublishedBeside | None:
    """None where the publication states no Model TFLOP/s per GPU."""
    result = recipe.result
    published = result.published_model_tflops_per_gpu
    if published is None:
        return None
    tps = result.tokens_per_s_per_gpu
    peak, precision = peak_for(recipe, catalog)
    frozen = frozen_base(recipe)
    ours_count = 6.0 * result.active_params.count * (FROZEN_BASE_FRACTION if frozen else 1.0)
    return PublishedBeside(
        published, published * 1e12 / tps, published * 1e12 / peak if peak else None, ours_count,
        mfu(result.active_params.count, tps, peak, frozen) if peak else None, peak, precision)
