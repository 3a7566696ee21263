"""No injection through the site's outputs (issue 15, item 6).

- downloads/recipes.csv: a text cell that begins with =, +, -, @, a tab or a carriage return is a formula to a
  spreadsheet; it is written with a leading single quote (OWASP's advice). Figures stay numbers, negative ones too.
- the recipe page's copyable `export` block: every value shell-quoted, a name that is not a shell identifier never
  rendered. The block is run by bash in a sandbox folder with an empty environment: it creates no file and sets
  exactly the recipe's values.
"""

from __future__ import annotations

import copy
import csv
import dataclasses
import html
import io
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from sitehelpers import make_registry, reference_data

from generator.registry import load_registry
from generator.site import formatting as fmt
from generator.site import render_site, views
from generator.site.pages import recipe as recipe_page

PROBE_ID = "gemma-4-31b/h100/injection-probe"
LABEL = '=HYPERLINK("http://x")'
FRAMEWORK = "@SUM(1)"
PWNED = Path("/tmp/pwned")
BASH = shutil.which("bash")


def probe_env(sandbox: Path) -> dict[str, str]:
    """Values that run a command if pasted unquoted, and a quote that ends a single-quoted string."""
    return {
        "PWN": "$(touch /tmp/pwned)",
        "QUOTE": "a'b",
        "PWN_LOCAL": f"$(touch {sandbox}/subst)",
        "BACKTICK": f"`touch {sandbox}/backtick`",
        "SEMICOLON": f"x; touch {sandbox}/semicolon",
        "NEWLINE": f"x\ntouch {sandbox}/newline",
        "DOLLAR": "$HOME ${PATH} \\ \" ! *",
        "EMPTY": "",
    }


def probe_recipe(sandbox: Path) -> dict:
    data = copy.deepcopy(reference_data())
    data["status"] = "measured"
    data["correctness"] = None
    data["layout"]["label"] = LABEL
    data["stack"]["framework"] = FRAMEWORK
    data["env"] = probe_env(sandbox)
    return data


@pytest.fixture
def probe(tmp_path: Path) -> tuple[Path, dict]:
    """A registry holding the reference and the probe; the rendered pages."""
    sandbox = tmp_path / "sandbox"
    sandbox.mkdir()
    root = make_registry(tmp_path / "registry", {PROBE_ID: probe_recipe(sandbox)})
    registry = load_registry(root)
    assert not registry.problems, registry.problems
    return sandbox, {"registry": registry, "pages": render_site(registry)}


# --- recipes.csv ------------------------------------------------------------------------------------------------


def csv_rows(pages: dict) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(pages["downloads/recipes.csv"].content)))


def test_formula_cells_are_neutralised(probe: tuple[Path, dict]) -> None:
    _, built = probe
    row = next(r for r in csv_rows(built["pages"]) if r["id"] == PROBE_ID)
    assert row["layout"] == "'" + LABEL
    assert row["framework_stated"] == "'" + FRAMEWORK  # the stated text; "framework" is the name it gives


TEXT_COLUMNS = ("id", "model", "gpu_type", "instance", "status", "framework", "framework_stated", "layout", "measured")
NUMBER_COLUMNS = ("gpu_count", "tokens_per_s_per_gpu", "usd_per_million_tokens", "mfu", "step_time_cv_percent")


def test_no_cell_starts_a_formula_and_figures_stay_numbers(probe: tuple[Path, dict]) -> None:
    _, built = probe
    rows = csv_rows(built["pages"])
    assert len(rows) == 2
    for row in rows:
        for column in TEXT_COLUMNS:
            assert not row[column].startswith(fmt.CSV_FORMULA_PREFIXES), (column, row[column])
        for column in NUMBER_COLUMNS:
            assert row[column] == "" or float(row[column]) == float(row[column]), (column, row[column])
    reference = next(r for r in rows if r["id"].endswith("attune-tp2-pp4-split13"))
    assert reference["layout"] == "TP2 PP4 DP1" and float(reference["tokens_per_s_per_gpu"]) == 1178.1


