"""``remeasure`` as one pipeline: target -> measurement -> decision -> write, a dataclass between the steps.

- `find_target` (Target): the recipe loaded inside its registry, the catalog, the file refusals, the preflight of
  this machine (for a launch), and for --as-new the new recipe's path and text.
- `measure` (Measured): the runs launched here, or the logs of runs made elsewhere, parsed and turned into the
  recipe's figures (runner.measure, through generator.figures only).
- `decide` (Decision): the change gate (generator.figures.change_tolerance_percent), the new recipe text (a
  splice of the result) and the new evidence sidecar, and the report.
- `write`: the new recipe and sidecar staged, checked by the registry's own check (refused for any problem the
  recipe did not already have; one it had is reported), then committed together; runner/commit.py says how an
  interruption at any point leaves both old or both new.

Every refusal is a `Stop` naming its `Outcome`; runner/cli.py maps outcomes to exit codes.
"""

from __future__ import annotations

import datetime as dt
import enum
import os
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from generator import evidence, figures
from generator.catalog import Catalog
from generator.load import LoadedRecipe, load_recipe, recipe_id
from generator.models import Recipe, Status
from generator.problems import InputError, Problem
from generator.registry import RECIPES_DIR, RootNotFound, display_path, find_root, is_root, load_catalog
from runner import commit, yaml_edit
from runner.yaml_edit import WriteError


class Outcome(enum.Enum):
    OK = "ok"
    USAGE = "usage"
    PREFLIGHT = "preflight"
    RUN_FAILED = "run-failed"
    BAD_LOG = "bad-log"
    CHANGE = "change"
    LOCKED = "locked"
    DECLINED = "declined"
    WRITE = "write"
    CHECK = "check"
    INTERRUPTED = "interrupted"


class Stop(Exception):
    """The pipeline ends here; the message is for stderr, the outcome for the exit code."""

    def __init__(self, outcome: Outcome, message: str) -> None:
        super().__init__(message)
        self.outcome = outcome


GPU_HOURS_NOTE = {
    "launch": "GPUs x the median run's wall time under the runner, launch to exit (start-up included)",
    "from-log": "GPUs x the median run's span from its log's first to its last timestamp (start-up before the first "
    "timestamped line not counted)",
}


@dataclass(frozen=True)
class Options:
    recipe: Path
    runs: int | None = None
    from_log: list[Path] = field(default_factory=list)
    dry_run: bool = False
    yes: bool = False
    json: bool = False
    accept_change: bool = False
    accept_partial: bool = False
    timeout: float | None = None
    as_new: str | None = None
    workdir: Path = Path(".")
    root: Path | None = None
    measured: dt.date | None = None
    launcher: str = "local"  # local | torchrun | slurm (runner/launchers)
    nodes: int | None = None  # default: the recipe's gpu.count / gpu.per_node
    rdzv_endpoint: str | None = None  # --launcher torchrun: HOST:PORT of the c10d store (default: this node)
    rdzv_id: str | None = None
    sbatch: list[str] = field(default_factory=list)  # extra sbatch options, passed through
    poll_s: float = 1.0  # --launcher slurm: seconds between looks at the job


class Shown(Exception):
    """--dry-run with --launcher slurm: the batch script was printed and nothing submitted."""


# --- step 1: the target ---------------------------------------------------------------------------------------


@dataclass
class Target:
    options: Options
    root: Path
    catalog: Catalog
    source: LoadedRecipe  # the recipe named on the command line
    recipe: Recipe  # what is measured against (for --as-new: the copy for the GPUs present)
    path: Path  # the file written: the recipe itself, or the --as-new file
    recipe_id: str
    text: str  # the written file's text now, with "\n" line ends (for --as-new: the new recipe's)
    newline: str  # the line end it is written back with
    old_bytes: bytes | None  # the file's bytes as read (None: --as-new, no file yet)
    gpus: Any  # runner.preflight.Gpus of this machine (None for --from-log and --launcher slurm)
    fmt: str | None  # the log format of the recipe's framework
    runs: int
    nodes: int = 1

    @property
    def display(self) -> str:
        return display_path(self.path, self.root)


