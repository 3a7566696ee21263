"""Checks before anything runs: the GPUs present, the environment the run script needs, its entry point."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from generator.catalog import Catalog
from generator.models import Recipe
from runner.environment import RUNNER_EXTRA_INSTALL, missing_runner_extra


@dataclass
class Gpus:
    names: list[str] = field(default_factory=list)
    source: str = "none"  # nvml | torch | none
    driver: str | None = None
    error: str | None = None
    # Distributions of the runner extra that were not installed to look with (nvidia-ml-py, torch): an empty list
    # with no GPUs found means the libraries looked and saw none (no GPU, or no driver).
    not_installed: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.names)


def _nvml_gpus() -> Gpus:
    """The GPUs NVML lists (no CUDA context); raises where NVML cannot be loaded or answers with an error."""
    import pynvml  # nvidia-ml-py; imported here so a CPU-only install never loads it

    def text(value: object) -> str:
        return value.decode() if isinstance(value, bytes) else str(value)

    pynvml.nvmlInit()
    try:
        devices = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(i)
            devices.append((i, text(pynvml.nvmlDeviceGetName(handle)), text(pynvml.nvmlDeviceGetUUID(handle))))
        driver = text(pynvml.nvmlSystemGetDriverVersion())
    finally:
        pynvml.nvmlShutdown()
    # NVML lists every GPU of the machine; the run sees those CUDA_VISIBLE_DEVICES leaves it.
    names = [name for _, name, _ in visible(devices, os.environ.get("CUDA_VISIBLE_DEVICES"))]
    return Gpus(names, "nvml", driver)


def detect_gpus() -> Gpus:
    """The GPUs of this machine: NVML first (no CUDA context), torch as the fallback. A library that is not
    installed is told apart from one that looked and found no GPU or driver (`not_installed`)."""
    not_installed = missing_runner_extra("pynvml", "torch")
    if "nvidia-ml-py" in not_installed:
        nvml_error = "NVML: nvidia-ml-py is not installed"
    else:
        try:
            return _nvml_gpus()
        except Exception as exc:  # noqa: BLE001 - no driver, no library: fall back to torch
            nvml_error = f"NVML: {exc}"
    if "torch" in not_installed:
        return Gpus([], "none", error=f"{nvml_error}; torch is not installed", not_installed=not_installed)
    try:
        import torch

        if torch.cuda.is_available():
            names = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
            return Gpus(names, "torch")
        error = f"{nvml_error}; torch: CUDA not available"
    except Exception as exc:  # noqa: BLE001
        error = f"{nvml_error}; torch: {exc}"
    return Gpus([], "none", error=error, not_installed=not_installed)


DECLARED_GPUS_ENV = "OPENRECIPES_GPUS"


def declared_gpus(value: str) -> Gpus:
    """GPUs declared in OPENRECIPES_GPUS ("8xNVIDIA H100 80GB HBM3", comma-separated parts), for a machine where
    neither NVML nor torch can see them (a container without the NVML library)."""
    names: list[str] = []
    for part in value.split(","):
        part = part.strip()
        if not part:
            continue
        count, sep, name = part.partition("x")
        if sep and count.strip().isdigit():
            names += [name.strip()] * int(count)
        else:
            names.append(part)
    return Gpus(names, DECLARED_GPUS_ENV)


def gpus_here() -> Gpus:
    """This machine's GPUs: those OPENRECIPES_GPUS declares, else what NVML or torch sees."""
    declared = os.environ.get(DECLARED_GPUS_ENV)
    return declared_gpus(declared) if declared else detect_gpus()


def visible(devices: list[tuple[int, str, str]], mask: str | None) -> list[tuple[int, str, str]]:
    """The (index, name, UUID) devices a CUDA program sees under CUDA_VISIBLE_DEVICES=mask (None: all). As CUDA
    reads it: indices or GPU UUIDs (a unique prefix will do), in the listed order; the list ends at the first
    entry that names no device; a device listed twice makes the whole list invalid (no device)."""
    if mask is None:
        return list(devices)
    out: list[tuple[int, str, str]] = []
    for token in (t.strip() for t in mask.split(",")):
        if token.isdigit():
            match = [d for d in devices if d[0] == int(token)]
        elif token.startswith("GPU-"):
            match = [d for d in devices if d[2].startswith(token)]
        else:
            match = []  # empty, negative, MIG-... or anything else ends the list
        if len(match) != 1:
            break
        if match[0] in out:
            return []
        out.append(match[0])
    return out


