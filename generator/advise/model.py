"""The advisor's two fitted models: peak memory per GPU and step time (tokens/s per GPU), each a weighted sum of the
formula terms of generator/advise/memory.py and generator/advise/throughput.py, the weights fitted on the registry's
rows with scipy (least_squares, nnls). A fit is data (numbers and the rows it saw), never code.

Memory: stated peak (GB of 2**30 bytes) = c0 + c1 x states + c2 x activations + c3 x working + c4 x logits, least
squares on the log of predicted / stated with a soft-L1 loss (a few rows far off do not pull the rest), every
c >= 0. c0 = 0 and the other c's 1 would be the formulas exactly; what the fit finds says how far each formula is
from what the frameworks allocate. A layout fits when its predicted peak (the larger of the first and last pipeline stage) is at
most a fraction of the card's memory, the fraction chosen on the rows of the publications that state both worked
and failed layouts (the Ultra-Scale Playbook's) as the one that classifies most of them right.

Step time: the measured step time (the step's tokens / (tokens/s per GPU x GPUs)) = sum of weights x terms, one
compute weight per precision family and framework family (an efficiency: never below the precision's own peak,
COMPUTE_FLOOR), one weight per framework family for the other terms of throughput.FAMILY_TERMS (costs one
framework pays and another does not), every other weight shared; all non-negative; non-negative least squares
(scipy's nnls, on the weights less their floors) on the relative error, iteratively reweighted (Huber-like, in
units of the median absolute deviation) so that a run that was slow for reasons no layout explains does not set the
weights. Fitted once over every GPU type (the pooled fit), then on each GPU type's own rows with a ridge pull towards
the pooled weights (PRIOR_ROWS rows' worth), so a type with few rows borrows the rest and a type with many is its own.

Ranges: the 10th and 90th percentile of stated / predicted over the rows the fit saw (for throughput, the GPU type's
rows of the framework family where there are at least RANGE_MIN_ROWS, else the GPU type's, else every row).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from generator.advise import throughput
from generator.advise.memory import GIB, Breakdown, Plan, Shape, breakdowns
from generator.advise.observations import FAILED, FAMILIES, FIRST_STAGE, WORKED, Observation, framework_family
from generator.catalog import Catalog

MEMORY_TERMS = ("buffers", "states", "activations", "working", "logits")
RANGE_QUANTILES = (10, 90)
THRESHOLD_GRID = tuple(round(0.70 + 0.01 * i, 2) for i in range(41))  # 0.70 ... 1.10 of the card's memory
PRIOR_ROWS = 10.0
RANGE_MIN_ROWS = 20
IRLS_ITERATIONS = 12
HUBER_K = 0.5  # residuals beyond HUBER_K x the scaled median absolute deviation are down-weighted (0.5 chosen among
#                0.5, 1, 2 and 4 on the leave-one-model-out validation: a choice made once, not fitted per fold)
MIN_GPU_ROWS = 3  # a GPU type with fewer dense steady-state rows gets a refusal, not a prediction

# --- memory -------------------------------------------------------------------------------------------------------


def _memory_features(b: Breakdown) -> list[float]:
    return [1.0, b.states / GIB, b.activations / GIB, b.working / GIB, b.logits / GIB]


def comparable_breakdown(row: Observation) -> Breakdown:
    """The stage a row's stated memory is of: the first (nanotron logs rank 0) or the larger of the two ends."""
    stages = breakdowns(row.shape, row.plan)
    if row.memory_scope == FIRST_STAGE:
        return stages[0]
    return max(stages, key=lambda b: b.total)


@dataclass(frozen=True)
class MemoryPrediction:
    peak_gb: float  # the larger of the first and last stage
    low_gb: float
    high_gb: float
    stages: tuple[tuple[int, float], ...]  # (stage, predicted GB)
    terms_gb: dict[str, float]  # of the peaking stage: buffers, weights, grads, optimizer, activations, working, logits


