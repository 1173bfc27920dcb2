"""In-file `# batchlint:` directives: disable on a line or the next code line,
disable-file, facts for the file, and BL002 for what cannot be understood.

Each suppression test has a twin that leaves the finding in place, so a
directive that silently did nothing (or too much) fails here.
"""

import json

import pytest

from batchlint import directives

from conftest import (
    DS_MISMATCH,
    HF_YAML,
    TITAN_INDIVISIBLE,
    TITAN_LINE,
    TRL_PACKED_GROUPED,
    XTUNER_SP,
    codes,
    findings,
    run,
    write,
)

GA_LINE = "accumulative_counts = 64 // sequence_parallel_size\n"


def xtuner(replace_ga_with):
    """XTUNER_SP with its BL101 line (`accumulative_counts = 64 // sequence_parallel_size`) replaced."""
    assert GA_LINE in XTUNER_SP
    return XTUNER_SP.replace(GA_LINE, replace_ga_with)


def lint(folder, name, text, *args):
    write(folder, name, text)
    return run(*args, name)


# --- disable on the line ------------------------------------------------------------


@pytest.mark.parametrize(
    "comment, suppressed",
    [
        ("# batchlint: disable=BL101", True),
        ("#batchlint:disable=BL101", True),
        ("# batchlint: disable=bl101", True),
        ("# batchlint: disable=BL1", True),  # prefix
        ("# batchlint: disable=BL10", True),
        ("# batchlint: disable=BL", True),
        ("# batchlint: disable", True),  # no codes: every code
        ("# batchlint: disable=ALL", True),
        ("# batchlint: disable=BL301,BL101", True),
        ("# batchlint: disable=BL102", False),
        ("# batchlint: disable=BL2", False),
        ("# batchlint: disable=BL1011", False),  # not a code: BL002, and nothing disabled
    ],
)
def test_trailing_disable_on_the_flagged_line(workdir, comment, suppressed):
    result = lint(workdir, "sft.py", xtuner(f"accumulative_counts = 64 // sequence_parallel_size  {comment}\n"))
    assert ("BL101" not in codes(result.stdout)) == suppressed
    assert result.exit_code == (0 if suppressed else 1)


def test_trailing_disable_on_another_line_does_nothing(workdir):
    text = XTUNER_SP.replace("batch_size = 1\n", "batch_size = 1  # batchlint: disable=BL101\n")
    assert codes(lint(workdir, "sft.py", text).stdout) == ["BL101"]


def test_standalone_disable_applies_to_the_next_code_line(workdir):
    text = xtuner("# batchlint: disable=BL101\n\n# a comment in between\naccumulative_counts = 64 // sequence_parallel_size\n")
    result = lint(workdir, "sft.py", text)
    assert result.exit_code == 0 and codes(result.stdout) == []


def test_standalone_disable_does_not_reach_past_the_next_code_line(workdir):
    text = XTUNER_SP.replace("batch_size = 1\n", "# batchlint: disable=BL101\nbatch_size = 1\n")
    assert codes(lint(workdir, "sft.py", text).stdout) == ["BL101"]


def test_standalone_disable_without_codes(workdir):
    result = lint(workdir, "sft.py", xtuner("# batchlint: disable\naccumulative_counts = 64 // sequence_parallel_size\n"))
    assert codes(result.stdout) == []


def test_disable_in_yaml_and_toml(workdir):
    trl = TRL_PACKED_GROUPED.replace("group_by_length: true", "group_by_length: true  # batchlint: disable=BL301")
    assert codes(lint(workdir, "trl.yaml", trl).stdout) == []
    lines = TITAN_INDIVISIBLE.splitlines(keepends=True)
    lines.insert(TITAN_LINE - 1, "# batchlint: disable=BL103\n")
    assert codes(lint(workdir, "titan.toml", "".join(lines)).stdout) == []
    assert codes(lint(workdir, "titan_twin.toml", TITAN_INDIVISIBLE).stdout) == ["BL103"]


def test_disable_with_a_space_after_the_comma(workdir):
    result = lint(workdir, "sft.py", xtuner("accumulative_counts = 64 // sequence_parallel_size  # batchlint: disable=BL102, BL101\n"))
    assert codes(result.stdout) == [], result.stdout


def test_disable_followed_by_a_reason(workdir):
    text = xtuner("accumulative_counts = 64 // sequence_parallel_size  # batchlint: disable=BL101  # the sp factor is in the literal\n")
    result = lint(workdir, "sft.py", text)
    assert codes(result.stdout) == [], result.stdout


