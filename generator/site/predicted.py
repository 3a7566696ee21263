"""Layouts nobody measured: the layout advisor's (generator.advise) predicted layouts as the model pages, the GPU
pages and the run planner show them, apart from the measured recipes and marked predicted.

One `Predictions` per build: the registry's rows read and the advisor's memory and step-time models fitted once,
each question (model family, GPU type, GPU count) answered once through the advisor's own `answer` and
`report.layout_json` (the figures of `python -m generator advise ... --json`), and the advisor's measured error read
from the committed validation output (benchmarks/results/advise_validate.json, written by
benchmarks/advise_validate.py). Every figure is the advisor's or the benchmark's: none is computed here.

A model family is the catalog's dense cards of one architecture (advisor.architecture_key: Llama-3-70B and
Llama-3.1-70B are one question). Per GPU type the family has recipes on, the questions are the GPU counts its
recipes ran at, so every predicted layout stands beside measured ones of the same scale: the pages show a few of them
(COUNTS_PER_GPU: the smallest, the median and the largest), the run planner every one.

The questions take ~40 s of one core for the committed registry (the advisor weighs every candidate layout), so
`begin` answers them in worker processes (forked: they inherit the loaded registry) while the build renders the
recipe pages, and the group pages collect them (`Pending.result`).
"""

from __future__ import annotations

import json
import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.advise import report
from generator.advise.advisor import PREDICTED, Question, Refusal, answer, architecture_key, resolve_gpu, resolve_model
from generator.advise.model import fit_memory, fit_throughput
from generator.advise.observations import dense_architecture, observations
from generator.catalog import Catalog
from generator.load import LoadedRecipe
from generator.registry import Registry
from generator.site import views

VALIDATION = Path("benchmarks") / "results" / "advise_validate.json"
VALIDATION_SCRIPT = "benchmarks/advise_validate.py"
TOP = 3  # layouts per question on a model page and in the planner (the GPU page shows the first)
COUNTS_PER_GPU = 3
SECTION = "layouts-nobody-measured-predicted"  # the section's heading id (Python-Markdown's, of the heading)
METRICS = (("tokens_mape", "tokens/s per GPU, median error"), ("memory_mape", "peak memory per GPU, median error"),
           ("oom_accuracy", "fits / out of memory, accuracy"), ("rank_spearman", "rank of layouts in a group"))
FRACTIONS = {"tokens_mape", "memory_mape", "oom_accuracy"}


@dataclass(frozen=True)
class Family:
    """The catalog's dense cards of one architecture: one question to the advisor."""

    key: tuple[object, ...]
    models: tuple[str, ...]  # sorted; the first asks the family's questions

    @property
    def name(self) -> str:
        return " / ".join(self.models)


@dataclass
class Answered:
    """One question's answer as the pages show it: the advisor's JSON layouts (report.layout_json), or its refusal."""

    model: str
    gpu: str
    count: int
    layouts: list[dict[str, Any]] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)  # each layout's Plan.label()
    basis: str = ""
    card_memory_gb: float = 0.0
    refusal: str | None = None


def families(catalog: Catalog) -> dict[str, Family]:
    """Each dense card's family, by model name."""
    groups: dict[tuple[object, ...], list[str]] = {}
    for model in catalog.models:
        arch = dense_architecture(catalog, model)
        if arch is not None:
            groups.setdefault(architecture_key(arch), []).append(model)
    out = {}
    for key, models in groups.items():
        family = Family(key, tuple(sorted(models, key=str.lower)))
        out.update({m: family for m in models})
    return out


