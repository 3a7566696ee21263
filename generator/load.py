"""Strict YAML reading with node positions, and recipe loading.

Every input gets problems, never a traceback. PyYAML silently keeps the last of two duplicate keys and expands
aliases without bound; here both are problems, as are tabs, non-UTF-8 bytes, control characters, empty, oversized
and non-regular files, nesting deeper than `MAX_DEPTH`, tags that cannot be built and tags on collections. Each
value's (line, col) is kept so that a problem points at the offending node.

One meaning for every reader: this check reads YAML 1.1 (PyYAML) and the runner YAML 1.2 (ruamel.yaml), which
read some plain scalars differently (`yes`, `on` are booleans only to 1.1; `0200` is 128 to 1.1 and 200 to 1.2;
`1:20` is 80 to 1.1; `1e3` is text to 1.1 and a number to 1.2). Each plain scalar is also read under the YAML 1.2
core schema, and a scalar the two read differently is a problem: quote it, or write it so that both agree.
"""

from __future__ import annotations

import difflib
import functools
import math
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

import yaml
from pydantic import BaseModel, ValidationError

from generator.models import Recipe
from generator.positions import line_col
from generator.problems import InputError, Problem, unsafe_character

try:  # libyaml's C parser when present: the composer is the hot part of a cold check
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover - depends on the installed PyYAML
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]


class _Loader(_BaseLoader):  # type: ignore[misc,valid-type]
    """The safe loader with its tag resolution remembered: PyYAML resolves every node in Python (regular
    expressions per plain scalar), the largest part of a cold check, while recipes repeat the same few hundred
    plain scalars. SafeLoader has no path resolvers, so a plain scalar's tag depends on its text alone."""

    _plain_tags: ClassVar[dict[str, str]] = {}

    def resolve(self, kind: type, value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is yaml.ScalarNode and implicit[0]:
            tag = self._plain_tags.get(value)
            if tag is None:
                tag = super().resolve(kind, value, implicit)
                if len(self._plain_tags) >= _MAX_REMEMBERED_TAGS:
                    self._plain_tags.clear()
                self._plain_tags[value] = tag
            return tag
        if kind is yaml.ScalarNode:
            return _STR_TAG
        return _SEQ_TAG if kind is yaml.SequenceNode else _MAP_TAG

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        pass  # path resolvers only, and SafeLoader has none

    def ascend_resolver(self) -> None:
        pass


_MAX_REMEMBERED_TAGS = 1 << 16

MAX_BYTES = 512 * 1024
# A recipe nests four levels; 32 leaves room for any honest file and keeps every recursive reader (the builder,
# Pydantic, jsonschema, json.dumps) far from Python's recursion limit.
MAX_DEPTH = 32
FieldPath = tuple[str | int, ...]
Positions = dict[FieldPath, tuple[int, int]]

_YAML = "tag:yaml.org,2002:"
_BOOL_TAG = _YAML + "bool"
_INT_TAG = _YAML + "int"
_FLOAT_TAG = _YAML + "float"
_NULL_TAG = _YAML + "null"
_STR_TAG = _YAML + "str"
_TIMESTAMP_TAG = _YAML + "timestamp"
_MAP_TAG = _YAML + "map"
_SEQ_TAG = _YAML + "seq"
_MERGE_TAG = _YAML + "merge"
_SCALAR_CONSTRUCTOR = yaml.SafeLoader.yaml_constructors
_KIND = {_BOOL_TAG: "boolean", _INT_TAG: "integer", _FLOAT_TAG: "number", _NULL_TAG: "null",
         _TIMESTAMP_TAG: "date", _STR_TAG: "text"}
_A_KIND = {_BOOL_TAG: "a boolean", _INT_TAG: "an integer", _FLOAT_TAG: "a number", _NULL_TAG: "null",
           _TIMESTAMP_TAG: "a date"}

# Characters a recipe file may not hold raw (an escape in a double-quoted string is data, escaped again when a
# problem prints it): C0 controls but tab, LF and the CR of a CRLF; DEL and C1 (NEL is a YAML 1.1 line break that
# editors do not show, so lines would disagree); the Unicode line separators; bidi controls (Trojan Source); a BOM
# past the first character; the non-characters.
# One character class (with CR, which is allowed before LF) scans several times faster than an alternation.
_FORBIDDEN_CHARACTER = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ufffe\uffff]"
)
_MAX_CHARACTER_PROBLEMS = 5

