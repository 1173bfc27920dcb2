"""BL005 unused-suppression: a `# batchlint: disable` that suppresses nothing, its fix,
and the reason a directive may carry. Each report has a twin where the directive
is used (or cannot be judged) and nothing is reported."""

import json

from batchlint import directives

from conftest import TRL_LINE, TRL_PACKED_GROUPED, codes, findings, run, write

PACKED_OFF = TRL_PACKED_GROUPED.replace("packing: true", "packing: false")  # no BL301 any more


def test_opt_in_like_ruff_rule_100(workdir):
    write(workdir, "sft.yaml", PACKED_OFF.replace("group_by_length: true", "group_by_length: true  # batchlint: disable=BL301"))
    assert run("sft.yaml").exit_code == 0, "not in the default set"
    result = run("--extend-select", "BL005", "sft.yaml")
    [finding] = findings(result.stdout)
    assert (finding["code"], int(finding["line"])) == ("BL005", TRL_LINE)
    assert finding["message"].startswith("`# batchlint: disable=BL301` suppresses nothing: no BL301 finding on line 4")
    assert codes(run("--select", "BL", "sft.yaml").stdout) == ["BL005"], "a prefix selects it, as RUF selects RUF100"


def test_a_used_suppression_is_not_reported(workdir):
    write(workdir, "sft.yaml", TRL_PACKED_GROUPED.replace("group_by_length: true", "group_by_length: true  # batchlint: disable=BL301"))
    result = run("--extend-select", "BL005", "sft.yaml")
    assert result.exit_code == 0 and findings(result.stdout) == []


def test_only_the_unused_code_of_a_list_and_its_fix(workdir):
    text = TRL_PACKED_GROUPED.replace("group_by_length: true", "group_by_length: true  # batchlint: disable=BL301,BL501")
    write(workdir, "sft.yaml", text)
    [finding] = json.loads(run("--extend-select", "BL005", "--output-format", "json", "sft.yaml").stdout)
    assert finding["message"].endswith("no BL501 finding on line 4")
    assert finding["fix"]["applicability"] == "safe"
    assert finding["fix"]["edits"] == [{"path": "sft.yaml", "line": 4, "column": 37, "end_line": 4, "end_column": 56,
                                        "content": "disable=BL301"}]
    assert run("--extend-select", "BL005", "--fix", "sft.yaml").exit_code == 0
    assert open("sft.yaml").read() == TRL_PACKED_GROUPED.replace("group_by_length: true",
                                                                 "group_by_length: true  # batchlint: disable=BL301")


def test_fix_removes_the_comment_and_keeps_what_follows(workdir):
    text = ("packing: false\n"
            "# batchlint: disable=BL301\n"
            "group_by_length: true  # batchlint: disable=BL501 -- reviewed\n"
            "per_device_train_batch_size: 2  # batchlint: disable  # kept: not ours\n"
            "model_name_or_path: Qwen/Qwen2.5-0.5B\n")
    write(workdir, "sft.yaml", text)
    result = run("--extend-select", "BL005", "sft.yaml")
    assert [(f["code"], int(f["line"])) for f in findings(result.stdout)] == [("BL005", 2), ("BL005", 3), ("BL005", 4)]
    assert "(reason given: reviewed)" in result.stdout and "no finding on line 4 (reason given: kept: not ours)" in result.stdout
    assert run("--extend-select", "BL005", "--fix", "sft.yaml").exit_code == 0
    assert open("sft.yaml").read() == ("packing: false\n"
                                       "group_by_length: true\n"
                                       "per_device_train_batch_size: 2  # kept: not ours\n"
                                       "model_name_or_path: Qwen/Qwen2.5-0.5B\n")


