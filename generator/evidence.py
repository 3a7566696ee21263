"""The evidence sidecar ``<name>.evidence.json`` beside a recipe: its path, schema, reading, building and dumping.

It holds what the result is computed from (the median run's step lines as the log states them, the window and
the workload figures the formulas take), so ``generator.figures.tokens_per_s_per_gpu(steps.time_s, window,
global_batch, row_tokens, gpu_count)`` gives the recipe's tokens/s again; ``python -m generator check``
does that recomputation (and the CV, steps, runs, GPU-hours and date) for every recipe with a sidecar. It
also holds the captured environment; the command; the log's tail; and ``history``, every earlier result,
oldest first, for the site's plot of re-measurements. Raw logs stay out of git (``.openrecipes-runs/``);
only this summary is committed.

``steps`` holds one entry per step line of the log, as the log states it: ``step`` (0-based), ``time_s``, ``loss``,
``tokens``, ``line`` (the log's line number); a line that averages an interval (Megatron's ``--log-interval k``,
torchtitan's ``log_freq``) also has ``first``, the interval's first step, and ``time_s`` is then the average over
steps ``first``..``step``. ``shown`` is the first and last step the log shows. Steps the log does not show have no
entry: an excerpt (steps 97-99) or a log whose first line is untimed records only what it shows, and the window's
figures are recomputed from the window's lines alone (:func:`window_times`).

This module is the only reader: check, the site and the runner all go through `load`.

Two writes that must look like one. The runner renames the new sidecar into place first and the recipe second,
so a process killed between the two renames (SIGKILL, power loss) leaves the new sidecar beside the old recipe.
Each sidecar therefore records the sha256 of the recipe text it describes (``recipe_sha256``), the sha256 of
the recipe text it replaced (``previous_recipe_sha256``) and the sidecar it replaced, one level deep
(``previous``; null when there was none). `describing` picks the evidence that belongs to a recipe's bytes:
the sidecar itself, or, when the bytes are exactly the replaced recipe, the embedded previous sidecar, which
that recipe was checked against before. A recipe edited by hand since (neither hash) is held to the sidecar.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from generator.models import Recipe

SUFFIX = ".evidence.json"
SCHEMA = "openrecipes-evidence/1"
MAX_BYTES = 16 * 1024 * 1024  # a sidecar summarises a run; anything larger is not one
HISTORY_FIELDS = (
    "tokens_per_s_per_gpu", "usd_per_million_tokens", "step_time_cv_percent", "mfu", "measured", "steps_per_run",
    "window", "window_tokens", "runs", "runs_cv_percent", "gpu_hours",
)


def path_for(recipe_path: Path) -> Path:
    """The sidecar's path beside a recipe."""
    return Path(text_path_for(os.fspath(recipe_path)))


def text_path_for(recipe_path: str) -> str:
    """path_for on a path's text (check's warm re-check asks for every recipe's; Path objects cost more than the
    read): the recipe's name, its last suffix taken off as pathlib's stem does, then SUFFIX."""
    folder, name = os.path.split(recipe_path)
    dot = name.rfind(".")
    stem = name[:dot] if 0 < dot < len(name) - 1 else name
    return os.path.join(folder, stem + SUFFIX)


class EvidenceError(Exception):
    """A sidecar that exists but cannot be used; the message is one line naming the file."""


@dataclass(frozen=True)
class Sidecar:
    path: Path
    text: str
    data: dict[str, Any]


