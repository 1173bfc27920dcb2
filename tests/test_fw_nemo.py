"""NeMo 1 adapter: which YAML files it reads, W from trainer.devices x
num_nodes, the Megatron layout and batch facts, and the real example configs
linted on more GPUs than they were written for."""

import os

import pytest

from conftest import CORPUS

GPT = """\
name: megatron_gpt
trainer:
  devices: {devices}
  num_nodes: {nodes}
  accumulate_grad_batches: 1
model:
  micro_batch_size: {mbs}
  global_batch_size: {gbs}
  tensor_model_parallel_size: {tp}
  pipeline_model_parallel_size: {pp}
  context_parallel_size: {cp}
  encoder_seq_length: {seq}
  data:
    seq_length: ${{model.encoder_seq_length}}
"""


def gpt(devices=8, nodes=1, mbs=4, gbs=64, tp=1, pp=1, cp=1, seq=4096):
    return GPT.format(devices=devices, nodes=nodes, mbs=mbs, gbs=gbs, tp=tp, pp=pp, cp=cp, seq=seq)


def found(result):
    return [(d.code, d.span.line) for d in result.diagnostics]


# -- what the adapter reads ------------------------------------------------------------

def test_megatron_training_config_is_nemo(lint):
    assert lint("megatron_gpt_config.yaml", gpt()).framework == "nemo"


def test_inference_and_non_megatron_configs_are_not_read(lint):
    # megatron_gpt_inference.yaml: parallel sizes at top level, for loading a checkpoint.
    inference = "inference:\n  greedy: false\ntrainer:\n  devices: 1\ntensor_model_parallel_size: -1\npipeline_model_parallel_size: -1\n"
    assert lint("megatron_gpt_inference.yaml", inference).framework is None


# -- models Lightning trains data-parallel (ASR, TTS, audio): train_ds's loader batch per rank ------

ASR = """\
name: "QuartzNet15x5"
model:
  sample_rate: 16000
  train_ds:
    manifest_filepath: ???
    sample_rate: 16000
    batch_size: 32
    shuffle: true
{extra}  validation_ds:
    batch_size: 32
trainer:
  devices: {devices}
  num_nodes: 2
  accelerator: gpu
  strategy: ddp
{accumulate}"""


def _rows(tmp_path, name, text, *args):
    import json

    from conftest import run, write

    [explained] = json.loads(run("explain", "--format", "json", write(tmp_path, name, text), *args).stdout)
    return {row["name"]: (row["values"][0], row["source"]) for row in explained["rows"]}


@pytest.mark.parametrize("devices, accumulate, expected", [
    (4, "  accumulate_grad_batches: 4\n", (32, 4, 8, 1024)),
    (4, "", (32, 1, 8, 256)),  # Lightning's default accumulation: 1
    (-1, "", (32, 1, "?", "?")),  # every GPU of the node: not known here
])
def test_a_speech_model_batches_train_ds_per_rank(tmp_path, devices, accumulate, expected):
    rows = _rows(tmp_path, "config.yaml", ASR.format(devices=devices, accumulate=accumulate, extra=""))
    names = ("micro batch (per GPU)", "gradient accumulation", "data parallel dp", "global batch (sequences/step)")
    assert tuple(rows[n][0] for n in names) == expected
    assert rows["micro batch (per GPU)"][1] == "model.train_ds.batch_size, line 7"


def test_a_tts_model_batches_its_dataloader_params(tmp_path):
    tts = ("model:\n  train_ds:\n    dataset:\n      _target_: x.Dataset\n    dataloader_params:\n      drop_last: false\n"
           "      batch_size: 64\ntrainer:\n  devices: 8\n  accumulate_grad_batches: 2\n")
    rows = _rows(tmp_path, "aligner.yaml", tts)
    assert rows["global batch (sequences/step)"][0] == 64 * 2 * 8
    assert rows["micro batch (per GPU)"][1] == "model.train_ds.dataloader_params.batch_size, line 7"


@pytest.mark.parametrize("extra", ["    use_lhotse: true\n    batch_duration: 600\n",
                                   "    use_lhotse: true\n    use_bucketing: true\n",
                                   "    bucketing_batch_size: [34, 30, 26]\n",
                                   "    use_semi_sorted_batching: true\n"])
def test_batches_by_duration_or_tokens_claim_no_micro_batch(tmp_path, extra):
    rows = _rows(tmp_path, "fast-conformer.yaml", ASR.format(devices=4, accumulate="", extra=extra))
    value, source = rows["micro batch (per GPU)"]
    assert value == "?" and "only a cap" in source and rows["global batch (sequences/step)"][0] == "?"


@pytest.mark.parametrize("extra", ["    use_lhotse: true\n    batch_duration: null\n", "    bucketing_batch_size: null\n",
                                   "    use_bucketing: false\n"])
def test_settings_that_leave_the_batch_fixed_keep_the_micro_batch(tmp_path, extra):
    rows = _rows(tmp_path, "config.yaml", ASR.format(devices=4, accumulate="", extra=extra))
    assert rows["micro batch (per GPU)"][0] == 32 and rows["global batch (sequences/step)"][0] == 256


def test_flat_micro_batch_size_is_not_nemo(lint):
    axolotl = "base_model: NousResearch/Llama-3.2-1B\nmicro_batch_size: 2\ngradient_accumulation_steps: 4\n"
    assert lint("axolotl.yaml", axolotl).framework != "nemo"


# -- world size and batch arithmetic ---------------------------------------------------

