"""Megatron-LM (``training_log`` in megatron/training/training.py; Megatron-Bridge prints the same line)::

     [2026-10-20 12:00:00] iteration       20/     200 | consumed samples:         2560 | elapsed time per
     iteration (ms): 12345.6 | ... | global batch size:   128 | lm loss: 2.273930E+00 | ...

(one line). ``iteration`` is 1-based (printed after the step), so iteration N is step N-1. Megatron prints a
line when ``iteration % log_interval == 0`` and its time and loss are averages over the ``log_interval``
iterations since the previous line. The interval k is read from the log itself: the greatest common divisor of
the printed iterations (every printed iteration is a multiple of k). A line at iteration N then stands for
steps N-k .. N-1, each given the averaged time, marked with that span (``Step.first``/``Step.last``) so a
window that cuts an interval is refused. Iterations between two lines further apart than k are missing from
the log (a trimmed README, a lost stretch of output) and are never filled in. A line whose iterations were all
skipped prints no loss; its steps get loss None. Old logs (2020) print no date and no consumed samples: the
same fields are read. ``grad norm:`` is the line's gradient norm (a NaN or infinite one refuses the run).

What the run states about itself, checked against the recipe (runner.measure.stated_workload): ``global batch
size`` on each line, the argument dump at the start (``  seq_length ........ 4096``, ``global_batch_size``,
``world_size``), ``using world size: N`` and the theoretical-memory report's ``Total number of parameters in
billions: 1.49``.
"""

from __future__ import annotations

import math
import re

from runner.logs.base import LogParser, Step, field_after, float_or_nan, number_after

_ITERATION = re.compile(r"\biteration\s+(\d+)/\s*(\d+|infinity)\s*\|")
# The argument dump at the start (``_print_args``: "  seq_length ...... 4096") and the theoretical-memory report.
_ARGUMENT = re.compile(r"^\s*(seq_length|global_batch_size|world_size) \.+ (\d+)\s*$")
_ARGUMENTS = {"seq_length": "seq_length", "global_batch_size": "global_batch", "world_size": "world_size"}
_PARAMETERS = re.compile(r"Total number of parameters in billions:\s*([\d.]+)")


class MegatronParser(LogParser):
    name = "megatron"
    label = "Megatron-LM"
    frameworks = ("megatron-lm", "megatron-core", "megatron-bridge", "megatron")
    end_mark = "|"  # every field, the last included, is followed by " |"
    step_mark = "elapsed time per iteration"
    step_pattern = _ITERATION

    def __init__(self, source: str = "<log>") -> None:
        super().__init__(source)
        # iteration -> (time, loss, grad norm, line)
        self._printed: dict[int, tuple[float, float | None, float | None, int]] = {}
        self._previous = 0

    def _line(self, line: str, number: int) -> list[Step]:
        if " ..." in line:
            argument = _ARGUMENT.match(line)
            if argument:
                self._state(_ARGUMENTS[argument.group(1)], int(argument.group(2)), number)
        elif "Total number of parameters" in line:
            billions = _PARAMETERS.search(line)
            if billions:
                self._state("model_params", round(float(billions.group(1)) * 1e9), number)
        if "iteration" not in line or "elapsed time per iteration" not in line:
            return []
        m = _ITERATION.search(line)
        if not m:
            return []
        iteration = int(m.group(1))
        if m.group(2) != "infinity":
            self.log.total_steps = int(m.group(2))
        rest = line[m.end() - 1 :]
        ms = field_after(rest, "| elapsed time per iteration (ms):")
        if ms is None:
            return []
        time_s = float_or_nan(ms) / 1000.0
        loss = number_after(rest, "| lm loss:")
        grad_norm = number_after(rest, "| grad norm:")
        self._state_count_after(rest, "| global batch size:", "global_batch", number)
        self._order(iteration, number)
        self._printed[iteration] = (time_s, loss, grad_norm, number)
        # Live progress only: the steps since the previous line (finish() places them once the interval is known).
        first = self._previous + 1 if iteration > self._previous else iteration
        self._previous = iteration
        return [Step(it - 1, time_s, loss, None, number, grad_norm=grad_norm) for it in range(first, iteration + 1)]

    def _finish_steps(self) -> None:
        if not self._printed:
            return
        k = 0
        for iteration in self._printed:
            k = math.gcd(k, iteration)
        for iteration, (time_s, loss, grad_norm, number) in self._printed.items():
            first, last = iteration - k, iteration - 1  # 0-based steps the line averages
            for step in range(max(first, 0), last + 1):
                self._add(Step(step, time_s, loss, None, number, first if k > 1 else None, last if k > 1 else None,
                               grad_norm=grad_norm))
