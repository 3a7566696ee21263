"""Logs that show part of a run (an excerpt, a torchtitan log with log_freq > 1) are recorded as the log states
them (one evidence entry per log line, its interval and average, the first and last step shown), `check`
recomputes the figures from that record alone, and such a run is written as partial, never verified."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from runner_support import ROOT, runner
from suitehelpers import generator_cli

from generator.load import load_recipe
from generator.registry import load_catalog
from generator.site import views
from generator.site.pages import recipe as recipe_page
from runner import cli

LOGS = Path(__file__).resolve().parent / "real_logs"
MEASURED = ROOT / "recipes/llama-3.2-1b/h200/engine-unfused-4k.yaml"


def _set(text: str, key: str, value: str, indent: str = "  ") -> str:
    text, n = re.subn(rf"(?m)^{indent}{key}:.*$", f"{indent}{key}: {value}", text, count=1)
    assert n == 1, key
    return text


def torchtitan_registry(tmp: Path) -> Path:
    """A measured recipe (the committed 1B one) restated as the run behind torchtitan PR 1287's log: torchtitan,
    8 GPUs, global batch 8 of 8,192 tokens, window [200, 249] of a 250-step run."""
    shutil.copytree(ROOT / "catalog", tmp / "catalog")
    path = tmp / "recipes/llama-3.2-1b/h200/titan-excerpt.yaml"
    path.parent.mkdir(parents=True)
    text = MEASURED.read_text(encoding="utf-8").replace("engine-unfused-4k", "titan-excerpt")
    for key, value in (("framework", "torchtitan 0.2.2"), ("count", "8"), ("per_node", "8"), ("row_tokens", "8192"),
                       ("dp", "8"), ("label", "TP1 PP1 DP8"), ("steps_per_run", "250"), ("window", "[200, 249]"),
                       ("window_tokens", "3276800"), ("instance", "null")):
        text = _set(text, key, value)
    text = re.sub(r"(?m)^  usd_per_million_tokens:.*\n", "", text)
    path.write_text(text, encoding="utf-8")
    return path


def check(root: Path) -> subprocess.CompletedProcess[str]:
    return generator_cli("check", "--no-cache", str(root / "recipes"), cwd=root, env=dict(os.environ))


def test_interval_excerpt_prints_figures_and_decision_then_writes_as_partial(tmp_path: Path) -> None:
    recipe = torchtitan_registry(tmp_path)
    log = str(LOGS / "torchtitan_interval10.log")
    # Without --accept-partial: refused, but --json prints the figures and the decision.
    dry = runner("remeasure", str(recipe), "--from-log", log, "--dry-run", "--json")
    assert dry.returncode == cli.EXIT_BAD_LOG, dry.stderr
    report = json.loads(dry.stdout)
    # 22:32:00.846 - 22:30:50.322 = 70.524 s over steps 200-249; 50 x 8 x 8192 / 70.524 / 8 = 5,807.95
    assert report["tokens_per_s_per_gpu"] == pytest.approx(5807.95, abs=0.01)
    assert report["shown"] == [199, 249] and report["interval"] == 10
    assert report["partial"].startswith("an excerpt")
    assert report["decision"].startswith("refused: not written: a partial run") and not report["wrote"]
    assert recipe.with_name("titan-excerpt.evidence.json").exists() is False

    wrote = runner("remeasure", str(recipe), "--from-log", log, "--accept-partial", "--accept-change", "--json")
    assert wrote.returncode == cli.EXIT_OK, wrote.stderr
    assert json.loads(wrote.stdout)["decision"] == "written"
    text = recipe.read_text(encoding="utf-8")
    assert re.search(r"(?m)^  partial: \"?an excerpt: .*shows steps 199-249", text)
    assert "tokens_per_s_per_gpu: 5808.0" in text and "steps_per_run: 250" in text
    data = json.loads(recipe.with_name("titan-excerpt.evidence.json").read_text(encoding="utf-8"))
    # One entry per log line, as the log states it: five lines of ten steps each, no step before 200 invented.
    assert [(e.get("first"), e["step"]) for e in data["steps"]] == [(200, 209), (210, 219), (220, 229), (230, 239),
                                                                    (240, 249)]
    assert data["steps"][0]["time_s"] == pytest.approx(1.4648) and data["shown"] == [199, 249]
    assert data["partial"].startswith("an excerpt") and data["runs"][0]["wall_seconds"] is None
    done = check(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    # The card's result rows say the run is partial and why.
    loaded = load_recipe(recipe, "recipes/llama-3.2-1b/h200/titan-excerpt.yaml", tmp_path / "recipes")
    catalog = load_catalog(tmp_path)
    rows = dict(recipe_page.result_rows(loaded, views.recipe_figures(loaded, catalog), catalog))
    assert rows["Partial run"].startswith("an excerpt: torchtitan_interval10.log shows steps 199-249")


def test_check_recomputes_from_the_lines_and_refuses_what_they_lack(tmp_path: Path) -> None:
    recipe = torchtitan_registry(tmp_path)
    log = str(LOGS / "torchtitan_interval10.log")
    assert runner("remeasure", str(recipe), "--from-log", log, "--accept-partial", "--accept-change").returncode == 0
    sidecar = recipe.with_name("titan-excerpt.evidence.json")
    data = json.loads(sidecar.read_text(encoding="utf-8"))
    data["steps"] = data["steps"][1:]  # the line of steps 200-209 gone: the window cannot be recomputed
    sidecar.write_text(json.dumps(data), encoding="utf-8")
    done = check(tmp_path)
    assert done.returncode == 1
    assert "the window [200, 249] needs steps the record does not show (first missing: 200, 10 in all)" in done.stdout


def test_partial_run_is_never_verified(tmp_path: Path) -> None:
    recipe = torchtitan_registry(tmp_path)
    assert runner("remeasure", str(recipe), "--from-log", str(LOGS / "torchtitan_interval10.log"),
                  "--accept-partial", "--accept-change").returncode == 0
    text = recipe.read_text(encoding="utf-8").replace("status: measured", "status: verified")
    recipe.write_text(text.replace("  result: partial", "  result: pass"), encoding="utf-8")
    done = check(tmp_path)
    assert "a verified recipe cannot rest on a partial run (result.partial)" in done.stdout
    # A recipe stating partial against a sidecar that records a complete run (or the other way round) is refused.
    sidecar = recipe.with_name("titan-excerpt.evidence.json")
    data = json.loads(sidecar.read_text(encoding="utf-8"))
    del data["partial"]
    sidecar.write_text(json.dumps(data), encoding="utf-8")
    assert "result.partial is stated but titan-excerpt.evidence.json records a complete run" in check(tmp_path).stdout