def read_bytes(path: Path | str) -> bytes | None:
    """The sidecar's bytes; None when there is none. Only a regular file of at most MAX_BYTES is read (a
    symlink to a device or a fifo is refused, never opened for reading in full)."""
    name = os.path.basename(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise EvidenceError(f"{name} cannot be read ({exc.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise EvidenceError(f"{name} is not a regular file")
    if st.st_size > MAX_BYTES:
        raise EvidenceError(f"{name} is {st.st_size:,} bytes; the limit is {MAX_BYTES:,}")
    try:
        with open(path, "rb") as fh:
            return fh.read(MAX_BYTES + 1)
    except OSError as exc:
        raise EvidenceError(f"{name} cannot be read ({exc.strerror})") from None


def parse(name: str, raw: bytes) -> dict[str, Any]:
    """The sidecar's JSON object, or EvidenceError saying why it is not one."""
    try:
        text = raw.decode("utf-8")
        data = json.loads(text, parse_constant=_refuse_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise EvidenceError(f"{name} is not readable JSON ({_one_line(exc)})") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise EvidenceError(f"{name} is not an evidence file (schema {SCHEMA!r} expected)")
    return data


def load(recipe_path: Path) -> Sidecar | None:
    """The recipe's sidecar, None when it has none; EvidenceError when it exists but is not usable."""
    path = path_for(recipe_path)
    raw = read_bytes(path)
    if raw is None:
        return None
    data = parse(path.name, raw)
    return Sidecar(path, raw.decode("utf-8"), data)


RECIPE_HASH = "recipe_sha256"
PREVIOUS_HASH = "previous_recipe_sha256"
PREVIOUS = "previous"


def digest(raw: bytes) -> str:
    """The sha256 of a recipe's bytes, as sidecars record it."""
    return hashlib.sha256(raw).hexdigest()


@dataclass(frozen=True)
class Describing:
    """The evidence that describes a recipe's text: `data` (None: no evidence applies), and whether the recipe is
    the text an interrupted write replaced (its sidecar was renamed into place, the recipe not)."""

    data: dict[str, Any] | None
    interrupted: bool


def describing(data: dict[str, Any], recipe_raw: bytes | None) -> Describing:
    """Which evidence holds for these recipe bytes: the sidecar, or the one it replaced (see the module doc)."""
    if recipe_raw is None or PREVIOUS_HASH not in data:
        return Describing(data, False)
    now = digest(recipe_raw)
    if now == data.get(RECIPE_HASH) or now != data.get(PREVIOUS_HASH):
        return Describing(data, False)
    previous = data.get(PREVIOUS)
    if previous is not None and not (isinstance(previous, dict) and previous.get("schema") == SCHEMA):
        raise EvidenceError(f"its {PREVIOUS!r} is not an evidence object (schema {SCHEMA!r} expected)")
    return Describing(previous, True)


def chained(data: dict[str, Any], new_recipe: bytes, old_recipe: bytes | None,
            replaced: dict[str, Any] | None) -> dict[str, Any]:
    """The new evidence with the hashes of both recipe texts and the sidecar it replaces (that one's own
    `previous` dropped: one level is all an interrupted write needs)."""
    previous = None if replaced is None else {k: v for k, v in replaced.items() if k != PREVIOUS}
    return data | {
        RECIPE_HASH: digest(new_recipe),
        PREVIOUS_HASH: digest(old_recipe) if old_recipe is not None else None,
        PREVIOUS: previous,
    }


def _line_span(entry: Any) -> tuple[int, int, float]:
    if not isinstance(entry, dict):
        raise ValueError("a step entry is not an object")
    last = entry["step"]
    first = entry.get("first", last)
    time_s = entry["time_s"]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (first, last)) or not first <= last:
        raise ValueError(f"step entry {entry!r}: step and first must be whole numbers, first <= step")
    if not isinstance(time_s, int | float) or isinstance(time_s, bool):
        raise ValueError(f"step {last}: time_s {time_s!r} is not a number")
    return first, last, float(time_s)


def window_times(data: dict[str, Any], window: list[int]) -> list[float]:
    """The window's step times from the recorded lines: each step of an interval line gets the line's average.
    ValueError names what is missing: a step the log does not show, or a line whose interval the window cuts."""
    first_w, last_w = window
    try:
        spans = [_line_span(e) for e in data["steps"]]
    except (KeyError, TypeError) as exc:
        raise ValueError(f"its steps lack {exc}") from None
    times: dict[int, float] = {}
    for first, last, time_s in spans:
        if last < first_w or first > last_w:
            continue
        if first < first_w or last > last_w:
            raise ValueError(f"the window [{first_w}, {last_w}] cuts the line of steps {first}-{last} (one averaged "
                             "line in the log)")
        for step in range(first, last + 1):
            if step in times:
                raise ValueError(f"step {step} is recorded twice")
            times[step] = time_s
    missing = [i for i in range(first_w, last_w + 1) if i not in times]
    if missing:
        raise ValueError(f"the window [{first_w}, {last_w}] needs steps the record does not show (first missing: "
                         f"{missing[0]}, {len(missing)} in all)")
    return [times[i] for i in range(first_w, last_w + 1)]


def last_step(data: dict[str, Any]) -> int | None:
    """The last step the recorded log shows."""
    shown = data.get("shown")
    if isinstance(shown, list) and len(shown) == 2 and isinstance(shown[1], int):
        return shown[1]
    steps = [e.get("step") for e in data.get("steps") or [] if isinstance(e, dict)]
    ints = [s for s in steps if isinstance(s, int) and not isinstance(s, bool)]
    return max(ints) if ints else None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


# --- writing (the runner) ----------------------------------------------------------------------------------


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def previous_result(recipe: Recipe) -> dict[str, Any]:
    data = recipe.result.model_dump(mode="json")
    return {k: data.get(k) for k in HISTORY_FIELDS}


@dataclass(frozen=True)
class StepLine:
    """One step line of the log as the evidence records it: `step` is the line's (an interval line's last) step,
    `first` an interval line's first step (None for a one-step line), `time_s` the line's (average) step time."""

    step: int
    time_s: float
    loss: float | None
    tokens: int | None
    line: int
    first: int | None = None

    def as_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"step": self.step, "time_s": self.time_s, "loss": self.loss, "tokens": self.tokens,
                                 "line": self.line}
        if self.first is not None:
            entry["first"] = self.first
        return entry


@dataclass(frozen=True)
class RunRecord:
    """One run of a measurement as the evidence lists it."""

    log: str  # the log's file name, no folder of the machine that measured
    tokens_per_s_per_gpu: float
    step_time_cv_percent: float
    steps: int
    shown: tuple[int, int] | None  # the first and last step its log shows
    wall_seconds: float | None
    partial: str | None
    drift_percent: float

    def as_json(self) -> dict[str, Any]:
        return {
            "tokens_per_s_per_gpu": self.tokens_per_s_per_gpu,
            "step_time_cv_percent": self.step_time_cv_percent,
            "steps": self.steps,
            "shown": list(self.shown) if self.shown else None,
            "wall_seconds": self.wall_seconds,
            "partial": self.partial,
            "drift_percent": self.drift_percent,
            "log": self.log,
        }


@dataclass(frozen=True)
class EvidenceRecord:
    """What a measurement gives its sidecar, in the generator's terms: the runner builds it from its runs and
    logs (runner/measure.py), and `build` reads nothing else of the runner. The median run's log gives `format`,
    `shown`, `interval` and `steps`; `result` holds the result fields as written (rounded; `measured` a date)."""

    recipe_id: str
    source: str  # "launch" (run here) or "from-log" (a run made elsewhere)
    command: str | None
    format: str
    window: tuple[int, int]
    shown: tuple[int, int] | None
    interval: int
    steps: tuple[StepLine, ...]
    runs: tuple[RunRecord, ...]
    median_run: int
    runs_cv_percent: float
    result: dict[str, Any]
    environment: dict[str, Any]
    stack_differences: tuple[str, ...]
    log_tail: tuple[str, ...]
    extra: dict[str, Any] = field(default_factory=dict)  # keys after the fixed ones (provenance, how the window was taken)


def build(recipe: Recipe, record: EvidenceRecord, existing: dict[str, Any] | None) -> dict[str, Any]:
    """The new evidence; the result it replaces goes to the end of history. TypeError for anything but an
    EvidenceRecord: the evidence format reads no runner object."""
    if not isinstance(record, EvidenceRecord):
        raise TypeError(f"evidence.build takes an EvidenceRecord, not {type(record).__name__}")
    history = list(existing.get("history", [])) if existing else []
    before = dict(existing["result"]) if existing and isinstance(existing.get("result"), dict) else previous_result(recipe)
    before["source"] = "evidence" if existing else "recipe"
    history.append(before)
    return _json_safe({
        "schema": SCHEMA,
        "recipe": record.recipe_id,
        "source": record.source,
        "format": record.format,
        "command": record.command,
        "inputs": {
            "global_batch": recipe.workload.global_batch,
            "row_tokens": recipe.workload.row_tokens,
            "gpu_count": recipe.gpu.count,
            "gpu_type": recipe.gpu.type,
            "instance": recipe.gpu.instance,
            "active_params": recipe.result.active_params.count,
        },
        "window": list(record.window),
        "shown": list(record.shown) if record.shown else None,
        "interval": record.interval,
        "steps": [line.as_json() for line in record.steps],
        "runs": [run.as_json() for run in record.runs],
        "median_run": record.median_run,
        "runs_cv_percent": record.runs_cv_percent,
        "result": {k: record.result.get(k) for k in HISTORY_FIELDS},
        "environment": record.environment,
        "stack_differences": list(record.stack_differences),
        "log_tail": list(record.log_tail),
        "history": history,
        **record.extra,
    })


def dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=1, sort_keys=False, allow_nan=False) + "\n"
