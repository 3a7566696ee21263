"""Property-based mutation fuzzing of `generator check` (issue 15, item 8).

Committed recipes (the reference, an H200 engine recipe with its evidence sidecar, imported Megatron-Bridge rows)
are mutated at the text level (lines deleted, duplicated, swapped or re-indented; YAML tags; control characters
and other unicode; huge numbers; deep nesting; a scalar replaced by a value of another type; bad encodings;
truncation) and at the data level (a field's value replaced by another type, a key dropped, an unknown key
added). Every mutant is checked in-process, against a temporary registry holding a copy of catalog/ and the mutant
at its own path, and must give:

- no exception (no traceback) and an answer within a hard deadline (no hang);
- problems that are each one line, `path:line:col: field: message`, at a line that exists in the file;
- what an independent oracle here says for a few consistency invariants: a stated MFU away from
  6 x N x tokens/s / peak is reported, a GPU count the layout does not multiply to is reported, a dropped
  required key and an unknown key are reported at their field, a changed global batch that no longer gives the
  stated window tokens is reported, a control character is reported at its own line.

The oracle reads the catalog, the committed schema and PyYAML's own node marks: not generator's code.

Bounded for CI (derandomized, so every run tries the same mutants): about a minute on a laptop core. Set
OPENRECIPES_FUZZ_SCALE (e.g. 10) for a longer local run. What it found on the first runs (unbuildable tags,
4,301-digit integers, deep nesting, control characters at 1:1, lines past the end of a file) is fixed in
generator/load.py and kept as corpus cases; a new finding fails here with hypothesis' minimal example.
"""

from __future__ import annotations

import copy
import datetime as dt
import os
import re
import shutil
import signal
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from suitehelpers import ROOT

from generator.check import check_tree, format_problems
from generator.problems import Problem
from generator.registry import CatalogMemo

pytestmark = pytest.mark.slow

# A varied sample: the reference (verified, measured, correctness block), an H200 engine recipe with an evidence
# sidecar, and imported (reported) rows: a small MoE at FP8, a large MoE with MTP, a dense BF16 and a 1,024-GPU FP8.
SAMPLE = (
    "recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml",
    "recipes/llama-3.2-1b/h200/engine-sdpa-4k.yaml",
    "recipes/qwen3-30b-a3b/h100/mb-25.11-dgx-h100-16gpu-fp8-cs.yaml",
    "recipes/deepseek-v3/b200/mb-26.02-dgx-b200-256gpu-fp8-mx.yaml",
    "recipes/gpt-oss-120b/b200/mb-26.02-dgx-b200-64gpu-bf16.yaml",
    "recipes/llama-3.1-405b/h100/mb-26.02-dgx-h100-1024gpu-fp8-cs.yaml",
)
SAMPLE_TEXT = {rel: (ROOT / rel).read_text(encoding="utf-8") for rel in SAMPLE}
_SAMPLE_DATA = {rel: yaml.safe_load(text) for rel, text in SAMPLE_TEXT.items()}  # parsed once, not per example
SCHEMA = yaml.safe_load((ROOT / "schema/recipe.schema.yaml").read_text(encoding="utf-8"))
GPUS = yaml.safe_load((ROOT / "catalog/gpus.yaml").read_text(encoding="utf-8"))

SCALE = float(os.environ.get("OPENRECIPES_FUZZ_SCALE", "1"))
HARD_DEADLINE_S = 20.0  # one check of one recipe takes milliseconds; anything near this is a hang


def sample_data(rel: str) -> Any:
    """A sample recipe as data (yaml.safe_load of its text), a copy of its own to change."""
    return copy.deepcopy(_SAMPLE_DATA[rel])


