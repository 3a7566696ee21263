"""What every log format shares: the step record, the parsed log, the line-by-line parser with the log's own
timestamps, the failure lines of a crashed run, and the checks a window must pass.

A format is a subclass of :class:`LogParser` that declares its ``name``, a ``label`` for messages, the
``frameworks`` (first words of a recipe's ``stack.framework``) whose logs it reads, and how its step lines are
recognised (``step_mark``, ``step_pattern``: the test :func:`runner.logs.sniff` uses); it implements ``_line``.
Adding a format is one module and one entry in ``runner.logs.FORMATS``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path


class LogError(Exception):
    """A log that cannot give figures: too few steps, NaN loss, no steps, a crashed run, an unaligned window."""


@dataclass(frozen=True)
class Step:
    step: int  # 0-based optimizer step
    time_s: float  # the step's time, or the average over the interval one log line stands for
    loss: float | None
    tokens: int | None  # tokens the step trained on, when the log says
    line: int  # 1-based line of the log it came from
    first: int | None = None  # first step of the interval the line averages (None: the line is this step alone)
    last: int | None = None  # last step of that interval
    rate: float | None = None  # the log's own tokens/s per GPU for this step or interval, when it prints one
    grad_norm: float | None = None  # the gradient norm the line prints (NaN or infinite: the run diverged)

    @property
    def span(self) -> tuple[int, int]:
        """The steps the log line behind this step stands for (one step, or a log interval)."""
        return (self.step if self.first is None else self.first, self.step if self.last is None else self.last)


def cv_basis(interval: int | None) -> str:
    """How a step-time CV was computed, for the evidence: from each step's time, or from interval averages."""
    return "per-step" if not interval or interval == 1 else f"interval-average (k={interval})"


@dataclass
class ParsedLog:
    format: str
    steps: list[Step] = field(default_factory=list)
    total_steps: int | None = None  # the run's planned steps, when the log says
    global_batch: int | None = None
    first_time: datetime | None = None  # the log's own timestamps (local wall clock as printed)
    last_time: datetime | None = None
    nccl_version: str | None = None
    lines: int = 0  # the last line read (1-based, the file's own numbering)
    first_line: int = 1  # the first line read (above 1 for one run of a log that holds several)
    source: str = "<log>"
    interval: int | None = None  # steps one printed line stands for (the log interval); 1 for per-step lines
    failure: str | None = None  # "line N: text" of the first failure line after the last step, when the run crashed
    failure_line: int | None = None
    warnings: list[str] = field(default_factory=list)
    first_shown: int | None = None  # the first step the log prints, timed or not (torchtitan's first line has no time)
    # Losses of steps the log shows without a time (torchtitan's first line: step 0's loss, its interval unknown):
    # no figure is made from them; a loss curve (runner convergence) starts there.
    untimed_losses: dict[int, float] = field(default_factory=dict)
    restarts: list[str] = field(default_factory=list)  # "line N: why": signs that the log holds more than one run
    # For each restart: (the line the next run starts on, the last step line of the run before it).
    run_edges: list[tuple[int, int]] = field(default_factory=list)
    failure_lines: list[int] = field(default_factory=list)  # every line with a failure marker
    stated_stack: dict[str, str] = field(default_factory=dict)  # versions the run printed about itself (stated_stack)
    # the run's peak memory per GPU as its summary line states it ({"allocated_gib", "reserved_gib"}), or None
    stated_peak_memory: dict[str, float] | None = None
    cut: int | None = None  # the line left out because it was cut short (a file's last line without its line end)
    # What the run states about its workload (checked against the recipe's), and the line each was stated on.
    seq_length: int | None = None
    world_size: int | None = None  # GPUs (ranks) of the run
    model_params: int | None = None  # the model's parameters as the run counts them
    stated_at: dict[str, int] = field(default_factory=dict)  # attribute name -> line

    @property
    def name(self) -> str:
        """The log as messages that may be committed name it: its file name (and the run of it), never a folder of
        the machine it was read on."""
        return Path(self.source).name

    @property
    def shown(self) -> tuple[int, int] | None:
        """The first and last step the log shows (0-based): a log whose first is above 0 is an excerpt."""
        if not self.steps:
            return None
        first = min(s.span[0] for s in self.steps)
        if self.first_shown is not None:
            first = min(first, self.first_shown)
        return first, max(s.span[1] for s in self.steps)

    def shown_text(self) -> str:
        """The steps the log shows, as it shows them: "steps 0-139, 1020-1139", "step 4"."""
        numbers = {i for s in self.steps for i in range(s.span[0], s.span[1] + 1)}
        if self.first_shown is not None:
            numbers.add(self.first_shown)
        ranges = _ranges(sorted(numbers))
        single = len(ranges) == 1 and ranges[0][0] == ranges[0][1]
        return ("step " if single else "steps ") + _describe(ranges)

    def step_times(self) -> list[float]:
        return [s.time_s for s in self.steps]

    def losses(self) -> list[float | None]:
        return [s.loss for s in self.steps]

    @property
    def wall_seconds(self) -> float | None:
        if self.first_time and self.last_time and self.last_time > self.first_time:
            return (self.last_time - self.first_time).total_seconds()
        return None

    @property
    def measured(self) -> date | None:
        """The date the log states (its last timestamp), or None for a log that prints no date."""
        return self.last_time.date() if self.last_time else None

    @property
    def cv_basis(self) -> str:
        return cv_basis(self.interval)


