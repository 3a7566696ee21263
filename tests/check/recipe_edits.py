"""One committed recipe, edited, in a registry of its own (the committed catalog beside it): what the check tests
that change a figure or a field and read the problems start from."""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def edited_registry(tmp_path: Path, rel: str, edits: list[tuple[str, str]]) -> Path:
    """tmp_path holding catalog/ and the recipe at `rel` with each (old, new) replaced once (old must occur once)."""
    shutil.copytree(ROOT / "catalog", tmp_path / "catalog")
    target = tmp_path / rel
    target.parent.mkdir(parents=True)
    text = (ROOT / rel).read_text(encoding="utf-8")
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    target.write_text(text, encoding="utf-8")
    return tmp_path