def chosen_counts(counts: set[int]) -> list[int]:
    """A few of the GPU counts the registry has: the smallest, the median and the largest."""
    ordered = sorted(counts)
    return sorted({ordered[0], ordered[len(ordered) // 2], ordered[-1]})[:COUNTS_PER_GPU]


def read_validation(root: Path) -> dict[str, Any] | None:
    """The committed leave-one-model-out figures (benchmarks/advise_validate.py --write), or None where absent."""
    try:
        data = json.loads((root / VALIDATION).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _share(name: str, value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.1%}" if name in FRACTIONS else f"{value:.2f}"


@dataclass
class Computed:
    """What the workers return: each question's answer, and each GPU type's refusal (None: it has data)."""

    answers: dict[tuple[str, str, int], Answered]
    gpu_refusals: dict[str, str | None]
    unfit: str | None = None  # why the advisor could not be fitted on this registry (no row to fit on)


class Advisor:
    """The registry's rows read and the advisor's two models fitted, once."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self.rows = observations(registry)
        self.memory = fit_memory(self.rows)
        self.speed = fit_throughput(self.rows, registry.catalog)

    def answer(self, model: str, gpu: str, count: int) -> Answered:
        try:
            result = answer(self.registry.root, self.registry.catalog, self.rows,
                            Question(model=model, gpu=gpu, gpus=count, top=TOP), self.memory, self.speed)
        except Refusal as exc:
            return Answered(model, gpu, count, refusal=str(exc))
        return Answered(model, gpu, count, report.answer_json(result), [lay.plan.label() for lay in result.layouts],
                        result.basis, result.card_memory_gb)

    def gpu_refusal(self, gpu: str) -> str | None:
        try:
            resolve_gpu(self.registry.root, self.registry.catalog, gpu, self.rows)
        except Refusal as exc:
            return str(exc)
        return None


def compute(registry: Registry, questions: list[tuple[str, str, int]], gpus: list[str]) -> Computed:
    try:
        advisor = Advisor(registry)
    except ValueError as exc:  # a registry with no row to fit on (the advisor's own message)
        why = f"the advisor cannot be fitted on this registry: {exc}"
        return Computed({q: Answered(*q, refusal=why) for q in questions}, {gpu: why for gpu in gpus}, why)
    refusals = {gpu: advisor.gpu_refusal(gpu) for gpu in gpus}
    answers = {}
    for model, gpu, count in questions:
        if refusals.get(gpu) is None:
            answers[(model, gpu, count)] = advisor.answer(model, gpu, count)
    return Computed(answers, refusals)


def all_questions(registry: Registry) -> tuple[list[tuple[str, str, int]], list[str]]:
    """Every question the pages ask (each family's, by its first card) and every GPU type of a recipe."""
    fams = families(registry.catalog)
    out: set[tuple[str, str, int]] = set()
    counts: dict[tuple[tuple[object, ...], str], set[int]] = {}
    for loaded in registry.recipes:
        family = fams.get(loaded.recipe.model)
        if family is not None:
            counts.setdefault((family.key, loaded.recipe.gpu.type), set()).add(loaded.recipe.gpu.count)
    first = {f.key: f.models[0] for f in fams.values()}
    for (key, gpu), ns in counts.items():
        out.update((first[key], gpu, n) for n in ns)  # the planner's: every count (the pages': chosen_counts of them)
    return sorted(out), sorted({x.recipe.gpu.type for x in registry.recipes})


# The registry the forked workers read (set before they start; fork copies it, nothing is pickled).
_WORKER_REGISTRY: Registry | None = None


def _compute_in_worker(questions: list[tuple[str, str, int]], gpus: list[str]) -> Computed:
    assert _WORKER_REGISTRY is not None
    return compute(_WORKER_REGISTRY, questions, gpus)


def _cpus() -> int:
    """The CPUs this process may run on (a container's share, not the host's count)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity else os.cpu_count() or 1


class Pending:
    """The questions being answered in worker processes (or here, where fork is not available)."""

    def __init__(self, registry: Registry) -> None:
        global _WORKER_REGISTRY
        self.registry = registry
        self._value: Predictions | None = None
        questions, gpus = all_questions(registry)
        # Spread by cost: each worker fits once (~6 s), then takes every n-th question.
        workers = max(1, min(4, _cpus() - 1))
        self._futures: list[Future[Computed]] = []
        self._executor: ProcessPoolExecutor | None = None
        if "fork" in multiprocessing.get_all_start_methods():
            _WORKER_REGISTRY = registry
            self._executor = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"))
            self._futures = [self._executor.submit(_compute_in_worker, questions[i::workers], gpus if i == 0 else [])
                             for i in range(workers)]
        else:
            self._serial = (questions, gpus)

    def result(self) -> Predictions:
        if self._value is None:
            if self._executor is not None:
                parts = [f.result() for f in self._futures]
                self._executor.shutdown()
                answers = {k: v for part in parts for k, v in part.answers.items()}
                refusals = {k: v for part in parts for k, v in part.gpu_refusals.items()}
                computed = Computed(answers, refusals)
            else:
                computed = compute(self.registry, *self._serial)
            self._value = Predictions(self.registry, computed)
        return self._value


class Predictions:
    """The pages' views of the answered questions."""

    def __init__(self, registry: Registry, computed: Computed) -> None:
        self.registry = registry
        self.catalog = registry.catalog
        self.computed = computed
        self.families = families(self.catalog)
        self.validation = read_validation(registry.root)
        self.by_id = {x.id: x for x in registry.recipes}

    # --- questions ----------------------------------------------------------------------------------------------

    def ask(self, family: Family, gpu: str, count: int) -> Answered:
        return self.computed.answers[(family.models[0], gpu, count)]

    def family_recipes(self, model: str) -> list[LoadedRecipe]:
        """The recipes of every card of the model's family (the model's own where it has no dense card)."""
        family = self.families.get(model)
        members = set(family.models) if family else {model}
        return [x for x in self.registry.recipes if x.recipe.model in members]

    def questions(self, model: str, every: bool = False) -> list[tuple[str, int]]:
        """(GPU type, count) of the model family's recipes: per GPU type, chosen_counts of its recipes' counts (the
        pages), or `every` count (the planner, which answers at the planned count or the nearest below it)."""
        counts: dict[str, set[int]] = {}
        for loaded in self.family_recipes(model):
            counts.setdefault(loaded.recipe.gpu.type, set()).add(loaded.recipe.gpu.count)
        pick = sorted if every else chosen_counts
        return [(gpu, n) for gpu in sorted(counts, key=str.lower) for n in pick(counts[gpu])]

    def refusal(self, model: str) -> str | None:
        """Why the advisor answers nothing for this model (no card, not a dense card), in one line; else None."""
        try:
            resolve_model(self.registry.root, self.catalog, model)
        except Refusal as exc:
            return str(exc)
        return None

    def gpu_refusal(self, gpu: str) -> str | None:
        return self.computed.gpu_refusals.get(gpu)

    # --- what the pages show ------------------------------------------------------------------------------------

    def error(self, models: tuple[str, ...] | list[str]) -> dict[str, Any] | None:
        """The advisor's measured error (leave one model out): over every held-out model, and for this family's
        models where they were held out."""
        v = self.validation
        if v is None:
            return None
        overall = [{"label": label, "value": _share(name, v[name]["value"]), "n": v[name]["n"],
                    "goal": _share(name, v[name]["goal"]), "met": v[name]["met"]}
                   for name, label in METRICS if name in v]
        held = []
        for model in models:
            cells = [(label, _share(name, v[name]["by_model"].get(model))) for name, label in METRICS
                     if name in v and v[name]["by_model"].get(model) is not None]
            if cells:
                held.append({"model": model, "rows": v.get("rows_by_model", {}).get(model, 0), "cells": cells})
        return {"overall": overall, "held": held, "source": str(VALIDATION), "script": VALIDATION_SCRIPT}

    def _nearest(self, ids: list[str], page: str) -> list[dict[str, str]]:
        out = []
        for rid in ids:
            loaded = self.by_id.get(rid)
            if loaded is not None:
                out.append({"id": rid, "name": views.compact_name(loaded),
                            "href": views.href(page, views.recipe_src(loaded))})
        return out

    def _row(self, a: Answered, index: int, page: str) -> dict[str, Any]:
        lay = a.layouts[index]
        mem, tps = lay["memory_gb_per_gpu"], lay["tokens_per_s_per_gpu"]
        return {"gpu": a.gpu, "count": a.count, "label": a.labels[index], "layout": lay["layout"],
                "memory": mem, "memory_text": f"{mem[PREDICTED]:,.1f} ({mem['low']:,.1f}–{mem['high']:,.1f})",
                "fits": lay["fits"], "card_gb": f"{a.card_memory_gb:g}",
                "tokens": tps, "tokens_text": f"{tps[PREDICTED]:,.0f} ({tps['low']:,.0f}–{tps['high']:,.0f})",
                "nearest": self._nearest(lay["nearest"], page)}

    def model_view(self, model: str, page: str) -> dict[str, Any]:
        """The model page's section: per GPU type of the family's recipes, each chosen count's TOP layouts."""
        family = self.families.get(model)
        refusal = self.refusal(model) or self.computed.unfit
        if family is None or refusal is not None:
            return {"kind": "model", "refusal": refusal or f"{model}: no dense model card", "family": None}
        gpus = []
        by_gpu: dict[str, list[int]] = {}
        for gpu, count in self.questions(model):
            by_gpu.setdefault(gpu, []).append(count)
        for gpu, counts in by_gpu.items():
            refused = self.gpu_refusal(gpu)  # a GPU type without data: its one line, no question asked
            answers = [] if refused else [self.ask(family, gpu, n) for n in counts]
            gpus.append({"gpu": gpu, "refusal": refused,
                         "answers": [{"count": a.count, "refusal": a.refusal,
                                      "rows": [self._row(a, i, page) for i in range(len(a.layouts))]}
                                     for a in answers],
                         "basis": next((a.basis for a in answers if a.basis), ""),
                         "question": f"python -m generator advise {family.models[0]} --gpu {gpu} --gpus N --json"})
        return {"kind": "model", "refusal": None, "family": family.name, "ask": family.models[0], "gpus": gpus,
                "error": self.error(family.models), "methodology_href": _methodology(page)}

    def gpu_view(self, gpu: str, page: str) -> dict[str, Any]:
        """The GPU page's section: per model family with recipes on this GPU type, each chosen count's first
        layout; the models the advisor refuses, each with its one line."""
        refusal = self.gpu_refusal(gpu)
        models = sorted({x.recipe.model for x in self.registry.recipes if x.recipe.gpu.type == gpu}, key=str.lower)
        seen: set[tuple[object, ...]] = set()
        rows, refused = [], []
        for model in models:
            family = self.families.get(model)
            if family is None:
                refused.append({"model": model, "href": views.href(page, views.model_src(self.catalog, model)),
                                "why": self.refusal(model) or f"{model}: no dense model card"})
                continue
            if family.key in seen or refusal is not None:
                continue
            seen.add(family.key)
            for q_gpu, count in self.questions(model):
                if q_gpu != gpu:
                    continue
                a = self.ask(family, gpu, count)
                href = views.href(page, views.model_src(self.catalog, model), "#" + SECTION)
                if a.refusal or not a.layouts:
                    rows.append({"family": family.name, "href": href, "count": count, "refusal": a.refusal})
                else:
                    rows.append({"family": family.name, "href": href, **self._row(a, 0, page),
                                 "refusal": None, "ask": family.models[0]})
        # The error over every held-out model only: each model family's page states its own held-out figures.
        return {"kind": "gpu", "refusal": None, "gpu_refusal": refusal, "rows": rows, "refused": refused,
                "error": self.error(()), "methodology_href": _methodology(page)}

    def planner(self, model: str, page: str) -> dict[str, Any]:
        """The run planner's predicted part for the model's family: per GPU type, per count, the TOP layouts (the
        planner takes the largest count at or below the planned one)."""
        family = self.families.get(model)
        if family is None or self.refusal(model) is not None:
            return {"family": None, "refusal": self.refusal(model), "gpus": {}}
        gpus: dict[str, dict[str, Any]] = {}
        for gpu, count in self.questions(model, every=True):
            if self.gpu_refusal(gpu) is not None:
                continue
            a = self.ask(family, gpu, count)
            if a.refusal is None:
                gpus.setdefault(gpu, {})[str(count)] = [self._row(a, i, page) for i in range(len(a.layouts))]
        return {"family": family.name, "refusal": None, "gpus": gpus}

    def family_options(self, model: str, page: str) -> list[dict[str, Any]]:
        """The planner's model families: each family with a model page (its first such card's), this page's chosen."""
        with_pages = {x.recipe.model for x in self.registry.recipes}
        own = self.families.get(model)
        out, seen = [], set()
        for m in sorted(with_pages, key=str.lower):
            family = self.families.get(m)
            if family is None or family.key in seen:
                continue
            seen.add(family.key)
            target = next(x for x in family.models if x in with_pages)
            out.append({"name": family.name, "href": views.href(page, views.model_src(self.catalog, target)),
                        "selected": own is not None and family.key == own.key})
        return out


def _methodology(page: str) -> str:
    return views.href(page, "methodology.md", "#advisor")


def begin(memo_get: Callable[[tuple[Any, ...], Callable[[], Any]], Any], registry: Registry, inputs: str) -> Pending:
    """The build's questions, started now (see Pending), kept across a serve's renders while the recipe files, the
    catalog and templates (`inputs`: render_site's fingerprint), the failed layouts and the validation figures are
    the same."""
    from generator.site.live import fingerprint

    root = registry.root
    stamps = tuple((x.id, *_stamp(x.path)) for x in registry.recipes)
    read = fingerprint([*(root / "failed").glob("*.yaml"), root / VALIDATION])
    return memo_get(("predicted", inputs, stamps, read), lambda: Pending(registry))


def _stamp(path: Path) -> tuple[int, int]:
    try:
        st = path.stat()
    except OSError:
        return (0, 0)
    return (st.st_mtime_ns, st.st_size)


__all__ = ["SECTION", "Advisor", "Answered", "Computed", "Family", "Pending", "Predictions", "all_questions", "begin",
           "chosen_counts", "compute", "families", "read_validation"]
