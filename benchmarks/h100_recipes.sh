#!/usr/bin/env bash
# Issue 38 (and 39's FP8 recipes) on one H100: the bundled engine, torchtitan 0.2.2 and the transformers loop, each
# at the schedule its recipe states, from the same seeded initial checkpoint, on the same rows.
# Stages in order of value; several may be named in one call (the device allows 10 minutes a call). Every step runs
# under `timeout`, capped by what is left of BUDGET_S (570 s from the start by default); outputs are packed into
# $OUT/results.tgz after every step, so a call cut short still returns what finished.
#
#   bash benchmarks/h100_recipes.sh ceiling       the card's matrix-product ceiling (benchmarks/matmul_ceiling.py)
#   bash benchmarks/h100_recipes.sh measure-1b    seeds the H100 recipes (benchmarks/h100_recipe_seeds.py), then
#                                                 `remeasure --runs 3` of the 1B recipes: engine, torchtitan,
#                                                 transformers loop (~120 + 130 + 110 s)
#   bash benchmarks/h100_recipes.sh converge-1b   200 steps of the markov stream at the recipes' schedule in each
#                                                 framework (~170 + 160 + 200 s); `runner convergence` of each pair
#   bash benchmarks/h100_recipes.sh measure-3b    the 3B recipes, 3 runs each (~240 + 250 + 230 s)
#   bash benchmarks/h100_recipes.sh fp8           torchtitan's float8 recipes at 1B and 3B, 3 runs each
#
# Wheels (carry .whl): those of benchmarks/h200_frameworks.sh plus torchao==0.18.0 (torchtitan's float8 converter);
# .whl/fallback holds tensorboard and its needs, installed only where `import tensorboard` fails.
# CPU rehearsal: CPU_PROOF=1 with PYTHONPATH naming a site with torchtitan and transformers, in a copy of the
# registry whose Llama-3.2 cards are tiny: same commands, CPU flags.
case "${1:-}" in -h | --help | help)  # this header, without running anything (tests/benchmarks: the scripts' smoke run)
  sed -n '2,/^case /{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
