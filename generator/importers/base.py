"""The one importer interface: a Source parses its document into rows and skips, and turns a row into a recipe dict;
everything else (catalog loading, superseding, provenance, rendering, byte-identical re-import, writing, the CLI
report) is shared here, and so are the steps every source's rows and recipes repeat: which rows the catalog admits
and where their recipes go (Source.admit and Source.target from the row's model and GPU type), a table row's DP and
micro-batches (ParallelRow), dropping repeated rows (drop_repeats), and the `run` of a row published without a
command line (no_command_line). A new source is a module beside this one defining `SOURCE` (Source's docstring
below).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import os
import re
import shutil
import stat
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Hashable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from generator import evidence, figures, registry
from generator.catalog import Catalog, ModelCard
from generator.check import check_recipe
from generator.load import load_recipe
from generator.models import STORED_COPY_PATH, Recipe
from generator.positions import line_col
from generator.problems import InputError, escape
from generator.registry import RECIPES_DIR, CatalogMemo, atomic_write, display_path, load_catalog, recipe_path

GITHUB_BLOB = re.compile(r"^https://github\.com/(?P<repository>[^/]+/[^/]+)/blob/(?P<commit>[^/]+)/(?P<path>.+)$")


# --- reading hostile input: one error type, one line, located ------------------------------------------------


class SourceError(ValueError):
    """Input an importer cannot read, said in one line: `file:line:column: message` (the parts known). A parser
    raises it with the line (and column) in its text; run_source adds the file. It is a ValueError, so a row parser
    that turns a row's ValueError into a located skip does so for these too."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None, file: str | None = None):
        super().__init__(message)
        self.message, self.line, self.column, self.file = message, line, column, file

    def at(self, file: Path | str) -> SourceError:
        """The same error naming `file` (kept where a deeper reader already named its own file)."""
        return self if self.file is not None else SourceError(self.message, self.line, self.column, str(file))

    def __str__(self) -> str:
        where = ":".join(escape(str(p)) for p in (self.file, self.line, self.column) if p is not None)
        message = one_line(self.message, 400)
        return f"{where}: {message}" if where else message


def one_line(text: str, limit: int = 80) -> str:
    """Text quoted into a one-line message: control characters escaped and cut to `limit` characters (a 2 MB cell
    is named by its start and its length, not printed)."""
    flat = escape(text)
    return flat if len(flat) <= limit else f"{flat[:limit]}... ({len(text):,} characters)"


def quoted(text: str) -> str:
    """A cell or value as a message quotes it: repr-like quotes around one_line's text."""
    return f"'{one_line(text, 60)}'"


# The largest document an importer reads: the largest committed source is the 2.9 MB playbook page; an MLPerf result
# file of every rank's log lines is a few MB.
MAX_DOCUMENT_BYTES = 32 * 1024 * 1024


def read_document(path: Path, max_bytes: int = MAX_DOCUMENT_BYTES, errors: str = "strict") -> str:
    """A document's text, or SourceError naming the file: a regular file (a FIFO would hang, /dev/zero never ends,
    a symlink loop never resolves), at most max_bytes, with no NUL byte (binary), UTF-8 (the first bad byte located;
    errors="replace" for a log whose stray bytes do not matter)."""
    try:
        st = os.stat(path)  # follows links: a loop or a dangling link is an OSError here
        if not stat.S_ISREG(st.st_mode):
            raise SourceError("not a regular file (a FIFO, socket, device or folder is not read)", file=str(path))
        if st.st_size > max_bytes:
            raise SourceError(f"file is {st.st_size:,} bytes; the limit is {max_bytes:,}", file=str(path))
        with open(path, "rb") as handle:
            raw = handle.read(max_bytes + 1)
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
    if len(raw) > max_bytes:  # it grew after the stat
        raise SourceError(f"file is over the limit of {max_bytes:,} bytes", file=str(path))
    nul = raw.find(b"\0")
    if nul >= 0:
        line, col = line_col(raw, nul)
        raise SourceError("a NUL byte: a binary file, not a text document", line, col, str(path))
    try:
        return raw.decode("utf-8", errors=errors)
    except UnicodeDecodeError as exc:
        line, col = line_col(raw, exc.start)
        raise SourceError("not valid UTF-8 (a binary file?)", line, col, str(path)) from None


