"""Training-log parsers: per optimizer step, its time, loss and tokens.

Three formats, chosen by the first word of the recipe's ``stack.framework``:

Megatron-LM / Megatron-Bridge (``training_log`` in megatron/training/training.py)::

     [2026-10-20 12:00:00] iteration        5/      20 | consumed samples:          640 | elapsed time per
     iteration (ms): 12345.6 | ... | global batch size:   128 | lm loss: 2.273930E+00 | ...

  (one line). ``iteration`` is 1-based (printed after the step), so iteration N is step N-1. With
  ``--log-interval k`` > 1 a line stands for k steps and its time and loss are averages over them: each of
  the k steps gets the averaged time (the sum over the window is then exact when the window is aligned to
  the interval). A line whose iterations were all skipped prints no loss; the steps get loss None.

miles / slime (``train_metric_utils.py`` and ``log_utils.py``; Ray may prefix the line)::

    ... perf 7: {'perf/actor_train_time': 101.2, 'perf/actor_train_tok_per_s': 10361.3, 'perf/step_time': 111.4, ...}
    ... step 7: {'train/loss': 1.8123, 'train/grad_norm': 0.31, ...}

  One rollout is one optimizer step here (``--global-batch-size`` = ``--rollout-batch-size``); the step time is
  ``perf/step_time`` (train wait + train time). ``perf/actor_train_tok_per_s`` counts the whole batch, not one
  GPU, so the step's tokens are ``actor_train_tok_per_s x actor_train_time``. Lines with ``perf/`` keys of the
  rollout side (no ``perf/step_time``) are not steps and are skipped.

The bundled engine (``openrecipes``) prints one line per optimizer step::

    openrecipes-step {"step": 0, "steps": 20, "time_s": 1.234567, "loss": 2.273930, "tokens": 1048576}

  The prefix ``openrecipes-step `` then one JSON object (no newlines inside) with exactly these keys:
  ``step`` (int, 0-based), ``steps`` (int, steps in the run), ``time_s`` (float, seconds of that optimizer
  step, wall clock after a device synchronize), ``loss`` (float; NaN is written as the JSON token NaN, which
  the parser refuses as a NaN loss), ``tokens`` (int, tokens the step trained on, the whole global batch).
  Only rank 0 prints. Use :func:`format_engine_step` to write it. Text before the prefix on the same line
  (a launcher's rank tag) is ignored.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

ENGINE_PREFIX = "openrecipes-step "


class LogError(Exception):
    """A log that cannot give figures: too few steps, NaN loss, no steps, a crashed run."""


@dataclass(frozen=True)
class Step:
    step: int  # 0-based optimizer step
    time_s: float
    loss: float | None
    tokens: int | None  # tokens the step trained on, when the log says
    line: int  # 1-based line of the log it came from


@dataclass
class ParsedLog:
    format: str
    steps: list[Step] = field(default_factory=list)
    total_steps: int | None = None  # the run's planned steps, when the log says
    global_batch: int | None = None
    first_time: datetime | None = None
    last_time: datetime | None = None
    nccl_version: str | None = None
    lines: int = 0
    source: str = "<log>"

    def step_times(self) -> list[float]:
        return [s.time_s for s in self.steps]

    def losses(self) -> list[float | None]:
        return [s.loss for s in self.steps]

    @property
    def wall_seconds(self) -> float | None:
        if self.first_time and self.last_time and self.last_time > self.first_time:
            return (self.last_time - self.first_time).total_seconds()
        return None


def format_engine_step(step: int, steps: int, time_s: float, loss: float, tokens: int) -> str:
    """One engine log line (no newline); the parser's exact input."""
    body = json.dumps(
        {"step": int(step), "steps": int(steps), "time_s": float(time_s), "loss": float(loss), "tokens": int(tokens)},
        separators=(", ", ": "),
    )
    return ENGINE_PREFIX + body


_TIMESTAMP = re.compile(r"\[(\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d)")
_NCCL = re.compile(r"NCCL version (\d+\.\d+\.\d+)")
_MEGATRON = re.compile(r"\biteration\s+(\d+)/\s*(\d+|infinity)\s*\|")
_MILES = re.compile(r"\b(perf|step) (\d+): (\{.*\})\s*$")


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return math.nan


