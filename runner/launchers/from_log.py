"""Runs made elsewhere: their logs (--from-log), one log a run, parsed and turned into the recipe's figures."""

from __future__ import annotations

from pathlib import Path

from runner.records import Measured, Outcome, Stop, Target


def distinct_logs(paths: list[Path]) -> None:
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


def measure(target: Target, out: object = None) -> Measured:
    """Each --from-log log one run, parsed in the recipe's format."""
    from runner.launchers.common import end_of_runs, figures_of
    from runner.logs import parse_file, parse_run, tail

    options = target.options
    results, nccl = [], None
    distinct_logs(options.from_log)
    for name in options.from_log:
        log = parse_file(name, target.fmt) if options.log_run is None else parse_run(name, target.fmt, options.log_run)
        nccl = nccl or log.nccl_version
        results.append(figures_of(target, log))
    last = results[-1].log  # with --log-run N, the tail of run N's own lines, not of the log's last run
    lines = tail(options.from_log[-1]) if options.log_run is None else tail(options.from_log[-1], first=last.first_line,
                                                                            last=last.lines)
    return Measured(end_of_runs(target, results), "from-log", None, nccl, lines, stated_stack=last.stated_stack)