# A date and time as logs print them: Megatron/miles `[2024-05-01 12:00:00]`, NeMo `[NeMo I 2024-05-01 12:00:00`,
# torchtitan `[titan] 2024-05-01 12:00:00,123`, ISO `2024-05-01T12:00:00+08:00`, torchelastic `2024-05-01_12:00:00`.
_TIMESTAMP = re.compile(r"(?<!\d)(\d{4}-\d\d-\d\d)[ T_](\d\d:\d\d:\d\d)(?:[.,](\d{1,6}))?")
_STAMP_REACH = 96  # a log prefix sits at the start of the line (a Ray actor tag and indentation included)
_NCCL = re.compile(r"NCCL version (\d+\.\d+\.\d+)")

# Lines that say the run (or one of its processes) failed. A traceback before later step lines was survived (a
# warning printed with its stack, e.g. torch._dynamo falling back); the first such line after the last step is
# the run's failure.
_FAILURE_TEXTS = (
    "Traceback (most recent call last)",
    "ChildFailedError",
    "CUDA out of memory",
    "OutOfMemoryError",
    "NCCL error",
    "NCCL communicator was aborted",
    "Watchdog caught collective operation timeout",
    "Segmentation fault",
    "SIGSEGV",
    "srun: error:",
    "failed (exitcode:",
    "CANCELLED AT",
    "KeyboardInterrupt",  # an interrupted run (Ctrl-C) ended early: its end is a failure, not a finish
    "death signal, shutting down workers",  # torchrun passing on SIGINT/SIGTERM
)
_FAILED_SCRIPT = re.compile(r"^\s*\S+ FAILED\s*$")  # torchrun's summary header, e.g. `pretrain_gpt.py FAILED`


# A run's start as frameworks print it once per run (rank 0): a second one after step lines is a second run appended
# to the log (a restart, or two runs concatenated). Megatron-LM's argument summary, torchtitan's first line and its
# trainer, Lightning's (NeMo 2) process-group set-up.
_START_MARKS = ("using world size:", "Starting job:", "Training starts at step", "Initializing distributed: GLOBAL_RANK: 0,")
_WORLD_SIZE = re.compile(r"using world size:\s*(\d+)|MEMBER: \d+/(\d+)")
MAX_RESTARTS_NAMED = 3


def timestamp(line: str) -> datetime | None:
    """The date and time the line is stamped with (timezone dropped: the log's local wall clock), or None."""
    m = _TIMESTAMP.search(line, 0, _STAMP_REACH)
    if not m:
        return None
    text = f"{m.group(1)} {m.group(2)}" + (f".{m.group(3).ljust(6, '0')}" if m.group(3) else "")
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def failure_text(line: str) -> str | None:
    """The line's failure marker text (stripped), or None."""
    if "FAILED" in line and _FAILED_SCRIPT.match(line):
        return line.strip()
    if line.lstrip().startswith("^C"):  # the terminal's echo of Ctrl-C
        return "^C (interrupted)"
    for text in _FAILURE_TEXTS:
        if text in line:
            return line.strip()[:200]
    return None


def float_or_nan(text: str) -> float:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return math.nan


def field_after(text: str, label: str) -> str | None:
    """The value after `label` up to the next `|` (a targeted find: a regex over every field costs ~3x more)."""
    at = text.find(label)
    if at < 0:
        return None
    start = at + len(label)
    end = text.find("|", start)
    return (text[start:] if end < 0 else text[start:end]).strip()