esac
set -u
cd "$(dirname "$0")/.."
START=$SECONDS
BUDGET_S=${BUDGET_S:-570}
OUT=${OUT:-/tmp/h100_recipes_out}
W=$OUT/work; mkdir -p "$W"
. benchmarks/lib/device_call.sh
[ -n "${CPU_PROOF:-}" ] && export OPENRECIPES_GPUS=${OPENRECIPES_GPUS:-1xNVIDIA H100 80GB HBM3}  # NVML's stand-in
device_setup torchtitan transformers torchao megatron-core
rm -rf recipes/*/h100/*.yaml recipes/*/h100/*.evidence.json 2>/dev/null  # a seed of an earlier call is not this one's
GPU=${GPU:-h100}  # h200: the fallback where no H100 is lent: the 1B H200 recipes re-stated and re-measured in place
python3 benchmarks/h100_recipe_seeds.py --gpu "$GPU"
[ "$GPU" = h200 ] && python3 benchmarks/h100_recipe_seeds.py  # the H100 seeds too: the convergence arms read them
echo "setup wall=$((SECONDS - START))s"

remeasure() {  # remeasure NAME CAP RECIPE RUN_CAP: 3 runs; the runner writes the recipe and its evidence
  local name=$1 t=$2 recipe=$3 per_run=$4
  TAILN=8 step "remeasure-$name" "$t" python3 -m runner remeasure "$recipe" --runs 3 --yes --json --accept-change \
    --timeout "$per_run"
  cp "$recipe" "$W/$name.yaml"; cp "${recipe%.yaml}.evidence.json" "$W/$name.evidence.json" 2>/dev/null
  local id=${recipe#recipes/}; id=${id%.yaml}
  local d; d=$(ls -dt .openrecipes-runs/"$id"/*/ 2>/dev/null | head -1)
  for l in "$d"run*.log; do [ -e "$l" ] && gzip -c "$l" > "$W/$name.$(basename "$l").gz"; done
  python3 benchmarks/h100_losses.py "$d"run*.log 2>&1 | tail -4
  pack
}
arm() {  # arm NAME CAP MODULE [SUBCOMMAND] RECIPE: one convergence arm at the recipe's schedule, raw log compressed
  local name=$1 t=$2; shift 2
  step "$name" "$t" python3 -m "$@" --steps "$CONV_STEPS" --data markov
  gzip -kf "$W/$name.log"
}
compare() {  # compare CANDIDATE REFERENCE
  python3 -m runner convergence "$W/$1.log" "$W/$2.log" --floor markov > "$W/convergence-$1-vs-$2.txt" 2>&1
  echo "convergence $1 vs $2: rc=$? $(tail -1 "$W/convergence-$1-vs-$2.txt")"
  pack
}
E1=recipes/llama-3.2-1b/$GPU/engine-sdpa-4k.yaml
T1=recipes/llama-3.2-1b/$GPU/torchtitan-4k.yaml
H1=recipes/llama-3.2-1b/$GPU/transformers-4k.yaml
E3=recipes/llama-3.2-3b/h100/engine-sdpa-4k.yaml
T3=recipes/llama-3.2-3b/h100/torchtitan-4k.yaml
H3=recipes/llama-3.2-3b/h100/transformers-4k.yaml
F1=recipes/llama-3.2-1b/h100/torchtitan-fp8-4k.yaml
F3=recipes/llama-3.2-3b/h100/torchtitan-fp8-4k.yaml
CONV_STEPS=${CONV_STEPS:-200}
# Stages, finest first; measure-1b, converge-1b, measure-3b name groups of them. One call of 10 minutes holds about
# measure-1b (~420 s); converge-1b (~480 s); measure-3b-engine and -torchtitan (~520 s); -transformers and fp8.
expand() {
  case "$1" in
  measure-1b) echo measure-1b-engine measure-1b-torchtitan measure-1b-transformers ;;
  converge-1b) echo conv-1b-engine conv-1b-others ;;
  measure-3b) echo measure-3b-engine measure-3b-torchtitan measure-3b-transformers ;;
  measure-3b-others) echo measure-3b-torchtitan measure-3b-transformers ;;
  *) echo "$1" ;;
  esac
}
for stage in $(for s in "$@"; do expand "$s"; done); do
  case "$stage" in
  ceiling) TAILN=2 step ceiling 60 python3 benchmarks/matmul_ceiling.py --json "$W/ceiling.json" ;;
  measure-1b-engine) remeasure engine-1b 170 "$E1" 90 ;;
  measure-1b-torchtitan) remeasure torchtitan-1b 180 "$T1" 100 ;;
  measure-1b-transformers) remeasure transformers-1b 150 "$H1" 80 ;;
  conv-1b-engine) arm conv-1b-engine 190 runner.engine train "$E1" ;;  # first: the other two are compared with it
  conv-1b-others)
    arm conv-1b-torchtitan 180 runner.frameworks.torchtitan "$T1"
    # two rows a micro-batch (the recipe's one): the same mean loss and update, fewer launches
    arm conv-1b-transformers 210 runner.frameworks.transformers "$H1" --rows-per-microbatch 2
    [ -e "$W/conv-1b-engine.log" ] && compare conv-1b-torchtitan conv-1b-engine
    [ -e "$W/conv-1b-engine.log" ] && compare conv-1b-transformers conv-1b-engine
    compare conv-1b-transformers conv-1b-torchtitan
    python3 benchmarks/h100_losses.py "$W"/conv-1b-*.log 2>&1 | tail -4
    ;;
  # 3B runs take 65-75 s each under the runner (2026-12-06: caps of 200 and 210 s cut every third run)
  measure-3b-engine) remeasure engine-3b 270 "$E3" 110 ;;
  measure-3b-torchtitan) remeasure torchtitan-3b 280 "$T3" 120 ;;
  measure-3b-transformers) remeasure transformers-3b 260 "$H3" 110 ;;
  fp8)
    remeasure torchtitan-fp8-1b 170 "$F1" 100
    remeasure torchtitan-fp8-3b 200 "$F3" 120
    ;;
  *) echo "unknown stage $stage (ceiling, measure-1b[-engine|-torchtitan|-transformers], converge-1b (conv-1b-engine,"\
     "conv-1b-others), measure-3b[-engine|-torchtitan|-transformers|-others], fp8)"; exit 2 ;;
  esac
done
echo "total wall=$((SECONDS - START))s"
pack
