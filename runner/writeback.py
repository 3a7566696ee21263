"""Writing figures back into a recipe without touching any other byte.

ruamel.yaml's round-trip loader locates each value (line, column); the writer replaces only the text of
the scalars it changes and leaves every other character as it was. A full ruamel dump would not do: it
re-flows the recipe's multi-line plain scalars. The new text is then re-read with ruamel and compared
field by field with the old, so a splice can never change anything it was not asked to.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import difflib
import fcntl
import hashlib
import io
import math
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

# Stated precision of each written figure (decimal places); None: an integer or a date.
PRECISION: dict[str, int | None] = {
    "tokens_per_s_per_gpu": 1,
    "usd_per_million_tokens": 2,
    "step_time_cv_percent": 2,
    "mfu": 4,
    "gpu_hours": 2,
    "measured": None,
    "steps_per_run": None,
    "window": None,
    "window_tokens": None,
    "runs": None,
}
RESULT_ORDER = [
    "tokens_per_s_per_gpu", "usd_per_million_tokens", "step_time_cv_percent", "mfu", "mfu_note", "active_params",
    "measured", "steps_per_run", "window", "window_tokens", "runs", "profiler", "gpu_hours", "gpu_hours_note",
]


class WriteError(Exception):
    pass


class LockHeld(Exception):
    pass


def _yaml() -> Any:
    from ruamel.yaml import YAML

    y = YAML(typ="rt")
    y.preserve_quotes = True
    return y


def load_rt(text: str) -> Any:
    return _yaml().load(io.StringIO(text))


def render(field: str, value: Any) -> str:
    """The YAML text of one result value at its stated precision."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.date):
        return value.isoformat()
    if field == "window":
        return f"[{int(value[0])}, {int(value[1])}]"
    places = _places(field, value)
    if places is None:
        return str(int(value))
    return f"{float(value):.{places}f}"


def _places(field: str, value: Any) -> int | None:
    """The stated decimals, or more where those would round a positive figure to zero (a seconds-long run)."""
    places = PRECISION.get(field)
    if places is None or value is None:
        return places
    v = abs(float(value))
    if 0 < v < 10 ** -places:
        places = 1 - math.floor(math.log10(v))  # two significant digits
    return places


def rounded(field: str, value: Any) -> Any:
    """The value as it will read back from the file."""
    places = _places(field, value)
    if places is None or value is None:
        return value
    return round(float(value), places)


_PLAIN_END = re.compile(r"\s+#|\s*$")


def _scalar_span(lines: list[str], line: int, col: int) -> tuple[int, int]:
    """Start and end columns of the single-line scalar at (line, col)."""
    text = lines[line]
    quote = text[col] if col < len(text) and text[col] in "'\"" else None
    if quote:
        end = text.find(quote, col + 1)
        while quote == "'" and end >= 0 and text[end + 1 : end + 2] == "'":
            end = text.find(quote, end + 2)
        if end < 0:
            raise WriteError(f"line {line + 1}: a quoted scalar spanning lines cannot be replaced")
        return col, end + 1
    m = _PLAIN_END.search(text, col)
    return col, m.start() if m else len(text.rstrip("\n"))


def _continuation(lines: list[str], line: int, key_indent: int) -> int:
    """Lines after `line` that continue a multi-line plain scalar (indented deeper than its key)."""
    n = 0
    while line + n + 1 < len(lines):
        text = lines[line + n + 1]
        stripped = text.strip()
        if not stripped or stripped.startswith("#") or len(text) - len(text.lstrip(" ")) <= key_indent:
            break
        n += 1
    return n


