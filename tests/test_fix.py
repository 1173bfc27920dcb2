"""--fix and --diff: each fix as input -> expected output text, the fixed file
lints clean of what was fixed, --diff writes nothing, and a fix that would
break the file is refused."""

import os

from batchlint.cli import main
from batchlint.document import Span
from batchlint.fix import FileFix, apply, parse_problem
from batchlint.rule import Edit

from conftest import cli_runner, write

XTUNER = """\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 4
batch_size = 1  # per_device
accumulative_counts = 6  # tuned at sp=1
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=DefaultSampler, shuffle=True))
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""
XTUNER_FIXED = XTUNER.replace(
    "accumulative_counts = 6  # tuned at sp=1\n",
    "accumulative_counts = 6  # tuned at sp=1\naccumulative_counts *= sequence_parallel_size\n",
).replace("sampler=dict(type=DefaultSampler,", "sampler=dict(type=sampler,")

TRL = "model_name_or_path: Qwen/Qwen2.5-0.5B\npacking: true  # full sequences\ngroup_by_length: true\n"
TRL_FIXED = TRL.replace("group_by_length: true", "group_by_length: false")

HF = "stage: sft\nper_device_train_batch_size: 2\ngradient_accumulation_steps: 8\ndeepspeed: ds.json\n"
DS = '{\n  "train_micro_batch_size_per_gpu": 4,\n  "gradient_accumulation_steps": 8,\n  "zero_optimization": {"stage": 2}\n}\n'
DS_FIXED = DS.replace('"train_micro_batch_size_per_gpu": 4', '"train_micro_batch_size_per_gpu": "auto"')


def run(*args):
    return cli_runner().invoke(main, [str(a) for a in args])


def read(path):
    with open(path, encoding="utf-8", newline="") as handle:
        return handle.read()


def test_xtuner_scaling_and_sampler(workdir):
    write(workdir, "sft.py", XTUNER)
    result = run("--fix", "sft.py")
    assert "fixed sft.py (BL201)" in result.stderr, "BL101's fix is unsafe: not made without --unsafe-fixes"
    assert "accumulative_counts *= sequence_parallel_size" not in read("sft.py")
    assert result.exit_code == 1 and result.stdout.splitlines()[-2:] == [
        "Found 2 problems (1 fixed, 1 remaining) in 1 training config in 1 file.",
        "1 unsafe fix available with `--fix --unsafe-fixes`."]
    result = run("--fix", "--unsafe-fixes", "sft.py")
    assert read("sft.py") == XTUNER_FIXED
    assert "fixed sft.py (BL101)" in result.stderr
    assert result.exit_code == 0 and result.stdout == "Found 1 problem (1 fixed, 0 remaining) in 1 training config in 1 file.\n"


def test_a_literal_without_a_comment_is_not_fixed_blindly(workdir):
    # It may already include sp (BL105, info, offers no edit), multiple of sp or not.
    for literal in ("8", "6"):
        text = XTUNER.replace("accumulative_counts = 6  # tuned at sp=1", f"accumulative_counts = {literal}")
        write(workdir, "sft.py", text)
        result = run("--fix", "--select", "BL101,BL105", "sft.py")
        assert read("sft.py") == text
        assert "BL105 [info]" in result.stdout


def test_a_derivation_that_shrinks_the_batch_is_not_rewritten(workdir):
    text = XTUNER.replace("accumulative_counts = 6  # tuned at sp=1", "accumulative_counts = 64 // sequence_parallel_size")
    write(workdir, "sft.py", text)
    result = run("--fix", "--select", "BL101", "sft.py")
    assert read("sft.py") == text and "BL101 [warning]" in result.stdout


def test_length_grouping_turned_off_where_packing_is_on(workdir):
    write(workdir, "sft.yaml", TRL)
    write(workdir, "lf.yaml", "stage: sft\nneat_packing: true\ntrain_sampling_strategy: group_by_length\n")
    assert run("--fix", ".").exit_code == 0
    assert read("sft.yaml") == TRL_FIXED
    assert read("lf.yaml") == 'stage: sft\nneat_packing: true\ntrain_sampling_strategy: "random"\n'


def test_deepspeed_batch_keys_become_auto_in_the_linked_json(workdir):
    write(workdir, "sft.yaml", HF)
    write(workdir, "ds.json", DS)
    assert run("sft.yaml").exit_code == 1  # BL120: 4 in the JSON, 2 in TrainingArguments
    result = run("--fix", "sft.yaml")
    assert read("ds.json") == DS_FIXED
    assert read("sft.yaml") == HF
    assert result.exit_code == 0


def test_diff_prints_and_writes_nothing(workdir):
    write(workdir, "sft.yaml", TRL)
    result = run("--diff", "sft.yaml")
    assert result.exit_code == 1
    assert "-group_by_length: true\n+group_by_length: false\n" in result.stdout
    assert read("sft.yaml") == TRL
    write(workdir, "clean.yaml", TRL_FIXED)
    assert run("--diff", "clean.yaml").exit_code == 0


def test_line_endings_and_permissions_survive(workdir):
    write(workdir, "sft.yaml", TRL.replace("\n", "\r\n").encode())
    os.chmod("sft.yaml", 0o640)
    run("--fix", "sft.yaml")
    assert read("sft.yaml") == TRL_FIXED.replace("\n", "\r\n")
    assert os.stat("sft.yaml").st_mode & 0o777 == 0o640


def test_overlapping_edits_apply_once():
    text = "a: 1\nb: 2\n"
    edits = [Edit(Span(1, 4, 1, 5), "9"), Edit(Span(1, 1, 1, 6), "x: 0"), Edit(Span(2, 4, 2, 5), "3")]
    # From the end: "3", then "9"; the whole-line edit overlaps "9" and is dropped.
    assert apply(text, edits) == "a: 9\nb: 3\n"


def test_a_fix_that_would_not_parse_is_refused(workdir):
    assert parse_problem("sft.yaml", "a: [1\n", "yaml").startswith("the fixed file would not parse")
    assert parse_problem("sft.json", '{"a": }', "json").startswith("the fixed file would not parse")
    assert parse_problem("sft.py", "a = (1\n", "python").startswith("the fixed file would not parse")
    assert parse_problem("sft.yaml", "a: 2\n", "yaml") == ""
    assert FileFix("x.yaml", "a\n", "b\n").diff() == "--- a/x.yaml\n+++ b/x.yaml\n@@ -1 +1 @@\n-a\n+b\n"
