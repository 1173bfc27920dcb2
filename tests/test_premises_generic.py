"""The release windows of the rules that run on several frameworks (BL103, BL202, BL203, BL301, BL401):
each framework's window judged from both sides, by a pin (requirements.txt, or an EasyR1 checkout's
verl/__init__.py), and with no pin at all. Each case: the config, the world size, the pin, and the
severity of the finding on the line it names (None: no finding)."""

import pytest

from conftest import lint_text, write

AXOLOTL = "base_model: NousResearch/Llama-3.2-1B\nmicro_batch_size: 1\n{key}: 3\n"
AXOLOTL_EP = ("base_model: NousResearch/Llama-3.2-1B\nmicro_batch_size: 1\nplugins:\n"
              "  - axolotl.integrations.expert_parallel.ExpertParallelPlugin\nexpert_parallel_size: 3\n")
MEGATRON = "#!/bin/bash\ntorchrun --nproc_per_node 8 pretrain_gpt.py --micro-batch-size 1 {flags}\n"
NEMO = ("trainer:\n  devices: 8\n  num_nodes: 1\nmodel:\n  micro_batch_size: 1\n  global_batch_size: 64\n"
        "  {key}: 3\n")
OPENRLHF = ("#!/bin/bash\ndeepspeed --num_gpus 8 --module openrlhf.cli.train_sft --pretrain Qwen/Qwen2.5-0.5B "
            "--micro_train_batch_size 1 --train_batch_size 64 {flags} --packing_samples\n")
SWIFT = "model: Qwen/Qwen2.5-0.5B\ntrain_type: lora\nper_device_train_batch_size: 1\nsequence_parallel_size: 3\n"
SWIFT_MEGATRON = ("model: Qwen/Qwen3-8B\ntuner_type: lora\nmicro_batch_size: 1\nglobal_batch_size: 16\n"
                  "tensor_model_parallel_size: 3\n")
VERL_PPO = """\
data:
  train_batch_size: 128
actor_rollout_ref:
  actor:
    strategy: {strategy}
    ppo_mini_batch_size: 32
    ppo_micro_batch_size_per_gpu: 4
{degree}
  rollout:
    n: 1
trainer:
  n_gpus_per_node: 8
  nnodes: 1
"""
VERL_SP = VERL_PPO.format(strategy="fsdp", degree="    ulysses_sequence_parallel_size: 3")
VERL_TP = VERL_PPO.format(strategy="megatron", degree="    megatron:\n      tensor_model_parallel_size: 3")
VERL_CP = VERL_PPO.format(strategy="megatron", degree="    megatron:\n      context_parallel_size: 3")
VERL_SFT = ("data:\n  train_batch_size: 96\n  micro_batch_size_per_gpu: 4\nmodel:\n  partial_pretrain: Qwen/Qwen2.5-0.5B\n"
            "ulysses_sequence_parallel_size: 3\nuse_remove_padding: true\n")
XTUNER = """\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 3
batch_size = 1
accumulative_counts = 16
accumulative_counts *= sequence_parallel_size
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
"""
NANOTRON = ("general:\n  project: p\nparallelism:\n  dp: 2\n  pp: 1\n  tp: 2\n{cp}tokens:\n  sequence_length: 2048\n"
            "  micro_batch_size: 4\n  batch_accumulation_per_replica: 1\n")
EASYR1 = """\
data:
  max_prompt_length: 2048
  max_response_length: 2048
  rollout_batch_size: 512
algorithm:
  adv_estimator: grpo
worker:
  actor:
    global_batch_size: 128
    micro_batch_size_per_device_for_update: 4
    micro_batch_size_per_device_for_experience: 2
    ulysses_size: 3
  rollout:
    n: 5
    tensor_parallel_size: 2
trainer:
  nnodes: 1
  n_gpus_per_node: 8
"""