def _registry_root(options: Options) -> Path:
    """The registry the recipe belongs to; refused when it lies in none (no lock or file is made anywhere then)."""
    if options.root is not None:
        root = options.root.absolute()
        if not is_root(root):
            raise Stop(Outcome.USAGE, f"--root {options.root}: not a registry (no catalog/ and recipes/ there)")
    else:
        try:
            root = find_root(options.recipe)
        except RootNotFound as exc:
            raise Stop(Outcome.USAGE, f"{options.recipe} is outside any registry: {exc}") from None
    try:
        commit.refuse_outside(options.recipe.absolute(), root)
    except commit.WriteRefused as exc:
        raise Stop(Outcome.USAGE, str(exc)) from None
    return root


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
    stem = name.removesuffix(".yaml")
    if not stem or stem.startswith(".") or any(c in stem for c in "/\\\0") or stem != stem.strip():
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
    if os.path.lexists(path):
        raise Stop(Outcome.USAGE, f"--as-new: {path} exists already; choose another NAME")
    try:
        text = yaml_edit.as_new_text(target.text, loaded, catalog, new_type, name, options.recipe, path)
    except WriteError as exc:
        raise Stop(Outcome.USAGE, f"--as-new: {exc}") from None
    spec = catalog.gpus[new_type]
    gpu = loaded.recipe.gpu.model_copy(update={"type": new_type, "memory_gb": spec.memory_gb,
                                               "instance": yaml_edit.instance_of(text)})
    recipe = loaded.recipe.model_copy(update={"gpu": gpu, "status": Status.measured})
    target.recipe, target.path, target.text, target.old_bytes = recipe, path, text, None
    target.recipe_id = recipe_id(path, target.root / RECIPES_DIR)
    return target


def _nodes(options: Options, recipe: Recipe) -> int:
    """The node count of a launch: --nodes, else gpu.count / gpu.per_node; it must hold the recipe's GPUs."""
    from runner.launchers import default_nodes, per_node
    from runner.launchers.rendezvous import launches_torchrun

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
    return nodes


def find_target(options: Options) -> Target:
    from runner.logs import format_for

    if options.as_new is not None:
        _as_new_name(options.as_new)  # before anything: "" or a path is refused, never taken as "no --as-new"
    root = _registry_root(options)
    if not options.as_new:  # the recipe itself is written: refuse what a rename would damage, before measuring
        try:
            commit.refuse_unwritable(options.recipe, "recipe")
            commit.refuse_unwritable(evidence.path_for(options.recipe), "evidence")
            commit.refuse_folder(options.recipe.parent)
        except commit.WriteRefused as exc:
            raise Stop(Outcome.WRITE, str(exc)) from None
    try:
        loaded = load_recipe(options.recipe, display_path(options.recipe, root), root / RECIPES_DIR)
    except InputError as exc:
        raise Stop(Outcome.USAGE, "\n".join(str(p) for p in exc.problems)) from None
    catalog = load_catalog(root)
    if catalog.problems:
        raise Stop(Outcome.USAGE, "\n".join(str(p) for p in catalog.problems))
    if options.from_log and options.runs is not None and options.runs != len(options.from_log):
        raise Stop(Outcome.USAGE, f"--runs {options.runs} but {len(options.from_log)} logs given with --from-log "
                                  "(one log is one run)")
    runs = len(options.from_log) if options.from_log else (options.runs or 1)
    if runs < 1:
        raise Stop(Outcome.USAGE, "--runs must be at least 1")
    if loaded.recipe.status is Status.reported and not options.as_new:
        raise Stop(Outcome.PREFLIGHT, f"{options.recipe} is a reported recipe: its figures are a publication's, not a "
                   "measurement to overwrite. Pass --as-new NAME to write a measured recipe beside it from your run.")
    raw = options.recipe.read_bytes()
    try:
        text, newline = yaml_edit.decode(raw, str(options.recipe))
        yaml_edit.load_rt(text)  # the write edits it: a file the editor cannot read is refused before measuring
    except WriteError as exc:
        raise Stop(Outcome.USAGE, f"{options.recipe}: {exc}") from None
    nodes = _nodes(options, loaded.recipe)
    gpus = None if options.from_log else _preflight(options, loaded, catalog)
    target = Target(options, root, catalog, loaded, loaded.recipe, options.recipe.absolute(), loaded.id, text,
                    newline, raw, gpus, format_for(loaded.recipe.stack.framework), runs, nodes)
    return _as_new(target, gpus) if options.as_new else target