def number_after(text: str, label: str) -> float | None:
    """The number after `label` (field_after): NaN where what stands there is no number, None where `label` is absent."""
    found = field_after(text, label)
    return float_or_nan(found) if found is not None else None


class LogParser:
    name = ""
    label = ""
    frameworks: tuple[str, ...] = ()
    end_mark: str | None = None  # what a whole step line ends with before its line end (None: a number, no mark)
    step_mark: str | None = None  # a text every step line holds (the cheap test before step_pattern)
    step_pattern: re.Pattern[str] | None = None  # what a step line matches (None: holding step_mark tells)

    @classmethod
    def recognises(cls, line: str) -> bool:
        """Whether the line is one of this format's step lines: it holds step_mark and matches step_pattern."""
        if cls.step_mark is None:
            raise NotImplementedError(f"{cls.__name__} declares no step_mark")
        return cls.step_mark in line and (cls.step_pattern is None or cls.step_pattern.search(line) is not None)

    @classmethod
    def reads(cls, line: str) -> bool:
        """Whether a figure could be read from this line (a step line, whole or cut): what a cut line is tested by."""
        return cls.recognises(line)

    @classmethod
    def ends_whole(cls, line: str) -> bool:
        """Whether a step line without its line end still ends as this format's step lines end."""
        return cls.end_mark is not None and line.rstrip().endswith(cls.end_mark)

    def __init__(self, source: str = "<log>") -> None:
        self.log = ParsedLog(self.name, source=source)
        self._steps: dict[int, Step] = {}
        self._failures: list[tuple[int, str]] = []
        self._stamp: datetime | None = None  # the current line's timestamp, for formats that time steps by it
        self._last_step: dict[object, tuple[int, int]] = {}  # stream (a rank) -> (its last step, its line)
        self._step_line = 0  # the line of the latest step line read
        self._world: tuple[int, int] | None = None  # (world size, line) of the run's start banner

    def feed(self, line: str, number: int) -> list[Step]:
        """Consumes one line; returns the steps it completed (for live progress)."""
        self.log.lines = number
        stamp = timestamp(line) if "-" in line else None
        self._stamp = stamp
        if stamp is not None:
            self.log.first_time = self.log.first_time or stamp
            self.log.last_time = stamp
        if "NCCL version" in line and self.log.nccl_version is None:
            m = _NCCL.search(line)
            if m:
                self.log.nccl_version = m.group(1)
        failed = failure_text(line)
        if failed is not None:
            self._failures.append((number, failed))
        if ("Initializing distributed" in line or "using world size" in line or "Training starts at" in line
                or "Starting job:" in line):
            self._start(line, number)
        return self._line(line, number)

    def _state(self, attribute: str, value: int, number: int) -> None:
        """What the run states about its workload (ParsedLog.global_batch, seq_length, world_size, model_params)."""
        setattr(self.log, attribute, value)
        self.log.stated_at[attribute] = number

    def _state_count_after(self, text: str, label: str, attribute: str, number: int) -> None:
        """A count the step line states after `label` (field_after), as _state's `attribute`, where it is a whole
        number (a step line that omits or garbles it states nothing)."""
        found = field_after(text, label)
        if found is not None and found.isdigit():
            self._state(attribute, int(found), number)

    def cut(self, line: str, number: int) -> bool:
        """A line without its line end (a file's last line: the log was copied while the run wrote it, or truncated)
        that would give figures but does not end as this format's step lines end is cut short: left out, never read
        (its last number may be cut, "230.2" read as "23"), and said in the log's warnings. True when left out."""
        if line.endswith("\n") or not self.reads(line) or self.ends_whole(line) or failure_text(line) is not None:
            return False
        self.log.cut = number
        ends = (f"and {self.label} step lines end with '{self.end_mark}'" if self.end_mark else
                f"and {self.label} step lines end with a number, whose end only the line end shows")
        self.log.warnings.append(f"{self.log.name}:{number}: the log's last line is cut short (no line end, {ends}): "
                                 "left out, not read as a step")
        return True

    def _start(self, line: str, number: int) -> None:
        """A start banner: after step lines, a second run in the same log."""
        mark = next((m for m in _START_MARKS if m in line), None)
        if mark is None:
            return
        found = _WORLD_SIZE.search(line)
        size = int(found.group(1) or found.group(2)) if found else None
        if self._step_line and self._world is not None and size is not None and size != self._world[0]:
            self._restart(number, f"a second start with world size {size} (the run up to line {self._step_line} "
                                  f"started with {self._world[0]} at line {self._world[1]})")
        elif self._step_line:
            self._restart(number, f"a second start ('{mark}') after the step lines up to line {self._step_line}")
        if self._step_line:  # the next run counts its steps afresh: its first step is not a second restart
            self._last_step, self._step_line = {}, 0
        if size is not None:
            self._world = (size, number)
            self._state("world_size", size, number)

    def _restart(self, number: int, why: str) -> None:
        self.log.restarts.append(f"line {number}: {why}")
        self.log.run_edges.append((number, self._step_line))

    def _order(self, step: int, number: int, stream: object = None) -> None:
        """Step lines of one run count up; a step below the previous one is a second run (a restart)."""
        last = self._last_step.get(stream)
        if last is not None and step < last[0]:
            self._restart(number, f"the step counter goes back from {last[0]} (line {last[1]}) to {step}")
        self._last_step[stream] = (step, number)
        self._step_line = number

    def _line(self, line: str, number: int) -> list[Step]:
        raise NotImplementedError

    def _add(self, step: Step) -> None:
        # A step printed twice (a restarted run appending to the log) keeps its last value.
        self._steps[step.step] = step

    def _finish_steps(self) -> None:
        """Formats that can only place their lines once the whole log is read (the log interval) do it here."""

    def finish(self) -> ParsedLog:
        self._finish_steps()
        self.log.steps = [self._steps[k] for k in sorted(self._steps)]
        spans = {s.span for s in self.log.steps}
        if spans:
            lengths = [b - a + 1 for a, b in spans]
            self.log.interval = max(set(lengths), key=lengths.count)
        self._place_failures()
        return self.log

    def _place_failures(self) -> None:
        self.log.failure_lines = [number for number, _ in self._failures]
        last_step_line = max((s.line for s in self.log.steps), default=0)
        for number, text in self._failures:
            if number > last_step_line:
                self.log.failure, self.log.failure_line = f"line {number}: {text}", number
                return
        survived = [(n, t) for n, t in self._failures if n <= last_step_line]
        if survived:
            n, t = survived[0]
            self.log.warnings.append(
                f"{self.log.name}:{n}: {t[:120]} (a failure line, but training printed steps after it: not counted as a crash)"
            )


