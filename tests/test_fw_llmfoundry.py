"""LLM Foundry: train YAMLs in the shape of scripts/train/yamls/{pretrain,finetune}, MCLI run YAMLs
whose `parameters:` block is the config, and `composer` launch lines. Both sides each time: what
llm-foundry refuses is flagged, its near twin is not, and other frameworks' files stay theirs."""

import json

import pytest

from batchlint.frameworks import llmfoundry
from batchlint.frameworks.facts import Outside
from batchlint.plan import Fact, Origin
from batchlint.sources.omegaconf import resolve
from batchlint.sources.yaml import read_yaml

from conftest import run, write


def train_yaml(global_=256, micro="8", extra=""):
    """A pretraining YAML as llm-foundry's own are written (variables, interpolated max_seq_len)."""
    return f"""\
variables:
  data_local: ./my-copy-c4
  max_seq_len: 2048

max_seq_len: ${{variables.max_seq_len}}
model:
  name: mpt_causal_lm
  init_device: meta
  d_model: 1024
  max_seq_len: ${{variables.max_seq_len}}
train_loader:
  name: text
  dataset:
    local: ${{variables.data_local}}
    max_seq_len: ${{variables.max_seq_len}}
  drop_last: true
max_duration: 4800ba
global_train_batch_size: {global_}
device_eval_batch_size: 8
device_train_microbatch_size: {micro}
precision: amp_bf16
{extra}"""


def mcli_yaml(gpus=8, global_=128, command="composer train/train.py /mnt/config/parameters.yaml"):
    """An MCLI run YAML: the command trains on the parameters the platform writes out."""
    return f"""\
integrations:
- integration_type: git_repo
  git_repo: mosaicml/llm-foundry
  pip_install: .[gpu]
command: |
  cd llm-foundry/scripts
  {command}
image: mosaicml/llm-foundry:latest
name: mpt-1b
compute:
  gpus: {gpus}
parameters:
  variables:
    max_seq_len: 4096
  max_seq_len: ${{variables.max_seq_len}}
  model:
    name: hf_causal_lm
    pretrained_model_name_or_path: meta-llama/Meta-Llama-3-8B
  train_loader:
    name: finetuning
    dataset:
      split: train
  max_duration: 1ep
  global_train_batch_size: {global_}
  device_eval_batch_size: 1
  device_train_microbatch_size: 1
"""


def plan_of(text, world_size=None):
    world = Fact(world_size, "world size", None, Origin.COMMAND_LINE, detail="--world-size") if world_size else None
    # Its interpolations resolved first, as the registry does for an OmegaConf framework's adapter.
    return llmfoundry.plan(resolve(read_yaml("t.yaml", text)), Outside(world_size=world))


def rows(tmp_path, name, text, *args):
    [explained] = json.loads(run("explain", "--format", "json", write(tmp_path, name, text), *args).stdout)
    assert explained["framework"] == "llm-foundry"
    return {row["name"]: (row["values"][0], row["source"]) for row in explained["rows"]}


def codes(result):
    return [(d.code, d.span.line) for d in result.diagnostics]


# -- recognised, and only llm-foundry's ---------------------------------------------------------


def test_a_train_yaml_is_llm_foundry(lint):
    assert lint("mpt-125m.yaml", train_yaml()).framework == "llm-foundry"


@pytest.mark.parametrize("text", [
    # The batch keys without the model and train_loader mappings TrainConfig requires.
    "global_train_batch_size: 256\ndevice_train_microbatch_size: 8\n",
    # An eval YAML (scripts/eval/yamls): models and icl_tasks, no train batch.
    "max_seq_len: 1024\ndevice_eval_batch_size: 4\nmodels:\n- model_name: mpt\n  model:\n    name: mpt_causal_lm\n",
    # A Composer YAML of another project: model and train_loader, but its own batch key.
    "model:\n  name: resnet50\ntrain_loader:\n  batch_size: 256\nmax_duration: 90ep\n",
])
def test_near_twins_are_not_llm_foundry(lint, text):
    assert lint("other.yaml", text).framework is None