def gpu_type(name: str, catalog: Catalog) -> str | None:
    """Catalog GPU type of an NVML product name ("NVIDIA H100 80GB HBM3" -> "H100")."""
    for key, spec in catalog.gpus.items():
        if name in spec.nvml_names:
            return key
    folded = name.strip().lower()
    for key, spec in catalog.gpus.items():
        if folded in (n.lower() for n in spec.nvml_names):
            return key
    return None


class Refusal(Exception):
    """A preflight failure: one paragraph, what is wrong and what to do."""


def check_gpus(recipe: Recipe, catalog: Catalog, found: Gpus, recipe_path: str) -> None:
    want_type, want_local = recipe.gpu.type, min(recipe.gpu.count, recipe.gpu.per_node or recipe.gpu.count)
    if found.count == 0 and "nvidia-ml-py" in found.not_installed:
        # Not a verdict on the hardware: the library that lists NVIDIA GPUs is missing from this install.
        raise Refusal(
            f"Cannot list this machine's GPUs: nvidia-ml-py (NVML, the runner extra) is not installed for "
            f"{sys.executable} ({found.error}). Install the runner extra from the OpenRecipes checkout with "
            f"`{RUNNER_EXTRA_INSTALL}` and run again; {recipe_path} runs on {recipe.gpu.count} x {want_type}. If you "
            "ran it elsewhere, pass that run's log with --from-log LOG (no launch, no hardware check)."
        )
    if found.count == 0:
        raise Refusal(
            f"No NVIDIA GPU or driver found on this machine ({found.error or 'no devices'}). {recipe_path} runs on "
            f"{recipe.gpu.count} x {want_type}. Run it on such a machine, or, if you ran it elsewhere, pass that "
            "run's log with --from-log LOG (no launch, no hardware check)."
        )
    types = {gpu_type(n, catalog) for n in found.names}
    if None in types:
        unknown = sorted({n for n in found.names if gpu_type(n, catalog) is None})
        raise Refusal(
            f"This machine's GPUs ({', '.join(unknown)}) are not in catalog/gpus.yaml (no entry lists that name in "
            f"nvml_names), so their peak FLOP/s and the recipe's figures cannot be computed. Add the GPU to the "
            "catalog with its datasheet source, then run again."
        )
    if types != {want_type}:
        have = ", ".join(sorted(t for t in types if t))
        raise Refusal(
            f"{recipe_path} is a recipe for {want_type}, but this machine has {found.count} x {have} "
            f"({found.names[0]}). Figures measured here would not be the recipe's. Run it on {want_type}, or pass "
            f"--as-new NAME to write a new recipe for {have} (status measured) beside it and measure into that."
        )
    if found.count < want_local:
        raise Refusal(
            f"{recipe_path} needs {want_local} x {want_type} on this node, but {found.count} are visible "
            f"(CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', 'unset')}). Free or expose the GPUs, "
            "or run on a machine that has them; a recipe's layout is fixed to its GPU count."
        )


