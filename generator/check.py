"""Cross-checks: every derived figure recomputed, every structural rule enforced, all problems at once."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import os
import pickle
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from generator import figures
from generator.catalog import Catalog
from generator.load import LoadedRecipe, load_recipe, recipe_id
from generator.models import Outcome, OverallOutcome, Status
from generator.problems import InputError, Problem

RECIPES_DIR = "recipes"
CACHE_DIR = ".openrecipes-cache"
PUBLISHED_TFLOPS_TOLERANCE = 0.005  # |recomputed - published| / published allowed for Model TFLOP/s


@dataclass
class Registry:
    root: Path
    catalog: Catalog
    recipes: list[LoadedRecipe] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def recipe_files(root: Path, paths: Iterable[Path] | None = None) -> list[Path]:
    base = root / RECIPES_DIR
    if not paths:
        return sorted(p for p in base.rglob("*") if p.suffix in (".yaml", ".yml") and not p.is_dir())
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            out.extend(sorted(q for q in p.rglob("*") if q.suffix in (".yaml", ".yml")))
        else:
            out.append(p)
    return out


def _display(path: Path, root: Path) -> str:
    try:
        return str(path.absolute().relative_to(root.absolute()))
    except ValueError:
        return str(path)


def _place_problems(path: Path, root: Path, display: str) -> list[Problem]:
    """Files must be real files inside recipes/ (a symlink may not lead out of it)."""
    if not path.is_symlink():
        return []
    base = (root / RECIPES_DIR).resolve()
    resolved = path.resolve()
    if not resolved.is_relative_to(base):
        return [Problem(display, 1, 1, "(document)", f"symlink points outside recipes/ (to {resolved})")]
    return []


class _CheckCache:
    """Content-hash cache of per-file check results: a warm re-check reads and hashes, nothing more.

    A result is reused only for the same bytes, the same catalog, the same code and the same day (the
    future-date rule depends on today)."""

    def __init__(self, root: Path, catalog_key: str, today: dt.date) -> None:
        self.file = root / CACHE_DIR / "check.pickle"
        self.key = (self._code_key(), catalog_key, today.isoformat())
        self.entries: dict[str, tuple[bytes, str, list[Problem]]] = {}
        self.dirty = False
        try:
            with open(self.file, "rb") as fh:
                key, entries = pickle.load(fh)
            if key == self.key:
                self.entries = entries
        except (OSError, pickle.PickleError, EOFError, ValueError, AttributeError, ImportError, TypeError):
            self.entries = {}

    @staticmethod
    def _code_key() -> str:
        here = Path(__file__).parent
        digest = hashlib.sha256()
        for name in ("models.py", "load.py", "check.py", "figures.py", "catalog.py"):
            digest.update((here / name).read_bytes())
        return digest.hexdigest()

    def get(self, display: str, digest: bytes) -> tuple[str, list[Problem]] | None:
        hit = self.entries.get(display)
        return (hit[1], hit[2]) if hit and hit[0] == digest else None

    def put(self, display: str, digest: bytes, rid: str, problems: list[Problem]) -> None:
        self.entries[display] = (digest, rid, problems)
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        self.file.parent.mkdir(exist_ok=True)
        tmp = self.file.with_name(f"check.pickle.{os.getpid()}.tmp")
        with open(tmp, "wb") as fh:
            pickle.dump((self.key, self.entries), fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, self.file)


def _catalog_key(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted((root / "catalog").rglob("*.yaml")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


# load_registry's optional memo: resolved path -> ((mtime_ns, size), the load of that file).
LoadMemo = dict[str, tuple[tuple[int, int], LoadedRecipe]]


def _load_memoised(path: Path, display: str, recipes_root: Path, memo: LoadMemo | None) -> LoadedRecipe:
    if memo is None:
        return load_recipe(path, display, recipes_root)
    key = str(path.resolve())
    try:
        st = path.stat()
    except OSError:
        memo.pop(key, None)
        return load_recipe(path, display, recipes_root)  # raises the located read error
    stamp = (st.st_mtime_ns, st.st_size)
    hit = memo.get(key)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    memo.pop(key, None)
    loaded = load_recipe(path, display, recipes_root)
    memo[key] = (stamp, loaded)
    return loaded


def load_registry(root: Path, paths: Iterable[Path] | None = None, memo: LoadMemo | None = None) -> Registry:
    """Loads the catalog and recipes; collects every problem instead of stopping at the first.

    With `memo` (kept by the caller across calls, as `mkdocs serve` rebuilds do), a file whose mtime and size
    are unchanged since it was last loaded is not read again."""
    catalog = Catalog.load(root)
    registry = Registry(root, catalog, problems=list(catalog.problems))
    recipes_root = root / RECIPES_DIR
    for path in recipe_files(root, list(paths) if paths else None):
        display = _display(path, root)
        placed = _place_problems(path, root, display)
        if placed:
            registry.problems.extend(placed)
            continue
        try:
            registry.recipes.append(_load_memoised(path, display, recipes_root, memo))
        except InputError as exc:
            registry.problems.extend(exc.problems)
    return registry


def check_tree(root: Path, paths: Iterable[Path] | None = None, use_cache: bool = True,
               today: dt.date | None = None) -> tuple[int, list[Problem]]:
    """What `python -m generator check` does: (files checked, problems), reusing cached per-file results."""
    today = today or dt.date.today()
    catalog = Catalog.load(root)
    cache = _CheckCache(root, _catalog_key(root), today) if use_cache else None
    problems = list(catalog.problems)
    ids: dict[str, str] = {}
    files = recipe_files(root, list(paths) if paths else None)
    recipes_root = root / RECIPES_DIR
    for path in files:
        display = _display(path, root)
        placed = _place_problems(path, root, display)
        if placed:
            problems.extend(placed)
            continue
        digest = b""
        if cache is not None:
            try:
                # The evidence sidecar is part of what a recipe's result is checked against.
                digest = hashlib.sha256(path.read_bytes() + _evidence_bytes(path)).digest()
            except OSError:
                digest = b""
            hit = cache.get(display, digest) if digest else None
            if hit is not None:
                rid, found = hit
                problems.extend(found)
                _note_id(ids, rid, display, problems)
                continue
        try:
            loaded = load_recipe(path, display, recipes_root)
            rid, found = loaded.id, check_recipe(loaded, catalog, today)
        except InputError as exc:
            rid, found = recipe_id(path, recipes_root), exc.problems
        if cache is not None and digest:
            cache.put(display, digest, rid, found)
        problems.extend(found)
        _note_id(ids, rid, display, problems)
    if cache is not None:
        cache.save()
    return len(files), sorted(set(problems))


def _note_id(ids: dict[str, str], rid: str, display: str, problems: list[Problem]) -> None:
    key = rid.lower()
    if key in ids:
        problems.append(Problem(display, 1, 1, "(document)", f"duplicate recipe id '{rid}' (also {ids[key]})"))
    else:
        ids[key] = display


def check_registry(registry: Registry, today: dt.date | None = None) -> list[Problem]:
    today = today or dt.date.today()
    problems = list(registry.problems)
    ids: dict[str, str] = {}
    for loaded in registry.recipes:
        _note_id(ids, loaded.id, loaded.display, problems)
        problems.extend(check_recipe(loaded, registry.catalog, today))
    return sorted(set(problems))


def check_recipe(loaded: LoadedRecipe, catalog: Catalog, today: dt.date) -> list[Problem]:
    r = loaded.recipe
    out: list[Problem] = []

    def bad(message: str, *where: str | int) -> None:
        line, col = loaded.position(*where)
        out.append(Problem(loaded.display, line, col, ".".join(str(w) for w in where) or "(document)", message))

    # Catalog references
    card = catalog.models.get(r.model)
    if card is None:
        bad(f"unknown model '{r.model}' (not in catalog/models/)", "model")
    gpu = catalog.gpus.get(r.gpu.type)
    if gpu is None:
        bad(f"unknown GPU type '{r.gpu.type}' (known: {', '.join(sorted(catalog.gpus))})", "gpu", "type")
    elif gpu.memory_gb != r.gpu.memory_gb:
        bad(f"{r.gpu.type} has {gpu.memory_gb} GB, not {r.gpu.memory_gb}", "gpu", "memory_gb")
    instance = catalog.instances.get(r.gpu.instance) if r.gpu.instance else None
    if r.gpu.instance and instance is None:
        bad(f"unknown instance '{r.gpu.instance}' (not in catalog/instances.yaml)", "gpu", "instance")
    if instance is not None:
        if instance.gpu_type != r.gpu.type:
            bad(f"{r.gpu.instance} carries {instance.gpu_type}, not {r.gpu.type}", "gpu", "instance")
        if instance.gpu_count != r.gpu.per_node:
            bad(f"{r.gpu.instance} has {instance.gpu_count} GPUs, per_node says {r.gpu.per_node}", "gpu", "per_node")

    # Path matches model and GPU
    parts = loaded.id.split("/")
    if len(parts) == 3:
        if card is not None and parts[0] != catalog.model_slugs.get(r.model):
            bad(f"file is under '{parts[0]}/' but model '{r.model}' lives under "
                f"'{catalog.model_slugs.get(r.model)}/'", "model")
        if parts[1] != r.gpu.type.lower():
            bad(f"file is under '{parts[1]}/' but gpu.type is '{r.gpu.type}' (expected '{r.gpu.type.lower()}/')",
                "gpu", "type")

    # Layout
    lay = r.layout
    if r.gpu.count % r.gpu.per_node:
        bad(f"per_node {r.gpu.per_node} does not divide count {r.gpu.count}", "gpu", "per_node")
    # Experts reuse the dense ranks (Megatron's MoE rule): EP x ETP must divide TP x CP x DP.
    product = lay.tp * lay.pp * lay.cp * lay.dp
    if product != r.gpu.count:
        bad(f"tp x pp x cp x dp = {lay.tp} x {lay.pp} x {lay.cp} x {lay.dp} = {product}, "
            f"but gpu.count is {r.gpu.count}", "layout", "dp")
    if (lay.tp * lay.cp * lay.dp) % (lay.ep * lay.etp):
        bad(f"ep x etp = {lay.ep * lay.etp} must divide tp x cp x dp = {lay.tp * lay.cp * lay.dp}", "layout", "ep")
    if lay.sequence_parallel and lay.tp == 1:
        bad("sequence parallel needs tp > 1", "layout", "sequence_parallel")
    if r.workload.global_batch % (lay.rows_per_microbatch * lay.dp):
        bad(f"global batch {r.workload.global_batch} is not a multiple of micro-batch x dp = "
            f"{lay.rows_per_microbatch * lay.dp}", "workload", "global_batch")
    arch = card.architecture if card else None
    if lay.layer_split is not None:
        if lay.pp < 2:
            bad("a layer split needs pp >= 2", "layout", "layer_split")
        elif arch is not None:
            rest = arch.layers - lay.layer_split.first - lay.layer_split.last
            middle = lay.pp - 2
            if rest < 0 or (middle == 0 and rest != 0) or (middle > 0 and (rest % middle or rest // middle == 0)):
                bad(f"split {lay.layer_split.first}/.../{lay.layer_split.last} over {lay.pp} stages does not "
                    f"sum to {arch.layers} layers with an even, non-empty middle", "layout", "layer_split")
    elif arch is not None and lay.pipeline_layout is None and arch.layers % (lay.pp * lay.vpp):
        bad(f"{arch.layers} layers do not divide evenly over pp x vpp = {lay.pp * lay.vpp}", "layout", "pp")

    # Parameters
    if card is not None:
        if r.result.active_params.count != card.active_params.count:
            bad(f"N = {r.result.active_params.count:,} but the catalog states {card.active_params.count:,}",
                "result", "active_params", "count")
        if arch is not None:
            n = catalog.param_count(r.model)
            if n != card.active_params.count:
                bad(f"the architecture gives {n:,} parameters, the catalog states {card.active_params.count:,}",
                    "model")
            if card.total_params is not None:
                total = figures.param_count(arch, card.active_params.includes_norms, total=True)
                if total != card.total_params:
                    bad(f"the architecture gives {total:,} parameters in all, the catalog states "
                        f"{card.total_params:,}", "model")
        if lay.mtp_layers and arch is not None and not arch.mtp_layers:
            bad(f"mtp_layers {lay.mtp_layers} but {r.model} has no multi-token-prediction layers", "layout",
                "mtp_layers")

    # Derived figures
    res = r.result
    derived = figures.derive(r, catalog)
    if res.usd_per_million_tokens is not None and derived.usd_per_million_tokens is not None:
        if not figures.agrees(res.usd_per_million_tokens, derived.usd_per_million_tokens):
            bad(f"stated {res.usd_per_million_tokens} but (${derived.instance_usd_per_hour}/h / "
                f"{instance.gpu_count if instance else '?'}) / ({res.tokens_per_s_per_gpu} x 3600) x 1e6 = "
                f"{derived.usd_per_million_tokens:.4f}", "result", "usd_per_million_tokens")
    elif res.usd_per_million_tokens is not None and r.gpu.instance is None:
        bad("a $/1M figure needs gpu.instance (its price)", "result", "usd_per_million_tokens")
    if res.mfu is not None and derived.mfu is not None and res.mfu_note is None:
        if not figures.agrees(res.mfu, derived.mfu):
            bad(f"stated {res.mfu} but 6 x {res.active_params.count:,} x {res.tokens_per_s_per_gpu} / "
                f"{derived.peak_flops:.4g} = {derived.mfu:.5f}", "result", "mfu")
    published = res.published_model_tflops_per_gpu
    if r.status is Status.reported and published is not None and arch is not None:
        # Model TFLOP/s per GPU recomputed from the architecture (Megatron's convention); a difference over
        # 0.5% needs its explanation on the recipe, not a looser bound.
        ours = figures.model_tflops_per_gpu(arch, r.workload.row_tokens, res.tokens_per_s_per_gpu,
                                            mtp_layers=lay.mtp_layers)
        diff = figures.relative_difference(published, ours)
        if diff > PUBLISHED_TFLOPS_TOLERANCE and res.published_model_tflops_note is None:
            bad(f"published {published:g} TFLOP/s per GPU but model FLOPs per token "
                f"{figures.model_flops_per_token(arch, r.workload.row_tokens, lay.mtp_layers):.4g} x "
                f"{res.tokens_per_s_per_gpu:g} tokens/s = {ours:.1f} ({diff * 100:.2f}% apart, over "
                f"{PUBLISHED_TFLOPS_TOLERANCE * 100:g}%); explain it in result.published_model_tflops_note",
                "result", "published_model_tflops_per_gpu")
        convention = res.published_model_tflops_convention
        if convention is not None:
            # A stated convention is held to the same 0.5%: the explanation must reproduce the figure.
            theirs = figures.model_tflops_per_gpu(arch, r.workload.row_tokens, res.tokens_per_s_per_gpu,
                                                  mtp_layers=lay.mtp_layers, sliding_windows=convention.sliding_windows,
                                                  gated_experts=convention.gated_experts)
            off = figures.relative_difference(published, theirs)
            if off > PUBLISHED_TFLOPS_TOLERANCE:
                bad(f"under the stated convention (gated experts {convention.gated_experts}, sliding windows "
                    f"{convention.sliding_windows}) {res.tokens_per_s_per_gpu:g} tokens/s give {theirs:.1f} TFLOP/s, "
                    f"{off * 100:.2f}% from the published {published:g}", "result", "published_model_tflops_convention")
    if res.window is not None:
        first, last = res.window
        if last < first:
            bad(f"window [{first}, {last}] ends before it starts", "result", "window")
        else:
            if res.steps_per_run is not None and last >= res.steps_per_run:
                bad(f"window ends at step {last}, beyond steps_per_run {res.steps_per_run} (steps 0-"
                    f"{res.steps_per_run - 1})", "result", "window")
            if res.window_tokens is not None and derived.window_tokens != res.window_tokens:
                bad(f"stated {res.window_tokens:,} but {figures.window_steps(res.window)} steps x "
                    f"{r.workload.global_batch} x {r.workload.row_tokens} = {derived.window_tokens:,}",
                    "result", "window_tokens")
    if res.measured is not None and res.measured > today:
        bad(f"measured date {res.measured} is in the future", "result", "measured")
    for i, test in enumerate(r.correctness.component_tests if r.correctness else []):
        if test.date > today:
            bad(f"test date {test.date} is in the future", "correctness", "component_tests", i, "date")

    out.extend(_evidence_problems(loaded, bad))
    out.extend(_status_problems(loaded, bad))
    return out


EVIDENCE_SUFFIX = ".evidence.json"
EVIDENCE_SCHEMA = "openrecipes-evidence/1"


def evidence_path(recipe_path: Path) -> Path:
    """The evidence sidecar the runner writes beside a recipe (runner/evidence.py)."""
    return recipe_path.with_name(recipe_path.stem + EVIDENCE_SUFFIX)


def _evidence_bytes(recipe_path: Path) -> bytes:
    try:
        return evidence_path(recipe_path).read_bytes()
    except OSError:
        return b""


def _evidence_problems(loaded: LoadedRecipe, bad) -> list[Problem]:  # noqa: ANN001
    """The result recomputed from its evidence file (per-step times of the measured run), when there is one."""
    path = evidence_path(loaded.path)
    if not path.is_file():
        return []
    r, res = loaded.recipe, loaded.recipe.result
    name = path.name
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        bad(f"{name} is not readable JSON ({exc})", "result")
        return []
    if not isinstance(data, dict) or data.get("schema") != EVIDENCE_SCHEMA:
        bad(f"{name} is not an evidence file (schema {EVIDENCE_SCHEMA!r} expected)", "result")
        return []
    if data.get("recipe") != loaded.id:
        bad(f"{name} is the evidence of {data.get('recipe')!r}, not of {loaded.id!r}", "result")
    inputs = data.get("inputs") if isinstance(data.get("inputs"), dict) else {}
    stated = {"global_batch": (r.workload.global_batch, ("workload", "global_batch")),
              "row_tokens": (r.workload.row_tokens, ("workload", "row_tokens")),
              "gpu_count": (r.gpu.count, ("gpu", "count"))}
    for key, (value, where) in stated.items():
        if inputs.get(key) != value:
            bad(f"{name} was measured with {key} {inputs.get(key)}, the recipe states {value}", *where)
    window = data.get("window")
    if res.window is None or window != list(res.window):
        bad(f"{name} was measured over the window {window}, the recipe states {res.window}", "result", "window")
        return []
    try:
        steps = {int(s["step"]): s for s in data["steps"]}
        times = [float(steps[i]["time_s"]) for i in range(window[1] + 1)]
    except (KeyError, TypeError, ValueError) as exc:
        bad(f"{name}: steps 0-{window[1]} with time_s are needed to recompute the result (missing {exc})",
            "result", "tokens_per_s_per_gpu")
        return []
    try:
        tps = figures.tokens_per_s_per_gpu(times, window, r.workload.global_batch, r.workload.row_tokens, r.gpu.count)
    except ValueError as exc:
        bad(f"{name}: {exc}", "result", "tokens_per_s_per_gpu")
        return []
    if not figures.agrees(res.tokens_per_s_per_gpu, tps):
        tokens = figures.window_tokens(window, r.workload.global_batch, r.workload.row_tokens)
        bad(f"stated {res.tokens_per_s_per_gpu} but {name} gives {tokens:,} window tokens / "
            f"{math.fsum(times[window[0]:]):.6g} s / {r.gpu.count} GPUs = {tps:.4f}",
            "result", "tokens_per_s_per_gpu")
    cv = figures.step_time_cv_percent(times, window)
    if res.step_time_cv_percent is not None and not figures.agrees(res.step_time_cv_percent, cv):
        bad(f"stated {res.step_time_cv_percent} but the step times in {name} give a CV of {cv:.4f}%",
            "result", "step_time_cv_percent")
    if res.steps_per_run is not None and max(steps) + 1 != res.steps_per_run:
        bad(f"stated {res.steps_per_run} but {name} has steps 0-{max(steps)}", "result", "steps_per_run")
    runs = data.get("runs") if isinstance(data.get("runs"), list) else []
    if res.runs is not None and len(runs) != res.runs:
        bad(f"stated {res.runs} but {name} records {len(runs)} run(s)", "result", "runs")
    median = data.get("median_run")
    wall = runs[median].get("wall_seconds") if isinstance(median, int) and 0 <= median < len(runs) else None
    if res.gpu_hours is not None and isinstance(wall, int | float) and wall > 0:
        hours = figures.gpu_hours(r.gpu.count, wall)
        if not figures.agrees(res.gpu_hours, hours):
            bad(f"stated {res.gpu_hours} but {r.gpu.count} GPUs x {wall:.6g} s (the median run in {name}) = "
                f"{hours:.6g} GPU-hours", "result", "gpu_hours")
    recorded = data.get("result") if isinstance(data.get("result"), dict) else {}
    if res.measured is not None and recorded.get("measured") != res.measured.isoformat():
        bad(f"stated {res.measured} but {name} was measured on {recorded.get('measured')}", "result", "measured")
    return []


def _status_problems(loaded: LoadedRecipe, bad) -> list[Problem]:  # noqa: ANN001
    """The lifecycle: what each status promises."""
    r = loaded.recipe
    res = r.result
    corr = r.correctness
    if r.status is Status.reported:
        if r.publication is None:
            bad("a reported recipe needs `publication` (where its figures come from)", "status")
        if corr is not None and corr.result is OverallOutcome.passed:
            bad("a reported recipe carries no passing evidence of ours; use status verified", "status")
        return []
    # measured and verified: figures measured by a run
    if r.publication is not None:
        bad(f"a {r.status.value} recipe was measured, not published: remove `publication` or use reported",
            "publication")
    for name in ("measured", "steps_per_run", "window", "window_tokens", "runs", "step_time_cv_percent"):
        if getattr(res, name) is None:
            bad(f"a {r.status.value} recipe needs result.{name}", "result", name)
    if r.status is Status.verified:
        if corr is None or corr.result is not OverallOutcome.passed:
            bad("a verified recipe needs correctness.result: pass", *(("correctness", "result") if corr else ("status",)))
        elif not corr.component_tests and corr.convergence is None:
            bad("a verified recipe needs component tests or a convergence check", "correctness")
        else:
            for i, test in enumerate(corr.component_tests):
                if test.result is not Outcome.passed:
                    bad("a verified recipe cannot have a failing component test", "correctness",
                        "component_tests", i, "result")
            if corr.convergence is not None and corr.convergence.result is not Outcome.passed:
                bad("a verified recipe cannot have a failing convergence check", "correctness", "convergence",
                    "result")
    elif corr is not None and corr.result is OverallOutcome.passed:
        bad("the correctness evidence passes: the status should be verified", "status")
    return []


def format_problems(problems: list[Problem], fmt: str) -> str:
    if fmt == "json":
        return json.dumps([p.as_dict() for p in problems], indent=2)
    return "\n".join(str(p) for p in problems)