class _Parser:
    name = ""

    def __init__(self, source: str = "<log>") -> None:
        self.log = ParsedLog(self.name, source=source)
        self._steps: dict[int, Step] = {}

    def feed(self, line: str, number: int) -> list[Step]:
        """Consumes one line; returns the steps it completed (for live progress)."""
        self.log.lines = number
        if "[" in line:
            m = _TIMESTAMP.search(line)
            if m:
                try:
                    stamp = datetime.fromisoformat(m.group(1).replace("T", " "))
                except ValueError:
                    stamp = None
                if stamp is not None:
                    self.log.first_time = self.log.first_time or stamp
                    self.log.last_time = stamp
        if "NCCL version" in line and self.log.nccl_version is None:
            m = _NCCL.search(line)
            if m:
                self.log.nccl_version = m.group(1)
        return self._line(line, number)

    def _line(self, line: str, number: int) -> list[Step]:
        raise NotImplementedError

    def _add(self, step: Step) -> None:
        # A step printed twice (a restarted run appending to the log) keeps its last value.
        self._steps[step.step] = step

    def finish(self) -> ParsedLog:
        self.log.steps = [self._steps[k] for k in sorted(self._steps)]
        return self.log


def _meg_field(text: str, label: str) -> str | None:
    """The value after `| label:` up to the next `|` (only the three fields the figures need are read: a
    regex over every field costs ~3x more on long logs)."""
    at = text.find(label)
    if at < 0:
        return None
    start = at + len(label)
    end = text.find("|", start)
    return (text[start:] if end < 0 else text[start:end]).strip()


class MegatronParser(_Parser):
    name = "megatron"

    def __init__(self, source: str = "<log>") -> None:
        super().__init__(source)
        self._last_iteration = 0

    def _line(self, line: str, number: int) -> list[Step]:
        if "iteration" not in line or "elapsed time per iteration" not in line:
            return []
        m = _MEGATRON.search(line)
        if not m:
            return []
        iteration = int(m.group(1))
        if m.group(2) != "infinity":
            self.log.total_steps = int(m.group(2))
        rest = line[m.end() - 1 :]
        ms = _meg_field(rest, "| elapsed time per iteration (ms):")
        if ms is None:
            return []
        time_s = _float(ms) / 1000.0
        loss_text = _meg_field(rest, "| lm loss:")
        loss = _float(loss_text) if loss_text is not None else None
        gb = _meg_field(rest, "| global batch size:")
        if gb is not None and gb.strip().isdigit():
            self.log.global_batch = int(gb)
        # A line covers the iterations since the previous line (log interval).
        first = self._last_iteration + 1 if iteration > self._last_iteration else iteration
        self._last_iteration = iteration
        out = []
        for it in range(first, iteration + 1):
            step = Step(it - 1, time_s, loss, None, number)
            self._add(step)
            out.append(step)
        return out


# Only the keys the figures need are read (a full literal_eval of each dict costs ~10x more on long logs).
_MILES_KEYS = re.compile(r"'(perf/step_time|perf/actor_train_tok_per_s|perf/actor_train_time|train/loss)':\s*([^,}]+)")


def _values(text: str) -> dict[str, float]:
    """The needed keys of a logged dict repr; bare nan / inf (repr of float('nan')) read as floats."""
    out = {}
    for key, raw in _MILES_KEYS.findall(text):
        try:
            out[key] = float(raw)
        except ValueError:
            continue  # not a number (a tensor repr, a string): the key is treated as absent
    return out


class MilesParser(_Parser):
    name = "miles"

    def __init__(self, source: str = "<log>") -> None:
        super().__init__(source)
        self._perf: dict[int, tuple[float, int | None, int]] = {}
        self._loss: dict[int, float] = {}

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
            self._perf[index] = (time_s, tokens, number)
        else:
            loss = values.get("train/loss")
            if loss is not None:
                self._loss[index] = loss
        if index in self._perf:
            time_s, tokens, at = self._perf[index]
            step = Step(index, time_s, self._loss.get(index), tokens, at)
            self._add(step)
            return [step]
        return []


