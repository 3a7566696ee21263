"""``python -m runner``: re-measure a recipe and write its figures back; compare two loss curves."""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any, TextIO

EXIT_OK = 0
EXIT_FAIL = 1  # convergence: the check ran and failed
EXIT_USAGE = 2  # bad arguments or an invalid recipe / catalog
EXIT_PREFLIGHT = 3
EXIT_RUN_FAILED = 4  # the run crashed, exited non-zero or passed --timeout
EXIT_BAD_LOG = 5  # too few steps, NaN loss, missing window, no step lines
EXIT_CHANGE = 6  # tokens/s moved outside the tolerance and --accept-change was not given
EXIT_LOCKED = 7  # another remeasure holds the recipe's lock, or the recipe changed while it was measured
EXIT_DECLINED = 8  # not confirmed at the prompt (or no terminal to ask and no --yes)
EXIT_WRITE = 9  # the recipe or evidence file could not be written (disk, permissions)
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
  {EXIT_WRITE}    the recipe or its evidence file could not be written (disk full, permissions)
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C): the run's process group was ended, nothing written
"""

REMEASURE_HELP = """Re-measure a recipe: run it (or read the logs of a run made elsewhere), compute its figures with the
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
  4. the log is parsed for the recipe's framework (Megatron-LM/Bridge, miles/slime, or the bundled engine); a
     crash, a NaN loss, too few steps or a missing window step refuses, writing nothing.
  5. the new tokens/s is compared with the recorded one: beyond the larger of 5% and 3x the recorded step-time
     CV it is reported as a regression or improvement and not written unless --accept-change.
  6. `result` is updated (tokens/s, $/1M, MFU, CV, date, steps, window tokens, runs, GPU-hours) and
     <name>.evidence.json written beside the recipe: per-step times and losses, the environment, the command,
     the log's tail, and every earlier result (history). `python -m generator check` recomputes the result
     from it. Commit both files.

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


def _info(out: TextIO, message: str) -> None:
    print(message, file=out)


def find_root(path: Path) -> Path:
    """The registry root: the nearest folder above the recipe with catalog/gpus.yaml, else this checkout."""
    for parent in path.resolve().parents:
        if (parent / "catalog" / "gpus.yaml").is_file():
            return parent
    return Path(__file__).resolve().parent.parent


def _gpus_from_env(value: str) -> Any:
    from runner.preflight import Gpus

    names: list[str] = []
    for part in value.split(","):
        part = part.strip()
        if not part:
            continue
        count, sep, name = part.partition("x")
        if sep and count.strip().isdigit():
            names += [name.strip()] * int(count)
        else:
            names.append(part)
    return Gpus(names, "OPENRECIPES_GPUS")


def _yaml_str(value: str) -> str:
    plain_ok = value and value[0] not in "!&*[]{}|>'\"%@`#,?:-" and ": " not in value and " #" not in value
    return value if plain_ok and value.strip() == value else json.dumps(value)


def _replace_top_block(text: str, key: str, replacement: str) -> str:
    """The top-level `key:` block (its line and every deeper or blank line after it) replaced by `replacement`."""
    lines = text.splitlines(keepends=True)
    block = _top_block(lines, key, keep_trailing_blanks=True)
    if block is None:
        return text
    start, end = block
    return "".join(lines[:start]) + replacement + "".join(lines[end:])


def _as_new_text(text: str, loaded: Any, catalog: Any, gpu_type: str, gpu_name: str | None, old_path: Path,
                 new_path: Path) -> str:
    """The recipe rewritten for the GPUs present, status measured: its correctness evidence stays behind (it was
    gathered on the original's hardware) until the tests or the convergence check are run on these GPUs."""
    from runner.writeback import splice

    recipe = loaded.recipe
    spec = catalog.gpus[gpu_type]
    per_node = recipe.gpu.per_node or recipe.gpu.count
    matches = [n for n, inst in catalog.instances.items() if inst.gpu_type == gpu_type and inst.gpu_count == per_node]
    changes: dict[tuple[str, ...], str] = {
        ("gpu", "type"): _yaml_str(gpu_type),
        ("gpu", "memory_gb"): str(spec.memory_gb),
        ("status",): "measured",
    }
    if "instance" in loaded.data["gpu"]:
        changes[("gpu", "instance")] = _yaml_str(matches[0]) if len(matches) == 1 else "null"
    if gpu_name and "gpu_name" in loaded.data["stack"]:
        changes[("stack", "gpu_name")] = _yaml_str(gpu_name)
    out = splice(text, changes)
    if "correctness" in loaded.data:
        out = _replace_top_block(out, "correctness", (
            f"{AS_NEW_REMINDER[0]}{loaded.id} ({recipe.gpu.type}) is not carried over: run its component\n"
            f"{AS_NEW_REMINDER[1]}{gpu_type} to make this recipe verified.\n"
            "correctness: null\n"))
    first, _, rest = out.partition("\n")
    for old in (str(old_path), old_path.as_posix()):
        if first.startswith("#") and old.split("recipes/", 1)[-1] in first:
            first = "# " + "recipes/" + new_path.as_posix().split("recipes/", 1)[-1]
            break
    return first + "\n" + rest


