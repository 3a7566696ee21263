"""MLPerf Training results (mlcommons/training_results_v3.0 ... v6.0) as `reported` recipes.

A round's repository is read as a directory: every `<submitter>/results/<system>/<benchmark>/` folder of an LLM
benchmark (gpt3, llama2_70b_lora, llama31_405b, llama31_8b; from v6.0 also the MoE benchmarks deepseekv3_671b and
gpt_oss_20b) is one source row. Its MLLOG result files
(`result_*.txt`) give each run's run_start -> run_stop time, its samples, its global batch and the quality it reached;
`<submitter>/systems/<system>.json` gives the accelerator, node count, division and software; the configuration
(`<submitter>/benchmarks/<benchmark>/implementations/*/config_*.sh`, NVIDIA's reference layout that every submitter
follows) gives TP/PP/CP/VP, micro-batch and precision. A run that did not end in success is not a result. The
recipe's tokens/s per GPU is the median run's samples x sequence length / run time / GPUs: a time-to-train
throughput that includes the evaluations made during training, not a steady-state step rate.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from generator import figures
from generator.catalog import Catalog
from generator.importers import base
from generator.importers.base import MAX_FIGURE, Document, Parsed, Skip, Source, SourceError, read_document, read_json
from generator.positions import line_col
from generator.registry import recipe_path

RULES_URL = ("https://github.com/mlcommons/training_policies/blob/d73e20f179151ce1b40dc300374f576a391f91ea/"
             "training_rules.adoc")


@dataclass(frozen=True)
class Benchmark:
    """What MLPerf fixes for a benchmark (training_rules.adoc at RULES_URL: the quality table, lines 145-150 and 778,
    and the number of runs, lines 497-505) and what the registry calls it. The v6.0 benchmarks are not in that
    revision of the rules: their target is the one every run logs (target_accuracy), and a row whose runs log none is
    skipped."""

    model: str  # catalog model name
    training: str  # workload.training
    metric: str  # what eval_accuracy holds
    target: float | None  # quality target (<=), where a log does not state target_accuracy; None: only as logged
    rows: str


BENCHMARKS = {
    "gpt3": Benchmark("GPT-3-175B", "pre-training", "log perplexity", 2.69,
                      "MLPerf gpt3: C4 (en) documents, 2048-token sequences, continued from MLPerf's checkpoint"),
    "llama2_70b_lora": Benchmark(
        "Llama-2-70B", "lora", "eval loss", 0.925,
        "MLPerf llama2_70b_lora: SCROLLS GovReport samples, 8,192 tokens each (padded), LoRA rank 16 on a frozen "
        "Llama-2-70B"),
    "llama31_405b": Benchmark("Llama-3.1-405B", "pre-training", "log perplexity", 5.6,
                              "MLPerf llama31_405b: C4 (en) documents, 8,192-token sequences"),
    "llama31_8b": Benchmark("Llama-3.1-8B", "pre-training", "log perplexity", 3.3,
                            "MLPerf llama31_8b: C4 (en) documents, 8,192-token sequences"),
    # v6.0 (NVIDIA's implementation README, deepseekv3_671b/implementations/tyche-hsg_ngpu512_ngc26.04_nemo/README.md
    # at the mirrored commit: the llama31_8b dataset and tokenizer, 4,096-token sequences, log perplexity <= 3.6, from
    # MLCommons' DeepSeek-V3 checkpoint warmed up for 50 iterations).
    "deepseekv3_671b": Benchmark(
        "DeepSeek-V3", "pre-training", "log perplexity", None,
        "MLPerf deepseekv3_671b: C4 (en) documents with Llama 3.1 8B's tokenizer (the llama31_8b dataset), "
        "4,096-token sequences, continued from MLCommons' DeepSeek-V3 checkpoint"),
    # v6.0: its logs state max_sequence_length 8192, init_checkpoint_step 0 and target_accuracy 3.34 (NVIDIA's
    # theia_ngpu8_ngc26.04_nemo/gpt_oss_20b/result_0.txt at the mirrored commit); no README of it was read.
    "gpt_oss_20b": Benchmark("GPT-OSS-20B", "pre-training", "eval_accuracy (log perplexity)", None,
                             "MLPerf gpt_oss_20b: 8,192-token sequences, trained from initialization"),
}

# llama2_70b_lora's fixed sequence length: the reference pads every GovReport sample to 8,192 tokens
# (mlcommons/training llama2_70b_lora, max_seq_length 8192); used where neither the logs nor the config state one.
LORA_SEQ = 8192
LORA_SEQ_REASON = ("MLPerf's llama2_70b_lora reference pads every GovReport sample to 8,192 tokens (max_seq_length "
                   "8192); neither the logs nor the config state a sequence length")

# accelerator_model_name (systems JSON) -> catalog GPU type; first match wins. Names not matched are reported.
ACCELERATORS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\bGB300\b"), "GB300"),
    (re.compile(r"\bB300\b"), "B300"),
    (re.compile(r"\bGB200\b"), "GB200"),
    (re.compile(r"\bB200\b"), "B200"),
    (re.compile(r"H200-NVL", re.I), "H200-NVL"),
    (re.compile(r"\bH200\b"), "H200"),
    (re.compile(r"H100-SXM"), "H100"),
    (re.compile(r"A100-SXM4-80GB"), "A100"),
    (re.compile(r"\bMI300X\b"), "MI300X"),
    (re.compile(r"\bMI325X\b"), "MI325X"),
    (re.compile(r"\bMI350X\b"), "MI350X"),
    (re.compile(r"\bMI355X\b"), "MI355X"),
    (re.compile(r"TPU-v5p", re.I), "TPU-v5p"),
    (re.compile(r"TPU-trillium", re.I), "TPU-Trillium"),
    (re.compile(r"Gaudi\(R\) 2|Gaudi ?2", re.I), "Gaudi2"),
    (re.compile(r"\bL40S\b"), "L40S"),
]


def gpu_type(accelerator: str) -> str | None:
    for pattern, name in ACCELERATORS:
        if pattern.search(accelerator):
            return name
    return None


# --- MLLOG -------------------------------------------------------------------------------------------------------

MLLOG = ":::MLLOG"


class MllogError(ValueError):
    """A result-file line that carries MLLOG but cannot be read: `line:col: message`, one line."""


@dataclass(frozen=True)
class Event:
    line: int
    key: str
    time_ms: int
    value: Any
    metadata: dict[str, Any]


def parse_line(text: str, line: int) -> Event | None:
    """One line of a result file: its MLLOG event, None for a line without one (launcher output), MllogError for
    an MLLOG line that is not a JSON object with key, time_ms and metadata."""
    at = text.find(MLLOG)
    if at < 0:
        return None
    col = at + len(MLLOG) + 1
    try:
        obj = read_json(text[at + len(MLLOG):], line, col)
    except SourceError as exc:
        raise MllogError(f"{exc.line}:{exc.column}: MLLOG: {exc.message}") from None
    if not isinstance(obj, dict):
        raise MllogError(f"{line}:{col}: MLLOG: a {type(obj).__name__}, not an object")
    key, time_ms, metadata = obj.get("key"), obj.get("time_ms"), obj.get("metadata", {})
    if not isinstance(key, str):
        raise MllogError(f"{line}:{col}: MLLOG: key: missing or not text")
    if isinstance(time_ms, bool) or not isinstance(time_ms, (int, float)) or not math.isfinite(time_ms) \
            or not 0 <= time_ms <= MAX_FIGURE:
        raise MllogError(f"{line}:{col}: MLLOG: time_ms: missing or not a time (a finite count of milliseconds)")
    if not isinstance(metadata, dict):
        raise MllogError(f"{line}:{col}: MLLOG: metadata: not an object")
    return Event(line, key, int(time_ms), obj.get("value"), metadata)


@dataclass
class Run:
    """One result file, read."""

    file: str
    run_ms: int | None = None  # run_start -> run_stop
    status: str | None = None  # run_stop's status
    samples: int | None = None
    global_batch: int | None = None
    seq: int | None = None
    target: float | None = None
    reached: float | None = None  # the last eval_accuracy before run_stop
    accumulation: int | None = None
    problems: list[str] = field(default_factory=list)  # unreadable MLLOG lines, located

    @property
    def success(self) -> bool:
        return (self.run_ms is not None and self.run_ms > 0 and self.status == "success" and self.samples is not None
                and self.samples > 0)


def _int(value: Any) -> int | None:
    """A logged count: a whole, finite number within base.MAX_FIGURE (1e300 samples is no count), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or abs(value) > MAX_FIGURE:
        return None
    return int(value) if float(value).is_integer() else None


