"""From a recipe and its model card to the engine's plan; everything the engine refuses is refused here.

No torch or megatron import: the checks run in the generator's tests and on machines without a GPU.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

from generator.catalog import Architecture
from generator.load import load_recipe
from generator.models import Recipe
from generator.registry import load_catalog
from runner.engine.streams import DEFAULT_STREAM, stated_stream

ATTENTION_BACKENDS = ("sdpa", "unfused")
FRAMEWORK = "openrecipes-engine"

# The fields of a model card's architecture the engine builds (runner/engine/train.py: megatron's GPT decoder of
# one global attention kind, MHA or GQA with RoPE and optional QK RMSNorm, a SwiGLU MLP, RMSNorm, no biases; the
# attention kind's own limits are checked in make_engine_plan). Any other field a card sets names a part the engine lacks,
# and the model is refused: trained as a dense stand-in, its figures would be claimed under the real model's
# parameter count. A field the catalog gains later (Mamba layers, say) is refused the same way until the engine
# builds it and it is named here.
ENGINE_BUILDS = frozenset({"layers", "hidden_size", "ffn_hidden_size", "gated_ffn", "attention_heads", "attention",
                           "layer_pattern", "vocab_size", "tied_embeddings", "qk_norm", "norm_eps", "rope_base"})
# What each such field is, for the refusal's reason.
LACKING = {
    "moe": "mixture-of-experts layers (routed expert MLPs)",
    "mla": "multi-latent attention",
    "mtp_layers": "multi-token-prediction layers",
    "attention_sinks": "attention-sink logits",
    "linear_bias": "linear biases",
    "hybrid_pattern": "hybrid Mamba-2 / attention / MLP / MoE blocks",
    "mamba": "Mamba-2 mixers",
    "mtp_pattern": "multi-token-prediction layers",
    "mtp_repeated": "multi-token-prediction layers",
}


class EngineError(Exception):
    """A recipe the engine cannot run; str() names the file and the field."""

    def __init__(self, path: str, field_name: str, message: str) -> None:
        super().__init__(f"{path}: {field_name}: {message}")
        self.path = path
        self.field = field_name
        self.message = message


@dataclass(frozen=True)
class EnginePlan:
    recipe_path: str
    recipe_id: str
    model: str
    arch: Architecture
    kv_heads: int
    head_dim: int
    tp: int
    pp: int
    dp: int
    sequence_parallel: bool
    first_stage_layers: int | None
    last_stage_layers: int | None
    recompute_granularity: str  # none | selective | full
    recompute_method: str | None
    recompute_num_layers: int | None
    recompute_modules: tuple[str, ...]
    rows_per_microbatch: int
    global_batch: int
    row_tokens: int
    num_microbatches: int
    steps: int
    precision: str
    attention_backend: str
    vocab_size: int  # padded so that it divides by TP
    seed: int = 1234
    notes: tuple[str, ...] = field(default_factory=tuple)
    stated_schedule: object = None  # the recipe's workload.schedule (generator.models.Schedule) or None
    stream: str = DEFAULT_STREAM  # the rows' stream (runner/engine/streams.py): --data, else the recipe's, else pattern

    @property
    def world_size(self) -> int:
        return self.tp * self.pp * self.dp

    @property
    def tokens_per_step(self) -> int:
        return self.global_batch * self.row_tokens


def have_transformer_engine() -> bool:
    return importlib.util.find_spec("transformer_engine") is not None


def attention_backend_of(recipe: Recipe) -> str:
    """The recipe's stack.attention_backend, first word ('sdpa', 'unfused'); SDPA when unset."""
    text = (recipe.stack.attention_backend or "sdpa").strip().lower()
    return text.split()[0].rstrip(",;:") if text else "sdpa"