def test_codes_the_run_does_not_check_are_not_judged(workdir):
    write(workdir, "sft.yaml", PACKED_OFF.replace("group_by_length: true", "group_by_length: true  # batchlint: disable=BL301"))
    assert codes(run("--extend-select", "BL005", "--ignore", "BL301", "sft.yaml").stdout) == []
    assert codes(run("--select", "BL005,BL1", "sft.yaml").stdout) == []
    # A prefix is judged only when every rule it names is checked.
    write(workdir, "sft.yaml", PACKED_OFF.replace("group_by_length: true", "group_by_length: true  # batchlint: disable=BL3"))
    assert codes(run("--extend-select", "BL005", "sft.yaml").stdout) == ["BL005"]
    assert codes(run("--extend-select", "BL005", "--ignore", "BL310", "sft.yaml").stdout) == []


def test_a_file_that_does_not_parse_or_is_no_config_is_not_judged(workdir):
    write(workdir, "broken.yaml", "packing: [true\ngroup_by_length: true  # batchlint: disable=BL301\n")
    assert codes(run("--extend-select", "BL005", "broken.yaml").stdout) == ["BL001"]
    write(workdir, "notes.yaml", "title: notes  # batchlint: disable=BL301\n")
    assert codes(run("--extend-select", "BL005", "notes.yaml").stdout) == []


def test_disable_file_bl005_silences_it(workdir):
    write(workdir, "sft.yaml", "# batchlint: disable-file=BL005\n" +
          PACKED_OFF.replace("group_by_length: true", "group_by_length: true  # batchlint: disable=BL301"))
    assert codes(run("--extend-select", "BL005", "sft.yaml").stdout) == []


TITAN = ('[model]\nname = "llama4"\n\n[training]\nlocal_batch_size = 8\nseq_len = 8192\n\n'
         "[parallelism]\ndata_parallel_shard_degree = -1\ntensor_parallel_degree = 8  # batchlint: disable=BL202\n"
         "pipeline_parallel_degree = 1\n")
SCRIPT = "torchrun --nproc_per_node=4 -m torchtitan.train --job.config_file llama4.toml\n"


def test_a_suppression_the_launch_script_needs_is_used(workdir):
    """W comes from the launch line: standalone the config has no BL202 to suppress, under the
    script it has. Linted together the directive is used; the config alone cannot tell."""
    write(workdir, "llama4.toml", TITAN)
    write(workdir, "train.sh", SCRIPT)
    assert codes(run("--extend-select", "BL005", ".").stdout) == []
    assert codes(run("--extend-select", "BL005", "train.sh").stdout) == []
    without = TITAN.replace("  # batchlint: disable=BL202", "")
    write(workdir, "llama4.toml", without)
    assert codes(run(".").stdout) == ["BL202"], "the directive is what hides it"
    write(workdir, "llama4.toml", TITAN)
    # The documented limit: the config alone, without the script that runs it.
    assert codes(run("--extend-select", "BL005", "llama4.toml").stdout) == ["BL005"]


def test_reasons_are_parsed_and_kept():
    found = directives.parse("a: 1  # batchlint: disable=BL301,BL3 -- packed on purpose, reviewed\n"
                             "# batchlint: disable-file=BL501  # old style\n")
    first, second = found.suppressions
    assert (first.codes, first.target, first.reason) == (("BL301", "BL3"), 1, "packed on purpose, reviewed")
    assert (second.codes, second.target, second.reason) == (("BL501",), None, "old style")
    assert found.problems == [], "the reason is not read as directives"
    assert found.suppresses("BL301", 1) and first.used == {"BL301", "BL3"} and not second.used
    assert not found.suppresses("BL301", 2)


def test_no_edit_where_lines_are_counted_otherwise():
    """A lone CR (a line break for Python's reader, not for this parser): the fix is not offered."""
    found = directives.parse("a = 1\rb = 2  # batchlint: disable=BL101\n")
    assert found.suppressions[0].removal is None
    assert directives.parse("b = 2  # batchlint: disable=BL101\n").suppressions[0].removal is not None
