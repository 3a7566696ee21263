"""NeMo 2 / Megatron-Bridge through NeMo's Lightning loop (``ProgressPrinter``)::

    [2025-11-20T14:55:23+08:00] Training epoch 0, iteration 97/99 | lr: 1.469e-05 | global_batch_size: 128 |
    global_step: 97 | reduced_train_loss: 6.265 | train_step_timing in s: 12.22 | tokens_per_sec_per_gpu:
    1.073e+04 | consumed_samples: 12544

(one line). ``iteration N/M`` is 0-based and M is the last step's index (``iteration 9/9`` then ``max_steps=10
reached``), so the run has M+1 steps and ``global_step`` (when printed) is the step. ``train_step_timing in s``
is the time of that step alone (NeMo's TimingCallback, a buffer of one step): a line is one step, and steps
whose line is not printed (``log_every_n_steps`` > 1, a trimmed excerpt) are missing, never filled in.
``tokens_per_sec_per_gpu`` (global batch x sequence length / step time / GPUs) is kept as the step's own rate
so the figures can be checked against it. The line may be indented (a notebook's output) or carry a prefix
(``retraining/0``); the date is the line's ISO timestamp or NeMo's ``[NeMo I 2025-06-18 21:57:00 ...]``.
"""

from __future__ import annotations

import re

from runner.logs.base import LogParser, Step, field_after, float_or_nan, number_after

_ITERATION = re.compile(r"Training epoch \d+, iteration (\d+)/(\d+)")


class NemoParser(LogParser):
    name = "nemo"
    label = "NeMo 2 / Megatron-Bridge (Lightning)"
    frameworks = ("nemo", "nemo2", "megatron-bridge")
    step_mark = "train_step_timing in s:"
    step_pattern = _ITERATION

    def _line(self, line: str, number: int) -> list[Step]:
        if "Training epoch" not in line or "train_step_timing in s:" not in line:
            return []
        m = _ITERATION.search(line)
        if not m:
            return []
        rest = line[m.end() :]
        step_text = field_after(rest, "| global_step:")
        step = int(step_text) if step_text is not None and step_text.isdigit() else int(m.group(1))
        self.log.total_steps = int(m.group(2)) + 1
        time_text = field_after(rest, "| train_step_timing in s:")
        time_s = float_or_nan(time_text) if time_text is not None else float("nan")
        loss = number_after(rest, "| reduced_train_loss:")
        rate = number_after(rest, "| tokens_per_sec_per_gpu:")
        grad_norm = number_after(rest, "| grad_norm:")
        self._state_count_after(rest, "| global_batch_size:", "global_batch", number)
        self._order(step, number)
        record = Step(step, time_s, loss, None, number, rate=rate, grad_norm=grad_norm)
        self._add(record)
        return [record]
