"""``remeasure`` as one pipeline: target -> measurement -> decision -> write, a dataclass between the steps.

- `find_target` (Target): the recipe loaded inside its registry, the catalog, the file refusals, the preflight of
  this machine (for a launch), and for --as-new the new recipe's path and text.
- `measure_runs` (Measured): runner.launchers.measure(target): the launcher the options name (local, torchrun,
  slurm, or from_log for runs made elsewhere), each a module with `measure(target, out) -> Measured`; the runs'
  logs parsed and turned into the recipe's figures (runner.measure, through generator.figures only).
- `decide` (Decision): the change gate (generator.figures.change_tolerance_percent), the new recipe text (a
  splice of the result) and the new evidence sidecar, and the report.
- `write`: the checked write (runner/checked.py, also `convergence --write`'s): the new recipe and sidecar staged,
  checked by the registry's own check (refused for any problem, the ones the recipe already had named apart), then
  committed together; runner/commit.py says how an interruption at any point leaves both old or both new.

The records between the steps (Options, Target, Measured, Stop/Outcome) live in runner/records.py. Every refusal is
a `Stop` naming its `Outcome`; runner/cli.py maps outcomes to exit codes.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from generator import evidence, figures
from generator.catalog import Catalog
from generator.load import LoadedRecipe, load_recipe, read_yaml_bytes, recipe_id
from generator.models import Recipe, Status
from generator.problems import InputError
from generator.registry import RECIPES_DIR, RootNotFound, display_path, find_root, is_root, load_catalog
from runner import checked, commit, yaml_edit
from runner.records import GPU_HOURS_NOTE, Measured, Options, Outcome, Shown, Stop, Target
from runner.yaml_edit import WriteError

__all__ = ["GPU_HOURS_NOTE", "Measured", "Options", "Outcome", "Shown", "Stop", "Target", "find_target", "gate",
           "measure_runs", "decide", "write", "recover", "remeasure"]


# --- step 1: the target ---------------------------------------------------------------------------------------


def registry_root(recipe: Path, given: Path | None = None) -> Path:
    """The registry the recipe belongs to (`given`: --root); refused when it lies in none (no lock or file is made
    anywhere then). `convergence --write` sets up through it too."""
    if given is not None:
        root = given.absolute()
        if not is_root(root):
            raise Stop(Outcome.USAGE, f"--root {given}: not a registry (no catalog/ and recipes/ there)")
    else:
        try:
            root = find_root(recipe)
        except RootNotFound as exc:
            raise Stop(Outcome.USAGE, f"{recipe} is outside any registry: {exc}") from None
    try:
        commit.refuse_outside(recipe.absolute(), root)
    except commit.WriteRefused as exc:
        raise Stop(Outcome.USAGE, str(exc)) from None
    return root


def loaded_recipe(recipe: Path, root: Path, raw: bytes | None = None) -> LoadedRecipe:
    """The recipe loaded inside its registry (`raw`: its bytes, read by the caller); refused with every problem
    located."""
    try:
        return load_recipe(recipe, display_path(recipe, root), root / RECIPES_DIR, raw)
    except InputError as exc:
        raise Stop(Outcome.USAGE, "\n".join(str(p) for p in exc.problems)) from None


def _recipe_bytes(recipe: Path, root: Path) -> bytes:
    """The recipe file's bytes, read once for the whole pipeline (the loader's checks: a regular file, its size)."""
    try:
        return read_yaml_bytes(recipe, display_path(recipe, root))
    except InputError as exc:
        raise Stop(Outcome.USAGE, "\n".join(str(p) for p in exc.problems)) from None


def _gpus_from_env(value: str) -> Any:
    from runner.preflight import declared_gpus

    return declared_gpus(value)


def _preflight(options: Options, loaded: LoadedRecipe, catalog: Catalog) -> Any:
    """This machine's GPUs, refused where they, the environment or the entry point cannot run the recipe. For a
    Slurm job the GPUs are the nodes' (checked in the job, runner/launchers/nodes.py); None is returned."""
    from runner.preflight import Refusal, check_entry, check_env, check_gpus, gpu_type, gpus_here

    recipe, where = loaded.recipe, str(options.recipe)
    if options.launcher == "slurm":
        try:
            check_env(recipe, where)
            check_entry(recipe, where, options.workdir.resolve())
        except Refusal as exc:
            raise Stop(Outcome.PREFLIGHT, str(exc)) from None
        return None
    found = gpus_here()
    try:
        try:
            check_gpus(recipe, catalog, found, where)
        except Refusal:
            types = {gpu_type(n, catalog) for n in found.names}
            per_node = min(recipe.gpu.count, recipe.gpu.per_node or recipe.gpu.count)
            if not options.as_new or len(types) != 1 or None in types or found.count < per_node:
                raise
        check_env(recipe, where)
        check_entry(recipe, where, options.workdir.resolve())
    except Refusal as exc:
        raise Stop(Outcome.PREFLIGHT, str(exc)) from None
    return found


