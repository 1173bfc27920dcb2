"""TRL's defaults and releases as they reach the checks: num_generations unwritten where the program
certainly reads GRPOConfig (BL170), the per-device batch TRL 0.15-0.16 checked without the accumulation,
a Trainer program's flags without a batch key beside `--deepspeed` (BL120), flags read as argparse reads
them (BL522), and packing with skip_prepare_dataset (BL561)."""

import itertools
import json

import pytest

from batchlint.cli import main

from conftest import cli_runner, releases_asked, write

GRPO_PROGRAM = """\
from trl import GRPOConfig, GRPOTrainer, ModelConfig, TrlParser

if __name__ == "__main__":
    script_args, training_args, model_args = TrlParser((GRPOConfig, ModelConfig)).parse_args_and_config()
    GRPOTrainer(model=model_args.model_name_or_path, args=training_args).train()
"""
SFT_AND_GRPO_PROGRAM = GRPO_PROGRAM.replace("GRPOConfig, GRPOTrainer,", "GRPOConfig, GRPOTrainer, SFTTrainer,")
GRPO_RECIPE = """\
model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct
dataset_name: AI-MO/NuminaMath-TIR
max_prompt_length: 512
per_device_train_batch_size: {micro}
gradient_accumulation_steps: 16
eval_strategy: "no"
"""
LAUNCH = ("accelerate launch --num_processes={w} src/grpo.py --config recipes/grpo.yaml\n")
TRAINER_PROGRAM = """\
from transformers import HfArgumentParser, Trainer, TrainingArguments

args, = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()
Trainer(model=None, args=args).train()
"""


def check(folder, monkeypatch):
    monkeypatch.chdir(folder)
    (folder / ".git").mkdir(exist_ok=True)
    result = cli_runner().invoke(main, ["check", "--output-format", "json", "--exit-zero", "."])
    assert result.exit_code == 0, result.output
    return [(f["path"], f["line"], f["code"], f["severity"], " ".join([f["message"], *f["notes"]]))
            for f in json.loads(result.stdout or "[]")]  # the message and its notes


def grpo_project(folder, micro=2, w=7, program=GRPO_PROGRAM, pin=None):
    write(folder, "src/grpo.py", program)
    write(folder, "recipes/grpo.yaml", GRPO_RECIPE.format(micro=micro))
    write(folder, "train.sh", LAUNCH.format(w=w))
    if pin:
        write(folder, "requirements.txt", f"trl=={pin}\n")


# -- num_generations unwritten: GRPOConfig's default 8, where the program is GRPO's ----------------------------

def test_the_default_group_of_8_splits_under_an_older_release(tmp_path, monkeypatch):
    grpo_project(tmp_path, micro=2, w=7, pin="0.16.1")
    [(path, line, code, severity, message)] = check(tmp_path, monkeypatch)
    assert (path, line, code, severity) == ("recipes/grpo.yaml", 4, "BL170", "error")
    assert "per_device_train_batch_size (2) x W (7) x accumulation (1, not counted before TRL 0.17.0) = 14" in message
    assert "num_generations (default 8)" in message
    assert "TRL 0.16.1, pinned in requirements.txt:1" in message


def test_the_accumulation_counts_from_0_17(tmp_path, monkeypatch):
    grpo_project(tmp_path, micro=2, w=7, pin="0.17.0")  # 2 x 7 x 16 = 224: whole groups of 8
    assert check(tmp_path, monkeypatch) == []


def test_no_pin_judges_by_the_releases_that_count_the_accumulation(tmp_path, monkeypatch):
    grpo_project(tmp_path, micro=2, w=7)
    assert check(tmp_path, monkeypatch) == []


def test_the_default_fails_in_every_release_when_the_accumulation_does_not_help(tmp_path, monkeypatch):
    grpo_project(tmp_path, micro=1, w=7, pin="1.16.0")
    write(tmp_path, "recipes/grpo.yaml", GRPO_RECIPE.format(micro=1).replace("16", "1"))
    [(path, line, code, severity, message)] = check(tmp_path, monkeypatch)
    assert (path, line, code, severity) == ("recipes/grpo.yaml", 4, "BL170", "error")
    assert "x W (7) x gradient_accumulation_steps (1) = 7" in message


def test_no_default_where_the_program_may_read_another_config(tmp_path, monkeypatch):
    grpo_project(tmp_path, micro=2, w=7, pin="0.16.1", program=SFT_AND_GRPO_PROGRAM)
    assert check(tmp_path, monkeypatch) == []


