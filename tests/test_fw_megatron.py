"""Megatron-LM: the arguments of a launch line that runs pretrain_*.py are the whole config. The program is
known by its name even when its file is not in view (a Slurm script that `cd`s into a Megatron checkout and
runs `` `pwd`/pretrain_gpt.py ``, or `${MEGATRON}/pretrain_gpt.py` outside the repository), and the line is
judged once. `--rampup-batch-size START INCREMENT SAMPLES` (BL190) is read from the text of the line.
Checked against NVIDIA/Megatron-LM at tags 23.04 (megatron-core 0.1.0) and core_v0.16.1."""

import pytest

from batchlint.frameworks.megatron import MegatronSettings

from conftest import lint_text


def _codes(result) -> list:
    return sorted((d.code, d.span.line) for d in result.diagnostics)


# W = 8 GPUs on one node; tp 3 does not divide it (BL202, at the tp value on line 7 of the variable).
CD_PWD = """\
#!/bin/bash
#SBATCH --nodes=1
#SBATCH --gpus-per-node=8
cd $MEGATRON_HOME
PROGRAM=`pwd`/pretrain_gpt.py
DISTRIBUTED_ARGS="--nproc_per_node 8 --nnodes 1"
GPT_ARGS="--tensor-model-parallel-size {tp} --micro-batch-size 2 --global-batch-size 96"
torchrun $DISTRIBUTED_ARGS $PROGRAM $GPT_ARGS
"""

OUTSIDE_REPO = """\
#!/bin/bash
export MEGATRON=/lustre/fsw/Megatron-LM
python -m torch.distributed.launch --nproc_per_node 8 ${{MEGATRON}}/{program} \\
    --tensor-model-parallel-size {tp} --micro-batch-size 2 --global-batch-size 96
"""

DOLLAR_PWD = """\
#!/bin/bash
cd /opt/Megatron-LM
srun torchrun --nproc_per_node 8 --nnodes 1 $(pwd)/pretrain_bert.py \\
    --tensor-model-parallel-size {tp} \\
    --micro-batch-size 2 \\
    --global-batch-size 96
"""


@pytest.mark.parametrize("tp, expected", [(3, [("BL202", 7)]), (2, [])])
def test_a_program_named_through_pwd_after_cd_is_judged(tmp_path, tp, expected):
    result = lint_text(tmp_path, "train.sh", CD_PWD.format(tp=tp))
    assert _codes(result) == expected


@pytest.mark.parametrize("program", ["pretrain_gpt.py", "pretrain_bert.py", "pretrain_t5.py"])
@pytest.mark.parametrize("tp, expected", [(3, [("BL202", 4)]), (4, [])])
def test_a_program_outside_the_repository_through_a_variable_is_judged(tmp_path, program, tp, expected):
    result = lint_text(tmp_path, "train.sh", OUTSIDE_REPO.format(program=program, tp=tp))
    assert _codes(result) == expected


@pytest.mark.parametrize("tp, expected", [(3, [("BL202", 4)]), (1, [])])
def test_a_program_named_through_dollar_pwd_is_judged_once(tmp_path, tp, expected):
    result = lint_text(tmp_path, "train.sh", DOLLAR_PWD.format(tp=tp))
    assert _codes(result) == expected
    assert len([d for d in result.diagnostics if d.code == "BL202"]) == len(expected)


RAMPUP = """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 2 --micro-batch-size 4 \\
    --global-batch-size {global_} --rampup-batch-size {rampup} --train-samples 5000000
"""


def test_the_three_rampup_values_are_read_with_their_columns(tmp_path):
    result = lint_text(tmp_path, "train.sh", RAMPUP.format(global_=512, rampup="24 8 300000"))
    (finding,) = [d for d in result.diagnostics if d.code == "BL190"]
    # `    --global-batch-size 512 --rampup-batch-size 24 8 300000`: the start, 24, at column 49.
    assert (finding.span.line, finding.span.column, finding.span.end_column) == (3, 49, 51)
    said = " ".join((finding.message,) + finding.notes)
    assert "micro-batch-size (4) x dp (4) = 16" in said and "first iteration" in said
    assert "16 or 32" in finding.fix


def test_an_increment_that_does_not_split_fails_when_the_batch_first_ramps(tmp_path):
    result = lint_text(tmp_path, "train.sh", RAMPUP.format(global_=256, rampup="16 8 300000"))
    (finding,) = [d for d in result.diagnostics if d.code == "BL190"]
    assert (finding.span.line, finding.span.column) == (3, 52)
    said = " ".join((finding.message,) + finding.notes)
    assert "16 + 8 = 24" in said and "after about 10000 samples" in said


def test_an_increment_whose_ramp_may_skip_steps_is_not_judged(tmp_path):
    # 30 steps x 256 = 7680 > 3000 samples: an iteration may jump past 16 + 8.
    result = lint_text(tmp_path, "train.sh", RAMPUP.format(global_=256, rampup="16 8 3000"))
    assert [d for d in result.diagnostics if d.code == "BL190"] == []