def read_run(name: str, text: str, benchmark: str) -> Run:
    """A result file's run: the first run_start and the first run_stop after it (every rank may log them; the
    first is rank 0's or the earliest), the samples at run_stop (gpt3 counts tokens in eval metadata: its last
    eval's epoch_num / the sequence length), the logged batch, sequence length, target and last evaluation."""
    run = Run(name)
    start: int | None = None
    last_eval: Event | None = None
    for number, line in enumerate(text.splitlines(), 1):
        try:
            event = parse_line(line, number)
        except MllogError as exc:
            run.problems.append(f"{name}:{exc}")
            continue
        if event is None:
            continue
        key, value = event.key, event.value
        if key == "run_start" and start is None:
            start = event.time_ms
        elif key == "run_stop" and start is not None and run.run_ms is None:
            run.run_ms = event.time_ms - start
            run.status = str(event.metadata.get("status"))
            run.samples = _int(event.metadata.get("samples_count"))
        elif key == "global_batch_size" and run.global_batch is None:
            run.global_batch = _int(value)
        elif key == "max_sequence_length" and run.seq is None:
            run.seq = _int(value)
        elif key == "gradient_accumulation_steps" and run.accumulation is None:
            run.accumulation = _int(value)
        elif key == "target_accuracy" and run.target is None and isinstance(value, (int, float)):
            run.target = float(value)
        elif key == "eval_accuracy" and run.run_ms is None and isinstance(value, (int, float)):
            last_eval = event
    if last_eval is not None:
        run.reached = float(last_eval.value)
        if run.samples is None and benchmark == "gpt3":
            tokens = _int(last_eval.metadata.get("epoch_num"))
            if tokens is not None and tokens > 0 and run.seq:
                run.samples = tokens // run.seq
    return run


# --- configuration -----------------------------------------------------------------------------------------------

_ASSIGN = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(\S*)")
_DEFAULT = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*:[-=]([^}]*)\}$")
_SOURCE = re.compile(r"^\s*(?:source|\.)\s+(?:\$\(dirname\s+\$\{BASH_SOURCE\[0\]\}\)/|\./)?(config_[\w.-]+\.sh)\s*$")


def _value(raw: str) -> str:
    raw = raw.split("#", 1)[0].rstrip(";").strip("\"'")
    m = _DEFAULT.match(raw)
    return m.group(1).strip("\"'") if m else raw


_README_LINK = re.compile(r"\]\(\.\./([\w.-]+)/?\)")


def referred_implementations(folder: Path) -> list[Path]:
    """The sibling implementation folders that a folder's README.md points to (`[b200_nemo](../b200_nemo)`): a
    folder of configs whose README says to refer to another implementation for the details."""
    readme = folder / "README.md"
    if not readme.is_file():
        return []
    names = _README_LINK.findall(read_document(readme, errors="replace"))
    return [folder.parent / name for name in dict.fromkeys(names) if (folder.parent / name).is_dir()]


def read_config(path: Path, seen: frozenset[Path] = frozenset(),
                origin: dict[str, Path] | None = None) -> dict[str, str]:
    """The variables a config_*.sh sets, in order, following `source config_*.sh` of its own folder (later
    assignments win, as in bash). Expressions are kept as text (an int field that holds one is 'not stated').
    A sourced file that the config's folder lacks is read from the implementation its README.md refers to; origin
    (when given) records the file each variable was last set in, so such values can be marked inferred."""
    values: dict[str, str] = {}
    for line in read_document(path, errors="replace").splitlines():
        sourced = _SOURCE.match(line)
        if sourced:
            # Beside the config, or in the implementation's configs/ folder (where some copies keep config_common.sh),
            # else in the implementation the folder's README refers to.
            name = sourced.group(1)
            places = [path.parent / name, path.parent / "configs" / name, path.parent.parent / name]
            places += [other / name for other in referred_implementations(path.parent)]
            for other in places:
                if other.is_file() and other not in seen:
                    values.update(read_config(other, seen | {path}, origin))
                    break
            continue
        m = _ASSIGN.match(line)
        if m:
            values[m.group(1)] = _value(m.group(2))
            if origin is not None:
                origin[m.group(1)] = path
    return values


_OC_ENV_DEFAULT = re.compile(r"\$\{oc\.env:([A-Za-z_][A-Za-z0-9_]*),\s*([^}]+?)\s*\}")


def yaml_defaults(impl: Path, root: Path) -> dict[str, tuple[str, str]]:
    """Defaults the implementation's Hydra YAML gives an environment variable (`${oc.env:MBS,1}`): name -> (value,
    the YAML's path). The first YAML (sorted) that names one gives it."""
    out: dict[str, tuple[str, str]] = {}
    for path in sorted(impl.glob("**/*.yaml")):
        for m in _OC_ENV_DEFAULT.finditer(read_document(path, errors="replace")):
            out.setdefault(m.group(1), (m.group(2).strip("\"'"), path.relative_to(root).as_posix()))
    return out


_MIXED_PRECISION = "MegatronMixedPrecision("
_FP8_LITERAL = re.compile(r"""\bfp8\s*=\s*["'](hybrid|e4m3)["']""")


def _call_text(text: str, start: int) -> str:
    """The argument text of the call whose opening parenthesis ends at start (nested parentheses balanced)."""
    depth = 1
    for i in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return text[start:i]
    return text[start:]


