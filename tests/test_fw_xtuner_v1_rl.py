"""XTuner v1 RL configs (RLColocateTrainerConfig / RLDisaggregatedTrainerConfig): the batch
arithmetic explain shows (prompts x samples, packs of pack_max_length tokens, optimizer steps), W
from the trainer's resources, and the start-up refusals on both sides."""

import json

from conftest import run, write

# The shape of XTuner's RL configs (autotest/config/rl_*.py, examples/v1/config/rl_*.py): module
# level settings, then one config object per part, the trainer last.
CONFIG = """\
import os

from xtuner.v1.config import AdamWConfig, FSDPConfig, LRConfig
from xtuner.v1.data_proto.rl_data import SampleParams
from xtuner.v1.datasets.config import DataloaderConfig, DatasetConfig
from xtuner.v1.datasets.rl_tokenize_fn import RLTextTokenizeFnConfig
from xtuner.v1.rl.agent_loop import {loop}
from xtuner.v1.rl.agent_loop_manager import AgentLoopManagerConfig, SamplerConfig, TaskSpecConfig
from xtuner.v1.rl.judger import GSM8KJudgerConfig
from xtuner.v1.rl.loss import GRPOLossConfig
from xtuner.v1.rl.rollout.worker import RolloutConfig
from xtuner.v1.rl.trainer import WorkerConfig
from xtuner.v1.rl.utils import AcceleratorResourcesConfig
from xtuner.v1.train.rl_trainer import RLColocateTrainerConfig

model_path = os.environ["MODEL_PATH"]
data_path = os.environ["DATA_PATH"]
train_batch_size = {batch}
prompt_repeat_k = 8
rollout_tp_size = {tp}
max_response_length = 2048
pack_max_length = 16384
train_optimizer_steps = {steps}

resources = AcceleratorResourcesConfig(accelerator="GPU", num_workers={workers}, num_cpus_per_worker=12)
rollout_config = RolloutConfig(
    model_path=model_path,
    tensor_parallel_size=rollout_tp_size,
    context_length=max_response_length + 1024,
)
dataloader_cfg = DataloaderConfig(
    dataset_config_list=[
        {{
            "dataset": DatasetConfig(name="gsm8k", anno_path=data_path),
            "tokenize_fn": RLTextTokenizeFnConfig(max_length=1024),
        }}
    ],
    pack_max_length=pack_max_length,
    collator="fake_collator",
    pack_level="none",
)
train_worker_cfg = WorkerConfig(
    optim_cfg=AdamWConfig(lr=1e-6, foreach=False),
    loss_cfg=GRPOLossConfig(use_kl_loss=False),
    lr_cfg=LRConfig(lr_type="constant", warmup_ratio=0),
    fsdp_cfg=FSDPConfig(cpu_offload=False, ep_size=1{fsdp}),
    load_from=model_path,
    sp_size={sp},
    optimizer_steps=train_optimizer_steps,
    pack_max_length=pack_max_length,
)
agent_loop_manager_cfg = AgentLoopManagerConfig(
    tasks={tasks},
)
trainer = RLColocateTrainerConfig(
    resources=resources,
    train_worker_cfg=train_worker_cfg,
    rollout_config=rollout_config,
    tokenizer_path=model_path,
    agent_loop_manager_cfg=agent_loop_manager_cfg,
    load_from=model_path,
    total_epochs=2,
    train_batch_size=train_batch_size,
)
"""

TASK = """TaskSpecConfig(
        task_name="{name}",
        agent_loop_config={loop}(hf_checkpoint=model_path, sample_params=SampleParams(max_tokens=max_response_length)),
        judger_config=GSM8KJudgerConfig(judger_name="openai/gsm8k"),
        sampler_config=SamplerConfig(dataloader_cfg=dataloader_cfg, prompt_repeat_k={k}),
    )"""

RESOURCES_LINE = 25  # resources = AcceleratorResourcesConfig(...)
TP_LINE = 20  # rollout_tp_size = ..., the value RolloutConfig reads
EP_LINE = 29  # below tensor_parallel_size=rollout_tp_size, where a test writes expert_parallel_size
SP_LINE = 48  # sp_size=...


def config(batch="64", steps=1, workers=8, tp=1, sp=1, fsdp="", loop="SingleTurnAgentLoopConfig", tasks=None):
    tasks = tasks or TASK.format(name="train_task", loop=loop, k="prompt_repeat_k")
    return CONFIG.format(batch=batch, steps=steps, workers=workers, tp=tp, sp=sp, fsdp=fsdp, loop=loop, tasks=tasks)