def test_no_default_for_a_config_linted_alone(tmp_path, monkeypatch):
    write(tmp_path, "recipes/grpo.yaml", GRPO_RECIPE.format(micro=2))
    write(tmp_path, "requirements.txt", "trl==0.16.1\n")
    assert check(tmp_path, monkeypatch) == []


def test_the_written_group_size_is_judged_as_before(tmp_path, monkeypatch):
    grpo_project(tmp_path, micro=2, w=7, pin="0.16.1")
    write(tmp_path, "recipes/grpo.yaml", GRPO_RECIPE.format(micro=2) + "num_generations: 7\n")
    assert check(tmp_path, monkeypatch) == []


# -- a Trainer program's flags beside --deepspeed, without a batch flag -----------------------------------------

DS = '{\n  "train_micro_batch_size_per_gpu": %s,\n  "gradient_accumulation_steps": "auto",\n  "bf16": {"enabled": %s}\n}\n'


def test_the_trainer_defaults_meet_the_deepspeed_config(tmp_path, monkeypatch):
    write(tmp_path, "train.py", TRAINER_PROGRAM)
    write(tmp_path, "ds.json", DS % (4, "true"))
    write(tmp_path, "train.sh", "deepspeed --num_gpus 8 train.py --deepspeed ds.json --output_dir out\n")
    found = check(tmp_path, monkeypatch)
    assert [(p, line, c) for p, line, c, _, _ in found] == [("train.sh", 1, "BL120"), ("train.sh", 1, "BL120")]
    messages = " ".join(m for *_, m in found)
    assert "per_device_train_batch_size 8 (default)" in messages and "bf16 false (default)" in messages


def test_the_same_config_filled_by_the_trainer_passes(tmp_path, monkeypatch):
    write(tmp_path, "train.py", TRAINER_PROGRAM)
    write(tmp_path, "ds.json", DS % ('"auto"', '"auto"'))
    write(tmp_path, "train.sh", "deepspeed --num_gpus 8 train.py --deepspeed ds.json --output_dir out\n")
    assert check(tmp_path, monkeypatch) == []


def test_a_program_of_its_own_defaults_is_not_assumed(tmp_path, monkeypatch):
    own = TRAINER_PROGRAM.replace("args, =", "class Args(TrainingArguments):\n    per_device_train_batch_size: int = 4\n\n\nargs, =")
    write(tmp_path, "train.py", own)
    write(tmp_path, "ds.json", DS % (4, "false"))
    write(tmp_path, "train.sh", "deepspeed --num_gpus 8 train.py --deepspeed ds.json --output_dir out\n")
    assert check(tmp_path, monkeypatch) == []


# -- flags and files alike --------------------------------------------------------------------------------------

def test_launch_line_flags_reach_the_checkpoint_check(tmp_path, monkeypatch):
    write(tmp_path, "train.py", TRAINER_PROGRAM)
    write(tmp_path, "train.sh", "torchrun --nproc_per_node 4 train.py --load_best_model_at_end True "
                                "--eval_strategy no --save_strategy epoch --per_device_train_batch_size 2\n")
    [(path, line, code, _, message)] = check(tmp_path, monkeypatch)
    assert (path, line, code) == ("train.sh", 1, "BL522") and 'eval_strategy "no"' in message


def test_matching_strategies_on_the_line_pass(tmp_path, monkeypatch):
    write(tmp_path, "train.py", TRAINER_PROGRAM)
    write(tmp_path, "train.sh", "torchrun --nproc_per_node 4 train.py --load_best_model_at_end True "
                                "--eval_strategy epoch --save_strategy epoch --per_device_train_batch_size 2\n")
    assert check(tmp_path, monkeypatch) == []


# -- the release in force, asked only where a verdict needs it ------------------------------------------------

SFT_PROGRAM = GRPO_PROGRAM.replace("GRPOConfig, GRPOTrainer", "SFTConfig, SFTTrainer").replace(
    "(GRPOConfig,", "(SFTConfig,").replace("GRPOTrainer(", "SFTTrainer(")


