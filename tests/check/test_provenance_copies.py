"""A publication's recorded SHA-256 is held to the stored copy it names (generator/check/provenance.py), and the
importers record both (generator/importers/base.py copy_read / cite_copy_read).

Real copies: torchtitan's benchmarks/llama3_h100_202412_torchtitan.md at b5bcd76c (tests/importer/sources/, its
SHA-256 by hand: `sha256sum tests/importer/sources/titan-llama3_h100_202412_torchtitan-b5bcd76c.md` gives
287b0c81...00eb5) and the stored 25.07 NeMo page (tests/importer/data/nemo-docs-25.07.txt, ea83f21f...dfdf5, as
nemo-docs-pages.md lists it). One byte changed in a copy, or another file's hash in the recipe, is one located
problem; a copy the registry does not hold is not checked."""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import pytest
import yaml
from recipe_edits import edited_registry
from suitehelpers import check_registry

from generator.check import check_tree
from generator.importers.base import Document, run_source
from generator.importers.nemo import SOURCE as NEMO
from generator.importers.torchtitan_benchmarks import SOURCE as TITAN
from generator.registry import load_registry

ROOT = Path(__file__).resolve().parents[2]
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
TITAN_RECIPE = "recipes/llama-3.1-405b/h100-96gb/titan-9dec370-t5-1f1b.yaml"
TITAN_COPY = "tests/importer/sources/titan-llama3_h100_202412_torchtitan-b5bcd76c.md"
TITAN_SHA256 = "287b0c812b8c99d2f6e614603b46a8cbb49fca957f2bc2d5199c7d6342f00eb5"  # sha256sum, by hand
TITAN_COMMIT = "b5bcd76c66d0acb1a08b176d9639425bc55e0b2a"
NEMO_RECIPE = "recipes/llama-3-8b/gb200/nemo-25.07-pretrain-dgx-gb200-8gpu-fp8-cs.yaml"
NEMO_COPY = "tests/importer/data/nemo-docs-25.07.txt"
NEMO_SHA256 = "ea83f21f3e817886f7536671a747cc9cfb75393291a4134c81a9179a3e00fdf5"  # nemo-docs-pages.md
OTHER_SHA256 = "18b39007e0695134daf048bee7e1d7d25b24517a2961840d7bf449ce07113851"  # mb-performance-summary-067f987d.md


def _with_copy(tmp_path: Path, recipe: str, copy: str, edits: list[tuple[str, str]] | None = None) -> Path:
    """A registry holding the committed recipe (edited) and its stored copy byte for byte at the path it names."""
    root = edited_registry(tmp_path, recipe, edits or [])
    (root / copy).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(ROOT / copy, root / copy)
    return root


def _line_of(root: Path, rel: str, text: str) -> int:
    return (root / rel).read_text(encoding="utf-8").splitlines().index(text) + 1


def test_the_recorded_hashes_are_the_hand_computed_ones() -> None:
    assert hashlib.sha256((ROOT / TITAN_COPY).read_bytes()).hexdigest() == TITAN_SHA256
    assert f"  sha256: {TITAN_SHA256}\n  stored_copy: {TITAN_COPY}\n" in (ROOT / TITAN_RECIPE).read_text()
    assert f"    sha256: {NEMO_SHA256}\n    stored_copy: {NEMO_COPY}\n" in (ROOT / NEMO_RECIPE).read_text()


def test_a_real_stored_copy_passes(tmp_path: Path) -> None:
    root = _with_copy(tmp_path, TITAN_RECIPE, TITAN_COPY)
    assert check_registry(load_registry(root)) == []


def test_one_byte_changed_in_the_copy_is_one_problem_at_the_hash(tmp_path: Path) -> None:
    root = _with_copy(tmp_path, TITAN_RECIPE, TITAN_COPY)
    copy = root / TITAN_COPY
    raw = copy.read_bytes()
    at = raw.index(b"| 1F1B | 100 | 82.5 |")  # the recipe's row (line 59): 100 -> 101
    mutated = raw[:at + 11] + b"1" + raw[at + 12:]
    assert len(mutated) == len(raw) and mutated != raw
    copy.write_bytes(mutated)
    problems = check_registry(load_registry(root))
    line = _line_of(root, TITAN_RECIPE, f"  sha256: {TITAN_SHA256}")
    assert [(p.path, p.line, p.col, p.field) for p in problems] == [(TITAN_RECIPE, line, 11, "publication.sha256")]
    assert hashlib.sha256(mutated).hexdigest() in problems[0].message and TITAN_SHA256 in problems[0].message