def _as_new_name(name: str) -> str:
    """--as-new NAME is a file name in the recipe's model folder: no folders, no leading dot."""
    from generator.problems import unsafe_character

    stem = name.removesuffix(".yaml")
    if (not stem or stem.startswith(".") or any(c in stem for c in "/\\\0") or stem != stem.strip()
            or unsafe_character(stem)):
        raise Stop(Outcome.USAGE, f"--as-new {name!r}: give a plain name (letters, digits, '.', '-', '_'), not a path; "
                                  "the new recipe goes beside the original, in its model's folder")
    return stem


def _as_new(target: Target, gpus: Any) -> Target:
    """The target rewritten as a new measured recipe for the GPUs present, beside the original."""
    from runner.preflight import gpu_type

    options, loaded, catalog = target.options, target.source, target.catalog
    stem = _as_new_name(options.as_new or "")
    name = gpus.names[0] if gpus and gpus.names else None
    new_type = gpu_type(name, catalog) if name else loaded.recipe.gpu.type
    path = options.recipe.absolute().parent.parent / new_type.lower() / f"{stem}.yaml"
    try:
        commit.refuse_outside(path, target.root)
    except commit.WriteRefused as exc:
        raise Stop(Outcome.USAGE, f"--as-new: {exc}") from None
    if os.path.lexists(path) and not _is_provisional(path):
        raise Stop(Outcome.USAGE, f"--as-new: {path} exists already; choose another NAME")
    try:
        text = yaml_edit.as_new_text(target.text, loaded, catalog, new_type, name, options.recipe, path,
                                     doc=target.document)
        written = yaml_edit.load_rt(text)  # what the new file says: its run launches the new file
    except WriteError as exc:
        raise Stop(Outcome.USAGE, f"--as-new: {exc}") from None
    spec = catalog.gpus[new_type]
    gpu = loaded.recipe.gpu.model_copy(update={"type": new_type, "memory_gb": spec.memory_gb,
                                               "instance": yaml_edit.instance_of(written)})
    recipe = loaded.recipe.model_copy(update={"gpu": gpu, "status": Status.measured, "run": str(written["run"]),
                                              "notes": None if written.get("notes") is None else str(written["notes"])})
    target.recipe, target.path, target.text, target.old_bytes, target.document = recipe, path, text, None, written
    target.recipe_id = recipe_id(path, target.root / RECIPES_DIR)
    return target


def _is_provisional(path: Path) -> bool:
    """A file a killed --as-new launch left behind (see _provisional)."""
    try:
        with path.open("rb") as handle:
            return handle.read(len(PROVISIONAL_MARK)) == PROVISIONAL_MARK.encode()
    except OSError:
        return False