@dataclass
class MemoryModel:
    coef: np.ndarray
    threshold: float  # fits: predicted peak <= threshold x the card's memory
    low: float  # stated / predicted, RANGE_QUANTILES
    high: float
    rows: int  # rows stating peak memory the fit saw
    classified: int  # worked + failed rows the threshold was chosen on
    sources: tuple[str, ...] = ()  # the frameworks of the rows it saw

    def gb(self, b: Breakdown) -> float:
        return float(np.dot(self.coef, _memory_features(b)))

    def for_row(self, row: Observation) -> float:
        return self.gb(comparable_breakdown(row))

    def predict(self, shape: Shape, plan: Plan) -> MemoryPrediction:
        stages = breakdowns(shape, plan)
        values = [(b.stage, self.gb(b)) for b in stages]
        top = max(range(len(stages)), key=lambda i: values[i][1])
        b, peak = stages[top], values[top][1]
        c = self.coef
        terms = {"buffers": float(c[0]), "weights": c[1] * b.weights / GIB, "grads": c[1] * b.grads / GIB,
                 "optimizer": c[1] * b.optimizer / GIB, "activations": c[2] * b.activations / GIB,
                 "working": c[3] * b.working / GIB, "logits": c[4] * b.logits / GIB}
        return MemoryPrediction(peak, peak * self.low, peak * self.high, tuple(values),
                                {k: float(v) for k, v in terms.items()})

    def fits(self, peak_gb: float, card_gb: float) -> bool:
        return peak_gb <= self.threshold * card_gb


def _robust_log_fit(features: np.ndarray, stated: np.ndarray) -> np.ndarray:
    # scipy where a fit runs, not at import: half a second of every process that imports the site's pages or the
    # advisor's report (a CLI refusal, `--help`) without fitting.
    from scipy.optimize import least_squares

    x0 = np.ones(features.shape[1])
    result = least_squares(lambda c: np.log(np.maximum(features @ c, 1e-9) / stated), x0, bounds=(0.0, np.inf),
                           loss="soft_l1", f_scale=0.1)
    return result.x


def fit_memory(rows: Iterable[Observation]) -> MemoryModel:
    rows = list(rows)
    stated = [r for r in rows if r.memory_gb is not None and r.outcome == WORKED]
    if not stated:
        raise ValueError("no row states its peak memory")
    features = np.array([_memory_features(comparable_breakdown(r)) for r in stated])
    values = np.array([r.memory_gb for r in stated])
    coef = _robust_log_fit(features, values)
    ratios = values / (features @ coef)
    low, high = np.percentile(ratios, RANGE_QUANTILES)
    model = MemoryModel(coef, 1.0, float(low), float(high), len(stated), 0,
                        tuple(sorted(Counter(r.framework for r in stated))))
    # The fit threshold: on the rows of every publication that states failed layouts.
    with_failures = {r.source for r in rows if r.outcome == FAILED}
    classified = [r for r in rows if r.source in with_failures]
    if classified:
        peaks = np.array([model.predict(r.shape, r.plan).peak_gb / r.gpu_memory_gb for r in classified])
        worked = np.array([r.outcome == WORKED for r in classified])
        scores = [(float(np.mean((peaks <= t) == worked)), -abs(t - 1.0), t) for t in THRESHOLD_GRID]
        model.threshold = max(scores)[2]
        model.classified = len(classified)
    return model


# --- step time ----------------------------------------------------------------------------------------------------


def _columns() -> list[str]:
    out = []
    for term in throughput.TERMS:
        if term in throughput.FAMILY_TERMS:
            out.extend(f"{term}:{family}" for family in FAMILIES)
        else:
            out.append(term)
    return out


COLUMNS = _columns()
_INDEX = {name: i for i, name in enumerate(COLUMNS)}


