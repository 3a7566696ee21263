"""The software stack actually present, and how it differs from the recipe's ``stack``.

Versions come from package metadata, not imports: importing torch costs seconds and a CUDA context, and
the runner's own start-up should stay cheap. NCCL prints its version into the training log (NCCL_DEBUG),
which is the version the run really used, so the log's figure wins over the installed wheel's.
"""

from __future__ import annotations

import importlib.metadata as md
import importlib.util
import platform
import re
from pathlib import Path

from generator.models import Recipe


def _version(*dists: str) -> str | None:
    for dist in dists:
        try:
            return md.version(dist)
        except md.PackageNotFoundError:
            continue
    return None


def _torch_cuda() -> str | None:
    """torch.version.cuda, read from torch/version.py without importing torch."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "version.py"
    try:
        m = re.search(r"^cuda(?::\s*\S+)?\s*=\s*'([^']*)'", path.read_text(), re.M)
    except OSError:
        return None
    return m.group(1) if m else None


def capture(gpu_names: list[str] | None = None, driver: str | None = None, nccl: str | None = None) -> dict[str, str | None]:
    return {
        "python": platform.python_version(),
        "pytorch": _version("torch"),
        "cuda": _torch_cuda(),
        "nccl": nccl or _version("nvidia-nccl-cu13", "nvidia-nccl-cu12", "nvidia-nccl-cu11"),
        "driver": driver,
        "megatron_core": _version("megatron-core", "megatron_core"),
        "megatron_bridge": _version("megatron-bridge", "megatron_bridge"),
        "transformer_engine": _version("transformer-engine", "transformer_engine", "transformer-engine-cu12"),
        "gpu_name": gpu_names[0] if gpu_names else None,
        "gpu_count": str(len(gpu_names)) if gpu_names else None,
    }


_FIRST_VERSION = re.compile(r"\d+(?:\.\d+)+[\w.+-]*")


def differences(recipe: Recipe, env: dict[str, str | None]) -> list[str]:
    """Where a captured version is not the one the recipe's stack states (first version number of each)."""
    out = []
    stack = recipe.stack
    pairs = {
        "python": stack.python,
        "pytorch": stack.pytorch,
        "cuda": stack.cuda,
        "nccl": stack.nccl,
        "driver": stack.driver,
        "megatron_core": stack.megatron_core,
        "megatron_bridge": stack.megatron_bridge,
        "transformer_engine": stack.transformer_engine,
        "gpu_name": stack.gpu_name,
    }
    for key, stated in pairs.items():
        have = env.get(key)
        if not stated or not have:
            continue
        if key == "gpu_name":
            if stated.strip() != have.strip():
                out.append(f"gpu_name: recipe {stated!r}, here {have!r}")
            continue
        m = _FIRST_VERSION.search(stated)
        want = m.group(0) if m else stated
        if not (have == want or have.startswith(want + "+") or have.split("+")[0] == want.split("+")[0]):
            out.append(f"{key}: recipe {want}, here {have}")
    return out
