"""The recipe: one YAML file under recipes/<model>/<gpu>/<name>.yaml, as Pydantic models.

Every field carries a description with its unit; these descriptions are the source of
schema/recipe.schema.yaml (``python -m generator schema``). Models are strict (no "yes"
becoming a number) and closed (``extra="forbid"``).
"""

from __future__ import annotations

import datetime as dt
import re
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema

SCHEMA_VERSION = 1


def _parse_date(value: Any) -> Any:
    # The loader keeps YAML timestamps as text so that Pydantic and jsonschema see the same input.
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value)
        except ValueError as exc:
            raise ValueError(f"not a valid date (YYYY-MM-DD): {value!r}") from exc
    if isinstance(value, dt.datetime):
        raise ValueError("a date (YYYY-MM-DD) is expected, not a date and time")
    return value


Date = Annotated[
    dt.date,
    BeforeValidator(_parse_date),
    WithJsonSchema({"type": "string", "format": "date"}),
]


def _finite(**kwargs: Any) -> Any:
    return Field(allow_inf_nan=False, **kwargs)


# Upper bounds of counts and figures: generous for any real run, and far below where a product of several of them
# could overflow a float inside generator/figures (a count of 1e309 would); a value past one is a problem naming it.
MAX_PARALLEL = 1_000_000  # GPUs, and any parallel size
MAX_COUNT = 10**9  # rows, steps, micro-batches, runs, tokens per GPU, a line number
MAX_LAYERS = 100_000
MAX_TOKENS = 10**18  # tokens in a window or a data set
MAX_PARAMS = 10**15  # parameters of a model
MAX_BYTES = 10**15
MAX_TFLOPS = 1e6  # TFLOP/s per GPU
MAX_GPU_HOURS = 1e9
MAX_LOSS = 1e6

# An environment variable name the site and the runner may put in `export NAME=...`: a shell identifier, so a key
# such as 'A; touch /tmp/x #' is a problem, never a command.
ENV_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
# An http(s) URL with a host (no userinfo, no whitespace, printable ASCII): never javascript:, data: or file:.
URL_PATTERN = r"^https?://[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::[0-9]{1,5})?(?:[/?#][!-~]*)?$"
# A text that is either no URL at all (a hub id, a path, words) or starts with an http(s) URL; a scheme other
# than http(s) ('javascript:', 'file:') is a problem. 'note: ...' (a colon and a space) is words, not a scheme.
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S")
_URL = re.compile(URL_PATTERN[:-1])  # without '$': fullmatch for a URL, match for a URL that a note follows


def _env_name(value: str) -> str:
    if not re.fullmatch(ENV_NAME_PATTERN[1:-1], value):
        raise ValueError("an environment variable name must be a shell identifier ([A-Za-z_][A-Za-z0-9_]*)")
    return value


def _http_url(value: str) -> str:
    if not _URL.fullmatch(value):
        raise ValueError("must be an http(s) URL with a host (e.g. https://example.org/page)")
    return value


def _url_then_note(value: str) -> str:
    match = _URL.match(value)
    if match is None or match.end() < len(value) and not value[match.end()].isspace():
        raise ValueError("must start with an http(s) URL with a host; a note may follow after a space")
    return value


def _url_if_any(value: str) -> str:
    if _SCHEME.match(value):
        return _url_then_note(value)
    return value


EnvName = Annotated[str, AfterValidator(_env_name)]


def _env_value(value: str) -> str:
    if "\0" in value:
        raise ValueError("an environment variable's value cannot hold a NUL character (no process environment can)")
    return value


EnvValue = Annotated[str, AfterValidator(_env_value)]
HttpUrl = Annotated[str, AfterValidator(_http_url), WithJsonSchema({"type": "string", "pattern": URL_PATTERN})]
UrlThenNote = Annotated[
    str, AfterValidator(_url_then_note),
    WithJsonSchema({"type": "string", "pattern": URL_PATTERN[:-1] + r"(?:\s[\s\S]*)?$"}),
]
# For jsonschema: no scheme at all, or an http(s) URL first (Python's re, as jsonschema uses, has the lookahead).
UrlOrText = Annotated[
    str, AfterValidator(_url_if_any),
    WithJsonSchema({"type": "string", "pattern": r"^(?![A-Za-z][A-Za-z0-9+.-]*:\S)|" + URL_PATTERN[:-1] + r"(?:\s|$)"}),
]


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, use_enum_values=False)


class Status(StrEnum):
    """Lifecycle of a recipe's figures."""

    verified = "verified"  # measured, and the correctness evidence passes
    measured = "measured"  # measured on real hardware; no passing correctness evidence (yet)
    reported = "reported"  # taken from a publication, not re-measured here


class Outcome(StrEnum):
    passed = "pass"
    failed = "fail"


class OverallOutcome(StrEnum):
    passed = "pass"
    failed = "fail"
    partial = "partial"
    not_run = "not_run"


