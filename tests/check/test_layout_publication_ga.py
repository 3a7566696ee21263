"""Megatron-Bridge rows whose GA contradicts their own GBS / (MBS x DP): recorded as the publication's statement by
the importer, on exactly those rows, and accepted by check for exactly that figure."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.importers import megatron_bridge as mb
from generator.registry import Registry, load_catalog

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests/importer/data"

# (document line, model, system, GBS, MBS, DP, GA) as the two documents print them; the same three configurations.
CONTRADICTING = {
    "performance-summary.md": [(124, "Qwen3-235B-A22B", "DGX-GB300", 8192, 2, 64, 32),
                               (157, "GPT-OSS-120B", "DGX-H100", 512, 4, 16, 2),
                               (173, "Llama-3-70B", "DGX-GB200", 128, 2, 8, 16)],
    "performance-summary-archive.md": [(126, "Qwen3-235B-A22B", "DGX-GB300", 8192, 2, 64, 32),
                                       (159, "GPT-OSS-120B", "DGX-H100", 512, 4, 16, 2),
                                       (175, "Llama-3-70B", "DGX-GB200", 128, 2, 8, 16)],
}
COMMITTED = {"gpt-oss-120b/h100/mb-25.11-dgx-h100-64gpu-bf16": 2,
             "llama-3-70b/gb200/mb-25.09-dgx-gb200-64gpu-fp8-mx": 16,
             "qwen3-235b-a22b/gb300/mb-25.11-dgx-gb300-256gpu-bf16": 32,
             # Ultra-Scale Playbook rows whose DP x MBS x GradAcc is not their stated GBS (sequences), as published
             "playbook-llama-1b/h100/pb-256gpu-dp32-tp4-pp2-mbs1-ga128-zero0": 128,  # 32 x 1 x 128 = 4096 != 256
             "playbook-llama-1b/h100/pb-256gpu-dp32-tp8-pp1-mbs1-ga128-zero0": 128,  # 32 x 1 x 128 = 4096 != 256
             "playbook-llama-1b/h100/pb-256gpu-dp64-tp4-pp1-mbs1-ga64-zero0": 64,  # 64 x 1 x 64 = 4096 != 256
             "playbook-llama-1b/h100/pb-32gpu-dp16-tp1-pp2-mbs8-ga1-zero1": 1,  # 16 x 8 x 1 = 128 != 256
             "playbook-llama-1b/h100/pb-64gpu-dp16-tp2-pp2-mbs8-ga1-zero1": 1,  # 16 x 8 x 1 = 128 != 256
             "playbook-llama-1b/h100/pb-8gpu-dp1-tp1-pp8-mbs1-ga128-zero1": 128,  # 1 x 1 x 128 = 128 != 256
             "playbook-llama-1b/h100/pb-8gpu-dp2-tp1-pp4-mbs2-ga4-zero1": 4,  # 2 x 2 x 4 = 16 != 256
             "playbook-llama-3b/h100/pb-256gpu-dp32-tp4-pp2-mbs1-ga128-zero0": 128,  # 32 x 1 x 128 = 4096 != 256
             "playbook-llama-3b/h100/pb-256gpu-dp32-tp8-pp1-mbs1-ga128-zero0": 128,  # 32 x 1 x 128 = 4096 != 256
             "playbook-llama-3b/h100/pb-256gpu-dp64-tp4-pp1-mbs1-ga64-zero0": 64,  # 64 x 1 x 64 = 4096 != 256
             "playbook-llama-8b/h100/pb-256gpu-dp32-tp8-pp1-mbs1-ga128-zero0": 128,  # 32 x 1 x 128 = 4096 != 256
             "playbook-llama-8b/h100/pb-256gpu-dp64-tp4-pp1-mbs1-ga64-zero0": 64,  # 64 x 1 x 64 = 4096 != 256
}


@pytest.mark.parametrize("document", sorted(CONTRADICTING))
def test_importer_records_the_statement_on_exactly_the_contradicting_rows(document: str) -> None:
    catalog = load_catalog(ROOT)
    rows = mb.read(DATA / document).rows
    contradicting = [r for r in rows if r.ga is not None and r.ga * r.mbs * r.dp != r.gbs]
    assert [(r.line, r.model, r.system, r.gbs, r.mbs, r.dp, r.ga) for r in contradicting] == CONTRADICTING[document]
    for row in rows:
        built = mb.build(row, catalog, "https://example.org/doc.md", None)
        stated = built["publication"].get("stated_gradient_accumulation")
        assert stated == (row.ga if row in contradicting else None), (row.line, row.variant)
        assert built["layout"]["gradient_accumulation"] == row.ga  # the layout keeps the published figure


@pytest.mark.slow
def test_committed_recipes_state_exactly_the_contradicting_ga(committed: Registry) -> None:
    found = {}
    for loaded in committed.recipes:
        r = loaded.recipe
        lay = r.layout
        contradicts = lay.gradient_accumulation is not None and \
            lay.gradient_accumulation * lay.rows_per_microbatch * lay.dp != r.workload.global_batch
        stated = r.publication.stated_gradient_accumulation if r.publication else None
        assert (stated is not None) == contradicts, loaded.id
        if stated is not None:
            assert stated == lay.gradient_accumulation
            found[loaded.id] = stated
    assert found == COMMITTED