def _nodes(options: Options, recipe: Recipe) -> int:
    """The node count of a launch: --nodes, else gpu.count / gpu.per_node; it must hold the recipe's GPUs."""
    from runner.launchers import default_nodes, per_node
    from runner.launchers.rendezvous import launches_torchrun, torchrun_problems

    if options.from_log:
        return 1
    nodes = options.nodes or (default_nodes(recipe) if options.launcher != "local" else 1)
    if nodes < 1:
        raise Stop(Outcome.USAGE, "--nodes must be at least 1")
    if options.launcher == "local" and nodes > 1:
        raise Stop(Outcome.USAGE, f"--nodes {nodes} runs across machines: pass --launcher slurm (a Slurm job) or "
                                  "--launcher torchrun (a torchrun rendezvous the other nodes join)")
    if options.launcher != "local" and nodes * per_node(recipe) != recipe.gpu.count:
        raise Stop(Outcome.USAGE, f"--nodes {nodes} x {per_node(recipe)} GPUs per node (gpu.per_node) is not the "
                                  f"recipe's {recipe.gpu.count} GPUs; a recipe's layout is fixed to its GPU count")
    if nodes > 1 and not launches_torchrun(recipe.run):
        raise Stop(Outcome.PREFLIGHT, f"{options.recipe}: its run script calls no torchrun, and a run across "
                                      f"{nodes} nodes is started by torchrun on each node (the runner turns its "
                                      "arguments into a c10d rendezvous)")
    problems = torchrun_problems(recipe.run) if nodes > 1 else []
    if problems:
        raise Stop(Outcome.PREFLIGHT, f"{options.recipe}: its torchrun would not join the rendezvous of a run across "
                                      f"{nodes} nodes (every node would train alone): " + "; ".join(problems))
    return nodes


def find_target(options: Options) -> Target:
    from runner.logs import format_for

    if options.as_new is not None:
        _as_new_name(options.as_new)  # before anything: "" or a path is refused, never taken as "no --as-new"
    root = registry_root(options.recipe, options.root)
    if not options.as_new:  # the recipe itself is written: refuse what a rename would damage, before measuring
        try:
            commit.refuse_unwritable(options.recipe, "recipe")
            commit.refuse_unwritable(evidence.path_for(options.recipe), "evidence")
            commit.refuse_folder(options.recipe.parent)
        except commit.WriteRefused as exc:
            raise Stop(Outcome.WRITE, str(exc)) from None
    raw = _recipe_bytes(options.recipe, root)
    loaded = loaded_recipe(options.recipe, root, raw)
    catalog = load_catalog(root)
    if catalog.problems:
        raise Stop(Outcome.USAGE, "\n".join(str(p) for p in catalog.problems))
    if options.from_log and options.runs is not None and options.runs != len(options.from_log):
        raise Stop(Outcome.USAGE, f"--runs {options.runs} but {len(options.from_log)} logs given with --from-log "
                                  "(one log is one run)")
    if options.log_run is not None and (not options.from_log or options.log_run < 1):
        raise Stop(Outcome.USAGE, "--log-run N (N >= 1) picks a run within each --from-log log; give it with --from-log")
    runs = len(options.from_log) if options.from_log else (options.runs or 1)
    if runs < 1:
        raise Stop(Outcome.USAGE, "--runs must be at least 1")
    if loaded.recipe.status is Status.reported and not options.as_new:
        raise Stop(Outcome.PREFLIGHT, f"{options.recipe} is a reported recipe: its figures are a publication's, not a "
                   "measurement to overwrite. Pass --as-new NAME to write a measured recipe beside it from your run.")
    try:
        text, newline = yaml_edit.decode(raw, str(options.recipe))
        document = yaml_edit.load_rt(text)  # the write edits it: a file the editor cannot read is refused now
    except WriteError as exc:
        raise Stop(Outcome.USAGE, f"{options.recipe}: {exc}") from None
    nodes = _nodes(options, loaded.recipe)
    gpus = None if options.from_log else _preflight(options, loaded, catalog)
    target = Target(options, root, catalog, loaded, loaded.recipe, options.recipe.absolute(), loaded.id, text,
                    newline, raw, document, gpus, format_for(loaded.recipe.stack.framework), runs, nodes)
    return _as_new(target, gpus) if options.as_new else target


