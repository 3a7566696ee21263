"""The layout advisor's accuracy on this registry: `python -m generator advise --validate`'s table, leave one model
out over every model with at least 20 dense rows, with the time the validation took.

    python benchmarks/advise_validate.py            # prints the table
    python benchmarks/advise_validate.py --write    # also writes benchmarks/results/advise_validate.txt, its figures
                                                    # as JSON (advise_validate.json: what the site's predicted layouts
                                                    # state as the advisor's error) and the methodology page's tables
                                                    # (generator/site/templates/advise.md.j2)

tests/advise/test_advise_validate.py checks that both committed copies are what a fresh run gives.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generator.advise import report  # noqa: E402
from generator.advise.observations import load  # noqa: E402
from generator.advise.validate import GOALS, validate  # noqa: E402

RESULT = ROOT / "benchmarks" / "results" / "advise_validate.txt"
FIGURES = ROOT / "benchmarks" / "results" / "advise_validate.json"
PAGE = ROOT / "generator" / "site" / "templates" / "advise.md.j2"
BEGIN = "{# validation tables: written by benchmarks/advise_validate.py --write #}\n"
END = "\n{# /validation tables #}"


def write_page_tables(markdown: str) -> None:
    text = PAGE.read_text(encoding="utf-8")
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    PAGE.write_text(text[:start] + markdown + text[end:], encoding="utf-8")


def figures(result: dict[str, object]) -> dict[str, object]:
    """The validation's figures without its per-row list: each metric (value, n, met, by held-out model), its goal,
    and each held-out model's row count."""
    rows = result["rows"]
    assert isinstance(rows, list)
    out: dict[str, object] = {name: {**metric, "goal": GOALS[name]} for name, metric in result.items()
                              if name != "rows" and isinstance(metric, dict)}
    models: dict[str, int] = {}
    for row in rows:
        models[row["model"]] = models.get(row["model"], 0) + 1
    out["rows_by_model"] = dict(sorted(models.items()))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write {RESULT.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    registry, rows = load(ROOT)
    loaded = time.perf_counter()
    result = validate(rows, registry.catalog)
    done = time.perf_counter()
    text = (report.validation_text(result) + "\n\n"
            f"{len(registry.recipes)} recipes and the failed layouts of failed/ read in {loaded - started:.1f} s; "
            f"{len(rows)} dense rows; the leave-one-model-out fits and predictions took {done - loaded:.1f} s "
            f"(Python {platform.python_version()}, one process).\n")
    print(text, end="")
    if args.write:
        RESULT.write_text(text, encoding="utf-8")
        FIGURES.write_text(json.dumps(figures(result), indent=1, sort_keys=True) + "\n", encoding="utf-8")
        write_page_tables(report.validation_markdown(result))
        wrote = f"{RESULT.relative_to(ROOT)}, {FIGURES.relative_to(ROOT)} and the tables of {PAGE.relative_to(ROOT)}"
        print(f"wrote {wrote}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
