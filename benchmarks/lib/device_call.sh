# Shared by the device scripts (benchmarks/h100_recipes.sh, benchmarks/h200_frameworks.sh); sourced, not run.
# The caller sets START, BUDGET_S, OUT and W (= $OUT/work) first. Outputs are packed into $OUT/results.tgz after
# every step, so a call cut off by its limit still returns what finished; every step runs under `timeout`, capped by
# what is left of BUDGET_S.

pack() { tar czf "$OUT/results.tgz" -C "$OUT" work; }

# device_setup PACKAGE...: the carried wheels installed once per machine (.whl, and .whl/fallback where
# `import tensorboard` fails), the environment of a measured run, and $W/gpu.txt (the card, the interpreter, torch,
# the PACKAGEs' versions). With CPU_PROOF set: nothing installed, the checkout on PYTHONPATH, an empty gpu.txt.
device_setup() {
  if [ -z "${CPU_PROOF:-}" ]; then
    if [ ! -e /tmp/site/.installed ]; then
      python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
        || exit 1
      touch /tmp/site/.installed
    fi
    export PYTHONPATH=/tmp/site:$PWD
    if ! python3 -c 'import tensorboard' 2>/dev/null; then
      python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/fallback/*.whl \
        || exit 1
      echo "tensorboard installed from .whl/fallback"
    fi
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.sm,power.limit --format=csv > "$W/gpu.txt"
  else
    export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
    : > "$W/gpu.txt"
  fi
  export PYTHONUNBUFFERED=1 CUDA_DEVICE_MAX_CONNECTIONS=1 PYTHONWARNINGS=ignore
  export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
  python3 -c 'import sys, torch; print(sys.version); print(torch.__version__, torch.version.cuda)' >> "$W/gpu.txt"
  python3 -c 'import sys, importlib.metadata as m; print({d: m.version(d) for d in sys.argv[1:]})' "$@" >> "$W/gpu.txt" 2>&1
  cat "$W/gpu.txt"
}

cap() {  # cap SECONDS: the step's limit, no more than what is left of the budget (10 s kept for the pack)
  local left=$((BUDGET_S - (SECONDS - START) - 10))
  [ "$left" -lt "$1" ] && echo "$left" || echo "$1"
}

step() {  # step NAME CAP COMMAND...: the command's output kept whole (compressed later) and its tail shown
  local name=$1 t; t=$(cap "$2"); shift 2
  if [ "$t" -le 5 ]; then echo "$name skipped: the budget is spent"; return; fi
  local s=$SECONDS
  timeout "$t" "$@" > "$W/$name.log" 2>&1
  echo "$name rc=$? wall=$((SECONDS - s))s (cap ${t}s)"; grep -v -i warn "$W/$name.log" | tail -"${TAILN:-6}"
  cp "$W/$name.log" "$W/$name.txt"  # *.log is ignored by git: the copy that can be committed
  pack
}
