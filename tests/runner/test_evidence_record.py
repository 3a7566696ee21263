"""The evidence format takes a record the generator owns (generator.evidence.EvidenceRecord), built by the runner
from its runs: `build` refuses a runner object, no function of the format takes an untyped (`Any`) parameter, and the
record made from a committed real log gives the steps and runs its committed sidecar holds."""

from __future__ import annotations

import gzip
import inspect
import json
import typing
from pathlib import Path

import pytest
from runner_support import ROOT

from generator import evidence
from generator.load import load_recipe
from generator.models import Recipe
from generator.registry import load_catalog
from runner import measure
from runner.logs import parse_file

# The torchtitan 3B recipe's sidecar was written by `remeasure --from-log` from this log (an H200 run, 2026-12-04;
# benchmarks/results/h200-2026-12-04-frameworks/README.md says how it was made).
RECIPE = ROOT / "recipes/llama-3.2-3b/h200/torchtitan-8k.yaml"
LOG = ROOT / "benchmarks/results/h200-2026-12-04-frameworks/call2/torchtitan-8k.20261204T191532Z.run1.log.gz"


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> measure.Measurement:
    log = tmp_path_factory.mktemp("logs") / LOG.name.removesuffix(".gz")
    log.write_bytes(gzip.decompress(LOG.read_bytes()))
    recipe = load_recipe(RECIPE).recipe
    run = measure.run_figures(recipe, load_catalog(ROOT), parse_file(log, "torchtitan"), allow_partial=True)
    return measure.combine(recipe, [run], None)


def _record(m: measure.Measurement) -> evidence.EvidenceRecord:
    context = measure.RunContext("llama-3.2-3b/h200/torchtitan-8k", "from-log", None, {}, {}, [], [], {})
    return measure.evidence_record(m, context)


def test_the_record_of_the_committed_log_gives_the_committed_steps_and_runs(measured: measure.Measurement) -> None:
    committed = json.loads(RECIPE.with_name("torchtitan-8k.evidence.json").read_text(encoding="utf-8"))
    data = evidence.build(load_recipe(RECIPE).recipe, _record(measured), None)
    for key in ("format", "window", "shown", "interval", "steps", "runs", "median_run", "runs_cv_percent"):
        assert data[key] == committed[key], key
    # By hand from the log: torchtitan prints steps 1-20 (0-19 here), its first line untimed, so 19 timed lines; the
    # first timed one is 3.358 s, 19:16:05,058 to 19:16:08,416; the recipe's window is [5, 19].
    assert data["shown"] == [0, 19] and data["window"] == [5, 19] and len(data["steps"]) == 19
    assert data["steps"][0] == {"step": 1, "time_s": 3.358, "loss": 10.09176, "tokens": None, "line": 42}
    assert data["runs"][0]["log"] == "torchtitan-8k.20261204T191532Z.run1.log"


def test_build_refuses_anything_but_the_record(measured: measure.Measurement) -> None:
    recipe = load_recipe(RECIPE).recipe
    with pytest.raises(TypeError, match="takes an EvidenceRecord, not Measurement"):
        evidence.build(recipe, measured, None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not dict"):
        evidence.build(recipe, {"steps": []}, None)  # type: ignore[arg-type]


def test_no_function_of_the_evidence_format_takes_an_untyped_parameter() -> None:
    """A parameter annotated Any is how a runner object crossed the layer unseen (the import contracts see imports,
    not attribute walks); the format's functions and records name what they take."""
    untyped = []
    for name, thing in vars(evidence).items():
        if getattr(thing, "__module__", None) != evidence.__name__ or name.startswith("_"):
            continue
        functions = [thing] if inspect.isfunction(thing) else [thing] if inspect.isclass(thing) else []
        for function in functions:
            hints = typing.get_type_hints(function, vars(evidence) | {"Recipe": Recipe})  # Recipe: TYPE_CHECKING
            untyped += [f"{name}.{param}" for param, hint in hints.items() if hint is typing.Any]
    assert not untyped, untyped


def test_the_record_is_frozen(measured: measure.Measurement) -> None:
    record = _record(measured)
    with pytest.raises(AttributeError):
        record.interval = 2  # type: ignore[misc]
    assert isinstance(record.steps[0], evidence.StepLine) and isinstance(record.runs[0], evidence.RunRecord)


def test_an_interval_line_is_recorded_once_with_its_first_step() -> None:
    """A real Megatron log printing every 20th step (tests/runner/real_logs/megatron_dense_interval20.source.md):
    one entry per printed line, `first` the interval's first step."""
    log = parse_file(Path(__file__).parent / "real_logs/megatron_dense_interval20.log", "megatron")
    lines = measure.step_lines(log)
    assert all(line.first is not None and line.step - line.first == 19 for line in lines)
    assert len(lines) == len({s.span for s in log.steps})
    assert "first" in lines[0].as_json() and "first" not in evidence.StepLine(0, 1.0, None, None, 1).as_json()


def test_remeasure_parses_the_recipe_once_and_splices_from_that_parse(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """One `remeasure --from-log --dry-run` of the torchtitan 1B recipe with a committed H100 run of it (its figures
    differ from the recipe's): the round-trip parser reads the recipe's text once (find_target); the splice reads only
    its own output and the new values (one parse each)."""
    import io
    import shutil

    from runner import yaml_edit
    from runner.remeasure import Options, remeasure

    shutil.copytree(ROOT / "catalog", tmp_path / "catalog")
    shutil.copytree(ROOT / "recipes/llama-3.2-1b/h200", tmp_path / "recipes/llama-3.2-1b/h200")
    recipe = tmp_path / "recipes/llama-3.2-1b/h200/torchtitan-4k.yaml"
    log = tmp_path / "torchtitan-1b.run1.log"
    log.write_bytes(gzip.decompress((ROOT / "benchmarks/results/h100-2026-12-06/call2/work/torchtitan-1b.run1.log.gz")
                                    .read_bytes()))
    parsed: list[str] = []
    load_rt = yaml_edit.load_rt

    def counted(text: str) -> object:
        parsed.append(text)
        return load_rt(text)

    monkeypatch.setattr(yaml_edit, "load_rt", counted)
    options = Options(recipe=recipe, from_log=[log], dry_run=True, accept_change=True, root=tmp_path)
    _, report = remeasure(options, io.StringIO())
    assert report is not None and report["wrote"] is False  # the figures made and spliced (check may refuse them)
    text = recipe.read_text(encoding="utf-8")
    assert parsed.count(text) == 1 and parsed[0] == text
    assert len(parsed) == 3, [t[:40] for t in parsed]  # the recipe, the spliced text (another), the new values
