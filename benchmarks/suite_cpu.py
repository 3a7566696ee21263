"""The test suite's wall time and where its CPU goes, on this machine.

    .venv/bin/python benchmarks/suite_cpu.py [--per-process] [PYTEST ARGS...]   (default: -q -n auto --dist loadfile)

Runs pytest once (a real subprocess, from the repository root) while sampling the machine's CPU from /proc/stat every
second; benchmarks/suite_cpu_plugin.py records each test file's own CPU and its waited-for children's. Prints the wall
time, the machine's busy core-seconds and utilisation over the run (per 30 s too: where cores stood idle), the CPU the
test files account for and the rest (Chromium's processes, pytest's start-up, daemons, the kernel), and the files
with the most CPU.
--per-process also logs every Python process of this interpreter (the test workers, mkdocs, the CLIs, training
processes) at its exit, whatever environment a test gave it, and prints their CPU by program: for the run's length a
.pth file in the interpreter's site-packages imports a logging module (both named by the run's process id, written
before pytest starts and removed after it ends, a SIGTERM included; a killed run's are removed by the next run).
Processes that end with os._exit (forked ranks) are not logged: their CPU is their parent's children's. Chromium
is not Python: it shows by command name.
A suite bound by CPU cannot end sooner than its busy core-seconds over the cores: 6 minutes of 2 cores is 720.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from runner.commit import process_alive  # noqa: E402

DEFAULT_ARGS = ["-q", "-n", "auto", "--dist", "loadfile"]
TICK = os.sysconf("SC_CLK_TCK")


def _stat() -> tuple[int, int]:
    """(busy, total) jiffies of all cores: user, nice, system, irq, softirq, steal are busy; idle and iowait not."""
    with open("/proc/stat", encoding="ascii") as f:
        fields = [int(x) for x in f.readline().split()[1:9]]
    busy = fields[0] + fields[1] + fields[2] + fields[5] + fields[6] + fields[7]
    return busy, busy + fields[3] + fields[4]


def _processes() -> dict[int, tuple[str, int]]:
    """Every process's command name and CPU jiffies so far (user + system)."""
    out = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", encoding="utf-8", errors="replace") as f:
                raw = f.read()
        except OSError:
            continue
        name, rest = raw[raw.index("(") + 1:raw.rindex(")")], raw[raw.rindex(")") + 2:].split()
        out[int(entry.name)] = (name, int(rest[11]) + int(rest[12]))
    return out


@dataclass
class Sampler:
    """The machine's busy and total jiffies, and each process's CPU by command name (the last value seen of every
    process alive at a sample: a process that lives under a second between two samples is missed), sampled every
    second on a thread until stopped."""

    samples: list[tuple[float, int, int]] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    before: dict[int, tuple[str, int]] = field(default_factory=dict)
    seen: dict[int, tuple[str, int]] = field(default_factory=dict)

    def run(self) -> None:
        self.before = _processes()
        while True:
            self.samples.append((time.time(), *_stat()))
            self.seen.update(_processes())
            if self.stop.wait(1.0):
                self.samples.append((time.time(), *_stat()))
                return

    def by_command(self) -> dict[str, float]:
        """Core-seconds each command name used during the run (processes that existed before count from then)."""
        out: dict[str, float] = {}
        for pid, (name, jiffies) in self.seen.items():
            earlier = self.before.get(pid)
            start = earlier[1] if earlier is not None and earlier[0] == name else 0  # the same process, not a reused pid
            out[name] = out.get(name, 0.0) + (jiffies - start) / TICK
        return out

    def busy_core_seconds(self) -> float:
        return (self.samples[-1][1] - self.samples[0][1]) / TICK

    def utilisation(self, start: int = 0, end: int | None = None) -> float:
        rows = self.samples[start:end]
        total = rows[-1][2] - rows[0][2]
        return (rows[-1][1] - rows[0][1]) / total if total else 0.0


# --per-process: what the .pth imports. It imports nothing Python has not loaded at start-up, and does nothing once
# the run's folder is gone. Each run's files carry its process id, so that a run of the whole suite under
# --per-process and the suite's own smoke run of it (tests/benchmarks) each log their processes.
PROCESS_LOG = '''"""Written by benchmarks/suite_cpu.py --per-process (process {owner}) for one run and removed after it: each
Python process of this interpreter appends its CPU (own, waited-for children's) and argv to the run's folder at exit."""
import atexit
import os
import sys

FOLDER = {folder!r}


def _log():
    if not os.path.isdir(FOLDER):
        return
    t = os.times()
    fields = [f"{{t.user + t.system:.3f}}", f"{{t.children_user + t.children_system:.3f}}"] + sys.argv[:3]
    line = "\\t".join(f.replace("\\t", " ").replace("\\n", " ") for f in fields) + "\\n"
    try:
        fd = os.open(os.path.join(FOLDER, "processes.tsv"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except OSError:
        pass


atexit.register(_log)
'''
PROCESS_MODULE = "_suite_cpu_processes_"