class Training(StrEnum):
    """What a run trains: every weight (pre-training, supervised fine-tuning) or adapters on a frozen base."""

    pre_training = "pre-training"
    sft = "sft"  # full fine-tuning: every weight, the same FLOPs per token as pre-training
    lora = "lora"  # low-rank adapters on a frozen base: the base needs no weight gradients


class Precision(StrEnum):
    bf16 = "bf16"
    fp16 = "fp16"
    fp32 = "fp32"
    fp8 = "fp8"  # FP8 whose scaling recipe the source does not state
    fp8_cs = "fp8-cs"  # FP8 with a current scale per tensor (NVIDIA's current scaling, torchao's tensorwise)
    fp8_rw = "fp8-rw"  # FP8 with a current scale per row of each operand (torchao's rowwise)
    fp8_mx = "fp8-mx"
    fp8_ds = "fp8-ds"
    nvfp4 = "nvfp4"


class Implementation(StrEnum):
    other = "other"  # another framework's implementation of the model and training
    same = "same"  # the same framework with its speed features off


class RecomputeGranularity(StrEnum):
    none = "none"
    selective = "selective"
    full = "full"


class RecomputeMethod(StrEnum):
    uniform = "uniform"
    block = "block"


class Dispatcher(StrEnum):
    allgather = "allgather"
    alltoall = "alltoall"
    flex = "flex"
    deepep = "deepep"


class Gpu(_Closed):
    type: str = Field(
        description="GPU type, a key of catalog/gpus.yaml (e.g. H100, H200, B200).",
        examples=["H100"],
        min_length=1,
    )
    memory_gb: int = Field(description="Memory per GPU, in GB.", gt=0, le=4096, examples=[80])
    count: int = Field(description="Number of GPUs the recipe runs on, in GPUs.", gt=0, le=MAX_PARALLEL)
    per_node: int = Field(description="GPUs per node, in GPUs; must divide `count`.", gt=0, le=1024)
    instance: str | None = Field(
        default=None,
        description="Cloud instance, a key of catalog/instances.yaml; its hourly price gives $/1M tokens. "
        "Null when the recipe ran on owned or unpriced hardware.",
        examples=["AWS p5.48xlarge"],
    )


class Author(_Closed):
    name: str = Field(description="Who contributed or published the recipe.", min_length=1)
    url: HttpUrl | None = Field(default=None, description="Where the author's work is cited (an http(s) URL).")


class ContainerImage(_Closed):
    name: str = Field(
        description="Name of the training container image as pulled (registry/repository:tag).", min_length=1,
        examples=["nvcr.io/nvidia/nemo:25.11"],
    )
    digest: str = Field(
        description="Content digest of that image: `sha256:` and 64 lower-case hex digits, the part after `@` of "
        "its RepoDigests entry in `docker inspect`. A tag can be pushed again; a digest names one image.",
        pattern=r"^sha256:[0-9a-f]{64}$",
    )


class Stack(_Closed):
    framework: str = Field(
        description="Training framework and version; its first word selects the runner's log parser "
        "(megatron-lm, megatron-bridge, miles, slime, openrecipes-engine).",
        min_length=1,
        examples=["miles 0.1.0"],
    )
    megatron_lm: str | None = Field(default=None, description="Megatron-LM / megatron-core version or commit.")
    megatron_core: str | None = Field(default=None, description="megatron-core package version.")
    megatron_bridge: str | None = Field(default=None, description="Megatron-Bridge version or commit.")
    transformer_engine: str | None = Field(default=None, description="Transformer Engine version.")
    pytorch: str | None = Field(default=None, description="PyTorch version and build.")
    cuda: str | None = Field(default=None, description="CUDA version.")
    nccl: str | None = Field(default=None, description="NCCL version.")
    driver: str | None = Field(default=None, description="NVIDIA driver version.")
    deepep: str | None = Field(default=None, description="DeepEP version, if installed.")
    python: str | None = Field(default=None, description="Python version.")
    attention_backend: str | None = Field(default=None, description="Attention kernel backend used.")
    gpu_name: str | None = Field(default=None, description="GPU product name as the driver reports it.")
    network: str | None = Field(default=None, description="Interconnect within and between nodes.")
    source: str | None = Field(default=None, description="How these versions were established.")
    image: ContainerImage | None = Field(
        default=None, description="The container image the training ran in, where it ran in one: its name and digest."
    )


