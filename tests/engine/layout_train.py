"""`python -m runner train ... --cpu` for the layout tests: the CPU adaptation, and one initial model under every layout.

Launched by tests/engine/test_engine_parallel.py, alone or under torchrun. On top of tests/engine/cpu_megatron.py's
CPU adaptation it does two things:

- Seeds torch before each transformer layer is built with that layer's global number. megatron (and so the engine)
  draws the layers of each pipeline stage from one random stream that starts at the seed, so a stage's first layer
  would get the weights of a 1-process run's first layer. With the seed tied to the global layer number the PP 2
  model starts from the 1-process model's weights (TP shards already do: on CPU megatron draws each full weight and
  then splits it), so every layout's loss can be held to the 1-process run's, step by step. It changes what the
  initial weights are, nothing of how the model is laid out or trained.
- Makes `Tensor.type()` name a CPU tensor as its CUDA type ("torch.cuda.FloatTensor"): megatron's distributed
  optimizer sorts parameters by that name and refuses others. So the layouts run the engine's GPU default, the
  distributed optimizer (its reduce-scatter of gradients and all-gather of parameters under DP 2), on gloo.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.engine import cpu_megatron  # noqa: E402

LAYER_SEED_BASE = 50_000  # away from the engine's own seed, so no layer repeats the embedding's stream


def seed_layers_by_global_number() -> None:
    import torch
    from megatron.core import parallel_state
    from megatron.core.transformer import transformer_layer

    build = transformer_layer.TransformerLayer.__init__

    def seeded_init(self, config, submodules, layer_number=1, *args, **kwargs):
        offset = transformer_layer.get_transformer_layer_offset(
            config, kwargs.get("vp_stage"), parallel_state.get_pipeline_model_parallel_rank())
        torch.manual_seed(LAYER_SEED_BASE + layer_number + offset)
        build(self, config, submodules, layer_number, *args, **kwargs)

    transformer_layer.TransformerLayer.__init__ = seeded_init


def cuda_type_names() -> None:
    import torch

    tensor_type = torch.Tensor.type

    def type_as_cuda(self, *args, **kwargs):
        if args or kwargs:  # a conversion, not a query
            return tensor_type(self, *args, **kwargs)
        name = tensor_type(self)
        return name.replace("torch.", "torch.cuda.", 1) if self.device.type == "cpu" else name

    torch.Tensor.type = type_as_cuda


if __name__ == "__main__":
    cpu_megatron.apply()
    seed_layers_by_global_number()
    cuda_type_names()
    from runner.engine.cli import standalone

    sys.exit(standalone())
