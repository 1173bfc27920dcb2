"""A training script of a project's own, run by deepspeed/torchrun/accelerate/python with the
Hugging Face Trainer's flags (HfArgumentParser): the flags are its config, `--deepspeed ds.json`
is linked and linted under the launch, and no flag is ever written into the JSON.
The scripts below have the shape of LLaVA's and similar vision-language repos' scripts."""

import json

import pytest

from conftest import run, write
from test_launch import found, lint_script

AUTO = ('{\n  "train_micro_batch_size_per_gpu": "auto",\n  "train_batch_size": "auto",\n'
        '  "gradient_accumulation_steps": "auto",\n  "zero_optimization": {"stage": 3}\n}\n')
# A DeepSpeed JSON with numbers of its own: 4 x 2 x W.
FIXED = ('{\n  "train_micro_batch_size_per_gpu": 4,\n  "train_batch_size": 64,\n'
         '  "gradient_accumulation_steps": 2\n}\n')

FINETUNE = """\
#!/bin/bash

deepspeed {launcher}llava/train/train_mem.py \\
    --deepspeed ./scripts/zero3.json \\
    --model_name_or_path lmsys/vicuna-13b-v1.5 \\
    --version v1 \\
    --bf16 True \\
    --output_dir ./checkpoints/llava-v1.5-13b \\
    --num_train_epochs 1 \\
    --per_device_train_batch_size {micro} \\
    --per_device_eval_batch_size 4 \\
    --gradient_accumulation_steps {ga} \\
    --model_max_length 2048{extra}
"""


def _script(launcher="--num_gpus 8 ", micro=16, ga=1, extra=""):
    return FINETUNE.format(launcher=launcher, micro=micro, ga=ga, extra=extra)


def test_the_flags_are_the_config_and_the_launcher_gives_w(repo):
    (repo / ".git").mkdir()  # the project: `./scripts/zero3.json` is relative to its root
    write(repo, "scripts/zero3.json", AUTO)
    write(repo, "scripts/v1_5/finetune.sh", _script())
    result = run("explain", "--format", "json", "scripts/v1_5/finetune.sh")
    assert result.exit_code == 0, result.output
    assert '"framework": "transformers"' in result.stdout
    text = run("explain", "scripts/v1_5/finetune.sh").stdout
    assert "micro batch (per GPU)              16  per_device_train_batch_size, line 10" in text
    assert "global batch (sequences/step)     128" in text  # 16 x 1 x W 8
    assert "zero3.json, as launched by deepspeed with W=8" in text


def test_a_flag_of_the_script_is_never_written_into_the_json(repo):
    """`--train_batch_size` is the script's own flag (not TrainingArguments'): it used to be written into
    the JSON's train_batch_size, and a false BL102 followed."""
    write(repo, "scripts/zero3.json", AUTO)
    text = _script(extra=" \\\n    --train_batch_size 256")
    assert found(lint_script(repo, text, name="finetune.sh")) == []


def test_a_json_with_numbers_of_its_own_is_checked_with_the_launch_w(repo):
    write(repo, "scripts/zero3.json", FIXED)
    # 4 x 2 x 8 = 64: consistent at W 8, but the flags say 16 and 1 (BL120: the Trainer refuses).
    result = lint_script(repo, _script(), name="finetune.sh")
    assert ("finetune.sh", "BL120", 10) in found(result) and ("finetune.sh", "BL120", 12) in found(result)
    assert not [d for d in result.diagnostics if d.code == "BL102"]
    # On 4 GPUs the JSON's own arithmetic fails too (4 x 2 x 4 = 32, not 64), reported in the JSON.
    result = lint_script(repo, _script(launcher="--num_gpus 4 "), name="finetune.sh")
    assert ("scripts/zero3.json", "BL102", 3) in found(result)