def test_the_release_is_asked_only_for_a_generation_batch(tmp_path, monkeypatch):
    # Finding TRL's release may read every script of the project for an install command: an SFT job, whose
    # verdicts are the same in every release, does not ask; a GRPO job, whose generation batch TRL 0.15-0.16
    # checked without the accumulation, does.
    from batchlint import versions

    asked = releases_asked(monkeypatch, versions)
    sft = tmp_path / "sft"
    write(sft, "src/sft.py", SFT_PROGRAM)
    write(sft, "recipes/sft.yaml", "model_name_or_path: Qwen/Qwen2.5-0.5B\nper_device_train_batch_size: 2\n"
                                   "gradient_accumulation_steps: 4\nbf16: true\n")
    write(sft, "train.sh", "accelerate launch --num_processes=4 src/sft.py --config recipes/sft.yaml\n")
    write(sft, "requirements.txt", "trl==0.16.1\n")
    assert check(sft, monkeypatch) == [] and "trl" not in asked
    grpo = tmp_path / "grpo"
    grpo_project(grpo, micro=2, w=7, pin="0.16.1")
    [(_, _, code, _, message)] = check(grpo, monkeypatch)
    assert code == "BL170" and "not counted before TRL 0.17.0" in message and "trl" in asked


# -- packing with skip_prepare_dataset ---------------------------------------------------------------------------

SFT = """\
model_name_or_path: Qwen/Qwen2.5-VL-3B-Instruct
per_device_train_batch_size: 2
packing: {packing}
dataset_kwargs:
  skip_prepare_dataset: {skip}
"""


def test_packing_with_the_preparation_skipped(tmp_path, monkeypatch):
    write(tmp_path, "sft.yaml", SFT.format(packing="true", skip="true"))
    write(tmp_path, "requirements.txt", "trl==1.16.0\n")
    [(path, line, code, severity, _)] = check(tmp_path, monkeypatch)
    assert (path, line, code, severity) == ("sft.yaml", 3, "BL561", "warning")


def test_packing_with_the_preparation_kept(tmp_path, monkeypatch):
    write(tmp_path, "sft.yaml", SFT.format(packing="true", skip="false"))
    write(tmp_path, "requirements.txt", "trl==1.16.0\n")
    assert check(tmp_path, monkeypatch) == []


# -- GRPOConfig's bf16 by release, against the DeepSpeed JSON -------------------------------------------------

def grpo_with_deepspeed(folder, ds_bf16, pin):
    write(folder, "src/grpo.py", GRPO_PROGRAM)
    write(folder, "grpo.yaml", "model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct\nnum_generations: 4\n"
                               "per_device_train_batch_size: 4\ndeepspeed: ds.json\n")
    write(folder, "ds.json", '{"bf16": {"enabled": %s}, "train_micro_batch_size_per_gpu": "auto"}\n' % ds_bf16)
    write(folder, "run.sh", "accelerate launch --num_processes 4 src/grpo.py --config grpo.yaml\n")
    if pin:
        write(folder, "requirements.txt", f"trl{pin}\n")


def test_grpo_turns_bf16_on_from_0_19(tmp_path, monkeypatch):
    grpo_with_deepspeed(tmp_path, "false", "==0.19.0")
    [(path, line, code, severity, message)] = check(tmp_path, monkeypatch)
    assert (path, line, code, severity) == ("grpo.yaml", 4, "BL120", "error")
    assert "differs from bf16 true (default)" in message


def test_grpo_leaves_bf16_off_before_0_19(tmp_path, monkeypatch):
    grpo_with_deepspeed(tmp_path, "true", ">=0.15,<0.19")
    [(_, _, code, _, message)] = check(tmp_path, monkeypatch)
    assert code == "BL120" and "differs from bf16 false (default)" in message
    grpo_with_deepspeed(tmp_path, "false", ">=0.15,<0.19")
    assert check(tmp_path, monkeypatch) == []


def test_grpo_bf16_is_not_assumed_across_the_boundary(tmp_path, monkeypatch):
    for ds_bf16 in ("true", "false"):
        grpo_with_deepspeed(tmp_path, ds_bf16, ">=0.18")
        assert check(tmp_path, monkeypatch) == []
        grpo_with_deepspeed(tmp_path, ds_bf16, None)
        (tmp_path / "requirements.txt").unlink(missing_ok=True)
        assert check(tmp_path, monkeypatch) == []


def test_a_range_of_older_releases_leaves_the_accumulation_out(tmp_path, monkeypatch):
    grpo_project(tmp_path, micro=2, w=7)
    write(tmp_path, "requirements.txt", "trl>=0.15,<0.17\n")
    [(_, line, code, severity, _)] = check(tmp_path, monkeypatch)
    assert (line, code, severity) == (4, "BL170", "error")
    write(tmp_path, "requirements.txt", "trl>=0.16\n")  # 0.17 and later count it: 2 x 7 x 16 is whole groups
    assert check(tmp_path, monkeypatch) == []