def code_precision(impl: Path, root: Path) -> tuple[str, str] | None:
    """The FP8 setting an implementation's train.py hard-codes where its configs set none: a literal
    fp8="hybrid" (or "e4m3") passed to NeMo's MegatronMixedPrecision, Transformer Engine's delayed-scaling FP8 ->
    ("fp8", where it was read). None when no train.py hard-codes one, or when two disagree."""
    found: dict[str, str] = {}
    for path in sorted(impl.glob("**/train.py")):
        text = read_document(path, errors="replace")
        at = text.find(_MIXED_PRECISION)
        while at >= 0:
            start = at + len(_MIXED_PRECISION)
            m = _FP8_LITERAL.search(_call_text(text, start))
            if m:
                line, _ = line_col(text, start + m.start())
                found.setdefault("fp8", f"fp8=\"{m.group(1)}\" passed to MegatronMixedPrecision in "
                                        f"{path.relative_to(root).as_posix()} line {line}")
            at = text.find(_MIXED_PRECISION, start)
    return next(iter(found.items())) if len(found) == 1 else None


@dataclass(frozen=True)
class Config:
    path: str  # relative to the round's root
    nodes: int | None
    per_node: int | None
    tp: int
    pp: int
    cp: int
    vp: int | None
    mbs: int | None
    minibs: int | None
    sequence_parallel: bool | None
    precision: str
    precision_stated: bool
    precision_source: str
    seq: int | None = None  # MAX_SEQLEN, where the config or its YAML default states it
    asym_pp: bool = False  # ASYM_PP_EMBED and ASYM_PP_LOSS both true
    gbs: int | None = None  # GBS, where the config states the global batch itself
    rocm: bool = False  # sets a ROCm/HIP variable (an AMD GPU's config)
    from_defaults: tuple[tuple[str, str], ...] = ()  # (field, where) for values taken from the YAML defaults
    ep: int = 1  # EXPERT_PARALLEL (the MoE benchmarks)
    etp: int | None = None  # EXPERT_TENSOR_PARALLEL, where the config sets it
    pipeline_layout: str | None = None  # PIPELINE_LAYOUT: Megatron-core's layout string, where the config sets it

    def global_batch(self, gpus: int) -> int | None:
        if self.gbs is not None:
            return self.gbs
        if self.minibs is None or gpus % (self.tp * self.pp * self.cp):
            return None
        return gpus // (self.tp * self.pp * self.cp) * self.minibs

    def layout_key(self) -> tuple[Any, ...]:
        return (self.tp, self.pp, self.cp, self.vp, self.ep, self.etp, self.mbs, self.minibs, self.sequence_parallel,
                self.precision)


def config_from(values: dict[str, str], rel: str,
                defaults: dict[str, tuple[str, str]] | None = None,
                referred: dict[str, str] | None = None, code: tuple[str, str] | None = None) -> Config:
    """The layout and precision a config states; a variable it does not set takes its implementation's YAML default
    (recorded in from_defaults, so the recipe marks the field inferred). referred: the variables read from a file
    of another implementation folder (see read_config) -> where, also recorded in from_defaults. code: the
    precision the implementation's train.py hard-codes (code_precision), used only where nothing else states one."""
    defaults, referred = defaults or {}, referred or {}
    used: list[tuple[str, str]] = []

    def pick(field_name: str, *names: str) -> str | None:
        for name in names:
            if name in values:
                if name in referred:
                    used.append((field_name, referred[name]))
                return values[name]
        for name in names:
            if name in defaults:
                used.append((field_name, f"{name}={defaults[name][0]}, the default of {defaults[name][1]}"))
                return defaults[name][0]
        return None

    def as_int(text: str | None) -> int | None:
        return int(text) if text is not None and text.isdigit() else None

    def as_flag(text: str | None) -> bool | None:
        return None if text is None else text.lower() in ("true", "1", "yes")

    fp4_text = values.get("FP4")
    if fp4_text is not None and "FP4" in referred:
        used.append(("workload.precision", referred["FP4"]))
    fp4, fp8_text = as_flag(fp4_text), pick("workload.precision", "FP8")
    fp8 = as_flag(fp8_text)
    if fp4:
        recipe = values.get("FP4_RECIPE")
        precision, stated = ("nvfp4", True) if recipe == "nvfp4" else ("fp8", False)
        source = f"FP4=True, FP4_RECIPE={recipe}" if recipe else "FP4=True without FP4_RECIPE"
    elif fp8:
        recipe = values.get("FP8_RECIPE")
        precision = "fp8-cs" if recipe == "tensorwise" else "fp8"
        stated, source = True, "FP8=True" + (f", FP8_RECIPE={recipe}" if recipe else " (its scaling recipe unstated)")
    elif fp8 is False:
        precision, stated, source = "bf16", True, "FP8=False"
    elif code is not None:
        precision, stated = code[0], False
        source = f"implementation code: no FP8 or FP4 setting in the config or its YAML, and {code[1]}"
        used.append(("workload.precision", code[1]))
    else:
        precision, stated, source = "", False, "no FP8 or FP4 setting, and no YAML default for FP8"
    if ("FP8" not in values and fp8 is not None) or {"FP4", "FP8"} & set(referred):
        stated = False
    return Config(
        path=rel, nodes=as_int(values.get("DGXNNODES", values.get("NNODES"))),
        per_node=as_int(values.get("DGXNGPU", values.get("GPUS_PER_NODE"))),
        tp=as_int(pick("layout.tp", "TENSOR_MODEL_PARALLEL", "TP")) or 1,
        pp=as_int(pick("layout.pp", "PIPELINE_MODEL_PARALLEL", "PP")) or 1,
        cp=as_int(pick("layout.cp", "CONTEXT_PARALLEL", "CP")) or 1,
        vp=as_int(values.get("INTERLEAVED_PIPELINE") or values.get("VP")),
        mbs=as_int(pick("layout.rows_per_microbatch", "MICRO_BATCH_SIZE", "MBS")),
        minibs=as_int(values.get("MINIBS")),
        sequence_parallel=as_flag(pick("layout.sequence_parallel", "SEQ_PARALLEL", "SP")),
        precision=precision, precision_stated=stated, precision_source=source,
        seq=as_int(pick("workload.row_tokens", "MAX_SEQLEN")),
        gbs=as_int(values.get("GBS")),
        rocm=any(re.search(r"HIP|ROCM|HSA_", name) for name in values),
        asym_pp=bool(as_flag(values.get("ASYM_PP_EMBED")) and as_flag(values.get("ASYM_PP_LOSS"))),
        ep=as_int(pick("layout.ep", "EXPERT_PARALLEL", "EXPERT_MODEL_PARALLEL", "EP")) or 1,
        etp=as_int(pick("layout.etp", "EXPERT_TENSOR_PARALLEL", "ETP")),
        pipeline_layout=values.get("PIPELINE_LAYOUT") or None,
        from_defaults=tuple(used))


# Benchmark folder names some submitters use instead of MLPerf's (normalised as _folder_benchmark does).
_FOLDER_ALIASES = {"llama2_70b": "llama2_70b_lora", "llama3_8b": "llama31_8b", "llama3_1_8b": "llama31_8b",
                   "llama3_405b": "llama31_405b", "llama3_1_405b": "llama31_405b"}