def remeasure(args: argparse.Namespace) -> int:
    from generator import figures
    from generator.catalog import Catalog
    from generator.load import load_recipe
    from generator.problems import InputError
    from runner import measure
    from runner.launch import Interrupted, RunFailed, run_script, shell_quote_env
    from runner.logs import LogError, format_for, parse_file, tail
    from runner.preflight import Refusal, check_entry, check_env, check_gpus, detect_gpus, gpu_type
    from runner.writeback import LockHeld, WriteError, recipe_lock

    out = sys.stderr if args.json else sys.stdout
    path = Path(args.recipe)
    try:
        loaded = load_recipe(path)
    except InputError as exc:
        for p in exc.problems:
            _err(str(p))
        return EXIT_USAGE
    recipe = loaded.recipe
    root = Path(args.root).resolve() if args.root else find_root(path)
    catalog = Catalog.load(root)
    if catalog.problems:
        for p in catalog.problems:
            _err(str(p))
        return EXIT_USAGE
    if args.from_log and args.runs is not None and args.runs != len(args.from_log):
        _err(f"--runs {args.runs} but {len(args.from_log)} logs given with --from-log (one log is one run)")
        return EXIT_USAGE
    runs = len(args.from_log) if args.from_log else (args.runs or 1)
    if runs < 1:
        _err("--runs must be at least 1")
        return EXIT_USAGE
    fmt = format_for(recipe.stack.framework)
    text = path.read_text(encoding="utf-8")
    target, target_text, found_gpus = path, text, None

    if recipe.status.value == "reported" and not args.as_new:
        _err(
            f"{path} is a reported recipe: its figures are a publication's, not a measurement to overwrite. Pass "
            "--as-new NAME to write a measured recipe beside it from your run."
        )
        return EXIT_PREFLIGHT

    if not args.from_log:
        env_override = os.environ.get("OPENRECIPES_GPUS")
        found_gpus = _gpus_from_env(env_override) if env_override else detect_gpus()
        try:
            try:
                check_gpus(recipe, catalog, found_gpus, str(path))
            except Refusal:
                types = {gpu_type(n, catalog) for n in found_gpus.names}
                if not args.as_new or len(types) != 1 or None in types or found_gpus.count < min(
                    recipe.gpu.count, recipe.gpu.per_node or recipe.gpu.count
                ):
                    raise
            check_env(recipe, str(path))
            check_entry(recipe, str(path), Path(args.workdir).resolve())
        except Refusal as exc:
            _err(str(exc))
            return EXIT_PREFLIGHT
    if args.as_new:
        new_type = gpu_type(found_gpus.names[0], catalog) if found_gpus and found_gpus.names else recipe.gpu.type
        model_dir = path.resolve().parent.parent
        target = model_dir / new_type.lower() / f"{args.as_new.removesuffix('.yaml')}.yaml"
        if target.exists():
            _err(f"--as-new: {target} exists already; choose another NAME")
            return EXIT_USAGE
        try:
            name = found_gpus.names[0] if found_gpus and found_gpus.names else None
            target_text = _as_new_text(text, loaded, catalog, new_type, name, path, target)
        except WriteError as exc:
            _err(f"--as-new: {exc}")
            return EXIT_USAGE
        from generator.models import Status

        spec = catalog.gpus[new_type]
        recipe = recipe.model_copy(update={
            "gpu": recipe.gpu.model_copy(update={"type": new_type, "memory_gb": spec.memory_gb, "instance": _instance_of(
                target_text)}),
            "status": Status.measured,
        })

    runs_dir = root / ".openrecipes-runs"
    held = contextlib.ExitStack()
    try:
        held.enter_context(recipe_lock(runs_dir, target))
    except LockHeld as exc:
        _err(str(exc))
        return EXIT_LOCKED
    with held:  # the lock is released on every way out
        try:
            results = []
            command = None
            source = "from-log" if args.from_log else "launch"
            nccl = None
            if args.from_log:
                for log_name in args.from_log:
                    log = parse_file(Path(log_name), fmt)
                    nccl = nccl or log.nccl_version
                    results.append(measure.run_figures(recipe, catalog, log))
                last = max((r.log.last_time for r in results if r.log.last_time), default=None)
                measured = last.date() if last else dt.datetime.now(dt.UTC).date()
                log_tail = tail(Path(args.from_log[-1]))
            else:
                workdir = Path(args.workdir).resolve()
                stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
                run_dir = runs_dir / loaded.id / stamp
                run_dir.mkdir(parents=True, exist_ok=True)
                script = run_dir / "run.sh"
                script.write_text(recipe.run, encoding="utf-8")
                env = dict(os.environ) | dict(recipe.env)
                command = f"cd {shlex.quote(str(workdir))} && {shell_quote_env(dict(recipe.env))} bash {shlex.quote(str(script))}"
                _info(out, f"recipe: {loaded.id}\nwill run ({runs} run{'s' if runs > 1 else ''}):\n  {command}\nscript:")
                for line in recipe.run.splitlines():
                    _info(out, f"  | {line}")
                if not args.yes:
                    if not sys.stdin.isatty():
                        _err("no terminal to confirm the launch on: pass --yes to run without asking")
                        return EXIT_DECLINED
                    answer = input("Launch? [y/N] ").strip().lower()
                    if answer not in ("y", "yes"):
                        _err("not launched")
                        return EXIT_DECLINED
                wl = recipe.workload
                log_path = run_dir / "run1.log"
                for i in range(runs):
                    log_path = run_dir / f"run{i + 1}.log"
                    _info(out, f"run {i + 1}/{runs}: log {log_path}")
                    launched = run_script(
                        script, env, workdir, log_path, fmt or "openrecipes", recipe.result.steps_per_run,
                        figures.window_tokens((0, 0), wl.global_batch, wl.row_tokens), recipe.gpu.count, args.timeout,
                        out, progress=not args.json,
                    )
                    log = launched.parsed if fmt else parse_file(log_path, None)
                    if not log.steps:
                        raise LogError(f"{log_path}: no {fmt or 'known-format'} training step lines in the run's output")
                    nccl = nccl or log.nccl_version
                    results.append(measure.run_figures(recipe, catalog, log, launched.wall_seconds))
                measured = dt.datetime.now(dt.UTC).date()
                log_tail = tail(log_path)
            m = measure.combine(recipe, results, measured)
        except LogError as exc:
            _err(f"{exc}\nnothing written")
            return EXIT_BAD_LOG
        except RunFailed as exc:
            _err(str(exc))
            return EXIT_RUN_FAILED
        except Interrupted as exc:
            _err(str(exc))
            return EXIT_INTERRUPTED
        except KeyboardInterrupt:
            _err("interrupted; nothing written")
            return EXIT_INTERRUPTED
        except OSError as exc:
            _err(f"{exc.filename or ''}: {exc.strerror or exc}")
            return EXIT_WRITE
        return _finish(args, out, loaded, recipe, m, target, target_text, found_gpus, nccl, command, source,
                       log_tail)


