"""All YAML editing of recipes: figures written back without touching any other byte, and the block edits.

ruamel.yaml's round-trip loader locates each value (line, column); the writer replaces only the text of
the scalars it changes and leaves every other character as it was. A full ruamel dump would not do: it
re-flows the recipe's multi-line plain scalars. The new text is then re-read with ruamel and compared
field by field with the old, so a splice can never change anything it was not asked to.

Besides the scalar splice, the line-level block edits: `correctness.convergence` written, updated or added
(`with_convergence_block`), and a recipe rewritten for other GPUs (`as_new_text`). Every edit works on text with
"\n" line ends; `decode` and `encode` carry a CRLF recipe's line ends through unchanged.
"""

from __future__ import annotations

import datetime as dt
import difflib
import io
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from generator import figures
from generator.load import scalar_span

# Written precision of each result field the runner writes (decimal places): the stated figures' least precision
# is figures.PRECISIONS'; None: an integer or a date.
PRECISION: dict[str, int | None] = {
    **{name: stated.decimals for name, stated in figures.PRECISIONS.items()},
    "measured": None,
    "steps_per_run": None,
    "window": None,
    "window_tokens": None,
    "runs": None,
    "runs_cv_percent": 2,
}
RESULT_ORDER = [
    "tokens_per_s_per_gpu", "usd_per_million_tokens", "step_time_cv_percent", "mfu", "mfu_note", "active_params",
    "measured", "steps_per_run", "window", "window_tokens", "runs", "runs_cv_percent", "profiler", "peak_memory",
    "gpu_hours", "gpu_hours_note", "partial",
]
PEAK_MEMORY_SOURCE = ("the run's own summary line (every rank's peak, the largest over ranks and over the runs "
                      "measured; torch.cuda.max_memory_allocated and max_memory_reserved)")


class WriteError(Exception):
    pass


def _yaml() -> Any:
    from ruamel.yaml import YAML

    y = YAML(typ="rt")
    y.preserve_quotes = True
    return y


def load_rt(text: str) -> Any:
    """The round-trip document; WriteError (located) where the round-trip parser cannot read what the strict
    loader accepted (a tab after a colon: PyYAML takes it as a separator, ruamel.yaml does not)."""
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        return _yaml().load(io.StringIO(text))
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        hint = "; put a space, not a tab, after the colon" if "'\\t'" in str(exc.problem) else ""
        raise WriteError(f"{where}the runner cannot edit this YAML ({exc.problem}){hint}") from None
    except YAMLError as exc:
        raise WriteError(f"the runner cannot edit this YAML ({' '.join(str(exc).split())})") from None


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
    """The stated decimals (figures.stated_places for a stated figure; None for an integer or a date)."""
    if field in figures.PRECISIONS and value is not None:
        return figures.stated_places(field, value)
    return PRECISION.get(field)


def rounded(field: str, value: Any) -> Any:
    """The value as it will read back from the file (a stated figure: figures.stated, what MFU and $/1M derive from)."""
    if value is None or _places(field, value) is None:
        return value
    return figures.stated(field, value)


_PLAIN_END = re.compile(r"\s+#|\s*$")


def _scalar_span(lines: list[str], line: int, col: int) -> tuple[int, int]:
    """Start and end columns of the single-line scalar at (line, col), 0-based (generator.load.scalar_span)."""
    span = scalar_span(lines[line], col)
    if span is None:
        raise WriteError(f"line {line + 1}: a quoted scalar spanning lines cannot be replaced")
    return span


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


def splice(text: str, changes: Mapping[tuple[str, ...], str], doc: Any = None) -> str:
    """Replaces the scalar at each key path with new text (YAML); missing result keys are inserted. `doc`: the
    round-trip parse of `text` where the caller holds it (parsed here otherwise)."""
    doc = load_rt(text) if doc is None else doc
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
    wanted = _values(list(finals.values()))
    for (path, new), value in zip(finals.items(), wanted, strict=True):
        node = reread
        for part in path:
            node = node[part]
        if _plain(node) != _plain(value):
            raise WriteError(f"internal error: {'.'.join(path)} reads back as {node!r}, not {new}; nothing written")
    return out