# Every figure an importer reads is finite and below this: the largest a recipe holds is a token count (a run of
# 10^13 tokens); a cell beyond it is a typo or an attack, never a publication's figure.
MAX_FIGURE = 1e15
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_MAX_NUMBER_CHARACTERS = 40


def number(text: str, what: str, integer: bool = False, line: int | None = None, positive: bool = False) -> float | int:
    """A stated figure read through one bounded parser: decimal digits (thousands commas allowed), finite, at most
    MAX_FIGURE in size, whole where `integer`, above 0 where `positive`; else SourceError naming `what` and the text
    (quoted, cut short). 1e308, 1e999, Infinity, NaN and a 400-digit integer are all refused here, before any
    arithmetic."""
    clean = text.strip().replace(",", "")
    if not _NUMBER.fullmatch(clean):
        raise SourceError(f"{what} {quoted(text)} is not a number", line)
    value = float(clean) if len(clean) <= _MAX_NUMBER_CHARACTERS else math.inf  # 400 digits: beyond any bound
    if not math.isfinite(value) or abs(value) > MAX_FIGURE:
        raise SourceError(f"{what} {quoted(text)} is out of range (a figure is at most {MAX_FIGURE:.0e})", line)
    if positive and value <= 0:
        raise SourceError(f"{what} {quoted(text)} is not positive", line)
    if not integer:
        return value
    if not value.is_integer():
        raise SourceError(f"{what} {quoted(text)} is not a whole number", line)
    return int(value)


def table_number(key: str, text: str, integers: Collection[str]) -> int | float | None:
    """A table cell's figure under column `key`: None where the table marks it absent ('-', 'n/a' or blank), whole
    for the columns in `integers`, read by `number` (bounded and finite); SourceError naming the column otherwise."""
    if text.strip().lower() in ("n/a", "-", ""):
        return None
    return number(text, key, integer=key in integers)


def bounded_value(value: Any, what: str, line: int | None = None) -> Any:
    """A JSON number checked as `number` checks text (finite, at most MAX_FIGURE); other values unchanged."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    if not math.isfinite(value) or abs(value) > MAX_FIGURE:
        raise SourceError(f"{what} {quoted(str(value))} is out of range (a figure is at most {MAX_FIGURE:.0e})", line)
    return value


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > _MAX_NUMBER_CHARACTERS:
        raise ValueError(f"a {len(text)}-digit integer")
    return int(text)


def read_json(text: str, line: int = 1, column: int = 1) -> Any:
    """JSON read with bounds: Infinity, NaN and integers of more than 40 digits refused, nesting that would exhaust
    the stack refused; SourceError at the error's line and column (counted from `line`, `column` where the JSON
    starts inside a larger text)."""
    try:
        return json.loads(text, parse_constant=_refuse_constant, parse_int=_bounded_int)
    except json.JSONDecodeError as exc:
        at_line = line + exc.lineno - 1
        at_col = exc.colno + (column - 1 if exc.lineno == 1 else 0)
        raise SourceError(f"not JSON ({exc.msg})", at_line, at_col) from None
    except RecursionError:
        raise SourceError("JSON nested too deeply to read", line, column) from None
    except ValueError as exc:  # a refused constant or integer (the decoder does not say where)
        raise SourceError(f"JSON: {exc}", line, column) from None


def validation_message(exc: ValidationError) -> str:
    """A pydantic error as one line: the first error's field, message and input."""
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err.get("loc", ())) or "(recipe)"
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{loc}: {err['msg']} (input {quoted(str(err.get('input')))}){more}"


@dataclass(frozen=True)
class Skip:
    """A document row (or one configuration of it) that becomes no recipe: its 1-based line and why (one line, a
    quoted cell cut short: a skip reason is printed and written into the notes of the row's other recipes)."""

    line: int
    reason: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "reason", one_line(self.reason, 400))

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


@dataclass
class Parsed:
    """A parsed document: every row becomes rows (one or more configurations) or skips at its line."""

    rows: list[Any] = field(default_factory=list)
    skips: list[Skip] = field(default_factory=list)
    table_rows: int = 0  # data rows of the document seen (before a row's configurations are split)


