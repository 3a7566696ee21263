"""The test suite's wall time and where its CPU goes, on this machine.

    .venv/bin/python benchmarks/suite_cpu.py [PYTEST ARGS...]      (default: -q -n auto --dist loadfile)

Runs pytest once (a real subprocess, from the repository root) while sampling the machine's CPU from /proc/stat every
second; benchmarks/suite_cpu_plugin.py records each test file's own CPU and its waited-for children's. Prints the wall
time, the machine's busy core-seconds and utilisation over the run (per 30 s too: where cores stood idle), the CPU the
test files account for and the rest (Chromium's processes, pytest's start-up, daemons, the kernel), and the files
with the most CPU.
A suite bound by CPU cannot end sooner than its busy core-seconds over the cores: 6 minutes of 2 cores is 720.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
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


def run(args: list[str]) -> tuple[int, float, Sampler, list[dict]]:
    with tempfile.TemporaryDirectory(prefix="suite-cpu-") as folder:
        env = dict(os.environ, SUITE_CPU_DIR=folder,
                   PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "benchmarks"), os.environ.get("PYTHONPATH")])))
        sampler = Sampler()
        thread = threading.Thread(target=sampler.run, daemon=True)
        thread.start()
        started = time.time()
        done = subprocess.run([sys.executable, "-m", "pytest", "-p", "suite_cpu_plugin", *args], cwd=ROOT, env=env)
        wall = time.time() - started
        sampler.stop.set()
        thread.join()
        files = [json.loads(line) for path in Path(folder).glob("*.jsonl")
                 for line in path.read_text(encoding="utf-8").splitlines()]
    return done.returncode, wall, sampler, files


def report(returncode: int, wall: float, sampler: Sampler, files: list[dict], cores: int) -> None:
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


def main() -> int:
    args = sys.argv[1:] or DEFAULT_ARGS
    returncode, wall, sampler, files = run(args)
    report(returncode, wall, sampler, files, os.cpu_count() or 1)
    return returncode


if __name__ == "__main__":
    sys.exit(main())
