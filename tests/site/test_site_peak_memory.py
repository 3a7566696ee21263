"""Peak memory per GPU as the site shows it (generator/site/views.py, downloads.py), on committed recipes: a run of
ours states allocated and reserved GiB; the playbook's rows state "GPU memory: X GB" without saying which kind, or
whether GB is 10^9 or 2^30 bytes (PeakMemory.stated_gb): every place says it is the publication's figure, of
unstated kind, and never shows it as allocated or reserved."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from generator.registry import load_registry
from generator.site import views
from generator.site.pages import downloads

ROOT = Path(__file__).resolve().parents[2]
PLAYBOOK_SOURCE = "the playbook's 'GPU memory' (hover text; kind and unit as stated)"
# Hand-read from tests/importer/sources/playbook-benchmarks_interactive-924e4d0b.html, line 2: column 426584 "Nodes:
# 16, MBS 16, DP 16, PP 1, TP 8, ZeRO 1 ... GPU memory: 29.2 GB"; column 736686 "Nodes: 1, MBS 2, GradAcc 16, DP 8,
# PP 1, TP 1, ZeRO 1 ... GPU memory: 69.8 GB" (the sweep's largest).
SMALL = "recipes/playbook-llama-1b/h100/pb-128gpu-dp16-tp8-pp1-mbs16-ga1-zero1.yaml"
LARGE = "recipes/playbook-llama-3b/h100/pb-8gpu-dp8-tp1-pp1-mbs2-ga16-zero1.yaml"
# A run of ours: 35.59 GiB allocated, 36.87 GiB reserved (its summary line).
OURS = "recipes/llama-3.2-1b/h100/transformers-4k.yaml"
STATED = " GB (as published, kind not stated)"


@pytest.fixture(scope="module")
def shown(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str | None, str, str, list[str]]]:
    """Each recipe's (recipe-page text, table cell, filter band, recipes.csv's three peak-memory cells)."""
    root = tmp_path_factory.mktemp("registry")
    shutil.copytree(ROOT / "catalog", root / "catalog")
    for rel in (SMALL, LARGE, OURS):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, root / rel)
    registry = load_registry(root)
    assert not registry.problems, registry.problems
    figures_of = views.figures_by_id(registry.recipes, registry.catalog)
    out = {}
    for loaded in registry.recipes:
        record = downloads._csv_record(loaded, figures_of[loaded.id]).rstrip("\n").split(",")
        out["recipes/" + loaded.id + ".yaml"] = (views.peak_memory_text(loaded), views.peak_memory_cell(loaded),
                                                 views.peak_memory_band(loaded), record[-3:])
    assert downloads.CSV_COLUMNS[-3:] == ["peak_memory_allocated_gib", "peak_memory_reserved_gib",
                                          "peak_memory_stated_gb"]
    return out


def test_a_playbook_row_shows_its_stated_figure_as_the_publications(shown: dict) -> None:
    text, cell, band, csv_cells = shown[SMALL]
    assert text == f"29.2 GB as published (allocated or reserved not stated) of the GPU's 80 GB ({PLAYBOOK_SOURCE})"
    assert cell == "29.2" + STATED
    assert band == "up to 40" + STATED
    assert csv_cells == ["", "", "29.2"]
    assert shown[LARGE][1:] == ("69.8" + STATED, "40-80" + STATED, ["", "", "69.8"])


def test_a_run_of_ours_shows_allocated_and_reserved(shown: dict) -> None:
    text, cell, band, csv_cells = shown[OURS]
    assert text is not None and text.startswith("35.59 GiB allocated, 36.87 GiB reserved of the GPU's 80 GB (")
    assert "as published" not in text
    assert (cell, band, csv_cells) == ("36.9 GiB", "up to 40 GiB (reserved, else allocated)", ["35.59", "36.87", ""])