@dataclass(frozen=True)
class Document:
    """Provenance of one imported document: written to every recipe as publication.url / publication.commit.
    url is the document at its commit (https://github.com/<repository>/blob/<commit>/<path> for GitHub).
    sha256 and stored_copy are the copy read (run_source sets them from the file it was given; see `copy_read`)."""

    url: str
    commit: str | None
    sha256: str | None = None
    stored_copy: str | None = None

    @property
    def repository(self) -> str | None:
        m = GITHUB_BLOB.match(self.url)
        return m.group("repository") if m else None

    @property
    def path(self) -> str | None:
        m = GITHUB_BLOB.match(self.url)
        return m.group("path") if m else None

    @staticmethod
    def github(repository: str, commit: str, path: str) -> Document:
        return Document(f"https://github.com/{repository}/blob/{commit}/{path}", commit)


@dataclass
class WriteReport:
    created: list[Path] = field(default_factory=list)
    updated: list[Path] = field(default_factory=list)
    unchanged: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)  # superseded by a later import: left as they are


class Source(ABC):
    """One publication format. A module generator/importers/<name>.py defines `SOURCE = <Source subclass>()`;
    `python -m generator import <name with - for _> FILE` finds it (no central list to edit). A module's own
    `parse(text)` and `build(row, catalog, document, superseded, skipped)` functions may stand as the methods
    (`parse = staticmethod(parse)`)."""

    name: str  # the CLI name, e.g. "megatron-bridge"
    reads_directory: bool = False  # True: FILE is a directory (a checkout) that `read` walks, not a text document
    # Whether a row's model must have an architecture card (figures recomputed from it), or only be in the catalog.
    needs_architecture: bool = True

    @property
    def header(self) -> str:
        """First line of every written file (a YAML comment)."""
        return (f"# Imported by `python -m generator import {self.name}`; re-importing the source updates this "
                "file.\n")

    @abstractmethod
    def parse(self, text: str) -> Parsed:
        """Every data row of the document -> Parsed.rows (objects with .line) or Parsed.skips (line, reason);
        Parsed.table_rows counts the data rows seen. Never guess a value the document does not state."""

    def read(self, path: Path) -> Parsed:
        """The document at path, parsed; SourceError (located) when it cannot be read."""
        return self.parse(read_document(path))

    def row_document(self, document: Document, row: Any) -> Document:
        """The document a row's recipe cites: the imported one, or (for a source read from a directory) the row's
        own file or folder in it at the same commit."""
        return document

    def gpu_type(self, row: Any) -> str:
        """The catalog's GPU type of the row's recipe (row.gpu_type unless the source says otherwise)."""
        return row.gpu_type

    def admit(self, row: Any, catalog: Catalog) -> str | None:
        """Why this row cannot become a recipe with this catalog, else None; by default `catalog_gap` (its model
        has no architecture card, or its GPU type is not in the catalog), or without `needs_architecture` whether
        its model and GPU type are in the catalog at all."""
        gpu = self.gpu_type(row)
        if self.needs_architecture:
            return catalog_gap(catalog, row.model, gpu)
        missing = [what for what, ok in (("model", row.model in catalog.models), ("GPU", gpu in catalog.gpus)) if not ok]
        return f"{' and '.join(missing)} not in the catalog" if missing else None

    def target(self, root: Path, catalog: Catalog, row: Any) -> Path:
        """The recipe file of the row, stable across re-imports (a later document's same row lands on it): by default
        recipes/<model slug>/<GPU type>/<row.key()>.yaml."""
        return recipe_path(root, catalog.model_slugs[row.model], self.gpu_type(row), row.key())

    @abstractmethod
    def build(self, row: Any, catalog: Catalog, document: Document, superseded: list[dict[str, Any]],
              skipped: list[str]) -> dict[str, Any]:
        """The recipe dict of one row. publication must carry document.url, document.commit, row.line (and the
        release where there is one) and `superseded`; skipped: the skip reasons at the same line (say so in notes).
        Use `derive_figures` for MFU and $/1M and `Stated` for figures at a fixed number of decimals."""


