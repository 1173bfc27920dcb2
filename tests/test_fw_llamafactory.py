"""LLaMA-Factory: v0 (TrainingArguments), its Megatron (MCA / Megatron Bridge)
configs, and the v1 schema; the upstream examples linted with the world size
they were written for. Behaviour checked against LLaMA-Factory @ ff6d4d1."""

import os

import pytest

from batchlint import per_run
from batchlint.frameworks import llamafactory
from batchlint.frameworks.facts import Outside
from batchlint.plan import Fact
from batchlint.sources import read as read_document

from conftest import CORPUS, write


def codes(result):
    return sorted(d.code for d in result.diagnostics)


def read(path):
    with open(os.path.join(CORPUS, path), encoding="utf-8") as handle:
        return handle.read()


needs_corpus = pytest.mark.skipif(not os.path.isdir(CORPUS), reason="../shared/corpus is not present")

V1 = """\
model: Qwen/Qwen3-0.6B
model_class: llm
dist_config:
  name: fsdp2
train_dataset: data/v1_sft_demo.yaml
micro_batch_size: 2
{extra}max_steps: 10
"""


def plan_of(text, world_size=None):
    document = read_document("c.yaml", text, "yaml")
    world = Fact(world_size, "world size", None, "from --world-size") if world_size else None
    return llamafactory.plan(document, Outside(world_size=world))


# -- v1 ----------------------------------------------------------------------------------------

def test_v1_global_batch_must_divide_by_dp_times_micro(lint):
    text = V1.format(extra="global_batch_size: 12\n")
    # W 4: dp 4 x micro 2 = 8 does not divide 12 (v1/core/utils/batching.py:186-195).
    [finding] = lint("v1.yaml", text, world_size=4).diagnostics
    assert finding.code == "BL103" and finding.span.line == 7 and "= 8" in " ".join((finding.message,) + finding.notes)
    assert lint("v1.yaml", text, world_size=3).diagnostics == []  # 3 x 2 = 6 divides 12
    # Without W only what fails for every W: micro 2 divides 12.
    assert lint("v1.yaml", text).diagnostics == []
    assert codes(lint("v1odd.yaml", V1.format(extra="global_batch_size: 13\n"))) == ["BL103"]


def test_v1_dp_is_world_over_cp_or_written(lint):
    plan = plan_of(V1.format(extra="cp_size: 2\n"), world_size=8)
    assert plan.framework == "llamafactory-v1" and plan.data_parallel.value == 4
    assert plan.grad_accum.value == 1  # no global_batch_size: dp x micro, no accumulation
    # dp_size x cp_size must be W exactly (v1/accelerator/interface.py:95-99).
    assert codes(lint("dp.yaml", V1.format(extra="dp_size: 2\ncp_size: 2\nflash_attn: flash_attention_2\n"),
                      world_size=8)) == ["BL202"]
    # One GPU runs without torchrun: not distributed, dp 1, no mesh check.
    assert plan_of(V1.format(extra="cp_size: 2\n"), world_size=1).layout == ()


def test_v1_of_0_9_5_reads_the_degrees_in_dist_config(tmp_path, lint):
    """0.9.5 takes cp_size/dp_size inside dist_config (v1/accelerator/interface.py:138-146 @ v0.9.5); main
    after it at the top level, which wins when both are written."""
    released = V1.format(extra="").replace("  name: fsdp2\n", "  name: fsdp2\n  cp_mode: ulysses\n  cp_size: 2\n")
    plan = plan_of(released, world_size=8)
    assert plan.parallel["cp"].key == "dist_config.cp_size" and plan.data_parallel.value == 4
    assert plan_of(released + "cp_size: 4\n", world_size=8).data_parallel.value == 2
    # BL251 checks the released layout only: an error where 0.9.5 is pinned, nothing where 0.9.4 is.
    for release, found in (("0.9.5", [("BL251", "error")]), ("0.9.4", [])):
        (tmp_path / release).mkdir()
        (tmp_path / release / "requirements.txt").write_text(f"llamafactory=={release}\n")
        result = lint(f"{release}/cp.yaml", released, world_size=8)
        assert [(d.code, d.severity) for d in result.diagnostics] == found, release


def test_other_yaml_with_a_micro_batch_is_not_v1(lint):
    assert plan_of("model: Qwen/Qwen3-0.6B\nmicro_batch_size: 1\ngradient_accumulation_steps: 2\n") is None
    swift_megatron = "model: Qwen/Qwen3-8B\ntuner_type: lora\nmicro_batch_size: 1\nglobal_batch_size: 16\n"
    assert lint("m.yaml", swift_megatron).framework == "swift-megatron"