def _values(texts: list[str]) -> list[Any]:
    """What each spliced text reads as in YAML, all in one parse (one key a text: `v: TEXT` each, as alone)."""
    if not texts:
        return []
    doc = load_rt("".join(f"v{i}: {text}\n" for i, text in enumerate(texts)))
    return [doc[f"v{i}"] for i in range(len(texts))]


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


def result_changes(figures: Mapping[str, Any], recipe_result: Any = None) -> dict[tuple[str, ...], str]:
    """The result keys to splice; peak memory goes in as one flow mapping where the recipe has none, else key by
    key (`recipe_result`: the recipe's parsed `result`, to tell which)."""
    out = {("result", k): render(k, v) for k, v in figures.items() if k in PRECISION}
    peak = figures.get("peak_memory")
    if peak:
        values = {k: f"{peak[k]:.2f}" if k in peak else "null" for k in ("allocated_gib", "reserved_gib")}
        if recipe_result is not None and getattr(recipe_result, "peak_memory", None) is not None:
            values["source"] = yaml_str(PEAK_MEMORY_SOURCE)
            out.update({("result", "peak_memory", k): v for k, v in values.items()})
        else:  # one flow mapping: its text is double-quoted (a flow context ends a plain scalar at a comma)
            values["source"] = json.dumps(PEAK_MEMORY_SOURCE)
            out[("result", "peak_memory")] = "{" + ", ".join(f"{k}: {v}" for k, v in values.items()) + "}"
    return out