class ParallelRow:
    """What a table row's stated GPUs, TP, PP, CP (None: 1), global batch and micro-batch imply: its data-parallel
    size and micro-batches per optimizer step. An importer's row dataclass mixes it in."""

    gpus: int
    tp: int
    pp: int
    cp: int | None
    gbs: int
    mbs: int

    @property
    def dp(self) -> int:
        return self.gpus // (self.tp * self.pp * (self.cp or 1))

    @property
    def gradient_accumulation(self) -> int:
        """Micro-batches per optimizer step on one data-parallel rank: GBS / (MBS x DP)."""
        return self.gbs // (self.mbs * self.dp)


class Stated(float):
    """A figure rendered at a fixed number of decimals, as its required precision asks (0.3420 keeps its zero,
    which a plain float's shortest form would drop)."""

    places: int

    def __new__(cls, value: float, places: int) -> Stated:
        stated = super().__new__(cls, round(value, places))
        stated.places = places
        return stated


def drop_repeats(parsed: Parsed, key: Callable[[Any], Hashable], reason: Callable[[Any, int], str]) -> Parsed:
    """A document's rows without repeats: a row whose key an earlier row has becomes a skip at its line
    (reason(row, the earlier row's line)); the first is kept. Returns `parsed`."""
    seen: dict[Hashable, int] = {}
    kept = []
    for row in parsed.rows:
        k = key(row)
        if k in seen:
            parsed.skips.append(Skip(row.line, reason(row, seen[k])))
            continue
        seen[k] = row.line
        kept.append(row)
    parsed.rows = kept
    return parsed


# A Markdown table's separator line ("|---|:---:|"), after its header line.
TABLE_SEPARATOR = re.compile(r"^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")


def table_end(lines: list[str], i: int) -> int | None:
    """Where the Markdown table whose header is line i (0-based) ends: the index after its last '|' line; None when
    line i is no table header (a '|' line followed by a separator line)."""
    if not (lines[i].lstrip().startswith("|") and i + 1 < len(lines) and TABLE_SEPARATOR.match(lines[i + 1].strip())):
        return None
    end = i + 2
    while end < len(lines) and lines[end].lstrip().startswith("|"):
        end += 1
    return end


def read_table_body(out: Parsed, lines: list[str], body: range, columns: list[str], header_line: int,
                    split: Callable[[str], list[str]], make: Callable[[int, dict[str, str]], list[Any]],
                    refused: tuple[type[Exception], ...] = (ValueError,),
                    reason: Callable[[Exception], str] = str) -> None:
    """The body lines of a Markdown table (0-based indices into lines) as rows: each line split into cells, named
    by `columns`, made into rows by make(1-based line, cells); a line with another number of cells than the header
    (at `header_line`), or whose make raises one of `refused`, becomes a skip at its line saying why."""
    for n in body:
        cells = split(lines[n])
        if len(cells) != len(columns):
            out.skips.append(Skip(n + 1, f"{len(cells)} cells but the header at line {header_line} has {len(columns)}"))
            continue
        try:
            out.rows.extend(make(n + 1, dict(zip(columns, cells, strict=True))))
        except refused as exc:
            out.skips.append(Skip(n + 1, reason(exc)))


def catalog_gap(catalog: Catalog, model: str, gpu: str) -> str | None:
    """Why a row cannot become a recipe here, or None: its model needs an architecture card (its figures are
    recomputed from it) and its GPU type must be in the catalog. The skip reason an importer reports for it."""
    card = catalog.models.get(model)
    if card is None or card.architecture is None:
        return f"model {model} has no architecture card in the catalog"
    return None if gpu in catalog.gpus else f"GPU {gpu} not in the catalog"


def no_command_line(stated: str, url: str | None = None, line: int | None = None) -> str:
    """A reported recipe's `run` where its publication prints no command line: `stated` (comment lines: what the
    publication says about how the row was run), the source and line where a URL is given, then a script that says
    so and fails."""
    source = f"# Source: {url} (line {line}).\n" if url is not None else ""
    return f"{stated}{source}echo 'reported recipe: no published command line' >&2\nexit 1\n"