def test_the_trainer_flags_are_checked_like_a_config(repo):
    write(repo, "scripts/zero3.json", AUTO)
    result = lint_script(repo, _script(extra=" \\\n    --fp16 True"), name="finetune.sh")
    assert found(result) == [("finetune.sh", "BL501", 7)]  # at bf16, with fp16 (line 14) related


@pytest.mark.parametrize("line", [
    "torchrun --nproc_per_node 8 train.py --per_device_train_batch_size 4 --gradient_accumulation_steps 2 --fp16 --bf16\n",
    "accelerate launch --num_processes 8 train.py --per_device_train_batch_size 4 --fp16 True --bf16 True\n",
    "python -m my_project.train --per_device_train_batch_size 4 --fp16 True --bf16 True\n",
    "python train.py --per_device_train_batch_size 4 --fp16 True --bf16 True\n",
])
def test_every_launcher_and_python_itself(repo, line):
    assert [code for _, code, _ in found(lint_script(repo, line))] == ["BL501"]


def test_a_script_without_trainer_flags_is_no_config(repo):
    result = lint_script(repo, "python prepare_data.py --input raw.jsonl --num_workers 8 --fp16 --bf16\n")
    assert found(result) == [] and result.framework == "launch"


def test_a_framework_s_own_script_entry_point_wins(repo):
    """ms-swift's per-process entry (`swift/cli/rlhf.py`) is ms-swift's, not a generic Trainer script:
    its flags are read by the ms-swift adapter."""
    text = ("NPROC_PER_NODE=8 \\\naccelerate launch --config_file fsdp2.json \\\n    swift/cli/rlhf.py \\\n"
            "        --rlhf_type grpo \\\n        --per_device_train_batch_size 1 \\\n        --num_generations 4\n")
    write(repo, "swift_grpo.sh", text)
    assert '"framework": "swift"' in run("explain", "--format", "json", "swift_grpo.sh").stdout
    write(repo, "swift_sft.sh", "python -m swift.cli.sft --model Qwen/Qwen2.5-7B --per_device_train_batch_size 2\n")
    assert '"framework": "swift"' in run("explain", "--format", "json", "swift_sft.sh").stdout


# Eagle's Eagle2_5/shell/prepare.sh: the data-preparation entry parses the Trainer's flags (the shell
# divided the accumulation down to 0) and only builds datasets; the package's fine-tuning entry, which
# it does not import, is the one that trains.
PREPARE = ("#!/bin/bash\nGPUS=${GPUS:-8}\nBATCH_SIZE=${BATCH_SIZE:-1}\nGRADIENT_ACC=$((BATCH_SIZE / 1 / GPUS))\n"
           "torchrun --nproc_per_node=$GPUS eaglevl/train/data_prepare.py --per_device_train_batch_size 1 "
           "--gradient_accumulation_steps ${GRADIENT_ACC} --output_dir out\n")
PARSES = ("from transformers import HfArgumentParser, Trainer, TrainingArguments\n"
          "from eaglevl.train.dataset import build_datasets\n\n"
          "(args,) = HfArgumentParser((TrainingArguments,)).parse_args_into_dataclasses()\nbuild_datasets(args)\n")
FINETUNE_ENTRY = "from transformers import Trainer\n\nclass CustomTrainer(Trainer):\n    pass\n\n" \
                 "def main(args):\n    CustomTrainer(args=args).train()\n"


@pytest.mark.parametrize("program, flagged", [
    (PARSES, False),  # imports Trainer, builds none; the package's finetune.py trains but is not imported
    (PARSES + "Trainer(model=model, args=args).train()\n", True),
    (PARSES + "from eaglevl.train.finetune import main\nmain(args)\n", True),  # through a module it imports
    (PARSES + "from .finetune import main\nmain(args)\n", True),  # a relative import
    (PARSES + "from eaglevl.train import finetune\n", True),  # a submodule imported by name
    (PARSES + "import eaglevl.train.finetune as ft\n", True),
    (PARSES + "from eaglevl.train import dataset\n", False),
])
def test_flags_a_program_of_the_project_parses_without_training_configure_no_run(repo, program, flagged):
    assert _prepare_codes(repo, program) == (["BL104"] if flagged else [])