# --- step 2: the measurement ----------------------------------------------------------------------------------


@dataclass
class Measured:
    measurement: Any  # runner.measure.Measurement
    source: str  # "launch" (run here) or "from-log" (a run made elsewhere)
    command: str | None  # as recorded in the evidence: paths relative to the registry root
    nccl: str | None
    log_tail: list[str]
    environment: dict[str, Any] | None = None  # the rank-0 node's stack, captured on the nodes (multi-node runs)
    extra: dict[str, Any] = field(default_factory=dict)  # evidence keys of a multi-node run: launcher, nodes
    gpu_hours_note: str | None = None  # what the GPU-hours count, where not GPU_HOURS_NOTE[source]
    stated_stack: dict[str, str] = field(default_factory=dict)  # a from-log run's versions as its log prints them


def _relative(path: Path, root: Path, outside: str) -> str:
    """A path as the evidence records it: relative to the registry root, or `outside` for one beyond it."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix() or "."
    except ValueError:
        return outside


def recorded_command(workdir: Path, script: Path, env: dict[str, str], root: Path) -> str:
    """The launch command for the evidence: no folder of the measuring machine (the evidence is committed); a
    working folder outside the registry (the framework's checkout) is written as $WORKDIR."""
    from runner.launch import shell_quote_env

    where = _relative(workdir, root, "$WORKDIR")
    where = where if where == "$WORKDIR" else shlex.quote(where)
    return f"cd {where} && {shell_quote_env(env)} bash {shlex.quote(_relative(script, root, script.name))}"


def _confirm(target: Target, command: str, out: TextIO) -> None:
    recipe, runs = target.recipe, target.runs
    print(f"recipe: {target.source.id}\nwill run ({runs} run{'s' if runs > 1 else ''}):\n  {command}\nscript:", file=out)
    for line in recipe.run.splitlines():
        print(f"  | {line}", file=out)
    if target.options.yes:
        return
    if not sys.stdin.isatty():
        raise Stop(Outcome.DECLINED, "no terminal to confirm the launch on: pass --yes to run without asking")
    if input("Launch? [y/N] ").strip().lower() not in ("y", "yes"):
        raise Stop(Outcome.DECLINED, "not launched")


def _launch(target: Target, out: TextIO) -> Measured:
    from runner import measure
    from runner.launch import run_script, shell_quote_env
    from runner.logs import LogError, parse_file, tail

    options, recipe = target.options, target.recipe
    workdir = options.workdir.resolve()
    started = dt.datetime.now(dt.UTC)
    run_dir = commit.runs_dir(target.root) / target.source.id / started.strftime("%Y%m%dT%H%M%SZ")
    run_dir.mkdir(parents=True, exist_ok=True)
    script = run_dir / "run.sh"
    script.write_text(recipe.run, encoding="utf-8")
    env = dict(os.environ) | dict(recipe.env)
    shown = f"cd {shlex.quote(str(workdir))} && {shell_quote_env(dict(recipe.env))} bash {shlex.quote(str(script))}"
    _confirm(target, shown, out)
    wl = recipe.workload
    results, logs, nccl = [], [], None
    log_path = run_dir / "run1.log"
    for i in range(target.runs):
        log_path = run_dir / f"run{i + 1}.log"
        print(f"run {i + 1}/{target.runs}: log {log_path}", file=out)
        launched = run_script(
            script, env, workdir, log_path, target.fmt or "openrecipes", recipe.result.steps_per_run,
            figures.window_tokens((0, 0), wl.global_batch, wl.row_tokens), recipe.gpu.count, options.timeout,
            out, progress=not options.json,
        )
        log = launched.parsed if target.fmt else parse_file(log_path, None)
        if not log.steps:
            raise LogError(f"{log_path}: no {target.fmt or 'known-format'} training step lines in the run's output")
        nccl = nccl or log.nccl_version
        logs.append(log)
        results.append(measure.run_figures(recipe, target.catalog, log, launched.wall_seconds,
                                           allow_partial=True, exit_code=launched.returncode))
    measured = measure.measured_date(logs, launched=started.date(), given=options.measured)
    command = recorded_command(workdir, script, dict(recipe.env), target.root)
    return Measured(measure.combine(recipe, results, measured), "launch", command, nccl, tail(log_path))


SLURM_GPU_HOURS_NOTE = "GPUs x the median run's Slurm job run time (RunTime: start to end, the per-node preflight " \
    "and start-up included, queueing not)"


def _launch_slurm(target: Target, out: TextIO) -> Measured:
    """The runs as Slurm jobs (runner/launchers/slurm.py): the batch script shown (with --dry-run: only shown),
    submitted, followed to its end; rank 0's log parsed as a local run's."""
    from runner import measure
    from runner.launchers import nodes as node_checks
    from runner.launchers import slurm
    from runner.launchers.rendezvous import launches_torchrun
    from runner.logs import tail

    options, recipe = target.options, target.recipe
    workdir = options.workdir.resolve()
    sbatch = slurm.check_sbatch_options(options.sbatch)
    started = dt.datetime.now(dt.UTC)
    base = commit.runs_dir(target.root) / target.source.id / started.strftime("%Y%m%dT%H%M%SZ")

    def script_for(run_dir: Path) -> str:
        return slurm.job_script(recipe_id=target.source.id, recipe=target.options.recipe.absolute(), root=target.root,
                                run_dir=run_dir, workdir=workdir, nodes=target.nodes, env=dict(recipe.env),
                                python=sys.executable)

    first = base / "run1" if target.runs > 1 else base
    shown = f"cd {shlex.quote(str(first))} && {shlex.join(slurm.sbatch_command(sbatch))}"
    if options.dry_run:
        print(f"recipe: {target.source.id}\nwould submit ({target.nodes} node{'s' if target.nodes > 1 else ''}):"
              f"\n  {shown}\n{slurm.JOB_SCRIPT}:", file=out)
        print(script_for(first), end="", file=out)
        print(f"run.sh (the recipe's run):\n{recipe.run}", end="" if recipe.run.endswith("\n") else "\n", file=out)
        print("(dry run with --launcher slurm: nothing submitted, nothing written)", file=out)
        raise Shown()
    _confirm(target, shown, out)
    wl = recipe.workload
    results, logs, stacks, jobs = [], [], [], []
    followed = None
    for i in range(target.runs):
        run_dir = base / f"run{i + 1}" if target.runs > 1 else base
        slurm.write_job(run_dir, recipe.run, script_for(run_dir))
        job = slurm.submit(run_dir, sbatch)
        jobs.append(job)
        print(f"run {i + 1}/{target.runs}: Slurm job {job} ({target.nodes} node{'s' if target.nodes > 1 else ''}); "
              f"logs in {run_dir}", file=out)
        followed = slurm.follow(job, run_dir, target.fmt or "openrecipes", target.nodes, recipe.result.steps_per_run,
                                figures.window_tokens((0, 0), wl.global_batch, wl.row_tokens), recipe.gpu.count,
                                options.timeout, out, options.poll_s, progress=not options.json)
        if not followed.parsed.steps:
            from runner.logs import LogError

            raise LogError(f"{followed.log_path}: no {target.fmt or 'known-format'} training step lines in the job's "
                           "output")
        logs.append(followed.parsed)
        stacks = followed.stacks
        results.append(measure.run_figures(recipe, target.catalog, followed.parsed, followed.wall_seconds,
                                           allow_partial=True, exit_code=followed.info.exit_code))
    assert followed is not None
    measured = measure.measured_date(logs, launched=started.date(), given=options.measured)
    rank0_host = followed.log_path.stem.removeprefix("node-")
    rank0 = next((s for s in stacks if s.get(node_checks.HOST_KEY) == rank0_host), stacks[0] if stacks else None)
    environment = {k: v for k, v in rank0.items() if k != node_checks.HOST_KEY} if rank0 else None
    command = (f"sbatch --nodes={target.nodes} --ntasks-per-node=1 {shlex.join(sbatch)} {slurm.JOB_SCRIPT}; on each "
               f"node: " + recorded_command(workdir, first / "run.sh", dict(recipe.env), target.root)).replace("  ", " ")
    extra = {"launcher": {"name": "slurm", "nodes": target.nodes, "jobs": jobs,
                          "rendezvous": "c10d on the first node" if launches_torchrun(recipe.run) else None},
             "nodes": node_checks.evidence_nodes(stacks)}
    nccl = next((log.nccl_version for log in logs if log.nccl_version), None)
    return Measured(measure.combine(recipe, results, measured), "launch", command, nccl, tail(followed.log_path),
                    environment, extra, SLURM_GPU_HOURS_NOTE)


def _rendezvous(target: Target) -> Any:
    from runner.launchers import rendezvous as rv

    options = target.options
    endpoint = rv.check_endpoint(options.rdzv_endpoint) if options.rdzv_endpoint else f"{rv.this_host()}:{rv.free_port()}"
    run_id = rv.check_run_id(options.rdzv_id) if options.rdzv_id else rv.new_run_id()
    return rv.Rendezvous(endpoint, run_id, target.nodes)


def _launch_torchrun(target: Target, out: TextIO) -> Measured:
    """One run across nodes through a c10d rendezvous held here (runner/launchers/torchrun.py): the other nodes
    join with the printed command, report their stacks (compared before anything trains) and stream their output
    back; rank 0's log, wherever it ran, is parsed as a local run's."""
    from runner import measure
    from runner.launch import RunFailed, run_script, shell_quote_env
    from runner.launchers import nodes as node_checks
    from runner.launchers import torchrun
    from runner.launchers.rendezvous import WRAPPER, this_host
    from runner.launchers.slurm import PreflightRefused
    from runner.logs import tail

    options, recipe = target.options, target.recipe
    if target.runs != 1:
        raise Stop(Outcome.USAGE, "--launcher torchrun makes one run per rendezvous: run it again for another")
    workdir = options.workdir.resolve()
    rdzv = _rendezvous(target)
    started = dt.datetime.now(dt.UTC)
    run_dir = commit.runs_dir(target.root) / target.source.id / started.strftime("%Y%m%dT%H%M%SZ")
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "run.sh").write_text(recipe.run, encoding="utf-8")
    node_script = run_dir / "node.sh"
    node_script.write_text(WRAPPER, encoding="utf-8")
    shown = (f"cd {shlex.quote(str(workdir))} && {shell_quote_env(dict(recipe.env))} bash {shlex.quote(str(node_script))}"
             f"   (its torchrun: c10d at {rdzv.endpoint}, id {rdzv.run_id}, {rdzv.nodes} nodes)")
    _confirm(target, shown, out)
    collector = torchrun.Collector(run_dir, out)
    try:
        report = f"{this_host()}:{collector.port}"
        join = [sys.executable, "-m", "runner", "node", str(options.recipe), "--nodes", str(rdzv.nodes), "--rdzv-endpoint",
                rdzv.endpoint, "--rdzv-id", rdzv.run_id, "--report", report, "--workdir", str(workdir)]
        print(f"rendezvous: c10d at {rdzv.endpoint}, id {rdzv.run_id}, {rdzv.nodes} nodes. On each of the other "
              f"{rdzv.nodes - 1} node(s), from the same checkout and Python at the same paths, run:\n"
              f"  {shlex.join(join)}", file=out, flush=True)
        try:
            joined = collector.wait_for(rdzv.nodes - 1, options.timeout or 600.0)
        except TimeoutError as exc:
            raise RunFailed(f"{exc}; nothing trained, nothing written") from None
        own = node_checks.node_stack(target.gpus)
        stacks = [own] + [j.stack for j in joined]
        problems = [str(s["refused"]) for s in stacks if "refused" in s] or node_checks.differences(stacks)
        if problems:
            collector.answer(torchrun.REFUSED + "; ".join(problems))
            raise PreflightRefused("; ".join(problems) + "; nothing trained, nothing written")
        collector.answer(torchrun.OK)
        wl = recipe.workload
        own_log = run_dir / f"node-0-{own[node_checks.HOST_KEY]}.log"
        launched = run_script(node_script, dict(os.environ) | dict(recipe.env) | rdzv.env(), workdir, own_log,
                              target.fmt or "openrecipes", recipe.result.steps_per_run,
                              figures.window_tokens((0, 0), wl.global_batch, wl.row_tokens), recipe.gpu.count,
                              options.timeout, out, progress=not options.json)
        collector.drain(30.0)
    finally:
        collector.close()
    log_path, log = node_checks.rank0_log(run_dir, target.fmt or "openrecipes")
    result = measure.run_figures(recipe, target.catalog, log, launched.wall_seconds,
                                 allow_partial=True, exit_code=launched.returncode)
    measured = measure.measured_date([log], launched=started.date(), given=options.measured)
    rank0 = stacks[int(log_path.stem.split("-")[1])]
    environment = {k: v for k, v in rank0.items() if k != node_checks.HOST_KEY}
    command = (f"on each of {rdzv.nodes} nodes: " + recorded_command(workdir, run_dir / "run.sh", dict(recipe.env),
                                                                      target.root) + " (torchrun: c10d rendezvous)")
    extra = {"launcher": {"name": "torchrun", "nodes": rdzv.nodes, "rendezvous": "c10d on the first node"},
             "nodes": node_checks.evidence_nodes(stacks)}
    return Measured(measure.combine(recipe, [result], measured), "launch", command, log.nccl_version, tail(log_path),
                    environment, extra)


