"""Writes the load_* corpus: inputs that once crashed `check` or read differently to YAML 1.1 and 1.2, and the
strict fields (environment names, URLs, a recipe's place). Each case is the reference recipe with one defect.

Run `python tests/corpus/make_load_corpus.py` after changing a case; it writes (and only writes) load_* files.
Cases that a corpus file cannot express (symlinks, fifos, permissions) are in tests/test_load_robustness.py.
"""

from __future__ import annotations

from pathlib import Path

import yaml

HERE = Path(__file__).parent
REF = (HERE.parent.parent / "recipes/gemma-4-31b/h100/attune-tp2-pp4-split13.yaml").read_text()
REF_LINES = REF.count("\n")
DEEP = 500  # levels: past the loader's MAX_DEPTH, under libyaml's own limit of 1,000


def sub(old: str, new: str) -> str:
    assert REF.count(old) == 1, old
    return REF.replace(old, new)


def line_of(text: str) -> int:
    return REF[: REF.index(text)].count("\n") + 1


def deep_flow(depth: int) -> str:
    return "[" * depth + "]" * depth


def deep_block(depth: int) -> str:
    return "".join("  " * (i + 1) + f"k{i}:\n" for i in range(depth)) + "  " * (depth + 1) + "v: 1\n"


# name: (content, line, field, message fragment, extra keys of the expectation)
CASES: dict[str, tuple[str | bytes, int, str, str, dict]] = {
    # --- tracebacks once: tags whose value cannot be built, Python's int limit, recursion --------------------
    "load_tag_int_two": (sub("  count: 8\n", "  count: !!int two\n"), 8, "gpu.count", "'two' is not an integer", {}),
    "load_tag_bool_null": (sub("  sequence_parallel: true\n", "  sequence_parallel: !!bool null\n"), 74,
                           "layout.sequence_parallel", "'null' is not a boolean", {}),
    "load_tag_float_h100": (sub("  type: H100\n", "  type: !!float H100\n"), 6, "gpu.type", "'H100' is not a number", {}),
    "load_tag_timestamp_number": (sub("schema_version: 1\n", "schema_version: !!timestamp 1\n"), 3, "schema_version",
                                  "'1' is not a valid date", {}),
    "load_tag_empty_float": (sub("  profiler: false\n", "  profiler: !!float\n"), 105, "result.profiler",
                             "'' is not a number", {}),
    "load_tag_empty_int": (sub("  count: 8\n", "  count: !!int\n"), 8, "gpu.count", "'' is not an integer", {}),
    "load_tag_null_with_text": (sub("  instance: AWS p5.48xlarge\n", "  instance: !!null AWS p5.48xlarge\n"), 10,
                                "gpu.instance", "cannot read 'AWS p5.48xlarge' as null", {}),
    "load_int_4301_digits": (sub("  count: 8\n", "  count: " + "1" * 4301 + "\n"), 8, "gpu.count",
                             "a number of 4,301 characters is not a recipe figure", {}),
    "load_count_1e309": (sub("  global_batch: 128\n", "  global_batch: 1" + "0" * 309 + "\n"), 35,
                         "workload.global_batch", "a number of 310 characters", {}),
    "load_count_beyond_bound": (sub("  global_batch: 128\n", "  global_batch: 1" + "0" * 60 + "\n"), 35,
                                "workload.global_batch", "less than or equal to 1000000000", {}),
    "load_params_beyond_bound": (sub("    count: 30696013824\n", "    count: 1" + "0" * 40 + "\n"), 95,
                                 "result.active_params.count", "less than or equal to 1000000000000000", {}),
    "load_tp_beyond_bound": (sub("  tp: 2\n", "  tp: 1" + "0" * 50 + "\n"), 67, "layout.tp",
                             "less than or equal to 1000000", {}),
    "load_float_1e309": (sub("  gpu_hours: 5.69\n", "  gpu_hours: 1.0e+309\n"), 106, "result.gpu_hours", "finite", {}),
    "load_inf_count": (sub("  global_batch: 128\n", "  global_batch: .inf\n"), 35, "workload.global_batch",
                       "valid integer", {}),
    "load_deep_flow": (sub("  tp: 2\n", f"  tp: {deep_flow(DEEP)}\n"), 67, "layout.tp" + "[0]" * 30,
                       "nested deeper than 32 levels", {"agree": False}),
    "load_deep_block": (sub("env:\n", "deep:\n" + deep_block(DEEP) + "env:\n"), 161 + 33,
                        "deep." + ".".join(f"k{i}" for i in range(31)), "nested deeper than 32 levels",
                        {"agree": False}),
    # --- keys that are not text ---------------------------------------------------------------------------------
    "load_key_int": (sub("status: verified\n", "status: verified\n1: x\n"), 15, "1",
                     "a key must be text, and YAML reads '1' as an integer", {"agree": False}),
    "load_key_null": (sub("status: verified\n", "status: verified\nnull: x\n"), 15, "null",
                      "YAML reads 'null' as null", {"agree": False}),
    "load_key_bool": (sub("env:\n", "env:\n  on: '1'\n"), 162, "env.on", "YAML reads 'on' as a boolean",
                      {"agree": False}),
    "load_long_key": (sub("status: verified\n", "status: verified\n" + "k" * 2000 + ": 1\n"), 15, "(document)",
                      "could not find expected ':'", {"agree": False}),
    # --- characters, encodings, documents -------------------------------------------------------------------
    "load_bom_then_defect": ("\ufeff" + sub("status: verified\n", "status: approved\n"), 14, "status",
                             "Input should be", {}),
    "load_bom_inside": (sub("status: verified\n", "status: \ufeffverified\n"), 14, "(document)",
                        "U+FEFF is not allowed", {"agree": False}),
    "load_nul_byte": (sub("status: verified\n", "status: veri\x00fied\n"), 14, "(document)", "U+0000 is not allowed",
                      {"agree": False}),
    "load_escape_character": (sub("status: verified\n", "status: veri\x1b[31mfied\n"), 14, "(document)",
                              "U+001B is not allowed", {"agree": False}),
    "load_nel_character": (sub("status: verified\n", "status: veri\x85fied\n"), 14, "(document)",
                           "U+0085 is not allowed", {"agree": False}),
    "load_bidi_override": (sub("  name: ATTUNE\n", "  name: AT\u202eTUNE\n"), 12, "(document)", "U+202E is not allowed",
                           {"agree": False}),
    "load_lone_carriage_return": (sub("status: verified\n", "status: verified\r"), 14, "(document)",
                                  "carriage return without a line feed", {"agree": False}),
    "load_crlf_then_defect": (sub("status: verified\n", "status: approved\n").replace("\n", "\r\n"), 14, "status",
                              "Input should be", {}),
    "load_two_documents": (REF + "---\nschema_version: 1\n", REF_LINES + 1, "(document)",
                           "expected a single document in the stream, but found another document", {"agree": False}),
    "load_no_final_newline": (REF + "x: [unclosed", REF_LINES + 1, "(document)",
                              "while parsing a flow sequence", {"agree": False}),
    "load_lone_surrogate_escape": (sub("status: verified\n", 'status: "\\ud800"\n'), 14, "(document)",
                                   "invalid Unicode character escape", {"agree": False}),
    "load_forged_problem_line": (sub("model: Gemma-4-31B\n", 'model: "Gemma\\n recipes/x.yaml:1:1: forged\\e[31m"\n'),
                                 4, "model", "unknown model 'Gemma\n recipes/x.yaml:1:1: forged\x1b[31m'", {}),
    # --- dates ---------------------------------------------------------------------------------------------------
    "load_date_feb30": (sub("  measured: 2026-10-20\n", "  measured: 2026-02-30\n"), 98, "result.measured",
                        "'2026-02-30' is not a valid date", {}),
    "load_date_in_text_field": (sub("    license: ODC-By 1.0\n", "    license: 2026-02-30\n"), 41,
                                "workload.dataset.license", "'2026-02-30' is not a valid date (YYYY-MM-DD; quote it",
                                {}),
    # --- YAML 1.1 (this check) and YAML 1.2 (the runner) must read the same -----------------------------------
    "load_yaml11_yes": (sub("  sequence_parallel: true\n", "  sequence_parallel: yes\n"), 74,
                        "layout.sequence_parallel", "'yes' is the boolean true to YAML 1.1", {}),
    "load_yaml11_off": (sub("  profiler: false\n", "  profiler: off\n"), 105, "result.profiler",
                        "but the text 'off' to YAML 1.2", {}),
    "load_yaml11_octal": (sub("  row_tokens: 8192\n  rows:", "  row_tokens: 020000\n  rows:"), 33, "workload.row_tokens",
                          "'020000' is the integer 8192 to YAML 1.1 (this check's PyYAML) but the integer 20000", {}),
    "load_yaml11_sexagesimal": (sub("  global_batch: 128\n", "  global_batch: 2:08\n"), 35, "workload.global_batch",
                                "'2:08' is the integer 128 to YAML 1.1", {}),
    "load_yaml11_underscore": (sub("  global_batch: 128\n", "  global_batch: 1_28\n"), 35, "workload.global_batch",
                               "but the text '1_28' to YAML 1.2", {}),
    "load_yaml11_binary": (sub("  count: 8\n", "  count: 0b1000\n"), 8, "gpu.count", "'0b1000' is the integer 8", {}),
    "load_yaml12_exponent": (sub("  tokens_per_s_per_gpu: 1178.1\n", "  tokens_per_s_per_gpu: 1.1781e3\n"), 89,
                             "result.tokens_per_s_per_gpu", "the number 1178.1 to YAML 1.2", {}),
    "load_yaml12_leading_zero": (sub("  memory_gb: 80\n", "  memory_gb: 080\n"), 7, "gpu.memory_gb",
                                 "'080' is the text '080' to YAML 1.1", {}),
    "load_yaml12_octal_0o": (sub("  count: 8\n", "  count: 0o10\n"), 8, "gpu.count", "the integer 8 to YAML 1.2", {}),
    "load_explicit_int_octal": (sub("  count: 8\n", "  count: !!int 010\n"), 8, "gpu.count",
                                "'010' is the integer 8 to YAML 1.1", {}),
    "load_explicit_int_underscore": (sub("  count: 8\n", "  count: !!int 0_10\n"), 8, "gpu.count",
                                     "YAML 1.2 (the runner's ruamel.yaml) cannot read '0_10' as an integer", {}),
    # --- tags and anchors on collections are not silently ignored ----------------------------------------------
    "load_tag_set": (sub("env:\n", "env: !!set\n"), 161, "env", "YAML tag tag:yaml.org,2002:set on a mapping",
                     {"agree": False}),
    "load_tag_custom": (sub("env:\n", "env: !custom\n"), 161, "env", "YAML tag !custom on a mapping", {"agree": False}),
    "load_tag_omap": (sub("patches: []\n", "patches: !!omap []\n"), 164, "patches",
                      "YAML tag tag:yaml.org,2002:omap on a list", {"agree": False}),
    "load_tag_explicit_map": (sub("env:\n", "env: !!map\n"), 161, "env", "YAML tag tag:yaml.org,2002:map on a mapping",
                              {"agree": False}),
    "load_anchor_unused": (sub("gpu:\n", "gpu: &g\n"), 5, "gpu", "anchors are not allowed", {"agree": False}),
    # --- strict fields: environment names, URLs ----------------------------------------------------------------
    "load_env_not_identifier": (sub("env:\n", "env:\n  'A; touch /tmp/x #': '1'\n"), 162, "env.A; touch /tmp/x #",
                                "shell identifier", {}),
    "load_env_leading_digit": (sub("env:\n", "env:\n  1A: '1'\n"), 162, "env.1A", "shell identifier", {}),
    "load_url_javascript": (sub("  url: https://arxiv.org/abs/2610.17528\n", "  url: javascript:alert(1)\n"), 13,
                            "author.url", "must be an http(s) URL", {}),
    "load_url_file": (sub("    source: https://huggingface.co/google/gemma-4-31B-it\n", "    source: file:///etc/passwd\n"),
                      96, "result.active_params.source", "must start with an http(s) URL", {}),
    "load_url_without_host": (sub("  url: https://arxiv.org/abs/2610.17528\n", "  url: https:///abs/2610.17528\n"), 13,
                              "author.url", "must be an http(s) URL with a host", {}),
    "load_dataset_source_scheme": (sub("    source: allenai/tulu-3-sft-mixture\n",
                                       "    source: javascript:alert(document.cookie)\n"), 39,
                                   "workload.dataset.source", "must start with an http(s) URL", {}),
    # --- a recipe's place: depth, suffix ------------------------------------------------------------------------
    "load_depth_shallow": (REF, 1, "(document)", "a recipe is recipes/<model>/<gpu>/<name>.yaml",
                           {"place": "recipes/gemma-4-31b/case.yaml"}),
    "load_depth_deep": (REF, 1, "(document)", "at the wrong depth (3 folder(s) below recipes/)",
                        {"place": "recipes/gemma-4-31b/h100/extra/case.yaml"}),
    "load_depth_top": (REF, 1, "(document)", "at the wrong depth (0 folder(s) below recipes/)",
                       {"place": "recipes/case.yaml"}),
    "load_upper_case_suffix": (sub("status: verified\n", "status: approved\n"), 14, "status", "Input should be",
                               {"place": "recipes/gemma-4-31b/h100/case.YAML"}),
}


def main() -> None:
    for old in [*HERE.glob("load_*.yaml"), *HERE.glob("load_*.expected")]:
        old.unlink()
    for name, (content, line, field, message, extra) in CASES.items():
        data = content.encode("utf-8") if isinstance(content, str) else content
        (HERE / f"{name}.yaml").write_bytes(data)
        expected = {"line": line, "field": field, "message": message, **extra}
        (HERE / f"{name}.expected").write_text(yaml.safe_dump(expected, sort_keys=False, allow_unicode=False))
    print(f"wrote {len(CASES)} cases")


if __name__ == "__main__":
    main()
