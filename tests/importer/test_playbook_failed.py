"""Failed layouts of the Ultra-Scale Playbook sweep: failed/<model slug>.yaml hold exactly the figure's crosses (each
with its line and column), re-writing them is byte-identical, and the model page's section puts them next to the
fastest recipe that worked at the same GPU count (generator/site/pages/failed_layouts.py, no site build)."""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from pathlib import Path

import pytest

from generator import failed
from generator.importers import playbook as pb
from generator.importers.base import copy_read
from generator.load import load_recipe
from generator.registry import load_catalog
from generator.site.pages import failed_layouts as failed_view

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "tests/importer/sources/playbook-benchmarks_interactive-924e4d0b.html"


@lru_cache(maxsize=1)
def sweep() -> pb.Sweep:
    return pb.read_sweep(DOC.read_text(encoding="utf-8"))


@pytest.mark.slow
def test_committed_failed_layouts_are_the_crosses_byte_for_byte() -> None:
    files = pb.failed_layout_files(sweep(), load_catalog(ROOT), copy_read(pb.ORIGINAL, DOC))
    assert sorted(files) == sorted(str(p.relative_to(ROOT)) for p in (ROOT / failed.FOLDER).glob("playbook-*.yaml"))
    for rel, text in files.items():
        assert (ROOT / rel).read_text(encoding="utf-8") == text, rel


@pytest.mark.slow
def test_every_cross_is_a_failed_layout_at_its_column() -> None:
    data, problems = failed.load_all(ROOT)
    assert problems == []
    located = Counter()
    for model in pb.MODELS.values():
        for item in data[model].layouts:
            located[(model, item.publication.line, item.publication.column)] += 1
    crosses = Counter((r.model, r.line, r.column) for r in pb.failed_layouts(sweep()))
    assert located == crosses
    assert sum(crosses.values()) == 1536
    with_figures = [i for m in pb.MODELS.values() for i in data[m].layouts if i.stated is not None]
    assert len(with_figures) == 30


def test_a_broken_failed_layouts_file_is_reported_at_its_line(tmp_path: Path) -> None:
    (tmp_path / failed.FOLDER).mkdir()
    bad = tmp_path / failed.FOLDER / "x.yaml"
    bad.write_text("model: X\nlayouts:\n- gpu: {type: H100, count: 0, per_node: 8}\n", encoding="utf-8")
    data, problems = failed.load_all(tmp_path)
    assert data == {}
    assert any(p.line == 3 and "gpu.count" in p.field for p in problems), problems


def _group(model_slug: str) -> list:
    recipes_root = ROOT / "recipes"
    return [load_recipe(p, str(p.relative_to(ROOT)), recipes_root)
            for p in sorted((recipes_root / model_slug / "h100").glob("pb-*-dp*.yaml"))]


@pytest.mark.slow
def test_model_page_section_puts_failures_next_to_the_fastest_that_worked() -> None:
    data, _ = failed.load_all(ROOT)
    group = [x for x in _group("playbook-llama-80b") if x.recipe is not None]
    section = failed_view.section(data["Playbook-Llama-80B"], group, "models/playbook-llama-80b.md")
    assert section is not None and section["total"] == 666
    by_gpus = {row["gpus"]: row for row in section["rows"]}
    # 1 and 2 nodes: nothing worked for the 80B model; 57 and 87 layouts failed.
    assert by_gpus["8 H100"]["best"] is None and by_gpus["8 H100"]["failed"] == 57
    assert by_gpus["16 H100"]["best"] is None and by_gpus["16 H100"]["failed"] == 87
    at_32 = [x for x in group if x.recipe.gpu.count == 32]
    fastest = max(at_32, key=lambda x: x.recipe.result.tokens_per_s_per_gpu)
    assert by_gpus["32 H100"]["worked"] == len(at_32)
    assert by_gpus["32 H100"]["best"]["label"] == fastest.recipe.layout.label
    assert sum(row["failed"] for row in section["rows"]) == 666


@pytest.mark.slow
def test_the_section_template_lists_every_failed_layout() -> None:
    """templates/failed_layouts.md.j2 (included by group.md.j2) renders one table row per failed layout and one row per
    GPU count; a page without failed layouts renders nothing."""
    from generator.site import render

    data, _ = failed.load_all(ROOT)
    group = [x for x in _group("playbook-llama-80b") if x.recipe is not None]
    section = failed_view.section(data["Playbook-Llama-80B"], group, "models/playbook-llama-80b.md")
    template = render.environment().get_template("failed_layouts.md.j2")
    html = template.render(failed=section)
    # one row per distinct failed layout (tests/site/test_site_failed_layouts.py), one per GPU count above them
    # the importer merges a source's repeats of a layout (tests/importer/test_playbook_markers.py): each listed once
    assert html.count("<tr data-or-failed>") == len(section["distinct"]) == 666
    assert sum(d["times"] for d in section["distinct"]) == 666
    assert html.count("<tr><td>") == len(section["rows"]) == 7
    # "nearest that worked" only on the same GPU type and count (issue 42): the 1- and 2-node cells' 144 distinct
    # layouts have none there, with the section's 2 GPU-count rows where nothing worked
    assert html.count("none worked") == 146
    assert template.render(failed=None).strip() == ""
