"""miles / slime (``train_metric_utils.py`` and ``log_utils.py``; Ray may prefix the line)::

    ... perf 7: {'perf/actor_train_time': 101.2, 'perf/actor_train_tok_per_s': 10361.3, 'perf/step_time': 111.4, ...}
    ... step 7: {'train/loss': 1.8123, 'train/grad_norm': 0.31, ...}

One rollout is one optimizer step here (``--global-batch-size`` = ``--rollout-batch-size``); the step time is
``perf/step_time`` (train wait + train time). ``perf/actor_train_tok_per_s`` counts the whole batch, not one
GPU, so the step's tokens are ``actor_train_tok_per_s x actor_train_time``. Lines with ``perf/`` keys of the
rollout side (no ``perf/step_time``) are not steps and are skipped.
"""

from __future__ import annotations

import math
import re

from runner.logs.base import LogParser, Step

_MILES = re.compile(r"\b(perf|step) (\d+): (\{.*\})\s*$")
# Only the keys the figures need are read (a full literal_eval of each dict costs ~10x more on long logs).
_MILES_KEYS = re.compile(
    r"'(perf/step_time|perf/actor_train_tok_per_s|perf/actor_train_time|train/loss|train/grad_norm)':\s*([^,}]+)")


def _values(text: str) -> dict[str, float]:
    """The needed keys of a logged dict repr; bare nan / inf (repr of float('nan')) read as floats."""
    out = {}
    for key, raw in _MILES_KEYS.findall(text):
        try:
            out[key] = float(raw)
        except ValueError:
            continue  # not a number (a tensor repr, a string): the key is treated as absent
    return out


class MilesParser(LogParser):
    name = "miles"
    label = "miles/slime"
    frameworks = ("miles", "slime")
    end_mark = "}"  # a logged dict
    step_mark = "perf/step_time"
    step_pattern = _MILES

    def __init__(self, source: str = "<log>") -> None:
        super().__init__(source)
        self._perf: dict[int, tuple[float, int | None, int]] = {}
        self._loss: dict[int, float] = {}
        self._norm: dict[int, float] = {}

    def _line(self, line: str, number: int) -> list[Step]:
        if ": {" not in line:
            return []
        m = _MILES.search(line)
        if not m:
            return []
        kind, index = m.group(1), int(m.group(2))
        values = _values(m.group(3))
        if kind == "perf":
            if "perf/step_time" not in values:
                return []  # the rollout side's perf line
            time_s = values["perf/step_time"]
            tokens = None
            tps, train = values.get("perf/actor_train_tok_per_s"), values.get("perf/actor_train_time")
            if tps is not None and train is not None and math.isfinite(tps * train):
                tokens = round(tps * train)  # whole batch: tokens/s over all GPUs x seconds
            self._order(index, number)
            self._perf[index] = (time_s, tokens, number)
        else:
            loss = values.get("train/loss")
            if loss is not None:
                self._loss[index] = loss
            norm = values.get("train/grad_norm")
            if norm is not None:
                self._norm[index] = norm
        if index in self._perf:
            time_s, tokens, at = self._perf[index]
            step = Step(index, time_s, self._loss.get(index), tokens, at, grad_norm=self._norm.get(index))
            self._add(step)
            return [step]
        return []
