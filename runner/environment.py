"""The software stack actually present, and how it differs from the recipe's ``stack``.

Versions come from package metadata, not imports: importing torch costs seconds and a CUDA context, and
the runner's own start-up should stay cheap. NCCL prints its version into the training log (NCCL_DEBUG),
which is the version the run really used, so the log's figure wins over the installed wheel's.
"""

from __future__ import annotations

import importlib.metadata as md
import importlib.util
import os
import platform
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from generator.models import Recipe

# The optional install a GPU run needs (pyproject's `runner` extra); the base install reads logs and writes recipes.
RUNNER_EXTRA_INSTALL = "pip install -e '.[runner]'"
# Import name -> the distribution of the runner extra that provides it (what pip calls it).
RUNNER_EXTRA_DISTRIBUTIONS = {
    "torch": "torch",
    "megatron.core": "megatron-core",
    "pynvml": "nvidia-ml-py",
    "rich": "rich",
}


def importable(module: str) -> bool:
    """Whether `module` is installed for this interpreter, found without importing it (a parent package of a dotted
    name is imported: `megatron` for `megatron.core`, which is cheap)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a missing parent package, or a module with no spec
        return False


def missing_runner_extra(*modules: str) -> list[str]:
    """The distributions of the runner extra, of those providing `modules`, that are not installed here."""
    return [RUNNER_EXTRA_DISTRIBUTIONS.get(m, m) for m in modules if not importable(m)]


def runner_extra_message(purpose: str, missing: list[str]) -> str:
    """One line: what needs the runner extra, what of it is missing for which interpreter, and the install command."""
    names = " and ".join(missing) if len(missing) <= 2 else ", ".join(missing[:-1]) + " and " + missing[-1]
    verb = "is" if len(missing) == 1 else "are"
    return (f"{purpose} needs the runner extra: {names} {verb} not installed for {sys.executable}. Install it from "
            f"the OpenRecipes checkout with `{RUNNER_EXTRA_INSTALL}`.")


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


def framework_version(framework: str | None) -> str | None:
    """`name version` of the recipe's framework where its first word is an installed distribution (torchtitan,
    transformers, ...); None otherwise (the bundled engine is this checkout, recorded by the provenance commit)."""
    word = framework.split()[0].strip(",;:") if framework and framework.strip() else ""
    version = _version(word) if word else None
    return f"{word} {version}" if version else None


def capture(gpu_names: list[str] | None = None, driver: str | None = None, nccl: str | None = None,
            framework: str | None = None) -> dict[str, str | None]:
    """The stack present here; `framework` (the recipe's stack.framework) adds its installed version, if any."""
    found = framework_version(framework)
    return ({"framework": found} if found else {}) | {
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
    framework = env.get("framework")
    if framework and stack.framework.split()[0].strip(",;:") == framework.split()[0]:
        m = _FIRST_VERSION.search(stack.framework)
        have = framework.split()[1]
        if m and have.split("+")[0] != m.group(0).split("+")[0]:
            out.append(f"framework: recipe {framework.split()[0]} {m.group(0)}, here {have}")
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


# Untracked files the runner itself leaves in a registry (its run logs and locks): they do not make a tree dirty.
_RUNS_DIR = ".openrecipes-runs"
_GIT_TIMEOUT_S = 10.0


def _git(folder: Path, *args: str) -> str | None:
    """stdout of `git -C folder args`, or None where git is missing, fails or hangs. GIT_* variables are dropped (a
    hook's GIT_DIR would name another repository); --no-optional-locks: `status` never takes the index lock, which a
    concurrent commit may hold."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    try:
        done = subprocess.run(["git", "--no-optional-locks", "-C", str(folder), *args], capture_output=True, env=env,
                              timeout=_GIT_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", errors="replace")


def _checkout(folder: Path, tracked: str | None = None) -> str | None:
    """The top folder of the git checkout holding `folder`, or None. With `tracked` (a path under folder), only a
    checkout that tracks it: an installed copy of the runner inside an ignored .venv of some checkout is not that
    checkout's code."""
    if tracked is not None and _git(folder, "ls-files", "--error-unmatch", "--", tracked) is None:
        return None
    top = _git(folder, "rev-parse", "--show-toplevel")
    return top.strip() or None if top is not None else None


def _dirty(top: str) -> bool | None:
    """Whether the checkout differs from its commit: any change, staged or not, and any untracked file except under
    .openrecipes-runs/ (the runner's own logs and locks)."""
    out = _git(Path(top), "status", "--porcelain=v1", "-z", "--untracked-files=normal")
    if out is None:
        return None
    # NUL-separated "XY path" entries (a rename's old path follows as its own field, after an entry counted already).
    for entry in out.split("\0"):
        if not entry:
            continue
        if entry.startswith("?? ") and _RUNS_DIR in Path(entry[3:]).parts:
            continue
        return True
    return False


def _state(top: str | None) -> tuple[str | None, bool | None]:
    if top is None:
        return None, None
    head = _git(Path(top), "rev-parse", "--verify", "--quiet", "HEAD")
    return (head.strip() or None if head is not None else None), _dirty(top)


def provenance(root: Path) -> dict[str, str | bool | None]:
    """The code that measured, as git knows it: `commit` (HEAD of the checkout the runner runs from) and `dirty`
    (that checkout differs from it); with `registry_commit` and `registry_dirty` for the registry root `root` where
    it lies in another checkout (or in none). None for what cannot be known: git missing, not a checkout, no commit
    yet. No paths: the evidence is committed and must not carry the measuring machine's folders."""
    code = Path(__file__).resolve().parent.parent
    code_top = _checkout(code, "runner/environment.py")
    commit, dirty = _state(code_top)
    out: dict[str, str | bool | None] = {"commit": commit, "dirty": dirty}
    registry_top = _checkout(Path(root).resolve()) if Path(root).is_dir() else None
    if registry_top is None or code_top is None or Path(registry_top).resolve() != Path(code_top).resolve():
        out["registry_commit"], out["registry_dirty"] = _state(registry_top)
    return out


def evidence_provenance(recipe: Recipe, root: Path) -> dict[str, Any]:
    """The evidence's `provenance`: provenance(root), and `image` ({name, digest}) where the recipe's stack states
    the container image the training ran in (the digest names that image; its tag may since name another)."""
    out: dict[str, Any] = dict(provenance(root))
    if recipe.stack.image is not None:
        out["image"] = {"name": recipe.stack.image.name, "digest": recipe.stack.image.digest}
    return out