@needs_corpus
def test_v1_examples_are_read_and_clean(lint):
    folder = os.path.join(CORPUS, "llamafactory", "examples", "v1")
    for top, _, files in os.walk(folder):
        for name in files:
            result = lint(name, read(os.path.join(top, name)), world_size=8)
            expected = None if name == "export_lora.yaml" else "llamafactory-v1"
            assert result.framework == expected, name
            assert result.diagnostics == [], name


# -- v0 ----------------------------------------------------------------------------------------

def test_stage_pt_packs_by_default(lint):
    text = "stage: pt\ndataset: c4_demo\nper_device_train_batch_size: 2\ngroup_by_length: true\n"
    [finding] = lint("pt.yaml", text).diagnostics
    assert finding.code == "BL301" and finding.span.line == 4
    assert lint("pt_unpacked.yaml", text.replace("dataset", "packing: false\ndataset")).diagnostics == []
    assert lint("sft.yaml", text.replace("stage: pt", "stage: sft")).diagnostics == []


# -- Megatron (MCA, Megatron Bridge) -----------------------------------------------------------

@needs_corpus
def test_mca_global_batch_is_not_the_one_the_comment_states(lint):
    # qwen3_moe_full.yaml:12 says "global batchsize = (8 // 2 // 4) * 8 = 8" on its 8 GPUs, dividing by ep too.
    # mcore_adapter counts dp = W / (tp x pp x cp) = 8 / 4 = 2, so the global batch is 1 x 8 x 2 = 16.
    text = read("llamafactory/examples/megatron/qwen3_moe_full.yaml")
    assert lint("moe.yaml", text, world_size=8).diagnostics == []
    [finding] = lint("moe.yaml", text, world_size=8, global_batch=8).diagnostics
    assert finding.code == "BL102" and "the global batch is 16" in finding.message
    # pipeline_model_parallel_size 4 does not divide 2 GPUs (megatron core initialize_model_parallel).
    assert codes(lint("moe.yaml", text, world_size=2)) == ["BL202"]


@needs_corpus
def test_megatron_bridge_parallel_size_must_divide_the_world(lint):
    text = read("llamafactory/examples/megatron_bridge/llama3_sft.yaml")
    assert lint("bridge.yaml", text, world_size=3).diagnostics == []
    text = text.replace("expert_model_parallel_size: 1", "expert_model_parallel_size: 2")
    # tp x pp x cp x ep = 2 must divide W (hparams/parser.py:336-349); ep counts for the bridge.
    assert codes(lint("bridge.yaml", text, world_size=3)) == ["BL202"]
    assert plan_of(text, world_size=4).data_parallel is None  # the bridge's derived global batch is not modelled


# -- a launch line's own flags: `llamafactory-cli train --stage sft ...`, `deepspeed src/train.py ...` --

LF_FLAGS = """\
    --stage sft \\
    --do_train \\
    --model_name_or_path Qwen/Qwen2-7B \\
    --dataset alpaca_en \\
    --template qwen \\
    --finetuning_type lora \\
    --streaming true \\
{steps}    --output_dir saves/qwen2-7b/lora/sft \\
    --per_device_train_batch_size 2 \\
    --gradient_accumulation_steps 4 \\
    --bf16
"""
# src/train.py of a LLaMA-Factory checkout (v0.8.0 to v0.9.5): the flags go to HfArgumentParser in run_exp.
LF_TRAIN_PY = "from llamafactory.train.tuner import run_exp\n\n\ndef main():\n    run_exp()\n\n\nif __name__ == '__main__':\n    main()\n"
STREAMING_LINE = 9  # `--streaming true`, counting the launch line as line 2


def _script(launcher, steps=""):
    return "#!/bin/bash\n" + launcher + " \\\n" + LF_FLAGS.format(steps=steps)


@pytest.mark.parametrize("launcher", ["llamafactory-cli train", "deepspeed --num_gpus 8 src/train.py",
                                      "torchrun --nproc_per_node 8 src/train.py",
                                      "FORCE_TORCHRUN=1 NPROC_PER_NODE=8 llamafactory-cli train"])
def test_inline_flags_are_read_as_llamafactory(tmp_path, lint, launcher):
    # Streaming without max_steps: LLaMA-Factory refuses to start (BL550), from flags as from a YAML file.
    os.makedirs(tmp_path / ".git")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text(LF_TRAIN_PY)
    result = lint("run.sh", _script(launcher))
    assert result.bases == ((f"llamafactory: {'llamafactory-cli train' if 'cli' in launcher else 'src/train.py imports llamafactory'}"),)
    assert [(d.code, d.span.line) for d in result.diagnostics] == [("BL550", STREAMING_LINE)]
    assert lint("run.sh", _script(launcher, steps="    --max_steps 1000 \\\n")).diagnostics == []