def splice(text: str, changes: Mapping[tuple[str, ...], str]) -> str:
    """Replaces the scalar at each key path with new text (YAML); missing result keys are inserted."""
    doc = load_rt(text)
    lines = text.splitlines(keepends=True)
    # (line, start col, last line, end col on the last line, replacement); an insert is (line, -1, ...).
    edits: list[tuple[int, int, int, int, str]] = []
    finals: dict[tuple[str, ...], str] = {}
    for path, new in changes.items():
        parent = doc
        for part in path[:-1]:
            parent = parent[part]
        key = path[-1]
        finals[path] = new
        if key not in parent:
            at, new_line = _insertion(parent, key, new, lines)
            edits.append((at, -1, at, -1, new_line))
            continue
        value = parent[key]
        line, col = parent.lc.value(key)
        if isinstance(value, list) and value.fa.flow_style():
            # A flow sequence ([5, 19]) on one line: replace it whole.
            text_line = lines[line]
            close = text_line.find("]", col)
            if text_line[col : col + 1] != "[" or close < 0:
                raise WriteError(f"{'.'.join(path)}: a flow sequence spanning lines cannot be replaced")
            edits.append((line, col, line, close + 1, new))
            continue
        if hasattr(value, "lc") and isinstance(value, list):
            new_items = [s.strip() for s in new.strip("[]").split(",")]
            if len(value) != len(new_items) or any(isinstance(v, list | dict) for v in value):
                raise WriteError(f"{'.'.join(path)}: cannot replace a sequence of a different length")
            for i in range(len(value)):
                item_line, item_col = value.lc.item(i)
                start, end = _scalar_span(lines, item_line, item_col)
                edits.append((item_line, start, item_line, end, new_items[i]))
            continue
        if isinstance(value, dict):
            raise WriteError(f"{'.'.join(path)}: is a mapping, not a scalar")
        start, end = _scalar_span(lines, line, col)
        old = lines[line][start:end]
        if old[:1] in "'\"" and not new.startswith(("'", '"', "[")) and new != "null":
            new = old[0] + new + old[0]  # keep the recipe's quoting
            finals[path] = new
        last = line
        if old[:1] not in "'\"":
            last += _continuation(lines, line, parent.lc.key(key)[1])
        if last > line:  # a plain scalar folded over several lines: the new value replaces all of them
            tail = lines[last]
            m = _PLAIN_END.search(tail, len(tail) - len(tail.lstrip(" ")))
            end = m.start() if m else len(tail.rstrip("\r\n"))
        edits.append((line, start, last, end, new))
    # Bottom up, so that no edit moves the lines of one still to come.
    for line, start, last, end, new in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        if start < 0:
            lines.insert(line, new)
        else:
            lines[line : last + 1] = [lines[line][:start] + new + lines[last][end:]]
    out = "".join(lines)
    try:
        reread = load_rt(out)
    except Exception as exc:  # noqa: BLE001 - any parse failure of our own output is a bug to report, not write
        raise WriteError(f"internal error: the updated text does not parse ({exc}); nothing written") from None
    _verify(doc, reread, set(changes))
    for path, new in finals.items():
        node = reread
        for part in path:
            node = node[part]
        if _plain(node) != _plain(load_rt(f"v: {new}\n")["v"]):
            raise WriteError(f"internal error: {'.'.join(path)} reads back as {node!r}, not {new}; nothing written")
    return out


def _insertion(parent: Any, key: str, new: str, lines: list[str]) -> tuple[int, str]:
    """Where a missing result key goes: after the last present key that precedes it in the model's order."""
    keys = list(parent.keys())
    if not keys:
        raise WriteError(f"{key}: cannot insert into an empty mapping")
    before = [k for k in RESULT_ORDER[: RESULT_ORDER.index(key)] if k in parent] if key in RESULT_ORDER else []
    anchor = before[-1] if before else keys[-1]
    indent = parent.lc.key(keys[0])[1]
    following = keys.index(anchor) + 1
    if following < len(keys):
        at = parent.lc.key(keys[following])[0]
    else:
        at = _end_of_value(parent, anchor, lines, indent)
    return at, " " * indent + f"{key}: {new}\n"


def _end_of_value(parent: Any, key: str, lines: list[str], indent: int) -> int:
    line = parent.lc.key(key)[0] + 1
    while line < len(lines):
        text = lines[line]
        if text.strip() and (len(text) - len(text.lstrip(" "))) <= indent and not text.lstrip().startswith("- "):
            break
        line += 1
    return line


def _plain(node: Any) -> Any:
    if isinstance(node, dict):
        return {str(k): _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    if isinstance(node, float):
        return float(node)
    if isinstance(node, str):
        return str(node)
    return node


def _verify(old: Any, new: Any, changed: set[tuple[str, ...]]) -> None:
    """Every field but the changed ones reads back the same."""
    a, b = _plain(old), _plain(new)
    for path in changed:
        for doc in (a, b):
            node = doc
            for part in path[:-1]:
                node = node[part]
            node.pop(path[-1], None)
    if a != b:
        raise WriteError("internal error: the splice changed fields it was not asked to; nothing written")


def result_changes(figures: Mapping[str, Any]) -> dict[tuple[str, ...], str]:
    return {("result", k): render(k, v) for k, v in figures.items() if k in PRECISION}


def unified_diff(old: str, new: str, name: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{name}", f"b/{name}"))


@contextlib.contextmanager
def recipe_lock(runs_dir: Path, recipe: Path) -> Iterator[Path]:
    """An exclusive flock per recipe file; the kernel drops it when the holder dies (no stale locks)."""
    locks = runs_dir / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(str(recipe.resolve()).encode()).hexdigest()[:16]
    path = locks / f"{recipe.stem}-{digest}.lock"
    handle = path.open("a+")
    try:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise LockHeld(
                f"{recipe}: another remeasure of this recipe is running ({holder}); wait for it to finish "
                f"(the lock is {path} and is released when that process ends)"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}")
        handle.flush()
        yield path
    finally:
        handle.close()
