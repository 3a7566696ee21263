"""The training framework a recipe's `stack.framework` names: the one home of the normalisation that the site's
Framework filter and column, the frameworks side by side and the CSV downloads use.

A submitter states a framework as free text ('megatron-bridge (NeMo 26.04 container)', MLPerf's system-wide
'PyTorch, NeMo Framework NVIDIA Release 25.04' or 'NGC Pytorch 24.09, NGC HugeCTR 24.09, NVIDIA Nemo 24.09'). The
name is read from that text, never guessed from elsewhere: the first of FRAMEWORKS (most specific first) whose
pattern the text matches, case-insensitively, so 'Pytorch' and 'PyTorch', 'nemo' and 'NeMo' are one value. A text
that names none of them (a platform only, such as 'ROCm 6.4.0-47', or only a framework of another field, such as
DGL) is NOT_NAMED. The text itself stays in the recipe and is shown beside the name.
"""

from __future__ import annotations

import re

# (name, pattern): the first match wins, so a text that names a library and the framework under it ('NeMo 2.1.0,
# Megatron-LM, PyTorch ...') is the library's; a list of several (MLPerf's) is its LLM framework (NeMo) before the
# base it is built on (PyTorch), and PyTorch before MXNet, DGL or HugeCTR (which train no language model).
FRAMEWORKS: tuple[tuple[str, str], ...] = (
    ("OpenRecipes engine", r"\bopenrecipes-engine\b"),
    ("NeMo AutoModel", r"\bnemo[- ]automodel\b"),
    ("Megatron-Bridge", r"\bmegatron[- ]bridge\b"),
    ("torchtitan", r"\btorchtitan\b"),
    ("nanotron", r"\bnanotron\b"),
    ("LLM Foundry", r"\bllm-foundry\b|\bllm foundry\b"),
    ("JAX/MaxText", r"\bmaxtext\b|\bjax\b"),
    ("miles", r"\bmiles\b"),
    ("slime", r"\bslime\b"),
    ("LLMBoost", r"\bllmboost\b"),
    ("Transformers", r"\btransformers\b"),
    ("NeMo", r"\bnemo\b"),
    ("Megatron-LM", r"\bmegatron-lm\b|\bmegatron\b"),
    ("PyTorch", r"\bpytorch\b"),
    ("MXNet", r"\bmxnet\b"),
)
NOT_NAMED = "not named"

_PATTERNS = tuple((name, re.compile(pattern, re.IGNORECASE)) for name, pattern in FRAMEWORKS)


def framework_name(stated: str) -> str:
    """The framework `stated` names: 'megatron-bridge (NeMo 26.04 container)' -> 'Megatron-Bridge',
    'NGC Pytorch 24.09, NGC HugeCTR 24.09, NVIDIA Nemo 24.09' -> 'NeMo', 'Pytorch 25.04' -> 'PyTorch',
    'ROCm 6.4.0-47' -> NOT_NAMED."""
    for name, pattern in _PATTERNS:
        if pattern.search(stated):
            return name
    return NOT_NAMED
