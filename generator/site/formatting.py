"""How every figure and fact reads on the site: the one place formatting rules live.

Values come in already computed (generator.figures); here they only become text. Everything returns
plain str; escaping is the templates' job (Jinja2 autoescape), except `html_text`, used where text
goes into a raw HTML block inside a Markdown page.
"""

from __future__ import annotations

import datetime as dt
import html
import re
from urllib.parse import urlsplit

from generator import figures

DASH = "\u2013"  # shown where a figure is missing

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_UNSAFE_TITLE = re.compile(r"[<>&\"'`\\]")
# A "#" opening a line of recipe text: entity-escaped, so no recipe text reads as a heading (generator.site.direct).
_LINE_HASH = re.compile(r"^#", re.M)
# Text html_text leaves as it is (most of a page's values: names, figures, dates), found in one scan.
_PLAIN_TEXT = re.compile(r"[^&<>\"'`~#\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*\Z")


def number(value: float | int, places: int = 0) -> str:
    """Thousands separators, fixed decimals: 1178.1 -> '1,178.10' with places=2."""
    return f"{value:,.{places}f}"


def integer(value: int) -> str:
    return f"{value:,}"


def stated(value: float) -> str:
    """A stated figure as written in the recipe (0.0091 stays 0.0091), with thousands separators."""
    return number(value, figures.decimals(value))


def tokens_per_s(value: float) -> str:
    return number(value, 2)


def short_places(value: float) -> int:
    """Decimals a table shows: enough for three significant figures, none beyond (4612.0 -> 0, 54.31 -> 1,
    7.254 -> 2). Tables compare rows; the card and the recipe page keep every stated decimal."""
    magnitude = abs(value)
    return 0 if magnitude >= 100 else 1 if magnitude >= 10 else 2


def short(value: float | None) -> str:
    """A figure in a table at its meaningful precision: 4,612 rather than 4,612.00, and never more decimals than the
    value carries (a publication's 7 tokens/s stays 7, not 7.00)."""
    return DASH if value is None else number(value, min(short_places(value), figures.decimals(value)))


def usd_short(value: float | None) -> str:
    """$ in a table: cents, or three significant figures below ten cents ($0.042)."""
    if value is None:
        return DASH
    return f"${value:,.3f}" if abs(value) < 0.1 else f"${value:,.2f}"


def usd(value: float | None) -> str:
    return DASH if value is None else f"${value:,.2f}"


def price_text(per_gpu: float, stated: float) -> str:
    """A price per GPU-hour as a price field shows it: to the decimals its instance's stated price carries, never
    fewer than cents (27.44705 for 8 GPUs: '3.43088'; 55.04 for 8: '6.88'; $42.00, read as 42.0, for 4: '10.5'),
    trailing zeros dropped, no separators (an input's number)."""
    text = f"{per_gpu:.{max(figures.decimals(stated), 2)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def percent(fraction: float | None, places: int = 1) -> str:
    """A fraction (0-1) as a percentage: 0.21939 -> '21.9%'."""
    return DASH if fraction is None else f"{fraction * 100:,.{places}f}%"


def percent_value(value: float | None, places: int = 2) -> str:
    """A value already in percent: 2.19 -> '2.19%'."""
    return DASH if value is None else f"{value:,.{places}f}%"


def flops(value: float) -> str:
    """A FLOP count in three significant figures, its power of ten written out: 5.7833e10 -> '5.78e10'."""
    mantissa, exponent = f"{value:.2e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def peak_name(precision: str) -> str:
    """'fp8' -> 'FP8': the catalog's peak key as the site names it."""
    return precision.upper()


def mfu(fraction: float | None, active_params: int, note: str | None = None, peak: str | None = None,
        frozen_base: bool = False) -> str:
    """The card's MFU. `peak` names the precision's peak when it is not the default BF16 one (reported rows);
    `frozen_base` says the count is 4N (LoRA)."""
    if fraction is None:
        return DASH
    against = f" of the {peak_name(peak)} dense peak" if peak else ""
    count = "; 4N FLOPs a token: LoRA's frozen base has no weight gradients" if frozen_base else ""
    text = f"{percent(fraction)}{against} (N = {integer(active_params)} active parameters per token{count})"
    return f"{text}; {note}" if note else text


def mfu_cell(fraction: float | None, peak: str | None = None) -> str:
    """MFU in a table: '34.3% (FP8 peak)' for a row measured against its precision's peak, else '21.9%'."""
    if fraction is None:
        return DASH
    return f"{percent(fraction)} ({peak_name(peak)} peak)" if peak else percent(fraction)