MAX_LINE_CHARS = 1 << 20  # a log line longer than this is read in pieces (no line of a training log is this long)


# A compressed file by its first bytes: the ones Python reads are read through (a log kept as run.log.gz), the
# others refused by name.
_READ_COMPRESSED = {b"\x1f\x8b": "gzip", b"BZh": "bzip2", b"\xfd7zXZ\x00": "xz"}
_OTHER_COMPRESSED = {b"\x28\xb5\x2f\xfd": "zstd", b"PK\x03\x04": "zip", b"7z\xbc\xaf\x27\x1c": "7z"}


def compression(path: Path) -> str | None:
    """The compression a file's first bytes show ("gzip", "zstd", ...), or None for a plain file."""
    with path.open("rb") as handle:
        head = handle.read(6)
    return next((name for magic, name in {**_READ_COMPRESSED, **_OTHER_COMPRESSED}.items() if head.startswith(magic)),
                None)


def read_lines(path: Path) -> Iterator[str]:
    """The log's lines, a gzip, bzip2 or xz file decompressed as it is read (another compression is refused by
    name); a line over MAX_LINE_CHARS comes in pieces, so a file without newlines (a binary, a device) never has to
    fit in memory as one line."""
    kind = compression(path) if path.is_file() else None
    if kind is None:
        with path.open("r", encoding="utf-8", errors="replace") as handle:
            while line := handle.readline(MAX_LINE_CHARS):
                yield line
        return
    if kind not in _READ_COMPRESSED.values():
        raise LogError(f"{path}: a {kind}-compressed file, not a text log: decompress it and pass the log itself")
    import bz2
    import gzip
    import lzma
    import zlib

    opener = {"gzip": gzip.open, "bzip2": bz2.open, "xz": lzma.open}[kind]
    try:
        with opener(path, "rt", encoding="utf-8", errors="replace") as handle:
            while line := handle.readline(MAX_LINE_CHARS):
                yield line
    except (EOFError, OSError, zlib.error, lzma.LZMAError) as exc:
        raise LogError(f"{path}: a {kind}-compressed log that is cut or damaged ({exc}); nothing of it is read") from None