def unified_diff(old: str, new: str, name: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{name}", f"b/{name}"))


# --- line ends -----------------------------------------------------------------------------------------------


def decode(raw: bytes, name: str) -> tuple[str, str]:
    """A recipe's text with "\n" line ends, and the line end to write it back with ("\n" or "\r\n")."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WriteError(f"{name} is not valid UTF-8 (byte {exc.start})") from None
    crlf = text.count("\r\n")
    if crlf == 0:
        return text, "\n"
    if crlf != text.count("\n"):
        raise WriteError(f"{name} mixes CRLF and LF line ends; make them one kind before writing into it")
    return text.replace("\r\n", "\n"), "\r\n"


def encode(text: str, newline: str) -> bytes:
    return (text if newline == "\n" else text.replace("\n", newline)).encode("utf-8")


# --- block edits ---------------------------------------------------------------------------------------------


def yaml_str(value: str) -> str:
    """A string as a YAML scalar: plain where that reads back the same, else double-quoted."""
    plain_ok = value and value[0] not in "!&*[]{}|>'\"%@`#,?:-" and ": " not in value and " #" not in value
    return value if plain_ok and value.strip() == value else json.dumps(value)


def top_block(lines: list[str], key: str, keep_trailing_blanks: bool = False) -> tuple[int, int] | None:
    """[start, end) of the top-level `key:` block: its line and the deeper-indented lines after it
    (and the blank lines after those, with keep_trailing_blanks)."""
    start = next((i for i, ln in enumerate(lines) if ln.startswith(f"{key}:")), None)
    if start is None:
        return None
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or lines[end][:1] in (" ", "\t", "-")):
        end += 1
    while not keep_trailing_blanks and end > start + 1 and not lines[end - 1].strip():
        end -= 1  # blank lines before the next key belong to neither
    return start, end


def replace_top_block(text: str, key: str, replacement: str) -> str:
    """The top-level `key:` block (its line and every deeper or blank line after it) replaced by `replacement`."""
    lines = text.splitlines(keepends=True)
    block = top_block(lines, key, keep_trailing_blanks=True)
    if block is None:
        return text
    start, end = block
    return "".join(lines[:start]) + replacement + "".join(lines[end:])


AS_NEW_REMINDER = ("# The correctness evidence of ", "# tests or `python -m runner convergence --write` on ")


def _wrap(text: str, width: int = 116) -> str:
    """A note as block-scalar lines, wrapped at `width` and indented under `notes: |`."""
    import textwrap

    return "".join(f"  {line}\n" for line in textwrap.wrap(text, width, subsequent_indent="  ", break_on_hyphens=False,
                                                             break_long_words=False))


def as_new_text(text: str, loaded: Any, catalog: Any, gpu_type: str, gpu_name: str | None, old_path: Path,
                new_path: Path, measured_on: dt.date | None = None, doc: Any = None) -> str:
    """The recipe rewritten for the GPUs present, status measured: its correctness evidence stays behind (it was
    gathered on the original's hardware) until the tests or the convergence check are run on these GPUs."""
    recipe = loaded.recipe
    spec = catalog.gpus[gpu_type]
    per_node = recipe.gpu.per_node or recipe.gpu.count
    instance = catalog.instance_for(gpu_type, per_node)
    changes: dict[tuple[str, ...], str] = {
        ("gpu", "type"): yaml_str(gpu_type),
        ("gpu", "memory_gb"): str(spec.memory_gb),
        ("status",): "measured",
    }
    if "instance" in loaded.data["gpu"]:
        changes[("gpu", "instance")] = yaml_str(instance) if instance is not None else "null"
    if gpu_name and "gpu_name" in loaded.data["stack"]:
        changes[("stack", "gpu_name")] = yaml_str(gpu_name)
    out = splice(text, changes, doc)
    old_file = f"recipes/{loaded.id}.yaml"
    new_file = "recipes/" + new_path.as_posix().split("recipes/", 1)[-1]
    run = str(loaded.data.get("run", ""))
    if old_file in run:  # the new recipe's run launches itself, not the recipe it was copied from
        out = replace_top_block(out, "run", "run: |\n" + "".join(
            f"  {line}\n" if line else "\n" for line in run.replace(old_file, new_file).rstrip("\n").split("\n")))
    when = measured_on or dt.date.today()
    notes = "notes: |\n" + _wrap(
        f"- Measured by `python -m runner remeasure {old_file} --as-new {new_path.stem}` on {gpu_name or gpu_type} "
        f"({gpu_type}), {when.isoformat()}: a new recipe for these GPUs, written from {old_file} ({recipe.gpu.type}), "
        "whose notes, correctness evidence and run folder stay with it.")
    if "notes" in loaded.data:  # the original's notes describe the original's run
        out = replace_top_block(out, "notes", notes)
    else:
        out = out + ("" if out.endswith("\n") else "\n") + notes
    if "correctness" in loaded.data:
        out = replace_top_block(out, "correctness", (
            f"{AS_NEW_REMINDER[0]}{loaded.id} ({recipe.gpu.type}) is not carried over: run its component\n"
            f"{AS_NEW_REMINDER[1]}{gpu_type} to make this recipe verified.\n"
            "correctness: null\n"))
    first, _, rest = out.partition("\n")
    for old in (str(old_path), old_path.as_posix()):
        if first.startswith("#") and old.split("recipes/", 1)[-1] in first:
            first = "# " + "recipes/" + new_path.as_posix().split("recipes/", 1)[-1]
            break
    return first + "\n" + rest


def instance_of(doc: Any) -> str | None:
    """gpu.instance of a recipe's round-trip document (None when null)."""
    value = doc["gpu"].get("instance")
    return None if value is None else str(value)


def _convergence_values(result: Any) -> dict[str, str]:
    values = {
        "steps": str(result.steps),
        "result": "pass" if result.passed else "fail",
        "correlation": f"{result.correlation:.5f}",
        "final_loss_difference": f"{result.final_loss_difference:.4f}",
        "pointwise_failures": str(result.pointwise_failures),
    }
    if not result.passed:  # which criteria failed: the figures above cannot say it (the floor, the relative final)
        values["failed_because"] = yaml_str("; ".join(result.reasons))
    return values


def _convergence_lines(result: Any, note: str | None, indent: int, extra: dict | None = None) -> list[str]:
    pad = " " * indent
    out = [f"{pad}convergence:\n"] + [f"{pad}  {k}: {v}\n" for k, v in _convergence_values(result).items()]
    out += [f"{pad}  note: {yaml_str(note)}\n"] if note else []
    return out + [f"{pad}  {k}: {yaml_str(v)}\n" for k, v in (extra or {}).items() if v is not None]


def _also_item(result: Any, note: str | None, extra: dict | None) -> list[str]:
    """One item of correctness.convergence_also (a list of mappings at indent 2)."""
    body = _convergence_lines(result, note, 2, extra)[1:]
    return ["  - " + body[0][4:], *body[1:]]


def _add_also(text: str, result: Any, note: str | None, extra: dict | None) -> str:
    """correctness.convergence_also with one more item (the list made where there is none)."""
    lines = text.splitlines(keepends=True)
    block = top_block(lines, "correctness")
    if block is None:
        raise WriteError("correctness: --also adds a further check beside correctness.convergence; the recipe has no "
                         "correctness block yet: write its first check without --also")
    start, end = block
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    at = next((i for i in range(start + 1, end) if lines[i].startswith("  convergence_also:")), None)
    item = _also_item(result, note, extra)
    if at is None:
        lines[end:end] = ["  convergence_also:\n", *item]
    elif lines[at].rstrip().endswith("[]"):
        lines[at:at + 1] = ["  convergence_also:\n", *item]
    else:
        last = at + 1
        while last < end and (lines[last].startswith(("  - ", "    ")) or not lines[last].strip()):
            last += 1
        lines[last:last] = item
    return "".join(lines)


def with_convergence_block(text: str, data: dict[str, Any], result: Any, note: str | None,
                     arms: str | None = None, extra: dict | None = None, also: bool = False) -> tuple[str, list[str]]:
    """The recipe with correctness.convergence written (updated, inserted, or a new correctness block); the note
    is replaced only when given, and a new check is noted with its two arms. `extra`: the reference arm
    (`reference`) and whether it is another implementation (`implementation`). With `also`, the check is added to
    correctness.convergence_also instead. Returns the text and what changed."""
    if also:
        new = _add_also(text, result, note or arms, extra)
        said = ["correctness.convergence_also: a check added"]
        if not result.passed and isinstance(data.get("correctness"), dict) and data["correctness"].get("result") == "pass":
            new = splice(new, {("correctness", "result"): "fail"})
            said.append("correctness.result pass -> fail (a further convergence check fails)")
            if data.get("status") == "verified":
                new = splice(new, {("status",): "measured"})
                said.append("status verified -> measured")
        return new, said
    said: list[str] = []
    corr = data.get("correctness")
    passed = bool(result.passed)
    changes: dict[tuple[str, ...], str] = {}
    if isinstance(corr, dict) and isinstance(corr.get("convergence"), dict):
        base = ("correctness", "convergence")
        changes = {(*base, k): v for k, v in _convergence_values(result).items()}
        if passed and "failed_because" in corr["convergence"]:  # an earlier failure's reasons are not this pass's
            changes[(*base, "failed_because")] = "null"
        if note:
            changes[(*base, "note")] = yaml_str(note)
        changes.update({(*base, k): yaml_str(v) for k, v in (extra or {}).items() if v is not None})
    else:
        lines = text.splitlines(keepends=True)
        block = top_block(lines, "correctness")
        if isinstance(corr, dict):  # a correctness block without a convergence check: add one at its end
            assert block is not None
            start, end = block
            child = next((ln for ln in lines[start + 1 : end] if ln.strip() and not ln.lstrip().startswith("#")), "  x")
            indent = len(child) - len(child.lstrip(" "))
            at = next((i for i in range(start + 1, end) if lines[i].startswith(" " * indent + "convergence:")), None)
            if at is not None:  # `convergence: null`
                lines[at : at + 1] = _convergence_lines(result, note or arms, indent, extra)
            else:
                lines[end:end] = _convergence_lines(result, note or arms, indent, extra)
            said.append("correctness.convergence added")
        else:  # no correctness evidence yet: this check is all of it
            verdict = "pass" if passed else "fail"
            new_block = [f"correctness:\n  result: {verdict}\n", *_convergence_lines(result, note or arms, 2, extra)]
            if block is not None:
                start, end = block
                while start > 0 and lines[start - 1].startswith(AS_NEW_REMINDER):
                    start -= 1  # --as-new's reminder that the original's evidence stayed behind
                lines[start:end] = new_block
            else:
                result_block = top_block(lines, "result")
                at = result_block[1] if result_block else len(lines)
                lines[at:at] = new_block
            said.append(f"correctness written with result: {'pass' if passed else 'fail'}")
            if passed and data.get("status") == "measured":
                changes[("status",)] = "verified"
                said.append("status measured -> verified (a passing convergence check is correctness evidence)")
        text = "".join(lines)
    if not passed and isinstance(corr, dict) and corr.get("result") == "pass":
        changes[("correctness", "result")] = "fail"
        said.append("correctness.result pass -> fail (its convergence check fails)")
        if data.get("status") == "verified":
            changes[("status",)] = "measured"
            said.append("status verified -> measured")
    return (splice(text, changes) if changes else text), said
