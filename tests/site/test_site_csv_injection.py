"""No cell of any CSV export reads as a formula, whichever separator a spreadsheet splits on (issue 41, item 4).

The payloads (tests/site/data/csv_injection_payloads.json, with their sources: the OWASP CSV Injection page, its rule
applied to every separator, the payloads of the article it links, and the label of issue 41) are written into
recipes.csv and frameworks.csv (generator/site/formatting.py) and into the page's CSV of the rows in view
(site_src/assets/js/csv.js and table.js, run in Node), then read back with each of , ; | tab as the separator, by
Python's csv reader (which honours a quote only at a field's start, as spreadsheets do) and by a plain split (which
honours none), and with all four at once (LibreOffice can split on several). No field, after the spaces and double
quotes a spreadsheet may skip, starts with = + - @ tab or CR, unless it is a genuine number: figures are written as
numbers (-1.5 stays a number a spreadsheet can sum); only text cells are neutralised."""

from __future__ import annotations

import copy
import csv
import io
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from sitehelpers import make_registry, reference_data

from generator.registry import load_registry
from generator.site import formatting as fmt
from generator.site import render_site

ROOT = Path(__file__).resolve().parents[2]
DATA = json.loads((Path(__file__).parent / "data/csv_injection_payloads.json").read_text(encoding="utf-8"))
PAYLOADS = [p["text"] for p in DATA["payloads"]]
SEPARATORS = [",", ";", "|", "\t"]
LEADING = re.compile(f"^[{fmt.CSV_LEADING}]*")
NUMBER = re.compile(r"^-?[0-9]+(\.[0-9]+)?(e[+-]?[0-9]+)?$")


def _formula(field: str) -> bool:
    """Whether a spreadsheet may read the field as a formula: its first character after the spaces and double quotes
    it may skip is a formula start, and the field is not a number."""
    rest = field[LEADING.match(field).end():]
    return rest.startswith(fmt.CSV_FORMULA_PREFIXES) and not NUMBER.match(field.strip())


def _fields(text: str, separators: str) -> list[tuple[str, str]]:
    """(how it was read, field) for every field of `text`: Python's csv reader with each one separator, and a plain
    split on the separators and line ends (no quote honoured)."""
    out = []
    if len(separators) == 1:
        for row in csv.reader(io.StringIO(text, newline=""), delimiter=separators):
            out += [(f"csv {separators!r}", field) for field in row]
    out += [(f"split {separators!r}", field) for field in re.split(f"[{re.escape(separators)}\r\n]", text)]
    return out


def _formulas(text: str) -> list[tuple[str, str]]:
    found = []
    for separators in [*SEPARATORS, "".join(SEPARATORS)]:
        found += [(how, field) for how, field in _fields(text, separators) if _formula(field)]
    return found


def test_the_payload_list_has_its_sources() -> None:
    assert {p["from"] for p in DATA["payloads"]} == set(DATA["sources"])
    assert "https://owasp.org/www-community/attacks/CSV_Injection" in DATA["sources"]["owasp"]
    assert len(PAYLOADS) == len(set(PAYLOADS)) >= 25


@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_payload_in_any_cell_of_a_line_reads_back_as_text(payload: str) -> None:
    """First, middle and last cell, beside a negative figure: the figure stays a number, the payload opens no
    formula with any separator, and read back with the file's own ',' it is the payload with single quotes put in."""
    for cells in ([payload, fmt.csv_number(-1.5), "8"], ["x", payload, fmt.csv_number(-1.5)],
                  [fmt.csv_number(-1.5), "x", payload]):
        text = fmt.csv_line(cells) + fmt.csv_line(cells)
        assert _formulas(text) == [], (payload, cells)
        ((*read,), (*again,)) = list(csv.reader(io.StringIO(text, newline="")))
        assert read == again == [c if isinstance(c, fmt.CsvNumber) and i else fmt.csv_text(c) for i, c in enumerate(cells)]
        assert fmt.csv_text(payload).replace("'", "") == payload.replace("'", "")
        assert "-1.5" in read[1:] or read[0] == "'-1.5"  # the figure as a number, but as a line's first cell
    assert fmt.csv_text(fmt.csv_text(payload)) == fmt.csv_text(payload)


def test_text_that_opens_no_formula_is_written_as_it_was() -> None:
    for text in ("TP2 PP4 DP1", "a=b", "megatron-lm 0.16", "2026-10-20", "x; y", "1+1", "H100"):
        assert fmt.csv_text(text) == text
    assert fmt.csv_line(["llama-3-70b/h100/x", "H100", "64", fmt.csv_number(1664.0), fmt.csv_number(None)]) == \
        "llama-3-70b/h100/x,H100,64,1664.0,\n"
    # a caller's plain string is text, whatever it looks like; a figure is a number
    assert fmt.csv_line(["-1.5", fmt.csv_number(-1.5)]) == "'-1.5,-1.5\n"
    # but not as a line's first cell, where a reader splitting on ";" would read "-1.5,x" as one field
    assert fmt.csv_line([fmt.csv_number(-1.5), "x"]) == "'-1.5,x\n"
    assert fmt.csv_line([fmt.csv_number(1.5), "x"]) == "1.5,x\n"