def test_a_package_init_that_trains_counts(repo):
    """Importing eaglevl.train.dataset runs eaglevl/train/__init__.py first."""
    assert _prepare_codes(repo, PARSES, package_init="from .finetune import main\n") == ["BL104"]


def _prepare_codes(repo, program: str, package_init: str = "") -> list:
    """The codes prepare.sh gets when eaglevl/train/data_prepare.py is `program` (finetune.py trains)."""
    (repo / ".git").mkdir()
    write(repo, "eaglevl/__init__.py", "")
    write(repo, "eaglevl/train/__init__.py", package_init)
    write(repo, "eaglevl/train/dataset.py", "class LazyDataset:\n    pass\n\ndef build_datasets(args):\n    return []\n")
    write(repo, "eaglevl/train/finetune.py", FINETUNE_ENTRY)
    write(repo, "eaglevl/train/data_prepare.py", program)
    return [c for _, c, _ in found(lint_script(repo, PREPARE, "shell/prepare.sh"))]


# -- a program out of view: its framework is not guessed from one flag ----------------------------

UNSEEN = """\
#!/bin/bash
accelerate launch --num_processes 8 {program} \\
    --model_name_or_path Qwen/Qwen2.5-7B \\
    --per_device_train_batch_size 4 \\
    {flags}
"""


@pytest.mark.parametrize("program, flags, framework", [
    # `--packing` and `--max_seq_length` are any program's flags: a project's sft.py not checked out
    ("train_sft.py", "--packing True --max_seq_length 2048", "transformers"),
    # two keys only TRL's configs have
    ("train_sft.py", "--dataset_text_field text --completion_only_loss True --max_seq_length 2048", "trl"),
    # the program's identity: TRL's own script, or its module
    ("trl/scripts/sft.py", "--packing True --max_seq_length 2048", "trl"),
    ("-m trl.scripts.sft", "--packing True --max_seq_length 2048", "trl"),
])
def test_a_program_out_of_view_is_trl_only_by_its_identity_or_several_keys(repo, program, flags, framework):
    (repo / ".git").mkdir()
    result = lint_script(repo, UNSEEN.format(program=program, flags=flags))
    assert [d.code for d in result.diagnostics] == (["BL420"] if framework == "trl" else [])


def test_the_same_flags_of_a_program_in_view_that_imports_trl_are_trl(repo):
    (repo / ".git").mkdir()
    write(repo, "train_sft.py", "from trl import SFTTrainer\nSFTTrainer(model=None).train()\n")
    result = lint_script(repo, UNSEEN.format(program="train_sft.py", flags="--packing True --max_seq_length 2048"))
    assert [d.code for d in result.diagnostics] == ["BL420"]


def test_show_files_says_what_a_guess_of_trl_rests_on(repo, monkeypatch):
    (repo / ".git").mkdir()
    flags = "--dataset_text_field text --completion_only_loss True --max_seq_length 2048"
    write(repo, "run.sh", UNSEEN.format(program="train_sft.py", flags=flags))
    write(repo, "plain.sh", UNSEEN.format(program="train_other.py", flags="--packing True --max_seq_length 2048"))
    monkeypatch.chdir(repo)
    rows = {row["path"]: row for row in json.loads(run("--show-files", "--output-format", "json", ".").stdout)}
    assert rows["run.sh"]["read_as"] == [
        "trl: train_sft.py is not in the project; keys only TRL has: completion_only_loss, dataset_text_field"]
    assert "read_as" not in rows["plain.sh"]  # transformers' own flags: nothing guessed
    assert "(trl: train_sft.py is not in the project" in run("--show-files", ".").stdout