# BL202: (config file, text, W, pin, expected (severity, line) or None).
LAYOUT = [
    # axolotl: sequence_parallel_degree from 0.8.0, tensor/context parallel sizes from 0.12.0, experts from 0.17.0.
    ("ax.yaml", AXOLOTL.format(key="sequence_parallel_degree"), 8, None, ("error", 3)),
    ("ax.yaml", AXOLOTL.format(key="sequence_parallel_degree"), 8, "axolotl==0.7.0", None),
    ("ax.yaml", AXOLOTL.format(key="sequence_parallel_degree"), 8, "axolotl==0.8.0", ("error", 3)),
    ("ax.yaml", AXOLOTL.format(key="tensor_parallel_size"), 8, "axolotl==0.11.0", None),
    ("ax.yaml", AXOLOTL.format(key="tensor_parallel_size"), 8, "axolotl==0.12.0", ("error", 3)),
    ("ax.yaml", AXOLOTL.format(key="context_parallel_size"), 8, None, ("error", 3)),
    ("ax.yaml", AXOLOTL.format(key="context_parallel_size"), 8, "axolotl==0.11.0", None),
    ("ax.yaml", AXOLOTL_EP, 8, "axolotl==0.16.1", None),
    ("ax.yaml", AXOLOTL_EP, 8, "axolotl==0.17.0", ("error", 5)),
    # Megatron-LM: tp x pp in every release; context parallelism from core 0.4.0.
    ("train.sh", MEGATRON.format(flags="--tensor-model-parallel-size 3"), None, "megatron-core==0.1.0", ("error", 2)),
    ("train.sh", MEGATRON.format(flags="--context-parallel-size 3"), None, None, ("error", 2)),
    ("train.sh", MEGATRON.format(flags="--context-parallel-size 3"), None, "megatron-core==0.3.0", None),
    ("train.sh", MEGATRON.format(flags="--context-parallel-size 3"), None, "megatron-core==0.4.0", ("error", 2)),
    # NeMo's Megatron YAML: tp from 1.5.0, pp from 1.7.0, cp from 1.23.0, to 2.5.0.
    ("m.yaml", NEMO.format(key="tensor_model_parallel_size"), None, None, ("error", 7)),  # 2.5.1 on cannot run it
    ("m.yaml", NEMO.format(key="tensor_model_parallel_size"), None, "nemo-toolkit==1.4.0", None),
    ("m.yaml", NEMO.format(key="tensor_model_parallel_size"), None, "nemo-toolkit==1.5.0", ("error", 7)),
    ("m.yaml", NEMO.format(key="tensor_model_parallel_size"), None, "nemo-toolkit==2.5.0", ("error", 7)),
    ("m.yaml", NEMO.format(key="tensor_model_parallel_size"), None, "nemo-toolkit==2.5.1", None),
    ("m.yaml", NEMO.format(key="pipeline_model_parallel_size"), None, "nemo-toolkit==1.6.2", None),
    ("m.yaml", NEMO.format(key="pipeline_model_parallel_size"), None, "nemo-toolkit==1.7.0", ("error", 7)),
    ("m.yaml", NEMO.format(key="context_parallel_size"), None, "nemo-toolkit==1.22.0", None),
    ("m.yaml", NEMO.format(key="context_parallel_size"), None, "nemo-toolkit==1.23.0", ("error", 7)),
    # OpenRLHF: the (dp, ring, tp) mesh from 0.7.4; before it ring groups leave the spare ranks out.
    ("train.sh", OPENRLHF.format(flags="--ring_attn_size 3"), None, None, ("info", 2)),
    ("train.sh", OPENRLHF.format(flags="--ring_attn_size 3"), None, "openrlhf==0.7.3", None),
    ("train.sh", OPENRLHF.format(flags="--ring_attn_size 3"), None, "openrlhf==0.7.4", ("error", 2)),
    ("train.sh", OPENRLHF.format(flags="--ds_tensor_parallel_size 3"), None, None, ("error", 2)),
    ("train.sh", OPENRLHF.format(flags="--ds_tensor_parallel_size 3"), None, "openrlhf==0.7.3", None),
    # ms-swift: sequence parallelism from 2.0.5; its Megatron schema from 3.2.2.
    ("s.yaml", SWIFT, 8, None, ("error", 4)),
    ("s.yaml", SWIFT, 8, "ms-swift==2.0.4", None),
    ("s.yaml", SWIFT, 8, "ms-swift==4.6.0", ("error", 4)),
    ("s.yaml", SWIFT_MEGATRON, 8, None, ("error", 5)),
    ("s.yaml", SWIFT_MEGATRON, 8, "ms-swift==3.2.1", None),
    # verl: Megatron tp x pp always, cp from 0.4.0; Ulysses from 0.2; the SFT trainer's 0.2 to 0.7.0.
    ("ppo.yaml", VERL_TP, None, "verl==0.1", ("error", 9)),
    ("ppo.yaml", VERL_CP, None, None, ("error", 9)),
    ("ppo.yaml", VERL_CP, None, "verl==0.3.0.post1", None),
    ("ppo.yaml", VERL_SP, None, None, ("error", 8)),
    ("ppo.yaml", VERL_SP, None, "verl==0.1", None),
    ("ppo.yaml", VERL_SP, None, "verl==0.9.1", ("error", 8)),
    ("sft.yaml", VERL_SFT, 8, None, ("error", 6)),  # 0.1 has no Ulysses, 0.7.1 no such trainer
    ("sft.yaml", VERL_SFT, 8, "verl==0.2", ("error", 6)),
    ("sft.yaml", VERL_SFT, 8, "verl==0.7.1", None),
    # XTuner: sequence parallelism from 0.1.16.
    ("cfg.py", XTUNER, 8, None, ("error", 4)),
    ("cfg.py", XTUNER, 8, "xtuner==0.1.15", None),
    ("cfg.py", XTUNER, 8, "xtuner==0.2.0", ("error", 4)),
    # nanotron: every release; context_parallel_size is on its main only, checked by no release.
    ("n.yaml", NANOTRON.format(cp=""), 8, None, ("error", 4)),
    ("n.yaml", NANOTRON.format(cp="  context_parallel_size: 2\n"), 32, None, None),
]


