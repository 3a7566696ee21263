"""The markov stream (runner/engine/streams.py) and the engine's convergence arms on CPU.

The stream is what every framework's convergence arm trains on: its rows must depend on the row index alone, each
token must have exactly B successors (so its loss floor is ln B), and two engine arms that differ only in a kernel
path must start from the same weights and pass `runner convergence` while the loss falls well below ln V.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from runner.engine import SUMMARY_PREFIX
from runner.engine.streams import (
    MARKOV_BRANCHES,
    MarkovStream,
    markov_floor,
    markov_states,
    markov_unigram_loss,
)
from tests.engine import forked_ranks
from tests.engine.support import CPU_FLAGS, CPU_TRAIN, ROOT, VOCAB, cpu_env, make_registry

LLAMA_VOCAB = 128_256


def test_rows_depend_on_the_row_index_alone() -> None:
    a = MarkovStream(1234, LLAMA_VOCAB, 512)
    b = MarkovStream(1234, LLAMA_VOCAB, 512)
    together = a.rows(16, 8)
    one_by_one = [b.row(16 + j) for j in range(8)]
    assert together.shape == (8, 513)
    assert all(bool((together[j] == one_by_one[j]).all()) for j in range(8))
    assert not bool((together[0] == together[1]).all())
    other_seed = MarkovStream(4321, LLAMA_VOCAB, 512).rows(16, 8)
    assert not bool((together == other_seed).all())


def test_each_token_has_exactly_b_successors_within_k_tokens() -> None:
    stream = MarkovStream(1234, LLAMA_VOCAB, 8192)
    rows = stream.rows(0, 64)
    assert int(rows.min()) >= 1 and int(rows.max()) < LLAMA_VOCAB
    assert len(set(rows.flatten().tolist())) <= markov_states(LLAMA_VOCAB)
    successors: dict[int, set[int]] = {}
    for row in rows.tolist():
        for a, b in zip(row, row[1:], strict=False):
            successors.setdefault(a, set()).add(b)
    counts = {len(s) for s in successors.values()}
    # 524k transitions, about 128 per token: every successor of every token is seen (a miss has odds ~1e-3).
    assert counts == {MARKOV_BRANCHES}


def test_the_empirical_conditional_entropy_is_the_floor() -> None:
    rows = MarkovStream(7, LLAMA_VOCAB, 8192).rows(0, 64)
    pairs: dict[tuple[int, int], int] = {}
    firsts: dict[int, int] = {}
    for row in rows.tolist():
        for a, b in zip(row, row[1:], strict=False):
            pairs[(a, b)] = pairs.get((a, b), 0) + 1
            firsts[a] = firsts.get(a, 0) + 1
    n = sum(pairs.values())
    entropy = -sum(c / n * math.log(c / firsts[a]) for (a, _), c in pairs.items())
    # The plug-in estimate is biased low by about (B - 1) / (2 x 128 visits per token) = 0.03 nats.
    assert markov_floor() - 0.05 < entropy < markov_floor()
    assert markov_floor() < markov_unigram_loss(LLAMA_VOCAB) < math.log(LLAMA_VOCAB)


def test_a_tiny_vocabulary_uses_half_of_it_and_a_too_small_one_is_refused() -> None:
    assert markov_states(VOCAB) == (VOCAB - 1) // 2
    with pytest.raises(ValueError, match="vocabulary of at least"):
        MarkovStream(1, 16, 8)


def test_warmup_is_linear_then_constant() -> None:
    from generator.figures import scheduled_lr

    assert [scheduled_lr(1.0, 4, "constant", 0.0, s, 6) for s in range(6)] == [0.25, 0.5, 0.75, 1.0, 1.0, 1.0]
    assert scheduled_lr(3e-4, 0, "constant", 0.0, 0, 10) == 3e-4


def _arm(recipe: Path, log: Path, *flags: str) -> dict:
    proc = forked_ranks.run([str(CPU_TRAIN), "train", str(recipe), *CPU_FLAGS.split(), "--steps", "40", "--data",
                             "markov", "--warmup-steps", "5", "--lr", "3e-3", *flags], cwd=ROOT, env=cpu_env(),
                            timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    log.write_text(proc.stdout, encoding="utf-8")
    summary = next(line for line in proc.stdout.splitlines() if line.startswith(SUMMARY_PREFIX))
    return json.loads(summary[len(SUMMARY_PREFIX):])


@pytest.mark.slow
def test_two_arms_start_alike_and_pass_the_convergence_check(tmp_path: Path) -> None:
    recipe = make_registry(tmp_path, steps=40, precision="fp32")
    candidate = _arm(recipe, tmp_path / "candidate.log")
    reference = _arm(recipe, tmp_path / "reference.log", "--attention", "unfused", "--cross-entropy", "megatron")
    assert candidate["options"]["schedule"]["warmup_steps"] == 5 and candidate["options"]["data"] == "markov"
    assert candidate["init_weight_norm"] == reference["init_weight_norm"] > 0
    proc = subprocess.run([sys.executable, "-m", "runner", "convergence", str(tmp_path / "candidate.log"),
                           str(tmp_path / "reference.log"), "--json"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(proc.stdout)
    assert result["result"] == "pass" and result["steps"] == 40
    # The loss falls clearly: from about ln V to below the unigram loss ln K of the stream.
    assert result["final_loss_reference"] < markov_unigram_loss(VOCAB) < math.log(VOCAB)