def _distinct_logs(paths: list[Path]) -> None:
    """One log is one run: the same log given twice (the same file, or the same bytes) is refused."""
    import hashlib

    seen: dict[str, Path] = {}
    for path in paths:
        try:
            if path.is_file():
                with path.open("rb") as handle:
                    digest = hashlib.file_digest(handle, "sha256").hexdigest()
            else:  # a device or a fifo: never read to its end here
                digest = f"path:{path.resolve()}"
        except OSError:
            continue  # parse_file says why it cannot be read
        if digest in seen:
            raise Stop(Outcome.USAGE, f"--from-log {path} is the same log as --from-log {seen[digest]} (the same bytes): "
                                      "one log is one run, and a run counted twice is not two runs")
        seen[digest] = path


def _from_logs(target: Target) -> Measured:
    from runner import measure
    from runner.logs import parse_file, tail

    options = target.options
    results, logs, nccl = [], [], None
    _distinct_logs(options.from_log)
    for name in options.from_log:
        log = parse_file(name, target.fmt)
        nccl = nccl or log.nccl_version
        logs.append(log)
        results.append(measure.run_figures(target.recipe, target.catalog, log, allow_partial=True))
    measured = measure.measured_date(logs, given=options.measured)
    return Measured(measure.combine(target.recipe, results, measured), "from-log", None, nccl,
                    tail(options.from_log[-1]), stated_stack=logs[-1].stated_stack)