def imported_result(card: ModelCard, tokens_per_s_per_gpu: float, mfu_note: str | None = None,
                    params_stated_by: tuple[str, str | None] | None = None, **published: Any) -> dict[str, Any]:
    """An imported recipe's `result`: the published tokens/s per GPU; $/1M and MFU left for `derive_figures`; N
    from the model card, stated by the card's source (its first word, the URL) at the card's revision, or by
    `params_stated_by` (source, revision) where the publication names its own; then the publication's own figures
    (`published`, e.g. published_model_tflops_per_gpu and its note), in the order given."""
    source, revision = params_stated_by or (card.active_params.source.split(" ")[0], card.revision)
    return {
        "tokens_per_s_per_gpu": tokens_per_s_per_gpu,
        "usd_per_million_tokens": None,
        "mfu": None,
        "mfu_note": mfu_note,
        "active_params": {"count": card.active_params.count, "source": source, "revision": revision},
        **published,
    }


# libyaml's parser and emitter where PyYAML has them (pip's PyYAML wheels do): the data of a round trip is the same
# as the pure-Python one's (the representer and constructor are the same Python), at a tenth of the time; an import
# of every Megatron-Bridge table made one per recipe. Recipe files themselves are written by the pure-Python emitter
# (render): libyaml's wraps long quoted strings elsewhere, and the files stay byte for byte.
_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_FAST_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def for_validation(recipe: dict[str, Any]) -> dict[str, Any]:
    """The recipe as the strict loader would see it (enums and dates as text are accepted there)."""
    return yaml.load(yaml.dump(recipe, Dumper=_FAST_DUMPER), Loader=_FAST_LOADER)  # noqa: S506 - a safe loader


def _read_existing(text: str) -> Any:
    """An existing recipe file's data; where libyaml refuses it, PyYAML's own parser reads it again, so that what
    the import says about a broken file is PyYAML's located message."""
    try:
        return yaml.load(text, Loader=_FAST_LOADER)  # noqa: S506 - a safe loader
    except yaml.YAMLError:
        return yaml.safe_load(text)


def derive_figures(recipe: dict[str, Any], catalog: Catalog) -> None:
    """Fill result.mfu and result.usd_per_million_tokens (both present, None until here) from figures.derive on
    the validated recipe, at the precision check requires."""
    derived = figures.derive(Recipe.model_validate(for_validation(recipe)), catalog)
    result = recipe["result"]
    if derived.usd_per_million_tokens is not None:
        usd = derived.usd_per_million_tokens
        places = max(figures.IMPORTED_USD_DECIMALS, figures.PRECISIONS["usd_per_million_tokens"].required_decimals(usd))
        result["usd_per_million_tokens"] = Stated(usd, places)
    if derived.mfu is not None:
        result["mfu"] = Stated(derived.mfu, figures.PRECISIONS["mfu"].decimals)


def superseded_by_import(path: Path, document: Document) -> list[dict[str, Any]] | None:
    """publication.superseded for the recipe at path re-imported from document: its earlier list, plus its current
    publication when that is another document or commit (re-importing the same one keeps the list).
    None when the document is already among the superseded: a later import replaced it, the recipe stays."""
    if not path.exists():
        return []
    try:
        old = _read_existing(path.read_text(encoding="utf-8"))
        pub = old.get("publication") or {}
        earlier = list(pub.get("superseded") or [])
        if any((e["url"], e.get("commit")) == (document.url, document.commit) for e in earlier):
            return None
        if (pub.get("url"), pub.get("commit")) == (document.url, document.commit):
            return earlier
        copy_read = {k: pub[k] for k in ("sha256", "stored_copy") if pub.get(k) is not None}  # as its import recorded
        return earlier + [{"url": pub["url"], "commit": pub.get("commit"), **copy_read, "line": pub.get("line"),
                           "tokens_per_s_per_gpu": old["result"]["tokens_per_s_per_gpu"],
                           "published_model_tflops_per_gpu": old["result"].get("published_model_tflops_per_gpu")}]
    except yaml.MarkedYAMLError as exc:
        where = f"line {exc.problem_mark.line + 1}: " if exc.problem_mark else ""
        raise ValueError(f"{path}: the existing recipe is not valid YAML ({where}{exc.problem}); fix or remove the "
                         "file and import again") from None
    except (yaml.YAMLError, AttributeError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: the existing recipe's publication cannot be read ({type(exc).__name__}: {exc}); "
                         "fix or remove the file and import again") from None


