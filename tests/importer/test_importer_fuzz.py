"""Fuzz every importer (issue 41, deliverable 5) with mutants of the committed source documents: numbers replaced by
hostile ones (1e308, 1e999, Infinity, NaN, 400 digits, 0, negative, 2 MB of text, control characters), lines
deleted, repeated or swapped, spans cut out, the document truncated. Each mutant goes through the whole import
(base.run_source: read, parse, build, check, write) into a scratch registry, and one of these holds:

- the import stops with located lines (the file, or a recipe path from check), one line each, writing nothing;
- the import writes recipes, and `check` (check_tree over the scratch registry, independent of the import's own
  check) accepts every one of them, and every skip names a line of the mutant.

Any other exception fails the test. Each importer's fuzz takes about 20 s or less (max_examples below).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.catalog import Catalog
from generator.check import check_tree
from generator.importers import get_source
from generator.importers.base import Document, Parsed, Source, run_source
from generator.registry import CatalogMemo

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ROOT / "tests/importer/sources"
ROUND = ROOT / "tests/importer/data/mlperf_training/training_results_v5.1"


def _lines(path: Path, last: int | None = None) -> str:
    """The document, or its first `last` lines (llm-foundry's first table: its 209 rows would take 10 s a mutant)."""
    text = path.read_text(encoding="utf-8")
    return text if last is None else "\n".join(text.split("\n")[:last]) + "\n"


# source -> (the document fuzzed, mutants per run: about 20 s each on a loaded 2-core machine)
DOCUMENTS = {
    "automodel": (SOURCES / "automodel-performance-summary-36044ad3.mdx", None, 30),
    "dgxc-benchmarking": (ROOT / "tests/importer/data/dgxc/dgxc-1f6d9f4-llama3.1-README.md", None, 30),
    "llm-foundry": (SOURCES / "foundry-benchmarking-readme-8c8dd48f.md", 94, 20),
    "megatron-bridge": (SOURCES / "mb-performance-summary-067f987d.md", None, 30),
    "nemo": (SOURCES / "nemo-performance-summary-8e3d65dc.md", None, 30),
    "playbook": (SOURCES / "playbook-benchmarks_interactive-924e4d0b.html", None, 10),
    "torchtitan-benchmarks": (SOURCES / "titan-llama3_h100_202412_torchtitan-b5bcd76c.md", None, 25),
}
HOSTILE = ["", "x", "0", "-8", "0.0001", "1e308", "1e999", "Infinity", "NaN", "9" * 400, "9" * 40, "|", "n/a",
           "1,2,3", "[7](http://a)", "\x1b[2J", "\u202e", "\r", "x" * 2_000_000, '"', "]", "}", "{"]
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
DOCUMENT = Document("https://github.com/example/docs/blob/0123456/doc.md", "0123456")
MEMO = CatalogMemo()


@st.composite
def mutants(draw: st.DrawFn, text: str) -> str:
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["number", "number", "number", "line", "span", "truncate"]))
        if kind == "number":
            found = list(NUMBER.finditer(text))
            if found:
                m = found[draw(st.integers(0, len(found) - 1))]
                text = text[:m.start()] + draw(st.sampled_from(HOSTILE)) + text[m.end():]
        elif kind == "line":
            lines = text.split("\n")
            i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
            how = draw(st.sampled_from(["delete", "repeat", "swap"]))
            if how == "delete":
                del lines[i]
            elif how == "repeat":
                lines.insert(i, lines[i])
            else:
                lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
        elif kind == "span":
            at = draw(st.integers(0, max(0, len(text) - 1)))
            text = text[:at] + text[at + draw(st.integers(1, 200)):]
        else:
            text = text[:draw(st.integers(0, len(text)))]
    return text


