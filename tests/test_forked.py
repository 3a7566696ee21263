"""tests/forked.py's `python_m` gives what `python -m` in a fresh interpreter gives: the tests that run the runner,
the generator and MkDocs through it rely on that."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.forked import python_m

# A module in the working folder (found only through the working folder on sys.path, as `-m` puts it there) that
# reports what `python -m` sets up, writes to both streams and exits with a status of its own.
PROBE = '''
import os, sys
print("argv", sys.argv[1:], os.path.basename(sys.argv[0]))
print("path0", sys.path[0] == os.getcwd(), "name", __name__, "spec", __spec__.name)
print("env", os.environ.get("PROBE_VALUE"), "HOME" in os.environ)
print("warned", file=sys.stderr)
sys.exit(int(sys.argv[1]))
'''


def _both(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
    (tmp_path / "probe_module.py").write_text(PROBE, encoding="utf-8")
    env = {"PROBE_VALUE": "x y", "PATH": "/usr/bin:/bin"}
    fresh = subprocess.run([sys.executable, "-m", "probe_module", *args], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=60)
    forked = python_m("probe_module", args, env=env, cwd=tmp_path, timeout=60)
    return fresh, forked


def test_python_m_in_a_fork_is_python_m(tmp_path: Path) -> None:
    fresh, forked = _both(tmp_path, "3", "--flag")
    assert fresh.returncode == 3 and fresh.stderr == "warned\n", fresh
    assert fresh.stdout == ("argv ['3', '--flag'] probe_module.py\npath0 True name __main__ spec probe_module\n"
                            "env x y False\n"), fresh.stdout
    assert (forked.returncode, forked.stdout, forked.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr)
    assert forked.args == [sys.executable, "-m", "probe_module", "3", "--flag"]


def test_an_uncaught_exception_is_exit_1_with_its_traceback(tmp_path: Path) -> None:
    fresh, forked = _both(tmp_path, "not a number")
    assert fresh.returncode == forked.returncode == 1
    for done in (fresh, forked):
        assert done.stderr.startswith("warned\nTraceback (most recent call last):"), done.stderr
        assert done.stderr.rstrip().endswith("ValueError: invalid literal for int() with base 10: 'not a number'")