class _Dumper(yaml.SafeDumper):
    pass


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # Scripts and notes read best as literal blocks.
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _stated(dumper: yaml.SafeDumper, value: Stated) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:float", f"{value:.{value.places}f}")


_Dumper.add_representer(str, _str)
_Dumper.add_representer(Stated, _stated)


def render(recipe: dict[str, Any], header: str) -> str:
    return header + yaml.dump(recipe, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=110)


def write(built: list[tuple[Path, str]], dry_run: bool) -> WriteReport:
    """Write each (path, text) whose bytes differ (atomically); equal bytes are left untouched."""
    report = WriteReport()
    for path, text in built:
        old = path.read_text(encoding="utf-8") if path.exists() else None
        if old == text:
            report.unchanged.append(path)
            continue
        (report.updated if old is not None else report.created).append(path)
        if dry_run:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, text)
    return report


def check_rendered(built: list[tuple[Path, str]], root: Path, catalog: Catalog) -> list[str]:
    """What `python -m generator check` would say of the recipes an import is about to write: each text staged at
    its own path below a scratch registry (with the sidecar its real path has), loaded and checked by the check's own
    rules; its located lines name the real path and the line in the written text."""
    problems = []
    today = dt.date.today()
    with tempfile.TemporaryDirectory(prefix="import-check-") as folder:
        scratch = Path(folder)
        for path, text in built:
            staged = scratch / path.relative_to(root)
            staged.parent.mkdir(parents=True, exist_ok=True)
            staged.write_text(text, encoding="utf-8")
            sidecar = evidence.path_for(path)
            if sidecar.is_file():
                shutil.copyfile(sidecar, evidence.path_for(staged))
            try:
                problems.extend(check_recipe(load_recipe(staged, display_path(path, root), scratch / RECIPES_DIR),
                                             catalog, today))
            except InputError as exc:
                problems.extend(exc.problems)
    return [str(p) for p in sorted(set(problems))]


class _Refused(Exception):
    """An import stopped before writing: its located lines."""

    def __init__(self, lines: list[str]):
        super().__init__(lines)
        self.lines = lines


def _admitted(source: Source, parsed: Parsed, catalog: Catalog) -> list[Any]:
    """Rows the catalog can take; the others join parsed.skips at their line."""
    admitted = []
    for row in parsed.rows:
        reason = source.admit(row, catalog)
        if reason is not None:
            parsed.skips.append(Skip(row.line, reason))
        else:
            admitted.append(row)
    return admitted


def copy_read(document: Document, file: Path) -> Document:
    """The document with the copy read: the SHA-256 of the file's bytes, and its path from the root of the registry
    that holds it (None where no registry above it does: a checkout elsewhere). A file refused by the source's
    read never gets here; one that cannot be read now is SourceError, located."""
    try:
        with open(file, "rb") as handle:
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}", file=str(file)) from None
    try:
        stored = file.absolute().relative_to(registry.find_root(file)).as_posix()
    except registry.RootNotFound:
        stored = None
    # A path the schema cannot hold (a dot folder, a space) is named by no recipe: the hash alone is recorded.
    named = stored if stored is not None and re.fullmatch(STORED_COPY_PATH, stored) else None
    return replace(document, sha256=digest, stored_copy=named)


def _after(mapping: dict[str, Any], key: str, added: dict[str, Any]) -> dict[str, Any]:
    """The mapping with `added` right after `key` (those keys leave the place they had); at the end without `key`."""
    rest = {k: v for k, v in mapping.items() if k not in added}
    if key not in rest:
        return {**rest, **added}
    out: dict[str, Any] = {}
    for k, v in rest.items():
        out[k] = v
        if k == key:
            out.update(added)
    return out


def cite_copy_read(recipe: dict[str, Any], document: Document) -> None:
    """Record the copy read beside the citation it was read for: on publication.read_from where the recipe names one
    (the original home could not be read), else on the publication; right after its commit. A SHA-256 the source
    already states (a known copy, e.g. playbook's mirror) must be the one read, else SourceError: the import would
    cite bytes it did not read."""
    publication = recipe["publication"]
    if publication.get("read_from"):
        publication["read_from"] = record_copy(publication["read_from"], document)
    else:
        recipe["publication"] = record_copy(publication, document)


