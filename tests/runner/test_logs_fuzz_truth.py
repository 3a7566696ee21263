"""Fuzz (hypothesis, derandomized, small counts): real logs with lines deleted, duplicated, swapped or cut, read by
every parser (as given, and as a file's lines, where a line cut without its line end is left out), give steps or
a LogError, never another exception; a line left out is never a step; a step's loss is never negative (a placeholder) and
its interval never reaches back before the log's first printed step."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from runner.logs import PARSERS, LogError, parser
from runner.logs.base import parse_with

LOGS = Path(__file__).resolve().parent / "real_logs"
SOURCES = {name: (LOGS / f"{name}.log").read_text(encoding="utf-8").splitlines(keepends=True) for name in (
    "torchtitan_pp16_placeholder_loss", "torchtitan_interval10", "megatron_two_runs_concatenated",
    "megatron_mixtral_16gpu_excerpt", "nemo2_bionemo_undated_excerpt", "torchtitan_eight_ranks_unprefixed")}


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, list[str]]:
    name = draw(st.sampled_from(sorted(SOURCES)))
    lines = list(SOURCES[name])
    for _ in range(draw(st.integers(0, 4))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["delete", "duplicate", "swap", "cut", "ctrl-c"]))
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "swap" and i + 1 < len(lines):
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
        elif op == "cut":
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
        elif op == "ctrl-c":
            lines.insert(i, "^C\n")
    return name, lines


@settings(max_examples=120, derandomize=True, deadline=None)
@given(mutated(), st.sampled_from(sorted(PARSERS)), st.booleans())
def test_mutated_real_logs_parse_or_are_refused(case: tuple[str, list[str]], fmt: str, line_ends: bool) -> None:
    # line_ends: read as a file's lines are, so a line cut without its line end is tested as cut (LogParser.cut)
    name, lines = case
    try:
        log = parse_with(parser(fmt, f"{name}.log"), lines, line_ends=line_ends)
    except LogError:
        return
    if log.cut is not None:  # a line left out is never a step
        assert all(s.line != log.cut for s in log.steps)
    shown = log.shown
    for step in log.steps:
        assert step.loss is None or step.loss >= 0 or step.loss != step.loss  # a negative loss is a placeholder
        assert shown is not None and shown[0] <= step.span[0] <= step.span[1] <= shown[1]
    for restart in log.restarts:
        assert restart.startswith("line ") and int(restart.split()[1].rstrip(":")) <= len(lines)