def test_without_a_world_size_only_what_fails_for_every_w_is_said(tmp_path):
    line = "#!/bin/bash\npython pretrain_gpt.py --micro-batch-size 4 --global-batch-size 512 --rampup-batch-size {}\n"
    flagged = lint_text(tmp_path, "a.sh", line.format("6 2 300000"))  # 6 is no multiple of micro 4
    assert [(d.code, "for any world size" in d.message) for d in flagged.diagnostics if d.code == "BL190"] \
        == [("BL190", True)]
    # 24 is a multiple of 4 at W = 1 (plain python: one process), and of 4 x dp for no dp the line sets.
    clean = lint_text(tmp_path, "b.sh", line.format("24 8 300000").replace("python", "torchrun"))
    assert [d for d in clean.diagnostics if d.code == "BL190"] == []


@pytest.mark.parametrize("rampup", ["$RAMPUP", "24 8 \\\n    300000", "24 $INC 300000"])
def test_rampup_values_not_written_on_the_line_are_not_judged(tmp_path, rampup):
    result = lint_text(tmp_path, "train.sh", RAMPUP.format(global_=512, rampup=rampup))
    assert [d for d in result.diagnostics if d.code == "BL190"] == []


def test_a_rampup_in_one_variable_is_split(tmp_path):
    text = '#!/bin/bash\nRAMPUP="24 8 300000"\n' + RAMPUP.format(global_=512, rampup='"$RAMPUP"').split("\n", 1)[1]
    result = lint_text(tmp_path, "train.sh", text)
    assert [d.code for d in result.diagnostics if d.code == "BL190"] == ["BL190"]


def test_no_rampup_leaves_the_setting_empty(tmp_path):
    result = lint_text(tmp_path, "train.sh", RAMPUP.format(global_=512, rampup="32 32 300000")
                       .replace(" --rampup-batch-size 32 32 300000", ""))
    assert result.diagnostics == [] and MegatronSettings().rampup is None


LAYERS = """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --pipeline-model-parallel-size {pp} --micro-batch-size 1 \\
    --global-batch-size 64 --num-layers {layers}{extra}
"""


def _pinned(tmp_path, release: str) -> None:
    from batchlint import per_run, versions

    (tmp_path / "requirements.txt").write_text(f"megatron-core=={release}\n")
    versions._cache.clear()
    per_run.forget()


@pytest.mark.parametrize("release, severity", [("0.10.0", "error"), ("0.16.1", "error"), (None, "info")])
def test_layers_that_pipeline_stages_cannot_share_are_an_error_from_0_10_0(tmp_path, release, severity):
    if release:
        _pinned(tmp_path, release)
    result = lint_text(tmp_path, "train.sh", LAYERS.format(pp=4, layers=30, extra=""))
    assert [(d.code, d.span.line, d.severity) for d in result.diagnostics] == [("BL191", 3, severity)]
    assert "28 or 32" in result.diagnostics[0].fix


def test_layers_before_0_10_0_are_not_judged_without_interleaving(tmp_path):
    _pinned(tmp_path, "0.9.0")
    assert lint_text(tmp_path, "train.sh", LAYERS.format(pp=4, layers=30, extra="")).diagnostics == []


@pytest.mark.parametrize("extra, expected", [
    ("", []),  # 32 layers over 4 stages
    (" --account-for-embedding-in-pipeline-split", [("BL191", 3)]),  # 33 counted
    (" --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split --decoder-first-pipeline-num-layers 6",
     []),  # an uneven first stage: not divided
])
def test_the_split_counts_what_validate_args_counts(tmp_path, extra, expected):
    _pinned(tmp_path, "0.12.0")
    result = lint_text(tmp_path, "train.sh", LAYERS.format(pp=4, layers=32, extra=extra))
    assert [(d.code, d.span.line) for d in result.diagnostics] == expected


def test_virtual_stages_are_judged_from_0_4_0(tmp_path):
    text = LAYERS.format(pp=16, layers=80, extra=" --num-layers-per-virtual-pipeline-stage 2").replace("8 ", "16 ", 1)
    _pinned(tmp_path, "0.4.0")
    (finding,) = lint_text(tmp_path, "train.sh", text).diagnostics
    assert (finding.code, finding.severity) == ("BL191", "error")
    assert "64 layers in all" in " ".join((finding.message,) + finding.notes)
    _pinned(tmp_path, "0.3.0")
    assert lint_text(tmp_path, "train.sh", text).diagnostics == []


def test_a_pipeline_of_one_stage_is_not_judged(tmp_path):
    assert lint_text(tmp_path, "train.sh", LAYERS.format(pp=1, layers=30, extra="")).diagnostics == []


def test_an_unwritten_micro_batch_is_unknown_not_one(tmp_path):
    """--micro-batch-size has no default: validate_args asserts it is given (arguments.py:495 @ core_v0.16.1)."""
    text = "#!/bin/bash\ntorchrun --nproc_per_node 8 pretrain_gpt.py --global-batch-size 100\n"
    assert lint_text(tmp_path, "train.sh", text).diagnostics == []
    flagged = lint_text(tmp_path, "b.sh", text.replace("100", "100 --micro-batch-size 1"))
    assert [d.code for d in flagged.diagnostics] == ["BL103"]