def fuzz_settings(examples: int) -> settings:
    """Reproducible in CI (derandomize, no example database); a per-example deadline catches slow paths."""
    return settings(max_examples=max(1, int(examples * SCALE)), deadline=dt.timedelta(seconds=5), derandomize=True,
                    database=None, print_blob=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


# --- the temporary registry and one check ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """catalog/ and the sample's evidence sidecars; each example writes its mutant at the recipe's own path."""
    root = tmp_path_factory.mktemp("fuzz-registry")
    shutil.copytree(ROOT / "catalog", root / "catalog")
    for rel in SAMPLE:
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        sidecar = (ROOT / rel).with_name(Path(rel).stem + ".evidence.json")
        if sidecar.exists():
            shutil.copyfile(sidecar, target.with_name(sidecar.name))
    yield root
    # The count of mutants run (pytest -s shows it): the figure CI's time budget is set by.
    print(f"\nfuzzer: {RAN['mutants']} mutants checked")


class Hang(Exception):
    """The check ran past the hard deadline."""


@contextmanager
def hard_deadline(seconds: float) -> Iterator[None]:
    """SIGALRM interrupts a check that never returns (hypothesis' own deadline only judges finished calls)."""
    def expire(signum: int, frame: object) -> None:
        raise Hang(f"check did not finish within {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


RAN = {"mutants": 0}  # reported at the end of the module (pytest -s shows it)
CATALOG = CatalogMemo()  # the temporary registries' catalog, read again only when its files change


def check_mutant(root: Path, rel: str, mutant: bytes) -> list[Problem]:
    """Writes the mutant at `rel` and checks that file alone, in-process; asserts the output's form."""
    target = root / rel
    target.write_bytes(mutant)
    RAN["mutants"] += 1
    with hard_deadline(HARD_DEADLINE_S):
        run = check_tree(root, [target], use_cache=False, catalog_memo=CATALOG)
    assert_well_formed(run.problems, rel, mutant)
    return run.problems


# --- the output's form ----------------------------------------------------------------------------------------

# YAML's line breaks (PyYAML counts NEL, LS and PS too): the last line is the one after the final break, where an
# editor puts the end of the file.
_BREAKS = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
_PROBLEM_LINE = re.compile(r"^(?P<path>[^\n]+?):(?P<line>[0-9]+):(?P<col>[0-9]+): (?P<field>[^ ][^\n]*?): (?P<msg>\S.*)$")
# What may not appear in a problem line: other controls (escape sequences), line and paragraph separators.
_NOT_IN_ONE_LINE = {"Cc", "Zl", "Zp"}


def file_lines(mutant: bytes) -> int:
    return len(_BREAKS.split(mutant.decode("utf-8", errors="replace")))


def assert_well_formed(problems: list[Problem], rel: str, mutant: bytes) -> None:
    last = file_lines(mutant)
    for problem in problems:
        text = str(problem)
        bad = sorted({f"U+{ord(c):04X}" for c in text if unicodedata.category(c) in _NOT_IN_ONE_LINE})
        assert not bad, f"control or line-breaking characters {bad} in the problem line {text!r}"
        match = _PROBLEM_LINE.match(text)
        assert match, f"not `path:line:col: field: message`: {text!r}"
        assert problem.path == rel, f"problem names {problem.path!r}, not the mutant {rel!r}"
        assert 1 <= problem.line <= last, f"line {problem.line} outside the file's {last} lines: {text!r}"
        assert problem.col >= 1, text
        assert problem.field and problem.message.strip(), text
    rendered = format_problems(problems, "text")
    assert len(rendered.splitlines()) == len(problems), "a problem spans more than one line:\n" + rendered


# --- where scalars are (PyYAML's node marks, not generator.load) ------------------------------------------------


@dataclass(frozen=True)
class Span:
    path: tuple[str | int, ...]
    start: int  # character offsets of the value node in the text
    end: int
    scalar: bool


def spans(text: str) -> list[Span]:
    """Every value node of a document with its path and character span."""
    found: list[Span] = []

    def walk(node: yaml.Node, path: tuple[str | int, ...]) -> None:
        found.append(Span(path, node.start_mark.index, node.end_mark.index, isinstance(node, yaml.ScalarNode)))
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                walk(value, (*path, key.value))
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                walk(item, (*path, i))

    walk(yaml.compose(text, Loader=yaml.SafeLoader), ())
    return found[1:]


SPANS = {rel: spans(text) for rel, text in SAMPLE_TEXT.items()}


def span_at(rel: str, *path: str | int) -> Span:
    return next(s for s in SPANS[rel] if s.path == path)


def splice(text: str, span: Span, value: str) -> str:
    """The text with one value node replaced (a block collection up to the next key, so a line break follows)."""
    return text[:span.start] + value + ("" if span.scalar else "\n") + text[span.end:]


def field_name(path: tuple[str | int, ...]) -> str:
    """A field as problems name it: dotted keys, [i] for list items."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


# --- text-level mutations ---------------------------------------------------------------------------------------

TAGS = ["!!int", "!!float", "!!bool", "!!null", "!!str", "!!binary", "!!timestamp", "!!map", "!!seq", "!!set",
        "!!omap", "!!pairs", "!!merge", "!!python/object/apply:os.system", "!custom", "!<tag:yaml.org,2002:int>", "!"]
OTHER_TYPES = ["[]", "{}", "~", "null", "true", "yes", "no", "on", "'text'", "[1, 2]", "{a: 1}", "2026-01-01",
               "2026-01-01T00:00:00Z", "0:20", "0200", "0b101", "0o17", "0x1F", "1.5", "-3", "0", '""', "''",
               "!!binary aGVsbG8=", "|\n  block text", ">-\n  folded", "&anchor x", "*anchor", "- a\n- b",
               "? complex\n: key", "-", "?", ":", "@", "`", "%", "'unterminated", '"unterminated', "[unclosed", "{a: "]
HUGE_NUMBERS = ["9" * 19, "9" * 20, "9" * 309, "9" * 4300, "9" * 4301, "9" * 20000, "1e309", "-1e309", "1e-400",
                ".inf", "-.inf", ".nan", ".NaN", "0x" + "f" * 64, "1" + "0" * 400 + ".5", "-0", "+12", "1_000_000",
                "1e18", "-9223372036854775809", "18446744073709551616", "4.9e-324", "1.7976931348623157e308"]
CONTROLS = [chr(c) for c in range(32) if c not in (9, 10, 13)] + ["\t", "\r", "\x7f", "\x85", "\u2028", "\u2029",
                                                                  "\ufeff", "\u202e", "\x1b[31m", "\x1b]0;x\x07"]
FORGED = ['"\\x1b[2J\\x1b[31mred"', '"a\\nrecipes/x.yaml:1:1: model: forged"', '"\\r\\x00\\x07\\x08"',
          '"\\u2028line\\u2029para\\x85nel"', '"\\e[0m\\N\\_\\L\\P"']


@st.composite
def unicode_value(draw: st.DrawFn) -> str:
    text = draw(st.text(st.characters(blacklist_categories=("Cs",)), max_size=40))
    return draw(st.sampled_from([text, yaml.safe_dump(text, allow_unicode=True).removesuffix("\n...\n").strip(),
                                 '"' + text.encode("unicode_escape").decode("ascii").replace('"', '\\"') + '"']))


@st.composite
def nested_value(draw: st.DrawFn) -> str:
    depth = draw(st.integers(min_value=20, max_value=3000))
    style = draw(st.sampled_from(["seq", "map", "mixed", "block"]))
    if style == "seq":
        return "[" * depth + "]" * depth
    if style == "map":
        return "{a: " * depth + "1" + "}" * depth
    if style == "mixed":
        return "[{a: " * (depth // 2) + "1" + "}]" * (depth // 2)
    depth = min(depth, 400)  # block nesting grows quadratically in bytes
    return "\n" + "".join(" " * (2 * i + 2) + "a:\n" for i in range(depth)) + " " * (2 * depth + 2) + "1"


VALUE_KINDS: dict[str, Callable[[], st.SearchStrategy[str]]] = {
    "types": lambda: st.sampled_from(OTHER_TYPES),
    "numbers": lambda: st.sampled_from(HUGE_NUMBERS),
    "nesting": nested_value,
    "unicode": lambda: st.one_of(unicode_value(), st.sampled_from(FORGED)),
}


@st.composite
def value_edit(draw: st.DrawFn, rel: str, text: str, kinds: list[str]) -> tuple[Span, str]:
    span = draw(st.sampled_from(SPANS[rel]))
    kind = draw(st.sampled_from(kinds))
    if kind == "tags":
        return span, draw(st.sampled_from(TAGS)) + " " + (text[span.start:span.end] if span.scalar else "")
    return span, draw(VALUE_KINDS[kind]())


def apply_value_edits(text: str, edits: list[tuple[Span, str]]) -> str:
    """Non-overlapping edits, applied from the end so earlier offsets stay valid."""
    done: list[Span] = []
    for span, value in sorted(edits, key=lambda e: e[0].start, reverse=True):
        if any(span.start < d.end and d.start < span.end for d in done):
            continue
        text = splice(text, span, value)
        done.append(span)
    return text


@st.composite
def line_edit(draw: st.DrawFn, lines: list[str]) -> list[str]:
    if not lines:
        return lines
    i = draw(st.integers(0, len(lines) - 1))
    op = draw(st.sampled_from(["delete", "duplicate", "swap", "indent", "tab", "control"]))
    out = list(lines)
    if op == "delete":
        del out[i]
    elif op == "duplicate":
        out.insert(i, out[i])
    elif op == "swap":
        j = draw(st.integers(0, len(lines) - 1))
        out[i], out[j] = out[j], out[i]
    elif op == "indent":
        delta = draw(st.integers(-4, 4))
        stripped = out[i].lstrip(" ")
        out[i] = " " * max(0, len(out[i]) - len(stripped) + delta) + stripped
    elif op == "tab":
        out[i] = "\t" + out[i]
    else:
        at = draw(st.integers(0, len(out[i])))
        out[i] = out[i][:at] + draw(st.sampled_from(CONTROLS)) + out[i][at:]
    return out


@st.composite
def encoding_edit(draw: st.DrawFn, text: str) -> bytes:
    op = draw(st.sampled_from(["bad-byte", "bom", "utf16", "crlf", "cr", "latin1"]))
    raw = text.encode("utf-8")
    if op == "bad-byte":
        at = draw(st.integers(0, len(raw)))
        return raw[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x00"])) + raw[at:]
    if op == "bom":
        return b"\xef\xbb\xbf" + raw
    if op == "utf16":
        return text.encode("utf-16")
    if op == "crlf":
        return raw.replace(b"\n", b"\r\n")
    if op == "cr":
        return raw.replace(b"\n", b"\r")
    return text.replace("Gemma", "Gemmä").encode("latin-1", errors="replace")


class Mutant:
    """A mutated recipe. Not a dataclass: hypothesis prints a failing example by this repr (the edits), not 20 KB of
    YAML."""

    def __init__(self, rel: str, data: bytes, how: str) -> None:
        self.rel, self.data, self.how = rel, data, how

    def __repr__(self) -> str:
        return f"Mutant({self.rel!r}, {self.how})"


@st.composite
def text_mutant(draw: st.DrawFn, family: str) -> Mutant:
    rel = draw(st.sampled_from(SAMPLE))
    text = SAMPLE_TEXT[rel]
    how: list[str] = []
    kinds = {"mixed": ["types", "numbers", "nesting", "unicode", "tags"]}.get(family, [family])
    if family in VALUE_KINDS or family in ("tags", "mixed"):
        n = draw(st.integers(1, 3 if family == "mixed" else 2))
        edits = [draw(value_edit(rel, text, kinds)) for _ in range(n)]
        how += [f"{field_name(s.path)}<-{v[:60]!r}" for s, v in edits]
        text = apply_value_edits(text, edits)
    if family in ("lines", "mixed"):
        lines = text.splitlines(keepends=True)
        for _ in range(draw(st.integers(1 if family == "lines" else 0, 4))):
            lines = draw(line_edit(lines))
        how.append("line edits")
        text = "".join(lines)
    raw = text.encode("utf-8")
    if family == "encoding":
        raw = draw(encoding_edit(text))
        how.append("encoding")
    if family in ("truncate", "mixed") and (family == "truncate" or draw(st.booleans())):
        at = draw(st.integers(0, len(raw)))
        raw = raw[:at]
        how.append(f"truncated at byte {at}")
    return Mutant(rel, raw, "; ".join(how))


# --- data-level mutations ---------------------------------------------------------------------------------------

ANY_VALUE = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), st.text(max_size=20),
              st.dates()),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=6,
)


def data_paths(data: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    yield path, data
    if isinstance(data, dict):
        for key, value in data.items():
            yield from data_paths(value, (*path, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from data_paths(value, (*path, i))


def get(data: Any, path: tuple[str | int, ...]) -> Any:
    for part in path:
        data = data[part]
    return data


# libyaml's emitter where PyYAML has it: the same data, written several times faster than by the pure-Python one
# (with the catalog memo's cheaper stamps: this file 17.2 -> 11.6 s of CPU); the loader under test reads either.
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def dump(data: Any) -> bytes:
    return yaml.dump(data, Dumper=_DUMPER, sort_keys=False, allow_unicode=True, width=120).encode("utf-8")


@st.composite
def data_mutant(draw: st.DrawFn, family: str) -> tuple[Mutant, tuple[str | int, ...]]:
    """A recipe changed in one place, re-dumped; returns the changed path too."""
    rel = draw(st.sampled_from(SAMPLE))
    data = sample_data(rel)
    paths = list(data_paths(data))
    if family == "types":
        path = draw(st.sampled_from([p for p, _ in paths if p]))
        value = draw(ANY_VALUE)
        get(data, path[:-1])[path[-1]] = value
        how = f"{field_name(path)}<-{value!r:.60}"
    elif family == "drop":
        path = draw(st.sampled_from([p for p, _ in paths if p and isinstance(p[-1], str)]))
        del get(data, path[:-1])[path[-1]]
        how = f"dropped {field_name(path)}"
    else:  # unknown key, anywhere a mapping is
        parent = draw(st.sampled_from([p for p, v in paths if isinstance(v, dict)]))
        key = draw(st.text(min_size=1, max_size=16))
        mapping = get(data, parent)
        if key in mapping:
            key = "x_" + key
        mapping[key] = draw(ANY_VALUE)
        path = (*parent, key)
        how = f"added {field_name(path)!r}"
    return Mutant(rel, dump(data), how), path


# --- the schema as an oracle: required and known keys -----------------------------------------------------------


def schema_object(path: tuple[str | int, ...]) -> dict[str, Any] | None:
    """The committed schema's object definition at a data path (list items and nullable unions resolved)."""
    node: dict[str, Any] = SCHEMA
    for part in path:
        node = _resolve(node)
        if isinstance(part, int):
            node = node.get("items", {})
        else:
            props = node.get("properties", {})
            if part not in props:
                return None
            node = props[part]
    node = _resolve(node)
    return node if node.get("type") == "object" else None


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    while True:
        if "$ref" in node:
            node = SCHEMA["$defs"][node["$ref"].rsplit("/", 1)[-1]]
        elif "anyOf" in node:
            branches = [b for b in node["anyOf"] if b.get("type") != "null"]
            if len(branches) != 1:
                return node
            node = branches[0]
        else:
            return node


def is_required(path: tuple[str | int, ...]) -> bool:
    parent = schema_object(path[:-1])
    return parent is not None and path[-1] in parent.get("required", [])


def is_closed_object(path: tuple[str | int, ...]) -> bool:
    parent = schema_object(path)
    return parent is not None and parent.get("additionalProperties") is False


# --- the families -----------------------------------------------------------------------------------------------

TEXT_FAMILIES = ["lines", "types", "numbers", "nesting", "unicode", "tags", "encoding", "truncate", "mixed"]
EXAMPLES = {"lines": 300, "types": 250, "numbers": 150, "nesting": 120, "unicode": 250, "tags": 200, "encoding": 100,
            "truncate": 200, "mixed": 400}


def test_the_sample_passes_unchanged(registry: Path) -> None:
    """The invariants below compare against a clean baseline."""
    for rel, text in SAMPLE_TEXT.items():
        assert check_mutant(registry, rel, text.encode("utf-8")) == [], rel


@pytest.mark.parametrize("family", TEXT_FAMILIES)
def test_text_mutants_get_problems_not_tracebacks(registry: Path, family: str) -> None:
    @fuzz_settings(EXAMPLES[family])
    @given(text_mutant(family))
    def run(mutant: Mutant) -> None:
        check_mutant(registry, mutant.rel, mutant.data)

    run()


@pytest.mark.parametrize("family", ["data-types", "data-drop", "data-unknown"])
def test_data_mutants_get_problems_not_tracebacks(registry: Path, family: str) -> None:
    kind = family.removeprefix("data-")

    @fuzz_settings(250)
    @given(data_mutant(kind))
    def run(case: tuple[Mutant, tuple[str | int, ...]]) -> None:
        mutant, path = case
        problems = check_mutant(registry, mutant.rel, mutant.data)
        if kind == "drop" and is_required(path):
            assert field_name(path) in {p.field for p in problems}, f"{mutant}: required key dropped, not reported"
        if kind == "unknown" and is_closed_object(path[:-1]):
            assert problems, f"{mutant}: an unknown key passed"

    run()


# --- consistency invariants with an independent oracle ----------------------------------------------------------


def oracle_mfu(rel: str) -> float:
    """6 x N x tokens/s / peak: the precision's peak for a reported row, BF16 for a measured one (methodology)."""
    data = sample_data(rel)
    res = data["result"]
    family = {"bf16": "bf16", "fp16": "bf16", "fp32": "bf16", "fp8-cs": "fp8", "fp8-mx": "fp8", "fp8-ds": "fp8",
              "nvfp4": "fp4"}[data["workload"]["precision"]] if data["status"] == "reported" else "bf16"
    peak = float(GPUS[data["gpu"]["type"]]["peak_flops"][family])
    return 6 * res["active_params"]["count"] * res["tokens_per_s_per_gpu"] / peak


WITH_MFU = [rel for rel in SAMPLE if sample_data(rel)["result"].get("mfu") is not None]


def test_the_oracle_agrees_with_the_committed_figures() -> None:
    for rel in WITH_MFU:
        stated = sample_data(rel)["result"]["mfu"]
        assert abs(oracle_mfu(rel) - stated) < 5e-5, (rel, oracle_mfu(rel), stated)


@fuzz_settings(150)
@given(rel=st.sampled_from(WITH_MFU), mfu=st.one_of(st.none(), st.floats(0, 1.5)), places=st.integers(1, 6))
def test_a_stated_mfu_off_the_formula_is_reported(registry: Path, rel: str, mfu: float | None, places: int) -> None:
    """Any MFU: reported when more than 1e-3 from the formula; the formula's own value (mfu None), written to
    4 or more decimals, passes."""
    places = max(places, 4) if mfu is None else places
    text = f"{oracle_mfu(rel) if mfu is None else mfu:.{places}f}"
    problems = check_mutant(registry, rel, splice(SAMPLE_TEXT[rel], span_at(rel, "result", "mfu"), text)
                            .encode("utf-8"))
    off = abs(float(text) - oracle_mfu(rel))
    mfu_problems = [p for p in problems if p.field == "result.mfu"]
    if off > 1e-3:
        assert mfu_problems, f"{rel}: mfu {text} is {off:.4f} from 6NT/peak, not reported"
    if mfu is None:
        assert not mfu_problems, f"{rel}: mfu {text} is the formula's value, reported: {mfu_problems}"


@fuzz_settings(150)
@given(rel=st.sampled_from(SAMPLE), count=st.integers(1, 100_000))
def test_a_gpu_count_the_layout_does_not_give_is_reported(registry: Path, rel: str, count: int) -> None:
    data = sample_data(rel)
    lay = data["layout"]
    product = lay["tp"] * lay["pp"] * lay.get("cp", 1) * lay["dp"]
    problems = check_mutant(registry, rel, splice(SAMPLE_TEXT[rel], span_at(rel, "gpu", "count"), str(count))
                            .encode("utf-8"))
    layout_problems = [p for p in problems if p.field.startswith("layout.")]
    if count != product:
        assert layout_problems, f"{rel}: gpu.count {count} against tp x pp x cp x dp = {product}, not reported"
    else:
        assert not problems, problems


WITH_WINDOW = [rel for rel in SAMPLE if sample_data(rel)["result"].get("window_tokens")]


@fuzz_settings(100)
@given(rel=st.sampled_from(WITH_WINDOW), global_batch=st.integers(1, 1 << 20))
def test_a_global_batch_that_changes_the_window_tokens_is_reported(registry: Path, rel: str,
                                                                    global_batch: int) -> None:
    data = sample_data(rel)
    first, last = data["result"]["window"]
    implied = (last - first + 1) * global_batch * data["workload"]["row_tokens"]
    problems = check_mutant(registry, rel, splice(SAMPLE_TEXT[rel], span_at(rel, "workload", "global_batch"),
                                                  str(global_batch)).encode("utf-8"))
    if implied != data["result"]["window_tokens"]:
        assert "result.window_tokens" in {p.field for p in problems}, \
            f"{rel}: global batch {global_batch} gives {implied} window tokens, stated {data['result']['window_tokens']}"


# Characters YAML does not accept in a document (PyYAML's reader refuses them wherever they are).
NON_PRINTABLE = [chr(c) for c in range(32) if c not in (9, 10, 13)] + ["\x7f", "\x80", "\x9b", "\ufffe"]


@fuzz_settings(150)
@given(rel=st.sampled_from(SAMPLE), char=st.sampled_from(NON_PRINTABLE), where=st.floats(0, 1))
def test_a_control_character_is_reported_at_its_line(registry: Path, rel: str, char: str, where: float) -> None:
    text = SAMPLE_TEXT[rel]
    at = min(len(text), int(where * len(text)))
    line = text.count("\n", 0, at) + 1
    problems = check_mutant(registry, rel, (text[:at] + char + text[at:]).encode("utf-8"))
    assert any(p.line == line for p in problems), \
        f"{rel}: U+{ord(char):04X} inserted on line {line}; problems at {[(p.line, p.field) for p in problems]}"
