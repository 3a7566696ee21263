"""Which runs of the Ultra-Scale Playbook sweep worked, held to the figure's own markers: every cell's circles are
drawn with a colour (the run's MFU over the model's best) and a size (5 + 10 x the run's total tok/s over the model's
highest). The recipes of a cell must be exactly its circles, each within the stated figures' rounding, and every
run the figure draws as a cross must be far from every circle. Pairing here is by sorting (largest circle with the
highest tok/s), independent of the importer's order-keeping match."""

from __future__ import annotations

from collections import defaultdict
from functools import lru_cache
from pathlib import Path

import yaml
from suitehelpers import read_yaml

from generator.importers import playbook as pb

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "tests/importer/sources/playbook-benchmarks_interactive-924e4d0b.html"


@lru_cache(maxsize=1)
def text() -> str:
    return DOC.read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def traces() -> list[dict]:
    data, _, _ = pb._figure_data(text())
    return data


@lru_cache(maxsize=1)
def sweep() -> pb.Sweep:
    return pb.read_sweep(text())


def entries_by_cell() -> dict[int, list[pb.Row]]:
    out: dict[int, list[pb.Row]] = defaultdict(list)
    for row in sweep().rows + sweep().merged:
        out[row.cell].append(row)
    return out


def model_scale(model: str) -> tuple[float, float]:
    """The model's best stated MFU and highest stated total tok/s over every hover text with figures."""
    stated = [r.figures for r in sweep().rows + sweep().merged if r.config.model == model and r.figures]
    return max(f.mfu_percent for f in stated), max(f.tokens_per_s for f in stated)


def test_the_scales_by_hand() -> None:
    """The largest circle of each model is drawn at 15.0 and its most efficient at colour 1.0 exactly."""
    assert model_scale("1B") == (44.3, 6086326)
    assert model_scale("80B") == (34.3, 175846)
    for model in pb.MODELS:
        cells = [traces()[c] for c in entries_by_cell() if traces()[c]["marker"].get("symbol") != "x"
                 and entries_by_cell()[c][0].config.model == model]
        assert max(max(t["marker"]["size"]) for t in cells) == 15.0
        assert max(max(t["marker"]["color"]) for t in cells) == 1.0


def test_each_cell_is_held_to_its_marker_colours_and_sizes() -> None:
    cells_with_circles = 0
    for cell, entries in entries_by_cell().items():
        trace = traces()[cell]
        worked = [r for r in entries if r.outcome == pb.MEASURED]
        if trace["marker"].get("symbol") == "x":
            assert worked == []
            continue
        cells_with_circles += 1
        best, top = model_scale(entries[0].config.model)
        circles = sorted(zip(trace["marker"]["size"], trace["marker"]["color"], strict=True), reverse=True)
        runs = sorted(worked, key=lambda r: r.figures.tokens_per_s, reverse=True)
        assert len(runs) == len(circles), cell
        for (size, colour), run in zip(circles, runs, strict=True):
            # Both figures are rounded as stated (MFU to 0.1 point, tok/s to 1), and so are the scale's.
            assert abs(size - (5 + 10 * run.figures.tokens_per_s / top)) <= 10 / top, (cell, run.column)
            assert abs(colour - run.figures.mfu_percent / best) <= 0.1 / best, (cell, run.column)
        for run in (r for r in entries if r.outcome == pb.CRASHED and r.figures):
            nearest = min(max(abs(size - (5 + 10 * run.figures.tokens_per_s / top)) / (10 / top),
                              abs(colour - run.figures.mfu_percent / best) / (0.1 / best)) for size, colour in circles)
            assert nearest > 10, (cell, run.column, nearest)
    assert cells_with_circles == 26


def test_the_recipes_of_a_cell_are_its_circles() -> None:
    """The committed recipes of each (model, GPU count) are as many as the cell's circles less the repeats merged."""
    per_cell: dict[tuple[str, int], int] = defaultdict(int)
    for path in ROOT.glob("recipes/playbook-llama-*/h100/pb-*.yaml"):
        recipe = read_yaml(path)
        per_cell[(recipe["model"], recipe["gpu"]["count"])] += 1
    for cell, entries in entries_by_cell().items():
        trace = traces()[cell]
        circles = 0 if trace["marker"].get("symbol") == "x" else len(trace["x"])
        merged = sum(1 for r in sweep().merged if r.cell == cell and r.outcome == pb.MEASURED)
        first = entries[0]
        assert per_cell.get((first.model, first.config.gpus), 0) == circles - merged, cell