def explained(path, *args):
    result = run("explain", "--format", "json", *args, str(path))
    assert result.exit_code == 0, result.output
    [explanation] = json.loads(result.stdout)
    return explanation


def rows_of(path, *args):
    explanation = explained(path, *args)
    assert explanation["framework"] == "xtuner-v1"
    return {row["name"]: (row["values"][0], row["source"], row.get("unit", "")) for row in explanation["rows"]}


def codes(lint, text, code, **kwargs):
    result = lint("rl_grpo.py", text, **kwargs)
    assert result.framework == "xtuner-v1"
    return sorted(d.span.line for d in result.diagnostics if d.code == code)


def test_the_lines_the_constants_name():
    lines = config().splitlines()
    assert lines[RESOURCES_LINE - 1].startswith("resources = ")
    assert lines[TP_LINE - 1].startswith("rollout_tp_size = ")
    assert lines[EP_LINE - 2].strip() == "tensor_parallel_size=rollout_tp_size,"
    assert lines[SP_LINE - 1].strip().startswith("sp_size=")


# -- what explain shows ------------------------------------------------------------------

def test_prompts_samples_and_packs(workdir):
    path = write(workdir, "rl_grpo.py", config())
    rows = rows_of(path)
    # W is the trainer's placement group: resources.num_workers.
    assert rows["world size W"][:2] == (8, f"resources.num_workers, line {RESOURCES_LINE}")
    assert rows["data parallel dp"][0] == 8
    # A micro-step is one pack of pack_max_length tokens, never a number of sequences.
    assert rows["micro batch (per GPU)"][0] == 16384 and rows["micro batch (per GPU)"][2] == "tokens"
    assert rows["gradient accumulation"][0] == "dynamic"
    # train_batch_size counts prompts, each sampled prompt_repeat_k times.
    assert rows["prompts per generation round"][0] == 64 and rows["samples per prompt"][0] == 8
    assert rows["generation batch (sequences)"][0] == 512
    # optimizer_steps 1: the whole round is one optimizer step.
    assert rows["global batch (sequences/step)"][0] == 512
    assert rows["mini-batches (optimizer steps) per generation round"][0] == 1


def test_several_optimizer_steps_leave_the_step_batch_to_the_lengths(workdir):
    path = write(workdir, "rl_grpo.py", config(steps=4))
    rows = rows_of(path)
    steps = rows["mini-batches (optimizer steps) per generation round"]
    assert steps[0] == 4 and steps[1].startswith("train_optimizer_steps, line") and "at most" in steps[1]
    # The packs, not the samples, are split into optimizer steps: no fixed count of sequences per step.
    assert rows["global batch (sequences/step)"][0] == "?" and rows["sequences per optimizer step"][0] == "?"
    assert rows["generation batch (sequences)"][0] == 512


def test_a_multi_turn_loop_has_no_fixed_step_batch(workdir):
    # A tool-calling loop may cut one session into several trained segments.
    path = write(workdir, "rl_tool.py", config(loop="GSM8KToolAgentLoopConfig"))
    rows = rows_of(path)
    assert rows["generation batch (sequences)"][0] == 512 and rows["global batch (sequences/step)"][0] == "?"


def test_tasks_with_different_group_sizes_have_no_single_one(workdir):
    two = "[\n        {},\n        {},\n    ]".format(
        TASK.format(name="gsm8k", loop="SingleTurnAgentLoopConfig", k=8),
        TASK.format(name="math", loop="SingleTurnAgentLoopConfig", k=16))
    rows = rows_of(write(workdir, "rl_multi.py", config(tasks=two)))
    assert "samples per prompt" not in rows and "generation batch (sequences)" not in rows
    assert rows["prompts per generation round"][0] == 64
    same = two.replace("prompt_repeat_k=16", "prompt_repeat_k=8")
    rows = rows_of(write(workdir, "rl_multi_same.py", config(tasks=same)))
    assert rows["samples per prompt"][0] == 8 and rows["generation batch (sequences)"][0] == 512


def test_environment_values_stay_unknown(workdir):
    text = config(batch='int(os.environ.get("TRAIN_BATCH_SIZE", 512))', workers='int(os.environ["NUM_WORKERS"])')
    rows = rows_of(write(workdir, "rl_env.py", text))
    assert rows["prompts per generation round"][0] == "?" and "generation batch (sequences)" not in rows
    assert rows["world size W"][0] == "?" and rows["data parallel dp"][0] == "?"
    # The W you give is what `rl.py --num-workers` sets.
    assert rows_of(write(workdir, "rl_env.py", text), "-w", "16")["data parallel dp"][0] == 16