def measure_runs(target: Target, out: TextIO) -> Measured:
    from runner.launch import Interrupted, RunFailed
    from runner.launchers import slurm
    from runner.launchers.rendezvous import RendezvousError
    from runner.logs import LogError

    try:
        if target.options.from_log:
            return _from_logs(target)
        if target.options.launcher == "slurm":
            return _launch_slurm(target, out)
        if target.options.launcher == "torchrun":
            return _launch_torchrun(target, out)
        return _launch(target, out)
    except slurm.PreflightRefused as exc:
        raise Stop(Outcome.PREFLIGHT, str(exc)) from None
    except (slurm.JobFailed, slurm.SlurmError) as exc:
        raise Stop(Outcome.RUN_FAILED, str(exc)) from None
    except slurm.JobInterrupted as exc:
        raise Stop(Outcome.INTERRUPTED, str(exc)) from None
    except RendezvousError as exc:
        raise Stop(Outcome.USAGE, str(exc)) from None
    except LogError as exc:
        message = str(exc)
        raise Stop(Outcome.BAD_LOG, message if "nothing written" in message else f"{message}\nnothing written") from None
    except RunFailed as exc:
        raise Stop(Outcome.RUN_FAILED, str(exc)) from None
    except Interrupted as exc:
        raise Stop(Outcome.INTERRUPTED, str(exc)) from None


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