def record_copy(cited: dict[str, Any], document: Document) -> dict[str, Any]:
    """The citation of the bytes read (a publication, or the copy named as read_from) with their SHA-256 and stored
    copy right after its commit; unchanged where the document carries no hash. A hash the citation already states
    must be the one read (SourceError otherwise)."""
    if document.sha256 is None:
        return cited
    stated = cited.get("sha256")
    if stated is not None and stated != document.sha256:
        raise SourceError(f"the file read has SHA-256 {document.sha256}; the copy the recipe cites has {stated}")
    copy = {"sha256": document.sha256, "stored_copy": document.stored_copy}
    return _after(cited, "commit", {k: v for k, v in copy.items() if v is not None})  # no copy stored: no line


def build_recipe(source: Source, row: Any, catalog: Catalog, document: Document, superseded: list[dict[str, Any]],
                 skipped: list[str]) -> dict[str, Any]:
    """The recipe of one row as an import writes it: the source's build, with the copy read cited."""
    recipe = source.build(row, catalog, document, superseded, skipped)
    cite_copy_read(recipe, document)
    return recipe


def _build_row(source: Source, row: Any, catalog: Catalog, document: Document, superseded: list[dict[str, Any]],
               skipped: list[str], file: Path) -> str:
    """The rendered recipe of one row; a row whose figures make no valid recipe (a figure out of the schema's
    range, a division the row's own figures make impossible) stops the import at the row's line."""
    try:
        return render(build_recipe(source, row, catalog, document, superseded, skipped), source.header)
    except SourceError as exc:
        raise _Refused([str(SourceError(exc.message, exc.line or row.line, exc.column, exc.file or str(file)))]) from None
    except ValidationError as exc:
        raise _Refused([f"{file}:{row.line}: the row makes no valid recipe: {validation_message(exc)}"]) from None
    except (ValueError, ArithmeticError) as exc:
        raise _Refused([f"{file}:{row.line}: the row makes no valid recipe: {one_line(str(exc), 300)}"]) from None


def run_source(source: Source, root: Path, file: Path, document: Document, dry_run: bool,
               catalog_memo: CatalogMemo | None = None) -> tuple[Parsed | None, WriteReport | None, list[str]]:
    """Parse file with source and write its recipes under root: (parsed, write report, problems).
    Rows the catalog cannot take (source.admit) join parsed.skips at their line; parsed.rows keeps the rest.
    Nothing is written when there are problems: a document that cannot be read (SourceError, located), a row that
    makes no valid recipe, or a recipe `check` would refuse (check's own lines). `catalog_memo` keeps the catalog
    between imports in one process (the fuzz tests)."""
    catalog = load_catalog(root, catalog_memo)
    if catalog.problems:
        return None, None, [str(p) for p in catalog.problems]
    try:
        parsed = source.read(file)
        if not source.reads_directory:  # a folder's rows each cite their own files (row_document): no one copy
            document = copy_read(document, file)
    except SourceError as exc:
        return None, None, [str(exc.at(file))]
    parsed.rows = admitted = _admitted(source, parsed, catalog)
    # A row whose other configuration was skipped says so on its recipe, so the registry shows the skip too.
    skipped_at: dict[int, list[str]] = {}
    for skip in parsed.skips:
        skipped_at.setdefault(skip.line, []).append(skip.reason)
    built: list[tuple[Path, str]] = []
    kept: list[Path] = []
    try:
        for row in admitted:
            path = source.target(root, catalog, row)
            row_document = source.row_document(document, row)
            superseded = superseded_by_import(path, row_document)
            if superseded is None:
                kept.append(path)
                continue
            built.append((path, _build_row(source, row, catalog, row_document, superseded,
                                           skipped_at.get(row.line, []), file)))
    except _Refused as refused:
        return parsed, None, refused.lines
    except ValueError as exc:  # an existing recipe that cannot be read (superseded_by_import)
        return parsed, None, [str(exc)]
    refused = check_rendered(built, root, catalog)
    if refused:
        return parsed, None, [f"{file}: nothing written: `check` would refuse {len(refused)} problem(s) in the "
                              "recipes of this import:", *refused]
    report = write(built, dry_run)
    report.kept = kept
    return parsed, report, []