def test_world_size_is_devices_times_nodes(lint):
    # 2 x 4 = 8 GPUs, tp 2 -> dp 4: 4 x 4 = 16 does not divide 40.
    result = lint("gpt.yaml", gpt(devices=2, nodes=4, gbs=40, tp=2))
    [finding] = result.diagnostics
    assert found(result) == [("BL103", 8)]
    assert "model.micro_batch_size (4) x dp (4) = 16" in " ".join((finding.message,) + finding.notes)


def test_devices_minus_one_is_unknown(lint):
    # Only what fails for every W: 4 divides 40.
    assert lint("gpt.yaml", gpt(devices=-1, gbs=40, tp=2)).diagnostics == []
    assert found(lint("gpt_w8.yaml", gpt(devices=-1, gbs=40, tp=2), world_size=8)) == [("BL103", 8)]


def test_user_world_size_wins(lint):
    assert lint("gpt.yaml", gpt(devices=1, gbs=8, mbs=4), world_size=1).diagnostics == []
    assert found(lint("gpt.yaml", gpt(devices=1, gbs=8, mbs=4), world_size=4)) == [("BL103", 8)]


def test_layout_must_divide_w(lint):
    # tp 8 x pp 4 = 32 on the file's 8 GPUs; the larger degree is blamed.
    result = lint("gpt.yaml", gpt(tp=8, pp=4, gbs=64))
    assert found(result) == [("BL202", 9)]
    assert lint("gpt32.yaml", gpt(tp=8, pp=4, gbs=64), world_size=32).diagnostics == []


def test_layout_restored_from_a_checkpoint_is_not_checked(lint):
    # megatron_t5_lm_adaptation_finetune.py takes tp/pp from the pretrained .nemo file.
    text = gpt(devices=1, tp=2, gbs=8).replace("model:\n", "model:\n  pretrained_model_path: /ckpt/t5.nemo\n")
    assert lint("t5_lm_adaptation.yaml", text).diagnostics == []


def test_context_parallel_sequence_length(lint):
    assert found(lint("cp.yaml", gpt(cp=2, seq=4098))) == [("BL401", 12)]
    assert lint("cp_ok.yaml", gpt(cp=2, seq=4096)).diagnostics == []
    # Fine-tuning datasets pad to 2 x cp themselves.
    sft = gpt(cp=2, seq=4098).replace("  data:\n", "  data:\n    train_ds:\n      file_names: [a.jsonl]\n")
    assert "BL401" not in [d.code for d in lint("cp_sft.yaml", sft).diagnostics]


def test_interpolations_and_null_are_unknown(lint):
    text = gpt(gbs="${oc.env:GBS}", tp="null")
    assert lint("gpt.yaml", text, world_size=8).diagnostics == []


def test_rampup_global_batch_is_not_a_start_up_check(lint):
    text = gpt(gbs=40, tp=2).replace("model:\n", "model:\n  rampup_batch_size: [16, 8, 100000]\n")
    assert found(lint("gpt.yaml", gpt(gbs=40, tp=2))) == [("BL103", 8)]
    assert lint("ramp.yaml", text).diagnostics == []


def test_target_global_batch_is_the_declared_one(lint):
    result = lint("gpt.yaml", gpt(gbs=64), global_batch=128)
    assert found(result) == [("BL102", 8)]


def test_zero_micro_batch(lint):
    assert ("BL104", 7) in found(lint("gpt.yaml", gpt(mbs=0)))


# -- the corpus files, on more GPUs than written for -----------------------------------

CONF = os.path.join(CORPUS, "nemo", "examples", "nlp", "language_modeling", "conf")


@pytest.mark.skipif(not os.path.isdir(CONF), reason="../shared/corpus is not present")
def test_megatron_gpt_config_needs_a_larger_global_batch_on_4_gpus(tmp_path):
    from batchlint.config import Settings
    from batchlint.engine import Options, lint_file
    from batchlint.rules import RULES

    path = os.path.join(CONF, "megatron_gpt_config.yaml")
    settings = Settings(root=str(tmp_path))
    assert lint_file(path, settings, Options(), RULES).diagnostics == []  # devices: 1 as written
    [finding] = lint_file(path, settings, Options(world_size=4), RULES).diagnostics
    assert (finding.code, finding.span.line) == ("BL103", 82)
    assert finding.message == "model.global_batch_size 8 is not a multiple of 16 (micro 4 x dp 4)"
    assert "model.micro_batch_size (4) x dp (4) = 16" in finding.notes


# -- NeMo-Aligner: the model config of a checkpoint, and serving configs ------------------------

ALIGNER_RM = """\
trainer:
  num_nodes: 8
  devices: 8
pretrained_checkpoint:
  restore_from_path: null
model:
  micro_batch_size: 2
  global_batch_size: 64
{layout}"""


@pytest.mark.parametrize("layout, flagged", [
    # tp and pp are the checkpoint's (the file's model section only overrides it): dp is not known.
    ("", []),
    # Written in the file, they override the checkpoint's: dp = 64 and 64 % (2 x 64) != 0.
    ("  tensor_model_parallel_size: 1\n  pipeline_model_parallel_size: 1\n", [("BL103", 8)]),
])
def test_an_aligner_config_takes_the_layout_it_does_not_write_from_its_checkpoint(lint, layout, flagged):
    assert found(lint("training_rm.yaml", ALIGNER_RM.format(layout=layout))) == flagged


def test_a_global_batch_of_zero_declares_none(lint):
    # NeMo-Aligner's serving configs write 0 "to disable checks"; Megatron's calculator accepts it.
    assert found(lint("inference_rm.yaml", gpt(gbs=0))) == []
    assert ("BL104", 7) in found(lint("megatron_gpt_config.yaml", gpt(mbs=0)))  # micro_batch_size: 0 is one