def test_other_frameworks_keep_their_files(lint):
    axolotl = "base_model: meta-llama/Llama-3.1-8B\nmicro_batch_size: 2\ngradient_accumulation_steps: 4\n" \
              "datasets:\n  - path: tatsu-lab/alpaca\n    type: alpaca\n"
    assert lint("axolotl.yaml", axolotl).framework == "axolotl"
    nemo = "trainer:\n  devices: 8\n  num_nodes: 1\nmodel:\n  micro_batch_size: 4\n  global_batch_size: 256\n" \
           "  tensor_model_parallel_size: 2\n"
    assert lint("megatron_gpt.yaml", nemo).framework == "nemo"


# -- the arithmetic -------------------------------------------------------------------------------


def test_explain_rows_with_their_sources(tmp_path):
    found = rows(tmp_path, "mpt-125m.yaml", train_yaml(global_=256, micro="8"), "-w", "8")
    assert found["micro batch (per GPU)"] == (8, "device_train_microbatch_size, line 20")
    assert found["gradient accumulation"][0] == 4  # 256 / 8 = 32 per GPU, 4 micro batches of 8
    assert "ceil(device_train_batch_size (32" in found["gradient accumulation"][1]
    assert found["world size W"] == (8, "world size: from --world-size")
    assert found["data parallel dp"][0] == 8
    assert found["declared global batch"] == (256, "global_train_batch_size, line 18")
    assert found["global batch (sequences/step)"][0] == 256
    # max_seq_len: ${variables.max_seq_len}, read where the variable is written.
    assert found["sequence length"] == (2048, "variables.max_seq_len, line 3")


def test_a_remainder_of_micro_batches_is_no_refusal():
    """Composer splits the per-GPU batch into micro batches and the last one holds the rest."""
    plan = plan_of(train_yaml(global_=80, micro="4"), world_size=8)
    assert plan.micro_batch.value == 4 and plan.grad_accum.value == 3  # ceil(10 / 4)
    assert "the last micro batch of each step holds 2" in plan.grad_accum.detail
    assert plan.effective_global_batch()[0] == 80


def test_a_micro_batch_above_the_per_gpu_batch_is_lowered():
    plan = plan_of(train_yaml(global_=48, micro="8"), world_size=8)
    assert plan.micro_batch.value == 6 and plan.micro_batch.origin is Origin.DERIVED
    assert plan.grad_accum.value == 1


def test_auto_claims_no_micro_batch(tmp_path):
    found = rows(tmp_path, "auto.yaml", train_yaml(micro="auto"), "-w", "8")
    assert found["micro batch (per GPU)"][0] == "?" and "auto" in found["micro batch (per GPU)"][1]
    assert found["gradient accumulation"][0] == "?" and "auto" in found["gradient accumulation"][1]
    assert found["global batch (sequences/step)"][0] == 256


def test_tensor_parallel_does_not_shrink_dp():
    """update_batch_size_info passes data_replication_degree = 1: every rank takes G / W."""
    plan = plan_of(train_yaml(extra="tp_config:\n  strategy: ffn\n  tensor_parallel_degree: 2\n"), world_size=8)
    assert plan.parallel["tp"].value == 2 and plan.data_parallel.value == 8
    assert plan.grad_accum.value == 4


def test_an_interpolation_that_cannot_be_followed_is_unknown():
    plan = plan_of(train_yaml(global_="${variables.nowhere}"), world_size=8)
    assert plan.declared_global_batch.value is None and plan.grad_accum is None


# -- BL103: global_train_batch_size % W ------------------------------------------------------------


def test_a_global_batch_w_does_not_divide_is_refused(lint):
    result = lint("mpt-125m.yaml", train_yaml(global_=256, micro="8"), world_size=6)
    assert codes(result) == [("BL103", 18)]
    finding = result.diagnostics[0]
    assert "global_train_batch_size 256 is not a multiple of the world size 6" == finding.message
    assert "W is world size (6" in " ".join(finding.notes)
    assert "252 or 258" in result.diagnostics[0].fix


def test_micro_x_w_need_not_divide_the_global_batch(lint):
    # 8 x 8 = 64 does not divide 40, but 8 does: 5 per GPU in one micro batch.
    assert codes(lint("small.yaml", train_yaml(global_=40, micro="8"), world_size=8)) == []
    assert codes(lint("small.yaml", train_yaml(global_=100, micro="8"))) == []  # W unknown: W = 1 fits


# -- MCLI run YAMLs -------------------------------------------------------------------------------