def signed_percent(fraction: float, places: int = 0) -> str:
    """+0.585 -> '+58%', -0.031 -> '-3%'."""
    return f"{fraction * 100:+,.{places}f}%"


def speedup(before: float, after: float, change: float) -> str:
    """'743.4 \u2192 1,178.1, +58%': tokens/s per GPU of the reference, of the recipe, and the change."""
    return f"{number(before, 1)} \u2192 {number(after, 1)}, {signed_percent(change)}"


def date(value: dt.date | None) -> str:
    return DASH if value is None else value.isoformat()


def gpus(count: int, gpu_type: str, memory_gb: int, per_node: int, instance: str | None) -> str:
    where = f"{instance}, {per_node} per node" if instance else f"{per_node} per node"
    return f"{count} x {gpu_type} {memory_gb} GB ({where})"


def plural(count: int, word: str, words: str | None = None) -> str:
    return f"{integer(count)} {word if count == 1 else (words or word + 's')}"


def convergence(correlation: float, final_loss_difference: float, failures: int, steps: int) -> str:
    return (f"correlation {stated(correlation)}, final loss difference {stated(final_loss_difference)}, "
            f"{plural(failures, 'pointwise failure')} over {plural(steps, 'step')}")


def component_test(test: str, gpu: str, when: dt.date, shape: str, detail: str | None, note: str | None) -> str:
    """'test: GPU, date. Shape: shape. detail note' (the card's line)."""
    tail = " ".join(part for part in (detail, note) if part)
    text = f"{test}: {gpu}, {date(when)}. Shape: {shape}."
    return f"{text} {tail}" if tail else text


def rows(build_name: str | None, dataset_name: str | None, rows_sha256: str | None, fallback: str) -> str:
    name = build_name or dataset_name or fallback
    return f"{name} (rows_sha256 {rows_sha256})" if rows_sha256 else name


def hours(value: float | None) -> str:
    return DASH if value is None else number(value, 2)


def title(model: str, gpu_type: str) -> str:
    return plain_title(f"Training {model} on {gpu_type}")


def plain_title(text: str) -> str:
    """Titles go into MkDocs' own templates, which do not escape: keep them to inert characters."""
    return " ".join(_UNSAFE_TITLE.sub("", _CONTROL.sub("", text)).split())


def safe_url(url: str | None) -> str | None:
    """Only http(s) URLs become links; anything else (javascript:, data:, relative) is shown as text."""
    if not url:
        return None
    url = url.strip()
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc or _CONTROL.search(url) or " " in url:
        return None
    return url


def split_source(text: str) -> tuple[str | None, str]:
    """'https://x/y (a note)' -> ('https://x/y', ' (a note)'): a catalog source's leading URL becomes a link."""
    head, _, rest = text.partition(" ")
    url = safe_url(head)
    return (url, (" " + rest) if rest else "") if url else (None, text)


def html_text(text: str) -> str:
    """Escaped text for a raw HTML block inside a Markdown page.

    Python-Markdown never parses inside such a block, but its fenced-code preprocessor runs first and
    would take a line starting with ``` or ~~~ for a fence: those characters become entities too.
    Control characters go (Python-Markdown's placeholders are built from \\x02 and \\x03)."""
    if _PLAIN_TEXT.match(text):
        return text
    out = html.escape(_CONTROL.sub("", text), quote=True)
    return _LINE_HASH.sub("&#35;", out.replace("`", "&#96;").replace("~", "&#126;"))


def fence_safe(rendered_html: str) -> str:
    """The same protection for HTML produced by markdown-it (already escaped)."""
    return _LINE_HASH.sub("&#35;", _CONTROL.sub("", rendered_html).replace("`", "&#96;").replace("~", "&#126;"))


# Stack fields by their projects' own names (the field name otherwise, "Megatron lm" being no name at all).
STACK_LABELS = {"framework": "Framework", "megatron_lm": "Megatron-LM", "megatron_core": "Megatron Core",
                "megatron_bridge": "Megatron-Bridge", "transformer_engine": "Transformer Engine",
                "pytorch": "PyTorch", "cuda": "CUDA", "nccl": "NCCL", "driver": "NVIDIA driver", "deepep": "DeepEP",
                "python": "Python", "attention_backend": "Attention backend", "gpu_name": "GPU name",
                "network": "Network", "source": "Source"}


class CsvNumber(str):
    """A figure cell of a CSV export (csv_number): the site's own float, written as a number and never neutralised,
    so that a spreadsheet reads "-1.5" as the number it is and can sum it. Every other cell is text (csv_line)."""


def csv_number(value: float | None) -> CsvNumber:
    """A figure of recipes.csv, as a number: never neutralised, so a negative figure stays a number a spreadsheet
    can sum (it is the site's own float, never contributor text, and "-1.5" is data, not a formula)."""
    return CsvNumber("" if value is None else repr(float(value)))


