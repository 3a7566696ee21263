"""Layouts nobody measured (generator/site/predicted.py, templates/predicted_layouts.md.j2): on the committed
registry's built site, every predicted figure is marked PREDICTED and sits in a table of its own, never in a measured
one; the figures a page shows are those of `python -m generator advise ... --json` for the same question; a model the
advisor refuses says why in the advisor's own one line; the advisor's error the pages state is the committed output
of benchmarks/advise_validate.py, which a fresh validation reproduces."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest
from suitehelpers import BuiltSite, generator_cli

from generator.registry import load_catalog
from generator.site.predicted import VALIDATION, chosen_counts, families

ROOT = Path(__file__).resolve().parents[2]
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
# The measured tables of a group page (recipes, best layouts, frameworks, failed layouts, the planner's recipes).
MEASURED = {"or-sortable", "or-bestlayout", "or-frameworks", "or-failed", "or-plan", "or-releases"}

pytestmark = pytest.mark.slow


@dataclass(eq=False)
class Node:
    tag: str
    attrs: dict[str, str]
    parent: Node | None = None
    children: list[Node | str] = field(default_factory=list)

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def ancestors(self) -> list[Node]:
        out, node = [], self.parent
        while node is not None:
            out.append(node)
            node = node.parent
        return out

    def all(self, keep) -> list[Node]:  # noqa: ANN001
        found = []
        for c in self.children:
            if isinstance(c, Node):
                if keep(c):
                    found.append(c)
                found.extend(c.all(keep))
        return found


class _Tree(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("document", {})
        self.at = self.root

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs}, self.at)
        self.at.children.append(node)
        if tag not in VOID:
            self.at = node

    def handle_endtag(self, tag: str) -> None:
        node: Node | None = self.at
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.at = node.parent

    def handle_data(self, data: str) -> None:
        self.at.children.append(data)


def page(site: BuiltSite, path: str) -> Node:
    tree = _Tree()
    tree.feed((site.out / path / "index.html").read_text(encoding="utf-8"))
    return tree.root


def advise_json(model: str, gpu: str, count: int) -> list[dict]:
    proc = generator_cli("advise", model, "--gpu", gpu, "--gpus", str(count), "--top", "3", "--json", cwd=ROOT,
                         timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def predicted_rows(root: Node) -> list[Node]:
    return root.all(lambda n: n.tag == "tr" and "data-or-predicted-row" in n.attrs)


def figures_of(row: Node) -> dict[str, object]:
    cells = {c.attrs["data-or-predicted"]: c for c in row.all(lambda n: "data-or-predicted" in n.attrs)}
    return {"layout": json.loads(cells["layout"].attrs["data-or-value"]),
            "memory_gb_per_gpu": json.loads(cells["memory"].attrs["data-or-value"]),
            "fits": json.loads(cells["fits"].attrs["data-or-value"]),
            "tokens_per_s_per_gpu": json.loads(cells["tokens"].attrs["data-or-value"]),
            "nearest": [a.attrs["data-or-nearest"] for a in cells["nearest"].all(lambda n: n.tag == "a")]}


def test_every_predicted_figure_is_marked_and_apart_from_measured_tables(committed_site: BuiltSite) -> None:
    for path in ("models/llama-3.1-70b", "models/llama-3-8b", "gpus/h100", "gpus/gb200"):
        root = page(committed_site, path)
        cells = root.all(lambda n: "data-or-predicted" in n.attrs)
        assert len(cells) >= 5 * 3, path  # layout, memory, fits, tokens, nearest, for at least three layouts
        for cell in cells:
            tables = [a for a in cell.ancestors() if a.tag == "table"]
            assert len(tables) == 1 and "or-predicted-table" in tables[0].classes(), (path, cell.attrs)
            assert not tables[0].classes() & MEASURED, path
            caption = tables[0].all(lambda n: n.tag == "caption")
            assert caption and caption[0].text().startswith("PREDICTED, not measured"), path
            row = next(a for a in cell.ancestors() if a.tag == "tr")
            badges = row.all(lambda n: "or-predicted-badge" in n.classes())
            assert [b.text() for b in badges] == ["PREDICTED"], path
            assert not any("data-or-recipe" in a.attrs for a in cell.ancestors()), path
        for table in root.all(lambda n: n.tag == "table" and "or-predicted-table" in n.classes()):
            assert not table.all(lambda n: "data-or-recipe" in n.attrs), path  # no measured row among them
        for table in root.all(lambda n: n.tag == "table" and n.classes() & MEASURED):
            assert not table.all(lambda n: "data-or-predicted" in n.attrs or "or-predicted-badge" in n.classes())
        # What the cells show is their figures, formatted: predicted (low-high).
        for row in predicted_rows(root):
            f = figures_of(row)
            tokens = row.all(lambda n: n.attrs.get("data-or-predicted") == "tokens")[0].text()
            t = f["tokens_per_s_per_gpu"]
            assert tokens == f"{t['predicted']:,.0f} ({t['low']:,.0f}–{t['high']:,.0f})"  # type: ignore[index]
        # The section is reached from the top of the page.
        assert root.all(lambda n: n.tag == "a" and n.attrs.get("href") == "#layouts-nobody-measured-predicted"), path


def test_a_model_page_shows_what_the_advise_command_answers(committed_site: BuiltSite) -> None:
    root = page(committed_site, "models/llama-3.1-70b")
    table = root.all(lambda n: n.tag == "table" and n.attrs.get("data-or-predicted-table") == "H100")[0]
    rows = predicted_rows(table)
    count = int(rows[0].attrs["data-or-count"])
    shown = [figures_of(r) for r in rows if int(r.attrs["data-or-count"]) == count]
    cli = advise_json(table.attrs["data-or-ask"], "H100", count)
    assert shown == [{k: lay[k] for k in shown[0]} for lay in cli[: len(shown)]]
    assert len(shown) == 3
    # Llama-3-70B and Llama-3.1-70B are one question: the other card's page shows the same layouts.
    other = page(committed_site, "models/llama-3-70b")
    twin = other.all(lambda n: n.tag == "table" and n.attrs.get("data-or-predicted-table") == "H100")[0]
    assert [figures_of(r) for r in predicted_rows(twin)] == [figures_of(r) for r in rows]


def test_a_gpu_page_shows_what_the_advise_command_answers(committed_site: BuiltSite) -> None:
    root = page(committed_site, "gpus/b200")
    row = predicted_rows(root)[0]
    cli = advise_json(row.attrs["data-or-ask"], "B200", int(row.attrs["data-or-count"]))
    assert figures_of(row) == {k: cli[0][k] for k in figures_of(row)}


def test_a_refused_model_says_why_in_the_advisors_one_line(committed_site: BuiltSite) -> None:
    root = page(committed_site, "models/mixtral-8x7b")
    assert not root.all(lambda n: "data-or-predicted" in n.attrs)
    lines = [n.text() for n in root.all(lambda n: "data-or-predicted-refusal" in n.attrs)]
    proc = generator_cli("advise", "Mixtral-8x7B", "--gpu", "H100", "--gpus", "8", cwd=ROOT, timeout=300)
    assert proc.returncode == 1 and proc.stdout == ""
    refusal = proc.stderr.strip()
    assert "\n" not in refusal and refusal.startswith("catalog/models/mixtral-8x7b.yaml:")
    assert lines == [f"The layout advisor predicts nothing here: {refusal}"]
    # The page of its GPU type (its recipes are on B200) lists it among the models the advisor refuses, same line.
    gpu = page(committed_site, "gpus/b200")
    assert any(n.text().endswith(refusal) for n in gpu.all(lambda n: "data-or-predicted-refusal" in n.attrs))


def test_the_stated_error_is_the_committed_validation_which_a_fresh_run_reproduces(
        committed_site: BuiltSite, advise_validation: dict[str, object]) -> None:
    """advise_validation: a fresh validate() of the working tree's registry, run once per run (tests/conftest.py)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import advise_validate  # benchmarks/advise_validate.py: what --write writes

    fresh = json.loads(json.dumps(advise_validate.figures(advise_validation), sort_keys=True))
    committed = json.loads((ROOT / VALIDATION).read_text(encoding="utf-8"))
    assert committed == fresh, "benchmarks/results/advise_validate.json is stale: python benchmarks/advise_validate.py --write"
    text = page(committed_site, "models/llama-3.1-70b").all(lambda n: "data-or-predicted-error" in n.attrs)[0].text()
    tokens = committed["tokens_mape"]
    assert f"tokens/s per GPU, median error {tokens['value']:.1%} (goal {tokens['goal']:.1%}" in text
    assert f"With Llama-3.1-70B held out ({committed['rows_by_model']['Llama-3.1-70B']} rows)" in text
    assert f"median error {tokens['by_model']['Llama-3.1-70B']:.1%}" in text


def test_a_family_is_the_cards_of_one_architecture() -> None:
    fams = families(load_catalog(ROOT))
    assert fams["Llama-3-70B"] is fams["Llama-3.1-70B"]
    assert fams["Llama-3-70B"].name == "Llama-3-70B / Llama-3.1-70B"
    assert fams["Llama-3.1-405B"] is not fams["Llama-3.1-70B"]
    assert "Mixtral-8x7B" not in fams  # a mixture of experts: the advisor refuses it


def test_the_counts_asked_are_the_smallest_median_and_largest() -> None:
    assert chosen_counts({4, 8, 16, 32, 64}) == [4, 16, 64]
    assert chosen_counts({8, 16}) == [8, 16]
    assert chosen_counts({512}) == [512]
