"""Catalogs: GPU types, cloud instances and model cards, each figure with a source and a date."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, RootModel, model_validator

from generator.models import MAX_COUNT, MAX_LAYERS, MAX_PARAMS, Date, UrlThenNote
from generator.problems import Problem


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


# Bounds far above any real model or GPU, so that generator/figures never multiplies its way past a float.
MAX_WIDTH = 10_000_000  # hidden, FFN and latent sizes
MAX_HEADS = 100_000  # heads, head dimensions, experts
MAX_VOCAB = 100_000_000
MAX_PEAK_FLOPS = 1e18  # FLOP/s of one GPU
MAX_USD_PER_HOUR = 1e6
PositiveFlops = Annotated[float, Field(gt=0, le=MAX_PEAK_FLOPS, allow_inf_nan=False)]


class PeakFlops(_Closed):
    bf16: PositiveFlops = Field(description="Dense BF16 peak, in FLOP/s.")
    fp8: PositiveFlops | None = Field(default=None, description="Dense FP8 peak, in FLOP/s.")
    fp4: PositiveFlops | None = Field(default=None, description="Dense FP4 peak, in FLOP/s.")


class MeasuredCeiling(_Closed):
    """The card's matrix-product ceiling as measured here (a committed script on the card), per precision."""

    bf16: PositiveFlops | None = Field(default=None, description="Measured BF16 matrix-product rate, in FLOP/s.")
    fp8: PositiveFlops | None = Field(default=None, description="Measured FP8 matrix-product rate, in FLOP/s.")
    date: Date = Field(description="Date it was measured (YYYY-MM-DD).")
    source: str = Field(description="The script that measured it and the committed file of its figures.", min_length=1)


class GpuSpec(_Closed):
    name: str = Field(description="Full product name.")
    memory_gb: int = Field(description="Memory, in GB.", gt=0, le=4096)
    peak_flops: PeakFlops = Field(description="Dense (no sparsity) peak rates, in FLOP/s.")
    nvml_names: list[str] = Field(default_factory=list, description="Names NVML reports for this GPU.")
    source: UrlThenNote = Field(description="Datasheet the figures come from: an http(s) URL (a note may follow "
                                "after a space).")
    date: Date = Field(description="Date the source was read (YYYY-MM-DD).")
    measured_ceiling: MeasuredCeiling | None = Field(
        default=None, description="The matrix-product ceiling measured on this card by a committed script (what a "
        "recipe's MFU is set beside); null: not measured here.")
    unpriced: str | None = Field(default=None, min_length=1, description="Why no instance of catalog/instances.yaml "
                                 "prices this GPU (no sourced, dated on-demand price found); null: an instance does, or "
                                 "none is needed yet.")


class Instance(_Closed):
    provider: str = Field(description="Cloud provider.")
    gpu_type: str = Field(description="GPU type, a key of catalog/gpus.yaml.")
    gpu_count: int = Field(description="GPUs per instance.", gt=0, le=1024)
    usd_per_hour: float = Field(description="On-demand price, in USD per hour.", gt=0, le=MAX_USD_PER_HOUR,
                               allow_inf_nan=False)
    region: str | None = Field(default=None, description="Region the price is for.")
    source: str = Field(description="Where the price comes from (URL or document).")
    date: Date = Field(description="Date the price was read (YYYY-MM-DD).")


class AttentionKind(_Closed):
    kv_heads: int = Field(description="Key-value heads (groups).", gt=0, le=MAX_HEADS)
    head_dim: int = Field(description="Head dimension.", gt=0, le=MAX_HEADS)
    window: int | None = Field(default=None, description="Sliding window, in tokens (null: global).", gt=0,
                               le=MAX_COUNT)
    shared_kv: bool = Field(default=False, description="Keys and values come from one shared projection.")


