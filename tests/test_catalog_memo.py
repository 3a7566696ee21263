"""load_catalog's memo: the same catalog while no catalog file changes, read again when one changes, appears or
goes (the check fuzzer keeps one across its mutants)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from suitehelpers import ROOT

from generator.registry import CatalogMemo, load_catalog


def _copy_catalog(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "catalog", tmp_path / "catalog")
    return tmp_path


def test_unchanged_files_give_the_same_catalog(tmp_path: Path) -> None:
    root = _copy_catalog(tmp_path)
    memo = CatalogMemo()
    first = load_catalog(root, memo)
    assert load_catalog(root, memo) is first
    assert load_catalog(root).gpus == first.gpus  # without a memo: a fresh read, equal


def test_an_edited_file_is_read_again(tmp_path: Path) -> None:
    root = _copy_catalog(tmp_path)
    memo = CatalogMemo()
    first = load_catalog(root, memo)
    gpus = root / "catalog/gpus.yaml"
    stat = gpus.stat()
    gpus.write_text(gpus.read_text() + "\nnot a mapping entry\n")
    os.utime(gpus, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    second = load_catalog(root, memo)
    assert second is not first and second.problems and not first.problems
    assert second.problems[0].path == "catalog/gpus.yaml"


def test_a_model_file_that_goes_or_comes_is_seen(tmp_path: Path) -> None:
    root = _copy_catalog(tmp_path)
    memo = CatalogMemo()
    first = load_catalog(root, memo)
    card = sorted((root / "catalog/models").glob("*.yaml"))[0]
    names = [name for name, slug in first.model_slugs.items() if slug == card.stem]
    text = card.read_text()
    card.unlink()
    gone = load_catalog(root, memo)
    assert names and not any(name in gone.models for name in names)
    card.write_text(text)
    back = load_catalog(root, memo)
    assert all(name in back.models for name in names)


def test_a_file_replaced_with_the_same_size_and_mtime_is_read_again(tmp_path: Path) -> None:
    """An editor's save (a new file renamed over the old) keeps neither the inode nor, here, anything else a stat
    would show: same size, mtime set back."""
    root = _copy_catalog(tmp_path)
    memo = CatalogMemo()
    first = load_catalog(root, memo)
    gpus = root / "catalog/gpus.yaml"
    stat = gpus.stat()
    text = gpus.read_text()
    changed = text.replace("H100", "H1OO", 1)  # one character for another: the same size
    assert changed != text and len(changed.encode()) == stat.st_size
    new = gpus.with_name("gpus.yaml.new")
    new.write_text(changed)
    os.utime(new, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    new.replace(gpus)
    second = load_catalog(root, memo)
    assert second is not first and "H1OO" in second.gpus and "H1OO" not in first.gpus
