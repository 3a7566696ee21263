"""Every importer on hostile input (issue 41, deliverable 5): malformed, truncated, huge-number, zero and negative
counts, binary, huge, FIFO, symlink-loop and /dev/zero inputs end in located lines (file, and line or key where it
applies), never a traceback; nothing is written when the import stops, and what an import writes passes `check`.

Each case is the committed source document (tests/importer/sources/, tests/importer/data/; their SOURCES files say
where they come from) with one edit, run through the CLI as a user would: `python -m generator import SOURCE FILE`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
import yaml

from generator.__main__ import main
from generator.check import check_tree

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ROOT / "tests/importer/sources"
DOCS = {
    "automodel": SOURCES / "automodel-performance-summary-36044ad3.mdx",
    "dgxc-benchmarking": ROOT / "tests/importer/data/dgxc/dgxc-1f6d9f4-llama3.1-README.md",
    "llm-foundry": SOURCES / "foundry-benchmarking-readme-8c8dd48f.md",
    "megatron-bridge": SOURCES / "mb-performance-summary-067f987d.md",
    "nemo": SOURCES / "nemo-performance-summary-8e3d65dc.md",
    "playbook": SOURCES / "playbook-benchmarks_interactive-924e4d0b.html",
    "torchtitan-benchmarks": SOURCES / "titan-llama3_h100_202412_torchtitan-b5bcd76c.md",
}
ROUND = ROOT / "tests/importer/data/mlperf_training/training_results_v5.1"
URL = "https://github.com/example/docs/blob/0123456/doc.md"


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty registry with the committed catalog, as the working folder of the CLI."""
    root = tmp_path / "registry"
    root.mkdir()
    (root / "catalog").symlink_to(ROOT / "catalog")
    monkeypatch.chdir(root)
    return root


