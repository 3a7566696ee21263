"""Seeded synthetic token streams that depend on torch alone, so that every framework trains on the same rows.

Row r of a stream is a function of (kind, seed, vocabulary size, row length, r) only: a framework that asks for
rows 16..23 gets the same tokens as another that asked for them one at a time, on any device.

``markov``: a learnable stream whose loss has a known floor. A hidden state walks a cycle of K = MARKOV_STATES
states (4,096; half the vocabulary of a tiny test model) by one of B = MARKOV_BRANCHES fixed offsets drawn uniformly
at each position, and each state is written as its own token (a seeded subset of the vocabulary). Knowing the
current token fixes the state, so the next token is one of B equally likely successors: the best possible loss is
ln B, the unigram loss ln K, and a model that has learned nothing of the vocabulary starts near (or above) ln V.
``pattern`` (:class:`PatternStream`): the engine's default, a bijective bigram over the whole vocabulary.

Unlike the ``pattern`` stream (a bijective bigram over the whole vocabulary, learned too slowly for a
100-step check), a model's loss falls from ~12 through ln K within tens of steps and then towards ln B.
"""

from __future__ import annotations

import math

MARKOV_STATES = 4096  # K: tokens the stream uses (a seeded subset of the vocabulary)
MARKOV_BRANCHES = 8  # B: equally likely successors of each token; the loss floor is ln B
_ROW_SEED_STRIDE = 1_000_003  # a prime: row seeds of neighbouring stream seeds do not collide for < 1e6 rows


def markov_floor() -> float:
    """The cross-entropy floor of the markov stream (nats): ln B."""
    return math.log(MARKOV_BRANCHES)


def markov_states(vocab_size: int) -> int:
    """K for a vocabulary: MARKOV_STATES, or half the usable vocabulary of a tiny test model."""
    return min(MARKOV_STATES, (vocab_size - 1) // 2)


def markov_unigram_loss(vocab_size: int) -> float:
    """The loss of a model that knows which K tokens occur but nothing of their order (nats): ln K."""
    return math.log(markov_states(vocab_size))


class MarkovStream:
    """Rows of ``row_tokens + 1`` tokens (inputs and shifted labels) of the markov stream."""

    def __init__(self, seed: int, vocab_size: int, row_tokens: int) -> None:
        import torch

        self.states = markov_states(vocab_size)
        if self.states <= MARKOV_BRANCHES:
            raise ValueError(f"the markov stream needs a vocabulary of at least {2 * MARKOV_BRANCHES + 3} tokens, "
                             f"not {vocab_size}")
        self.seed, self.row_tokens = seed, row_tokens
        gen = torch.Generator().manual_seed(seed)
        # Token 0 never appears (as in the engine's other streams): states map into [1, V).
        self.tokens = (torch.randperm(vocab_size - 1, generator=gen) + 1)[:self.states]
        # Distinct offsets in [1, K): the B successors of a state are distinct, so the floor is exactly ln B.
        self.offsets = torch.randperm(self.states - 1, generator=gen)[:MARKOV_BRANCHES] + 1

    def row(self, index: int):
        """Row `index` as a CPU int64 tensor of row_tokens + 1 tokens."""
        import torch

        gen = torch.Generator().manual_seed(self.seed * _ROW_SEED_STRIDE + index)
        start = torch.randint(0, self.states, (1,), generator=gen)
        choices = torch.randint(0, MARKOV_BRANCHES, (self.row_tokens,), generator=gen)
        states = torch.cat([start, start + torch.cumsum(self.offsets[choices], 0)]) % self.states
        return self.tokens[states]

    def rows(self, first: int, count: int):
        """Rows first .. first + count - 1 stacked, shape (count, row_tokens + 1), on the CPU."""
        import torch

        return torch.stack([self.row(first + j) for j in range(count)])


class PatternStream:
    """The engine's default rows: row r is perm[(start_r + i) mod (V - 1)] for a seeded permutation perm of [1, V)
    and a seeded start_r, so each token fixes the next (a bijective bigram over the vocabulary).

    The starts are drawn for `total_rows` rows at once (steps x global batch, as the engine always drew them), so a
    row depends on the run's total row count as well; pass the same count in every framework.
    """

    def __init__(self, seed: int, vocab_size: int, row_tokens: int, total_rows: int) -> None:
        import torch

        gen = torch.Generator().manual_seed(seed)
        self.seed, self.row_tokens, self.total_rows = seed, row_tokens, total_rows
        # Token 0 never appears: the permutation is shifted into [1, V).
        self.perm = torch.randperm(vocab_size - 1, generator=gen) + 1
        self.starts = torch.randint(0, vocab_size - 1, (total_rows,), generator=gen)
        # The engine's `random` mode draws its per-row seeds next, from the same generator.
        self.random_seeds = torch.randint(1, 2**31 - 1, (total_rows,), generator=gen).tolist()
        self.offsets = torch.arange(row_tokens + 1)

    def rows(self, first: int, count: int):
        """Rows first .. first + count - 1 stacked, shape (count, row_tokens + 1), on the CPU."""
        if first < 0 or first + count > self.total_rows:
            raise IndexError(f"pattern rows {first}..{first + count - 1} outside the stream's {self.total_rows} rows")
        starts = self.starts[first:first + count]
        return self.perm[(starts[:, None] + self.offsets[None, :]) % self.perm.numel()]


STREAMS = ("pattern", "markov")
DEFAULT_STREAM = "pattern"  # what a launcher draws when neither the command nor the recipe names a stream


def stated_stream(recipe, override: str | None = None) -> str:
    """The stream a run draws its rows from: the command's --data, else the recipe's workload.dataset.stream, else
    DEFAULT_STREAM (the recipes measured before the field existed were drawn from it)."""
    if override:
        return override
    dataset = recipe.workload.dataset
    stream = dataset.stream if dataset is not None else None
    return stream.value if stream is not None else DEFAULT_STREAM


def make_stream(kind: str, seed: int, vocab_size: int, row_tokens: int, total_rows: int):
    """The stream every framework draws its rows from: ``.rows(first, count)`` gives (count, row_tokens + 1)."""
    if kind == "markov":
        return MarkovStream(seed, vocab_size, row_tokens)
    if kind == "pattern":
        return PatternStream(seed, vocab_size, row_tokens, total_rows)
    raise ValueError(f"unknown stream {kind!r} (known: {', '.join(STREAMS)})")


def step_rows(step: int, micro: int, rows_per_microbatch: int, num_microbatches: int, global_batch: int,
              dp_rank: int = 0) -> int:
    """The first stream row of micro-batch `micro` of `step` on data-parallel rank `dp_rank` (the engine's order:
    each step takes the next global batch of rows, each rank a contiguous block of it)."""
    return step * global_batch + dp_rank * rows_per_microbatch * num_microbatches + micro * rows_per_microbatch
