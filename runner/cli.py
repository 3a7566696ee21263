"""``python -m runner``: re-measure a recipe and write its figures back; compare two loss curves."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path

from generator import figures
from generator.version import PrintVersion

EXIT_OK = 0
EXIT_FAIL = 1  # convergence: the check ran and failed
EXIT_USAGE = 2  # bad arguments or an invalid recipe / catalog
EXIT_PREFLIGHT = 3
EXIT_RUN_FAILED = 4  # the run crashed, exited non-zero or passed --timeout
EXIT_BAD_LOG = 5  # too few steps, NaN loss, missing window, no step lines
EXIT_CHANGE = 6  # tokens/s moved outside the tolerance and --accept-change was not given
EXIT_LOCKED = 7  # another remeasure holds the recipe's lock, or the recipe changed while it was measured
EXIT_DECLINED = 8  # not confirmed at the prompt (or no terminal to ask and no --yes)
EXIT_WRITE = 9  # the recipe or evidence file could not be written (disk, permissions, a file refused)
EXIT_CHECK = 10  # the new recipe and evidence would not pass `python -m generator check`; nothing written
EXIT_INTERRUPTED = 130

EXIT_TABLE = f"""exit codes:
  {EXIT_OK}    written, or unchanged within tolerance (with --dry-run: the diff was printed)
  {EXIT_USAGE}    bad arguments, or the recipe or catalog does not validate
  {EXIT_PREFLIGHT}    preflight refused (wrong GPUs, unset variables, entry point missing, reported recipe)
  {EXIT_RUN_FAILED}    the run failed: crashed, non-zero exit, or --timeout passed
  {EXIT_BAD_LOG}    the log cannot give figures: too few steps, NaN loss, window missing, no step lines
  {EXIT_CHANGE}    tokens/s changed beyond tolerance; not written (pass --accept-change to write)
  {EXIT_LOCKED}    another remeasure of the same recipe holds its lock (or the file changed during the run)
  {EXIT_DECLINED}    the launch was not confirmed (answer y, or pass --yes)
  {EXIT_WRITE}    the recipe or its evidence file could not be written (disk full, permissions), or is one the
       runner refuses to replace (a symlink, a file with hard links, a read-only file); the message says what
       was written (nothing, unless it says otherwise)
  {EXIT_CHECK}   the new recipe and evidence would not pass `python -m generator check` (its messages are shown);
       nothing written
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C, SIGTERM): the run's process group was ended; nothing written, or, when
       it came during the write, after both files were written (the message says which)
"""

# The change gate's figures (generator/figures.py), as --help states them.
_MFU_BOUND = figures.MFU_BOUND
_LOW, _FACTOR, _CAP, _NOISY = (figures.CHANGE_TOLERANCE_MIN_PERCENT, figures.CHANGE_TOLERANCE_CV_FACTOR,
                               figures.CHANGE_TOLERANCE_MAX_PERCENT, figures.NOISY_STEP_TIME_CV_PERCENT)

REMEASURE_HELP = f"""Re-measure a recipe: run it (or read the logs of a run made elsewhere), compute its figures with the
registry's formulas over the recipe's window, and write them into the recipe's `result`, changing no other byte.

