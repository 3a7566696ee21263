"""Strict YAML reading with node positions, and recipe loading.

PyYAML silently keeps the last of two duplicate keys and expands aliases without bound; here
both are errors, as are tabs, non-UTF-8 bytes, empty files and oversized files. Each value's
(line, col) is kept so that a problem points at the offending node.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from generator.models import Recipe
from generator.problems import InputError, Problem

try:  # libyaml's C parser when present: the composer is the hot part of a cold check
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on the installed PyYAML
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

MAX_BYTES = 512 * 1024
FieldPath = tuple[str | int, ...]
Positions = dict[FieldPath, tuple[int, int]]

_BOOL_TAG = "tag:yaml.org,2002:bool"
_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_NULL_TAG = "tag:yaml.org,2002:null"
_STR_TAG = "tag:yaml.org,2002:str"
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_SCALAR_CONSTRUCTOR = yaml.SafeLoader.yaml_constructors


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


class _AliasFound(Exception):
    """Stops building at the first alias: one problem is enough, and expansion never starts."""


class _Builder:
    """Turns a composed node tree into plain data, recording positions, refusing aliases."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.positions: Positions = {}
        self.key_positions: Positions = {}
        self.problems: list[Problem] = []
        self._seen: set[int] = set()
        self._constructor = yaml.SafeLoader("")

    def _problem(self, node: yaml.Node, where: FieldPath, message: str) -> None:
        mark = node.start_mark
        self.problems.append(Problem(self.path, mark.line + 1, mark.column + 1, field_name(where), message))

    def build(self, node: yaml.Node, where: FieldPath) -> Any:
        if id(node) in self._seen:
            # A node reached twice is an alias: refuse before any expansion (billion laughs).
            self._problem(node, where, "YAML aliases and anchors are not allowed in recipes")
            raise _AliasFound

        self._seen.add(id(node))
        self.positions[where] = (node.start_mark.line + 1, node.start_mark.column + 1)
        if isinstance(node, yaml.MappingNode):
            out: dict[str, Any] = {}
            for key_node, value_node in node.value:
                if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                    self._problem(key_node, where, "keys must be plain strings (no merge keys)")
                    continue
                key = key_node.value
                if key in out:
                    first = self.key_positions[(*where, key)]
                    self._problem(key_node, (*where, key), f"duplicate key (first at line {first[0]})")
                    continue
                self.key_positions[(*where, key)] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
                out[key] = self.build(value_node, (*where, key))
            return out
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*where, i)) for i, item in enumerate(node.value)]
        return self._scalar(node, where)

    def _scalar(self, node: yaml.ScalarNode, where: FieldPath) -> Any:
        tag = node.tag
        if tag in (_STR_TAG, _TIMESTAMP_TAG):
            # Dates stay text: the models parse them, and jsonschema sees the same value.
            return node.value
        if tag in (_BOOL_TAG, _INT_TAG, _FLOAT_TAG, _NULL_TAG):
            return _SCALAR_CONSTRUCTOR[tag](self._constructor, node)
        self._problem(node, where, f"unsupported YAML tag {tag}")
        return None


def read_yaml(path: Path, display: str | None = None, max_bytes: int = MAX_BYTES) -> YamlDocument:
    """Reads one YAML file strictly; raises InputError naming file, line and column."""
    name = display or str(path)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise InputError([Problem(name, 1, 1, "(document)", f"file is {size:,} bytes; the limit is {max_bytes:,}")])
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError([Problem(name, 1, 1, "(document)", f"cannot read file: {exc.strerror}")]) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError([Problem(name, line, col, "(document)", "file is not valid UTF-8")]) from None
    try:
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        message = f"YAML syntax error: {exc.problem or exc.context}"
        if "\t" in text.splitlines()[line - 1] if line - 1 < len(text.splitlines()) else False:
            message += " (tabs are not allowed for indentation)"
        raise InputError([Problem(name, line, col, "(document)", message)]) from None
    except yaml.YAMLError as exc:
        raise InputError([Problem(name, 1, 1, "(document)", f"YAML error: {exc}")]) from None
    if node is None:  # no document: empty, or only comments
        raise InputError([Problem(name, 1, 1, "(document)", "file is empty")])
    builder = _Builder(name)
    try:
        data = builder.build(node, ())
    except _AliasFound:
        data = None
    if builder.problems:
        raise InputError(builder.problems)
    if not isinstance(data, dict):
        kind = "a list" if isinstance(data, list) else "a single value"
        raise InputError([Problem(name, 1, 1, "(document)", f"the top level must be a mapping, not {kind}")])
    return YamlDocument(name, data, builder.positions, builder.key_positions)


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
        message = _message(err)
        if err["type"] == "extra_forbidden":
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
    text = err["msg"]
    if text.startswith("Value error, "):
        text = text[len("Value error, ") :]
    return f"{text} (got {shown})" if kind not in ("model_type",) else text


@dataclass
class LoadedRecipe:
    path: Path
    display: str
    id: str
    recipe: Recipe
    data: dict[str, Any]
    positions: Positions
    key_positions: Positions = field(default_factory=dict)

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


def load_recipe(path: Path, display: str | None = None, recipes_root: Path | None = None) -> LoadedRecipe:
    """Reads and validates one recipe; raises InputError with every problem located."""
    doc = read_yaml(path, display)
    try:
        recipe = Recipe.model_validate(doc.data)
    except ValidationError as exc:
        raise InputError(validation_problems(doc, Recipe, exc)) from None
    return LoadedRecipe(
        path=path,
        display=doc.path,
        id=recipe_id(path, recipes_root),
        recipe=recipe,
        data=doc.data,
        positions=doc.positions,
        key_positions=doc.key_positions,
    )
