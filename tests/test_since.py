"""`check --since REV`: the change as evidence (lint/change.py, BL106), in temporary git repositories
shaped as training repositories are (a config, a launch script that runs it)."""

import json
import shutil

import pytest
from click.testing import CliRunner

from batchlint.cli import main

from conftest import committed, git, write, xtuner_sp

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

LAUNCH = "#!/bin/bash\nNPROC_PER_NODE={n} xtuner train configs/sft.py\n"
DS = '{{\n  "train_micro_batch_size_per_gpu": 4,\n  "gradient_accumulation_steps": {gas}{more}\n}}\n'
HF_LAUNCH = "#!/bin/bash\ntorchrun --nnodes {nodes} --nproc_per_node 8 train.py --deepspeed ds.json\n"


config = xtuner_sp


def check(folder, monkeypatch, *args):
    monkeypatch.chdir(folder)
    result = CliRunner().invoke(main, ["check", "--output-format", "json", *args], catch_exceptions=False)
    found = json.loads(result.stdout) if result.exit_code in (0, 1) else None
    return result.exit_code, found, result.output


def bl106(found):
    return [(d["path"], d["line"], " ".join([d["message"]] + d["notes"])) for d in found if d["code"] == "BL106"]


@pytest.fixture
def repo(tmp_path):
    """sp 1 on 8 GPUs, committed: the global batch is 1 x 16 x 8 = 128."""
    committed(tmp_path, [("configs/sft.py", config()), ("scripts/train.sh", LAUNCH.format(n=8))])
    return tmp_path


def test_sp_raised_alone_is_reported_at_its_line_with_the_batch_before_and_after(repo, monkeypatch):
    write(repo, "configs/sft.py", config(sp=4))
    code, found, _ = check(repo, monkeypatch, "--since", "HEAD", "configs/sft.py")
    assert code == 1
    [(path, row, message)] = bl106(found)
    assert (path, row) == ("configs/sft.py", 4)
    assert "sequence_parallel_size 1 -> 4 moves the global batch from 128 to 32 sequences" in message
    [finding] = [d for d in found if d["code"] == "BL106"]
    assert "accumulative_counts to 64" in finding["fix"]["message"]


def test_sp_raised_with_the_accumulation_scaled_is_not(repo, monkeypatch):
    write(repo, "configs/sft.py", config(sp=4, acc="16 * sequence_parallel_size"))
    code, found, _ = check(repo, monkeypatch, "--since", "HEAD", "configs/sft.py")
    assert bl106(found) == [] and code == 0


@pytest.mark.parametrize("edit", [dict(acc=64), dict(micro=4)], ids=["accumulation", "micro batch"])
def test_a_change_that_also_sets_the_batch_is_on_purpose(repo, monkeypatch, edit):
    write(repo, "configs/sft.py", config(sp=4, **edit))
    _, found, _ = check(repo, monkeypatch, "--since", "HEAD", "configs/sft.py")
    assert bl106(found) == []


def test_a_stated_target_leaves_the_verdict_to_the_target(repo, monkeypatch):
    write(repo, "configs/sft.py", config(sp=4) + "# batchlint: global-batch=32\n")
    _, found, _ = check(repo, monkeypatch, "--since", "HEAD", "configs/sft.py")
    assert bl106(found) == []


def test_the_gpus_changed_alone_are_reported_in_the_launch_script(repo, monkeypatch):
    write(repo, "scripts/train.sh", LAUNCH.format(n=4))
    code, found, _ = check(repo, monkeypatch, "--since", "HEAD", "scripts/train.sh")
    [(path, row, message)] = bl106(found)
    assert (path, row) == ("scripts/train.sh", 2) and "8 -> 4" in message and "from 128 to 64" in message
    assert code == 1


def test_without_w_on_either_side_the_factor_holds_at_every_w(tmp_path, monkeypatch):
    committed(tmp_path, [("sft.py", config())])
    write(tmp_path, "sft.py", config(sp=8))
    _, found, _ = check(tmp_path, monkeypatch, "--since", "HEAD", "sft.py")
    [(_, row, message)] = bl106(found)
    assert row == 4 and "at W = 8 (8x fewer at every W)" in message