class EngineParser(_Parser):
    name = "openrecipes"

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


PARSERS: dict[str, type[_Parser]] = {"megatron": MegatronParser, "miles": MilesParser, "openrecipes": EngineParser}

FRAMEWORKS = {
    "megatron-lm": "megatron",
    "megatron-bridge": "megatron",
    "megatron-core": "megatron",
    "nemo": "megatron",
    "miles": "miles",
    "slime": "miles",
    "openrecipes": "openrecipes",
    "openrecipes-engine": "openrecipes",
}


def format_for(framework: str) -> str | None:
    """Parser name for a recipe's stack.framework (its first word), or None when unknown."""
    word = framework.split()[0].strip(",;:").lower() if framework.strip() else ""
    return FRAMEWORKS.get(word)


def sniff(lines: Iterable[str]) -> str | None:
    """The format the first recognisable lines are in."""
    for line in lines:
        if ENGINE_PREFIX in line:
            return "openrecipes"
        if "elapsed time per iteration" in line and _MEGATRON.search(line):
            return "megatron"
        if "perf/step_time" in line and _MILES.search(line):
            return "miles"
    return None


def parser(fmt: str, source: str = "<log>") -> _Parser:
    return PARSERS[fmt](source)


def parse_lines(lines: Iterable[str], fmt: str, source: str = "<log>") -> ParsedLog:
    p = parser(fmt, source)
    for number, line in enumerate(lines, 1):
        p.feed(line, number)
    return p.finish()


def _read_lines(path: Path) -> Iterator[str]:
    with path.open("r", encoding="utf-8", errors="replace") as handle:
        yield from handle


def parse_file(path: Path, fmt: str | None) -> ParsedLog:
    """Parses a log; fmt None sniffs it. Raises LogError when the file is unreadable or has no steps."""
    try:
        if fmt is None:
            fmt = sniff(_read_lines(path))
            if fmt is None:
                raise LogError(f"{path}: no training step lines of any known format (Megatron, miles/slime, openrecipes)")
        log = parse_lines(_read_lines(path), fmt, str(path))
    except OSError as exc:
        raise LogError(f"{path}: cannot read the log: {exc.strerror}") from None
    if not log.steps:
        other = sniff(_read_lines(path))
        hint = f"; the log looks like the {other} format" if other and other != fmt else ""
        raise LogError(f"{path}: no {fmt} training step lines found{hint}")
    return log


def check_steps(log: ParsedLog, window: tuple[int, int], expected_steps: int | None = None) -> None:
    """Refuses a log that cannot give the window's figures (raises LogError with the reason)."""
    first, last = window
    steps = {s.step: s for s in log.steps}
    if not steps:
        raise LogError(f"{log.source}: no training steps in the log")
    count = max(steps) + 1
    if last >= count:
        raise LogError(
            f"{log.source}: too few steps: the log has steps 0-{count - 1} but the window [{first}, {last}] needs "
            f"step {last}; the run stopped early or crashed (see the end of the log)"
        )
    missing = [i for i in range(first, last + 1) if i not in steps]
    if missing:
        raise LogError(f"{log.source}: the window [{first}, {last}] lacks steps {missing[:10]} (not in the log)")
    for i in range(0, last + 1):
        s = steps.get(i)
        if s is None:
            continue
        if s.loss is not None and not math.isfinite(s.loss):
            raise LogError(f"{log.source}:{s.line}: the loss at step {i} is {s.loss}: the run diverged; nothing written")
        if not math.isfinite(s.time_s) or s.time_s <= 0:
            raise LogError(f"{log.source}:{s.line}: step {i} has step time {s.time_s} s (must be a positive number)")
    if expected_steps is not None and log.total_steps is not None and log.total_steps != expected_steps:
        raise LogError(
            f"{log.source}: the log's run has {log.total_steps} steps but the recipe's steps_per_run is {expected_steps}"
        )


def tail(path: Path, lines: int = 40) -> list[str]:
    """The last lines of a log (for the evidence file)."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - 64 * 1024))
            data = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return []
    return [ln.rstrip("\r") for ln in data.splitlines()[-lines:]]