def step_features(shape: Shape, plan: Plan, peak_bf16: float, per_node: int, family: str,
                  domain: int | None = None) -> np.ndarray:
    vector = np.zeros(len(COLUMNS))
    for term, value in throughput.terms(shape, plan, peak_bf16, per_node, domain).items():
        if not value:
            continue
        vector[_INDEX[f"{term}:{family}" if term in throughput.FAMILY_TERMS else term]] = value
    return vector


# A compute weight is seconds per (FLOPs / BF16 peak): never below the time at the precision's own dense peak (no
# run beats its peak). FP8's peak is 2x BF16's on every GPU of the catalog; FP4's 4x (B200, GB200) to 6x (B300).
COMPUTE_FLOOR = {"bf16": 1.0, "fp8": 0.5, "fp4": 1 / 6}


def _lower_bounds() -> np.ndarray:
    bounds = np.zeros(len(COLUMNS))
    for i, name in enumerate(COLUMNS):
        if name.startswith("compute_"):
            bounds[i] = COMPUTE_FLOOR[name.split(":")[0][len("compute_"):]]
    return bounds


def _irls_nnls(features: np.ndarray, seconds: np.ndarray, prior: np.ndarray | None = None,
               prior_rows: float | None = None) -> np.ndarray:
    """Weights (each at least its floor: 0, or a compute weight's COMPUTE_FLOOR) minimising the (reweighted)
    relative error of features @ w against seconds, with an optional ridge pull towards `prior` (each weight's pull
    scaled by the prior weight itself); scipy's nnls on the weights less their floors."""
    from scipy.optimize import nnls  # where a fit runs (_robust_log_fit says why)

    prior_rows = PRIOR_ROWS if prior_rows is None else prior_rows
    lower = _lower_bounds()
    relative = features / seconds[:, None]
    weights = np.ones(len(seconds))
    coef = lower.copy()
    for _ in range(IRLS_ITERATIONS):
        a, b = relative * weights[:, None], weights.copy()
        if prior is not None:
            scale = np.maximum(np.abs(prior), 1e-6)
            pull = np.sqrt(prior_rows) * np.diag(1.0 / scale)
            a = np.vstack([a, pull])
            b = np.concatenate([b, np.sqrt(prior_rows) * prior / scale])
        # w = floor + u with u >= 0: non-negative least squares on the shifted problem
        shift, _ = nnls(a, b - a @ lower, maxiter=50 * features.shape[1])
        coef = lower + shift
        residual = relative @ coef - 1.0
        mad = 1.4826 * float(np.median(np.abs(residual))) + 1e-9
        k = HUBER_K * mad
        weights = np.where(np.abs(residual) <= k, 1.0, np.sqrt(k / np.maximum(np.abs(residual), 1e-12)))
    return coef


@dataclass
class ThroughputModel:
    pooled: np.ndarray
    by_gpu: dict[str, np.ndarray]
    spread: dict[str, tuple[float, float]]  # GPU type (or "*") -> stated / predicted quantiles
    rows_by_gpu: dict[str, int]
    families_by_gpu: dict[str, dict[str, int]] = field(default_factory=dict)
    compute_rows: dict[str, int] = field(default_factory=dict)  # compute column -> rows the fit saw in it

    def family_for(self, precision: str, family: str) -> str | None:
        """`family` where the fit saw rows of its compute column at this precision, else the family with most rows
        at this precision (None: no row at this precision at all: nothing to calibrate its efficiency on)."""
        prefix = "compute_" + throughput.PRECISION_FAMILY.get(precision, "bf16") + ":"
        if self.compute_rows.get(prefix + family, 0):
            return family
        seen = [(n, column[len(prefix):]) for column, n in self.compute_rows.items() if column.startswith(prefix) and n]
        return max(seen)[1] if seen else None

    def seconds(self, features: np.ndarray, gpu: str) -> float:
        coef = self.by_gpu.get(gpu, self.pooled)
        return float(features @ coef)

    def range(self, gpu: str, family: str) -> tuple[float, float]:
        """Measured / predicted step time, 10th and 90th percentile: of the GPU type's rows of the framework family
        where there are RANGE_MIN_ROWS of them, else of the GPU type's, else of every row."""
        return self.spread.get(f"{gpu}:{family}", self.spread.get(gpu, self.spread["*"]))

    def predict(self, shape: Shape, plan: Plan, gpu: str, peak_bf16: float, per_node: int,
                family: str) -> tuple[float, float, float]:
        """tokens/s per GPU: predicted, low, high (the low end from the slow end of the step-time range)."""
        domain = throughput.nvlink_domain(gpu, per_node)
        seconds = self.seconds(step_features(shape, plan, peak_bf16, per_node, family, domain), gpu)
        tps = throughput.tokens_per_s_per_gpu(shape, plan, seconds)
        low_ratio, high_ratio = self.range(gpu, family)  # stated seconds / predicted seconds
        return tps, tps / high_ratio, tps / low_ratio


