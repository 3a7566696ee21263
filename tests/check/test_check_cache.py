"""The check cache answers only for the exact bytes it checked (issue 41, item 3).

A cached verdict is bound to each input on its own (generator/check/cache.py, `input_digest`): the recipe's bytes,
the sidecar's bytes, or the sidecar's absence. Before, the digest was the recipe's bytes followed by the sidecar's
with no separator, and a missing sidecar hashed as an empty one, so two edits that `--no-cache` refuses came back
`ok` from a warm cache. Each case here: a warm check of a clean registry, then the edit, then the same problems
warm as with the cache off."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

from generator import evidence
from generator.check import check_tree
from generator.check.cache import CODE_FILES, input_digest

ROOT = Path(__file__).resolve().parents[2]
WITH_SIDECAR = "recipes/llama-3.2-1b/h200/engine-sdpa-4k.yaml"
REFERENCE = "recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml"


def _registry(tmp_path: Path, *recipes: str) -> Path:
    root = tmp_path / "registry"
    shutil.copytree(ROOT / "catalog", root / "catalog")
    for rel in recipes:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / rel, root / rel)
        sidecar = evidence.path_for(ROOT / rel)
        if sidecar.exists():
            shutil.copyfile(sidecar, evidence.path_for(root / rel))
    return root


def _warm_and_cold(root: Path, cache: Path) -> tuple[list[str], list[str]]:
    warm = [str(p) for p in check_tree(root, use_cache=True, cache_folder=cache).problems]
    cold = [str(p) for p in check_tree(root, use_cache=False).problems]
    return warm, cold


def test_a_byte_moved_from_the_sidecar_to_the_recipe_is_checked_again(tmp_path: Path) -> None:
    root = _registry(tmp_path, WITH_SIDECAR)
    cache = tmp_path / "cache"
    assert _warm_and_cold(root, cache) == ([], [])  # the cache now holds this recipe's "no problems"
    recipe, sidecar = root / WITH_SIDECAR, evidence.path_for(root / WITH_SIDECAR)
    r, s = recipe.read_bytes(), sidecar.read_bytes()
    recipe.write_bytes(r + s[:1])  # the forged pair: the old digest, sha256(recipe + sidecar), is unchanged
    sidecar.write_bytes(s[1:])
    assert hashlib.sha256(r + s).digest() == hashlib.sha256(recipe.read_bytes() + sidecar.read_bytes()).digest()
    warm, cold = _warm_and_cold(root, cache)
    assert cold, "the edit must be a problem without the cache"
    assert warm == cold


def test_an_empty_sidecar_is_not_a_missing_one(tmp_path: Path) -> None:
    root = _registry(tmp_path, REFERENCE)
    cache = tmp_path / "cache"
    assert _warm_and_cold(root, cache) == ([], [])
    evidence.path_for(root / REFERENCE).write_bytes(b"")  # hashed as "no sidecar" before
    warm, cold = _warm_and_cold(root, cache)
    assert cold and warm == cold
    assert any("attune-tp2-pp4-split13.evidence.json" in line for line in cold)


def test_the_whole_registry_warm_rejects_what_it_rejects_cold(tmp_path: Path) -> None:
    """Both forged edits in one registry of three recipes, checked as a whole (no paths given)."""
    root = _registry(tmp_path, WITH_SIDECAR, REFERENCE, "recipes/llama-3.2-1b/h200/torchtitan-4k.yaml")
    cache = tmp_path / "cache"
    assert _warm_and_cold(root, cache) == ([], [])
    recipe, sidecar = root / WITH_SIDECAR, evidence.path_for(root / WITH_SIDECAR)
    r, s = recipe.read_bytes(), sidecar.read_bytes()
    recipe.write_bytes(r + s[:1])
    sidecar.write_bytes(s[1:])
    evidence.path_for(root / REFERENCE).write_bytes(b"")
    warm, cold = _warm_and_cold(root, cache)
    assert {line.split(":", 1)[0] for line in cold} == {WITH_SIDECAR, REFERENCE}
    assert warm == cold


def test_the_digest_binds_each_part() -> None:
    assert input_digest("recipe", [("recipe", b"ab"), ("sidecar", b"c")]) != \
        input_digest("recipe", [("recipe", b"a"), ("sidecar", b"bc")])
    assert input_digest("recipe", [("recipe", b"a"), ("sidecar", None)]) != \
        input_digest("recipe", [("recipe", b"a"), ("sidecar", b"")])
    assert input_digest("recipe", [("a", b"")]) != input_digest("failed layouts", [("a", b"")])
    assert input_digest("catalog", [("x", b"1"), ("y", b"2")]) != input_digest("catalog", [("x", b"1y"), ("", b"2")])


def test_the_code_key_covers_every_generator_module_the_check_imports() -> None:
    """A changed rule or loader module is a new code key (every cached verdict dropped): each generator module the
    check imports, outside check/ (hashed whole), is in CODE_FILES."""
    done = subprocess.run(
        [sys.executable, "-c", "import sys, generator.check; print('\\n'.join(sorted(sys.modules)))"],
        capture_output=True, text=True, cwd=ROOT, timeout=60, check=True)
    imported = {m for m in done.stdout.split() if m == "generator" or m.startswith("generator.")}
    files = {("__init__.py" if m == "generator" else m.split(".", 1)[1] + ".py") for m in imported
             if not m.startswith("generator.check")}
    assert files <= set(CODE_FILES), files - set(CODE_FILES)