class DatasetBuild(_Closed):
    name: str = Field(description="Name of the built, tokenized row set.")
    tokenizer: str | None = Field(default=None, description="Tokenizer, revision and hashes.")
    loss_mask: str | None = Field(default=None, description="Loss-mask convention.")
    rows: int | None = Field(default=None, description="Rows built, in rows.", gt=0, le=MAX_TOKENS)
    row_tokens: int | None = Field(default=None, description="Tokens per row, in tokens.", gt=0, le=10_000_000)
    padding_tokens: int | None = Field(default=None, description="Padding tokens in the build, in tokens.", ge=0,
                                       le=MAX_TOKENS)
    seed: int | None = Field(default=None, description="Seed of the build's permutation.", ge=-(2**63), le=2**64 - 1)
    packing: str | None = Field(default=None, description="How source documents became rows.")
    supervised_token_ratio: float | None = _finite(
        default=None, description="Fraction of tokens with a loss target (0-1).", ge=0, le=1
    )
    parquet_sha256: str | None = Field(
        default=None, description="SHA-256 of the built parquet file (hex).", pattern=r"^[0-9a-f]{64}$"
    )
    parquet_bytes: int | None = Field(default=None, description="Size of the built parquet file, in bytes.", gt=0,
                                       le=MAX_BYTES)
    builder: str | None = Field(default=None, description="Script and options that built the rows.")


class SyntheticStream(StrEnum):
    """The seeded token streams of runner/engine/streams.py that our runs train on."""

    pattern = "pattern"  # a bijective bigram over the whole vocabulary: learned too slowly to show in a speed run
    markov = "markov"  # the learnable stream: loss falls from ~ln V through ln 4,096 towards its floor ln 8
    random = "random"  # uniform tokens (the engine only): nothing to learn


class Dataset(_Closed):
    name: str = Field(description="Data set name (or 'synthetic tokens').")
    source: UrlOrText | None = Field(
        default=None, description="Where the data comes from: a hub id, or an http(s) URL (a note may follow)."
    )
    revision: str | None = Field(default=None, description="Revision (commit) of the source.")
    license: str | None = Field(default=None, description="License of the data.")
    rows_sha256: str | None = Field(
        default=None, description="SHA-256 of the exact rows trained on (hex).", pattern=r"^[0-9a-f]{64}$"
    )
    build: DatasetBuild | None = Field(default=None, description="How the rows were built.")
    stream: SyntheticStream | None = Field(
        default=None, strict=False,
        description="Synthetic tokens of our runner: the seeded stream of runner/engine/streams.py the rows come from "
        "('markov': learnable, its loss falls within a speed run; 'pattern': a bijective bigram over the vocabulary; "
        "'random': uniform). A launcher of ours reads it (its --data overrides it); null: not stated, and a launcher "
        "of ours then draws the 'pattern' stream.",
    )


class LrDecay(StrEnum):
    constant = "constant"  # the peak learning rate after warm-up, to the run's end
    linear = "linear"  # from the peak after warm-up down to min_lr at the run's last step
    cosine = "cosine"  # half a cosine from the peak after warm-up down to min_lr at the run's last step


class Schedule(_Closed):
    """The learning-rate schedule a run trains at (generator.figures.scheduled_lr is its one formula)."""

    peak_lr: float = _finite(description="Peak learning rate, reached at the end of the warm-up.", gt=0, le=10)
    warmup_steps: int = Field(description="Steps of linear warm-up: step s (0-based) of the warm-up trains at "
                              "peak_lr x (s + 1) / warmup_steps; 0: no warm-up.", ge=0, le=MAX_COUNT)
    decay: LrDecay = Field(strict=False, description="How the learning rate falls after the warm-up, over the rest of "
                           "the run's steps: constant, linear or cosine.")
    min_lr: float = _finite(default=0.0, description="Learning rate at the run's last step under linear or cosine "
                            "decay (ignored under constant).", ge=0, le=10)
    optimizer: str | None = Field(default=None, description="The optimizer and its settings (e.g. 'AdamW, betas "
                                  "0.9/0.95, weight decay 0.1, fp32 master weights, gradient clipping at 1.0').")


class Workload(_Closed):
    row_tokens: int = Field(description="Tokens per row (sequence length), in tokens.", gt=0, le=10_000_000)
    rows: str = Field(description="What a row holds (e.g. 'SFT conversations', 'synthetic tokens').")
    global_batch: int = Field(description="Rows per optimizer step, in rows.", gt=0, le=MAX_COUNT)
    precision: Precision = Field(strict=False, description="Compute precision of the matrix products.")
    training: Training | None = Field(
        default=None, strict=False,
        description="What the run trains: 'pre-training', 'sft' (supervised fine-tuning of every weight: the same "
                    "FLOPs per token) or 'lora' (adapters on a frozen base, which needs no weight gradients: MFU "
                    "counts 4N FLOPs per token, two thirds of 6N, as Megatron-Bridge's and AutoModel's own counts "
                    "do). Absent or null: not stated (never read as pre-training).")
    dataset: Dataset | None = Field(default=None, description="Data provenance.")
    schedule: Schedule | None = Field(
        default=None, description="The learning-rate schedule the run trains at. A framework the runner launches "
        "reads it from here; null: not stated (a reported recipe whose source does not state it).")