def test_a_program_that_sets_the_group_size_itself_gets_no_default(tmp_path, monkeypatch):
    program = GRPO_PROGRAM.replace("    GRPOTrainer(", "    training_args.num_generations = 7\n    GRPOTrainer(")
    grpo_project(tmp_path, micro=2, w=7, pin="0.16.1", program=program)
    assert check(tmp_path, monkeypatch) == []


# -- differential: the installed TRL judges the default group size --------------------------------------------

@pytest.mark.differential
def test_the_default_group_size_agrees_with_grpo_config(tmp_path, monkeypatch):
    """BL170 for a GRPO program's recipe without num_generations <=> GRPOConfig (its default 8) refuses
    the batch at that W, with the installed TRL pinned."""
    trl = pytest.importorskip("trl")
    from unittest import mock

    from transformers import TrainingArguments

    cases = itertools.product((1, 2, 4, 8), (1, 2, 4), (1, 3, 4, 8), (None, 2, 4))
    for n, (micro, accumulation, world, eval_micro) in enumerate(cases):
        values = {"per_device_train_batch_size": micro, "gradient_accumulation_steps": accumulation}
        if eval_micro:
            values.update(eval_strategy="steps", per_device_eval_batch_size=eval_micro)
        with mock.patch.object(TrainingArguments, "world_size", new_callable=mock.PropertyMock, return_value=world):
            try:
                trl.GRPOConfig(output_dir=str(tmp_path / "out"), bf16=False, use_cpu=True, **values)
                refused = False
            except ValueError as exc:
                refused = "generation" in str(exc) or "eval batch" in str(exc)
        folder = tmp_path / f"c{n}"
        write(folder, "src/grpo.py", GRPO_PROGRAM)
        write(folder, "recipes/grpo.yaml", "model_name_or_path: m\n" + "".join(f"{k}: {v}\n" for k, v in values.items()))
        write(folder, "train.sh", LAUNCH.format(w=world))
        write(folder, "requirements.txt", f"trl=={trl.__version__}\n")
        found = any(code == "BL170" for _, _, code, _, _ in check(folder, monkeypatch))
        assert found == refused, (values, world, refused, found)


# -- the first RLOOTrainer (0.9-0.21): the per-process batch in prompts of rloo_k samples, flags as the file ---

RLOO_PROGRAM = """\
from transformers import HfArgumentParser
from trl import ModelConfig, RLOOConfig, RLOOTrainer

if __name__ == "__main__":
    config, model_config = HfArgumentParser((RLOOConfig, ModelConfig)).parse_args_into_dataclasses()
    RLOOTrainer(config=config, processing_class=None, policy=None, ref_policy=None, reward_model=None).train()
"""
RLOO_LAUNCH = """\
accelerate launch --num_processes 8 examples/rloo.py \\
    --output_dir models/rloo \\
    --per_device_train_batch_size 2 \\
    --gradient_accumulation_steps {accumulation} \\
    --num_mini_batches 3 \\
    --rloo_k 4
"""


@pytest.mark.parametrize("pin, accumulation, flagged", [
    ("0.11.4", 1, True),  # 2 x 1 x 3 = 6 samples: one prompt and a half
    ("0.11.4", 2, False),  # 2 x 2 x 3 = 12: three prompts of 4
    ("0.21.0", 1, True),
    ("0.22.0", 1, False),  # rloo_k is num_generations from 0.22.0, judged by BL170
])
def test_the_first_rloo_trainer_splits_each_process_batch_into_prompts(tmp_path, monkeypatch, pin, accumulation,
                                                                       flagged):
    write(tmp_path, "examples/rloo.py", RLOO_PROGRAM)
    write(tmp_path, "train.sh", RLOO_LAUNCH.format(accumulation=accumulation))
    write(tmp_path, "requirements.txt", f"trl=={pin}\n")
    found = check(tmp_path, monkeypatch)
    if not flagged:
        assert [f for f in found if f[2] == "BL171"] == []
        return
    [(path, line, code, severity, message)] = found
    assert (path, line, code, severity) == ("train.sh", 6, "BL171", "error")
    assert "local_batch_size = per_device_train_batch_size (2) x gradient_accumulation_steps (1) x " \
           "num_mini_batches (3) = 6" in message