class MoE(_Closed):
    experts: int = Field(description="Routed experts per MoE layer.", gt=0, le=MAX_HEADS)
    top_k: int = Field(description="Routed experts each token is sent to.", gt=0, le=MAX_HEADS)
    ffn_hidden_size: int = Field(description="FFN hidden size of one routed expert.", gt=0, le=MAX_WIDTH)
    shared_ffn_hidden_size: int = Field(
        default=0, description="FFN hidden size of the shared experts together (0: none).", ge=0, le=MAX_WIDTH
    )
    dense_layers: int = Field(
        default=0, description="Leading decoder layers with a dense FFN (of ffn_hidden_size) in place of experts.",
        ge=0, le=MAX_LAYERS,
    )
    router_bias: bool = Field(default=False, description="The router's linear layer carries a bias.")
    latent_size: int | None = Field(
        default=None, description="LatentMoE (Nemotron 3 Super/Ultra): the routed experts work in this width, behind "
        "a down projection from the hidden size and an up projection back (null: the experts work in the hidden size).",
        gt=0, le=MAX_WIDTH,
    )


class MLA(_Closed):
    q_lora_rank: int | None = Field(description="Query down-projection rank (null: a full query projection).", gt=0,
                                     le=MAX_WIDTH)
    kv_lora_rank: int = Field(description="Key-value latent rank.", gt=0, le=MAX_WIDTH)
    qk_head_dim: int = Field(description="Query-key head dimension without RoPE.", gt=0, le=MAX_HEADS)
    qk_rope_head_dim: int = Field(description="Query-key RoPE head dimension (the key part is shared by heads).", gt=0,
                                  le=MAX_HEADS)
    v_head_dim: int = Field(description="Value head dimension.", gt=0, le=MAX_HEADS)


class Mamba(_Closed):
    """A Mamba-2 mixer (Megatron's MambaMixer, Hugging Face's NemotronH): inner width heads x head_dim."""

    heads: int = Field(description="SSM heads (mamba_num_heads).", gt=0, le=MAX_HEADS)
    head_dim: int = Field(description="Channels per SSM head (mamba_head_dim).", gt=0, le=MAX_HEADS)
    state_size: int = Field(description="SSM state size N per channel (ssm_state_size).", gt=0, le=MAX_HEADS)
    groups: int = Field(description="Groups sharing one B and one C projection (n_groups).", gt=0, le=MAX_HEADS)
    conv_kernel: int = Field(description="Width of the causal depthwise conv1d (conv_kernel).", gt=0, le=MAX_HEADS)
    conv_bias: bool = Field(default=True, description="The conv1d carries a bias (use_conv_bias).")


# The block letters of a hybrid pattern (Megatron's hybrid_layer_pattern, Hugging Face's hybrid_override_pattern).
HYBRID_BLOCKS = {"M": "Mamba-2 mixer", "*": "attention", "-": "dense MLP", "E": "MoE"}