def test_a_program_that_does_not_import_llamafactory_is_transformers(tmp_path, lint):
    # A project's own train.py with a `--stage` flag of its own: transformers' arguments, as before.
    os.makedirs(tmp_path / ".git")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text(
        "from transformers import HfArgumentParser, Trainer, TrainingArguments\n"
        "args = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()\n"
        "Trainer(args=args).train()\n")
    result = lint("run.sh", _script("torchrun --nproc_per_node 8 src/train.py"))
    assert result.bases == () and result.diagnostics == []


def test_llamafactory_cli_commands_that_do_not_train_are_not_read(lint):
    script = "#!/bin/bash\nllamafactory-cli export \\\n" + LF_FLAGS.format(steps="")
    result = lint("export.sh", script)
    assert result.bases == () and result.diagnostics == []


def test_cutoff_len_default_follows_the_release(tmp_path):
    # 2048 from 0.9.1 (hparams/data_args.py:48-49 @ v0.9.1), 1024 before (:44-45 @ v0.9.0).
    text = "stage: sft\nmodel_name_or_path: m\nper_device_train_batch_size: 2\n"
    path = tmp_path / "lf.yaml"
    path.write_text(text)
    document = read_document(str(path), text, "yaml")
    assert llamafactory.plan(document, Outside()).seq_len.value == 2048
    (tmp_path / "requirements.txt").write_text("llamafactory==0.9.0\n")
    per_run.forget()  # the release is read once a run
    assert llamafactory.plan(document, Outside()).seq_len.value == 1024
    (tmp_path / "requirements.txt").write_text("llamafactory==0.9.1\n")
    per_run.forget()
    assert llamafactory.plan(document, Outside()).seq_len.value == 2048


def test_a_stage_line_of_a_program_out_of_view_is_read_by_its_keys(tmp_path, lint):
    # No batch flag, src/train_bash.py not in the project: `stage` and LLaMA-Factory's own `finetuning_type`
    # make the line LLaMA-Factory's, with the Trainer's defaults (micro batch 8), which the JSON contradicts.
    os.makedirs(tmp_path / ".git")
    (tmp_path / "ds.json").write_text('{\n  "train_micro_batch_size_per_gpu": 16,\n  "gradient_accumulation_steps": 1\n}\n')
    line = "deepspeed src/train_bash.py --stage pt --deepspeed ds.json --finetuning_type lora --fp16\n"
    result = lint("run.sh", line)
    assert result.bases == ("llamafactory: src/train_bash.py is not in the project; keys only LLaMA-Factory has: "
                            "stage, finetuning_type",)
    assert [d.code for d in result.diagnostics] == ["BL120"]
    # `--stage` alone is any program's flag: nothing is said.
    result = lint("run.sh", line.replace(" --finetuning_type lora", ""))
    assert result.bases == () and result.diagnostics == []


_SFT = ("stage: sft\ndo_train: true\nper_device_train_batch_size: 2\ngradient_accumulation_steps: 8\n"
        "template: qwen\nfinetuning_type: lora\n")


@pytest.mark.parametrize("script, world", [
    ("CUDA_VISIBLE_DEVICES=0,1,2,3 llamafactory-cli train sft.yaml\n", 4),  # one process per visible device
    ("export CUDA_VISIBLE_DEVICES=0,1\nllamafactory-cli train sft.yaml\n", 2),
    ("CUDA_VISIBLE_DEVICES=0 llamafactory-cli train sft.yaml\n", 1),  # one device: one process, no torchrun
    ("CUDA_VISIBLE_DEVICES=0,1,2,3 NPROC_PER_NODE=2 llamafactory-cli train sft.yaml\n", 2),  # NPROC_PER_NODE wins
    ("CUDA_VISIBLE_DEVICES=$GPUS llamafactory-cli train sft.yaml\n", None),  # not written out: unknown
    ("llamafactory-cli train sft.yaml\n", None),  # the machine's devices: unknown
])
def test_the_cli_starts_a_process_per_visible_device(tmp_path, script, world):
    import json

    from conftest import run

    write(tmp_path, "sft.yaml", _SFT)
    path = write(tmp_path, "train.sh", "#!/bin/bash\n" + script)
    [explained] = json.loads(run("explain", "--output-format", "json", path).stdout)
    rows = {r["name"]: r["values"][0] for r in explained["rows"]}
    assert rows["world size W"] == (world if world is not None else "?")