def _folder_benchmark(name: str) -> str:
    """The benchmark a submitter's folder names: lower case, punctuation as '_', a trailing version number dropped
    (smc's gpt3.4.28 -> gpt3, llama2-70b_lora -> llama2_70b_lora), then the aliases above."""
    norm = re.sub(r"(_\d+)+$", "", re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_"))
    return _FOLDER_ALIASES.get(norm, norm)


def benchmark_folders(root: Path, submitter: str, benchmark: str) -> list[Path]:
    """The submitter's folders of a benchmark: benchmarks/<benchmark>, or a folder under benchmarks/ (or, as some
    submitters spell it, benchmark/) whose name names the benchmark."""
    out = []
    for parent in ("benchmarks", "benchmark"):
        base = root / submitter / parent
        if base.is_dir():
            out += [f for f in sorted(base.iterdir()) if f.is_dir() and _folder_benchmark(f.name) == benchmark]
    return out


def _config_paths(folder: Path) -> list[tuple[Path, Path]]:
    """(implementation folder, config) for a benchmark folder: NVIDIA's layout keeps implementations under
    implementations/<name>/ (any depth); a submitter without implementations/ keeps them in the benchmark folder
    itself or in a folder of it."""
    impls = folder / "implementations"
    base, direct = (impls, False) if impls.is_dir() else (folder, True)
    out = []
    for path in sorted(base.glob("**/config_*.sh")):
        parts = path.relative_to(base).parts
        if path.name.startswith("config_common") or (len(parts) == 1 and not direct):
            continue
        out.append((base / parts[0] if len(parts) > 1 else base, path))
    if not direct:
        # Beside implementations/ (GigaComputing's v5.0 config_MI325X_1x8x1.sh): the benchmark folder's own configs.
        out += [(folder, path) for path in sorted(folder.glob("config_*.sh")) if not path.name.startswith("config_common")]
    return out


def _configs(root: Path, submitter: str, benchmark: str) -> list[tuple[str, Config]]:
    """(implementation folder name, config) for every config_*.sh of the submitter's benchmark, at any depth of its
    implementation folder (config_common* are read only through `source`)."""
    out = []
    defaults: dict[Path, dict[str, tuple[str, str]]] = {}
    code: dict[Path, tuple[str, str] | None] = {}
    for folder in benchmark_folders(root, submitter, benchmark):
        for impl, path in _config_paths(folder):
            if impl not in defaults:
                defaults[impl] = yaml_defaults(impl, root)
                code[impl] = code_precision(impl, root)
            origin: dict[str, Path] = {}
            values = read_config(path, origin=origin)
            name = "" if impl == folder else impl.name
            out.append((name, config_from(values, path.relative_to(root).as_posix(), defaults[impl],
                                          _referred(values, origin, path, root), code[impl])))
    return out


def _referred(values: dict[str, str], origin: dict[str, Path], config: Path, root: Path) -> dict[str, str]:
    """The variables a config took from a file of another implementation folder (its README's referral) -> a
    sentence saying where, for the recipe's inferred entries."""
    out = {}
    for name, where in origin.items():
        if where.parent.parent == config.parent.parent and where.parent != config.parent:
            out[name] = (f"{name}={values[name]} in {where.relative_to(root).as_posix()}: the config sources "
                         f"{where.name}, which its own folder lacks, and {config.parent.name}/README.md refers to "
                         f"../{where.parent.name} for the details")
    return out


# The GPU types a config's file name may name (config_DGXB200_..., config_MI325X_...).
_GPU_NAMES = ("GB300", "B300", "GB200", "B200", "H200-NVL", "H200", "H100", "A100", "MI300X", "MI325X", "MI350X",
              "MI355X")


def _names_gpu(name: str, gpu: str) -> bool:
    """Whether a file name names the GPU type: as a word of its own or after DGX (config_DGXB200_...)."""
    return re.search(rf"(?<![A-Za-z])(?:DGX)?{re.escape(gpu)}(?![0-9])", name, re.I) is not None


def _for_gpu(c: Config, gpu: str) -> bool:
    """A config can have run on the row's GPU: it does not name another GPU type in its file name, and it sets
    ROCm/HIP variables exactly when the GPU is AMD's (a submitter's folder may hold configs for both vendors)."""
    name = c.path.rsplit("/", 1)[1]
    named = {g for g in _GPU_NAMES if _names_gpu(name, g)}
    if "GB200" in named:
        named.discard("B200")
    if "GB300" in named:
        named.discard("B300")
    if "H200-NVL" in named:  # config_XE7740lx8H200-NVL-141GB_...: the NVL part, not an SXM H200
        named.discard("H200")
    if named and gpu not in named:
        return False
    return c.rocm == gpu.startswith("MI")


def _named_for(system: str, gpu: str) -> list[tuple[str, Any]]:
    """Tie-breaks between configs that fit a row but differ: the implementation folder named as the system (or the
    system's name plus a suffix), then the config file named for the row's GPU type, then the config's own folder
    named as the system."""

    def platform(c: Config) -> str:
        """config_<platform>_<nodes>x<gpus>x...sh or config_<platform>.sh -> platform."""
        name = c.path.rsplit("/", 1)[1].removeprefix("config_").removesuffix(".sh")
        return re.split(r"_\d+x\d+x", name, maxsplit=1)[0].lower()

    return [("the implementation folder named as the system",
             lambda impl, c: impl == system or impl.startswith(system + "_") or system.startswith(impl + "_")),
            ("the config named for the system's platform",
             lambda impl, c: bool(platform(c)) and platform(c) in system.lower()),
            (f"the config named for {gpu}", lambda impl, c: _names_gpu(c.path.rsplit("/", 1)[1], gpu)),
            ("the config's own folder named as the system", lambda impl, c: _in_system_folder(c, system))]


def _in_system_folder(c: Config, system: str) -> bool:
    """The config sits in a folder named exactly as the row's system (Nebius keeps configs/nebius_b300_n1/...): the
    submitter's own statement of which config ran on that system."""
    parts = c.path.split("/")
    return len(parts) >= 2 and parts[-2] == system


_MAXTEXT_QUANT = re.compile(r"\bquantization=([A-Za-z0-9_]+)")


def _maxtext_note(root: Path, submitter: str, benchmark: str) -> str:
    """Why a submission without config_*.sh that launches MaxText (Google's TPU rows) stays out: its launch scripts
    state the layout, but their quantization (int8) is a precision the registry's schema has no value for."""
    scripts = [p for f in benchmark_folders(root, submitter, benchmark) for p in sorted(f.glob("**/*.sh"))
               if "MaxText/train.py" in read_document(p, errors="replace")]
    if not scripts:
        return ""
    quant = sorted({m.group(1) for p in scripts
                    for m in _MAXTEXT_QUANT.finditer(read_document(p, errors="replace"))})
    return (f"; its {len(scripts)} MaxText launch script(s) ({', '.join(p.name for p in scripts)}) set "
            + (f"quantization={'/'.join(quant)}, a precision the schema has no value for" if quant
               else "no quantization, and their precision is not read by this importer"))


def _accumulation(c: Config, gpus: int, global_batch: int) -> int | None:
    """The gradient accumulation a config implies: global batch / (micro-batch x DP)."""
    if c.mbs is None or gpus % (c.tp * c.pp * c.cp):
        return None
    per_step = c.mbs * (gpus // (c.tp * c.pp * c.cp))
    return global_batch // per_step if global_batch % per_step == 0 else None


def _micro_batch_from_log(c: Config, gpus: int, global_batch: int, accumulation: int) -> Config:
    """A config without a micro-batch size whose runs log gradient_accumulation_steps: the micro-batch the log
    implies, global batch / (DP x accumulation), recorded as inferred; the config unchanged where it is no whole
    number."""
    dp = gpus // (c.tp * c.pp * c.cp)
    if gpus % (c.tp * c.pp * c.cp) or global_batch % (dp * accumulation):
        return c
    mbs = global_batch // (dp * accumulation)
    reason = (f"the runs log gradient_accumulation_steps {accumulation}: global batch {global_batch} / (DP {dp} x "
              f"{accumulation}) = {mbs}")
    return replace(c, mbs=mbs, from_defaults=c.from_defaults + (("layout.rows_per_microbatch", reason),))


def match_config(root: Path, submitter: str, system: str, benchmark: str, nodes: int, per_node: int,
                 global_batch: int, gpu: str, accumulation: int | None = None) -> tuple[Config | None, str]:
    """The config that ran this row: its nodes x GPUs per node and the global batch it implies (GPUs / (TP x PP x
    CP) x MINIBS) equal the system's and the log's. Several that agree on every layout setting are one; else the
    tie-breaks of _named_for narrow them; else the row is ambiguous. (config, how it was chosen or why none)."""
    found = _configs(root, submitter, benchmark)
    folders = [f.relative_to(root).as_posix() for f in benchmark_folders(root, submitter, benchmark)]
    where = " or ".join(f"{f}/" for f in folders) or f"{submitter}/benchmarks/{benchmark}/implementations/"
    if not found:
        return None, (f"no config_*.sh under {where} or another folder of {submitter} named for {benchmark} "
                      "(benchmarks/ or benchmark/)" + _maxtext_note(root, submitter, benchmark))
    gpus = nodes * per_node
    fits = [(impl, c) for impl, c in found if c.nodes == nodes and c.per_node in (per_node, None)
            and c.global_batch(gpus) == global_batch]
    # A config named for another GPU type counts only when it sits in a folder named as the system and no config made
    # for the row's GPU does (Nebius ran configs/nebius_b300_n1/config_DGXB200_... on B300; Supermicro's B300 system
    # has implementations/AS-8126GS-NB3RT/config_DGXB200_...). ROCm variables must still match the vendor.
    named = [(impl, c) for impl, c in fits if (impl == system or _in_system_folder(c, system))
             and c.rocm == gpu.startswith("MI")]
    fits = [(impl, c) for impl, c in fits if _for_gpu(c, gpu)]
    chosen_by: list[str] = []
    if named and not any(impl == system or _in_system_folder(c, system) for impl, c in fits):
        fits, chosen_by = named, [f"its folder, named as the system (the config's name names another GPU than {gpu})"]
    if not fits:
        return None, (f"none of {len(found)} config_*.sh under {where} has {nodes} node(s) x {per_node} GPUs and "
                      f"global batch {global_batch} for {gpu} (DGXNNODES or NNODES, DGXNGPU or GPUS_PER_NODE; GBS, or "
                      "GPUs / (TP x PP x CP) x MINIBS; not named for another GPU type and ROCm variables exactly on AMD,"
                      " unless in a folder named as the system)")
    for label, keep in _named_for(system, gpu):
        if len(fits) == 1:
            break
        narrowed = [(impl, c) for impl, c in fits if keep(impl, c)]
        if narrowed:
            fits, chosen_by = narrowed, chosen_by + [label]
    if len({c.layout_key() for _, c in fits}) > 1 and accumulation is not None:
        # Still differing: the log's own gradient_accumulation_steps, which each config's micro-batch and DP imply.
        same = [(impl, c) for impl, c in fits if _accumulation(c, gpus, global_batch) == accumulation]
        if same:
            fits, chosen_by = same, chosen_by + [f"the gradient accumulation the log states ({accumulation})"]
    if len({c.layout_key() for _, c in fits}) > 1:
        return None, (f"{len(fits)} configs fit {nodes} x {per_node} GPUs and global batch {global_batch} but "
                      f"differ in layout or precision ({', '.join(c.path.rsplit('/', 1)[1] for _, c in fits)})")
    chosen = fits[0][1]
    others = [c.path.rsplit("/", 1)[1] for _, c in fits[1:]]
    how = (chosen.path + f" (its {nodes} x {per_node} GPUs and global batch {global_batch} fit"
           + (f"; chosen by {' and '.join(chosen_by)}" if chosen_by else "")
           + (f"; also fit, with the same layout and precision: {', '.join(others)}" if others else "") + ")")
    return chosen, how


# --- rows --------------------------------------------------------------------------------------------------------


@dataclass
class Row:
    line: int  # 1-based position of the row in the round's sorted listing
    rel: str  # <submitter>/results/<system>/<benchmark>
    round: str
    submitter: str
    system: str
    benchmark: str
    system_json: dict[str, Any]
    gpu: str
    nodes: int
    per_node: int
    runs: list[Run]
    failed: list[str]
    problems: list[str]
    config: Config
    config_how: str
    global_batch: int
    seq: int
    seq_stated: bool
    target: float
    target_stated: bool

    @property
    def bench(self) -> Benchmark:
        return BENCHMARKS[self.benchmark]

    @property
    def model(self) -> str:
        return self.bench.model

    @property
    def gpus(self) -> int:
        return self.nodes * self.per_node

    def name(self) -> str:
        slug = re.sub(r"[^a-z0-9]+", "-", f"{self.submitter}-{self.system}".lower()).strip("-")
        return f"mlperf-{self.round}-{slug}"


def _round(root: Path) -> str:
    """The round (v5.1) named by the checkout's folder (training_results_v5.1), or by the folder it links to."""
    for text in (root.as_posix(), root.resolve().as_posix()):
        m = re.search(r"training_results_(v\d+\.\d+)", text)
        if m:
            return m.group(1)
    return root.name


def _int_field(obj: dict[str, Any], key: str) -> int | None:
    value = obj.get(key)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def read_round(root: Path, round_name: str | None = None) -> Parsed:
    """Every LLM benchmark folder of a round's checkout -> a Row or a Skip (its ordinal, path and reason)."""
    out = Parsed()
    rname = round_name or _round(root)
    folders = sorted(p for p in root.glob("*/results/*/*") if p.is_dir() and p.name in BENCHMARKS)
    for line, folder in enumerate(folders, 1):
        out.table_rows += 1
        rel = folder.relative_to(root).as_posix()
        try:
            row = _row(root, folder, rel, line, rname)
        except ValueError as exc:
            if isinstance(exc, SourceError) and exc.file is not None:
                raise  # a file of the checkout that is no regular text file (a FIFO, a device, a loop): stop there
            out.skips.append(Skip(line, f"{rel}: {exc}"))
            continue
        out.rows.append(row)
    return out


def _row(root: Path, folder: Path, rel: str, line: int, rname: str) -> Row:
    submitter, _, system, benchmark = rel.split("/")
    sys_path = root / submitter / "systems" / f"{system}.json"
    if not sys_path.is_file():
        raise ValueError(f"no systems/{system}.json")
    try:
        sysjson = read_json(read_document(sys_path))
    except SourceError as exc:
        if exc.file is not None:
            raise  # not a regular file, binary or too big: the import stops there
        raise ValueError(f"systems/{system}.json:{exc.line}:{exc.column}: {exc.message}") from None
    if not isinstance(sysjson, dict):
        raise ValueError(f"systems/{system}.json is not an object")
    division = str(sysjson.get("division", "")).lower()
    if division != "closed":
        raise ValueError(f"division {division or 'not stated'!r}: only the closed division is imported")
    accelerator = str(sysjson.get("accelerator_model_name", ""))
    gpu = gpu_type(accelerator)
    if gpu is None:
        raise ValueError(f"accelerator {accelerator!r} maps to no GPU type of the importer")
    nodes, per_node = _int_field(sysjson, "number_of_nodes"), _int_field(sysjson, "accelerators_per_node")
    if not nodes or not per_node:
        raise ValueError("the systems JSON states no number_of_nodes or accelerators_per_node")
    files = sorted(folder.glob("result_*.txt"))
    if not files:
        raise ValueError("no result_*.txt (absent from the copy read)")
    runs, failed, problems = [], [], []
    for f in files:
        run = read_run(f.name, read_document(f, errors="replace"), benchmark)
        problems.extend(run.problems)
        if run.success:
            runs.append(run)
        else:
            why = ("no run_stop" if run.run_ms is None else f"run_stop status {run.status}" if run.status != "success"
                   else "run_stop states no samples_count" if run.samples is None
                   else f"samples_count {run.samples} is not positive" if run.samples <= 0
                   else f"run_stop {run.run_ms} ms after run_start")
            failed.append(f"{f.name} ({why})")
    if not runs:
        unreadable = (f"; unreadable: {problems[0]}" + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else "")
                      if problems else "")
        raise ValueError(f"no successful run among {len(files)} result file(s): {'; '.join(failed)}{unreadable}")
    batches = {r.global_batch for r in runs}
    if len(batches) != 1 or None in batches:
        raise ValueError(f"the runs log global_batch_size {sorted(map(str, batches))}: not one stated batch")
    global_batch = runs[0].global_batch
    assert global_batch is not None
    bench = BENCHMARKS[benchmark]
    seqs = {r.seq for r in runs if r.seq is not None}
    if len(seqs) > 1:
        raise ValueError(f"the runs log max_sequence_length {sorted(seqs)}")
    targets = {r.target for r in runs if r.target is not None}
    target, target_stated = (targets.pop(), True) if len(targets) == 1 else (bench.target, False)
    if target is None:
        raise ValueError(f"the runs log target_accuracy {sorted(targets) or 'nowhere'}: not one target, and "
                         f"{benchmark} has no target of the rules' table to fall back on")
    accumulations = {r.accumulation for r in runs if r.accumulation is not None}
    accumulation = accumulations.pop() if len(accumulations) == 1 else None
    config, how = match_config(root, submitter, system, benchmark, nodes, per_node, global_batch, gpu, accumulation)
    if config is None:
        raise ValueError(how)
    if not config.precision:
        raise ValueError(f"{config.path} states no precision: {config.precision_source}")
    if config.mbs is None and accumulation is not None:
        config = _micro_batch_from_log(config, nodes * per_node, global_batch, accumulation)
    if config.mbs is None:
        raise ValueError(f"{config.path} states no micro-batch size (MICRO_BATCH_SIZE or MBS) and its "
                         "implementation's YAML gives none")
    if seqs:
        seq, seq_stated = seqs.pop(), True
    elif config.seq is not None:
        seq, seq_stated = config.seq, False
    elif benchmark == "llama2_70b_lora":
        seq, seq_stated = LORA_SEQ, False
    else:
        raise ValueError(f"no max_sequence_length logged and {config.path} states no MAX_SEQLEN")
    return Row(line, rel, rname, submitter, system, benchmark, sysjson, gpu, nodes, per_node, runs, failed, problems,
               config, how, global_batch, seq, seq_stated, target, target_stated)


# --- the recipe --------------------------------------------------------------------------------------------------


def _median_run(row: Row) -> tuple[int, Run]:
    i = figures.median_index([r.run_ms for r in row.runs])  # type: ignore[misc]
    return i, row.runs[i]


# A systems JSON value its submitter left as a placeholder ("TBD") states nothing: it is left out.
_PLACEHOLDER = re.compile(r"\b(TODO|FIXME|TBD)\b")


def _stated_text(value: Any) -> str | None:
    text = str(value).strip() if value is not None else ""
    return text if text and not _PLACEHOLDER.search(text) else None


def _software(sysjson: dict[str, Any]) -> str:
    """framework and other_software_stack as the systems JSON states them (placeholder values left out)."""
    other = sysjson.get("other_software_stack")
    if isinstance(other, dict):
        items = [f"{k} {_stated_text(v)}" for k, v in other.items() if _stated_text(v)]
        other_text = ", ".join(items) or None
    else:
        other_text = _stated_text(other)
    framework = _stated_text(sysjson.get("framework"))
    parts = ([f"framework {framework}"] if framework else []) + ([f"other software {other_text}"] if other_text else [])
    return "; ".join(parts) or "no software stated"


def build(row: Row, catalog: Catalog, document: Document, superseded: list[dict[str, Any]],
          skipped: list[str]) -> dict[str, Any]:
    card = catalog.models[row.model]
    c = row.config
    runs_ms = [r.run_ms for r in row.runs]
    samples = [r.samples for r in row.runs]
    tokens = figures.time_to_train_tokens_per_s_per_gpu(samples, runs_ms, row.seq, row.gpus)  # type: ignore[arg-type]
    i, median = _median_run(row)
    score = figures.olympic_mean(runs_ms)  # type: ignore[arg-type]
    dp = row.gpus // (c.tp * c.pp * c.cp)
    accumulation = row.global_batch // (c.mbs * dp) if c.mbs and row.global_batch % (c.mbs * dp) == 0 else None
    vpp = c.vp if c.pp > 1 and c.vp else 1
    sp = (c.sequence_parallel if c.sequence_parallel is not None else c.tp > 1) and c.tp > 1
    label = f"TP{c.tp} PP{c.pp}" + (f" VPP{vpp}" if vpp > 1 else "") + f" CP{c.cp}" \
        + (f" EP{c.ep}" if c.ep > 1 else "") + f" DP{dp}"
    layers = card.architecture.layers if card.architecture else None
    stated = stated_layout(c, layers, vpp)
    gpu = catalog.gpus[row.gpu]
    reached = [r for r in row.runs if r.reached is not None and r.reached <= row.target]
    sysname = str(row.system_json.get("system_name") or row.system)
    recipe: dict[str, Any] = {
        "schema_version": 1,
        "model": row.model,
        "gpu": {"type": row.gpu, "memory_gb": gpu.memory_gb, "count": row.gpus, "per_node": row.per_node,
                "instance": catalog.instance_for(row.gpu, row.per_node)},
        "author": {"name": f"{row.submitter}, MLPerf Training {row.round} (closed division)",
                   "url": "https://mlcommons.org/benchmarks/training/"},
        "status": "reported",
        "stack": {"framework": _stated_text(row.system_json.get("framework")) or "not stated",
                  "source": f"{row.submitter}/systems/{row.system}.json: {_software(row.system_json)}"},
        "workload": {"row_tokens": row.seq, "rows": row.bench.rows, "global_batch": row.global_batch,
                     "precision": c.precision, "training": row.bench.training},
        "layout": {
            "label": label,
            "summary": f"{row.gpus} {row.gpu} ({row.nodes} node(s) x {row.per_node}), {label}, micro-batch {c.mbs}, "
                       f"global batch {row.global_batch} x {row.seq} tokens, {c.precision}; MLPerf {row.benchmark} as "
                       f"{row.submitter} submitted it ({sysname}).",
            "tp": c.tp, "pp": c.pp, "vpp": vpp, "cp": c.cp, "ep": c.ep, "etp": _etp(c), "dp": dp, "fsdp": False,
            "gradient_accumulation": accumulation, "sequence_parallel": sp, "layer_split": None,
            "rows_per_microbatch": c.mbs, "recompute": None, "dispatcher": None,
            "mtp_layers": stated[1] if stated else None,
            "pipeline_layout": _pipeline_layout(row, layers, vpp),
        },
        "result": base.imported_result(card, figures.stated("tokens_per_s_per_gpu", tokens),
                                  runs=len(row.runs)),
        "correctness": {
            "result": "not_run",
            "summary": f"MLPerf quality target: {row.bench.metric} <= {row.target:g}; {len(reached)} of "
                       f"{len(row.runs)} counted runs reached it by their last evaluation (the median run: "
                       f"{median.reached:.4f}). The submitter's runs, not re-run here.",
            "rules": f"MLPerf Training {row.round} rules ({RULES_URL}): a run ends when the target is reached",
            "quality_target": {
                "metric": row.bench.metric, "target": row.target, "direction": "<=",
                "reached": round(median.reached, 6) if median.reached is not None else row.target,
                "runs_reached": len(reached), "runs": len(row.runs),
                "source": f"{row.rel}/{median.file} (eval_accuracy before run_stop); target "
                          + ("target_accuracy as logged" if row.target_stated else f"from the rules' quality table "
                             f"({RULES_URL})")},
        },
        "publication": {"url": document.url, "commit": document.commit, "system": sysname,
                        "superseded": superseded},
        "run": _run(row, document),
        "notes": "\n\n".join(_notes(row, tokens, median, score, skipped)) + "\n",
    }
    recipe["result"]["time_to_train"] = {
        "runs_ms": runs_ms, "samples": samples, "median_ms": float(median.run_ms),  # type: ignore[arg-type]
        "score_ms": round(score, figures.TIME_TO_TRAIN_SCORE_DECIMALS) if score is not None else None,
        "evaluation_included": True,
        "failed_runs": len(row.failed)}
    inferred = _inferred(row, accumulation, card.architecture.layers if card.architecture else None, vpp)
    if inferred:
        recipe["inferred"] = inferred
    base.derive_figures(recipe, catalog)
    return recipe


_LAYOUT_GROUP = re.compile(r"\(([^()]*)\)(?:\*(\d+))?")
_LAYOUT_REPEAT = re.compile(r"([EtmL])\*(\d+)")
_LAYOUT_PARTS = {"E": "the embedding", "t": "decoder layer", "m": "MTP layer", "L": "the loss"}


def expand_pipeline_layout(text: str) -> list[str] | None:
    """Megatron-core's pipeline layout string (PIPELINE_LAYOUT="Et*4|(t*4|)*14tmL": E the embedding, t a decoder
    layer, m a multi-token-prediction layer, L the loss, | the end of a virtual stage, *n a repeat) -> each virtual
    stage's parts ("Etttt", ...). None where the text is not of that notation."""
    flat = text.replace(" ", "")
    for _ in range(flat.count("(") + 1):
        flat = _LAYOUT_GROUP.sub(lambda m: m.group(1) * int(m.group(2) or 1), flat)
    flat = _LAYOUT_REPEAT.sub(lambda m: m.group(1) * int(m.group(2)), flat)
    if not flat or set(flat) - set("EtmL|"):
        return None
    stages = flat.split("|")
    return stages[:-1] if stages[-1] == "" else stages


def _stage_text(stage: str) -> str:
    decoder = stage.count("t")
    parts = (["the embedding"] if "E" in stage else []) + [f"{decoder} decoder layer(s)"] \
        + (["the MTP layer(s)"] if "m" in stage else []) + (["the loss"] if "L" in stage else [])
    return " + ".join(parts)


def stated_layout(c: Config, layers: int | None, vpp: int) -> tuple[str, int | None] | None:
    """The split a config's PIPELINE_LAYOUT states, in words, and its MTP layers; None without one. A layout whose
    decoder layers or stages do not add up to the model's layers and PP x VP is quoted, not described."""
    if c.pipeline_layout is None:
        return None
    stages = expand_pipeline_layout(c.pipeline_layout)
    quoted = f"{c.path} sets PIPELINE_LAYOUT=\"{c.pipeline_layout}\""
    if stages is None or len(stages) != c.pp * vpp or (layers is not None and sum(s.count("t") for s in stages) != layers):
        return f"{quoted}, which does not add up to {layers} layers over PP {c.pp} x VP {vpp} as read here", None
    groups: list[tuple[int, int, str]] = []  # (first stage, last stage, its parts), runs of equal stages
    for i, stage in enumerate(stages, 1):
        if groups and groups[-1][2] == stage:
            groups[-1] = (groups[-1][0], i, stage)
        else:
            groups.append((i, i, stage))
    said = "; ".join((f"stage {a}" if a == b else f"stages {a}-{b}") + f": {_stage_text(st)}" for a, b, st in groups)
    mtp = sum(s.count("m") for s in stages)
    return (f"{quoted} (Megatron-core's notation): {len(stages)} virtual stages = PP {c.pp} x VP {vpp}; {said}",
            mtp)


def _pipeline_layout(row: Row, layers: int | None, vpp: int) -> str | None:
    """How the decoder layers split: as the config's PIPELINE_LAYOUT states it; else, where they do not divide evenly
    over PP x VP stages, Megatron's asymmetric split when the config sets ASYM_PP_EMBED and ASYM_PP_LOSS (the
    embedding and the loss each take one layer's place)."""
    c = row.config
    stated = stated_layout(c, layers, vpp)
    if stated is not None:
        return stated[0]
    stages = c.pp * vpp
    if layers is None or c.pp == 1 or layers % stages == 0:
        return None
    if c.asym_pp and (layers + 2) % stages == 0:
        per = (layers + 2) // stages
        return (f"{c.path} sets ASYM_PP_EMBED=True and ASYM_PP_LOSS=True: the embedding and the loss each take one "
                f"layer's place, so ({layers} + 2) / ({c.pp} x {vpp}) = {per} per virtual stage, the first holding "
                f"{per - 1} decoder layer(s) and the embedding, the last {per - 1} and the loss")
    return f"not stated: {c.path} does not say how {layers} layers split over {c.pp} x {vpp} virtual stages"


def _notes(row: Row, tokens: float, median: Run, score: float | None, skipped: list[str]) -> list[str]:
    c = row.config
    per_run = ", ".join(f"{r.file} {r.run_ms / 60000:.2f} min" for r in row.runs)  # type: ignore[operator]
    notes = [
        f"MLPerf Training {row.round}, closed division: {row.submitter}'s {row.benchmark} on {row.system} "
        f"({row.gpus} {row.system_json.get('accelerator_model_name')}; availability as the systems JSON states it: "
        f"{_stated_text(row.system_json.get('status')) or 'not stated'}). Not re-measured here.",
        f"Time-to-train throughput, evaluation included: tokens/s per GPU = samples x {row.seq} tokens / (run_start "
        f"to run_stop) / {row.gpus} GPUs for the median run ({median.file}: {median.samples} samples in "
        f"{median.run_ms} ms = {tokens:.1f}), not a steady-state step rate; it counts every sample's "
        f"{row.seq} tokens" + (" (padding included)" if row.benchmark == "llama2_70b_lora" else "") + ". Runs: "
        + per_run + ".",
        "MLPerf scores a benchmark by the mean of its runs without the fastest and the slowest (training_rules.adoc, "
        "'Benchmark results'" + (f"; here {score / 60000:.3f} min" if score is not None else "") + "); this recipe "
        "takes the median run instead, the registry's convention for a figure from several runs, which for 3 runs is "
        "the same run. MLPerf's RCP normalisation of the score is not applied.",
        f"Configuration: {row.config_how}; precision from its {c.precision_source}. Activation recompute is not "
        "stated (null); the systems JSON's software stack is under stack.source.",
    ]
    if c.sequence_parallel and c.tp == 1:
        notes.append(f"{c.path} turns sequence parallelism on, which does nothing at TP1: recorded as off.")
    if row.failed:
        notes.append("Not counted (a run that did not end in success is not a result): " + "; ".join(row.failed) + ".")
    if row.problems:
        shown = row.problems[:3]
        notes.append("Unreadable MLLOG lines skipped: " + "; ".join(shown)
                     + (f"; and {len(row.problems) - 3} more" if len(row.problems) > 3 else "") + ".")
    if row.benchmark == "llama2_70b_lora":
        notes.append("LoRA fine-tuning of a frozen base: MFU counts 4N a token (no weight gradients of the base).")
    notes.extend(f"The importer also reports row {row.line}: {reason}." for reason in skipped)
    return notes


def _inferred(row: Row, accumulation: int | None, layers: int | None, vpp: int) -> list[dict[str, str]]:
    c = row.config
    out = []
    defaults = dict(c.from_defaults)
    if not row.seq_stated:
        out.append({"field": "workload.row_tokens", "reason": "the logs state no max_sequence_length: "
                    + (defaults.get("workload.row_tokens") or (f"MAX_SEQLEN of {c.path}" if c.seq == row.seq
                                                               else LORA_SEQ_REASON))})
    if not c.precision_stated:
        precision_from = "; ".join(where for name, where in c.from_defaults if name == "workload.precision")
        out.append({"field": "workload.precision", "reason": f"{c.path} sets neither FP8 nor FP4: "
                    + (precision_from or f"{c.precision}, the implementation's default")})
    for name in ("layout.tp", "layout.pp", "layout.cp", "layout.ep", "layout.etp", "layout.rows_per_microbatch"):
        if name in defaults:
            out.append({"field": name, "reason": f"{c.path} does not set it: {defaults[name]}"})
    if c.sequence_parallel is None:
        out.append({"field": "layout.sequence_parallel", "reason": f"{c.path} sets no SEQ_PARALLEL or SP and its "
                    "implementation's YAML gives no default: taken as on when TP > 1"})
    elif "layout.sequence_parallel" in defaults:
        out.append({"field": "layout.sequence_parallel", "reason": f"{c.path} does not set it: "
                    f"{defaults['layout.sequence_parallel']}"})
    layout_text = _pipeline_layout(row, layers, vpp)
    if c.pipeline_layout is None and layout_text is not None and not layout_text.startswith("not stated"):
        out.append({"field": "layout.pipeline_layout", "reason": "from the config's ASYM_PP_EMBED and ASYM_PP_LOSS, "
                    "as Megatron-core's account_for_embedding/loss_in_pipeline_split place them"})
    if c.ep > 1 and c.etp is None and c.tp > 1:
        out.append({"field": "layout.etp", "reason": f"{c.path} sets no EXPERT_TENSOR_PARALLEL: Megatron-core's "
                    "default, the tensor-parallel size"})
    if accumulation is not None:
        out.append({"field": "layout.gradient_accumulation", "reason": f"global batch {row.global_batch} / "
                    f"(micro-batch {c.mbs} x DP {row.gpus // (c.tp * c.pp * c.cp)})"})
    return out


def _etp(c: Config) -> int:
    """Expert tensor parallelism: as the config sets it; else Megatron-core's default, the tensor-parallel size
    (expert_tensor_parallel_size unset), which matters only with experts split (EP > 1)."""
    if c.etp is not None:
        return c.etp
    return c.tp if c.ep > 1 else 1


def _run(row: Row, document: Document) -> str:
    impl = row.config.path.rsplit("/", 1)[0]
    return (f"# MLPerf Training {row.round}: {row.submitter}'s implementation, {impl}\n"
            f"# config: {row.config.path}; results: {document.url}\n"
            "echo 'reported recipe: run it with the implementation README at the cited commit' >&2\nexit 1\n")


class MlperfTraining(Source):
    """A checkout (or copy) of mlcommons/training_results_vX.Y."""

    name = "mlperf-training"
    reads_directory = True

    def parse(self, text: str) -> Parsed:
        raise ValueError("mlperf-training reads a round's checkout (a folder), not a text document")

    def read(self, path: Path) -> Parsed:
        return read_round(path)

    def row_document(self, document: Document, row: Row) -> Document:
        base = document.url.rstrip("/")
        return Document(f"{base}/tree/{document.commit}/{row.rel}" if document.commit else f"{base}/{row.rel}",
                        document.commit)

    def admit(self, row: Row, catalog: Catalog) -> str | None:
        gap = base.catalog_gap(catalog, row.model, row.gpu)
        return f"{row.rel}: {gap}" if gap else None

    def target(self, root: Path, catalog: Catalog, row: Row) -> Path:
        return recipe_path(root, catalog.model_slugs[row.model], row.gpu, row.name())

    build = staticmethod(build)


SOURCE = MlperfTraining()