def test_the_hash_of_another_file_is_one_problem(tmp_path: Path) -> None:
    root = _with_copy(tmp_path, TITAN_RECIPE, TITAN_COPY, [(f"sha256: {TITAN_SHA256}", f"sha256: {OTHER_SHA256}")])
    problems = check_registry(load_registry(root))
    assert [p.field for p in problems] == ["publication.sha256"]
    assert f"has SHA-256 {TITAN_SHA256}, not the {OTHER_SHA256} recorded" in problems[0].message


def test_a_copy_read_from_a_mirror_is_held_to_its_own_hash(tmp_path: Path) -> None:
    """The NeMo 25.07 recipe cites its versioned page and names the stored copy read as read_from."""
    root = _with_copy(tmp_path, NEMO_RECIPE, NEMO_COPY)
    assert check_registry(load_registry(root)) == []
    copy = root / NEMO_COPY
    copy.write_bytes(copy.read_bytes().replace(b"GBS: Global Batch Size", b"GBS: Global Batch Sizf"))
    problems = check_registry(load_registry(root))
    assert [p.field for p in problems] == ["publication.read_from.sha256"]


def test_a_stored_copy_without_its_hash_is_a_problem(tmp_path: Path) -> None:
    root = _with_copy(tmp_path, TITAN_RECIPE, TITAN_COPY, [(f"  sha256: {TITAN_SHA256}\n", "")])
    problems = check_registry(load_registry(root))
    assert [p.field for p in problems] == ["publication.stored_copy"]
    assert problems[0].message == f"names the stored copy {TITAN_COPY} but no sha256 of it"


def test_a_copy_the_registry_does_not_hold_is_not_checked(tmp_path: Path) -> None:
    root = edited_registry(tmp_path, TITAN_RECIPE, [(f"sha256: {TITAN_SHA256}", f"sha256: {OTHER_SHA256}")])
    assert check_registry(load_registry(root)) == []


@pytest.mark.parametrize("path", ["/etc/passwd", "../outside.md", "tests/../../outside.md", ".hidden/copy.md"])
def test_a_stored_copy_outside_the_repository_is_refused_by_the_schema(tmp_path: Path, path: str) -> None:
    root = edited_registry(tmp_path, TITAN_RECIPE, [(f"stored_copy: {TITAN_COPY}", f"stored_copy: '{path}'")])
    problems = check_registry(load_registry(root))
    assert [p.field for p in problems] == ["publication.stored_copy"], problems


def test_the_warm_check_sees_a_changed_copy(tmp_path: Path) -> None:
    """The check cache binds a recipe's result to the stored copies it names: a copy edited after a clean check is
    found by the next (cached) check, and restoring it clears the problem."""
    root = _with_copy(tmp_path / "registry", TITAN_RECIPE, TITAN_COPY)
    cache = tmp_path / "cache"
    assert check_tree(root, cache_folder=cache).problems == []
    copy = root / TITAN_COPY
    original = copy.read_bytes()
    copy.write_bytes(original + b"\n")
    assert [p.field for p in check_tree(root, cache_folder=cache).problems] == ["publication.sha256"]
    copy.write_bytes(original)
    assert check_tree(root, cache_folder=cache).problems == []


MB_RECIPE = "recipes/deepseek-v3/b200/mb-25.09-dgx-b200-256gpu-fp8-cs-tokendrop.yaml"
MB_FIRST = "tests/importer/data/performance-summary.md"  # df0289c1, superseded twice since
MB_FIRST_SHA256 = "8bc0acd94788273be35332dac6c8b9111344c5f35b7fc540ed728f7b26566947"  # sha256sum, by hand


def test_a_superseded_citation_keeps_its_copy_and_is_held_to_it(tmp_path: Path) -> None:
    """The Megatron-Bridge row imported from df0289c1's summary (line 185), then from two later documents: its first
    citation, now publication.superseded[0], names that copy and hash; one byte changed in the copy is one problem
    there."""
    text = (ROOT / MB_RECIPE).read_text(encoding="utf-8")
    assert f"    sha256: {MB_FIRST_SHA256}\n    stored_copy: {MB_FIRST}\n    line: 185\n" in text
    root = _with_copy(tmp_path, MB_RECIPE, MB_FIRST)
    assert check_registry(load_registry(root)) == []
    copy = root / MB_FIRST
    copy.write_bytes(copy.read_bytes().replace(b"2265", b"2266", 1))
    problems = check_registry(load_registry(root))
    line = _line_of(root, MB_RECIPE, f"    sha256: {MB_FIRST_SHA256}")
    assert [(p.line, p.field) for p in problems] == [(line, "publication.superseded.0.sha256")]