def make_engine_plan(
    recipe_path: Path | str,
    root: Path | None = None,
    *,
    steps: int | None = None,
    attention: str | None = None,
    rows_per_microbatch: int | None = None,
    recompute: str | None = None,
    data: str | None = None,
) -> EnginePlan:
    """Loads the recipe and its model card and checks every layout field the engine uses."""
    path = Path(recipe_path)
    root = root or _registry_root(path)
    loaded = load_recipe(path)
    recipe = loaded.recipe
    catalog = load_catalog(root)

    def fail(field_name: str, message: str) -> EngineError:
        line, col = loaded.position(*field_name.split("."))
        return EngineError(f"{loaded.display}:{line}:{col}", field_name, message)

    card = catalog.models.get(recipe.model)
    if card is None:
        # A card the catalog could not read (a field it does not know, say) is missing for that reason: say it.
        why = "".join(f"; {problem}" for problem in catalog.problems)
        raise fail("model", f"'{recipe.model}' is not in catalog/models/{why}")
    arch = card.architecture
    if arch is None:
        raise fail("model", f"the model card of '{recipe.model}' has no architecture")
    lacking = lacking_parts(arch)
    if lacking:
        raise fail("model", f"'{recipe.model}' has {'; '.join(lacking)}, which the engine does not build; it trains "
                   "dense decoders only and never stands one in for another model")
    kinds = {arch.attention[k] for k in arch.layer_pattern}
    if len(kinds) != 1:
        raise fail("model", "the engine builds one attention kind per model; this card mixes several")
    kind = next(iter(kinds))
    if kind.window is not None:
        raise fail("model", "sliding-window attention is not supported by the engine")
    if kind.shared_kv:
        raise fail("model", "shared key-value projections are not supported by the engine")
    if not arch.gated_ffn:
        raise fail("model", "the engine builds SwiGLU MLPs only (gated_ffn: true)")

    lay = recipe.layout
    if lay.cp > 1:
        raise fail("layout.cp", "context parallel needs transformer-engine's attention, which the engine does not use"
                   + ("" if have_transformer_engine() else " (and transformer-engine is not installed)"))
    if recipe.workload.precision.value not in ("bf16", "fp32"):
        raise fail("workload.precision", f"{recipe.workload.precision.value} needs transformer-engine's FP8/FP4 "
                   "recipes; the engine runs bf16 or fp32")
    if lay.ep > 1 or lay.etp > 1 or lay.dispatcher is not None:
        raise fail("layout.ep", "the engine trains dense models only (ep 1, etp 1, no dispatcher)")
    if lay.vpp > 1:
        raise fail("layout.vpp", "interleaved (virtual) pipeline stages are not implemented in the engine")
    if lay.fsdp:
        raise fail("layout.fsdp", "FSDP is not implemented in the engine")
    if lay.offload is not None and lay.offload.optimizer_fraction > 0:
        raise fail("layout.offload", "optimizer CPU offload is not implemented in the engine")
    if lay.max_tokens_per_gpu is not None:
        raise fail("layout.max_tokens_per_gpu", "dynamic batching is not implemented; rows have a fixed length")
    if lay.sequence_parallel and lay.tp == 1:
        raise fail("layout.sequence_parallel", "sequence parallel needs tp > 1")
    if arch.attention_heads % lay.tp or kind.kv_heads % lay.tp:
        raise fail("layout.tp", f"tp {lay.tp} must divide the {arch.attention_heads} query heads and "
                   f"{kind.kv_heads} key-value heads")
    if arch.ffn_hidden_size % lay.tp:
        raise fail("layout.tp", f"tp {lay.tp} must divide ffn_hidden_size {arch.ffn_hidden_size}")
    if lay.sequence_parallel and recipe.workload.row_tokens % lay.tp:
        raise fail("layout.sequence_parallel", f"row_tokens must divide by tp {lay.tp} under sequence parallel")

    first = last = None
    if lay.layer_split is not None:
        first, last = lay.layer_split.first, lay.layer_split.last
        if lay.pp < 2:
            raise fail("layout.layer_split", "a layer split needs pp >= 2")
        rest = arch.layers - first - last
        middle = lay.pp - 2
        if rest < 0 or (middle == 0 and rest != 0) or (middle > 0 and (rest <= 0 or rest % middle)):
            raise fail("layout.layer_split", f"{first} + {last} layers on the end stages leave {rest} for "
                       f"{middle} middle stages of {arch.layers} layers")
    elif arch.layers % lay.pp:
        raise fail("layout.pp", f"pp {lay.pp} must divide the {arch.layers} layers (or give layout.layer_split)")

    mbs = rows_per_microbatch or lay.rows_per_microbatch
    per_step = mbs * lay.dp
    if recipe.workload.global_batch % per_step:
        raise fail("workload.global_batch", f"global batch {recipe.workload.global_batch} must divide by "
                   f"rows_per_microbatch x dp = {per_step}")
    n_steps = steps or recipe.result.steps_per_run
    if not n_steps:
        raise fail("result.steps_per_run", "the engine needs the number of steps to run")

    stated = lay.recompute  # null: the source did not say; never read as "no recompute"
    if stated is None and recompute is None:
        raise fail("layout.recompute", "not stated (null): the engine must know whether it recomputes activations; "
                   "state it (granularity: none, selective or full)")
    gran = recompute or stated.granularity.value
    modules = tuple((stated.modules if stated else None) or (("core_attn",) if gran == "selective" else ()))
    method = stated.method.value if stated and stated.method else None
    num_layers = stated.num_layers if stated else None
    if gran == "full":
        method = method or "uniform"
        num_layers = num_layers or 1
    elif gran != "selective":
        modules, method, num_layers = (), None, None

    backend = attention or attention_backend_of(recipe)
    if backend not in ATTENTION_BACKENDS:
        raise fail("stack.attention_backend", f"'{backend}' is not an engine attention backend "
                   f"({', '.join(ATTENTION_BACKENDS)})")
    if not recipe.stack.framework.startswith(FRAMEWORK):
        raise fail("stack.framework", f"the engine runs recipes whose framework is '{FRAMEWORK} ...'")

    notes: list[str] = []
    vocab = arch.vocab_size
    if vocab % lay.tp:
        vocab += lay.tp - vocab % lay.tp
        notes.append(f"vocabulary padded from {arch.vocab_size} to {vocab} to divide by tp {lay.tp}")
    return EnginePlan(
        recipe_path=str(path), recipe_id=loaded.id, model=recipe.model, arch=arch, kv_heads=kind.kv_heads,
        head_dim=kind.head_dim, tp=lay.tp, pp=lay.pp, dp=lay.dp, sequence_parallel=lay.sequence_parallel,
        first_stage_layers=first, last_stage_layers=last, recompute_granularity=gran, recompute_method=method,
        recompute_num_layers=num_layers, recompute_modules=modules, rows_per_microbatch=mbs,
        global_batch=recipe.workload.global_batch, row_tokens=recipe.workload.row_tokens,
        num_microbatches=recipe.workload.global_batch // per_step, steps=n_steps,
        precision=recipe.workload.precision.value, attention_backend=backend, vocab_size=vocab, notes=tuple(notes),
        stated_schedule=recipe.workload.schedule, stream=stated_stream(recipe, data),
    )


def lacking_parts(arch: Architecture) -> list[str]:
    """What the architecture states that the engine does not build: each field outside ENGINE_BUILDS whose value is
    set (not None, False or 0), as 'what (architecture.field)'."""
    lacking = []
    for name in type(arch).model_fields:
        value = getattr(arch, name)
        if name in ENGINE_BUILDS or value is None or value is False or value == 0:
            continue
        lacking.append(f"{LACKING.get(name, name.replace('_', ' '))} (architecture.{name})")
    return lacking


def _registry_root(path: Path) -> Path:
    """The folder holding catalog/ above the recipe (recipes/<model>/<gpu>/<name>.yaml)."""
    for parent in path.resolve().parents:
        if (parent / "catalog").is_dir():
            return parent
    raise EngineError(str(path), "model", "no catalog/ folder above the recipe")