def test_the_first_texts_are_not_the_circles_in_eleven_cells() -> None:
    """Taking a cell's first N hover texts as its N circles (the earlier reading) gets 29 runs wrong each way, in 11
    of the 26 cells with circles; the crashed ones had a median of 73.1 GB, the ones that worked 7.1 GB."""
    wrong: dict[int, int] = defaultdict(int)
    crashed_memory, worked_memory = [], []
    for cell, entries in entries_by_cell().items():
        trace = traces()[cell]
        circles = 0 if trace["marker"].get("symbol") == "x" else len(trace["x"])
        for r in entries:
            first_n = r.index < circles
            if first_n != (r.outcome == pb.MEASURED):
                wrong[cell] += 1
                (crashed_memory if first_n else worked_memory).append(r.figures.memory_gb)
    assert len(wrong) == 11
    assert len(crashed_memory) == len(worked_memory) == 29
    assert sorted(crashed_memory)[14] == 73.1 and sorted(worked_memory)[14] == 7.1


def test_the_issues_example_by_hand() -> None:
    """80B on 32 nodes (256 GPUs): the hover text at index 7, DP16 TP8 PP2 MBS2 GradAcc8 ZeRO-1, states 14.5% and
    71,744 tok/s: colour 14.5 / 34.3 = 0.4227, size 5 + 10 x 71,744 / 175,846 = 9.0799. Circle 6 is (0.4290,
    9.1350): index 6's 14.7% and 72,712 tok/s (0.4286, 9.1350); circle 7 is (0.4050, 8.9042): index 8's 13.9% and
    68,654 tok/s (0.4052, 8.9042). No circle is index 7's run: it crashed (64.3 GB), and is a failed layout."""
    row = next(r for r in sweep().rows if r.cell == 50 and r.index == 7)
    assert row.config == pb.Config(model="80B", nodes=32, mbs=2, grad_acc=8, gbs=256, dp=16, pp=2, tp=8, zero=1)
    assert row.outcome == pb.CRASHED and row.figures.memory_gb == 64.3
    marker = traces()[50]["marker"]
    assert round(marker["color"][6], 4) == 0.4290 and round(marker["size"][6], 4) == 9.1350
    assert round(marker["color"][7], 4) == 0.4050 and round(marker["size"][7], 4) == 8.9042
    assert next(r for r in sweep().rows if r.cell == 50 and r.index == 8).marker == pb.Marker(marker["color"][7],
                                                                                               marker["size"][7])
    assert not (ROOT / "recipes/playbook-llama-80b/h100/pb-256gpu-dp16-tp8-pp2-mbs2-ga8-zero1.yaml").exists()
    failed = read_yaml(ROOT / "failed/playbook-llama-80b.yaml")
    assert any(e["publication"]["column"] == row.column and e["stated"]["mfu_percent"] == 14.5
               for e in failed["layouts"])


def test_a_configuration_that_worked_is_not_also_a_failed_layout() -> None:
    """80B on 8 nodes: DP1 TP4 PP16 (42,559 tok/s, the fastest layout that worked there) is also written once
    more without figures; it is one recipe naming that repeat, and no failed layout."""
    lead = next(r for r in sweep().rows if r.cell == 46 and (r.config.dp, r.config.tp, r.config.pp) == (1, 4, 16))
    assert lead.outcome == pb.MEASURED and lead.figures.tokens_per_s == 42559
    assert [(r.outcome, r.figures) for r in lead.repeats] == [(pb.CRASHED, None)]
    recipe = yaml.safe_load((ROOT / "recipes/playbook-llama-80b/h100/pb-64gpu-dp1-tp4-pp16-mbs1-ga256-zero0.yaml")
                            .read_text(encoding="utf-8"))
    assert f"column {lead.repeats[0].column} with no figures" in recipe["notes"]
    failed = read_yaml(ROOT / "failed/playbook-llama-80b.yaml")
    assert not any(e["gpu"]["count"] == 64 and (e["layout"]["dp"], e["layout"]["tp"], e["layout"]["pp"],
                                                e["layout"]["gradient_accumulation"]) == (1, 4, 16, 256)
                   for e in failed["layouts"])


def test_a_circle_no_text_explains_is_refused() -> None:
    """A marker colour moved beyond rounding: the importer says which cell and circle, instead of guessing."""
    scale = pb.Scale(44.3, 6086326)
    good = pb.Figures(mfu_percent=44.3, tokens_per_s_per_gpu=38895, tokens_per_s=311156, memory_gb=41.8)
    assert pb.match_circles([pb.Marker(1.0, scale.size(good))], [good], scale) == [0]
    try:
        pb.match_circles([pb.Marker(0.9, scale.size(good))], [good], scale)
    except ValueError as exc:
        assert "circle 0 (colour 0.9000" in str(exc) and "matches no hover text within rounding" in str(exc)
    else:
        raise AssertionError("a circle off by 10% in colour was matched")