class LayerSplit(_Closed):
    first: int = Field(description="Decoder layers on the first pipeline stage, in layers.", gt=0, le=MAX_LAYERS)
    last: int = Field(description="Decoder layers on the last pipeline stage, in layers.", gt=0, le=MAX_LAYERS)


class Recompute(_Closed):
    granularity: RecomputeGranularity = Field(strict=False, description="Activation recompute granularity.")
    method: RecomputeMethod | None = Field(strict=False, default=None, description="Full-recompute method (uniform, block).")
    num_layers: int | None = Field(default=None, description="Layers recomputed per chunk, in layers.", gt=0,
                                      le=MAX_LAYERS)
    modules: list[str] | None = Field(default=None, description="Modules recomputed under selective recompute.")


class Offload(_Closed):
    optimizer_fraction: float = _finite(
        description="Fraction of the optimizer state kept on the CPU (0-1).", ge=0, le=1
    )
    overlap_d2h_h2d: bool = Field(description="Whether device-host copies overlap compute.")


class Layout(_Closed):
    label: str = Field(description="Short layout label (e.g. 'TP2 PP4 DP1').", min_length=1)
    summary: str = Field(description="One-paragraph summary of the layout, shown on the card.", min_length=1)
    highlights: str | None = Field(default=None, description="What distinguishes this layout, briefly.")
    tp: int = Field(description="Tensor-parallel size, in GPUs.", gt=0, le=MAX_PARALLEL)
    pp: int = Field(description="Pipeline-parallel size, in stages.", gt=0, le=MAX_PARALLEL)
    vpp: int = Field(default=1, description="Virtual pipeline chunks per stage.", gt=0, le=MAX_LAYERS)
    cp: int = Field(description="Context-parallel size, in GPUs.", gt=0, le=MAX_PARALLEL)
    ep: int = Field(description="Expert-parallel size, in GPUs (1 for dense models).", gt=0, le=MAX_PARALLEL)
    etp: int = Field(default=1, description="Expert tensor-parallel size, in GPUs.", gt=0, le=MAX_PARALLEL)
    dp: int = Field(description="Data-parallel size, in replicas.", gt=0, le=MAX_PARALLEL)
    fsdp: bool = Field(default=False, description="Whether parameters are sharded across data-parallel ranks.")
    gradient_accumulation: int | None = Field(
        default=None, description="Micro-batches accumulated per step per replica, in micro-batches.", gt=0,
        le=MAX_COUNT,
    )
    sequence_parallel: bool = Field(description="Whether sequence parallelism is on (needs TP > 1).")
    layer_split: LayerSplit | None = Field(
        default=None, description="Uneven pipeline split: first and last stage; the middle stages share the rest."
    )
    max_tokens_per_gpu: int | None = Field(default=None, description="Dynamic-batching token cap, in tokens.", gt=0,
                                              le=MAX_COUNT)
    rows_per_microbatch: int = Field(description="Rows per micro-batch (micro-batch size), in rows.", gt=0, le=MAX_COUNT)
    recompute: Recompute | None = Field(
        default=None, description="Activation recompute. Null: not stated by the source (shown as 'not stated'; "
        "never read as no recompute).")
    offload: Offload | None = Field(default=None, description="CPU offload of the optimizer.")
    dispatcher: Dispatcher | None = Field(strict=False, default=None, description="MoE token dispatcher (null: dense model).")
    mtp_layers: int | None = Field(
        default=None, description="Multi-token-prediction layers trained, in layers (null: the model's own count; "
        "0: trained without MTP).", ge=0, le=MAX_LAYERS
    )
    pipeline_layout: str | None = Field(
        default=None, description="How decoder layers are placed on pipeline stages when neither an even split nor "
        "layer_split describes it (e.g. Megatron's pipeline_model_parallel_layout); the even-split rule is then "
        "not applied.", min_length=1
    )


class ActiveParams(_Closed):
    count: int = Field(description="Active parameters per token N, in parameters.", gt=0, le=MAX_PARAMS)
    source: UrlThenNote | None = Field(
        default=None, description="Where N comes from: an http(s) URL (a note may follow after a space)."
    )
    revision: str | None = Field(default=None, description="Revision of that source.")


