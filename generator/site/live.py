"""What `mkdocs serve` needs to rebuild quickly: memoised loads and pages, pages written only when changed.

A rebuild re-runs the hook in the same process. Loads are kept by (file, mtime, size) and recipe pages by
(file bytes, catalog, templates), so one edited recipe costs one load and one render; pages are then written to
a cache folder (outside the docs dir) only if their text changed, which lets `mkdocs serve --dirty` rebuild just
the pages that changed. The memos live as long as the generator modules (the hook drops them when code changes).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from generator.check import LoadMemo, Registry, load_registry

_LOADS: LoadMemo = {}


def load_registry_memo(root: Path) -> Registry:
    """generator.check.load_registry, reusing the loads of files unchanged since the last call in this process."""
    return load_registry(root, memo=_LOADS)


def write_if_changed(folder: Path, rel: str, content: str) -> Path:
    """folder/rel holding content; rewritten (atomically) only when it differs, so its mtime means 'changed'."""
    target = folder / rel
    data = content.encode("utf-8")
    try:
        if target.stat().st_size == len(data) and target.read_bytes() == data:
            return target
    except OSError:
        pass
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.replace(tmp, target)
    return target


def fingerprint(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in sorted(paths):
        try:
            digest.update(str(path).encode() + path.read_bytes())
        except OSError:
            digest.update(str(path).encode())
    return digest.hexdigest()
