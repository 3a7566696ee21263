"""The bundled engine (``openrecipes``) prints one line per optimizer step::

    openrecipes-step {"step": 0, "steps": 20, "time_s": 1.234567, "loss": 2.273930, "tokens": 1048576}

The prefix ``openrecipes-step `` then one JSON object (no newlines inside) with exactly these keys: ``step``
(int, 0-based), ``steps`` (int, steps in the run), ``time_s`` (float, seconds of that optimizer step, wall clock
after a device synchronize), ``loss`` (float; NaN is written as the JSON token NaN, which the parser refuses as a
NaN loss), ``tokens`` (int, tokens the step trained on, the whole global batch). Only rank 0 prints. Use
:func:`format_engine_step` to write it. Text before the prefix on the same line (a launcher's rank tag) is
ignored.
"""

from __future__ import annotations

import json

from runner.logs.base import LogError, LogParser, Step

ENGINE_PREFIX = "openrecipes-step "


def format_engine_step(step: int, steps: int, time_s: float, loss: float, tokens: int) -> str:
    """One engine log line (no newline); the parser's exact input."""
    body = json.dumps(
        {"step": int(step), "steps": int(steps), "time_s": float(time_s), "loss": float(loss), "tokens": int(tokens)},
        separators=(", ", ": "),
    )
    return ENGINE_PREFIX + body


class EngineParser(LogParser):
    name = "openrecipes"
    label = "openrecipes engine"
    frameworks = ("openrecipes", "openrecipes-engine")
    end_mark = "}"  # one JSON object
    step_mark = ENGINE_PREFIX

    def _line(self, line: str, number: int) -> list[Step]:
        at = line.find(ENGINE_PREFIX)
        if at < 0:
            return []
        try:
            data = json.loads(line[at + len(ENGINE_PREFIX) :])
            step = Step(int(data["step"]), float(data["time_s"]), float(data["loss"]), int(data["tokens"]), number)
            self.log.total_steps = int(data["steps"])
        except (ValueError, KeyError, TypeError) as exc:
            raise LogError(f"{self.log.source}:{number}: malformed {ENGINE_PREFIX.strip()} line ({exc})") from None
        self._add(step)
        return [step]