class FlopsConvention(_Closed):
    gated_experts: bool = Field(description="Whether each routed expert's FFN counts three matrices (gated).")
    sliding_windows: bool = Field(description="Whether sliding-window layers count only the keys in the window.")
    frozen_base: bool = Field(
        default=False, description="LoRA: the frozen base's weight gradients are not counted, so the count is "
        "figures.FROZEN_BASE_FRACTION (2/3: forward and activation gradients of the three passes) of the full one; "
        "the adapters' own FLOPs (a fraction of a percent) are not counted. NeMo AutoModel's benchmark recipe "
        "(nemo_automodel/recipes/llm/benchmark.py) scales its count by (2 + lora/frozen parameters) / 3."
    )
    attention_head_dim: int | None = Field(
        default=None, description="The head dimension the count uses for every attention kind's projections and "
        "core attention in place of the architecture's (e.g. hidden size / heads where a count ignores the "
        "config's head_dim); null: the architecture's.", gt=0, le=MAX_LAYERS
    )
    causal_attention: bool = Field(
        default=True, description="Whether the core attention counts each query against the keys a causal mask "
        "leaves it (s / 2 on average, Megatron's count) or, false, against every key (the full s x s products, as "
        "NeMo 24.07's performance tables count)."
    )
    hybrid_count: Literal["megatron-bridge"] | None = Field(
        default=None, description="A hybrid (Mamba-2) model counted as Megatron-Bridge's flop_utils counts it "
        "(figures.MB_HYBRID_COUNT: the Mamba inner width taken as 2 x hidden, the scan as 7 x inner x state, no conv1d, "
        "no MTP projection); null: the registry's count (figures.mamba2_forward_flops)."
    )
    six_n_params: int | None = Field(
        default=None, description="llm-foundry's count (scripts/train/benchmarking/collect_results.py) where set: "
        "FLOPs per token = 6 x this many parameters (the run's n_params: embeddings, learned positional embeddings, "
        "norms and biases included) + 12 x layers x hidden size x sequence length (attention, every query against "
        "every key, no causal halving); gated_experts and sliding_windows then do not apply, and the published figure, "
        "which llm-foundry prints truncated (int()), is held to 0.5% outside [published, published + 1). null: the "
        "architecture's matrix count.", gt=0, le=MAX_PARAMS
    )


class TimeToTrain(_Closed):
    """An MLPerf-style time-to-train result: each run from run_start to run_stop (evaluation included), as the
    submission's result logs state them; tokens/s per GPU is then time-to-train throughput, not a steady-state
    step rate (figures.time_to_train_tokens_per_s_per_gpu)."""

    runs_ms: list[Annotated[int, Field(gt=0, le=10**12)]] = Field(
        description="Each successful run's run_start to run_stop, in milliseconds, in result-file order.",
        min_length=1)
    samples: list[Annotated[int, Field(gt=0, le=MAX_TOKENS)]] = Field(
        description="Samples (rows) each run trained before reaching the quality target, in rows; same order.",
        min_length=1)
    median_ms: float = _finite(description="The median run's time (the lower median for an even count, "
                               "figures.median_index), in milliseconds.", gt=0, le=10**12)
    score_ms: float | None = _finite(
        default=None, description="The benchmark's own score over the runs (MLPerf: the mean without the fastest and "
        "slowest run), in milliseconds; null: fewer than 3 runs.", gt=0, le=10**12)
    evaluation_included: bool = Field(
        description="Whether the run times include the evaluations made during training (MLPerf's do).")
    failed_runs: int = Field(default=0, description="Result files whose run did not end in success: not counted.",
                             ge=0, le=MAX_COUNT)


class PeakMemory(_Closed):
    """Peak GPU memory of the measured run, per GPU: the largest of every rank's own peak."""

    allocated_gib: float | None = _finite(
        default=None, description="Peak memory held by tensors (torch.cuda.max_memory_allocated), in GiB (2^30 "
        "bytes); null: not stated.", gt=0, le=100_000)
    reserved_gib: float | None = _finite(
        default=None, description="Peak memory reserved by the framework's allocator (torch.cuda.max_memory_reserved: "
        "what the card must hold), in GiB (2^30 bytes); null: not stated.", gt=0, le=100_000)
    stated_gb: float | None = _finite(
        default=None, description="Peak memory per GPU as the publication states it, in its own unit (GB), where it "
        "does not say whether the figure is allocated or reserved memory, nor whether its GB is 10^9 or 2^30 bytes "
        "(never copied into allocated_gib or reserved_gib: what the source does not state stays unstated); null: not "
        "stated.", gt=0, le=100_000)
    source: str = Field(description="Where the figures come from (the run's own summary line, a publication's "
                        "column).", min_length=1)


