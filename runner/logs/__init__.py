"""Training-log parsers: per optimizer step, its time, loss and tokens; the log's dates and failure lines.

One module per format (megatron_log, nemo_log, torchtitan_log, miles_log, engine_log); each declares its name, the
frameworks whose logs it reads and how its lines are recognised (see runner.logs.base). Adding a format is a module
and one entry in FORMATS. The format comes from the first word of the recipe's ``stack.framework`` (:func:`format_for`) or,
for a log of unknown origin, from its lines (:func:`sniff`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from runner.logs.base import (
    EARLIEST_DATE,
    LogError,
    LogParser,
    ParsedLog,
    Step,
    aligned_window,
    check_steps,
    check_window_alignment,
    cv_basis,
    parse_with,
    plausible_date,
    read_lines,
    run_bounds,
    stated_peak_memory,
    stated_stack,
    stated_summary,
    tail,
    timestamp,
)
from runner.logs.engine_log import ENGINE_PREFIX, EngineParser, format_engine_step
from runner.logs.megatron_log import MegatronParser
from runner.logs.miles_log import MilesParser
from runner.logs.nemo_log import NemoParser
from runner.logs.torchtitan_log import TorchtitanParser

# Order: the first format declaring a framework word is that framework's (megatron-bridge -> megatron).
FORMATS: tuple[type[LogParser], ...] = (EngineParser, MegatronParser, NemoParser, TorchtitanParser, MilesParser)
PARSERS: dict[str, type[LogParser]] = {f.name: f for f in FORMATS}
FRAMEWORKS: dict[str, str] = {}
for _format in FORMATS:
    for _word in _format.frameworks:
        FRAMEWORKS.setdefault(_word, _format.name)


def known_formats() -> str:
    return ", ".join(f"{f.name} ({f.label})" for f in FORMATS)


def format_for(framework: str) -> str | None:
    """Parser name for a recipe's stack.framework (its first word), or None when unknown."""
    word = framework.split()[0].strip(",;:").lower() if framework.strip() else ""
    return FRAMEWORKS.get(word)


def compatible(fmt: str, other: str) -> bool:
    """Whether a log in format `other` may stand for a recipe whose framework maps to `fmt`: the two parsers read
    logs of a common framework (Megatron-Bridge runs print Megatron lines or, through NeMo, NeMo lines)."""
    return bool(set(PARSERS[fmt].frameworks) & set(PARSERS[other].frameworks))


def sniff(lines: Iterable[str]) -> str | None:
    """The format of the first recognisable line."""
    for line in lines:
        for f in FORMATS:
            if f.recognises(line):
                return f.name
    return None


def parser(fmt: str, source: str = "<log>") -> LogParser:
    return PARSERS[fmt](source)


def parse_lines(lines: Iterable[str], fmt: str, source: str = "<log>") -> ParsedLog:
    return parse_with(parser(fmt, source), lines)


def _parse_path(path: Path, fmt: str) -> ParsedLog:
    """A log file in format fmt: its lines keep their line ends, so a last line cut short is left out (and said)."""
    return parse_with(parser(fmt, str(path)), read_lines(path), line_ends=True)


def parse_run(path: Path, fmt: str | None, run: int) -> ParsedLog:
    """The run-th run (1-based) of a log that holds several (a restart appended to the log), parsed alone: the log
    is split where it starts again (runner.logs.base.run_bounds). LogError when it holds fewer."""
    whole = parse_file(path, fmt)
    bounds = run_bounds(whole)
    if not 1 <= run <= len(bounds):
        raise LogError(f"{path}: --log-run {run}, but the log holds {len(bounds)} run(s)"
                       + (f" (lines {', '.join(f'{a}-{b}' for a, b in bounds)})" if len(bounds) > 1 else ""))
    first, last = bounds[run - 1]
    source = f"{path} (run {run} of {len(bounds)}: lines {first}-{last})"
    log = parse_with(parser(whole.format, source), read_lines(path), first, last, line_ends=True)
    if not log.steps:
        raise LogError(f"{source}: no {whole.format} training step lines in that run")
    attach_summary(log, (line for n, line in enumerate(read_lines(path), 1) if first <= n <= last))  # run N's own
    return log


def attach_summary(log: ParsedLog, lines: Iterable[str]) -> None:
    """What the run's last summary line states about itself (its stack, its peak memory per GPU), onto `log`: one
    reading for a log parsed from its file and for one parsed live as the run printed it."""
    summary = stated_summary(lines)
    log.stated_stack = stated_stack((), summary)
    log.stated_peak_memory = stated_peak_memory(summary)


def parse_file(path: Path, fmt: str | None) -> ParsedLog:
    """Parses a log; fmt None sniffs it. A log in a format compatible with fmt (a NeMo log for a Megatron-Bridge
    recipe) is read in its own format. Raises LogError when the file is unreadable or has no steps."""
    if path.exists() and not path.is_file():  # a device (/dev/zero), a fifo or a folder: never read as a log
        raise LogError(f"{path}: is not a regular file (a device, a fifo or a folder); pass the training log's file")
    try:
        if fmt is None:
            fmt = sniff(read_lines(path))
            if fmt is None:
                raise LogError(f"{path}: no training step lines of any known format (known: {known_formats()})")
        log = _parse_path(path, fmt)
        if not log.steps:
            other = sniff(read_lines(path))
            if other and other != fmt and compatible(fmt, other):
                log = _parse_path(path, other)
                fmt = other
    except OSError as exc:
        raise LogError(f"{path}: cannot read the log: {exc.strerror}") from None
    if log.steps:
        attach_summary(log, read_lines(path))
    if not log.steps:
        other = sniff(read_lines(path))
        hint = f"; the log looks like the {other} format" if other and other != fmt else f" (known: {known_formats()})"
        raise LogError(f"{path}: no {fmt} training step lines found{hint}")
    return log


__all__ = [
    "EARLIEST_DATE",
    "ENGINE_PREFIX",
    "FORMATS",
    "FRAMEWORKS",
    "PARSERS",
    "LogError",
    "LogParser",
    "ParsedLog",
    "Step",
    "aligned_window",
    "attach_summary",
    "check_steps",
    "check_window_alignment",
    "compatible",
    "cv_basis",
    "format_engine_step",
    "format_for",
    "known_formats",
    "parse_file",
    "parse_lines",
    "parse_run",
    "parser",
    "plausible_date",
    "read_lines",
    "sniff",
    "tail",
    "timestamp",
]