def decide(target: Target, measured: Measured, out: TextIO) -> Decision:
    from runner.yaml_edit import result_changes, rounded, splice

    options, m = target.options, measured.measurement
    fields = m.result_fields()
    written = {k: rounded(k, v) for k, v in fields.items()}
    if m.gpu_hours is None:  # the old figure was another run's: it goes, rather than stand beside the new ones
        why = "the log is an excerpt, not the whole run" if measure_excerpt(m) else "the log has no timestamps to time " \
            "the run by"
        print(f"gpu_hours: {why}; no GPU-hours are written" + (" (the recorded one is removed)"
              if target.recipe.result.gpu_hours is not None else ""), file=out)
    warnings = _warnings(m)
    for w in warnings:
        print(f"warning: {w}", file=out)
    env, diffs = _environment(target, measured)
    for d in diffs:
        print(f"stack differs from the recipe: {d}", file=out)
    g = gate(target.recipe, m.median.tokens_per_s_per_gpu)
    print("new recipe (--as-new): no recorded figure to compare" if options.as_new else g.describe(), file=out)
    changes = result_changes(fields)
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
        new_text = splice(target.text, changes)
    except WriteError as exc:
        raise Stop(Outcome.USAGE, f"{target.display}: {exc}") from None
    extra = {**m.evidence_fields(), "noisy": m.median.step_time_cv_percent > figures.NOISY_STEP_TIME_CV_PERCENT,
             "warnings": warnings, "provenance": _provenance(target.recipe, target.root), **measured.extra}
    data = evidence.build(target.recipe, target.recipe_id, written | {"measured": m.measured}, m, measured.source,
                          measured.command, env, diffs, measured.log_tail, _existing_evidence(target), extra)
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
        "measured": m.measured.isoformat(),
        "written": written | {"measured": m.measured.isoformat()},
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
    return Decision(g, refused, partial, new_text, data, report, warnings)


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


