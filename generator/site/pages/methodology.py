"""The methodology page (methodology.md): how each figure is computed, with the numbers of generator/figures.py and
the catalog's GPUs and instances."""

from __future__ import annotations

from typing import Any

import jinja2

from generator import figures
from generator.registry import Registry
from generator.site import formatting as fmt
from generator.site import views
from generator.site.page import Page, markdown_page


def methodology_numbers() -> dict[str, Any]:
    """The numbers of generator/figures.py the methodology page states (tolerances, thresholds, the change gate, each
    figure's least precision), written here from their one home so the page cannot drift from what check does."""
    def places(n: int) -> str:
        return f"{n} decimal place{'' if n == 1 else 's'}"

    def at_least(stated: figures.StatedPrecision) -> str:
        if stated.significant:
            return f"{stated.significant} significant figures, never fewer than {places(stated.decimals)}"
        return f"{10 ** -stated.decimals:.{stated.decimals}f} ({places(stated.decimals)})"

    return {
        "lora_n": f"{6 * figures.FROZEN_BASE_FRACTION:g}N",
        "gate_min": f"{figures.CHANGE_TOLERANCE_MIN_PERCENT:g}%",
        "gate_cv_factor": f"{figures.CHANGE_TOLERANCE_CV_FACTOR:g}",
        "gate_max": f"{figures.CHANGE_TOLERANCE_MAX_PERCENT:g}%",
        "noisy_cv": f"{figures.NOISY_STEP_TIME_CV_PERCENT:g}%",
        "tflops_tolerance": f"{figures.PUBLISHED_TFLOPS_TOLERANCE * 100:g}%",
        "min_correlation": f"{figures.CONVERGENCE_MIN_CORRELATION:g}",
        "max_failing": f"{figures.CONVERGENCE_MAX_FAILING_FRACTION * 100:g}%",
        "loss_fall": f"{figures.LOSS_FALL_RATIO:g}",
        "loss_fall_from": figures.LOSS_FALL_FROM.isoformat(),
        "floor_tolerance": f"{figures.CONVERGENCE_FLOOR_TOLERANCE * 100:g}%",
        "step0_tolerance": f"{figures.STEP0_LOSS_TOLERANCE:g}",
        "stated_params": f"{figures.STATED_PARAMS_TOLERANCE * 100:g}%",
        "pointwise": ", ".join(f"{tol * 100:g}% " + (f"above {above:g}" if above > float("-inf") else "otherwise")
                               for above, tol in figures.CONVERGENCE_POINTWISE_TOLERANCE),
        "final_loss": f"{figures.CONVERGENCE_FINAL_LOSS_TOLERANCE * 100:g}%",
        "outlier_sigmas": f"{figures.CONVERGENCE_OUTLIER_SIGMAS:g}",
        "imported_usd_decimals": f"{figures.IMPORTED_USD_DECIMALS}",
        "ttt_score": f"{10 ** -figures.TIME_TO_TRAIN_SCORE_DECIMALS:.{figures.TIME_TO_TRAIN_SCORE_DECIMALS}f} ms",
        "precisions": {name: {"label": stated.label, "at_least": at_least(stated)}
                       for name, stated in figures.PRECISIONS.items()},
        "mamba2_terms": [{"term": term, "formula": formula} for term, formula in figures.MAMBA2_TERMS],
        "mb_mamba_scan": f"{figures.MB_MAMBA_SCAN_FLOPS_PER_STATE}",
    }


def page(env: jinja2.Environment, registry: Registry) -> Page:
    """methodology.md: Markdown proper (lists, emphasis), left to Python-Markdown."""
    cat = registry.catalog

    def tflops(value: float | None) -> str:
        return fmt.DASH if value is None else fmt.number(value / 1e12, 0)

    def source(text: str) -> dict[str, str | None]:
        url, rest = fmt.split_source(text)
        return {"url": url, "text": rest if url else text}

    gpus = [{"type": k, "name": g.name, "memory": f"{g.memory_gb} GB", "bf16": tflops(g.peak_flops.bf16),
             "fp8": tflops(g.peak_flops.fp8), "fp4": tflops(g.peak_flops.fp4), "source": source(g.source),
             "date": fmt.date(g.date)} for k, g in sorted(cat.gpus.items())]
    instances = [{"name": k, "provider": i.provider, "gpu": f"{i.gpu_count} x {i.gpu_type}",
                  "usd_hour": fmt.usd(i.usd_per_hour), "usd_gpu_hour": fmt.usd(i.usd_per_hour / i.gpu_count),
                  "region": i.region or fmt.DASH, "source": source(i.source), "date": fmt.date(i.date)}
                 for k, i in sorted(cat.instances.items())]
    body = env.get_template("methodology.md.j2").render(gpus=gpus, instances=instances, numbers=methodology_numbers(),
                                                        statuses=list(views.STATUS_MEANING.items()),
                                                        mfu_bound=figures.MFU_BOUND,
                                                        verified_min_runs=figures.VERIFIED_MIN_RUNS,
                                                        verified_min_runs_from=figures.VERIFIED_MIN_RUNS_FROM.isoformat(),
                                                        drift_percent=f"{figures.STEP_TIME_DRIFT_PERCENT:g}")
    return Page(markdown_page("Methodology", body), "Methodology", in_nav=True)