# The summary line a run of ours ends with: runner/frameworks/* print `openrecipes-framework {json}` (framework and
# torch versions), the bundled engine `openrecipes-engine {json}` (its "versions" and "gpu_name").
SUMMARY_PREFIXES = ("openrecipes-framework ", "openrecipes-engine ")
_SUMMARY_KEYS = {"python": "python", "torch": "pytorch", "cuda": "cuda", "nccl": "nccl", "megatron_core": "megatron_core"}


def stated_summary(lines: Iterable[str]) -> dict:
    """The last summary line a run of ours printed (its JSON object), or {} for a log without one."""
    import json

    last = None
    for line in lines:
        if line.startswith(SUMMARY_PREFIXES):
            last = line
    if last is None:
        return {}
    try:
        data = json.loads(last.split(" ", 1)[1])
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def stated_peak_memory(summary: dict) -> dict[str, float] | None:
    """The run's peak memory per GPU from its summary line ({"allocated_gib", "reserved_gib"}, each a positive
    finite number or left out), or None where the line states none."""
    peak = summary.get("peak_memory")
    if not isinstance(peak, dict):
        return None
    out = {}
    for key in ("allocated_gib", "reserved_gib"):
        value = peak.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value > 0:
            out[key] = float(value)
    return out or None


def stated_stack(lines: Iterable[str], summary: dict | None = None) -> dict[str, str]:
    """The stack a run printed about itself in its last summary line, as environment keys (framework "name version",
    pytorch, python, cuda, nccl, megatron_core, gpu_name); {} for a log without one (any other framework's)."""
    data = stated_summary(lines) if summary is None else summary
    if not data:
        return {}
    versions = data.get("versions") if isinstance(data.get("versions"), dict) else data
    out = {key: str(versions[name]) for name, key in _SUMMARY_KEYS.items() if versions.get(name) not in (None, "")}
    name = data.get("framework")
    if isinstance(name, str) and data.get(name) not in (None, ""):
        out["framework"] = f"{name} {data[name]}"
    if isinstance(data.get("gpu_name"), str):
        out["gpu_name"] = data["gpu_name"]
    return out


def parse_with(parser: LogParser, lines: Iterable[str], first: int = 1, last: int | None = None,
               line_ends: bool = False) -> ParsedLog:
    """The parsed log; with first/last, only the lines first..last (1-based, the log's own numbers kept). With
    line_ends (lines read from a file, each with its line end), a line without one is tested as cut (LogParser.cut)."""
    parser.log.first_line = first
    for number, line in enumerate(lines, 1):
        if number < first:
            continue
        if last is not None and number > last:
            break
        if line_ends and parser.cut(line, number):
            continue
        parser.feed(line, number)
    return parser.finish()


def run_bounds(log: ParsedLog) -> list[tuple[int, int]]:
    """The lines of each run in a log that holds several, first to last: each run's own lines only. A run ends at
    its last step line, or at the last failure line after it (its crash); the next run starts where its start was
    seen (its start banner, or its first step line when the step counter went back). The lines between (the next
    run's set-up before that, or the first run's closing lines) are neither run's: no date, banner or GPU-hour of
    one run is taken from them."""
    bounds, first = [], 1
    for start, last_step in sorted(log.run_edges):
        end = max([last_step, *(n for n in log.failure_lines if last_step < n < start)])
        if end >= first:
            bounds.append((first, end))
        first = start
    bounds.append((first, log.lines))
    return bounds