# --- step 2: the measurement ----------------------------------------------------------------------------------


@contextlib.contextmanager
def _provisional(target: Target):
    """For --as-new launched here: the new recipe's text at its path while its run runs (the run names the new
    file, and the framework reads it), removed after; the write then commits it with its figures. A leftover from a
    killed launch starts with PROVISIONAL_MARK, which --as-new of the same name replaces."""
    path = target.path
    if not target.options.as_new or target.options.from_log:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(PROVISIONAL_MARK + target.text, encoding="utf-8")
    try:
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


PROVISIONAL_MARK = "# provisional: being measured by `python -m runner remeasure --as-new`; removed when it ends\n"


def measure_runs(target: Target, out: TextIO) -> Measured:
    from runner.launchers import measure
    from runner.launchers.refusals import LaunchRefused
    from runner.logs import LogError

    try:
        with _provisional(target):
            return measure(target, out)
    except LaunchRefused as exc:
        raise Stop(exc.outcome, str(exc)) from None
    except LogError as exc:
        message = str(exc)
        raise Stop(Outcome.BAD_LOG, message if "nothing written" in message else f"{message}; nothing written") from None


# --- step 3: the decision -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Gate:
    """The new tokens/s against the recorded one, with the tolerance of generator.figures."""

    recorded: float | None
    new: float
    tolerance_percent: float
    change_percent: float | None

    @property
    def outside(self) -> bool:
        return self.change_percent is not None and abs(self.change_percent) > self.tolerance_percent

    def describe(self) -> str:
        if self.recorded is None or self.change_percent is None:
            return f"new figure {self.new:.1f} tokens/s/GPU (nothing recorded before)"
        kind = "improvement" if self.change_percent > 0 else "regression"
        verdict = f"an {kind}" if kind == "improvement" else f"a {kind}"
        state = f"{verdict}, outside" if self.outside else "within"
        return (
            f"{self.new:.1f} tokens/s/GPU against the recorded {self.recorded:.1f} ({self.change_percent:+.2f}%): "
            f"{state} the tolerance of +/-{self.tolerance_percent:.2f}% (the larger of "
            f"{figures.CHANGE_TOLERANCE_MIN_PERCENT:g}% and {figures.CHANGE_TOLERANCE_CV_FACTOR:g} x the recorded "
            f"step-time CV, at most {figures.CHANGE_TOLERANCE_MAX_PERCENT:g}%)"
        )


def gate(recipe: Recipe, new_tps: float) -> Gate:
    # A recipe never measured (result.measured null) holds a placeholder figure: nothing to compare with.
    recorded = recipe.result.tokens_per_s_per_gpu if recipe.result.measured is not None else None
    tolerance = figures.change_tolerance_percent(recipe.result.step_time_cv_percent)
    change = (new_tps / recorded - 1.0) * 100.0 if recorded else None
    return Gate(recorded, new_tps, tolerance, change)


@dataclass
class Decision:
    gate: Gate
    refused: bool  # outside the gate and not accepted
    partial: str | None  # why the median run is partial (a crash or interruption after the window, an excerpt)
    new_text: str
    evidence: dict[str, Any]
    report: dict[str, Any]
    warnings: list[str]
    undated: str | None = None  # why no date is known: the figures are shown, nothing is written


def _warnings(m: Any) -> list[str]:
    said = [w for r in m.runs for w in r.warnings]
    cv = m.median.step_time_cv_percent
    if cv > figures.NOISY_STEP_TIME_CV_PERCENT:
        said.append(f"noisy run: the step-time CV is {cv:.2f}%, above {figures.NOISY_STEP_TIME_CV_PERCENT:g}% "
                    "(find why before trusting the figure; a verified recipe needs result.step_time_cv_note)")
    return said


