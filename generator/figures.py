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

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from generator.catalog import Architecture, Catalog
    from generator.models import Recipe

SECONDS_PER_HOUR = 3600.0


def window_steps(window: Sequence[int]) -> int:
    first, last = window
    if last < first:
        raise ValueError(f"window [{first}, {last}] ends before it starts")
    return last - first + 1


def window_tokens(window: Sequence[int], global_batch: int, row_tokens: int) -> int:
    return window_steps(window) * global_batch * row_tokens


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


def mfu(active_params: int, tokens_per_s: float, peak_flops: float) -> float:
    return 6.0 * active_params * tokens_per_s / peak_flops


def cv_percent(values: Sequence[float]) -> float:
    if len(values) < 2:
        return 0.0
    mean = statistics.fmean(values)
    return statistics.stdev(values) / mean * 100.0


def step_time_cv_percent(step_times_s: Sequence[float], window: Sequence[int] | None = None) -> float:
    times = step_times_s if window is None else step_times_s[window[0] : window[1] + 1]
    return cv_percent(times)


def median_index(values: Sequence[float]) -> int:
    """Index of the median run (the lower median for an even count), MLPerf-style."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    return order[(len(order) - 1) // 2]


def gpu_hours(gpu_count: int, seconds: float) -> float:
    return gpu_count * seconds / SECONDS_PER_HOUR


def decimals(value: float) -> int:
    """Decimal places of a stated figure, as written (shortest repr)."""
    text = repr(float(value))
    if "e" in text:
        mantissa, exp = text.split("e")
        frac = len(mantissa.split(".")[1].rstrip("0")) if "." in mantissa else 0
        return max(0, frac - int(exp))
    frac = text.split(".")[1].rstrip("0")
    return len(frac)


def agrees(stated: float, computed: float) -> bool:
    """Whether computed rounds to stated at the stated precision (with float slack)."""
    tol = 0.5 * 10 ** (-decimals(stated))
    return abs(stated - computed) <= tol * (1 + 1e-9) + 1e-12


# --- parameter count from an architecture ----------------------------------------------------------------


def layer_kinds(arch: Architecture) -> list[str]:
    pattern = arch.layer_pattern
    return [pattern[i % len(pattern)] for i in range(arch.layers)]


def param_count(arch: Architecture, include_norms: bool) -> int:
    """Embeddings plus every linear weight (plus norm gains when include_norms)."""
    h = arch.hidden_size
    total = arch.vocab_size * h * (1 if arch.tied_embeddings else 2)
    ffn = (3 if arch.gated_ffn else 2) * h * arch.ffn_hidden_size
    for kind_name in layer_kinds(arch):
        kind = arch.attention[kind_name]
        q = arch.attention_heads * kind.head_dim
        kv = kind.kv_heads * kind.head_dim
        attn = h * q + h * kv * (1 if kind.shared_kv else 2) + q * h
        norms = 2 * h + (2 * kind.head_dim if arch.qk_norm else 0)
        total += attn + ffn + (norms if include_norms else 0)
        if arch.linear_bias:
            total += q + kv * (1 if kind.shared_kv else 2) + h + (arch.ffn_hidden_size * (2 if arch.gated_ffn else 1)) + h
    if include_norms:
        total += h
    return total


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


PRECISION_PEAK = {"bf16": "bf16", "fp16": "bf16", "fp32": "bf16", "fp8-cs": "fp8", "fp8-mx": "fp8",
                  "fp8-ds": "fp8", "nvfp4": "fp4"}


def peak_for(recipe: Recipe, catalog: Catalog) -> tuple[float | None, str | None]:
    """Peak FLOP/s for the recipe's GPU: the precision's peak for reported rows, BF16 otherwise."""
    gpu = catalog.gpus.get(recipe.gpu.type)
    if gpu is None:
        return None, None
    key = PRECISION_PEAK[recipe.workload.precision.value] if recipe.status.value == "reported" else "bf16"
    value = getattr(gpu.peak_flops, key)
    return value, key


def derive(recipe: Recipe, catalog: Catalog) -> Derived:
    result = recipe.result
    tps = result.tokens_per_s_per_gpu
    instance = catalog.instances.get(recipe.gpu.instance) if recipe.gpu.instance else None
    usd = usd_per_million_tokens(instance.usd_per_hour, instance.gpu_count, tps) if instance else None
    peak, precision = peak_for(recipe, catalog)
    value = mfu(result.active_params.count, tps, peak) if peak else None
    wt = (
        window_tokens(result.window, recipe.workload.global_batch, recipe.workload.row_tokens)
        if result.window is not None
        else None
    )
    return Derived(usd, value, wt, peak, precision, instance.usd_per_hour if instance else None)