What happens, in order:
  1. preflight: this machine's GPUs (NVML, else torch; CUDA_VISIBLE_DEVICES applies) against the recipe's
     `gpu`; the environment variables its `run` script reads but nobody sets (the reference recipe needs
     HF_CKPT, a Hugging Face checkpoint folder, and SFT_DATA, its prepared rows); the script's entry point
     (run from the framework's checkout, or pass --workdir). Any failure refuses with what to do.
  2. the exact command and script are shown; answer y to launch (or pass --yes).
  3. the script runs in bash with the recipe's `env`, in its own process group, its output streamed to the
     console and to .openrecipes-runs/<recipe>/<time>/runN.log (outside git), under a progress bar (step i/N,
     tokens/s per GPU, ETA). Ctrl-C or --timeout ends every process of the run and writes nothing.
  4. the log is parsed for the recipe's framework (Megatron-LM/Bridge, NeMo 2, torchtitan, miles/slime, or the
     bundled engine); a last line cut short (no line end) is left out and said. A NaN or infinite loss or
     gradient norm, a missing window step, a log stating another global batch, sequence length, GPU count or
     model than the recipe's (a run of another workload is another recipe), or an MFU above {_MFU_BOUND:g} of the
     GPU's dense peak (generator.figures.MFU_BOUND: more than a training step reaches) refuses, writing nothing.
     A crash, an interruption (^C, KeyboardInterrupt), too few steps or an excerpt (a log not showing step 0, or
     ending before the steps its lines state, "iteration 200/40000") is a partial run: its figures and the
     decision are printed, and it is written only with --accept-partial, marked result.partial (never verified).
  5. the new tokens/s is compared with the recorded one: beyond the larger of {_LOW:g}% and {_FACTOR:g}x the recorded
     step-time CV, capped at {_CAP:g}%, it is reported as a regression or improvement and not written unless
     --accept-change. A run whose step-time CV is above {_NOISY:g}% is flagged as noisy (output and evidence).
  6. the new `result` (tokens/s, $/1M, MFU, CV, date, steps, window tokens, runs, GPU-hours) and
     <name>.evidence.json (per-step times and losses, the environment, the project's commit, the command with
     paths relative to the registry, the log's tail, every earlier result) are checked by the registry's own
     check, then written together: an interruption at any point (Ctrl-C, SIGTERM, SIGKILL, a full disk) leaves
     both old or both new, and `python -m generator check` passes either way. Commit both files.
     Refused: a symlinked recipe (re-measure its target), a file with hard links, a read-only file, a recipe
     outside a registry, an --as-new NAME that is a path.

examples:
  # measure the reference recipe on 8 H100 (from the miles checkout, inside its training image)
  HF_CKPT=/ckpt/gemma-4-31b-it SFT_DATA=/data/rows.parquet \\
    python -m runner remeasure recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml --workdir ~/miles
  # see what a log from your own cluster would change, without writing
  python -m runner remeasure recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml --from-log run.log --dry-run
  # three runs, no questions, figures as JSON
  python -m runner remeasure RECIPE --runs 3 --yes --json
  # only H200s here: measure into a new recipe for them
  python -m runner remeasure RECIPE --as-new my-h200-run
  # a multi-node recipe as a Slurm job (print the batch script first with --dry-run; nothing is submitted then)
  python -m runner remeasure RECIPE --launcher slurm --yes --partition gpu --sbatch=--time=01:00:00
  # a multi-node torchrun rendezvous held on this node; it prints the `python -m runner node ...` the others run
  python -m runner remeasure RECIPE --launcher torchrun --nodes 2 --yes

environment: OPENRECIPES_GPUS="8xNVIDIA H100 80GB HBM3" declares this machine's GPUs where neither NVML nor
torch can see them (a container without the NVML library).
"""


CONVERGENCE_EPILOG = """--write RECIPE updates its correctness.convergence, or adds it (with a note naming the two arms). A recipe
without correctness evidence gets a correctness block whose result is this check's, and a measured recipe whose
check passes becomes verified; a failing check sets correctness.result to fail and a verified recipe back to
measured. The recipe must still pass `python -m generator check`, or nothing is written.

examples:
  python -m runner convergence candidate.log reference.log
  python -m runner convergence new.evidence.json old.evidence.json --write recipes/m/h100/r.yaml --dry-run

exit codes:
  0  pass (and written, with --write)
  1  fail (still written, with --write: a failing check is evidence too)
  2  bad arguments, or the recipe does not validate or would not check
  5  a log or evidence file cannot be read, or the two share fewer than 2 steps with a loss
  7  a remeasure of the recipe holds its lock
"""


def _err(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)


OUTCOME_EXIT = {
    "ok": EXIT_OK, "usage": EXIT_USAGE, "preflight": EXIT_PREFLIGHT, "run-failed": EXIT_RUN_FAILED,
    "bad-log": EXIT_BAD_LOG, "change": EXIT_CHANGE, "locked": EXIT_LOCKED, "declined": EXIT_DECLINED,
    "write": EXIT_WRITE, "check": EXIT_CHECK, "interrupted": EXIT_INTERRUPTED,
}


def _date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date YYYY-MM-DD") from None


def _sbatch_options(args: argparse.Namespace) -> list[str]:
    """--partition, --account and every --sbatch OPTION, as sbatch arguments (one each, never through a shell)."""
    named = [f"--partition={args.partition}"] if args.partition else []
    named += [f"--account={args.account}"] if args.account else []
    return named + list(args.sbatch or [])


def remeasure(args: argparse.Namespace) -> int:
    from runner.remeasure import Options, Stop
    from runner.remeasure import remeasure as pipeline

    options = Options(
        recipe=Path(args.recipe), runs=args.runs, from_log=[Path(p) for p in args.from_log or []],
        log_run=args.log_run,
        dry_run=args.dry_run, yes=args.yes, json=args.json, accept_change=args.accept_change,
        accept_partial=args.accept_partial, timeout=args.timeout, as_new=args.as_new, workdir=Path(args.workdir),
        root=Path(args.root) if args.root else None, measured=args.measured,
        launcher=args.launcher, nodes=args.nodes, rdzv_endpoint=args.rdzv_endpoint, rdzv_id=args.rdzv_id,
        sbatch=_sbatch_options(args), poll_s=args.poll, exclusive=not args.no_exclusive,
        cpus_per_node=args.cpus_per_node,
    )
    try:
        outcome, report = pipeline(options, sys.stderr if args.json else sys.stdout)
    except Stop as stop:
        _err(str(stop))
        if args.json:  # no figures could be made: the decision and its reason still come out as JSON
            print(json.dumps({"recipe": args.recipe, "decision": f"refused: {stop}", "outcome": stop.outcome.value,
                              "tokens_per_s_per_gpu": None, "wrote": False}, indent=1))
        return OUTCOME_EXIT[stop.outcome.value]
    if args.json and report is not None:
        print(json.dumps(report, indent=1, default=str))
    return OUTCOME_EXIT[outcome.value]


def convergence(args: argparse.Namespace) -> int:
    from runner.convergence import compare, losses, same_start
    from runner.logs import LogError

    try:
        cand = losses(Path(args.candidate))
        ref = losses(Path(args.reference))
        floor = _floor(args.floor)
        result = compare(cand, ref, args.steps, floor, same_start(Path(args.candidate), Path(args.reference)))
    except ValueError as exc:
        _err(f"--floor: {exc}")
        return EXIT_USAGE
    except LogError as exc:
        _err(str(exc))
        return EXIT_BAD_LOG
    out = sys.stderr if args.json else sys.stdout
    for line in result.summary():
        print(line, file=out)
    if args.write:
        from runner.convergence import write_convergence
        from runner.records import Stop

        arms = f"candidate arm: {Path(args.candidate).name}; reference arm: {Path(args.reference).name}"
        extra = {"reference": args.reference_name, "implementation": args.implementation}
        try:
            write_convergence(Path(args.write), result, args.dry_run, out, args.note, arms, extra, args.also)
        except Stop as stop:
            _err(str(stop))
            return OUTCOME_EXIT[stop.outcome.value]
    if args.json:
        print(json.dumps(result.as_dict(), indent=1))
    return EXIT_OK if result.passed else EXIT_FAIL


def _floor(text: str | None) -> float | None:
    """--floor: a loss in nats, or `markov` (the learnable stream's ln 8)."""
    if text is None:
        return None
    if text == "markov":
        from runner.engine.streams import markov_floor

        return markov_floor()
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise ValueError(f"{text!r} is not a positive loss")
    return value


def build_parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="python -m runner",
        description="OpenRecipes runner: re-measure a recipe and write its figures back; compare loss curves.",
    )
    top.add_argument("--version", action=PrintVersion, template="{prog} (openrecipes) {version}")
    sub = top.add_subparsers(dest="command", required=True)
    r = sub.add_parser(
        "remeasure", help="run a recipe (or read a run's logs) and write its figures back",
        description=REMEASURE_HELP, epilog=EXIT_TABLE, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    r.add_argument("recipe", help="the recipe YAML, e.g. recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml")
    r.add_argument("--runs", type=int, metavar="N",
                   help="run N times; the median run's figures are written, the CV across runs reported")
    r.add_argument("--dry-run", action="store_true", help="print the diff that would be applied; write nothing "
                   "(with --launcher slurm: print the batch script; submit nothing)")
    r.add_argument("--yes", "-y", action="store_true", help="launch without asking for confirmation")
    r.add_argument("--from-log", nargs="+", action="extend", metavar="LOG",
                   help="logs of runs made elsewhere (one per run): no hardware check, no launch")
    r.add_argument("--log-run", type=int, metavar="N",
                   help="with --from-log: a log holding several runs (a restart appended to it) is refused; this "
                        "measures its Nth run alone, the log split where it starts again")
    r.add_argument("--json", action="store_true", help="print the figures as JSON on stdout (messages go to stderr)")
    r.add_argument("--accept-change", action="store_true",
                   help="write even when tokens/s moved beyond the tolerance (a real regression or improvement)")
    r.add_argument("--accept-partial", action="store_true",
                   help="accept a run that crashed or stopped before steps_per_run, when the window was measured; "
                        "the evidence records it as partial and why")
    r.add_argument("--measured", type=_date, metavar="YYYY-MM-DD",
                   help="the day the run was made, for a log that prints no date (a dated log must agree)")
    r.add_argument("--timeout", type=float, metavar="S", help="end the run's whole process group after S seconds")
    r.add_argument("--as-new", metavar="NAME",
                   help="write a new recipe NAME for the GPUs present (status measured) instead of this one")
    r.add_argument("--workdir", default=".", help="folder the run script runs in (the framework checkout; default: .)")
    r.add_argument("--root", help="registry root holding catalog/ (default: found above the recipe)")
    cluster = r.add_argument_group("on a cluster (README: Re-measure on a cluster)")
    cluster.add_argument("--launcher", choices=("local", "torchrun", "slurm"), default="local",
                         help="local: run the script here (default); torchrun: this node starts a c10d rendezvous "
                              "and prints the command the other nodes run; slurm: submit a batch job (one task per "
                              "node, srun of torchrun), follow it, collect rank 0's log. With slurm, --dry-run "
                              "prints the batch script and submits nothing; Ctrl-C or --timeout cancels the job")
    cluster.add_argument("--nodes", type=int, metavar="N",
                         help="nodes to run on (default: the recipe's gpu.count / gpu.per_node)")
    cluster.add_argument("--rdzv-endpoint", metavar="HOST:PORT",
                         help="torchrun: the c10d store, on this node (default: this host and a free port)")
    cluster.add_argument("--rdzv-id", metavar="ID", help="torchrun: the rendezvous id (default: a new random one)")
    cluster.add_argument("--partition", help="slurm: sbatch --partition")
    cluster.add_argument("--account", help="slurm: sbatch --account")
    cluster.add_argument("--sbatch", action="append", metavar="OPTION",
                         help="slurm: any other sbatch option, passed through as one argument (repeat it): "
                              "--sbatch=--qos=high --sbatch=--time=01:00:00")
    cluster.add_argument("--no-exclusive", action="store_true",
                         help="slurm: share the nodes with other jobs (default: sbatch --exclusive, the whole node); "
                              "needs --cpus-per-node")
    cluster.add_argument("--cpus-per-node", type=int, metavar="N",
                         help="slurm: CPUs the run takes on each node (default with --exclusive: all of them)")
    cluster.add_argument("--poll", type=float, default=1.0, metavar="S", help=argparse.SUPPRESS)
    r.set_defaults(func=remeasure)
    n = sub.add_parser(
        "node", help="join a multi-node run started by `remeasure --launcher torchrun` on another node",
        description="Run on each other node the command `remeasure --launcher torchrun` prints: this node's GPUs are "
                    "checked against the recipe, its stack is sent to the first node (which compares every node's "
                    "before anything trains), then the recipe's run script runs here with its torchrun joining the "
                    "c10d rendezvous; the output streams to the first node, which writes the figures. Nothing is "
                    "written here. Exit: the run's status; 3 when this node or the first node refused; 2 bad "
                    "arguments.")
    n.add_argument("recipe")
    n.add_argument("--nodes", type=int, required=True)
    n.add_argument("--rdzv-endpoint", required=True, metavar="HOST:PORT")
    n.add_argument("--rdzv-id", required=True, metavar="ID")
    n.add_argument("--report", required=True, metavar="HOST:PORT", help="the first node's report address")
    n.add_argument("--token-file", metavar="FILE",
                   help="a file whose first line is the run's secret (default: $OPENRECIPES_JOIN_TOKEN, which the "
                        "first node's join command sets; the secret is never taken on the command line)")
    n.add_argument("--token", help=argparse.SUPPRESS)  # refused with a message saying how the token travels
    n.add_argument("--workdir", default=".", help="folder the run script runs in (default: .)")
    n.add_argument("--root", help="registry root (default: found above the recipe)")
    n.set_defaults(func=lambda a: __import__("runner.launchers.torchrun", fromlist=["x"]).node_main(a))
    c = sub.add_parser(
        "convergence", help="compare a candidate run's loss curve with a reference run's",
        description=__import__("runner.convergence", fromlist=["x"]).__doc__,
        epilog=CONVERGENCE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    c.add_argument("candidate", help="candidate run: a training log or an .evidence.json file")
    c.add_argument("reference", help="reference run: a training log or an .evidence.json file")
    c.add_argument("--steps", type=int, help="compare the first N steps only")
    c.add_argument("--write", metavar="RECIPE", help="write correctness.convergence of RECIPE from the comparison")
    c.add_argument("--dry-run", action="store_true", help="with --write: print the diff, write nothing")
    c.add_argument("--note", help="with --write: correctness.convergence.note, what the two arms were")
    c.add_argument("--json", action="store_true", help="print the comparison as JSON on stdout")
    c.add_argument("--floor", metavar="LOSS", help="hold each arm's final loss within 10%% of this floor: a loss in "
                   "nats, or `markov` (the learnable stream's ln 8)")
    c.add_argument("--reference-name", metavar="TEXT", help="with --write: what the reference arm is (framework, "
                   "version, options), written as convergence.reference")
    c.add_argument("--implementation", choices=["other", "same"], help="with --write: whether the reference arm is "
                   "another implementation (another framework) or the same framework with its speed features off")
    c.add_argument("--also", action="store_true", help="with --write: add the check to correctness.convergence_also "
                   "(a further line beside correctness.convergence) instead of replacing correctness.convergence")
    c.set_defaults(func=convergence)
    # The bundled engine's `train`: its parser needs nothing of the runner extra (train itself says when torch or
    # megatron-core is missing), so a failing import here is a bug and fails with its traceback.
    from runner.engine.cli import add_parser as add_train

    add_train(sub)
    return top


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        from runner.commit import WRITTEN

        done = ", ".join(str(p) for p in WRITTEN)
        _err(f"interrupted after writing {done} (each file whole and checked)" if WRITTEN else
             "interrupted; nothing written")
        return EXIT_INTERRUPTED
    except OSError as exc:  # before any write: the writes report their own failures with what was written
        _err(f"{exc.filename or ''}: {exc.strerror or exc}; nothing written")
        return EXIT_WRITE