@pytest.mark.parametrize("prefix", ["=", "+", "-", "@", "\t", "\r"])
def test_every_formula_prefix_gets_a_quote(prefix: str) -> None:
    assert fmt.csv_text(prefix + "1+1") == "'" + prefix + "1+1"


def test_plain_text_and_negative_figures_are_unchanged() -> None:
    assert fmt.csv_text("TP2 PP4 DP1") == "TP2 PP4 DP1"
    assert fmt.csv_text("a=b") == "a=b"  # only the first character makes a formula
    # A negative figure is data: written as the number, not as text a spreadsheet cannot sum.
    assert fmt.csv_number(-1.5) == "-1.5"
    assert fmt.csv_text("-1.5") == "'-1.5"  # but the same characters in a text column are text


# --- the export block -------------------------------------------------------------------------------------------

_CODE = re.compile(r'<code class="language-bash">(.*?)</code>', re.S)


def export_block(pages: dict, recipe_id: str) -> str:
    """The Environment section's code block as a reader copies it (the page's HTML, unescaped)."""
    loaded_src = f"recipes/{recipe_id}.md"
    page = pages[loaded_src].content
    assert page.count("\n## Environment\n") == 1, f"no Environment section in {loaded_src}"
    section = page.split("\n## Environment\n", 1)[1].split("\n## ", 1)[0]
    blocks = _CODE.findall(section)
    assert len(blocks) == 1, f"expected one code block in the Environment section of {loaded_src}"
    return html.unescape(blocks[0])


def run_in_sandbox(script: str, sandbox: Path, names: list[str]) -> dict[str, str]:
    """Runs the block with an empty environment in `sandbox`, then prints each variable NUL-terminated."""
    assert BASH, "bash is needed"
    checked = subprocess.run([BASH, "-n", "-c", script], capture_output=True, text=True, timeout=30)
    assert checked.returncode == 0, checked.stderr
    show = "".join(f'printf "%s\\0" "${{{n}-<unset>}}"; ' for n in names)
    done = subprocess.run(["env", "-i", BASH, "--noprofile", "--norc", "-c", script + "\n" + show],
                          cwd=sandbox, capture_output=True, timeout=30)
    assert done.returncode == 0, done.stderr
    values = done.stdout.decode().split("\0")[:-1]
    return dict(zip(names, values, strict=True))


def test_export_block_sets_exact_values_and_runs_nothing(probe: tuple[Path, dict]) -> None:
    sandbox, built = probe
    loaded = next(x for x in built["registry"].recipes if x.id == PROBE_ID)
    assert views.recipe_src(loaded) == f"recipes/{PROBE_ID}.md"
    script = export_block(built["pages"], PROBE_ID)
    assert script == recipe_page.env_script(loaded)
    expected = probe_env(sandbox)
    before = PWNED.stat() if PWNED.exists() else None
    assert run_in_sandbox(script, sandbox, list(expected)) == expected
    assert list(sandbox.iterdir()) == [], "the export block created files"
    after = PWNED.stat() if PWNED.exists() else None
    assert (before and after and before.st_mtime_ns == after.st_mtime_ns) or (before is None and after is None), \
        "the export block touched /tmp/pwned"


def test_a_name_that_is_not_a_shell_identifier_is_never_rendered(probe: tuple[Path, dict]) -> None:
    """The loader refuses such names (a check problem); the site refuses them again on its own."""
    sandbox, built = probe
    loaded = next(x for x in built["registry"].recipes if x.id == PROBE_ID)
    hostile = {f"A; touch {sandbox}/key #": "1", "$(touch x)": "2", "1ABC": "3", "É": "4", "A-B": "5", "A\nB": "6",
               "": "7", "OK_NAME": "kept"}
    forged = dataclasses.replace(loaded, recipe=loaded.recipe.model_copy(update={"env": hostile}))
    script = recipe_page.env_script(forged)
    assert [line for line in script.splitlines() if line.startswith("export ")] == ["export OK_NAME=kept"]
    assert "touch" not in script and "ABC" not in script
    assert run_in_sandbox(script, sandbox, ["OK_NAME"]) == {"OK_NAME": "kept"}
    assert list(sandbox.iterdir()) == []