# The YAML 1.2 core schema (spec 1.2.2, 10.3.2), the runner's reading of a plain scalar.
_CORE_NULL = frozenset({"", "~", "null", "Null", "NULL"})
_CORE_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
# Its numbers in the spec's order, each form's pattern and how its text becomes the value (the first match wins).
_CORE_NUMBERS: tuple[tuple[re.Pattern[str], Callable[[str], int | float]], ...] = (
    (re.compile(r"[-+]?[0-9]+\Z"), int),
    (re.compile(r"0o[0-7]+\Z"), lambda text: int(text[2:], 8)),
    (re.compile(r"0x[0-9a-fA-F]+\Z"), lambda text: int(text[2:], 16)),
    (re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z"), float),
    (re.compile(r"[-+]?\.(?:inf|Inf|INF)\Z"), lambda text: -math.inf if text.startswith("-") else math.inf),
    (re.compile(r"\.(?:nan|NaN|NAN)\Z"), lambda _text: math.nan),
)
# A plain scalar that YAML 1.1 reads as text can only be something else to YAML 1.2 if it starts with one of these.
_CORE_NON_TEXT_START = frozenset("-+.0123456789tTfFnN~")
_CORE_NUMBER_START = frozenset("-+.0123456789")
# Node properties (a tag '!', an anchor '&') begin at the file's start or after one of these.
_BEFORE_PROPERTIES = frozenset(" \t\r\n[{,")
# Python's int-from-text limit is 4,300 digits; no figure of a recipe needs more than a few dozen.
_MAX_NUMBER_CHARACTERS = 64


def field_name(path: FieldPath) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out or "(document)"


@dataclass
class YamlDocument:
    path: str
    data: Any
    positions: Positions
    key_positions: Positions
    # Problems of reading that still leave data worth validating (an ambiguous scalar, a value that could not be
    # built); `unbuilt` holds the fields whose value could not be built, so validation does not report them twice.
    problems: list[Problem] = field(default_factory=list)
    unbuilt: set[FieldPath] = field(default_factory=set)
    text: str = ""  # the document as read: a figure's written precision is judged on it, without a second read
    # A double-quoted scalar can spell text with escapes ("\x54ODO") that a search of `text` would not see.
    double_quoted: bool = True  # unknown unless the builder says


class _AliasFound(Exception):
    """Stops building at the first alias: one problem is enough, and expansion never starts."""


class _TooDeep(Exception):
    """Stops building past MAX_DEPTH."""


_NOT_CORE = object()  # the YAML 1.2 core schema cannot read the text under the tag asked for


def _core_value(text: str, tag: str | None = None) -> Any:
    """A plain scalar as the YAML 1.2 core schema reads it: resolved when `tag` is None, else read as that tag
    (an explicit `!!int 0200` is 200 to 1.2); _NOT_CORE when the text is no value of the tag."""
    if tag in (None, _NULL_TAG) and text in _CORE_NULL:
        return None
    if tag in (None, _BOOL_TAG) and text in _CORE_BOOL:
        return _CORE_BOOL[text]
    if tag in (None, _INT_TAG, _FLOAT_TAG) and text[:1] in _CORE_NUMBER_START and len(text) <= _MAX_NUMBER_CHARACTERS:
        number = _core_number(text)
        if number is not None:
            return float(number) if tag == _FLOAT_TAG else number
    if tag is None or tag in (_STR_TAG, _TIMESTAMP_TAG):
        return text
    return _NOT_CORE


def _core_number(text: str) -> int | float | None:
    for pattern, value in _CORE_NUMBERS:
        if pattern.match(text):
            return value(text)
    return None


def _same_reading(a: Any, b: Any) -> bool:
    """Whether two readings are the same value of the same kind (True is not 1, 200 is not 200.0, NaN is NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, int):
        return f"the integer {value}"
    if isinstance(value, float):
        return f"the number {_plain_float(value)}"
    return f"the text {value!r}"


def _plain_float(value: float) -> str:
    """A float as a plain scalar both YAML versions read alike (1.1 needs a '.' and a signed exponent)."""
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value)
    mantissa, _, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return f"{mantissa}e{exponent}" if exponent else mantissa


def _unambiguous_spelling(*readings: Any) -> str:
    """How to write each non-text reading so that both versions agree on it."""
    spelled: list[str] = []
    for value in readings:
        if value is None:
            text = "null"
        elif isinstance(value, bool):
            text = str(value).lower()
        elif isinstance(value, int):
            text = str(value)
        elif isinstance(value, float):
            text = _plain_float(value)
        else:
            continue
        if text not in spelled:
            spelled.append(text)
    return " or ".join(spelled)


def _may_have_properties(text: str) -> bool:
    """Whether a '!' or '&' stands where a node's properties could begin (str.find: faster than a regex here)."""
    for char in "!&":
        at = text.find(char)
        while at != -1:
            if at == 0 or text[at - 1] in _BEFORE_PROPERTIES:
                return True
            at = text.find(char, at + 1)
    return False


class _Builder:
    """Turns a composed node tree into plain data, recording positions, refusing aliases."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.positions: Positions = {}
        self.key_positions: Positions = {}
        self.problems: list[Problem] = []  # the document cannot be used
        self.soft_problems: list[Problem] = []  # reported beside validation's
        self.unbuilt: set[FieldPath] = set()
        self._seen: set[int] = set()
        # An alias is written `*name`: a file without '*' has none, and its nodes need no identity bookkeeping.
        self._may_alias = "*" in text
        self.double_quoted = False
        # Node properties (a tag, an anchor) start with '!' or '&' where a node can start, and libyaml's mark of a
        # node with properties is at the first; without such a place in the file, no line is looked at.
        self._lines: list[str] | None = text.split("\n") if _may_have_properties(text) else None

    def _problem(self, node: yaml.Node, where: FieldPath, message: str, fatal: bool = True) -> None:
        mark = node.start_mark
        problem = Problem(self.path, mark.line + 1, mark.column + 1, field_name(where), message)
        (self.problems if fatal else self.soft_problems).append(problem)

    def _properties(self, node: yaml.Node) -> tuple[bool, bool]:
        """(explicit tag, anchor) written before the node: libyaml's mark starts at its properties."""
        mark = node.start_mark
        if self._lines is None or mark.line >= len(self._lines):
            return False, False
        rest = self._lines[mark.line][mark.column:]
        if rest[:1] not in ("!", "&"):
            return False, False
        tagged = anchored = False
        while rest[:1] in ("!", "&"):
            tagged, anchored = tagged or rest[0] == "!", anchored or rest[0] == "&"
            token_end = len(rest.split(None, 1)[0]) if rest.strip() else len(rest)
            rest = rest[token_end:].lstrip()
        return tagged, anchored

    def build(self, node: yaml.Node, where: FieldPath) -> Any:
        if self._may_alias:
            if id(node) in self._seen:
                # A node reached twice is an alias: refuse before any expansion (billion laughs).
                self._problem(node, where, "YAML aliases and anchors are not allowed in recipes")
                raise _AliasFound
            self._seen.add(id(node))
        mark = node.start_mark
        self.positions[where] = (mark.line + 1, mark.column + 1)
        kind = type(node)
        if kind is yaml.ScalarNode:
            if self._lines is None and node.tag == _STR_TAG:  # no properties in the file: text, as _scalar says
                style = node.style
                if style == '"':
                    self.double_quoted = True
                if style or node.value[:1] not in _CORE_NON_TEXT_START:
                    return node.value
            return self._scalar(node, where)
        if len(where) >= MAX_DEPTH and node.value:  # its items would be deeper than the limit: at the first
            first = node.value[0][1] if kind is yaml.MappingNode else node.value[0]
            self._problem(first, where, f"nested deeper than {MAX_DEPTH} levels")
            raise _TooDeep
        if self._lines is not None or node.tag not in (_MAP_TAG, _SEQ_TAG):
            self._check_collection_properties(node, where)
        if kind is yaml.MappingNode:
            return self._mapping(node, where)
        return [self.build(item, (*where, i)) for i, item in enumerate(node.value)]

    def _check_collection_properties(self, node: yaml.Node, where: FieldPath) -> None:
        """A tag on a mapping or list would be ignored (`!!set`, `!!omap`, `!custom`): say so instead."""
        kind = "mapping" if isinstance(node, yaml.MappingNode) else "list"
        tagged, anchored = self._properties(node)
        if tagged or node.tag not in (_MAP_TAG, _SEQ_TAG):
            self._problem(node, where, f"YAML tag {node.tag} on a {kind} is not allowed (tags are ignored, not "
                          "applied; write the plain mapping or list)")
        elif anchored:
            self._problem(node, where, "YAML aliases and anchors are not allowed in recipes")

    def _mapping(self, node: yaml.MappingNode, where: FieldPath) -> dict[str, Any]:
        out: dict[str, Any] = {}
        no_properties = self._lines is None
        for key_node, value_node in node.value:
            # The common key first: a text scalar in a file without tags or anchors, as _key would return it.
            if no_properties and key_node.tag == _STR_TAG and (key_node.style or _text_to_both(key_node.value)):
                key = key_node.value
            else:
                key = self._key(key_node, where)
                if key is None:
                    continue
            at = (*where, key)
            if key in out:
                first = self.key_positions[at]
                self._problem(key_node, at, f"duplicate key (first at line {first[0]})")
                continue
            mark = key_node.start_mark
            self.key_positions[at] = (mark.line + 1, mark.column + 1)
            out[key] = self.build(value_node, at)
        return out

    def _key(self, key_node: yaml.Node, where: FieldPath) -> str | None:
        """A key as text; None (with a problem) for a merge key, a collection, a tag, or a plain key that YAML
        reads as a number, boolean, null or date (`1:`, `null:`, `yes:`), which other readers keep as such."""
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _MERGE_TAG:
            self._problem(key_node, where, "keys must be plain strings (no merge keys, lists or mappings)")
            return None
        tagged, anchored = self._properties(key_node)
        if tagged or anchored:
            self._problem(key_node, where, "keys must be plain strings (no tags or anchors)")
            return None
        key = key_node.value
        core = _core_value(key) if not key_node.style and key[:1] in _CORE_NON_TEXT_START else key
        if key_node.tag != _STR_TAG or not isinstance(core, str):
            reading = _A_KIND.get(key_node.tag, key_node.tag) if key_node.tag != _STR_TAG else _describe(core)
            self._problem(key_node, (*where, key), f"a key must be text, and YAML reads {key!r} as {reading}; "
                          "quote it")
            return None
        return key

    def _scalar(self, node: yaml.ScalarNode, where: FieldPath) -> Any:
        tag = node.tag
        if node.style == '"':
            self.double_quoted = True
        if tag not in _KIND:
            self._problem(node, where, f"unsupported YAML tag {tag} (quote the value if it is text)")
            return None
        tagged, anchored = self._properties(node)
        if anchored:
            self._problem(node, where, "YAML aliases and anchors are not allowed in recipes")
            return None
        if tag == _STR_TAG and (tagged or node.style or node.value[:1] not in _CORE_NON_TEXT_START):
            return node.value  # text to every reader: the common case, decided without a regular expression
        reading = _read_scalar(tag, node.value, not node.style, tagged)  # plain: libyaml says "", PyYAML None
        if reading.message:
            self._problem(node, where, reading.message, fatal=False)
        if reading.unbuilt:
            self.unbuilt.add(where)
        return reading.value


@functools.lru_cache(maxsize=1 << 12)
def _text_to_both(text: str) -> bool:
    """Whether a plain scalar that YAML 1.1 reads as text is text to the YAML 1.2 core schema too (a key's text
    decides it alone; recipes repeat a few hundred keys)."""
    return text[:1] not in _CORE_NON_TEXT_START or isinstance(_core_value(text), str)


class _Reading(NamedTuple):
    value: Any
    message: str | None  # a problem: the value could not be built, or YAML 1.2 reads the text differently
    unbuilt: bool


_CONSTRUCTOR = yaml.SafeLoader("")  # PyYAML's scalar constructors keep no state between scalars


@functools.lru_cache(maxsize=1 << 16)
def _read_scalar(tag: str, text: str, plain: bool, tagged: bool) -> _Reading:
    """A scalar's YAML 1.1 value (dates kept as text), and the problem with it if any: a value that cannot be
    built, or a plain or tagged scalar that the YAML 1.2 core schema reads differently. Recipes repeat their
    scalars ('1', 'null', 'true'), so each distinct one is read once per process."""
    if tag in (_INT_TAG, _FLOAT_TAG) and len(text) > _MAX_NUMBER_CHARACTERS:
        return _Reading(None, f"a number of {len(text):,} characters is not a recipe figure (the limit is "
                        f"{_MAX_NUMBER_CHARACTERS})", True)
    try:
        value = _SCALAR_CONSTRUCTOR[tag](_CONSTRUCTOR, yaml.ScalarNode(tag, text))
    except Exception:  # noqa: BLE001 - PyYAML's constructors fail in many ways on a tagged value (IndexError on
        # an empty `!!float`, AttributeError on `!!timestamp 1`); each is the same problem here
        if tag == _TIMESTAMP_TAG:
            return _Reading(None, f"{text!r} is not a valid date (YYYY-MM-DD; quote it if it is text)", True)
        return _Reading(None, f"{text!r} is not {_A_KIND[tag]} (remove the tag or fix the value)", True)
    if tag == _TIMESTAMP_TAG:
        value = text  # dates stay text: the models parse them, and jsonschema sees the same value
    if not (plain or tagged):
        return _Reading(value, None, False)
    return _Reading(value, _core_disagreement(text, value, tag if tagged else None), False)


def _core_disagreement(text: str, value: Any, tag: str | None) -> str | None:
    """Why YAML 1.2 reads `text` (as `tag` when explicit) other than YAML 1.1's `value`; None when it does not."""
    core = _core_value(text, tag)
    if core is _NOT_CORE:
        return (f"YAML 1.2 (the runner's ruamel.yaml) cannot read {text!r} as {_A_KIND.get(tag or '', 'that type')}; "
                f"write it as {_unambiguous_spelling(value)}")
    if _same_reading(value, core):
        return None
    spelling = _unambiguous_spelling(value, core)
    return (f"ambiguous YAML: {text!r} is {_describe(value)} to YAML 1.1 (this check's PyYAML) but {_describe(core)} "
            f"to YAML 1.2 (the runner's ruamel.yaml); quote it if it is text{f', or write {spelling}' if spelling else ''}")


def file_kind_problem(path: Path, layout: str) -> str | None:
    """Why a path found by a folder listing is not read (None when it is a regular file): a fifo or device would hang
    or never end, a folder named like a file is a misplaced one (`layout` says where files go)."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        return f"cannot read file: {exc.strerror or exc}"
    return mode_problem(mode, layout)


def mode_problem(mode: int, layout: str) -> str | None:
    """file_kind_problem for a mode already read (a stat the caller made)."""
    if stat.S_ISDIR(mode):
        return f"a folder named like a YAML file; {layout}"
    if not stat.S_ISREG(mode):
        return "not a regular file (a fifo, socket or device is never read)"
    return None


def read_yaml_bytes(path: Path, name: str, max_bytes: int = MAX_BYTES) -> bytes:
    """The file's bytes: a regular file of at most max_bytes (InputError, located, otherwise)."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise InputError([Problem(name, 1, 1, "(document)", "not a regular file (a recipe is a plain file)")])
        if st.st_size > max_bytes:
            raise InputError([Problem(name, 1, 1, "(document)",
                                      f"file is {st.st_size:,} bytes; the limit is {max_bytes:,}")])
        with open(path, "rb") as handle:
            raw = handle.read(max_bytes + 1)
    except OSError as exc:
        raise InputError([Problem(name, 1, 1, "(document)", f"cannot read file: {exc.strerror or exc}")]) from None
    if len(raw) > max_bytes:  # it grew after the stat
        raise InputError([Problem(name, 1, 1, "(document)", f"file is over the limit of {max_bytes:,} bytes")])
    return raw


def _read_text(path: Path, name: str, max_bytes: int, raw: bytes | None = None) -> str:
    """The file's text (`raw`: its bytes, where the caller read them): a regular file of at most max_bytes, valid
    UTF-8, without a leading BOM."""
    raw = read_yaml_bytes(path, name, max_bytes) if raw is None else raw
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = line_col(raw, exc.start)
        raise InputError([Problem(name, line, col, "(document)", "file is not valid UTF-8")]) from None
    return text[1:] if text.startswith("\ufeff") else text


def _within(text: str, line: int, col: int) -> tuple[int, int]:
    """A parser's mark kept inside the file: at the end of a file without a final newline, libyaml's mark is on the
    line after the last; the problem is then at the end of the last line."""
    lines = text.splitlines() or [""]
    if line <= len(lines):
        return line, col
    return len(lines), len(lines[-1]) + 1


def _character_problems(text: str, name: str) -> list[Problem]:
    """Control, separator and bidi characters, each at its line and column (YAML would report 1:1, or count NEL
    and U+2028 as line breaks that editors do not show)."""
    problems: list[Problem] = []
    for match in _FORBIDDEN_CHARACTER.finditer(text):
        char = match.group(0)
        if char == "\r" and text.startswith("\n", match.end()):
            continue  # CRLF
        line, col = line_col(text, match.start())
        what = "a carriage return without a line feed" if char == "\r" else f"the character U+{ord(char):04X}"
        problems.append(Problem(name, line, col, "(document)", f"{what} is not allowed in a recipe (control, "
                                "line-separator and bidi characters); write it as an escape in a double-quoted "
                                "string if it is data"))
        if len(problems) == _MAX_CHARACTER_PROBLEMS:
            break
    return problems


def _compose(text: str, name: str) -> yaml.Node | None:
    """libyaml's node tree of the single document; a syntax error is a problem at its mark."""
    try:
        loader = _Loader(text)
        try:
            return loader.get_single_node()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = _within(text, mark.line + 1, mark.column + 1) if mark else (1, 1)
        parts = [p for p in (exc.context, exc.problem) if p]
        message = f"YAML syntax error: {', '.join(parts) or 'unreadable'}"
        lines = text.split("\n")
        if 0 <= line - 1 < len(lines) and "\t" in lines[line - 1]:
            message += " (tabs are not allowed for indentation)"
        raise InputError([Problem(name, line, col, "(document)", message)]) from None
    except yaml.reader.ReaderError as exc:
        line, col = line_col(text, min(max(exc.position, 0), len(text)))
        raise InputError([Problem(name, line, col, "(document)", f"YAML error: {exc.reason}")]) from None
    except (yaml.YAMLError, RecursionError, ValueError) as exc:  # the pure-Python fallback's deep recursion
        raise InputError([Problem(name, 1, 1, "(document)", f"YAML error: {exc}")]) from None


def _read_document(path: Path, name: str, max_bytes: int, raw: bytes | None = None) -> YamlDocument:
    text = _read_text(path, name, max_bytes, raw)
    characters = _character_problems(text, name)
    if characters:
        raise InputError(characters)
    node = _compose(text, name)
    if node is None:  # no document: empty, or only comments
        raise InputError([Problem(name, 1, 1, "(document)", "file is empty")])
    builder = _Builder(name, text)
    try:
        data = builder.build(node, ())
    except (_AliasFound, _TooDeep):
        data = None
    if builder.problems:
        raise InputError(builder.problems)
    if not isinstance(data, dict):
        kind = "a list" if isinstance(data, list) else "a single value"
        raise InputError([Problem(name, 1, 1, "(document)", f"the top level must be a mapping, not {kind}")])
    return YamlDocument(name, data, builder.positions, builder.key_positions, builder.soft_problems,
                        builder.unbuilt, text, builder.double_quoted)


def read_yaml(path: Path, display: str | None = None, max_bytes: int = MAX_BYTES, raw: bytes | None = None) -> YamlDocument:
    """Reads one YAML file strictly (`raw`: its bytes, where the caller read them with `read_yaml_bytes`); raises
    InputError naming file, line and column when it cannot be used at all.

    Problems that still leave data worth validating (an ambiguous scalar, a value that cannot be built) come back
    in `YamlDocument.problems`: every caller reports them beside its schema's problems."""
    return _read_document(path, display or str(path), max_bytes, raw)


def _model_at(model: type[BaseModel], loc: FieldPath) -> type[BaseModel] | None:
    """The Pydantic model that owns the last element of loc."""
    current: Any = model
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        info = getattr(current, "model_fields", {}).get(part)
        if info is None:
            return None
        current = _inner_model(info.annotation)
        if current is None:
            return None
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _inner_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


def _data_loc(data: Any, loc: tuple[Any, ...]) -> FieldPath:
    """Keeps only the parts of a Pydantic loc that name real keys or indexes (drops union tags)."""
    out: list[str | int] = []
    node = data
    for part in loc:
        if isinstance(node, dict) and isinstance(part, str) and part in node:
            out.append(part)
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            out.append(part)
            node = node[part]
        elif isinstance(node, dict) and isinstance(part, str) and not part.startswith(("function-", "nullable")):
            # A missing key: name it, point at its parent.
            if part.isidentifier():
                out.append(part)
            break
    return tuple(out)


def validation_problems(doc: YamlDocument, model: type[BaseModel], exc: ValidationError) -> list[Problem]:
    problems: list[Problem] = []
    for err in exc.errors(include_url=False):
        loc = _data_loc(doc.data, err["loc"])
        if loc in doc.unbuilt:
            continue  # the reader already said why this value could not be built
        message = _message(err)
        if err["loc"][-1:] == ("[key]",):  # a mapping's key is wrong, not its value: point at the key
            pos = doc.key_positions.get(loc) or doc.positions.get(loc)
        elif err["type"] == "extra_forbidden":
            owner = _model_at(model, loc)
            if owner is not None:
                close = difflib.get_close_matches(str(loc[-1]), list(owner.model_fields), n=1)
                if close:
                    message += f"; did you mean '{close[0]}'?"
            pos = doc.key_positions.get(loc) or doc.positions.get(loc)
        else:
            pos = doc.positions.get(loc)
        probe = loc
        while pos is None and probe:
            probe = probe[:-1]
            pos = doc.positions.get(probe)
        line, col = pos or (1, 1)
        problems.append(Problem(doc.path, line, col, field_name(loc), message))
    return sorted(set(problems))


_MAX_SHOWN = 200


def _message(err: dict[str, Any]) -> str:
    kind = err["type"]
    if kind == "extra_forbidden":
        return "unknown field"
    if kind == "missing":
        return "required field is missing"
    if kind == "finite_number":
        return "must be a finite number (not NaN or infinity)"
    value = err.get("input")
    shown = repr(value) if not isinstance(value, dict | list) else type(value).__name__
    if len(shown) > _MAX_SHOWN:  # a 400,000-character value is not echoed whole into a one-line problem
        shown = f"{shown[:_MAX_SHOWN]}... ({len(shown):,} characters)"
    text = err["msg"]
    if text.startswith("Value error, "):
        text = text[len("Value error, ") :]
    return f"{text} (got {shown})" if kind not in ("model_type",) else text


# --- a scalar's text as the file spells it ------------------------------------------------------------------

_PLAIN_END = re.compile(r"\s+#|\s*$")
_FLOW_PLAIN_END = re.compile(r"\s+#|\s*[,\]}]|\s*$")


def scalar_span(line: str, col: int) -> tuple[int, int] | None:
    """(col, end): the one-line scalar that starts at column `col` (0-based) of `line`, as the file spells it. A
    quoted scalar runs to its closing quote (quotes included); a plain one to a comment or the line's end, and
    inside a flow collection opened on this line ([5, 19], {a: 1}) also to the next ',', ']' or '}'. None: a
    quoted scalar that continues on the next line."""
    quote = line[col] if col < len(line) and line[col] in "'\"" else None
    if quote:
        end = line.find(quote, col + 1)
        while quote == "'" and end >= 0 and line[end + 1 : end + 2] == "'":
            end = line.find(quote, end + 2)
        return None if end < 0 else (col, end + 1)
    opened = line.count("[", 0, col) + line.count("{", 0, col) - line.count("]", 0, col) - line.count("}", 0, col)
    match = (_FLOW_PLAIN_END if opened > 0 else _PLAIN_END).search(line, col)
    return col, match.start() if match else len(line.rstrip("\r\n"))


def written_scalar(lines: list[str], position: tuple[int, int] | None) -> str | None:
    """The scalar at a loader position (1-based line and column) as the file spells it ('0.2190' keeps the zero
    its parsed float has lost); None when there is none to read back."""
    if position is None or not 0 < position[0] <= len(lines):
        return None
    line = lines[position[0] - 1]
    span = scalar_span(line, position[1] - 1)
    if span is None or span[0] == span[1]:
        return None
    return line[span[0]:span[1]]


@dataclass
class LoadedRecipe:
    path: Path
    display: str
    id: str
    recipe: Recipe
    data: dict[str, Any]
    positions: Positions
    key_positions: Positions = field(default_factory=dict)
    text: str = ""  # the file's text as loaded
    double_quoted: bool = True  # see YamlDocument.double_quoted (unknown: assume so, and search every value)

    def position(self, *where: str | int) -> tuple[int, int]:
        """Where a field is: its key for a mapping or list (the line that names it), else its value."""
        probe: FieldPath = tuple(where)
        while probe not in self.positions and probe:
            probe = probe[:-1]
        value: Any = self.data
        for part in probe:
            value = value[part]
        if isinstance(value, dict | list) and probe in self.key_positions:
            return self.key_positions[probe]
        return self.positions.get(probe, (1, 1))


def recipe_id(path: Path, recipes_root: Path | None = None) -> str:
    """model/gpu/name, from the file's place under recipes/."""
    parts = path.with_suffix("").parts
    if recipes_root is not None:
        try:
            parts = path.with_suffix("").relative_to(recipes_root).parts
        except ValueError:
            pass
    return "/".join(parts[-3:])


def name_problem(path: Path, recipes_root: Path | None = None) -> str | None:
    """Why a recipe's path cannot be its name, or None: its part below recipes/ (the recipe id and the file name)
    holds a control, line-separator or bidi character. The id is printed by check, on the site, in the runner's
    scripts and on terminals, where a newline would start a line of its own and ESC would drive the terminal."""
    parts = path.parts[-3:]
    if recipes_root is not None:
        try:
            parts = path.relative_to(recipes_root).parts
        except ValueError:
            pass
    return parts_name_problem(parts)


def parts_name_problem(parts: tuple[str, ...]) -> str | None:
    """name_problem for a path's parts below recipes/ already split (the check's placement does it once)."""
    found = unsafe_character("/".join(parts))
    if found is None:
        return None
    return (f"the recipe's path holds the character {found} (control, line-separator and bidi characters are not "
            "allowed in a recipe's folder or file name: the path is the recipe's id, which check, the site, the "
            "runner's scripts and terminals print); rename it")


def load_recipe(path: Path, display: str | None = None, recipes_root: Path | None = None,
                raw: bytes | None = None) -> LoadedRecipe:
    """Reads and validates one recipe (`raw`: its bytes, where the caller read them with `read_yaml_bytes`); raises
    InputError with every problem located."""
    named = name_problem(path, recipes_root)
    if named is not None:
        raise InputError([Problem(display or str(path), 1, 1, "(document)", named)])
    doc = read_yaml(path, display, raw=raw)
    try:
        recipe = Recipe.model_validate(doc.data)
    except ValidationError as exc:
        raise InputError(sorted(set(doc.problems + validation_problems(doc, Recipe, exc)))) from None
    if doc.problems:
        raise InputError(sorted(set(doc.problems)))
    return LoadedRecipe(
        path=path,
        display=doc.path,
        id=recipe_id(path, recipes_root),
        recipe=recipe,
        data=doc.data,
        positions=doc.positions,
        key_positions=doc.key_positions,
        text=doc.text,
        double_quoted=doc.double_quoted,
    )
