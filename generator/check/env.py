"""Rules: the variables a recipe's `env` may not set, because they change what runs beside the recipe's own script.

A launch exports the recipe's env into the environment the runner's own commands run in too (the Slurm job's
`srun` and per-node wrapper, the torchrun rendezvous the wrapper starts, bash's start-up), so a name that picks the
programs, libraries or Python that run, that bash reads as it starts, or that the runner itself reads, is reserved.
A run script that needs one sets it itself (`export PATH=...` in `run`): it then changes that script alone. The
runner's launchers refuse the same names (runner/launchers), from this one list.
"""

from __future__ import annotations

from generator.check.context import RecipeContext

# Which programs, libraries and Python code run, and where their settings come from.
CHOOSES_CODE = {"PATH", "LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP",
                "PYTHONUSERBASE", "PYTHONSAFEPATH", "PYTHONNOUSERSITE", "PYTHONEXECUTABLE", "PYTHONPLATLIBDIR", "HOME"}
# What bash reads as a script starts or that changes how it parses the rest.
BASH_READS = {"BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "IFS", "PS4", "PROMPT_COMMAND", "CDPATH", "GLOBIGNORE",
              "POSIXLY_CORRECT"}
# What the runner reads: the GPUs its preflight checked, the folder of the torchrun shim (runner/launchers/
# rendezvous.py's WRAPPER), and what torchrun sets for each process it starts (the bundled engine and the framework
# launchers read them).
RUNNER_READS = {"CUDA_VISIBLE_DEVICES", "TMPDIR", "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK",
                "MASTER_ADDR", "MASTER_PORT"}
RESERVED_PREFIXES = {
    "OPENRECIPES_": "the runner's own: it names the interpreter, the node count and the rendezvous every node joins",
    "SLURM_": "Slurm reads SLURM_* as the job's own settings", "SRUN_": "srun reads SRUN_* as its options",
    "SBATCH_": "sbatch reads SBATCH_* as its options", "SALLOC_": "salloc reads SALLOC_* as its options",
    "PMI_": "the process manager reads PMI_* as the job's own settings",
    "PMIX_": "the process manager reads PMIX_* as the job's own settings",
    "BASH_FUNC_": "bash reads BASH_FUNC_* as function definitions as it starts",
    "TORCHELASTIC_": "torchrun reads TORCHELASTIC_* as its own settings",
    "PET_": "torchrun reads PET_* as its command-line options (the runner's rendezvous parses them)",
}


def reserved(name: str) -> str | None:
    """Why a recipe's env may not set `name`, or None."""
    if name in CHOOSES_CODE:
        return "it chooses which programs, libraries or Python code run, for the runner's own commands too"
    if name in BASH_READS:
        return "bash reads it as a script starts: it would change what every node runs"
    if name in RUNNER_READS:
        return "the runner reads it (the GPUs it checked, the torchrun it starts, each process's rank)"
    prefix = next((p for p in RESERVED_PREFIXES if name.startswith(p)), None)
    return RESERVED_PREFIXES[prefix] if prefix else None


def message(name: str, why: str) -> str:
    return (f"{name} is reserved ({why}); a recipe's env may not set it: set it in the run script itself if the "
            "training needs it")


def env_names(ctx: RecipeContext) -> None:
    for name in ctx.recipe.env:
        why = reserved(name)
        if why is not None:
            ctx.bad(message(name, why), "env", name)


RULES = (env_names,)