def _environment(target: Target, measured: Measured) -> tuple[dict[str, Any], list[str]]:
    from runner import environment

    if measured.source != "launch":  # nothing here describes that run; what its log printed about itself does
        stated = measured.stated_stack
        env = {"captured": "from the log (the run was made elsewhere)" + (": the versions the run printed" if stated
                                                                          else ""), **stated,
               "nccl": measured.nccl or stated.get("nccl")}
        return env, environment.differences(target.recipe, env)
    if measured.environment is not None:  # captured on the nodes (the rank-0 node's; every node's in `nodes`)
        env = dict(measured.environment) | ({"nccl": measured.nccl} if measured.nccl else {})
        return env, environment.differences(target.recipe, env)
    gpus = target.gpus
    env = environment.capture(gpus.names if gpus else None, gpus.driver if gpus else None, measured.nccl,
                              target.recipe.stack.framework)
    return env, environment.differences(target.recipe, env)


# The stack fields a new recipe (--as-new) takes from the run that measured it.
AS_NEW_STACK = ("pytorch", "cuda", "python", "nccl", "driver", "megatron_core", "transformer_engine", "gpu_name")


def _as_new_stack(target: Target, env: dict[str, Any]) -> dict[str, str]:
    """The new recipe's stack fields (--as-new) that this run captured otherwise than the original states."""
    stated = target.recipe.stack
    return {key: str(env[key]) for key in AS_NEW_STACK
            if env.get(key) and key in type(stated).model_fields and getattr(stated, key) not in (None, str(env[key]))}


def _provenance(recipe: Recipe, root: Path) -> dict[str, Any]:
    """The project's commit and whether its tree was dirty (and the image digest a recipe states); no paths."""
    from runner import environment

    return environment.evidence_provenance(recipe, root)


def _existing_evidence(target: Target) -> dict[str, Any] | None:
    """The sidecar that describes the target's text now (after an interrupted write: the one it embeds)."""
    if target.options.as_new:
        return None
    try:
        found = evidence.load(target.path)
        return evidence.describing(found.data, target.old_bytes).data if found else None
    except evidence.EvidenceError:
        return None


def measure_excerpt(m: Any) -> bool:
    from runner.measure import excerpt

    return excerpt(m.median.log) is not None


def _machine_folders(target: Target) -> list[tuple[re.Pattern[str], str]]:
    """This machine's folders as the text committed with a recipe replaces them (the registry, the logs' folders,
    the working folder, the home and temporary folders), the longest first: no absolute path of the machine that
    measured enters the evidence, through a warning, a partial reason or the log's tail."""
    import tempfile

    named = [(target.root, "<registry>"), (Path.cwd(), "<cwd>"), (Path.home(), "~"),
             (Path(tempfile.gettempdir()), "<tmp>")]
    named += [(log.absolute().parent, "<log folder>") for log in target.options.from_log]
    folders: dict[str, str] = {}
    for folder, name in named:
        for form in (str(folder.absolute()), str(folder.resolve())):
            if len(form) > 1:  # never "/" itself
                folders.setdefault(form, name)
    return [(re.compile(re.escape(form) + r"(?![\w.-])"), name)
            for form, name in sorted(folders.items(), key=lambda item: -len(item[0]))]


def _unplaced(text: str, folders: list[tuple[re.Pattern[str], str]]) -> str:
    for pattern, name in folders:
        text = pattern.sub(name, text)
    return text