def measured_seconds(row: Observation) -> float:
    assert row.tokens_per_s_per_gpu is not None
    return throughput.step_seconds_measured(row.shape, row.plan, row.tokens_per_s_per_gpu)


def throughput_rows(rows: Iterable[Observation]) -> list[Observation]:
    """The rows the step-time model is fitted on and judged against: worked, steady-state, with tokens/s."""
    return [r for r in rows if r.outcome == WORKED and r.steady and r.tokens_per_s_per_gpu]


def row_features(row: Observation, catalog: Catalog) -> np.ndarray:
    return step_features(row.shape, row.plan, catalog.gpus[row.gpu].peak_flops.bf16, row.per_node,
                         framework_family(row.framework), throughput.nvlink_domain(row.gpu, row.per_node))


def fit_throughput(rows: Sequence[Observation], catalog: Catalog,
                   features: dict[str, np.ndarray] | None = None) -> ThroughputModel:
    rows = throughput_rows(rows)
    if not rows:
        raise ValueError("no steady-state row states tokens/s")
    matrix = np.array([features[r.id] if features is not None else row_features(r, catalog) for r in rows])
    seconds = np.array([measured_seconds(r) for r in rows])
    pooled = _irls_nnls(matrix, seconds)
    gpus = np.array([r.gpu for r in rows], dtype=object)
    families = np.array([framework_family(r.framework) for r in rows], dtype=object)
    by_gpu: dict[str, np.ndarray] = {}
    ratio = np.zeros(len(rows))
    for gpu in sorted(set(gpus)):
        mask = gpus == gpu
        coef = _irls_nnls(matrix[mask], seconds[mask], prior=pooled)
        by_gpu[gpu] = coef
        ratio[mask] = seconds[mask] / np.maximum(matrix[mask] @ coef, 1e-12)
    spread: dict[str, tuple[float, float]] = {}

    def quantiles(mask: np.ndarray) -> tuple[float, float]:
        lo, hi = np.percentile(ratio[mask], RANGE_QUANTILES)
        return float(lo), float(hi)

    spread["*"] = quantiles(np.ones(len(rows), dtype=bool))
    for gpu in sorted(set(gpus)):
        if (gpus == gpu).sum() >= RANGE_MIN_ROWS:
            spread[gpu] = quantiles(gpus == gpu)
        for family in sorted(set(families[gpus == gpu])):
            mask = (gpus == gpu) & (families == family)
            if mask.sum() >= RANGE_MIN_ROWS:
                spread[f"{gpu}:{family}"] = quantiles(mask)
    counts: dict[str, dict[str, int]] = {}
    for gpu, family in zip(gpus.tolist(), families.tolist(), strict=True):
        counts.setdefault(gpu, {}).setdefault(family, 0)
        counts[gpu][family] += 1
    compute_rows = {name: int(np.count_nonzero(matrix[:, i])) for i, name in enumerate(COLUMNS)
                    if name.startswith("compute_")}
    return ThroughputModel(pooled, by_gpu, spread, dict(Counter(gpus.tolist())), counts, compute_rows)