def test_a_file_alone_gets_what_the_whole_repository_run_gives_it(repo, monkeypatch):
    write(repo, "configs/sft.py", config(sp=4))
    _, alone, _ = check(repo, monkeypatch, "--since", "HEAD", "configs/sft.py")
    _, whole, _ = check(repo, monkeypatch, "--since", "HEAD", ".")
    assert [d for d in whole if d["path"] == "configs/sft.py"] == alone
    assert len(bl106(alone)) == 1, "one finding per problem: the job's, not again without W"


def test_a_declared_global_batch_absorbs_the_layout(tmp_path, monkeypatch):
    """DeepSpeed derives the accumulation from train_batch_size: fewer GPUs do not move the batch."""
    committed(tmp_path, [("ds.json", '{\n  "train_batch_size": 256,\n  "train_micro_batch_size_per_gpu": 4\n}\n'),
                         ("train.py", "import transformers\n"), ("run.sh", HF_LAUNCH.format(nodes=2))])
    write(tmp_path, "run.sh", HF_LAUNCH.format(nodes=1))
    _, found, _ = check(tmp_path, monkeypatch, "--since", "HEAD", "run.sh")
    assert bl106(found) == []


def test_the_nodes_changed_alone_move_a_deepspeed_batch(tmp_path, monkeypatch):
    committed(tmp_path, [("ds.json", DS.format(gas=8, more="")), ("train.py", "import transformers\n"),
                         ("run.sh", HF_LAUNCH.format(nodes=2))])
    write(tmp_path, "run.sh", HF_LAUNCH.format(nodes=1))
    _, found, _ = check(tmp_path, monkeypatch, "--since", "HEAD", "run.sh")
    [(path, row, message)] = bl106(found)
    assert (path, row) == ("run.sh", 2) and "from 512 to 256" in message


def test_a_new_config_or_an_unchanged_one_has_no_change(repo, monkeypatch):
    write(repo, "configs/new.py", config(sp=4))
    _, found, _ = check(repo, monkeypatch, "--since", "HEAD", ".")
    assert bl106(found) == []


def test_an_unknown_revision_or_no_repository_exits_2(repo, tmp_path_factory, monkeypatch):
    code, _, output = check(repo, monkeypatch, "--since", "no-such-rev", ".")
    assert code == 2 and "unknown revision 'no-such-rev'" in output
    code, _, output = check(repo, monkeypatch, "--since", "--all", ".")
    assert code == 2 and "not a revision" in output
    elsewhere = tmp_path_factory.mktemp("not-a-repo")
    write(elsewhere, "sft.py", config(sp=4))
    code, _, output = check(elsewhere, monkeypatch, "--since", "HEAD", "sft.py")
    assert code == 2 and "not a git repository" in output


def test_a_first_commit_has_nothing_to_compare_with(tmp_path, monkeypatch):
    """pre-commit's first commit: HEAD does not exist yet, and every file is new."""
    git(tmp_path, "init", "-q", "-b", "main")
    write(tmp_path, "sft.py", config(sp=4))
    git(tmp_path, "add", "-A")
    code, found, _ = check(tmp_path, monkeypatch, "--since", "HEAD", "sft.py")
    assert code == 0 and bl106(found) == []


def test_the_revision_side_does_not_leak_into_the_run(repo, monkeypatch):
    """What the lint at REV read (its caches, its files) is not today's: the same run without --since
    gives the same findings but BL106."""
    write(repo, "configs/sft.py", config(sp=4))
    write(repo, "scripts/train.sh", LAUNCH.format(n=16))
    _, since, _ = check(repo, monkeypatch, "--since", "HEAD", ".")
    _, plain, _ = check(repo, monkeypatch, ".")
    assert [d for d in since if d["code"] != "BL106"] == plain
    assert len(bl106(since)) == 2  # sp 1 -> 4 in the config, W 8 -> 16 in the script: two changes, two lines