# --- disable-file ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "directive, left",
    [
        ("# batchlint: disable-file=BL101", []),
        ("# batchlint: disable-file=BL1", []),
        ("# batchlint: disable-file", []),
        ("# batchlint: disable-file=BL3", ["BL101"]),
    ],
)
def test_disable_file_anywhere(workdir, directive, left):
    at_top = lint(workdir, "top.py", f"{directive}\n{XTUNER_SP}")
    at_end = lint(workdir, "end.py", f"{XTUNER_SP}{directive}\n")
    assert codes(at_top.stdout) == codes(at_end.stdout) == left


def test_disable_file_leaves_other_files_alone(workdir):
    write(workdir, "a.py", "# batchlint: disable-file=BL101\n" + XTUNER_SP)
    write(workdir, "b.py", XTUNER_SP)
    result = run(".")
    assert [(f["path"], f["code"]) for f in findings(result.stdout)] == [("b.py", "BL101")]


# --- facts -------------------------------------------------------------------------


def test_world_size_and_global_batch_directives(workdir):
    text = "# batchlint: world-size=4 global-batch=48\n" + HF_YAML
    result = lint(workdir, "swift.yaml", text)
    [finding] = findings(result.stdout)
    assert finding["code"] == "BL102" and finding["line"] == "3"
    # 2 x 8 x W=4 = 64, not 48.
    assert "the global batch is 64" in finding["message"]
    assert "not the 48 stated (from the batchlint directive)" in finding["message"]
    assert "swift.yaml:1:" in result.stdout, "the note points at the directive"


def test_facts_directive_met_is_clean(workdir):
    result = lint(workdir, "swift.yaml", "# batchlint: world-size=4\n# batchlint: global-batch=64\n" + HF_YAML)
    assert result.exit_code == 0, result.stdout


# --- BL002 ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "comment, complaint",
    [
        ("# batchlint: world_size=8", "unknown directive 'world_size'"),
        ("# batchlint: enable=BL101", "unknown directive 'enable'"),
        ("# batchlint: world-size=0", "world-size needs a positive whole number"),
        ("# batchlint: world-size=eight", "world-size needs a positive whole number"),
        ("# batchlint: world-size", "world-size needs a positive whole number"),
        ("# batchlint: global-batch=-64", "global-batch needs a positive whole number"),
        ("# batchlint: disable=BL10l", "'BL10L' is not a rule code"),
        ("# batchlint: disable-file=E501", "'E501' is not a rule code"),
        ("# batchlint: disable=", "'disable=' needs codes"),
    ],
)
def test_bad_directive_is_bl002_at_its_line(workdir, comment, complaint):
    text = f"model_type: qwen2\n{comment}\nper_device_train_batch_size: 2\ngradient_accumulation_steps: 8\n"
    result = lint(workdir, "swift.yaml", text, "--format", "json")
    found = json.loads(result.stdout)
    assert [(d["code"], d["line"], d["severity"], d["name"]) for d in found] == [("BL002", 2, "warning", "invalid-directive")]
    assert complaint in found[0]["message"]
    assert found[0]["column"] > comment.index("batchlint:"), "points into the comment, after the marker"
    assert result.exit_code == 1


def test_bad_world_size_directive_is_not_applied(workdir):
    text = "# batchlint: world_size=8\n" + HF_YAML
    result = lint(workdir, "swift.yaml", text, "-w", "4", "--global-batch", "1000")
    messages = {f["code"]: f["message"] for f in findings(result.stdout)}
    assert set(messages) == {"BL002", "BL102"}
    assert "the global batch is 64" in messages["BL102"], "W stays the CLI's 4"


def test_empty_disable_does_not_silence_everything(workdir):
    result = lint(workdir, "sft.py", xtuner("accumulative_counts = 64 // sequence_parallel_size  # batchlint: disable=\n"))
    assert codes(result.stdout) == ["BL002", "BL101"]


def test_bl002_is_not_disabled_by_a_directive_but_can_be_ignored(workdir):
    """A comment with a problem applies none of its items: its `disable` does not hide BL101."""
    text = xtuner("accumulative_counts = 64 // sequence_parallel_size  # batchlint: disable worldsize=8\n")
    assert codes(lint(workdir, "sft.py", text).stdout) == ["BL002", "BL101"]
    assert codes(run("--ignore", "BL002", "sft.py").stdout) == ["BL101"]


def test_directive_needs_a_comment(workdir):
    """`batchlint:` inside a word or a string with no `#` before it is not a directive."""
    text = xtuner('accumulative_counts = 64 // sequence_parallel_size\nnote = "batchlint: disable=BL101"\n')
    assert codes(lint(workdir, "sft.py", text).stdout) == ["BL101"]


# --- JSON has none -----------------------------------------------------------------------