def _import_titan(root: Path, file: Path) -> dict[str, str]:
    document = Document.github("pytorch/torchtitan", TITAN_COMMIT, "benchmarks/llama3_h100_202412_torchtitan.md")
    parsed, report, problems = run_source(TITAN, root, file, document, dry_run=False)
    assert problems == [] and report is not None and report.created
    text = (root / TITAN_RECIPE).read_text(encoding="utf-8")
    return dict(re.findall(r"^  (sha256|stored_copy): (\S+)$", text, re.MULTILINE))


def test_an_import_records_the_copy_it_read(tmp_path: Path) -> None:
    """From a copy inside the registry: its SHA-256 and its path; from a file outside any registry, or at a path the
    schema's stored_copy cannot hold (a dot folder): the SHA-256 only."""
    inside = tmp_path / "registry"
    shutil.copytree(ROOT / "catalog", inside / "catalog")
    (inside / "recipes").mkdir()
    (inside / "sources").mkdir()
    shutil.copyfile(ROOT / TITAN_COPY, inside / "sources/titan.md")
    assert _import_titan(inside, inside / "sources/titan.md") == {"sha256": TITAN_SHA256, "stored_copy": "sources/titan.md"}
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shutil.copyfile(ROOT / TITAN_COPY, outside / "titan.md")
    shutil.rmtree(inside / "recipes")
    (inside / "recipes").mkdir()
    assert _import_titan(inside, outside / "titan.md") == {"sha256": TITAN_SHA256}
    (inside / ".downloads").mkdir()  # inside the registry, but a path the schema's stored_copy cannot hold
    shutil.copyfile(ROOT / TITAN_COPY, inside / ".downloads/titan.md")
    shutil.rmtree(inside / "recipes")
    (inside / "recipes").mkdir()
    assert _import_titan(inside, inside / ".downloads/titan.md") == {"sha256": TITAN_SHA256}


def test_an_import_whose_bytes_are_not_the_cited_copy_is_refused(tmp_path: Path) -> None:
    """nemo.STORED_PAGES names the 25.07 copy's SHA-256; a file with one byte changed cited as that copy writes
    nothing and says so in one located line."""
    root = tmp_path / "registry"
    shutil.copytree(ROOT / "catalog", root / "catalog")
    (root / "recipes").mkdir()
    changed = root / "nemo-docs-25.07.txt"
    changed.write_bytes((ROOT / NEMO_COPY).read_bytes().replace(b"GBS: Global Batch Size", b"GBS: Global Batch Sizf"))
    url = "https://docs.nvidia.com/nemo-framework/user-guide/25.07/performance/performance-summary.html"
    parsed, report, problems = run_source(NEMO, root, changed, Document(url, None), dry_run=False)
    assert report is None and len(problems) == 1
    assert problems[0].startswith(f"{changed}:") and f"the copy the recipe cites has {NEMO_SHA256}" in problems[0]
    assert list((root / "recipes").iterdir()) == []


STORED_FAMILIES = ("llm-foundry", "megatron-bridge", "torchtitan-benchmarks", "automodel", "nemo", "playbook")
_HEADER = re.compile(r"^# Imported by `python -m generator import ([a-z-]+)`")
_COPY_READ = re.compile(r"^ +sha256: ([0-9a-f]{64})\n +stored_copy: (\S+)$", re.MULTILINE)