def _ranges(numbers: list[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for n in numbers:
        if out and out[-1][1] == n - 1:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return out


def _describe(ranges: list[tuple[int, int]]) -> str:
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in ranges[:5]) + (" ..." if len(ranges) > 5 else "")


def aligned_window(log: ParsedLog, window: tuple[int, int]) -> tuple[int, int] | None:
    """The nearest window whose ends fall on the boundaries of the log's lines (None when none is left)."""
    spans = sorted({s.span for s in log.steps})
    starts = [a for a, _ in spans]
    ends = [b for _, b in spans]
    first, last = window
    start = min(starts, key=lambda a: (abs(a - first), -a))  # a tie goes to the later start (less warm-up)
    end = min(ends, key=lambda b: (abs(b - last), -b))
    return (start, end) if start <= end else None


def check_window_alignment(log: ParsedLog, window: tuple[int, int]) -> None:
    """A window must start and end on the log's line boundaries: one Megatron line with --log-interval k averages
    k steps, so a window that cuts an interval would take the whole interval's average for its part of it."""
    first, last = window
    steps = {s.step: s for s in log.steps}
    head, tail_ = steps[first].span, steps[last].span
    if head[0] == first and tail_[1] == last:
        return
    cut = head if head[0] != first else tail_
    where = "starts" if head[0] != first else "ends"
    line = steps[first].line if head[0] != first else steps[last].line
    near = aligned_window(log, window)
    hint = f"; the nearest aligned window is [{near[0]}, {near[1]}]" if near else ""
    raise LogError(
        f"{log.source}:{line}: the window [{first}, {last}] {where} inside steps {cut[0]}-{cut[1]}, which the log "
        f"prints as one averaged line (log interval {cut[1] - cut[0] + 1}){hint}"
    )


def diverged(log: ParsedLog, s: Step) -> None:
    """A NaN or infinite loss or gradient norm on a step's line: the run diverged (LogError naming the line)."""
    for what, value in (("loss", s.loss), ("gradient norm", s.grad_norm)):
        if value is not None and not math.isfinite(value):
            a, b = s.span
            steps = f"step {a}" if a == b else f"steps {a}-{b} (one averaged line)"
            raise LogError(f"{log.source}:{s.line}: the {what} at {steps} is {value}: the run diverged; nothing written")


def check_steps(log: ParsedLog, window: tuple[int, int], expected_steps: int | None = None) -> None:
    """Refuses a log that cannot give the window's figures (raises LogError with the reason). Steps the log does
    not show are never filled in: a gap in the window is refused with the missing range."""
    first, last = window
    steps = {s.step: s for s in log.steps}
    if not steps:
        raise LogError(f"{log.source}: no training steps in the log")
    count = max(steps) + 1
    if last >= count:
        end = (f"its last line ({log.cut}) was cut short and left out" if log.cut is not None else
               "the log ends before it (see its end)")
        raise LogError(
            f"{log.source}: too few steps: the log has steps {min(steps)}-{count - 1} but the window [{first}, {last}] needs "
            f"step {last}; {end}"
        )
    missing = [i for i in range(first, last + 1) if i not in steps]
    if missing:
        gaps = _ranges(missing)
        raise LogError(
            f"{log.source}: the window [{first}, {last}] lacks steps {_describe(gaps)} ({len(missing)} steps the log "
            "does not show; they are never filled in from neighbouring lines)"
        )
    check_window_alignment(log, window)
    for i in range(0, last + 1):  # a divergence before the window still makes the run unusable
        s = steps.get(i)
        if s is not None:
            diverged(log, s)
    for i in range(first, last + 1):
        s = steps[i]
        if not math.isfinite(s.time_s) or s.time_s <= 0:
            raise LogError(f"{log.source}:{s.line}: step {i} has step time {s.time_s} s (must be a positive number)")
    if expected_steps is not None and log.total_steps is not None and log.total_steps != expected_steps:
        raise LogError(
            f"{log.source}: the log's run has {log.total_steps} steps but the recipe's steps_per_run is {expected_steps}"
        )


EARLIEST_DATE = date(2019, 1, 1)  # before any stack a recipe here names (Megatron-LM's first release is 2019)


def plausible_date(d: date, today: date | None = None, source: str = "the log") -> date:
    """d when it lies in [2019-01-01, today]; else LogError (a clock reset to 1970, a typo'd 2099)."""
    today = today or date.today()
    if d < EARLIEST_DATE or d > today:
        raise LogError(
            f"{source} is dated {d.isoformat()}, outside [{EARLIEST_DATE.isoformat()}, {today.isoformat()}]: a wrong "
            "clock on the measuring machine? pass --measured YYYY-MM-DD with the real date"
        )
    return d


def tail(path: Path, lines: int = 40, first: int = 1, last: int | None = None) -> list[str]:
    """The last lines of a log (for the evidence file); with first/last, of its lines first..last (one run's)."""
    try:
        compressed = path.is_file() and compression(path) is not None
    except OSError:
        return []
    if first > 1 or last is not None or compressed:
        from collections import deque

        kept: deque[str] = deque(maxlen=lines)
        try:
            for number, line in enumerate(read_lines(path), 1):
                if last is not None and number > last:
                    break
                if number >= first:
                    kept.append(line.rstrip("\r\n"))
        except (OSError, LogError):
            return []
        return list(kept)
    try:
        with path.open("rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - 64 * 1024))
            data = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return []
    return [ln.rstrip("\r") for ln in data.splitlines()[-lines:]]