def _found(tmp_path, code, filename, text, world, pin, pinned_in="requirements.txt"):
    if pin is not None:
        write(tmp_path, pinned_in, pin if pinned_in.endswith(".py") else pin + "\n")
    result = lint_text(tmp_path, filename, text, world)
    assert result.framework is not None
    return [(d.severity, d.span.line) for d in result.diagnostics if d.code == code]


@pytest.mark.parametrize("filename,text,world,pin,expected", LAYOUT,
                         ids=[f"{i}-{case[3] or 'unpinned'}" for i, case in enumerate(LAYOUT)])
def test_layout_world_mismatch_by_release(tmp_path, filename, text, world, pin, expected):
    assert _found(tmp_path, "BL202", filename, text, world, pin) == ([expected] if expected else [])


@pytest.mark.parametrize("version,expected", [(None, ("error", 12)), ("0.3.0", None), ("0.3.1", ("error", 12))])
def test_easyr1_ulysses_size_is_judged_from_v0_3_1(tmp_path, version, expected):
    pin = f'__version__ = "{version}"\n' if version else None
    found = _found(tmp_path, "BL202", "config.yaml", EASYR1, None, pin, pinned_in="verl/__init__.py")
    assert found == ([expected] if expected else [])


NEMO_SP = ("trainer:\n  devices: 8\n  num_nodes: 1\nmodel:\n  micro_batch_size: 1\n  global_batch_size: 64\n"
           "  tensor_model_parallel_size: 1\n  sequence_parallel: true\n")


@pytest.mark.parametrize("pin,expected", [
    (None, ("info", 8)),  # 2.5.1 on has no NeMo 1 Megatron models: they cannot run it
    ("nemo-toolkit==1.10.0", None),  # no model.sequence_parallel yet
    ("nemo-toolkit==1.11.0", ("info", 8)),  # an info: at tp 1 the flag does nothing
    ("nemo-toolkit==2.5.0", ("info", 8)),
])
def test_nemo_sequence_parallel_without_tp_by_release(tmp_path, pin, expected):
    assert _found(tmp_path, "BL203", "m.yaml", NEMO_SP, None, pin) == ([expected] if expected else [])


def test_megatron_sequence_parallel_without_tp_in_every_release(tmp_path):
    line = MEGATRON.format(flags="--tensor-model-parallel-size 1 --sequence-parallel")
    assert _found(tmp_path, "BL203", "train.sh", line, None, "megatron-core==0.1.0") == [("info", 2)]


TRL = "model_name_or_path: Qwen/Qwen2.5-0.5B\npacking: true\nper_device_train_batch_size: 2\n{grouping}\n"


@pytest.mark.parametrize("grouping,pin,expected", [
    ("group_by_length: true", None, ("warning", 4)),  # only 4.3.0 to 5.1.0 run it
    ("group_by_length: true", "transformers==4.2.2", None),  # no group_by_length yet
    ("group_by_length: true", "transformers==4.3.0", ("warning", 4)),
    ("group_by_length: true", "transformers==5.1.0", ("warning", 4)),
    ("group_by_length: true", "transformers==5.2.0", None),  # replaced by train_sampling_strategy
    ("train_sampling_strategy: group_by_length", None, ("warning", 4)),
    ("train_sampling_strategy: group_by_length", "transformers==5.1.0", None),
    ("train_sampling_strategy: group_by_length", "transformers==5.24.0", ("warning", 4)),
])
def test_trl_packing_with_length_grouping_by_transformers_release(tmp_path, grouping, pin, expected):
    found = _found(tmp_path, "BL301", "sft.yaml", TRL.format(grouping=grouping), None, pin)
    assert found == ([expected] if expected else [])


def test_ms_swift_reads_group_by_length_itself(tmp_path):
    text = "model: Qwen/Qwen2.5-0.5B\ntrain_type: lora\nper_device_train_batch_size: 2\npacking: true\ngroup_by_length: true\n"
    assert _found(tmp_path, "BL301", "s.yaml", text, None, "transformers==5.2.0") == [("warning", 5)]


XTUNER_VARLEN = """\
from xtuner.dataset import process_hf_dataset
from xtuner.dataset.collate_fns import default_collate_fn

sequence_parallel_size = 4
max_length = 4094
use_varlen_attn = True
train_dataset = dict(type=process_hf_dataset, max_length=max_length, pack_to_max_length=True)
train_dataloader = dict(batch_size=1, dataset=train_dataset,
                        collate_fn=dict(type=default_collate_fn, use_varlen_attn=use_varlen_attn))
"""


@pytest.mark.parametrize("pin,expected", [(None, "error"), ("xtuner==0.1.15", None), ("xtuner==0.1.16", "error")])
def test_xtuner_varlen_length_under_sequence_parallelism_from_0_1_16(tmp_path, pin, expected):
    found = [severity for severity, _ in _found(tmp_path, "BL401", "cfg.py", XTUNER_VARLEN, 8, pin)]
    assert found == ([expected] if expected else [])
