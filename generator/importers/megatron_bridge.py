"""Megatron-Bridge's performance tables (docs/performance-summary*.md) as `reported` recipes.

The document holds release sections ("## 25.11 NeMo Container"), each with tables either per system
("#### System: DGX-H100", a Model column) or per model ("#### Model: LLAMA3_70B", a System column), with or
without Precision and GA columns. A cell "a (b)" gives a second configuration of the row: the row becomes two
recipes, the second taking b wherever a cell has one. A row whose cells do not match its header, or whose
figures cannot be read, is reported with its line and skipped, never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.catalog import Catalog
from generator.importers.base import Document, Parsed, Skip, Source

RELEASE_RE = re.compile(r"^##\s+(\d+\.\d+(?:\.\d+)?)\s+NeMo Container\s*$")
HEADING_RE = re.compile(r"^####\s+(System|Model):\s*(.+?)\s*$")
SECTION_RE = re.compile(r"^###\s+(.+?)\s*$")
SEPARATOR_RE = re.compile(r"^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
ALT_RE = re.compile(r"^(.*?)\s*\(([^()]*)\)\s*$")

# Header text (lower case, spaces squeezed) -> field key.
COLUMNS = {
    "model": "model", "system": "system", "#-gpus": "gpus", "precision": "precision", "gbs": "gbs",
    "mbs": "mbs", "sequence length": "seq", "fsdp": "fsdp", "tp": "tp", "pp": "pp", "cp": "cp", "vp": "vp",
    "ep": "ep", "ga": "ga", "tokens / sec / gpu": "tokens", "model tflop / sec / gpu": "tflops",
}
REQUIRED = ("model", "system", "gpus", "gbs", "mbs", "seq", "tp", "pp", "cp", "tokens", "tflops")
INTEGER_KEYS = ("gpus", "gbs", "mbs", "seq", "fsdp", "tp", "pp", "cp", "vp", "ep", "ga")

# The publication's system names: GPU type of the catalog and GPUs per node (GB200/GB300 trays hold 4).
SYSTEMS = {"DGX-H100": ("H100", 8), "DGX-B200": ("B200", 8), "DGX-B300": ("B300", 8),
           "DGX-GB200": ("GB200", 4), "DGX-GB300": ("GB300", 4)}

# The publication's model names (letters and digits only, lower case) -> catalog model.
MODELS = {"llama38b": "Llama-3-8B", "llama370b": "Llama-3-70B", "llama31405b": "Llama-3.1-405B",
          "deepseekv3": "DeepSeek-V3", "gptoss120b": "GPT-OSS-120B", "qwen330ba3b": "Qwen3-30B-A3B",
          "qwen3235ba22b": "Qwen3-235B-A22B", "kimik2": "Kimi-K2"}

# Models the publication names whose architecture the catalog cannot describe: their rows are skipped with this
# reason (a card needs the architecture the FLOPs count is recomputed from; none is invented).
HYBRID_MAMBA = ("a hybrid Mamba-2 / attention / MoE model (NVIDIA Nemotron-H family): the catalog's architecture "
                "(generator/catalog.py) has no Mamba layer, so neither N nor the model FLOPs per token can be "
                "recomputed; no catalog card")
UNSUPPORTED_MODELS = {
    "nemotron3nano": HYBRID_MAMBA, "nemotron3super": HYBRID_MAMBA, "nemotron3ultra": HYBRID_MAMBA,
    "nemotron35lightning": HYBRID_MAMBA,
    "deepseekv4flash": "DeepSeek-V4 Flash: no published config.json of this model was found in the stored public "
                       "sources, and its attention (compressed / sparse-indexed KV, o_lora projection, "
                       "hyper-connections in the V4 family's public configs) is not expressible in the catalog's "
                       "architecture; no catalog card",
}

# What the publication states about a model outside its tables (a bullet under each of the model's tables).
MODEL_REMARKS = {"Kimi-K2": "The publication states under the Kimi_K2 table: \"Muon optimizer was used for "
                            "pre-training Kimi-K2.\" (the optimizer does not change the model FLOPs counted)."}

# Section headings of the fine-tuning tables -> a tag in the file name (pre-training rows have none).
SECTION_TAGS = {"sft performance": "sft", "lora performance": "lora"}
FOOTNOTE_RE = re.compile(r"\[\^([^\]]+)\]")
FOOTNOTE_DEF_RE = re.compile(r"^\[\^([^\]]+)\]:\s*(.+?)\s*$")

PRECISIONS = {"bf16": "bf16", "fp8-cs": "fp8-cs", "fp8": "fp8-cs", "fp8-mx": "fp8-mx", "mxfp8": "fp8-mx",
              "nvfp4": "nvfp4", "fp8-ds": "fp8-ds"}

# Model qualifiers: what the run changed (mtp_layers) and a tag for the file name.
QUALIFIERS = {"w/o mtp": ("no-mtp", 0), "w/ mtp": ("mtp", None), "tokendrop": ("tokendrop", None),
              "dropless": ("dropless", None)}


@dataclass
class Row:
    """One configuration of a table row (a row with alternatives yields two)."""

    line: int
    release: str
    section: str
    system: str
    model: str  # catalog name
    model_text: str  # as the publication writes it
    qualifier: str | None
    mtp_layers: int | None
    variant: int  # 0: the row as written, 1: its parenthesised alternative
    precision: str
    precision_inferred: bool
    gpus: int
    gbs: int
    mbs: int
    seq: int
    fsdp: int | None
    tp: int
    pp: int
    cp: int
    vp: int | None
    ep: int | None
    ga: int | None
    tokens: float
    tflops: float
    cells: dict[str, str] = field(default_factory=dict)
    footnotes: tuple[str, ...] = ()  # texts of the footnotes marked inside the row's cells
    gbs_tag: bool = False  # the document has another row with this key at another GBS: the file name says GBS

    @property
    def dp(self) -> int:
        return self.gpus // (self.tp * self.pp * self.cp)

    @property
    def tag(self) -> str | None:
        return QUALIFIERS[self.qualifier][0] if self.qualifier else None

    def key(self) -> str:
        """Stable file name: release, system, GPUs, precision and qualifier (re-imports land on it)."""
        parts = ["mb", self.release, self.system.lower(), f"{self.gpus}gpu", self.precision]
        if self.tag:
            parts.append(self.tag)
        if section_tag := SECTION_TAGS.get(self.section.lower()):
            parts.append(section_tag)
        if self.gbs_tag:
            parts.append(f"gbs{self.gbs}")
        return "-".join(parts)


def _split(line: str) -> list[str]:
    text = line.strip()
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|"):
        text = text[:-1]
    return [c.strip() for c in text.split("|")]


def _alternatives(cell: str) -> tuple[str, str | None]:
    match = ALT_RE.match(cell)
    if match and match.group(1):
        return match.group(1).strip(), match.group(2).strip()
    return cell.strip(), None


def _footnote_precision(system: str, variant: int) -> str:
    """Tables without a Precision column (25.09): the footnote says the parenthesised figures use other
    quantization granularities: 32x32 (MXFP8) on GB200/B200, 128x128 weights / 1x128 activations (DeepSeek's
    blockwise FP8) on H100; the plain figures are FP8 with per-tensor current scaling."""
    if variant == 0:
        return "fp8-cs"
    return "fp8-ds" if system == "DGX-H100" else "fp8-mx"


def parse(text: str) -> Parsed:
    out = Parsed()
    release: str | None = None
    section = ""
    heading: tuple[str, str] | None = None
    lines = text.splitlines()
    footnotes = {m.group(1): m.group(2) for line in lines if (m := FOOTNOTE_DEF_RE.match(line))}
    i = 0
    while i < len(lines):
        line = lines[i]
        if m := RELEASE_RE.match(line):
            release, heading, section = m.group(1), None, ""
        elif m := HEADING_RE.match(line):
            heading = (m.group(1).lower(), m.group(2))
        elif m := SECTION_RE.match(line):
            section = m.group(1)
        elif line.lstrip().startswith("|") and i + 1 < len(lines) and SEPARATOR_RE.match(lines[i + 1].strip()):
            end = i + 2
            while end < len(lines) and lines[end].lstrip().startswith("|"):
                end += 1
            if release is not None:
                _table(out, lines, i, end, release, section, heading, footnotes)
            i = end
            continue
        i += 1
    return out


def _table(out: Parsed, lines: list[str], start: int, end: int, release: str, section: str,
           heading: tuple[str, str] | None, footnotes: dict[str, str]) -> None:
    header = [re.sub(r"\s+", " ", h.lower()) for h in _split(lines[start])]
    unknown = [h for h in header if h not in COLUMNS]
    keys = [COLUMNS.get(h, h) for h in header]
    fixed: dict[str, str] = {}
    if heading is not None:
        fixed[heading[0]] = heading[1]
    missing = [k for k in REQUIRED if k not in keys and k not in fixed]
    body = range(start + 2, end)
    if unknown or missing:
        reason = (f"unknown column(s) {', '.join(repr(u) for u in unknown)}" if unknown
                  else f"table has no {', '.join(missing)} column (nor a heading naming it)")
        out.skips.extend(Skip(n + 1, reason) for n in body)
        out.table_rows += len(body)
        return
    for n in body:
        out.table_rows += 1
        cells = _split(lines[n])
        if len(cells) != len(keys):
            out.skips.append(Skip(n + 1, f"{len(cells)} cells but the header at line {start + 1} has "
                                         f"{len(keys)} columns"))
            continue
        values = dict(fixed)
        values.update(zip(keys, cells, strict=True))
        # A footnote marker inside a cell ("661[^gpt-oss-note]") annotates the figure: the figure is the number,
        # the footnote's text goes to the recipe's notes (an undefined marker: the row is skipped, not guessed).
        marks = [m for v in values.values() for m in FOOTNOTE_RE.findall(v)]
        undefined = [m for m in marks if m not in footnotes]
        if undefined:
            out.skips.append(Skip(n + 1, f"footnote marker(s) {', '.join(undefined)} without a definition"))
            continue
        values = {k: FOOTNOTE_RE.sub("", v).strip() for k, v in values.items()}
        rows, skips = _row(n + 1, release, section, values)
        for row in rows:
            row.footnotes = tuple(f"[^{m}]: {footnotes[m]}" for m in marks)
        out.rows.extend(rows)
        out.skips.extend(skips)


def _row(line: int, release: str, section: str, values: dict[str, str]) -> tuple[list[Row], list[Skip]]:
    model_text, qualifier_text = _alternatives(values["model"])
    qualifier = qualifier_text.lower() if qualifier_text else None
    model_key = re.sub(r"[^a-z0-9]", "", model_text.lower())
    model = MODELS.get(model_key)
    if model_key in UNSUPPORTED_MODELS:
        return [], [Skip(line, f"model {values['model']!r} is {UNSUPPORTED_MODELS[model_key]}")]
    if model is None:
        return [], [Skip(line, f"unknown model {values['model']!r} (not in the importer's model map)")]
    if qualifier is not None and qualifier not in QUALIFIERS:
        return [], [Skip(line, f"unknown model qualifier ({qualifier_text})")]
    system = values["system"].strip()
    if system not in SYSTEMS:
        return [], [Skip(line, f"unknown system {system!r}")]
    split = {k: _alternatives(v) for k, v in values.items() if k not in ("model", "system")}
    has_alt = any(alt is not None for _, alt in split.values())
    rows: list[Row] = []
    skips: list[Skip] = []
    for variant in (0, 1) if has_alt else (0,):
        if variant == 1 and (split["tokens"][1] is None or split["tflops"][1] is None):
            which = "Model TFLOP/s" if split["tokens"][1] is None else "tokens/s"
            skips.append(Skip(line, f"second configuration skipped: only {which} has a parenthesised figure, "
                                    "so its tokens/s and TFLOP/s are not both stated"))
            continue
        cell = {k: (alt if variant == 1 and alt is not None else main) for k, (main, alt) in split.items()}
        try:
            rows.append(_make_row(line, release, section, system, model, model_text, qualifier, variant, cell))
        except ValueError as exc:
            skips.append(Skip(line, f"{'second configuration: ' if variant else ''}{exc}"))
    return rows, skips


def _number(key: str, text: str) -> int | float | None:
    if text.lower() in ("n/a", "-", ""):
        return None
    clean = text.replace(",", "")
    try:
        return int(clean) if key in INTEGER_KEYS else float(clean)
    except ValueError:
        raise ValueError(f"{key} {text!r} is not a number") from None


def _make_row(line: int, release: str, section: str, system: str, model: str, model_text: str,
              qualifier: str | None, variant: int, cell: dict[str, str]) -> Row:
    nums: dict[str, Any] = {k: _number(k, v) for k, v in cell.items() if k != "precision"}
    for key in ("gpus", "gbs", "mbs", "seq", "tp", "pp", "cp", "tokens", "tflops"):
        if nums.get(key) is None:
            raise ValueError(f"{key} is n/a")
        if nums[key] <= 0:
            raise ValueError(f"{key} {cell[key]!r} is not positive")
    if "precision" in cell:
        precision = PRECISIONS.get(cell["precision"].lower())
        if precision is None:
            raise ValueError(f"unknown precision {cell['precision']!r}")
        inferred = False
    else:
        precision, inferred = _footnote_precision(system, variant), True
    tp, pp, cp, gpus = nums["tp"], nums["pp"], nums["cp"], nums["gpus"]
    if gpus % (tp * pp * cp):
        raise ValueError(f"{gpus} GPUs do not divide by TP x PP x CP = {tp * pp * cp}")
    ep = nums.get("ep") or 1
    if (gpus // pp) % ep:
        raise ValueError(f"EP {ep} does not divide TP x CP x DP = {gpus} / PP {pp} = {gpus // pp} (the GPUs of one "
                         "pipeline stage)")
    return Row(line=line, release=release, section=section, system=system, model=model, model_text=model_text,
               qualifier=qualifier, mtp_layers=QUALIFIERS[qualifier][1] if qualifier else None, variant=variant,
               precision=precision, precision_inferred=inferred, gpus=gpus, gbs=nums["gbs"], mbs=nums["mbs"],
               seq=nums["seq"], fsdp=nums.get("fsdp"), tp=tp, pp=pp, cp=cp, vp=nums.get("vp"),
               ep=nums.get("ep"), ga=nums.get("ga"), tokens=float(nums["tokens"]), tflops=float(nums["tflops"]),
               cells=dict(cell))


def dedupe(parsed: Parsed) -> None:
    """Two rows of one document with the same stable key: rows that differ in GBS get it in their file names
    (both are kept); other repeats are reported and skipped (the later one)."""
    gbs_by_key: dict[tuple[str, str], set[int]] = {}
    for row in parsed.rows:
        gbs_by_key.setdefault((row.model, row.key()), set()).add(row.gbs)
    for row in parsed.rows:
        row.gbs_tag = len(gbs_by_key[(row.model, row.key())]) > 1
    seen: dict[tuple[str, str], int] = {}
    kept: list[Row] = []
    for row in parsed.rows:
        k = (row.model, row.key())
        if k in seen:
            parsed.skips.append(Skip(row.line, f"same release, system, GPUs, precision and model as line "
                                               f"{seen[k]} ({row.key()})"))
            continue
        seen[k] = row.line
        kept.append(row)
    parsed.rows = kept


def read(path: Path) -> Parsed:
    parsed = parse(path.read_text(encoding="utf-8"))
    dedupe(parsed)
    return parsed


class MegatronBridge(Source):
    """docs/performance-summary.md and docs/performance-summary-archive.md of NVIDIA-NeMo/Megatron-Bridge."""

    name = "megatron-bridge"

    def parse(self, text: str) -> Parsed:
        parsed = parse(text)
        dedupe(parsed)
        return parsed

    def admit(self, row: Row, catalog: Catalog) -> str | None:
        missing = [what for what, ok in (("model", row.model in catalog.models),
                                         ("GPU", SYSTEMS[row.system][0] in catalog.gpus)) if not ok]
        return f"{' and '.join(missing)} not in the catalog" if missing else None

    def target(self, root: Path, catalog: Catalog, row: Row) -> Path:
        from generator.importers import recipes  # recipes imports this module's rows

        return recipes.target(root, catalog, row)

    def build(self, row: Row, catalog: Catalog, document: Document, superseded: list[dict[str, Any]],
              skipped: list[str]) -> dict[str, Any]:
        from generator.importers import recipes

        return recipes.build(row, catalog, document.url, document.commit, superseded, skipped)


SOURCE = MegatronBridge()