@dataclass
class ProcessLog:
    """The .pth and module of --per-process in this interpreter's site-packages, for one run."""

    folder: Path
    owner: int = field(default_factory=os.getpid)
    site: Path = field(default_factory=lambda: Path(sysconfig.get_paths()["purelib"]))

    def files(self, owner: int | None = None) -> tuple[Path, Path]:
        name = f"{PROCESS_MODULE}{self.owner if owner is None else owner}"
        return self.site / f"zz{name}.pth", self.site / f"{name}.py"

    def install(self) -> None:
        self.remove_stale()
        pth, module = self.files()
        module.write_text(PROCESS_LOG.format(owner=self.owner, folder=str(self.folder)), encoding="utf-8")
        pth.write_text(f"import {module.stem}\n", encoding="utf-8")

    def remove(self, owner: int | None = None) -> None:
        for path in self.files(owner):
            path.unlink(missing_ok=True)

    def remove_stale(self) -> None:
        """The files of runs whose process is gone (killed before it could remove them)."""
        for module in self.site.glob(f"{PROCESS_MODULE}*.py"):
            owner = module.stem.removeprefix(PROCESS_MODULE)
            if owner.isdigit() and not process_alive(int(owner)):
                self.remove(int(owner))

    def by_program(self) -> dict[str, tuple[int, float]]:
        """(processes, core-seconds of their own) by program."""
        out: dict[str, tuple[int, float]] = {}
        log = self.folder / "processes.tsv"
        for line in log.read_text(encoding="utf-8").splitlines() if log.exists() else []:
            own, _children, *argv = line.split("\t")
            name = program(argv)
            n, cpu = out.get(name, (0, 0.0))
            out[name] = (n + 1, cpu + float(own))
        return out


def program(argv: list[str]) -> str:
    """A process's program as its argv says: `python -m mkdocs build ...` is "mkdocs build", a script's name with its
    subcommand, `python -c` (pytest-xdist's workers, the tests' fork servers) "python -c"."""
    if not argv or argv[0] in ("-c", ""):
        return "python -c"
    script = Path(argv[0])
    name = script.parent.name if script.name == "__main__.py" else script.name
    sub = argv[1] if len(argv) > 1 and argv[1].isidentifier() else ""
    return f"{name} {sub}".strip()


def run(args: list[str], per_process: bool = False) -> tuple[int, float, Sampler, list[dict], dict | None]:
    with tempfile.TemporaryDirectory(prefix="suite-cpu-") as folder:
        env = dict(os.environ, SUITE_CPU_DIR=folder,
                   PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "benchmarks"), os.environ.get("PYTHONPATH")])))
        processes = ProcessLog(Path(folder)) if per_process else None
        sampler = Sampler()
        thread = threading.Thread(target=sampler.run, daemon=True)
        try:
            if processes is not None:
                processes.install()
            thread.start()
            started = time.time()
            done = subprocess.run([sys.executable, "-m", "pytest", "-p", "suite_cpu_plugin", *args], cwd=ROOT, env=env)
            wall = time.time() - started
        finally:
            if processes is not None:
                processes.remove()
            sampler.stop.set()
            if thread.is_alive():
                thread.join()
        files = [json.loads(line) for path in Path(folder).glob("*.jsonl")
                 for line in path.read_text(encoding="utf-8").splitlines()]
        programs = processes.by_program() if processes is not None else None
    return done.returncode, wall, sampler, files, programs


def report(returncode: int, wall: float, sampler: Sampler, files: list[dict], cores: int,
           programs: dict[str, tuple[int, float]] | None = None) -> None:
    busy = sampler.busy_core_seconds()
    attributed = sum(f["own"] + f["children"] for f in files)
    print(f"pytest exit {returncode}; wall {wall:.1f} s ({wall / 60:.1f} min) on {cores} cores")
    print(f"machine: {busy:.0f} busy core-seconds, {100 * sampler.utilisation():.1f}% of all cores over the run; "
          f"at 100% it could not end before {busy / cores:.0f} s")
    print(f"test files (their test process and its waited-for children): {attributed:.0f} core-seconds; the rest "
          f"(Chromium, pytest's start-up and collection, daemons, the kernel): {busy - attributed:.0f}")
    commands = sorted(sampler.by_command().items(), key=lambda kv: -kv[1])
    print("by command name, sampled from /proc every second (core-seconds): " +
          ", ".join(f"{name} {cpu:.0f}" for name, cpu in commands[:12] if cpu >= 0.5))
    windows = [f"{100 * sampler.utilisation(i, i + 31):.0f}" for i in range(0, len(sampler.samples) - 1, 30)]
    print("utilisation per 30 s (%): " + " ".join(windows))
    print("files with the most CPU (own + children, core-seconds; wall s):")
    for f in sorted(files, key=lambda f: -(f["own"] + f["children"]))[:25]:
        print(f"  {f['own'] + f['children']:7.1f}  {f['wall']:6.1f}  {f['file']}")
    if programs is not None:
        total = sum(cpu for _, cpu in programs.values())
        print(f"Python processes by program, each one's own CPU logged at its exit ({sum(n for n, _ in programs.values())} "
              f"processes, {total:.0f} core-seconds; core-seconds, processes, program):")
        for name, (n, cpu) in sorted(programs.items(), key=lambda kv: -kv[1][1])[:20]:
            print(f"  {cpu:7.1f}  {n:5d}  {name}")


def _terminated(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


def main() -> int:
    signal.signal(signal.SIGTERM, _terminated)  # a kill runs the finally blocks: no .pth left behind
    args = sys.argv[1:]
    per_process = "--per-process" in args
    args = [a for a in args if a != "--per-process"] or DEFAULT_ARGS
    returncode, wall, sampler, files, programs = run(args, per_process)
    report(returncode, wall, sampler, files, os.cpu_count() or 1, programs)
    return returncode


if __name__ == "__main__":
    sys.exit(main())