class Result(_Closed):
    tokens_per_s_per_gpu: float = _finite(
        description="Training throughput over the window, in tokens per second per GPU.", gt=0, le=1e9
    )
    usd_per_million_tokens: float | None = _finite(
        default=None,
        description="Cost, in USD per 1M tokens: (instance $/h / GPUs) / (tokens/s/GPU x 3600) x 1e6.",
        gt=0,
        le=1e6,
    )
    step_time_cv_percent: float | None = _finite(
        default=None, description="Coefficient of variation of step times over the window, in percent.", ge=0,
        le=1000,
    )
    step_time_cv_note: str | None = Field(
        default=None, description="Why the step times vary as much as they do: needed on a verified recipe whose "
        "step-time CV is above 5% (which steps were slow, and what was found or ruled out).", min_length=1
    )
    mfu: float | None = _finite(
        default=None,
        description="Model FLOPs utilisation (0-1): 6 x N x tokens/s/GPU / GPU dense peak of the precision.",
        ge=0,
        le=1,
    )
    mfu_note: str | None = Field(
        default=None, description="Explains the MFU (e.g. the source's own figure under another convention). It "
        "explains, it does not exempt: `mfu` is always 6N over the peak the methodology names, and check recomputes it."
    )
    active_params: ActiveParams = Field(description="N, active parameters per token.")
    measured: Date | None = Field(default=None, description="Date of the measured run (YYYY-MM-DD).")
    steps_per_run: int | None = Field(default=None, description="Optimizer steps per run, in steps.", gt=0,
                                         le=MAX_COUNT)
    window: list[Annotated[int, Field(ge=0, le=MAX_COUNT)]] | None = Field(
        default=None,
        description="First and last step (0-based, inclusive) the figures are measured over.",
        min_length=2,
        max_length=2,
    )
    window_tokens: int | None = Field(
        default=None, description="Tokens in the window: steps x global batch x row tokens.", gt=0, le=MAX_TOKENS
    )
    time_to_train: TimeToTrain | None = Field(
        default=None, description="Where tokens/s per GPU is a time-to-train throughput (a benchmark's run_start to "
        "run_stop, evaluation included): the runs it is derived from. null: a steady-state step rate.")
    runs: int | None = Field(default=None, description="Runs measured (the median run is reported).", gt=0,
                                le=MAX_COUNT)
    runs_cv_percent: float | None = _finite(
        default=None, description="Coefficient of variation of tokens/s per GPU across the runs measured, in "
        "percent (the figure is the median run's).", ge=0, le=1000
    )
    partial: str | None = Field(
        default=None, description="Why the measured run is partial (it crashed or was interrupted after the window, "
        "or its log is an excerpt): its figures hold for the window, but it is not a complete run, so the recipe "
        "cannot be verified.", min_length=1
    )
    profiler: bool = Field(default=False, description="Whether a profiler was on during the measured run.")
    peak_memory: PeakMemory | None = Field(default=None, description="Peak GPU memory per GPU during the measured "
                                           "run; null: not stated.")
    gpu_hours: float | None = _finite(default=None, description="GPU-hours the measured run took.", gt=0,
                                       le=MAX_GPU_HOURS)
    gpu_hours_note: str | None = Field(default=None, description="What the GPU-hours count.")
    published_model_tflops_per_gpu: float | None = _finite(
        default=None, description="Model TFLOP/s per GPU as the publication states it, in TFLOP/s.", gt=0,
        le=MAX_TFLOPS,
    )
    published_model_tflops_note: str | None = Field(
        default=None, description="Why the published Model TFLOP/s per GPU differs by more than 0.5% from the "
        "registry's (model FLOPs per token x tokens/s per GPU, Megatron's convention): the convention or error "
        "found. It explains, it does not exempt: only `published_model_tflops_convention` changes the count that "
        "check holds the published figure to (0.5%).", min_length=1
    )
    published_model_tflops_convention: FlopsConvention | None = Field(
        default=None, description="The counting convention that reproduces the published Model TFLOP/s where it "
        "differs from the registry's; check recomputes the figure under it (0.5%)."
    )
    published_figures_disagree: bool = Field(
        default=False, description="Whether the publication's own tokens/s and Model TFLOP/s per GPU disagree by more "
        "than 0.5% under the registry's count (and the stated convention, if any) with no convention found that "
        "reproduces them: a discrepancy, shown on the recipe page with published_model_tflops_note (what was tried). "
        "check accepts exactly that disagreement when true (the note is then required), and flags a true flag on "
        "figures that agree."
    )


class ComponentTest(_Closed):
    test: str = Field(description="What was compared with what.")
    shape: str = Field(description="The shapes the test ran at.")
    gpu: str = Field(description="GPU type it ran on.")
    date: Date = Field(description="Date it ran (YYYY-MM-DD).")
    result: Outcome = Field(strict=False, description="pass or fail.")
    detail: str | None = Field(default=None, description="Figures of the comparison.")
    note: str | None = Field(default=None, description="Anything else a reader should know.")


class Convergence(_Closed):
    steps: int = Field(description="Steps compared, in steps.", gt=0, le=MAX_COUNT)
    result: Outcome = Field(strict=False, description="pass or fail.")
    correlation: float = _finite(description="Pearson correlation of the two loss curves.", ge=-1, le=1)
    final_loss_difference: float = _finite(description="Absolute difference of the final losses.", ge=0,
                                            le=MAX_LOSS)
    pointwise_failures: int = Field(description="Steps outside the pointwise tolerance.", ge=0,
                                    le=MAX_COUNT)
    note: str | None = Field(default=None, description="What the two arms were.")
    failed_because: str | None = Field(
        default=None, description="Why a failing check failed: the criteria it failed, as `python -m runner convergence` "
        "states them (e.g. an arm's final loss more than 10% above the stream's floor); null for a pass, or a check "
        "recorded before the field existed.")
    reference: str | None = Field(default=None, description="The reference arm: its framework (and version) and "
                                  "options, e.g. 'torchtitan 0.2.2, same initial weights and rows'.")
    implementation: Implementation | None = Field(
        default=None, strict=False, description="Whether the reference arm is another implementation of the model and "
        "training ('other': another framework from the same initial weights) or the same framework with its speed "
        "features off ('same'); null: not stated (checks recorded before the field existed).")


