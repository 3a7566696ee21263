"""Writes the bad-input corpus: each case is the reference recipe with one defect, plus its expectation.

Run `python tests/corpus/make_corpus.py` after changing a case; the files are committed data.
Each `<case>.expected.yaml` holds the line, field and a message fragment the check must report, and
optionally `place` (where the file sits in the temporary registry) and `agree` (false when the YAML
never parses, so Pydantic and jsonschema never see it).
"""

from __future__ import annotations

from pathlib import Path

import yaml

HERE = Path(__file__).parent
REF = (HERE.parent.parent / "recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml").read_text()


def sub(old: str, new: str, count: int = 1) -> str:
    assert REF.count(old) >= 1, old
    return REF.replace(old, new, count)


# name: (content as str or bytes, line, field, message fragment, extra)
CASES: dict[str, tuple] = {
    "syntax_error": (sub("  tp: 2\n", "  tp: [2\n"), 68, "(document)", "YAML syntax error", {}),
    "duplicate_key": (sub("  pp: 4\n", "  pp: 4\n  pp: 2\n"), 69, "layout.pp", "duplicate key (first at line 68)", {}),
    "tab_indent": (sub("  tp: 2\n", "\ttp: 2\n"), 67, "(document)", "tabs", {}),
    "non_utf8": (sub("  name: ATTUNE\n", "  name: ATT\xffUNE\n").encode("utf-8").replace(b"\xc3\xbf", b"\xff"),
                 12, "(document)", "not valid UTF-8", {}),
    "empty_file": ("", 1, "(document)", "file is empty", {}),
    "comments_only": ("# nothing here\n", 1, "(document)", "file is empty", {}),
    "top_level_list": ("- a\n- b\n", 1, "(document)", "top level must be a mapping", {}),
    "unknown_key_toplevel": (sub("status: verified\n", "status: verified\nstatuss: x\n"), 15, "statuss",
                             "unknown field", {}),
    "misspelt_key": (sub("  tokens_per_s_per_gpu: 1178.1\n", "  tokens_per_s_per_gpu: 1178.1\n  window_token: 5\n"),
                     90, "result.window_token", "did you mean 'window_tokens'", {}),
    "wrong_type_count": (sub("  count: 8\n", "  count: eight\n"), 8, "gpu.count", "valid integer", {}),
    "yes_as_number": (sub("  memory_gb: 80\n", "  memory_gb: yes\n"), 7, "gpu.memory_gb", "valid integer", {}),
    "string_1e3_as_number": (sub("  tokens_per_s_per_gpu: 1178.1\n", "  tokens_per_s_per_gpu: 1e3\n"), 89,
                             "result.tokens_per_s_per_gpu", "valid number", {}),
    "quoted_number": (sub("  global_batch: 128\n", "  global_batch: '128'\n"), 35, "workload.global_batch",
                      "valid integer", {}),
    "float_for_int": (sub("  count: 8\n", "  count: 8.0\n"), 8, "gpu.count", "valid integer", {}),
    "nan_throughput": (sub("  tokens_per_s_per_gpu: 1178.1\n", "  tokens_per_s_per_gpu: .nan\n"), 89,
                       "result.tokens_per_s_per_gpu", "finite", {}),
    "inf_mfu": (sub("  mfu: 0.2194\n", "  mfu: .inf\n"), 92, "result.mfu", "finite", {}),
    "zero_throughput": (sub("  tokens_per_s_per_gpu: 1178.1\n", "  tokens_per_s_per_gpu: 0\n"), 89,
                        "result.tokens_per_s_per_gpu", "greater than 0", {}),
    "negative_throughput": (sub("  tokens_per_s_per_gpu: 1178.1\n", "  tokens_per_s_per_gpu: -5.0\n"), 89,
                            "result.tokens_per_s_per_gpu", "greater than 0", {}),
    "invalid_date": (sub("  measured: 2026-10-20\n", "  measured: 2026-13-45\n"), 98, "result.measured",
                     "not a valid date", {}),
    "future_date": (sub("  measured: 2026-10-20\n", "  measured: 2099-01-01\n"), 98, "result.measured",
                    "in the future", {}),
    "bad_enum_status": (sub("status: verified\n", "status: approved\n"), 14, "status", "Input should be", {}),
    "bad_enum_granularity": (sub("    granularity: selective\n", "    granularity: partial\n"), 81,
                             "layout.recompute.granularity", "Input should be", {}),
    "missing_required": (sub("  rows: SFT conversations\n", ""), 33, "workload.rows", "required field is missing", {}),
    "inconsistent_usd": (sub("  usd_per_million_tokens: 1.62\n", "  usd_per_million_tokens: 1.72\n"), 90,
                         "result.usd_per_million_tokens", "1.6222", {}),
    "inconsistent_mfu": (sub("  mfu: 0.2194\n", "  mfu: 0.2394\n"), 92, "result.mfu", "0.21939", {}),
    "inconsistent_window_tokens": (sub("  window_tokens: 15728640\n", "  window_tokens: 15728641\n"), 103,
                                   "result.window_tokens", "15,728,640", {}),
    "layout_not_matching_gpus": (sub("  dp: 1\n", "  dp: 2\n"), 73, "layout.dp", "gpu.count is 8", {}),
    "layer_split_not_summing": (sub("    first: 13\n", "    first: 14\n"), 75, "layout.layer_split",
                                "does not sum to 60", {}),
    "window_beyond_steps": (sub("  steps_per_run: 20\n", "  steps_per_run: 15\n"), 100, "result.window",
                            "beyond steps_per_run 15", {}),
    "per_node_not_dividing": (sub("  per_node: 8\n", "  per_node: 3\n"), 9, "gpu.per_node", "does not divide", {}),
    "unknown_gpu": (sub("  type: H100\n", "  type: H900\n"), 6, "gpu.type", "unknown GPU type", {}),
    "status_verified_without_pass": (sub("  result: pass\n  summary:", "  result: fail\n  summary:"), 110,
                                     "correctness.result", "verified recipe needs correctness.result: pass", {}),
    "reported_without_publication": (sub("status: verified\n", "status: reported\n"), 14, "status",
                                     "needs `publication`", {}),
    "path_model_mismatch": (REF, 6, "gpu.type", "file is under 'h200/'",
                            {"place": "recipes/gemma-4-31b/h200/attune-tp2-pp4-split13.yaml"}),
    "alias_bomb": ("a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                   "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                   "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
                   "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\nh: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n"
                   "i: [*h, *h, *h, *h, *h, *h, *h, *h, *h]\n", 1, "b[0]", "aliases", {"agree": False}),
    "oversized_file": (REF + "# " + "x" * (600 * 1024) + "\n", 1, "(document)", "the limit is", {"agree": False}),
    "unsupported_tag": (sub("schema_version: 1\n", "schema_version: !!python/object:os.system 1\n"), 3,
                        "schema_version", "unsupported YAML tag", {"agree": False}),
}
# Cases this script does not write: make_fig_corpus.py (fig_), make_load_corpus.py (load_), hand-written (lay_, prov_).
OTHER_OWNERS = ("fig_", "lay_", "load_", "prov_")
NOT_PARSED = {"top_level_list", "syntax_error", "duplicate_key", "tab_indent", "non_utf8", "empty_file", "comments_only"}


def main() -> None:
    for old in HERE.glob("*.yaml"):
        if not old.name.startswith(OTHER_OWNERS):  # stale cases of this script; others' cases are left alone
            old.unlink()
    for name, (content, line, field, message, extra) in CASES.items():
        data = content.encode("utf-8") if isinstance(content, str) else content
        (HERE / f"{name}.yaml").write_bytes(data)
        expected = {"line": line, "field": field, "message": message, **extra}
        if name in NOT_PARSED:
            expected["agree"] = False
        (HERE / f"{name}.expected").write_text(yaml.safe_dump(expected, sort_keys=False))
    print(f"wrote {len(CASES)} cases")


if __name__ == "__main__":
    main()
