"""The bundled training engine: megatron-core GPT on seeded synthetic tokens, laid out as a recipe says.

`plan` turns a recipe plus its catalog model card into an `EnginePlan` (pure Python, no torch import), refusing
what the engine cannot run with a reason; `train` runs the plan (imports torch and megatron-core only then);
`cli` wires `python -m runner train RECIPE`.
"""

STEP_PREFIX = "openrecipes-step "
SUMMARY_PREFIX = "openrecipes-engine "