class Architecture(_Closed):
    layers: int = Field(description="Decoder layers.", gt=0, le=MAX_LAYERS)
    hidden_size: int = Field(description="Hidden size.", gt=0, le=MAX_WIDTH)
    ffn_hidden_size: int = Field(description="FFN hidden size.", gt=0, le=MAX_WIDTH)
    gated_ffn: bool = Field(default=True, description="SwiGLU-style gated FFN (3 matrices) or plain (2).")
    attention_heads: int = Field(description="Query heads.", gt=0, le=MAX_HEADS)
    attention: dict[str, AttentionKind] = Field(description="Attention kinds by name (e.g. global, sliding).")
    layer_pattern: list[str] = Field(
        description="Attention kind of each layer, repeated cyclically over the layers.", min_length=1
    )
    vocab_size: int = Field(description="Vocabulary size (padded).", gt=0, le=MAX_VOCAB)
    tied_embeddings: bool = Field(description="Input and output embeddings are one matrix.")
    qk_norm: bool = Field(default=False, description="RMSNorm on queries and keys (per head dim).")
    norm_eps: float = Field(default=1e-6, description="RMSNorm epsilon.", gt=0, le=1, allow_inf_nan=False)
    rope_base: float = Field(default=10000.0, description="RoPE base frequency.", gt=0, le=1e12,
                            allow_inf_nan=False)
    linear_bias: bool = Field(default=False, description="Linear layers carry biases.")
    attention_sinks: bool | None = Field(
        default=None, description="One learned attention-sink logit per query head and layer (GPT-OSS)."
    )
    moe: MoE | None = Field(default=None, description="Mixture-of-experts FFN (null: dense model).")
    mla: MLA | None = Field(default=None, description="Multi-latent attention (null: multi-head or grouped-query).")
    mtp_layers: int | None = Field(
        default=None, description="Multi-token-prediction layers of the model (DeepSeek-V3: 1); null: none.", ge=0,
        le=MAX_LAYERS,
    )
    mtp_repeated: bool = Field(
        default=False, description="The MTP layer's weights can be applied at several prediction depths (Megatron's "
        "mtp_use_repeated_layer): a run's layout.mtp_layers may then exceed mtp_layers, each depth counted.",
    )
    hybrid_pattern: str | None = Field(
        default=None, pattern=r"^[M*E-]+$",
        description="A hybrid model's blocks, one letter a layer (Hugging Face's hybrid_override_pattern): M a Mamba-2 "
        "mixer, * attention (of the first kind in layer_pattern), - a dense MLP, E a MoE; each layer is one block "
        "with its own pre-norm, not an attention + FFN pair. Null: every layer is attention + FFN.",
    )
    mamba: Mamba | None = Field(default=None, description="The Mamba-2 mixer of a hybrid pattern's M layers.")
    mtp_pattern: str | None = Field(
        default=None, pattern=r"^[M*E-]+$",
        description="A hybrid model's multi-token-prediction layer, its blocks as in hybrid_pattern "
        "(mtp_hybrid_override_pattern); null: a full decoder layer (attention + FFN).",
    )

    @model_validator(mode="after")
    def _hybrid_consistent(self) -> Architecture:
        """A hybrid pattern spells every layer, and its M blocks have a mixer to count."""
        if self.hybrid_pattern is not None and len(self.hybrid_pattern) != self.layers:
            raise ValueError(f"hybrid_pattern has {len(self.hybrid_pattern)} blocks but layers is {self.layers}")
        patterns = (self.hybrid_pattern or "") + (self.mtp_pattern or "")
        if "M" in patterns and self.mamba is None:
            raise ValueError("hybrid_pattern has Mamba-2 (M) blocks but no mamba mixer is given")
        if self.mtp_pattern is not None and self.hybrid_pattern is None:
            raise ValueError("mtp_pattern is for a hybrid model (set hybrid_pattern)")
        return self


class ActiveParamsFact(_Closed):
    count: int = Field(description="Active parameters per token N.", gt=0, le=MAX_PARAMS)
    includes_norms: bool = Field(description="Whether N counts the norm gains.")
    source: str = Field(description="Where N is stated.")


class ModelCard(_Closed):
    hf_id: str = Field(description="Hugging Face model id.")
    revision: str | None = Field(default=None, description="Hugging Face revision (commit).")
    family: str | None = Field(default=None, description="Model family.")
    architecture: Architecture | None = Field(default=None, description="Architecture, where known.")
    active_params: ActiveParamsFact = Field(description="N, active parameters per token.")
    total_params: int | None = Field(
        default=None, description="All parameters (for MoE every expert) under active_params' norm convention; "
        "null: the same as N (dense).", gt=0, le=MAX_PARAMS
    )
    source: str = Field(description="Where the architecture facts come from.")
    date: Date = Field(description="Date the facts were read (YYYY-MM-DD).")


class GpuCatalog(RootModel[dict[str, GpuSpec]]):
    pass


class InstanceCatalog(RootModel[dict[str, Instance]]):
    pass


@dataclass
class Catalog:
    """The catalogs of a registry as data (generator/registry.py's load_catalog reads them from catalog/)."""

    gpus: dict[str, GpuSpec] = field(default_factory=dict)
    instances: dict[str, Instance] = field(default_factory=dict)
    models: dict[str, ModelCard] = field(default_factory=dict)
    model_slugs: dict[str, str] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    def instance_for(self, gpu_type: str, per_node: int) -> str | None:
        """The instance that prices a recipe of this GPU type and node size: the first such by name (one per pair
        in catalog/instances.yaml today, so the order is not a tie-break in practice); None: no such instance."""
        for name, inst in sorted(self.instances.items()):
            if inst.gpu_type == gpu_type and inst.gpu_count == per_node:
                return name
        return None


class _ModelFile(RootModel[dict[str, ModelCard]]):
    pass