def decide(target: Target, measured: Measured, out: TextIO) -> Decision:
    from runner import environment
    from runner.measure import RunContext, evidence_record, undated
    from runner.yaml_edit import result_changes, rounded, splice

    options, m = target.options, measured.measurement
    folders = _machine_folders(target)
    for run in m.runs:  # a failure line quoted in a partial reason may name a folder of this machine
        run.partial = _unplaced(run.partial, folders) if run.partial else run.partial
    fields = m.result_fields()
    written = {k: rounded(k, v) for k, v in fields.items()}
    if m.gpu_hours is None:  # the old figure was another run's: it goes, rather than stand beside the new ones
        why = "the log is an excerpt, not the whole run" if measure_excerpt(m) else "the log has no timestamps to time " \
            "the run by"
        print(f"gpu_hours: {why}; no GPU-hours are written" + (" (the recorded one is removed)"
              if target.recipe.result.gpu_hours is not None else ""), file=out)
    warnings = [_unplaced(w, folders) for w in _warnings(m)]
    for w in warnings:
        print(f"warning: {w}", file=out)
    env, diffs = _environment(target, measured)
    stack = _as_new_stack(target, env) if options.as_new else {}
    if stack:  # a new recipe states the stack of the run that measured it, not its original's
        for key, value in stack.items():
            print(f"stack written from this run: {key}: {value}", file=out)
        restated = target.recipe.stack.model_copy(update=stack)
        diffs = environment.differences(target.recipe.model_copy(update={"stack": restated}), env)
    for d in diffs:
        print(f"stack differs from the recipe: {d}", file=out)
    g = gate(target.recipe, m.median.tokens_per_s_per_gpu)
    print("new recipe (--as-new): no recorded figure to compare" if options.as_new else g.describe(), file=out)
    changes = result_changes(fields, target.recipe.result) | {("stack", k): yaml_edit.yaml_str(v) for k, v in stack.items()}
    if m.gpu_hours is not None:  # the note says what the new figure counts; the old note was about the old one
        changes[("result", "gpu_hours_note")] = yaml_edit.yaml_str(measured.gpu_hours_note or
                                                                   GPU_HOURS_NOTE[measured.source])
    else:
        for key in ("gpu_hours", "gpu_hours_note"):
            if getattr(target.recipe.result, key) is not None:
                changes[("result", key)] = "null"
    if len(m.runs) == 1 and target.recipe.result.runs_cv_percent is not None:  # the old spread was other runs'
        changes[("result", "runs_cv_percent")] = "null"
    partial = m.evidence_fields().get("partial")  # any run's: a median of runs one of which crashed is partial too
    if partial is not None:
        changes[("result", "partial")] = yaml_edit.yaml_str(partial)
    elif target.recipe.result.partial is not None:  # a complete run replaces the partial one
        changes[("result", "partial")] = "null"
    try:
        new_text = splice(target.text, changes, target.document)
    except WriteError as exc:
        raise Stop(Outcome.USAGE, f"{target.display}: {exc}") from None
    if fields.get("peak_memory") is None and target.recipe.result.peak_memory is not None:  # the old was other runs'
        changes[("result", "peak_memory")] = "null"
    extra = {**m.evidence_fields(), "noisy": m.median.step_time_cv_percent > figures.NOISY_STEP_TIME_CV_PERCENT,
             "peak_memory": fields.get("peak_memory"),
             "warnings": warnings, "provenance": _provenance(target.recipe, target.root), **measured.extra}
    context = RunContext(target.recipe_id, measured.source, measured.command, written | {"measured": m.measured}, env,
                         diffs, [_unplaced(line, folders) for line in measured.log_tail], extra)
    data = evidence.build(target.recipe, evidence_record(m, context), _existing_evidence(target))
    report = {
        "recipe": target.recipe_id,
        "tokens_per_s_per_gpu": m.median.tokens_per_s_per_gpu,
        "usd_per_million_tokens": m.median.usd_per_million_tokens,
        "mfu": m.median.mfu,
        "step_time_cv_percent": m.median.step_time_cv_percent,
        "cv_basis": m.median.cv_basis,
        "noisy": extra["noisy"],
        "window": list(m.median.window),
        "window_tokens": m.median.window_tokens,
        "steps": m.median.steps,
        "shown": list(m.median.log.shown) if m.median.log.shown else None,
        "interval": m.median.interval,
        "partial": partial,
        "runs": len(m.runs),
        "runs_cv_percent": m.runs_cv_percent,
        "runs_tokens_per_s_per_gpu": [r.tokens_per_s_per_gpu for r in m.runs],
        "median_run": m.runs.index(m.median),
        "drift_percent": m.median.drift_percent,
        "runs_drift_percent": [r.drift_percent for r in m.runs],
        "gpu_hours": m.gpu_hours,
        "measured": m.measured.isoformat() if m.measured else None,
        "written": written | {"measured": m.measured.isoformat() if m.measured else None},
        "recorded_tokens_per_s_per_gpu": g.recorded,
        "change_percent": g.change_percent,
        "tolerance_percent": g.tolerance_percent,
        "gate": "new" if options.as_new else ("outside" if g.outside else "within"),
        "stack_differences": diffs,
        "warnings": warnings,
        "source": measured.source,
        "launcher": options.launcher if measured.source == "launch" else None,
        "nodes": target.nodes,
        "dry_run": options.dry_run,
        "wrote": False,
        "decision": None,  # set by write: written, would write (dry run), or refused: why
    }
    refused = bool(g.outside and not options.accept_change and not options.as_new)
    no_date = undated([r.log for r in m.runs]) if m.measured is None else None
    return Decision(g, refused, partial, new_text, data, report, warnings, no_date)