def test_every_recipe_read_from_a_stored_copy_names_it_and_its_hash() -> None:
    """The families imported from copies this repository stores (llm-foundry, Megatron-Bridge, torchtitan, AutoModel,
    NeMo, the playbook) name the copy on every recipe, as do the 8 DGX Cloud recipes of 1f6d9f4's llama3.1/README.md
    and the 12 rows of 35a9aec's and 143b90d's llama3.1/README_70b.md on their superseded citations;
    each copy named has the hash recorded; the 91 Megatron-Bridge rows of the two earlier documents name them on
    both superseded citations. MLPerf (a round's folder of files) and the other DGX Cloud READMEs (read from
    checkouts) name none."""
    named: dict[str, set[str]] = {}
    naming: dict[str, int] = {}
    for path in (ROOT / "recipes").glob("*/*/*.yaml"):
        text = path.read_text(encoding="utf-8")
        header = _HEADER.match(text)
        family = header.group(1) if header else "(not imported)"
        copies = _COPY_READ.findall(text)
        assert copies or family not in STORED_FAMILIES, path
        for sha256, copy in copies:
            named.setdefault(copy, set()).add(sha256)
            naming[family] = naming.get(family, 0) + 1
    assert {copy: hashlib.sha256((ROOT / copy).read_bytes()).hexdigest() for copy in named} == {
        copy: next(iter(hashes)) for copy, hashes in named.items() if len(hashes) == 1}
    assert naming == {"llm-foundry": 209, "megatron-bridge": 287 + 2 * 91, "torchtitan-benchmarks": 28,
                      "automodel": 13, "nemo": 23, "playbook": 1721, "dgxc-benchmarking": 8 + 2 * 12}


def test_every_dgx_cloud_citation_names_the_readme_hash() -> None:
    """DGX Cloud's READMEs were read from checkouts of NVIDIA/dgxc-benchmarking (tests/importer/data/dgxc/SOURCES.md):
    every citation of a dgxc-* recipe, current or superseded, names the SHA-256 of the README read, and those of the
    README copies stored here are the hashes SOURCES.md lists for them (by hand, `sha256sum`)."""
    listed = dict(re.findall(r"^\| dgxc-[^|]+ \| (https://\S+) \| [0-9a-f]{40} \| ([0-9a-f]{64}) \|$",
                             (ROOT / "tests/importer/data/dgxc/SOURCES.md").read_text(encoding="utf-8"), re.MULTILINE))
    assert len(listed) == 7
    seen: dict[str, str] = {}
    for path in (ROOT / "recipes").glob("*/*/dgxc-*.yaml"):
        publication = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)["publication"]
        for cited in [publication, *publication["superseded"]]:
            assert re.fullmatch(r"[0-9a-f]{64}", cited.get("sha256") or ""), (path, cited["url"])
            assert seen.setdefault(cited["url"], cited["sha256"]) == cited["sha256"], cited["url"]
    stored = {url: sha256 for url, sha256 in listed.items() if url in seen}
    assert len(stored) == 4 and all(seen[url] == sha256 for url, sha256 in stored.items())  # the 4 READMEs


PLAYBOOK_COPY = "tests/importer/sources/playbook-benchmarks_interactive-924e4d0b.html"
PLAYBOOK_SHA256 = "22bcd7a43eb23aa3eab3523829eb86a995a34d58a4879051241cbf3ddc9f202b"  # its .source.md, sha256sum


def test_a_failed_layouts_file_is_held_to_its_copy_warm_and_cold(tmp_path: Path) -> None:
    """failed/playbook-llama-1b.yaml names the playbook copy its crosses were read from (read_from.stored_copy):
    clean with the copy as committed; with one byte of the 2.9 MB copy changed, one problem at read_from.sha256, found
    by a cached check after a clean one too."""
    root = tmp_path / "registry"
    shutil.copytree(ROOT / "catalog", root / "catalog")
    (root / "recipes").mkdir()
    (root / "failed").mkdir()
    shutil.copyfile(ROOT / "failed/playbook-llama-1b.yaml", root / "failed/playbook-llama-1b.yaml")
    (root / PLAYBOOK_COPY).parent.mkdir(parents=True)
    shutil.copyfile(ROOT / PLAYBOOK_COPY, root / PLAYBOOK_COPY)
    failed_text = (root / "failed/playbook-llama-1b.yaml").read_text(encoding="utf-8")
    assert f"  sha256: {PLAYBOOK_SHA256}\n  stored_copy: {PLAYBOOK_COPY}\n" in failed_text
    cache = tmp_path / "cache"
    assert check_tree(root, cache_folder=cache).problems == []
    raw = (root / PLAYBOOK_COPY).read_bytes()
    (root / PLAYBOOK_COPY).write_bytes(raw[:-2] + bytes([raw[-2] ^ 1]) + raw[-1:])
    warm = check_tree(root, cache_folder=cache).problems
    cold = check_tree(root, use_cache=False).problems
    assert warm == cold and [(p.path, p.field) for p in cold] == [("failed/playbook-llama-1b.yaml", "read_from.sha256")]