# --- recipes.csv and frameworks.csv of a registry of payloads ---------------------------------------------------


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A registry holding the reference and one measured recipe a payload, the payload as its layout label and as
    its framework's name; the two CSV downloads it renders."""
    recipes = {}
    for i, payload in enumerate(PAYLOADS):
        data = copy.deepcopy(reference_data())
        data["status"] = "measured"
        data["correctness"] = None
        data["layout"]["label"] = payload
        data["stack"]["framework"] = payload.replace(" ", "_") + " 1.0"
        data["result"]["tokens_per_s_per_gpu"] = 1000.0 + i
        recipes[f"gemma-4-31b/h100/probe-{i}"] = data
    root = make_registry(tmp_path_factory.mktemp("csv") / "registry", recipes)
    registry = load_registry(root)
    assert not registry.problems, registry.problems
    pages = render_site(registry)
    return {name: pages[f"downloads/{name}"].content for name in ("recipes.csv", "frameworks.csv")}


@pytest.mark.parametrize("name", ["recipes.csv", "frameworks.csv"])
def test_no_export_cell_opens_a_formula_with_any_separator(exports: dict[str, str], name: str) -> None:
    text = exports[name]
    # recipes.csv: a row a payload; frameworks.csv: the fastest recipe of each framework the stated texts name
    # (generator.frameworks reads none in a payload: one "not named" group), its stated text kept beside the name
    assert len(text.splitlines()) > (len(PAYLOADS) // 2 if name == "recipes.csv" else 1)
    assert _formulas(text) == []


def test_recipes_csv_keeps_the_labels_and_the_figures(exports: dict[str, str]) -> None:
    rows = {r["id"]: r for r in csv.DictReader(io.StringIO(exports["recipes.csv"], newline=""))}
    for i, payload in enumerate(PAYLOADS):
        row = rows[f"gemma-4-31b/h100/probe-{i}"]
        assert row["layout"] == fmt.csv_text(payload)
        assert float(row["tokens_per_s_per_gpu"]) == 1000.0 + i and row["gpu_count"] == "8"


# --- the page's CSV of the rows in view (Node) ------------------------------------------------------------------

NODE = shutil.which("node")
TABLE = """
// The page modules import with a document present (url.js listens for clicks); nothing else of the DOM is needed.
globalThis.document = { addEventListener() {}, querySelectorAll: () => [] };
globalThis.window = globalThis;
globalThis.location = { search: "", pathname: "/", hash: "" };
const { csvCell, csvText, tableCsv } = await import("./table.js");
const payloads = JSON.parse(process.argv[2]);
function row(p, i) {
  const data = { orRecipe: "m/h100/" + p, model: p, gpu_type: p, gpu_count: "8", status: p, framework: p,
                 precision: p, training: p, throughput: p, mfu_peak: p, measured: p };
  const figures = { tokens: "-1.5", usd: "0.25", mfu: "", cv: "2.19" };
  return { dataset: data, orMatch: true, cells: [{ textContent: " " + p + " " }],
           hasAttribute: (name) => name === "data-mfu_peak",
           querySelector: (sel) => ({ getAttribute: () => figures[sel.split('"')[1]] }) };
}
const table = { tHead: { rows: [{ cells: [{ dataset: { orSort: "layout" } }] }] },
                tBodies: [{ rows: payloads.map(row) }] };
console.log(JSON.stringify({ text: payloads.map(csvText), cell: payloads.map((p) => csvCell(csvText(p))),
                             csv: tableCsv(table) }));
"""


@pytest.fixture(scope="module")
def page_csv(tmp_path_factory: pytest.TempPathFactory) -> dict:
    if NODE is None:
        pytest.skip("node is not installed")
    folder = tmp_path_factory.mktemp("js")
    for module in (ROOT / "site_src/assets/js").glob("*.js"):
        shutil.copyfile(module, folder / module.name)
    (folder / "package.json").write_text('{"type": "module"}\n')
    (folder / "probe.js").write_text(TABLE)
    done = subprocess.run([NODE, "probe.js", json.dumps(PAYLOADS)], cwd=folder, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_page_neutralises_as_the_exports_do(page_csv: dict) -> None:
    assert page_csv["text"] == [fmt.csv_text(p) for p in PAYLOADS]
    assert page_csv["cell"] == [fmt.csv_cell(fmt.csv_text(p)) for p in PAYLOADS]


def test_no_cell_of_the_rows_in_view_opens_a_formula(page_csv: dict) -> None:
    text = page_csv["csv"]
    assert _formulas(text) == []
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    assert len(rows) == len(PAYLOADS)
    for row, payload in zip(rows, PAYLOADS, strict=True):
        assert row["model"] == row["framework"] == row["measured"] == fmt.csv_text(payload)
        assert row["layout"] == fmt.csv_text(payload.strip())  # the cell's text, as the page trims it
        assert row["id"] == fmt.csv_text("m/h100/" + payload)
        assert (row["tokens_per_s_per_gpu"], row["gpu_count"]) == ("-1.5", "8")  # figures stay numbers