# --- step 4: the write ----------------------------------------------------------------------------------------


def _changes(target: Target, decision: Decision) -> list[commit.FileChange]:
    """The sidecar first, then the recipe (runner/commit.py says why that order)."""
    recipe_bytes = yaml_edit.encode(decision.new_text, target.newline)
    sidecar = evidence.path_for(target.path)
    old_sidecar = commit.current_bytes(sidecar)
    data = evidence.chained(decision.evidence, recipe_bytes, target.old_bytes, _existing_evidence(target))
    mode = commit.mode_of(target.options.recipe)
    return [
        commit.FileChange(sidecar, evidence.dumps(data).encode(), old_sidecar, commit.mode_of(sidecar, mode & 0o666)),
        commit.FileChange(target.path, recipe_bytes, target.old_bytes, mode),
    ]


def _diff(target: Target, new_text: str) -> str:
    from runner.yaml_edit import unified_diff

    return unified_diff(target.text if not target.options.as_new else "", new_text, target.display)


def write(target: Target, decision: Decision, out: TextIO) -> Outcome:
    options, sidecar_name = target.options, evidence.path_for(target.path).name
    if decision.undated is not None:  # the figures are shown (the diff, without a date), never written
        if options.dry_run:
            print(_diff(target, decision.new_text) or "(no change)", file=out)
            print("(dry run: the figures of a log without a date; result.measured is not known, so nothing can be "
                  "written)", file=out)
        raise Stop(Outcome.BAD_LOG, f"not written: {decision.undated}")
    if decision.partial is not None and not options.accept_partial:
        raise Stop(Outcome.BAD_LOG, f"not written: a partial run: {decision.partial}. Its figures hold for the window; "
                                    "to record it as partial (never verified), run again with --accept-partial.")
    if decision.refused:
        raise Stop(Outcome.CHANGE, f"not written: {decision.gate.describe()}. If the change is real, run again with "
                                   "--accept-change.")
    if commit.current_bytes(target.path) != target.old_bytes:  # a hand edit meanwhile: never overwrite it
        raise Stop(Outcome.LOCKED, f"{target.path} changed while it was being measured (edited meanwhile?); nothing "
                                   "written. Run again.")
    changes = _changes(target, decision)

    def passed() -> None:
        if options.dry_run:
            print(_diff(target, decision.new_text) or "(no change)", file=out)
            print(f"(dry run: nothing written; {sidecar_name} would be written too; both pass check)", file=out)
            decision.report["decision"] = "would write (dry run)"

    def announce(paths: list[Path]) -> None:
        decision.report["wrote"] = True
        decision.report["decision"] = "written"
        print(_diff(target, decision.new_text) or f"{target.display}: figures unchanged at the stated precision",
              file=out)
        print(f"wrote {target.display} and {sidecar_name}", file=out)

    write_ = checked.Write(target.root, target.catalog, target.display, changes, 1,
                           None if options.as_new else target.source)
    try:
        wrote = checked.checked_commit(write_, options.dry_run, passed, announce)
    except checked.NotChecked as refused:
        if refused.fresh:
            lines = "\n".join(f"  {p}" for p in refused.fresh)
            raise Stop(Outcome.CHECK, f"not written: the new figures would not pass `python -m generator check`:"
                                      f"\n{lines}") from None
        lines = "\n".join(f"  {p}" for p in refused.known)  # never written, even when the measurement is not to blame
        raise Stop(Outcome.CHECK, "not written: the recipe already fails `python -m generator check` (not this "
                                  f"measurement's doing); fix these first, then run again:\n{lines}") from None
    except commit.Changed as exc:
        raise Stop(Outcome.LOCKED, str(exc)) from None
    except commit.CommitFailed as exc:
        raise Stop(Outcome.WRITE, str(exc)) from None
    except commit.WriteRefused as exc:
        raise Stop(Outcome.WRITE, f"{exc}; nothing written") from None
    except OSError as exc:  # staging: a full disk, permissions; nothing was renamed into the registry
        raise Stop(Outcome.WRITE, f"{exc.filename or 'staging the new files'}: {exc.strerror or exc}; nothing written "
                                  f"({target.display} and {sidecar_name} are as they were)") from None
    if wrote and options.as_new:
        print(f"{target.display} is a new recipe: review its author, notes and correctness before committing it",
              file=out)
    return Outcome.OK