# Spreadsheet formula injection (OWASP, "CSV Injection", https://owasp.org/www-community/attacks/CSV_Injection):
# Excel, LibreOffice and Google Sheets evaluate a cell that starts with one of these (tab and carriage return can
# precede a formula the application then trims).
CSV_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
# Where a spreadsheet may start a cell inside our text: after any separator it may split on (the one it guesses or its
# locale's: ",", ";", tab, "|", several at once in LibreOffice) or a line end. Quoting a cell does not protect what
# follows such a character: a reader splitting on ";" sees our quotes mid-field, as plain characters.
CSV_FIELD_BREAKS = ",;|\t\r\n"
# What a spreadsheet may skip before it reads a cell's first character: spaces, and a double quote it takes as the
# start of a quoted field.
CSV_LEADING = " \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\x0b\x0c\""
_FORMULA_AHEAD = f"(?=[{CSV_LEADING}]*[=+\\-@\\t\\r])"
_FORMULA_AT_THE_START = re.compile(_FORMULA_AHEAD)  # matched at 0
_FORMULA_AFTER_A_BREAK = re.compile(f"([{re.escape(CSV_FIELD_BREAKS)}]){_FORMULA_AHEAD}")


def csv_text(value: object) -> str:
    """A text cell of a CSV export, neutralised as OWASP recommends wherever a spreadsheet could start a cell in it:
    at its start and after every separator or line end inside it (CSV_FIELD_BREAKS), a formula character
    (CSV_FORMULA_PREFIXES) after any spaces or double quotes gets a single quote put before them, so a spreadsheet
    shows the text instead of running it, whichever of , ; | tab it splits on. Every text column goes through this,
    even one whose text looks like a number ('-1' as a framework is text); figures go through csv_number. Applying it
    twice changes nothing. site_src/assets/js/csv.js does the same for the page's CSV of the rows in view."""
    text = str(value)
    inner = _FORMULA_AFTER_A_BREAK.sub(r"\1'", text)
    return "'" + inner if _FORMULA_AT_THE_START.match(text) else inner


# Characters a spreadsheet may split a line on (the separator it guesses or its locale's: ",", ";", tab, "|") or
# that end a line. A cell holding one is always written between double quotes (OWASP's second rule), so that a reader
# splitting on "," reads it whole; csv_text has made every part of it that a reader splitting elsewhere sees as a
# cell of its own safe.
CSV_QUOTE_WHEN = frozenset(',;\t|"\r\n')


def csv_cell(text: str) -> str:
    """One cell of a CSV line: between double quotes (inner quotes doubled) where it holds a separator, a quote or
    a line end; as is otherwise."""
    if CSV_QUOTE_WHEN.intersection(text):
        return '"' + text.replace('"', '""') + '"'
    return text


def csv_line(cells: list[str]) -> str:
    """A CSV line: every cell that is not a figure (csv_number) is text and neutralised (csv_text), whether or not its
    caller did so already, so no column of any export can be left out. A figure is a number wherever a reader
    splitting on "," sees it. Only as a line's first cell could one begin a field that runs on into the next cells
    for a reader splitting on ";" ("-1.5,x,..."); there it is written as text. No export starts a line with one."""
    return ",".join(csv_cell(cell if isinstance(cell, CsvNumber) and (i or not cell.startswith("-")) else csv_text(cell))
                    for i, cell in enumerate(cells)) + "\n"


def params(count: int) -> str:
    """A parameter count in a table: 70,553,706,496 -> '70.6B', 124,000,000 -> '124M'."""
    return f"{count / 1e9:,.1f}B" if count >= 1e9 else f"{count / 1e6:,.0f}M"


def sequence(tokens: int) -> str:
    """A sequence length in a table: 8192 -> '8k', 4000 -> '4,000' (only whole multiples of 1,024 say k)."""
    return f"{tokens // 1024}k" if tokens % 1024 == 0 else integer(tokens)


def minutes(ms: float, places: int = 2) -> str:
    """A run time as MLPerf states results: 589,814 ms -> '9.83 min'."""
    return f"{number(ms / 60_000, places)} min"


def quality_target(metric: str, direction: str, target: float, runs_reached: int, runs: int, reached: float) -> str:
    """'eval loss <= 0.925 reached in 10 of 10 runs: 0.92494 (median run)': a benchmark's target, how many of the
    counted runs reached it, and the value the median run ended at, each as stated."""
    return (f"{metric} {direction} {stated(target)} reached in {runs_reached} of {plural(runs, 'run')}: "
            f"{stated(reached)} (median run)")