def test_dp_divides_by_tp_and_sp(workdir):
    rows = rows_of(write(workdir, "rl_sp.py", config(sp=2, fsdp=", tp_size=2")))
    assert rows["data parallel dp"][0] == 2 and rows["sequence parallel degree"][0] == 2


def test_sft_configs_keep_their_own_arithmetic(workdir):
    sft = ("from xtuner.v1.train import TrainerConfig\nfrom xtuner.v1.config import FSDPConfig\n\n"
           "trainer = TrainerConfig(global_batch_size=64, sp_size=2, fsdp_cfg=FSDPConfig())\n")
    rows = rows_of(write(workdir, "sft.py", sft), "-w", "8")
    assert rows["declared global batch"][0] == 64 and "samples per prompt" not in rows
    assert rows["micro batch (per GPU)"][0] == 1


# -- start-up refusals -------------------------------------------------------------------

def test_sp_must_divide_the_workers(lint):
    # worker.py:429 ParallelConfigException: W % sp_size.
    assert codes(lint, config(sp=3), "BL202") == [SP_LINE]
    assert codes(lint, config(sp=2), "BL202") == []
    assert codes(lint, config(sp=3), "BL202", world_size=6) == []  # the W you give wins
    # tp only divides the data: no refusal for W % (tp x sp).
    assert codes(lint, config(sp=2, fsdp=", tp_size=3"), "BL202") == []


def test_rollout_engines_must_divide_the_workers(lint):
    assert codes(lint, config(tp=4, workers=6), "BL262") == [TP_LINE]
    assert codes(lint, config(tp=4, workers=8), "BL262") == []
    assert codes(lint, config(tp=2, workers=8), "BL262", world_size=7) == [TP_LINE]
    assert codes(lint, config(tp=2, workers='int(os.environ["NUM_WORKERS"])'), "BL262") == []


def test_the_expert_degree_sizes_the_engine(lint):
    text = config(tp=3, workers=8).replace("    context_length=", "    expert_parallel_size=4,\n    context_length=", 1)
    assert codes(lint, text, "BL262") == []
    assert codes(lint, text.replace("expert_parallel_size=4", "expert_parallel_size=3"), "BL262") == [EP_LINE]


DISAGG = """\
import os

from xtuner.v1.rl.rollout.worker import RolloutConfig
from xtuner.v1.rl.trainer import WorkerConfig
from xtuner.v1.rl.utils import AcceleratorResourcesConfig
from xtuner.v1.train.rl_trainer import RLDisaggregatedTrainerConfig

model_path = os.environ["MODEL_PATH"]
train_resources = AcceleratorResourcesConfig(accelerator="GPU", num_workers=8)
rollout_resources = AcceleratorResourcesConfig(accelerator="GPU", num_workers={rollout})
rollout_config = RolloutConfig(model_path=model_path, tensor_parallel_size=4)
trainer = RLDisaggregatedTrainerConfig(
    train_resources=train_resources,
    rollout_resources=rollout_resources,
    train_worker_cfg=WorkerConfig(load_from=model_path, pack_max_length=8192, sp_size=1),
    rollout_config=rollout_config,
    tokenizer_path=model_path,
    load_from=model_path,
    total_train_steps=100,
    train_batch_size=32,
)
"""


def test_a_disaggregated_rollout_has_its_own_gpus(lint, workdir):
    assert codes(lint, DISAGG.format(rollout=6), "BL262") == [11]
    assert codes(lint, DISAGG.format(rollout=12), "BL262") == []
    # The W you give is the training pool's; the rollout keeps rollout_resources.
    assert codes(lint, DISAGG.format(rollout=12), "BL262", world_size=6) == []
    rows = rows_of(write(workdir, "disagg.py", DISAGG.format(rollout=12)))
    assert rows["world size W"][:2] == (8, "train_resources.num_workers, line 9")
    assert rows["micro batch (per GPU)"][0] == 8192 and rows["mini-batches (optimizer steps) per generation round"][0] == 1


def test_a_trainer_under_another_name_is_not_built(lint):
    text = config().replace("trainer = RLColocateTrainerConfig(", "rl_cfg = RLColocateTrainerConfig(")
    assert lint("rl_grpo.py", text).framework is None