def run_import(source: str, file: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    """The CLI's exit code and its stderr lines."""
    code = main(["import", source, str(file), "--source-url", URL, "--commit", "0123456"])
    return code, capsys.readouterr().err.splitlines()


def written(root: Path) -> list[Path]:
    return sorted((root / "recipes").rglob("*.yaml")) if (root / "recipes").exists() else []


def refused(code: int, err: list[str], root: Path, file: Path, message: str) -> None:
    """The import stopped (exit 1) with one line naming the file and matching `message`; nothing written."""
    assert code == 1, err
    assert len(err) == 1 and err[0].startswith(f"{file}:") and re.search(message, err[0]), err
    assert written(root) == []


def edited(root: Path, source: str, old: str, new: str, count: int = 1) -> Path:
    text = DOCS[source].read_text(encoding="utf-8")
    assert text.count(old) >= count, old
    path = root / DOCS[source].name
    path.write_text(text.replace(old, new, count), encoding="utf-8")
    return path


# --- files that are no text document: the same for every importer ----------------------------------------------


def _fifo(root: Path) -> Path:
    path = root / "doc.md"
    os.mkfifo(path)
    return path


def _loop(root: Path) -> Path:
    (root / "a.md").symlink_to(root / "b.md")
    (root / "b.md").symlink_to(root / "a.md")
    return root / "a.md"


def _random(root: Path) -> Path:
    path = root / "doc.md"
    path.write_bytes(bytes(range(128, 256)) * 32)  # like /dev/urandom's bytes: no UTF-8 (a stray 0x80 first)
    return path


def _nul(root: Path) -> Path:
    path = root / "doc.md"
    path.write_text("| a | b |\n|---|---|\n| 1 \0| 2 |\n", encoding="utf-8")
    return path


NOT_TEXT = {
    "fifo": (_fifo, r": not a regular file \(a FIFO"),
    "symlink loop": (_loop, r": cannot read: Too many levels of symbolic links"),
    "/dev/zero": (lambda root: Path("/dev/zero"), r": not a regular file"),
    "binary": (_random, r":1:1: not valid UTF-8"),
    "NUL byte": (_nul, r":3:5: a NUL byte"),
}


@pytest.mark.parametrize("source", sorted(DOCS))
@pytest.mark.parametrize("case", sorted(NOT_TEXT))
def test_a_file_that_is_no_text_document_is_refused_in_one_line(source: str, case: str, registry: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    make, message = NOT_TEXT[case]
    file = make(registry)
    code, err = run_import(source, file, capsys)
    refused(code, err, registry, file, message)


# --- numbers that are no figure --------------------------------------------------------------------------------

# Megatron-Bridge's 26.08 DeepSeek-V3 row on 256 DGX-GB300 GPUs (line 45): MBS 1, 6288 tokens/s, 1635 TFLOP/s.
MB_ROW = "| DGX-GB300 | 256 | MXFP8 | 4096 | 1 | 4096 | 1 | 2 | 1 | 8 | 32 | 6288 | 1635 |"


@pytest.mark.parametrize(("cell", "new", "message"), [
    ("mbs", "9" * 400, r"mbs '9{60}\.\.\. \(400 characters\)' is out of range"),
    ("tokens", "1e308", r"tokens '1e308' is out of range"),
    ("tokens", "1e999", r"tokens '1e999' is out of range"),
    ("tokens", "Infinity", r"tokens 'Infinity' is not a number"),
    ("tokens", "NaN", r"tokens 'NaN' is not a number"),
    ("tokens", "0", r"tokens '0' is not positive"),
    ("tokens", "-8", r"tokens '-8' is not positive"),
])
def test_megatron_bridge_huge_and_non_positive_figures_are_located_skips(
        cell: str, new: str, message: str, registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A row whose figure is no figure becomes a skip at its line (the document's other rows are imported, each
    passing check); before, a micro-batch of 400 digits or tokens/s of 1e308 ended in a traceback."""
    text = DOCS["megatron-bridge"].read_text(encoding="utf-8")
    line = text.splitlines().index(MB_ROW) + 1
    cells = MB_ROW.split("|")
    index = {"mbs": 5, "tokens": 12}[cell]
    cells[index] = f" {new} "
    file = edited(registry, "megatron-bridge", MB_ROW, "|".join(cells))
    code, err = run_import("megatron-bridge", file, capsys)
    assert code == 0, err
    assert any(re.match(f"{re.escape(str(file))}:{line}: skipped: {message}", e) for e in err), err
    assert written(registry) and check_tree(registry, use_cache=False).problems == []


def test_a_row_that_makes_no_valid_recipe_stops_the_import_at_its_line(registry: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """torchtitan's Llama 3 8B FSDP row with 2e9 tokens/s per GPU: a figure, but above the schema's bound for a
    recipe; the import stops at the row's line naming the field (before: a pydantic traceback), writing nothing."""
    file = edited(registry, "torchtitan-benchmarks", "| FSDP | 5,762 |", "| FSDP | 2,000,000,000 |")
    code, err = run_import("torchtitan-benchmarks", file, capsys)
    line = file.read_text(encoding="utf-8").splitlines().index(
        next(x for x in file.read_text(encoding="utf-8").splitlines() if "| 2,000,000,000 |" in x)) + 1
    refused(code, err, registry, file, rf":{line}: the row makes no valid recipe: result\.tokens_per_s_per_gpu: ")


# --- the playbook's page ---------------------------------------------------------------------------------------


def test_playbook_without_a_figure_truncated_or_with_mismatched_traces(registry: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    text = DOCS["playbook"].read_text(encoding="utf-8")
    no_figure = registry / "page.html"
    no_figure.write_text("<html><body>no figure here</body></html>\n", encoding="utf-8")
    refused(*run_import("playbook", no_figure, capsys), registry, no_figure, r": no Plotly\.newPlot\( call")

    truncated = registry / "truncated.html"
    truncated.write_text(text[: len(text) // 2], encoding="utf-8")
    refused(*run_import("playbook", truncated, capsys), registry, truncated,
            r":2:\d+: the figure's JSON is cut short or broken \(Unterminated string")

    # The first trace's marker colours one short of its points: zip(strict=True) of colours and sizes fails there.
    start = text.index("Plotly.newPlot(")
    data_at = text.index("[", start)
    data, end = json.JSONDecoder().raw_decode(text, data_at)
    data[0]["marker"]["color"] = data[0]["marker"]["color"][:-1]
    mismatched = registry / "mismatched.html"
    mismatched.write_text(text[:data_at] + json.dumps(data, separators=(",", ":")) + text[end:], encoding="utf-8")
    refused(*run_import("playbook", mismatched, capsys), registry, mismatched,
            r":\d+:\d+: trace 0 is not laid out as the playbook's traces are \(ValueError: zip\(\)")


def test_playbook_failed_layouts_command_is_one_line_too(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from generator.importers.playbook import main as failed_main

    fifo = _fifo(registry)
    assert failed_main([str(fifo)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"{fifo}: not a regular file"), err
    assert not (registry / "failed").exists()


# --- MLPerf's checkout -----------------------------------------------------------------------------------------

LORA = "AMD/results/MI355X_EPYC_9575F_pytorch/llama2_70b_lora"
SYSTEM = "AMD/systems/MI355X_EPYC_9575F_pytorch.json"
# The run_stop line of every result file: its time_ms and its samples_count.
RUN_STOP = re.compile(r'("time_ms": )(\d+)(, "event_type": "INTERVAL_END", "key": "run_stop".*"samples_count": )(\d+)')


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    return Path(shutil.copytree(ROUND, tmp_path / "training_results_v5.1"))


def _edit_run_stop(path: Path, time_ms: str | None, samples: str | None) -> None:
    text = path.read_text(encoding="utf-8")
    assert RUN_STOP.search(text), path
    path.write_text(RUN_STOP.sub(lambda m: f"{m[1]}{time_ms or m[2]}{m[3]}{samples or m[4]}", text), encoding="utf-8")


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def _mlperf(checkout: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    return run_import("mlperf-training", checkout, capsys)


@pytest.mark.parametrize(("time_ms", "samples", "why"), [
    ("Infinity", None, r"result_0\.txt:\d+:\d+: MLLOG: JSON: Infinity is not a JSON number"),
    ("1e999", None, r"result_0\.txt:\d+:\d+: MLLOG: time_ms: missing or not a time"),
    (None, "0", r"samples_count 0 is not positive"),
    (None, "-8", r"samples_count -8 is not positive"),
    (None, "1e300", r"run_stop states no samples_count"),
])
def test_mlperf_hostile_mllog_values(time_ms: str | None, samples: str | None, why: str, checkout: Path,
                                     registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every result file of the LoRA row edited the same way: no run is a result, so the row is a located skip
    naming the file, line and value (before: OverflowError tracebacks, or 0 samples written as a run)."""
    for result in (checkout / LORA).glob("result_*.txt"):
        _edit_run_stop(result, time_ms, samples)
    code, err = _mlperf(checkout, capsys)
    assert code == 0, err
    lora = [e for e in err if LORA in e and "skipped" in e]
    assert lora and re.search(why, " ".join(lora)), err
    assert all(LORA.split("/")[2].lower() not in p.name for p in written(registry) if "llama-2-70b" in str(p))
    assert check_tree(registry, use_cache=False).problems == []


@pytest.mark.parametrize(("make", "message"), [
    (lambda f: (f.unlink(), os.mkfifo(f)), r"result_0\.txt: not a regular file"),
    (lambda f: (f.unlink(), f.symlink_to("/dev/zero")), r"result_0\.txt: not a regular file"),
    (lambda f: (f.unlink(), f.symlink_to(f)), r"result_0\.txt: cannot read: Too many levels of symbolic links"),
])
def test_mlperf_a_result_file_that_is_no_text_stops_the_import(make, message: str, checkout: Path,  # noqa: ANN001
                                                               registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A FIFO (before: the import hung), /dev/zero (before: read until memory ran out) or a symlink loop among the
    result files: one line naming the file; nothing written."""
    make(checkout / LORA / "result_0.txt")
    code, err = _mlperf(checkout, capsys)
    assert code == 1 and len(err) == 1 and re.search(message, err[0]), err
    assert written(registry) == []


def test_mlperf_deep_systems_json_is_a_located_skip(checkout: Path, registry: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    (checkout / SYSTEM).write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    code, err = _mlperf(checkout, capsys)
    assert code == 0
    assert sum("MI355X_EPYC_9575F_pytorch.json:1:1: JSON nested too deeply to read" in e for e in err) == 2, err


def test_mlperf_a_2mb_system_name_is_refused_by_check_before_writing(checkout: Path, registry: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Before: a 4 MB recipe written, exit 0. Now the recipes are checked before writing: check's size limit."""
    _edit(checkout / SYSTEM, '"system_name": "', '"system_name": "' + "x" * 2_000_000)
    code, err = _mlperf(checkout, capsys)
    assert code == 1 and written(registry) == []
    assert err[0].startswith(f"{checkout}: nothing written: `check` would refuse"), err[:2]
    assert any(re.match(r"recipes/llama-2-70b/mi355x/mlperf-v5\.1-[\w.-]+\.yaml:1:1: \(document\): file is [\d,]+ "
                        r"bytes; the limit is", e) for e in err[1:]), err


# --- DGX Cloud's README ----------------------------------------------------------------------------------------

DGXC_TOKENS = "| Throughput in tokens per second       | 56092           |"
DGXC_MFU = "| Model flops utilization               | 47.4%           |"


def test_dgxc_100000_extra_columns(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: pydantic tracebacks. The extra cells name no 'Nx GPU GPUs' column: the table's other columns import."""
    header = "| Llama3.1 405b BF16                    | 128x GB200 GPUs |"
    file = edited(registry, "dgxc-benchmarking", header, header + " x |" * 100_000)
    code, err = run_import("dgxc-benchmarking", file, capsys)
    assert "Traceback" not in "\n".join(err)
    assert code == 0 or (code == 1 and written(registry) == []), err
    assert check_tree(registry, use_cache=False).problems == []


@pytest.mark.parametrize(("old", "new", "message"), [
    (DGXC_MFU, DGXC_MFU.replace("47.4%", "0.0001%"),
     r"^{file}:86: the row makes no valid recipe: result\.published_model_tflops_per_gpu: Input should be greater than 0"),
    (DGXC_TOKENS, DGXC_TOKENS.replace("56092", "9" * 40), r"^{file}:86: skipped: 128x GB200: no step time and tokens/s"),
    (DGXC_TOKENS, DGXC_TOKENS.replace("56092", "168276"), r"^recipes/llama-3\.1-405b/gb200/dgxc-25\.04\.01-pretrain-"
     r"128gpu-bf16\.yaml:\d+:\d+: result\.mfu: Input should be less than or equal to 1 \(got 1\.2806\)"),
])
def test_dgxc_figures_that_make_no_recipe(old: str, new: str, message: str, registry: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The 128x GB200 BF16 column (line 86): an MFU of 0.0001% (before: a pydantic traceback); 40-digit tokens/s
    (before: a traceback); tokens/s three times what the column's own step time gives (64 x 8192 / 9.347 s =
    56,092), an MFU of 128%: check's refusal before anything is written (before: written, exit 0)."""
    file = edited(registry, "dgxc-benchmarking", old, new)
    code, err = run_import("dgxc-benchmarking", file, capsys)
    assert any(re.search(message.format(file=re.escape(str(file))), e) for e in err), err
    if code == 0:
        assert check_tree(registry, use_cache=False).problems == []
    else:
        assert code == 1 and written(registry) == [] and err[0].startswith(str(file)), err


def test_dgxc_tokens_beyond_the_step_time_are_written_as_a_discrepancy(registry: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """86,092 tokens/s where the step time gives 56,092: a recipe check accepts (MFU 72%), whose notes say the
    published figure disagrees with the step time; the recipe keeps the published figure."""
    file = edited(registry, "dgxc-benchmarking", DGXC_TOKENS, DGXC_TOKENS.replace("56092", "86092"))
    code, err = run_import("dgxc-benchmarking", file, capsys)
    assert code == 0, err
    recipe = registry / "recipes/llama-3.1-405b/gb200/dgxc-25.04.01-pretrain-128gpu-bf16.yaml"
    notes = str(yaml.safe_load(recipe.read_text(encoding="utf-8"))["notes"])
    assert "8192 x 64 / 9.347 s = 56092 over 128 GPUs against the published 86092" in notes
    assert "DISCREPANCY beyond the step time's rounding" in notes
    assert check_tree(registry, use_cache=False).problems == []