def _instance_of(text: str) -> str | None:
    from runner.writeback import load_rt

    value = load_rt(text)["gpu"].get("instance")
    return None if value is None else str(value)


GPU_HOURS_NOTE = {
    "launch": "GPUs x the median run's wall time under the runner, launch to exit (start-up included)",
    "from-log": "GPUs x the median run's span from its log's first to its last timestamp (start-up before the first "
    "timestamped line not counted)",
}


def _display(path: Path) -> str:
    """The path relative to the working folder where it lies below it (diff headers, messages)."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _finish(args: argparse.Namespace, out: TextIO, loaded: Any, recipe: Any, m: Any, target: Path, target_text: str,
            found_gpus: Any, nccl: str | None, command: str | None, source: str, log_tail: list[str]) -> int:
    from generator import evidence
    from generator.load import recipe_id as id_of
    from generator.registry import atomic_write
    from runner import environment, measure
    from runner.writeback import WriteError, result_changes, rounded, splice, unified_diff

    root = Path(args.root).resolve() if args.root else find_root(target)
    recipe_id = id_of(target, root / "recipes") if args.as_new else loaded.id
    fields = m.result_fields()
    written = {k: rounded(k, v) for k, v in fields.items()}
    if m.gpu_hours is None:
        _info(out, "gpu_hours: the log has no timestamps to time the run by; gpu_hours left as it was")
    for r in m.runs:
        for w in r.warnings:
            _info(out, f"warning: {w}")
    if source == "launch":
        env = environment.capture(found_gpus.names if found_gpus else None, found_gpus.driver if found_gpus else None, nccl)
    else:
        env = {"captured": "from the log (the run was made elsewhere)", "nccl": nccl}
    diffs = environment.differences(recipe, env) if source == "launch" else []
    for d in diffs:
        _info(out, f"stack differs from the recipe: {d}")
    g = measure.gate(recipe, m.median.tokens_per_s_per_gpu)
    gate_text = "new recipe (--as-new): no recorded figure to compare" if args.as_new else g.describe()
    _info(out, gate_text)
    refused = bool(g.outside and not args.accept_change and not args.as_new)
    report = {
        "recipe": recipe_id,
        "tokens_per_s_per_gpu": m.median.tokens_per_s_per_gpu,
        "usd_per_million_tokens": m.median.usd_per_million_tokens,
        "mfu": m.median.mfu,
        "step_time_cv_percent": m.median.step_time_cv_percent,
        "window": list(m.median.window),
        "window_tokens": m.median.window_tokens,
        "steps": m.median.steps,
        "runs": len(m.runs),
        "runs_cv_percent": m.runs_cv_percent,
        "runs_tokens_per_s_per_gpu": [r.tokens_per_s_per_gpu for r in m.runs],
        "gpu_hours": m.gpu_hours,
        "measured": m.measured.isoformat(),
        "written": written | {"measured": m.measured.isoformat()},
        "recorded_tokens_per_s_per_gpu": g.recorded,
        "change_percent": g.change_percent,
        "tolerance_percent": g.tolerance_percent,
        "gate": "new" if args.as_new else ("outside" if g.outside else "within"),
        "stack_differences": diffs,
        "source": source,
        "dry_run": bool(args.dry_run),
        "wrote": False,
    }
    changes = result_changes(fields)
    if m.gpu_hours is not None:  # the note says what the new figure counts; the old note was about the old one
        changes[("result", "gpu_hours_note")] = _yaml_str(GPU_HOURS_NOTE[source])
    try:
        new_text = splice(target_text, changes)
    except WriteError as exc:
        _err(f"{target}: {exc}")
        return EXIT_USAGE
    name = _display(target)
    old_text = target_text if args.as_new is None else ""
    if args.dry_run:
        print(unified_diff(old_text, new_text, name) or "(no change)", file=out)
        print(f"(dry run: nothing written; {evidence.path_for(target).name} would be written too)", file=out)
    elif refused:
        _err(f"not written: {gate_text}. If the change is real, run again with --accept-change.")
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        # Under the lock no other remeasure writes this file, but a hand edit may have: never overwrite it.
        now = target.read_text(encoding="utf-8") if target.exists() else None
        if now != (None if args.as_new else target_text):
            _err(f"{target} changed while it was being measured (edited meanwhile?); nothing written. Run again.")
            return EXIT_LOCKED
        try:
            found = evidence.load(target) if not args.as_new else None
        except evidence.EvidenceError:
            found = None
        existing = found.data if found else None
        data = evidence.build(
            recipe, recipe_id, written | {"measured": m.measured}, m, source, command, env, diffs, log_tail, existing
        )
        atomic_write(evidence.path_for(target), evidence.dumps(data))
        atomic_write(target, new_text)
        report["wrote"] = True
        print(unified_diff(old_text, new_text, name) or f"{name}: figures unchanged at the stated precision", file=out)
        print(f"wrote {name} and {evidence.path_for(target).name}", file=out)
        if args.as_new:
            print(f"{name} is a new recipe: review its author, notes and correctness before committing it", file=out)
    if args.json:
        print(json.dumps(report, indent=1, default=str))
    return EXIT_CHANGE if refused else EXIT_OK


def convergence(args: argparse.Namespace) -> int:
    from runner.convergence import compare, losses
    from runner.logs import LogError

    try:
        cand = losses(Path(args.candidate))
        ref = losses(Path(args.reference))
        result = compare(cand, ref, args.steps)
    except LogError as exc:
        _err(str(exc))
        return EXIT_BAD_LOG
    out = sys.stderr if args.json else sys.stdout
    verdict = "pass" if result.passed else "fail: " + "; ".join(result.reasons)
    print(
        f"{result.steps} steps: correlation {result.correlation:.5f}, {result.pointwise_failures} pointwise failures, "
        f"final loss {result.final_loss_candidate:.5f} against {result.final_loss_reference:.5f} "
        f"(difference {result.final_loss_difference:.4f}, {result.final_loss_relative * 100:.2f}%): {verdict}",
        file=out,
    )
    if args.write:
        arms = f"candidate arm: {Path(args.candidate).name}; reference arm: {Path(args.reference).name}"
        code = _write_convergence(Path(args.write), result, args.dry_run, out, args.note, arms)
        if code:
            return code
    if args.json:
        print(json.dumps(result.as_dict(), indent=1))
    return EXIT_OK if result.passed else EXIT_FAIL


def _top_block(lines: list[str], key: str, keep_trailing_blanks: bool = False) -> tuple[int, int] | None:
    """[start, end) of the top-level `key:` block: its line and the deeper-indented lines after it
    (and the blank lines after those, with keep_trailing_blanks)."""
    start = next((i for i, ln in enumerate(lines) if ln.startswith(f"{key}:")), None)
    if start is None:
        return None
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or lines[end][:1] in (" ", "\t", "-")):
        end += 1
    while not keep_trailing_blanks and end > start + 1 and not lines[end - 1].strip():
        end -= 1  # blank lines before the next key belong to neither
    return start, end


def _convergence_lines(result: Any, note: str | None, indent: int) -> list[str]:
    pad = " " * indent
    out = [f"{pad}convergence:\n"] + [f"{pad}  {k}: {v}\n" for k, v in _convergence_values(result).items()]
    return out + ([f"{pad}  note: {_yaml_str(note)}\n"] if note else [])


def _convergence_values(result: Any) -> dict[str, str]:
    return {
        "steps": str(result.steps),
        "result": "pass" if result.passed else "fail",
        "correlation": f"{result.correlation:.5f}",
        "final_loss_difference": f"{result.final_loss_difference:.4f}",
        "pointwise_failures": str(result.pointwise_failures),
    }


AS_NEW_REMINDER = ("# The correctness evidence of ", "# tests or `python -m runner convergence --write` on ")


def _convergence_text(text: str, data: dict[str, Any], result: Any, note: str | None,
                      arms: str | None = None) -> tuple[str, list[str]]:
    """The recipe with correctness.convergence written (updated, inserted, or a new correctness block); the note
    is replaced only when given, and a new check is noted with its two arms."""
    from runner.writeback import splice

    said: list[str] = []
    corr = data.get("correctness")
    passed = bool(result.passed)
    changes: dict[tuple[str, ...], str] = {}
    if isinstance(corr, dict) and isinstance(corr.get("convergence"), dict):
        base = ("correctness", "convergence")
        changes = {(*base, k): v for k, v in _convergence_values(result).items()}
        if note:
            changes[(*base, "note")] = _yaml_str(note)
    else:
        lines = text.splitlines(keepends=True)
        block = _top_block(lines, "correctness")
        if isinstance(corr, dict):  # a correctness block without a convergence check: add one at its end
            assert block is not None
            start, end = block
            child = next((ln for ln in lines[start + 1 : end] if ln.strip() and not ln.lstrip().startswith("#")), "  x")
            indent = len(child) - len(child.lstrip(" "))
            at = next((i for i in range(start + 1, end) if lines[i].startswith(" " * indent + "convergence:")), None)
            if at is not None:  # `convergence: null`
                lines[at : at + 1] = _convergence_lines(result, note or arms, indent)
            else:
                lines[end:end] = _convergence_lines(result, note or arms, indent)
            said.append("correctness.convergence added")
        else:  # no correctness evidence yet: this check is all of it
            verdict = "pass" if passed else "fail"
            new_block = [f"correctness:\n  result: {verdict}\n", *_convergence_lines(result, note or arms, 2)]
            if block is not None:
                start, end = block
                while start > 0 and lines[start - 1].startswith(AS_NEW_REMINDER):
                    start -= 1  # --as-new's reminder that the original's evidence stayed behind
                lines[start:end] = new_block
            else:
                result_block = _top_block(lines, "result")
                at = result_block[1] if result_block else len(lines)
                lines[at:at] = new_block
            said.append(f"correctness written with result: {'pass' if passed else 'fail'}")
            if passed and data.get("status") == "measured":
                changes[("status",)] = "verified"
                said.append("status measured -> verified (a passing convergence check is correctness evidence)")
        text = "".join(lines)
    if not passed and isinstance(corr, dict) and corr.get("result") == "pass":
        changes[("correctness", "result")] = "fail"
        said.append("correctness.result pass -> fail (its convergence check fails)")
        if data.get("status") == "verified":
            changes[("status",)] = "measured"
            said.append("status verified -> measured")
    return (splice(text, changes) if changes else text), said


def _write_convergence(path: Path, result: Any, dry_run: bool, out: TextIO, note: str | None = None,
                       arms: str | None = None) -> int:
    from generator.catalog import Catalog
    from generator.check import check_recipe
    from generator.load import load_recipe
    from generator.problems import InputError
    from generator.registry import atomic_write
    from runner.writeback import LockHeld, WriteError, recipe_lock, unified_diff

    try:
        loaded = load_recipe(path)
    except InputError as exc:
        for p in exc.problems:
            _err(str(p))
        return EXIT_USAGE
    root = find_root(path)
    try:
        with recipe_lock(root / ".openrecipes-runs", path):
            text = path.read_text(encoding="utf-8")
            try:
                new, said = _convergence_text(text, loaded.data, result, note, arms)
            except WriteError as exc:
                _err(f"{path}: {exc}")
                return EXIT_USAGE
            # The written recipe must load and check as cleanly as before (same rules as generator check).
            probe = path.with_name(f".{path.stem}.convergence-probe.yaml")
            try:
                probe.write_text(new, encoding="utf-8")
                catalog = Catalog.load(root)
                before = {p.message for p in check_recipe(loaded, catalog, dt.date.today())}
                after = check_recipe(load_recipe(probe, loaded.display, root / "recipes"), catalog, dt.date.today())
            except InputError as exc:
                for p in exc.problems:
                    _err(f"internal error, nothing written: {p}")
                return EXIT_USAGE
            finally:
                probe.unlink(missing_ok=True)
            fresh = [p for p in after if p.message not in before]
            if fresh:
                for p in fresh:
                    _err(f"not written: the recipe would not check: {p}")
                return EXIT_USAGE
            print(unified_diff(text, new, _display(path)) or "(no change)", file=out)
            for line in said:
                print(line, file=out)
            if not dry_run:
                atomic_write(path, new)
    except LockHeld as exc:
        _err(str(exc))
        return EXIT_LOCKED
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="python -m runner",
        description="OpenRecipes runner: re-measure a recipe and write its figures back; compare loss curves.",
    )
    sub = top.add_subparsers(dest="command", required=True)
    r = sub.add_parser(
        "remeasure", help="run a recipe (or read a run's logs) and write its figures back",
        description=REMEASURE_HELP, epilog=EXIT_TABLE, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    r.add_argument("recipe", help="the recipe YAML, e.g. recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml")
    r.add_argument("--runs", type=int, metavar="N",
                   help="run N times; the median run's figures are written, the CV across runs reported")
    r.add_argument("--dry-run", action="store_true", help="print the diff that would be applied; write nothing")
    r.add_argument("--yes", "-y", action="store_true", help="launch without asking for confirmation")
    r.add_argument("--from-log", nargs="+", metavar="LOG",
                   help="logs of runs made elsewhere (one per run): no hardware check, no launch")
    r.add_argument("--json", action="store_true", help="print the figures as JSON on stdout (messages go to stderr)")
    r.add_argument("--accept-change", action="store_true",
                   help="write even when tokens/s moved beyond the tolerance (a real regression or improvement)")
    r.add_argument("--timeout", type=float, metavar="S", help="end the run's whole process group after S seconds")
    r.add_argument("--as-new", metavar="NAME",
                   help="write a new recipe NAME for the GPUs present (status measured) instead of this one")
    r.add_argument("--workdir", default=".", help="folder the run script runs in (the framework checkout; default: .)")
    r.add_argument("--root", help="registry root holding catalog/ (default: found above the recipe)")
    r.set_defaults(func=remeasure)
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
    c.set_defaults(func=convergence)
    try:  # the bundled engine's `train` (runner/engine, its own module; light to import)
        from runner.engine.cli import add_parser as add_train
    except ImportError:
        pass
    else:
        add_train(sub)
    return top


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        _err("interrupted; nothing written")
        return EXIT_INTERRUPTED
    except OSError as exc:
        _err(f"{exc.filename or ''}: {exc.strerror or exc}")
        return EXIT_WRITE