# --- the pipeline ---------------------------------------------------------------------------------------------


def recover(root: Path, recipe: Path, dry_run: bool, out: TextIO) -> None:
    """Rolls back the sidecar of a write killed between its two renames (see runner/commit.py), saying so."""
    found = commit.rollback_change(recipe)
    if found is None:
        return
    change, what = found
    if dry_run:
        print(f"{what} (dry run: not rolled back now)", file=out)
        return
    try:
        with commit.Staging(root) as staging:
            commit.commit([change], commit.stage([change], staging), staging, lambda paths: print(what, file=out))
    except (commit.Changed, commit.CommitFailed, OSError) as exc:
        raise Stop(Outcome.WRITE, f"{what}, but that failed: {exc}") from None
    except commit.InterruptedAfterCommit:
        raise Stop(Outcome.INTERRUPTED, "interrupted after that roll-back; nothing else written") from None


def remeasure(options: Options, out: TextIO) -> tuple[Outcome, dict[str, Any] | None]:
    """The pipeline; returns the outcome and the report (None where it stopped before the figures)."""
    target = find_target(options)
    commit.clean_stale(target.root)
    try:
        held = commit.recipe_lock(target.root, target.path)
        with held:
            if not options.as_new:
                recover(target.root, target.path, options.dry_run, out)
            try:
                measured = measure_runs(target, out)
            except Shown:
                return Outcome.OK, None
            decision = decide(target, measured, out)
            try:
                return write(target, decision, out), decision.report
            except Stop as stop:  # the figures were made: the report says them and why nothing was written
                if stop.outcome is Outcome.INTERRUPTED:
                    raise
                decision.report["decision"] = f"refused: {stop}"
                print(f"error: {stop}", file=sys.stderr)
                return stop.outcome, decision.report
    except commit.LockHeld as exc:
        raise Stop(Outcome.LOCKED, str(exc)) from None
    except commit.InterruptedAfterCommit as exc:
        raise Stop(Outcome.INTERRUPTED, f"{exc}: the recipe and its evidence are both new") from None

