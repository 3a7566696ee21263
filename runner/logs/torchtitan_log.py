"""torchtitan (``MetricsProcessor.log`` in torchtitan/components/metrics.py, read at v0.2.2, commit 73a0e697)::

    [rank0]:[titan] 2025-06-16 22:31:04,970 - root - INFO - step: 210  loss:  6.0388  memory: 49.66GiB(52.28%)
    tps: 5,593  tflops: 323.92  mfu: 32.75%

(one line; ``grad_norm:`` sits between loss and memory since 2025). ``step`` is 1-based (``self.step += 1``
before ``train_step``), so step N is our step N-1. A line is printed at step 1 and at every multiple of
``metrics.log_freq`` (default 10): ``should_log(step) = step == 1 or step % log_freq == 0``. The line prints no
step time. ``tps`` is ``ntokens_since_last_log / (time_delta x non_data_parallel_size)``: tokens per second per
GPU over the whole interval since the previous line, rounded to an integer.

The step time is derived from the log's own clock: the logging prefix stamps each line to the millisecond, and
a line's interval runs from the previous step line (torchtitan resets its timer right after logging). So for
consecutive lines at steps P < N, each of the N-P steps gets (t_N - t_P) / (N - P) s: an interval average
(``Step.first``/``Step.last`` mark the span; the CV is labelled ``interval-average (k=log_freq)``). It includes
whatever ran between the lines (GC, profiler dumps, checkpoints), as torchtitan's own tps does. The first line
(step 1) has no previous line: its interval starts when the trainer was built, which the log does not show, so
step 0 has no time. Lines further apart than ``log_freq`` (missing output) give no steps. The interval's tps is
kept as ``Step.rate`` so the figures can be checked against it. A torchtitan log without timestamps cannot be
timed and is refused.

What the lines say and do not say:

- Under pipeline parallelism only the last stage computes the loss; the other stages print a placeholder
  (``loss: -1.0000``, or a multiple of it where the placeholder is summed, e.g. -4.0 over four microbatches). A
  cross-entropy loss is never negative, so a negative loss is read as "no loss on this rank" (None); the loss of
  a step is the last stage's, from whichever rank's line prints one (``LOG_RANK=0,7`` prints both).
- With several ranks' lines in one log (``[rank0]:``, ``[rank7]:``), each rank's lines are timed by that rank's
  own clock; the steps are timed from the rank that printed most lines (the lowest on a tie), never from a mix.
- ``validate step: N  loss: ...`` (torchtitan's validator) is a validation pass, not a training step: ignored.
- ``Trainer is initialized with local batch size B, global batch size G, sequence length S, total steps T``
  (or the older ``Training starts at step 1, with ... global batch size G ... total steps T``) states the run's
  steps, rows per step and row length: read as ``total_steps``, ``global_batch`` and ``seq_length``.
  ``Model NAME FLAVOR size: N total parameters`` states the model's size (``model_params``; torchtitan's Llama
  counts a tied output layer apart), ``Building K-D device mesh with [...], [a, b]`` its GPUs (``world_size``,
  the product); each is checked against the recipe (runner.measure.stated_workload).
- ``grad_norm:`` (since 2025) is read as the step's gradient norm; a NaN or infinite one refuses the run.
- ANSI colour codes (``metrics.enable_color_printing``) are removed before a line is read.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from runner.logs.base import LogError, LogParser, Step, float_or_nan

_STEP = re.compile(r"(?<!validate )\bstep:\s*(\d+)\s+loss:\s*(\S+)(?:.*?\btps:\s*([\d,]+))?")
_RANK = re.compile(r"^\s*\[rank(\d+)\]:")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_GRAD_NORM = re.compile(r"\bgrad_norm:\s*(\S+)")
_TOTAL = re.compile(r"\btotal steps (\d+)")  # on the trainer's start line: the run's length


@dataclass(frozen=True)
class _Stated:
    """A figure the run states about itself: the ParsedLog attribute it fills, the pattern that finds it on its line
    (its first group the figure's text) and how that text becomes the figure."""

    attribute: str
    pattern: re.Pattern[str]
    value: Callable[[str], int] = int


# The lines where the run states its workload (checked against the recipe's: runner.measure.stated_workload), by a
# text only that line holds (the first that a line holds is its kind), and the figures each states: the trainer's
# start line, the model's size, the device mesh (its GPUs: the product of its degrees).
_STATEMENTS: dict[str, tuple[_Stated, ...]] = {
    "total steps": (_Stated("global_batch", re.compile(r"\bglobal batch size (\d+)")),
                    _Stated("seq_length", re.compile(r"\bsequence length (\d+)"))),
    "total parameters": (_Stated("model_params", re.compile(r"\bsize: ([\d,]+) total parameters"),
                                 lambda text: int(text.replace(",", ""))),),
    "device mesh with": (_Stated("world_size", re.compile(r"Building \d+-D device mesh with \[[^]]*\], \[([\d, ]+)\]"),
                                 lambda text: math.prod(int(n) for n in text.split(","))),),
}


class TorchtitanParser(LogParser):
    name = "torchtitan"
    label = "torchtitan"
    frameworks = ("torchtitan",)
    end_mark = "%"  # the last field is mfu: NN.NN%
    step_mark = "tps:"  # _STEP's tps group is optional: a step line must hold it
    step_pattern = _STEP

    @classmethod
    def reads(cls, line: str) -> bool:
        return "step:" in line and "loss:" in line and _STEP.search(_ANSI.sub("", line)) is not None

    @classmethod
    def ends_whole(cls, line: str) -> bool:
        return _ANSI.sub("", line).rstrip().endswith("%")

    def __init__(self, source: str = "<log>") -> None:
        super().__init__(source)
        # rank -> step -> (stamp, loss, tps, line); rank -1 for lines without a [rankN]: prefix
        self._ranks: dict[int, dict[int, tuple[datetime | None, float | None, float | None, int]]] = {}
        self._losses: dict[int, float] = {}  # step -> the last stage's loss, from any rank's line
        self._norms: dict[int, float] = {}  # step -> the gradient norm (a NaN or infinite one from any rank kept)
        self._lines: dict[int, tuple[datetime | None, float | None, float | None, int]] = {}

    def _line(self, line: str, number: int) -> list[Step]:
        if "\x1b" in line:
            line = _ANSI.sub("", line)
        if "total steps" in line and (total := _TOTAL.search(line)):
            self.log.total_steps = int(total.group(1))
        for mark, statements in _STATEMENTS.items():
            if mark in line:
                self._stated(line, number, statements)
                break
        if "step:" not in line or "loss:" not in line:
            return []
        m = _STEP.search(line)
        if not m:
            return []
        rate = float_or_nan(m.group(3)) if m.group(3) else None
        step, loss = int(m.group(1)), float_or_nan(m.group(2))
        if loss < 0:  # a non-final pipeline stage's placeholder: this rank computes no loss
            loss_or_none: float | None = None
        else:
            loss_or_none = loss
            self._losses[step] = loss
        norm = _GRAD_NORM.search(line, m.end(2))
        if norm is not None and math.isfinite(self._norms.get(step, 0.0)):
            self._norms[step] = float_or_nan(norm.group(1))
        rank = _RANK.match(line)
        self._order(step, number, int(rank.group(1)) if rank else -1)
        self._ranks.setdefault(int(rank.group(1)) if rank else -1, {})[step] = (self._stamp, loss_or_none, rate, number)
        return []

    def _stated(self, line: str, number: int, statements: tuple[_Stated, ...]) -> None:
        for stated in statements:
            if found := stated.pattern.search(line):
                self._state(stated.attribute, stated.value(found.group(1)), number)

    def _finish_steps(self) -> None:
        if self._ranks:  # the rank that printed most lines times the steps (the lowest on a tie)
            rank = min(self._ranks, key=lambda r: (-len(self._ranks[r]), r))
            self._lines = self._ranks[rank]
        printed = sorted(self._lines)
        if printed and all(self._lines[s][0] is None for s in printed):
            raise LogError(
                f"{self.log.source}: torchtitan step lines without timestamps: torchtitan prints no step time, so it "
                "is derived from the logging prefix's clock ([titan] YYYY-MM-DD HH:MM:SS,mmm), which this log lacks"
            )
        if printed:
            self.log.first_shown = printed[0] - 1  # shown, though untimed: its interval's start is not in the log
            if self._losses.get(printed[0]) is not None:
                self.log.untimed_losses = {printed[0] - 1: self._losses[printed[0]]}
        k = 0
        for s in printed:
            if s != 1:
                k = math.gcd(k, s)
        k = k or 1
        for previous, current in zip(printed, printed[1:], strict=False):
            expected_previous = 1 if current - k < 1 or current == k else current - k
            if previous != expected_previous:
                continue  # the line(s) between are missing: this interval's start is not in the log
            t0, _, _, _ = self._lines[previous]
            t1, _, rate, number = self._lines[current]
            loss = self._losses.get(current)
            if t0 is None or t1 is None:
                continue
            each = (t1 - t0).total_seconds() / (current - previous)
            first, last = previous, current - 1  # 0-based steps previous+1 .. current (1-based)
            span = (first, last) if last > first else (None, None)
            for step in range(first, last + 1):
                self._add(Step(step, each, loss if step == last else None, None, number, span[0], span[1], rate,
                               self._norms.get(current) if step == last else None))
        self.log.warnings.extend(self._coarse_clock_warning(k))

    def _coarse_clock_warning(self, k: int) -> list[str]:
        # A 1 ms clock against a sub-10 ms interval would be a >10% error; say so rather than print a false figure.
        short = [s for s in self._steps.values() if s.time_s * (s.span[1] - s.span[0] + 1) < 0.01]
        return [f"{self.log.name}: intervals shorter than 10 ms timed by a 1 ms clock"] if short else []