class QualityTarget(_Closed):
    """A quality target the publication's runs reached (e.g. MLPerf's eval loss <= 0.925): the submitter's evidence,
    recorded as stated, not re-run here."""

    metric: str = Field(description="What is measured (e.g. 'eval log perplexity').", min_length=1)
    target: float = _finite(description="The target value.", ge=-1e9, le=1e9)
    direction: str = Field(description="'<=' (lower is better) or '>='.", pattern=r"^(<=|>=)$")
    reached: float = _finite(description="The value at the end of the median run.", ge=-1e9, le=1e9)
    runs_reached: int = Field(description="Runs whose last evaluation meets the target.", ge=0, le=MAX_COUNT)
    runs: int = Field(description="Runs counted.", gt=0, le=MAX_COUNT)
    source: str = Field(description="Where the metric, target and values are stated.", min_length=1)


class Correctness(_Closed):
    result: OverallOutcome = Field(strict=False, description="Overall verdict of the evidence.")
    summary: str | None = Field(default=None, description="One-line summary.")
    reference: str | None = Field(default=None, description="The recipe compared against.")
    configuration: Outcome | None = Field(strict=False, default=None, description="Configuration review verdict.")
    component_tests: list[ComponentTest] = Field(default_factory=list, description="Component tests.")
    convergence: Convergence | None = Field(default=None, description="Loss-convergence check.")
    convergence_also: list[Convergence] = Field(
        default_factory=list, description="Further loss-convergence checks beside `convergence` (against the other "
        "frameworks, or a framework against itself), each shown as a line of its own.")
    rules: str | None = Field(default=None, description="Which rules the checks follow.")
    quality_target: QualityTarget | None = Field(
        default=None, description="A quality target the publication's own runs reached (a benchmark's convergence "
        "criterion), as the publication states it; not evidence of ours.")


class Patch(_Closed):
    file: str = Field(description="Patched file.")
    sha256: str | None = Field(default=None, description="SHA-256 of the patch (hex).", pattern=r"^[0-9a-f]{64}$")
    description: str = Field(description="What the patch changes and why.")


SHA256_HEX = r"^[0-9a-f]{64}$"
# A path inside the repository, '/'-separated, no segment starting with a dot (so no '..', no absolute path).
STORED_COPY_PATH = r"^[A-Za-z0-9_+-][A-Za-z0-9._+-]*(/[A-Za-z0-9_+-][A-Za-z0-9._+-]*)*$"
STORED_COPY_DESCRIPTION = (
    "Path, from the repository's root, of the stored copy of the bytes read (the file the importer was given, where it "
    "lies in this repository); `python -m generator check` holds `sha256` to that file's bytes where the file is "
    "present. null: the repository stores no copy (it was read from a checkout or copy elsewhere).")


class SupersededPublication(_Closed):
    url: HttpUrl = Field(description="URL of the earlier document (http(s)).")
    commit: str | None = Field(default=None, description="Commit of that document.")
    sha256: str | None = Field(default=None, pattern=SHA256_HEX, description="SHA-256 of that document's "
                               "bytes as read, as its import recorded it; null: not recorded.")
    stored_copy: str | None = Field(default=None, pattern=STORED_COPY_PATH, description=STORED_COPY_DESCRIPTION)
    line: int | None = Field(default=None, description="Line of the row in that document.", gt=0,
                                    le=MAX_COUNT)
    tokens_per_s_per_gpu: float = _finite(description="Tokens/s per GPU that document stated.", gt=0, le=MAX_COUNT)
    published_model_tflops_per_gpu: float | None = _finite(
        default=None, description="Model TFLOP/s per GPU that document stated.", gt=0, le=MAX_TFLOPS
    )
    figures_disagree: bool = Field(
        default=False, description="Whether that document's own tokens/s and Model TFLOP/s per GPU disagree by more "
        "than 0.5% under the recipe's FLOPs count (an error of that document, corrected by the later one): check "
        "accepts exactly that disagreement when true, and flags the row when false or when the figures agree."
    )


class PublicationCopy(_Closed):
    """The copy of a publication's document an importer read, where the original's own revision cannot be reached."""

    url: HttpUrl = Field(description="URL of the copy at its commit.")
    commit: str | None = Field(default=None, description="Commit of the copy.")
    sha256: str | None = Field(default=None, pattern=SHA256_HEX, description="SHA-256 of the copy's bytes as read "
                               "(64 lower-case hex digits), recorded by the import; `check` compares it with `stored_copy` "
                               "where the repository holds it; null: not recorded.")
    stored_copy: str | None = Field(default=None, pattern=STORED_COPY_PATH, description=STORED_COPY_DESCRIPTION)
    note: str = Field(description="Whose copy it is and how it relates to the original (e.g. its SHA-256).",
                      min_length=1)