def test_mcli_parameters_are_the_config_with_w_from_compute(tmp_path):
    found = rows(tmp_path, "mcli-1b.yaml", mcli_yaml(gpus=16, global_=64))
    assert found["world size W"] == (16, "compute.gpus, line 11")
    assert found["micro batch (per GPU)"] == (1, "device_train_microbatch_size, line 26")
    assert found["gradient accumulation"][0] == 4
    assert found["sequence length"] == (4096, "variables.max_seq_len, line 14")


def test_mcli_findings_point_into_the_run_yaml(lint):
    result = lint("mcli-1b.yaml", mcli_yaml(gpus=24, global_=64))
    assert codes(result) == [("BL103", 24)]
    assert [(r.message, r.span.line) for r in result.diagnostics[0].related] == [("W = 24", 11)]
    assert codes(lint("mcli-1b.yaml", mcli_yaml(gpus=16, global_=64))) == []


def test_mcli_launch_line_counts_and_overrides_win(lint, tmp_path):
    line = "composer --world_size 12 train/train.py /mnt/config/parameters.yaml global_train_batch_size=48"
    found = rows(tmp_path, "mcli.yaml", mcli_yaml(gpus=16, global_=64, command=line))
    assert found["world size W"][0] == 12
    assert found["declared global batch"][0] == 48


def test_mcli_parameters_no_command_trains_on_are_not_read(lint):
    line = "composer train/train.py train/yamls/pretrain/mpt-1b.yaml"
    assert lint("mcli.yaml", mcli_yaml(command=line)).framework != "llm-foundry"
    assert lint("mcli.yaml", mcli_yaml(command="python eval/eval.py /mnt/config/parameters.yaml")).framework \
        != "llm-foundry"


# -- composer launch lines ------------------------------------------------------------------------


def test_composer_gives_w_and_applies_overrides(tmp_path):
    write(tmp_path, "scripts/train/yamls/pretrain/mpt-125m.yaml", train_yaml(global_=256, micro="8"))
    script = write(tmp_path, "run.sh", "#!/bin/bash\n"
                   "composer -n 6 scripts/train/train.py scripts/train/yamls/pretrain/mpt-125m.yaml max_duration=10ba\n"
                   "composer --world_size 16 --node_rank 0 --master_addr 10.0.0.1 --master_port 7501 "
                   "scripts/train/train.py scripts/train/yamls/pretrain/mpt-125m.yaml global_train_batch_size=48\n")
    out = run("check", "--format", "json", "--exit-zero", script)
    found = [(f["code"], f["line"], " ".join([f["message"]] + f["notes"])) for f in json.loads(out.stdout)]
    assert [(code, line) for code, line, _ in found] == [("BL103", 18)]  # 256 % 6; 48 % 16 = 0
    assert "world size (6, from the launch line: -n 6)" in found[0][2]
    [first, second] = json.loads(run("explain", "--format", "json", script).stdout)
    assert {r["name"]: r["values"][0] for r in second["rows"]}["declared global batch"] == 48
    assert {r["name"]: r["values"][0] for r in second["rows"]}["micro batch (per GPU)"] == 3  # 48 / 16 < 8


def test_train_py_is_read_as_llm_foundry_only_under_composer(tmp_path):
    write(tmp_path, "cfg.yaml", train_yaml(global_=256, micro="8"))
    script = write(tmp_path, "run.sh", "#!/bin/bash\ntorchrun --nproc_per_node 8 train.py cfg.yaml global_train_batch_size=250\n")
    [explained] = json.loads(run("explain", "--format", "json", script).stdout)
    # torchrun's train.py is anyone's: the config is linted as written, its overrides not applied.
    assert {r["name"]: r["values"][0] for r in explained["rows"]}["declared global batch"] == 256


def test_mcli_nproc_does_not_change_w_but_a_missing_gpu_count_leaves_it_unknown(lint):
    """composer takes WORLD_SIZE (compute.gpus) over -n; with only `nodes:` W is not known."""
    line = "composer -n 4 train/train.py /mnt/config/parameters.yaml"
    assert codes(lint("mcli.yaml", mcli_yaml(gpus=24, global_=64, command=line))) == [("BL103", 24)]
    nodes = mcli_yaml(global_=63).replace("  gpus: 8\n", "  nodes: 2\n")
    result = lint("mcli.yaml", nodes)
    assert result.framework == "llm-foundry" and codes(result) == []