def check_staged(target: Target, recipe: Path, staging: commit.Staging) -> tuple[list[Problem], list[Problem]]:
    """The registry's check of the staged recipe with its staged sidecar, located at the real file's lines: the
    problems this write would bring, and those the recipe already had (not the measurement's doing, but still a
    refusal: nothing check rejects is written; the message tells the two apart)."""
    from generator.check import check_recipe

    today = dt.date.today()
    before = check_recipe(target.source, target.catalog, today) if not target.options.as_new else []
    try:
        loaded = load_recipe(recipe, target.display, staging.place(target.root / RECIPES_DIR))
        after = check_recipe(loaded, target.catalog, today)
    except InputError as exc:
        after = exc.problems
    known = {(p.field, p.message) for p in before}
    return [p for p in after if (p.field, p.message) not in known], [p for p in after if (p.field, p.message) in known]


def _diff(target: Target, new_text: str) -> str:
    from runner.yaml_edit import unified_diff

    return unified_diff(target.text if not target.options.as_new else "", new_text, target.display)


def write(target: Target, decision: Decision, out: TextIO) -> Outcome:
    options, sidecar_name = target.options, evidence.path_for(target.path).name
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
    try:
        with commit.Staging(target.root) as staging:
            staged = commit.stage(changes, staging)
            problems, known = check_staged(target, staged[1], staging)
            if problems:
                lines = "\n".join(f"  {p}" for p in problems)
                raise Stop(Outcome.CHECK, f"not written: the new figures would not pass `python -m generator check`:"
                                          f"\n{lines}")
            if known:  # never write what check rejects, even when the measurement is not to blame
                lines = "\n".join(f"  {p}" for p in known)
                raise Stop(Outcome.CHECK, "not written: the recipe already fails `python -m generator check` (not this "
                                          f"measurement's doing); fix these first, then run again:\n{lines}")
            if options.dry_run:
                print(_diff(target, decision.new_text) or "(no change)", file=out)
                print(f"(dry run: nothing written; {sidecar_name} would be written too; both pass check)", file=out)
                decision.report["decision"] = "would write (dry run)"
                return Outcome.OK

            def announce(paths: list[Path]) -> None:
                decision.report["wrote"] = True
                decision.report["decision"] = "written"
                print(_diff(target, decision.new_text) or f"{target.display}: figures unchanged at the stated "
                      "precision", file=out)
                print(f"wrote {target.display} and {sidecar_name}", file=out)

            target.path.parent.mkdir(parents=True, exist_ok=True)  # --as-new for another GPU: its folder
            commit.commit(changes, staged, staging, announce)
    except commit.Changed as exc:
        raise Stop(Outcome.LOCKED, str(exc)) from None
    except commit.CommitFailed as exc:
        raise Stop(Outcome.WRITE, str(exc)) from None
    except commit.WriteRefused as exc:
        raise Stop(Outcome.WRITE, f"{exc}; nothing written") from None
    except OSError as exc:  # staging: a full disk, permissions; nothing was renamed into the registry
        raise Stop(Outcome.WRITE, f"{exc.filename or 'staging the new files'}: {exc.strerror or exc}; nothing written "
                                  f"({target.display} and {sidecar_name} are as they were)") from None
    if options.as_new:
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