# Variables bash sets itself, which a script may read without the caller setting them.
_BASH_VARS = {
    "HOME", "PATH", "PWD", "OLDPWD", "RANDOM", "SECONDS", "LINENO", "HOSTNAME", "UID", "EUID", "PPID", "BASHPID",
    "BASH_SOURCE", "BASH_VERSION", "IFS", "SHELL", "USER", "REPLY", "OPTARG", "OPTIND", "FUNCNAME", "PIPESTATUS",
    "BASH", "HOSTTYPE", "OSTYPE", "MACHTYPE", "SHLVL", "EPOCHSECONDS", "EPOCHREALTIME", "GROUPS", "TMPDIR",
}
_REF = re.compile(r"(?<!\\)\$(?:\{(#?)([A-Za-z_][A-Za-z0-9_]*)([^}]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
_ASSIGN = re.compile(
    r"(?:^|[;&|(]\s*|\b(?:export|local|declare|typeset|readonly)\s+(?:-\w+\s+)*)([A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]]*\])?\+?="
)
_READ = re.compile(r"\bread\b((?:\s+-\w+)*)\s+([A-Za-z_][A-Za-z0-9_ ]*)")
_FOR = re.compile(r"\bfor\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\b")


def _strip_comments(script: str) -> str:
    out = []
    for line in script.splitlines():
        stripped = line.lstrip()
        out.append("" if stripped.startswith("#") else line)
    return "\n".join(out)


def script_env(script: str) -> tuple[set[str], set[str]]:
    """(variables the script reads without a default, variables it sets)."""
    text = _strip_comments(script)
    sets: set[str] = set()
    for line in text.splitlines():
        for m in _ASSIGN.finditer(line.strip()):
            sets.add(m.group(1))
        for m in _READ.finditer(line):
            sets.update(m.group(2).split())
        for m in _FOR.finditer(line):
            sets.add(m.group(1))
    reads: set[str] = set()
    for m in _REF.finditer(text):
        if m.group(2):
            modifier = m.group(3) or ""
            if modifier[:2] in (":-", ":=", ":+", ":?") or modifier[:1] in ("-", "=", "+"):
                continue  # has a default (or only tests whether it is set)
            reads.add(m.group(2))
        elif m.group(4):
            reads.add(m.group(4))
    return reads, sets


def check_env(recipe: Recipe, recipe_path: str, environ: dict[str, str] | None = None) -> None:
    environ = dict(os.environ) if environ is None else environ
    reads, sets = script_env(recipe.run)
    missing = sorted(v for v in reads - sets - set(recipe.env) - _BASH_VARS if not environ.get(v))
    if missing:
        example = " ".join(f"{v}=..." for v in missing)
        raise Refusal(
            f"The run script of {recipe_path} uses {', '.join('$' + v for v in missing)}, which "
            f"{'is' if len(missing) == 1 else 'are'} not set here. These are inputs you provide (for example a "
            f"checkpoint and the prepared dataset; the recipe's notes and workload.dataset say which). Set "
            f"{'it' if len(missing) == 1 else 'them'} and run again, e.g. `{example} python -m runner remeasure "
            f"{recipe_path}`."
        )


_PY = re.compile(r"(?:^|[\s;&|(])(?:python3?|torchrun|deepspeed|accelerate\s+launch)\b([^\n]*)")


def entry_points(script: str) -> list[tuple[str, str]]:
    """[(kind, target)]: python files and -m modules the script launches (first non-option argument)."""
    out: list[tuple[str, str]] = []
    joined = _strip_comments(script).replace("\\\n", " ")
    for m in _PY.finditer(joined):
        # Words up to the end of the command (a quote, parenthesis or separator ends a word).
        words = re.findall(r"[^\s\"'()`;|&]+", m.group(1).split("#")[0])
        i = 0
        while i < len(words):
            w = words[i]
            if w == "-m" and i + 1 < len(words):
                out.append(("module", words[i + 1]))
                break
            if w in ("-c",):
                break
            if w.startswith("-"):
                i += 2 if "=" not in w and w in ("--nproc_per_node", "--nproc-per-node", "--nnodes", "--master_port",
                                                "--master-port", "--node_rank", "--node-rank", "--rdzv_endpoint",
                                                "--rdzv-endpoint", "--master_addr", "--master-addr") else 1
                continue
            if w.endswith(".py") and "$" not in w:
                out.append(("file", w))
            break
    return out


def check_entry(recipe: Recipe, recipe_path: str, workdir: Path) -> None:
    missing = []
    for kind, target in entry_points(recipe.run):
        if kind == "file" and not (workdir / target).is_file():
            missing.append(f"{target} (no such file in {workdir})")
        elif kind == "module" and importlib.util.find_spec(target.split(".")[0]) is None:
            missing.append(f"python module {target} (not importable by {sys.executable})")
    if missing:
        framework = recipe.stack.framework.split()[0]
        raise Refusal(
            f"The run script of {recipe_path} launches {', '.join(missing)}. It expects the framework "
            f"({framework}) checked out and installed: run from the framework's checkout (or pass --workdir DIR), "
            "inside the training image the recipe's stack names."
        )