class Publication(_Closed):
    url: HttpUrl = Field(description="URL of the published table (http(s)).")
    commit: str | None = Field(default=None, description="Commit of the document.")
    sha256: str | None = Field(default=None, pattern=SHA256_HEX, description="SHA-256 of the document's bytes as "
                               "read at that commit (64 lower-case hex digits), recorded by the import; `check` compares it "
                               "with `stored_copy` where the repository holds it; null: not recorded, or read through "
                               "`read_from` (whose sha256 it is then).")
    stored_copy: str | None = Field(default=None, pattern=STORED_COPY_PATH, description=STORED_COPY_DESCRIPTION)
    release: str | None = Field(default=None, description="Release the table belongs to (e.g. '25.11').")
    line: int | None = Field(default=None, description="Line of the row in the document.", gt=0,
                                    le=MAX_COUNT)
    column: int | None = Field(
        default=None, description="Column (1-based, in characters) where the row starts on its line, for a document "
        "that holds many rows on one line (a Plotly figure's JSON); null: the line alone locates the row.", gt=0,
        le=MAX_COUNT,
    )
    system: str | None = Field(default=None, description="System named by the publication (e.g. DGX-H100).")
    stated_gradient_accumulation: int | None = Field(
        default=None, description="Gradient accumulation, in micro-batches, as the publication's row states it where "
        "it contradicts the row's own global batch / (micro-batch x DP); layout.gradient_accumulation carries the "
        "same figure. check accepts that contradiction for exactly this figure, and only where it exists (null: the "
        "row states none, or a consistent one).", gt=0, le=MAX_COUNT
    )
    read_from: PublicationCopy | None = Field(
        default=None, description="The copy the figures were read from, when `url` (the original home) could not be "
        "read at a revision; null: `url` is what was read.")
    superseded: list[SupersededPublication] = Field(
        default_factory=list, description="Earlier publications of the same row that a later import replaced, "
        "with the figures they stated (kept so every published row stays traceable)."
    )


# A dotted path into a recipe (e.g. "workload.precision", "layout.rows_per_microbatch").
FIELD_PATH = r"^[a-z_]+(\.[a-z_]+)+$"


class Inferred(_Closed):
    """A value the recipe records that its source does not state: which field, and how it was inferred."""

    field: str = Field(description="Dotted path of the inferred field (e.g. 'workload.precision'); it must name a "
                       "field the recipe sets.", pattern=FIELD_PATH)
    reason: str = Field(description="How the value was inferred, from what (e.g. 'the table has no precision "
                        "column; its footnote says plain figures are FP8').", min_length=1)


class Recipe(_Closed):
    """An OpenRecipes training recipe."""

    model_config = ConfigDict(title="OpenRecipes recipe", extra="forbid", strict=True, frozen=True)

    schema_version: int = Field(description="Recipe format version.", ge=SCHEMA_VERSION, le=SCHEMA_VERSION)
    model: str = Field(description="Model name, a key of the model catalog.", examples=["Gemma-4-31B"])
    gpu: Gpu = Field(description="The GPUs and instance.")
    author: Author = Field(description="Who contributed the recipe.")
    status: Status = Field(strict=False, description="verified, measured or reported (see the methodology page).")
    stack: Stack = Field(description="Software stack.")
    workload: Workload = Field(description="What is trained on.")
    layout: Layout = Field(description="Parallel layout and memory settings.")
    result: Result = Field(description="Measured (or reported) figures.")
    correctness: Correctness | None = Field(default=None, description="Correctness evidence.")
    publication: Publication | None = Field(default=None, description="Source of a reported recipe.")
    env: Annotated[
        dict[EnvName, EnvValue],
        WithJsonSchema({"type": "object", "propertyNames": {"pattern": ENV_NAME_PATTERN},
                        "additionalProperties": {"type": "string", "pattern": "^[^\\u0000]*$"}}),
    ] = Field(default_factory=dict, description="Environment variables the run sets; each name a shell identifier "
              "([A-Za-z_][A-Za-z0-9_]*).")
    patches: list[Patch] = Field(default_factory=list, description="Local changes to the framework.")
    run: str = Field(description="The run command (a bash script).", min_length=1)
    notes: str | None = Field(default=None, description="Notes, Markdown (raw HTML is not rendered).")
    inferred: list[Inferred] = Field(
        default_factory=list, description="Fields whose values the source does not state but the recipe infers "
        "(from the source's footnotes, the framework's code or defaults), each with its reason; every other field "
        "of a reported recipe is as the source states it, and a setting neither stated nor inferred is null.")