# -- auto_find_batch_size in GRPO/RLOO: refused from TRL 1.9.0, on the line as in a file ---------------------

@pytest.mark.parametrize("flag, pin, expected", [
    ("--auto_find_batch_size", "1.9.0", "error"),
    ("--auto_find_batch_size true", "1.16.0", "error"),
    ("--auto_find_batch_size", "1.8.0", None),  # no check before 1.9.0
    ("--auto_find_batch_size false", "1.9.0", None),
])
def test_auto_find_batch_size_in_grpo(tmp_path, monkeypatch, flag, pin, expected):
    write(tmp_path, "src/grpo.py", GRPO_PROGRAM)
    write(tmp_path, "train.sh", "accelerate launch --num_processes 4 src/grpo.py \\\n"
                                f"    --per_device_train_batch_size 4 --num_generations 8 \\\n    {flag}\n")
    write(tmp_path, "requirements.txt", f"trl=={pin}\n")
    found = [(path, line, severity) for path, line, code, severity, _ in check(tmp_path, monkeypatch) if code == "BL562"]
    assert found == ([("train.sh", 3, expected)] if expected else [])


# -- TRL 0.22-0.24 read the first RLOOTrainer's rloo_k and num_mini_batches as num_generations and
# steps_per_generation: the generation batch check (BL170) judges them under the names written ---------------

RENAMED_LAUNCH = """\
accelerate launch --num_processes 3 examples/rloo.py \\
    --output_dir models/rloo \\
    --per_device_train_batch_size 2 \\
    --num_mini_batches {minis} \\
    --rloo_k 4
"""


@pytest.mark.parametrize("pin, minis, found", [
    ("0.23.0", 1, [("train.sh", 5, "BL170", "error")]),  # 2 x W 3 x 1 = 6 completions: not whole groups of 4
    ("0.24.0", 2, []),  # 2 x 3 x 2 = 12: three groups of 4
    ("0.21.0", 1, [("train.sh", 5, "BL171", "error")]),  # the first RLOOTrainer: 2 x 1 x 1 per process
    ("0.25.0", 1, []),  # the old names are gone: not read as the new ones
])
def test_the_old_rloo_names_are_read_as_the_new_ones_from_0_22(tmp_path, monkeypatch, pin, minis, found):
    write(tmp_path, "examples/rloo.py", RLOO_PROGRAM)
    write(tmp_path, "train.sh", RENAMED_LAUNCH.format(minis=minis))
    write(tmp_path, "requirements.txt", f"trl=={pin}\n")
    result = check(tmp_path, monkeypatch)
    assert [(path, line, code, severity) for path, line, code, severity, _ in result] == found
    if found and found[0][2] == "BL170":
        assert "rloo_k (4, TRL 0.22-0.24 read it as num_generations)" in result[0][4]


# -- a program that parses its flags with an argparse of its own: its defaults, not TrainingArguments' -------

OWN_ARGPARSE_PROGRAM = """\
import argparse
from trl import GRPOConfig, GRPOTrainer

parser = argparse.ArgumentParser()
parser.add_argument("--per_device_train_batch_size", type=int, default=1)
parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
parser.add_argument("--num_generations", type=int, default=4)
args = parser.parse_args()
config = GRPOConfig(output_dir="out", per_device_train_batch_size=args.per_device_train_batch_size,
                    gradient_accumulation_steps=args.gradient_accumulation_steps, num_generations=args.num_generations)
GRPOTrainer(model="m", args=config).train()
"""


@pytest.mark.parametrize("program, micro", [(OWN_ARGPARSE_PROGRAM, "?"), (GRPO_PROGRAM, 8)])
def test_a_program_with_its_own_parser_keeps_its_own_defaults(tmp_path, monkeypatch, program, micro):
    write(tmp_path, "src/train.py", program)
    write(tmp_path, "run.sh", "accelerate launch --num_processes 8 src/train.py --num_generations 4 "
                              "--gradient_accumulation_steps 4\n")
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir(exist_ok=True)
    result = cli_runner().invoke(main, ["explain", "--format", "json", "run.sh"])
    assert result.exit_code == 0, result.output
    [explained] = json.loads(result.stdout)
    rows = {row["name"]: row["values"][0] for row in explained["rows"]}
    assert rows["micro batch (per GPU)"] == micro
