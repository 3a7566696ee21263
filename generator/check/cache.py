"""The check's content-hash cache: plain JSON data, kept outside the repository.

A warm re-check reads and hashes each file, nothing more. A result is reused only for the same bytes (recipe and
evidence sidecar; a failed-layouts file), the same catalog, the same code and the same day (the future-date rule
depends on today).

Every digest here binds each input on its own (`input_digest`): a name, then each part's length and bytes, so no two
different sets of inputs give one digest. Concatenated bytes would not: a recipe whose last byte moved to the front
of its sidecar, or a missing sidecar and an empty one, hashed alike, and a warm check answered for files it never
checked. A sidecar that is missing, or that cannot be read, is a part of its own (never the bytes of an empty file).

Why outside the tree: a cache a pull request can supply could say "no problems" for a file it also supplies, so
the cache lives in the user's cache folder ($OPENRECIPES_CACHE_DIR, else $XDG_CACHE_HOME/openrecipes, else
~/.cache/openrecipes), one file per registry root. It is JSON validated on read (never unpickled), and a file
that does not have exactly the expected shape is ignored.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from pathlib import Path

from generator.problems import Problem

FORMAT = "openrecipes-check-cache/2"
# The generator's modules the check imports (tests/check/test_check_cache.py keeps this list whole), beside check/.
CODE_FILES = ("__init__.py", "models.py", "load.py", "figures.py", "catalog.py", "evidence.py", "registry.py",
              "problems.py", "failed.py", "positions.py")


def input_digest(kind: str, parts: list[tuple[str, bytes | None]]) -> str:
    """SHA-256 of named parts, each framed by its length: (name, bytes), or (name, None) for a part that is absent.
    `kind` says what the digest is of, so digests of different kinds of input never meet."""
    digest = hashlib.sha256()

    def frame(data: bytes) -> None:
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)

    frame(kind.encode())
    for name, data in parts:
        frame(name.encode("utf-8", errors="surrogateescape"))
        if data is None:
            digest.update(b"\0")  # absent
        else:
            digest.update(b"\1")
            frame(data)
    return digest.hexdigest()


def cache_dir() -> Path:
    explicit = os.environ.get("OPENRECIPES_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "openrecipes"


def code_key() -> str:
    here = Path(__file__).resolve().parent
    paths = [*(here.parent / n for n in CODE_FILES), *sorted(here.glob("*.py"))]
    return input_digest("code", [(str(p.relative_to(here.parent)), p.read_bytes()) for p in paths])


def catalog_key(root: Path) -> str:
    parts: list[tuple[str, bytes | None]] = []
    for path in sorted((root / "catalog").rglob("*.yaml")):
        try:
            data: bytes | None = path.read_bytes()
        except OSError:
            data = None  # unreadable: a part of its own, unlike any bytes
        parts.append((str(path.relative_to(root)), data))
    return input_digest("catalog", parts)


Entry = tuple[str, str, list[Problem]]  # (content digest hex, recipe id, problems)


class CheckCache:
    def __init__(self, root: Path, today: dt.date, folder: Path | None = None) -> None:
        root_id = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]
        self.file = (folder or cache_dir()) / f"check-{root_id}.json"
        self.key = [code_key(), catalog_key(root), today.isoformat()]
        self.entries: dict[str, Entry] = {}
        self.dirty = False
        self.entries = self._read()

    def _read(self) -> dict[str, Entry]:
        try:
            data = json.loads(self.file.read_bytes())
        except (OSError, ValueError, RecursionError):
            return {}
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("key") != self.key:
            return {}
        entries = data.get("entries")
        if not isinstance(entries, dict):
            return {}
        out: dict[str, Entry] = {}
        for display, value in entries.items():
            entry = _entry(value)
            if entry is None:
                return {}  # not what this code writes: trust none of it
            out[display] = entry
        return out

    def get(self, display: str, digest: str) -> tuple[str, list[Problem]] | None:
        hit = self.entries.get(display)
        return (hit[1], hit[2]) if hit and hit[0] == digest else None

    def put(self, display: str, digest: str, rid: str, problems: list[Problem]) -> None:
        self.entries[display] = (digest, rid, problems)
        self.dirty = True

    def save(self) -> str | None:
        """Writes the cache; a cache that cannot be written is a warning (returned), never a failure."""
        if not self.dirty:
            return None
        from generator.registry import atomic_write

        data = {"format": FORMAT, "key": self.key,
                "entries": {d: [e[0], e[1], [[p.path, p.line, p.col, p.field, p.message] for p in e[2]]]
                            for d, e in self.entries.items()}}
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(self.file, json.dumps(data, separators=(",", ":")))
        except OSError as exc:
            return f"warning: the check cache {self.file} cannot be written ({exc.strerror or exc}); checked without it"
        return None


def _entry(value: object) -> Entry | None:
    if not (isinstance(value, list) and len(value) == 3 and isinstance(value[0], str) and isinstance(value[1], str)
            and isinstance(value[2], list)):
        return None
    problems = []
    for p in value[2]:
        if not (isinstance(p, list) and len(p) == 5 and isinstance(p[0], str) and type(p[1]) is int
                and type(p[2]) is int and isinstance(p[3], str) and isinstance(p[4], str)):
            return None
        problems.append(Problem(p[0], p[1], p[2], p[3], p[4]))
    return value[0], value[1], problems