def test_json_has_no_directives(workdir):
    text = DS_MISMATCH.replace(
        '"train_batch_size": 64,', '"train_batch_size": 64, "note": " # batchlint: disable",\n  "x": " # batchlint: nonsense",'
    )
    result = lint(workdir, "ds.json", text, "-w", "8")
    assert codes(result.stdout) == ["BL102"], "neither suppressed nor reported as a bad directive"


def test_json_still_obeys_cli_and_project_config(workdir):
    write(workdir, "batchlint.toml", 'ignore = ["BL102"]\n')
    assert codes(lint(workdir, "ds.json", DS_MISMATCH, "-w", "8").stdout) == []


# --- the parser itself -------------------------------------------------------------------


def test_parse_records_placement():
    text = "a = 1  # batchlint: disable=BL101\n# batchlint: disable=BL2\n\nb = 2\n# batchlint: disable-file=BL3\n"
    found = directives.parse(text)
    assert found.line_disabled == {1: {"BL101"}, 4: {"BL2"}}
    assert found.file_disabled == {"BL3"}
    assert found.problems == []
    assert found.suppresses("BL101", 1) and not found.suppresses("BL101", 4)
    assert found.suppresses("BL201", 4) and found.suppresses("BL301", 99)


def test_parse_without_marker_is_empty():
    found = directives.parse("x = 1  # noqa\n")
    assert (found.line_disabled, found.file_disabled, found.world_size, found.problems) == ({}, set(), None, [])


@pytest.mark.parametrize("comment", ["# noqa: BL101", "# NOQA: BL101", "# NoQa: BL101", "#noqa:BL101"])
def test_noqa_in_any_case_among_other_scripts_lines(comment):
    # The parser finds its lines by searching the text (in its ASCII, for a text with CJK comments):
    # each directive still lands on its own line, whatever the case and whatever other lines hold.
    text = ("# 中文的说明：序列并行 noqa\n" * 3) + f"x = 1  {comment}\ny = 2  # 中文\n" + "z = 3  # batchlint: disable=BL2\n"
    found = directives.parse(text)
    assert found.line_disabled == {4: {"BL101"}, 6: {"BL2"}}
    assert found.suppresses("BL101", 4) and not found.suppresses("BL101", 5)


@pytest.mark.parametrize("text, editable", [
    ("a = 1  # noqa: BL101\n", True), ("a = 1  # noqa: BL101\r\n", True), ("a = 1\rb = 2  # noqa: BL101\n", False),
    ("a = 1  # noqa: BL101\n# \u2028\n", False), ("a = 1  # noqa: BL101\n# \x85\n", False),
    ("a = 1  # noqa: BL101\r\n\r\r\n", False), ("a = 'é'  # noqa: BL101\n", True),
])
def test_an_edit_is_offered_only_where_lines_break_at_newlines(text, editable):
    # A lone "\r", NEL, LS or PS break lines for some readers and not for others: no removal offered there.
    found = directives.parse(text)
    assert [s.removal is not None for s in found.suppressions] == [editable]


def _parsed(text):
    found = directives.parse(text, frozenset({"BL101", "BL201"}))
    return (found.file_disabled, found.line_disabled, found.problems,
            [sorted(vars(s).items()) for s in found.suppressions])


def test_noqa_lines_without_batchlint_codes_are_not_read(monkeypatch):
    # Only a `noqa` followed on its line by a code starting with BL can be batchlint's: the parser reads no
    # other (a `noqa` of E501 on every import line of a config). Held to the parser that reads every `noqa`
    # line, on generated texts of other tools' codes, ours, case, non-ASCII spaces and other line breaks.
    import random

    pieces = ["# noqa: E501", "# NOQA: BL101", "#noqa:bl101,E501", "# noqa : E501, BL201", "# noqa: BLX1",
              "# noqa\u3000: BL101", "# noqa: ſ1, BL101", "# noqa", "noqa: BL101", "# noqa: E5\u00a0BL101",
              "# batchlint: disable=BL201", "x = 1", "# 中文 noqa", "bl", "  ", "\r", "\u2028", "é"]
    rng = random.Random(20261129)
    texts = ["".join(rng.choice(pieces) + rng.choice(["", " ", "\n", "\r\n", "\n\n"]) for _ in range(rng.randrange(1, 12)))
             for _ in range(3000)]
    filtered = [_parsed(text) for text in texts]
    monkeypatch.setattr(directives, "_ours_after_noqa", lambda lowered: "noqa" in lowered)  # every `noqa` read
    assert filtered == [_parsed(text) for text in texts]
    assert sum(1 for found in filtered if found[1]) > 300  # the texts hold codes of ours that apply

