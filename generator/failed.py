"""Failed layouts: configurations a publication tried that gave no usable result (crashed, out of memory), kept as
data so a reader choosing a layout sees what does not fit next to what worked at the same GPU count.

One file per model, failed/<model slug>.yaml (`FailedLayouts`), written by the importer of the publication that
states them (generator/importers/playbook.py) and read by the site (generator/site/pages/failed_layouts.py). Every entry carries
its publication (document URL, commit, line and column), as a reported recipe does.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from generator.load import YamlDocument, file_kind_problem, read_yaml, validation_problems
from generator.models import MAX_COUNT, MAX_PARALLEL, HttpUrl, PublicationCopy
from generator.problems import InputError, Problem
from generator.registry import display_path

FOLDER = "failed"
LAYOUT = f"failed layouts are {FOLDER}/<model>.yaml"


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class FailedGpu(_Closed):
    type: str = Field(description="GPU type, a key of catalog/gpus.yaml.", min_length=1)
    count: int = Field(description="GPUs the layout was tried on.", gt=0, le=MAX_PARALLEL)
    per_node: int = Field(description="GPUs per node.", gt=0, le=1024)


class FailedLayoutShape(_Closed):
    dp: int = Field(description="Data-parallel size, in replicas.", gt=0, le=MAX_PARALLEL)
    tp: int = Field(description="Tensor-parallel size, in GPUs.", gt=0, le=MAX_PARALLEL)
    pp: int = Field(description="Pipeline-parallel size, in stages.", gt=0, le=MAX_PARALLEL)
    zero_stage: int = Field(description="ZeRO stage of the data-parallel optimizer (0: none).", ge=0, le=3)
    rows_per_microbatch: int = Field(description="Micro-batch size, in rows.", gt=0, le=MAX_COUNT)
    gradient_accumulation: int = Field(description="Micro-batches per step per replica.", gt=0, le=MAX_COUNT)
    global_batch: int = Field(description="Rows per optimizer step, as the publication states it.", gt=0,
                              le=MAX_COUNT)
    row_tokens: int = Field(description="Tokens per row (sequence length).", gt=0, le=10_000_000)


class StatedFigures(_Closed):
    """Figures the publication states for a layout it nevertheless marks as failed."""

    mfu_percent: float = Field(description="MFU as stated, in percent.", ge=0, le=100, allow_inf_nan=False)
    tokens_per_s_per_gpu: float = Field(description="Tokens/s per GPU as stated.", ge=0, le=1e9, allow_inf_nan=False)
    memory_gb: float = Field(description="GPU memory as stated, in GB.", ge=0, le=4096, allow_inf_nan=False)


class FailedPublication(_Closed):
    url: HttpUrl = Field(description="URL of the document at its commit.")
    commit: str | None = Field(default=None, description="Commit of the document.")
    line: int = Field(description="Line of the entry in the document.", gt=0, le=MAX_COUNT)
    column: int | None = Field(default=None, description="Column where the entry starts, for documents that hold "
                               "many entries on one line.", gt=0, le=10**9)
    locator: str | None = Field(default=None, description="Where a reader finds the entry in the document's own "
                                "terms (a table's row, a figure's panel, trace and point), as the importer read it; "
                                "the site shows it in place of the line and column. null: the line is enough.",
                                min_length=1)


class FailedLayout(_Closed):
    gpu: FailedGpu = Field(description="Where it was tried.")
    layout: FailedLayoutShape = Field(description="What was tried.")
    outcome: str = Field(description="What happened, in the publication's words.", min_length=1)
    stated: StatedFigures | None = Field(default=None, description="Figures stated despite the failure (null: none).")
    publication: FailedPublication = Field(description="Where the publication states it.")


class FailedLayouts(_Closed):
    """failed/<model slug>.yaml."""

    model: str = Field(description="Model name, a key of the model catalog.", min_length=1)
    layouts: list[FailedLayout] = Field(description="The failed layouts, in the document's order.")
    read_from: PublicationCopy | None = Field(default=None, description="The copy every entry was read from, when "
                                              "their publication.url (the original home) could not be read at a "
                                              "revision; null: the url is what was read.")


def path_for(root: Path, model_slug: str) -> Path:
    return root / FOLDER / f"{model_slug}.yaml"


def files(root: Path) -> list[Path]:
    """failed/*.yaml (and *.YAML, as recipes are found), in name order."""
    folder = root / FOLDER
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.suffix.lower() == ".yaml")


def read(path: Path, root: Path) -> tuple[YamlDocument | None, FailedLayouts | None, list[Problem]]:
    """One file, strictly read and validated: its document (positions for later problems), its data, its problems
    (path:line:col) instead of an exception. A fifo, device or folder is never opened."""
    display = display_path(path, root)
    kind = file_kind_problem(path, LAYOUT)
    if kind:
        return None, None, [Problem(display, 1, 1, "(document)", kind)]
    try:
        doc = read_yaml(path, display)
    except InputError as exc:
        return None, None, list(exc.problems)
    if doc.problems:
        return doc, None, list(doc.problems)
    try:
        return doc, FailedLayouts.model_validate(doc.data), []
    except ValidationError as exc:
        return doc, None, validation_problems(doc, FailedLayouts, exc)


def load(path: Path, root: Path) -> tuple[FailedLayouts | None, list[Problem]]:
    """One file's data and problems (read's, without the document)."""
    _, data, problems = read(path, root)
    return data, problems


def load_all(root: Path) -> tuple[dict[str, FailedLayouts], list[Problem]]:
    """Every failed/*.yaml under root by model name, and the problems of those that do not validate."""
    out: dict[str, FailedLayouts] = {}
    problems: list[Problem] = []
    for path in files(root):
        data, found = load(path, root)
        problems.extend(found)
        if data is not None:
            out[data.model] = data
    return out, problems