class ChangedRows(Source):
    """A source's import of only the rows a mutant changed (a row equal to one of the committed document's is
    imported, byte for byte, by tests/importer/test_playbook.py): the playbook's 2.9 MB page holds hundreds of rows,
    a whole import of each mutant took 50 s."""

    def __init__(self, source: Source, original: Parsed):
        self.source, self.name = source, source.name
        self.original = {self.unplaced(row) for row in original.rows}

    @staticmethod
    def unplaced(row: Any) -> str:
        """The row without its place in the page: a cut earlier on the page's one long line moves every later
        row's column, not what it says."""
        return repr(dataclasses.replace(row, line=0, column=0))

    def parse(self, text: str) -> Parsed:
        parsed = self.source.parse(text)
        parsed.rows = [row for row in parsed.rows if self.unplaced(row) not in self.original]
        return parsed

    def admit(self, row: Any, catalog: Catalog) -> str | None:
        return self.source.admit(row, catalog)

    def target(self, root: Path, catalog: Catalog, row: Any) -> Path:
        return self.source.target(root, catalog, row)

    def build(self, row: Any, catalog: Catalog, document: Document, superseded: list[dict[str, Any]],
              skipped: list[str]) -> dict[str, Any]:
        return self.source.build(row, catalog, document, superseded, skipped)


def _written(root: Path) -> list[Path]:
    return sorted((root / "recipes").rglob("*.yaml")) if (root / "recipes").exists() else []


def _outcome(source: Source, root: Path, file: Path, lines: int | None) -> None:
    """The property every mutant's import keeps (module docstring)."""
    shutil.rmtree(root / "recipes", ignore_errors=True)
    parsed, report, problems = run_source(source, root, file, DOCUMENT, dry_run=False, catalog_memo=MEMO)
    if problems:
        assert report is None and _written(root) == [], problems[:3]
        assert all("\n" not in p and p.startswith((str(file), "recipes/")) for p in problems), problems[:3]
        return
    assert parsed is not None and report is not None
    found = check_tree(root, use_cache=False, jobs=1, catalog_memo=MEMO).problems
    assert found == [], [str(p) for p in found[:3]]
    if lines is not None:
        assert all(1 <= s.line <= lines and s.reason for s in parsed.skips)
        assert all(1 <= r.line <= lines for r in parsed.rows)


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz-registry")
    (root / "catalog").symlink_to(ROOT / "catalog")
    return root


@pytest.mark.slow
@pytest.mark.parametrize("source", sorted(DOCUMENTS))
def test_mutants_of_the_committed_document_import_or_stop_located(source: str, registry: Path) -> None:
    path, last, examples = DOCUMENTS[source]
    original = _lines(path, last)
    file = registry / path.name
    importer = get_source(source)
    if source == "playbook":
        importer = ChangedRows(importer, importer.parse(original))

    @settings(max_examples=examples, deadline=dt.timedelta(seconds=30), derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example])
    @given(mutants(original))
    def check(text: str) -> None:
        file.write_text(text, encoding="utf-8")
        _outcome(importer, registry, file, len(text.split("\n")))

    check()


# --- MLPerf: a checkout, not a document; its result files and systems JSON are mutated ---------------------------

MLPERF_FILES = ["AMD/results/MI355X_EPYC_9575F_pytorch/llama2_70b_lora/result_2.txt",
                "AMD/results/MI355X_EPYC_9575F_pytorch/llama31_8b/result_0.txt",
                "AMD/systems/MI355X_EPYC_9575F_pytorch.json"]


@pytest.mark.slow
def test_mutants_of_the_mlperf_checkout_import_or_stop_located(tmp_path: Path) -> None:
    checkout = Path(shutil.copytree(ROUND, tmp_path / "training_results_v5.1"))
    root = tmp_path / "registry"
    root.mkdir()
    (root / "catalog").symlink_to(ROOT / "catalog")
    originals = {rel: (ROUND / rel).read_text(encoding="utf-8") for rel in MLPERF_FILES}

    @settings(max_examples=30, deadline=dt.timedelta(seconds=30), derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(st.sampled_from(MLPERF_FILES).flatmap(lambda rel: st.tuples(st.just(rel), mutants(originals[rel]))))
    def check(mutant: tuple[str, str]) -> None:
        rel, text = mutant
        for name, original in originals.items():
            (checkout / name).write_text(text if name == rel else original, encoding="utf-8")
        _outcome(get_source("mlperf-training"), root, checkout, None)

    check()
