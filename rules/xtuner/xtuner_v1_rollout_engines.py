"""
## What it does
Checks that an XTuner v1 RL config's rollout GPUs split into whole inference
engines. An engine takes `expert_parallel_size` GPUs when that is above 1,
else `tensor_parallel_size` (both of `RolloutConfig`); the rollout GPUs are
the trainer's `resources.num_workers` (colocated, or the W you give: `rl.py
--num-workers` replaces it) or `rollout_resources.num_workers`
(disaggregated). Silent while either is unknown.

An info, not an error: no XTuner release has this layout or this check yet.
Both came to xtuner main after v1.0.1 (RLColocateTrainerConfig: f67875de9,
2026-05-15, hours after the v1.0.1 commit, in no tag); v1.0.1's RL trainer is
RLTrainerConfig with xtuner/v1/ray/rollout/, which this rule does not read and
which raises no such error.

## Why is this bad?
The rollout controller cuts its workers into engines of that many GPUs and
raises "num_rollout_workers=... must be divisible by ..." (LMDeploy and
SGLang alike) when they do not divide; the controller actor dies and the
trainer fails before its first step. The training workers are placed and
built before the rollout, so the job dies after claiming its GPUs and
loading the weights.

## Example
```python
resources = AcceleratorResourcesConfig(accelerator="GPU", num_workers=6)
rollout_config = RolloutConfig(model_path=model_path, tensor_parallel_size=4)
```

## Use instead
```python
resources = AcceleratorResourcesConfig(accelerator="GPU", num_workers=8)
rollout_config = RolloutConfig(model_path=model_path, tensor_parallel_size=4)
```

## Source
xtuner main @ b934f46: xtuner/v1/rl/rollout/worker.py:472-474
(`num_gpus_per_engine`); xtuner/v1/rl/rollout/lmdeploy.py:159-166, 185-190;
xtuner/v1/rl/rollout/sglang.py:129-134; xtuner/v1/train/rl_trainer.py:1600-1645
(the colocated rollout is built on the training placement group after the
training workers), 1867-1880 (disaggregated: rollout_resources);
xtuner/v1/train/cli/rl.py:60-61 (`--num-workers`).
"""

from collections.abc import Iterator

from batchlint.frameworks.xtuner_v1 import XTunerV1Settings
from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule, largest_divisor


def check(plan: TrainingPlan, xtuner: XTunerV1Settings) -> Iterator[Finding]:
    rollout = xtuner.rollout
    if rollout is None or rollout.workers is None:
        return
    engine, workers = rollout.engine, rollout.workers
    size, gpus = engine.count, workers.count
    if size is None or gpus is None or gpus % size == 0:
        return
    span = engine.span or workers.span
    if span is None:
        return
    fits = largest_divisor(gpus, size)
    yield Finding(
        span=span,
        message=f"a rollout engine takes {size} GPUs, which does not divide the rollout's {gpus} GPUs",
        notes=(f"GPUs per engine: {engine.describe()}; the rollout's GPUs: {workers.describe()}",
               "XTuner v1 refuses to build the rollout engines, after the training workers have started"),
        fix=f"set {engine.key} to a divisor of {gpus} (e.g. {fits}), or give the rollout a multiple "
            f"of {size} GPUs",
        related=(Related(f"{gpus} rollout GPUs ({workers.key})", workers.span),)
        if workers.span and workers.span != span else (),
    )


RULE = Rule(
    code="BL262",
    name="xtuner-v1-rollout-engines",
    severity="info",
    summary="XTuner v1 RL: rollout GPUs that are not a whole number of engines",
    check=check,
    subject=XTunerV1Settings,
    every_release=(
        "no release has it: RLColocateTrainerConfig and the rollout engines' divisibility error exist only on "
        "xtuner main after v1.0.1 (v1.0.1 xtuner/v1/train/rl_trainer.py:76 is RLTrainerConfig, "
        "xtuner/v1/ray/rollout/lmdeploy.py:251-252 raises nothing of it), so the finding is an info for every "
        "project until a release has it"),
    doc=__doc__,
    examples=(
        Example("tp4_on_6.py", """\
import os

from xtuner.v1.config import AdamWConfig, FSDPConfig, LRConfig
from xtuner.v1.datasets.config import DataloaderConfig, DatasetConfig
from xtuner.v1.rl.agent_loop import SingleTurnAgentLoopConfig
from xtuner.v1.rl.agent_loop_manager import AgentLoopManagerConfig, SamplerConfig, TaskSpecConfig
from xtuner.v1.rl.loss import GRPOLossConfig
from xtuner.v1.rl.rollout.worker import RolloutConfig
from xtuner.v1.rl.trainer import WorkerConfig
from xtuner.v1.rl.utils import AcceleratorResourcesConfig
from xtuner.v1.train.rl_trainer import RLColocateTrainerConfig

model_path = os.environ["MODEL_PATH"]
resources = AcceleratorResourcesConfig(accelerator="GPU", num_workers=6)
rollout_config = RolloutConfig(model_path=model_path, tensor_parallel_size=4, expert_parallel_size=1)
train_worker_cfg = WorkerConfig(
    optim_cfg=AdamWConfig(lr=1e-6),
    loss_cfg=GRPOLossConfig(),
    lr_cfg=LRConfig(lr_type="constant"),
    fsdp_cfg=FSDPConfig(),
    load_from=model_path,
    pack_max_length=16384,
)
dataloader_cfg = DataloaderConfig(dataset_config_list=[], pack_level="none")
agent_loop_manager_cfg = AgentLoopManagerConfig(
    tasks=TaskSpecConfig(
        task_name="train_task",
        agent_loop_config=SingleTurnAgentLoopConfig(hf_checkpoint=model_path),
        sampler_config=SamplerConfig(dataloader_cfg=dataloader_cfg, prompt_repeat_k=8),
    ),
)
trainer = RLColocateTrainerConfig(
    resources=resources,
    train_worker_cfg=train_worker_cfg,
    rollout_config=rollout_config,
    tokenizer_path=model_path,
    agent_loop_manager_cfg=agent_loop_manager_cfg,
    load_from=model_path,
    total_epochs=1,
    train_batch_size=64,
)
""",
                flagged=(15,),
                message="a rollout engine takes 4 GPUs, which does not divide the rollout's 6 GPUs",
                fix="set tensor_parallel_size to a divisor of 6 (e.g. 3), or give the rollout a multiple of 4 GPUs"),
        Example("tp4_on_8.py", """\
import os

from xtuner.v1.config import AdamWConfig, FSDPConfig, LRConfig
from xtuner.v1.datasets.config import DataloaderConfig, DatasetConfig
from xtuner.v1.rl.agent_loop import SingleTurnAgentLoopConfig
from xtuner.v1.rl.agent_loop_manager import AgentLoopManagerConfig, SamplerConfig, TaskSpecConfig
from xtuner.v1.rl.loss import GRPOLossConfig
from xtuner.v1.rl.rollout.worker import RolloutConfig
from xtuner.v1.rl.trainer import WorkerConfig
from xtuner.v1.rl.utils import AcceleratorResourcesConfig
from xtuner.v1.train.rl_trainer import RLColocateTrainerConfig

model_path = os.environ["MODEL_PATH"]
resources = AcceleratorResourcesConfig(accelerator="GPU", num_workers=8)
rollout_config = RolloutConfig(model_path=model_path, tensor_parallel_size=4, expert_parallel_size=1)
train_worker_cfg = WorkerConfig(
    optim_cfg=AdamWConfig(lr=1e-6),
    loss_cfg=GRPOLossConfig(),
    lr_cfg=LRConfig(lr_type="constant"),
    fsdp_cfg=FSDPConfig(),
    load_from=model_path,
    pack_max_length=16384,
)
dataloader_cfg = DataloaderConfig(dataset_config_list=[], pack_level="none")
agent_loop_manager_cfg = AgentLoopManagerConfig(
    tasks=TaskSpecConfig(
        task_name="train_task",
        agent_loop_config=SingleTurnAgentLoopConfig(hf_checkpoint=model_path),
        sampler_config=SamplerConfig(dataloader_cfg=dataloader_cfg, prompt_repeat_k=8),
    ),
)
trainer = RLColocateTrainerConfig(
    resources=resources,
    train_worker_cfg=train_worker_cfg,
    rollout_config=rollout_config,
    tokenizer_path=model_path,
    agent_loop_manager_cfg=agent_loop_manager_cfg,
    load_from=model_path,
    total_epochs=1,
    train_batch_size=64,
)
"""),
        # An engine is the expert degree when it is above 1: tp no longer counts.
        Example("ep4_tp3_on_8.py", """\
import os

from xtuner.v1.config import AdamWConfig, FSDPConfig, LRConfig
from xtuner.v1.datasets.config import DataloaderConfig, DatasetConfig
from xtuner.v1.rl.agent_loop import SingleTurnAgentLoopConfig
from xtuner.v1.rl.agent_loop_manager import AgentLoopManagerConfig, SamplerConfig, TaskSpecConfig
from xtuner.v1.rl.loss import GRPOLossConfig
from xtuner.v1.rl.rollout.worker import RolloutConfig
from xtuner.v1.rl.trainer import WorkerConfig
from xtuner.v1.rl.utils import AcceleratorResourcesConfig
from xtuner.v1.train.rl_trainer import RLColocateTrainerConfig

model_path = os.environ["MODEL_PATH"]
resources = AcceleratorResourcesConfig(accelerator="GPU", num_workers=8)
rollout_config = RolloutConfig(model_path=model_path, tensor_parallel_size=3, expert_parallel_size=4)
train_worker_cfg = WorkerConfig(
    optim_cfg=AdamWConfig(lr=1e-6),
    loss_cfg=GRPOLossConfig(),
    lr_cfg=LRConfig(lr_type="constant"),
    fsdp_cfg=FSDPConfig(),
    load_from=model_path,
    pack_max_length=16384,
)
dataloader_cfg = DataloaderConfig(dataset_config_list=[], pack_level="none")
agent_loop_manager_cfg = AgentLoopManagerConfig(
    tasks=TaskSpecConfig(
        task_name="train_task",
        agent_loop_config=SingleTurnAgentLoopConfig(hf_checkpoint=model_path),
        sampler_config=SamplerConfig(dataloader_cfg=dataloader_cfg, prompt_repeat_k=8),
    ),
)
trainer = RLColocateTrainerConfig(
    resources=resources,
    train_worker_cfg=train_worker_cfg,
    rollout_config=rollout_config,
    tokenizer_path=model_path,
    agent_loop_manager_cfg=agent_loop_manager_cfg,
    load_from=model_path,
    total_epochs=1,
    train_batch_size=64,
)
"""),
        Example("ep3_on_8.py", """\
import os

from xtuner.v1.config import AdamWConfig, FSDPConfig, LRConfig
from xtuner.v1.datasets.config import DataloaderConfig, DatasetConfig
from xtuner.v1.rl.agent_loop import SingleTurnAgentLoopConfig
from xtuner.v1.rl.agent_loop_manager import AgentLoopManagerConfig, SamplerConfig, TaskSpecConfig
from xtuner.v1.rl.loss import GRPOLossConfig
from xtuner.v1.rl.rollout.worker import RolloutConfig
from xtuner.v1.rl.trainer import WorkerConfig
from xtuner.v1.rl.utils import AcceleratorResourcesConfig
from xtuner.v1.train.rl_trainer import RLColocateTrainerConfig

model_path = os.environ["MODEL_PATH"]
resources = AcceleratorResourcesConfig(accelerator="GPU", num_workers=8)
rollout_config = RolloutConfig(model_path=model_path, tensor_parallel_size=1, expert_parallel_size=3)
train_worker_cfg = WorkerConfig(
    optim_cfg=AdamWConfig(lr=1e-6),
    loss_cfg=GRPOLossConfig(),
    lr_cfg=LRConfig(lr_type="constant"),
    fsdp_cfg=FSDPConfig(),
    load_from=model_path,
    pack_max_length=16384,
)
dataloader_cfg = DataloaderConfig(dataset_config_list=[], pack_level="none")
agent_loop_manager_cfg = AgentLoopManagerConfig(
    tasks=TaskSpecConfig(
        task_name="train_task",
        agent_loop_config=SingleTurnAgentLoopConfig(hf_checkpoint=model_path),
        sampler_config=SamplerConfig(dataloader_cfg=dataloader_cfg, prompt_repeat_k=8),
    ),
)
trainer = RLColocateTrainerConfig(
    resources=resources,
    train_worker_cfg=train_worker_cfg,
    rollout_config=rollout_config,
    tokenizer_path=model_path,
    agent_loop_manager_cfg=agent_loop_manager_cfg,
    load_from=model_path,
    total_epochs=1,
    train_batch_size=64,
)
""",
                flagged=(15,),
                message="a rollout engine takes 3 GPUs, which does not divide the rollout's 8 GPUs",
                fix="set expert_parallel_size to a divisor of 8 (e.g. 2), or give the rollout a multiple of 3 GPUs"),
        # The W you give is what `rl.py --num-workers` sets.
        Example("tp2_w7.py", """\
import os

from xtuner.v1.config import AdamWConfig, FSDPConfig, LRConfig
from xtuner.v1.datasets.config import DataloaderConfig, DatasetConfig
from xtuner.v1.rl.agent_loop import SingleTurnAgentLoopConfig
from xtuner.v1.rl.agent_loop_manager import AgentLoopManagerConfig, SamplerConfig, TaskSpecConfig
from xtuner.v1.rl.loss import GRPOLossConfig
from xtuner.v1.rl.rollout.worker import RolloutConfig
from xtuner.v1.rl.trainer import WorkerConfig
from xtuner.v1.rl.utils import AcceleratorResourcesConfig
from xtuner.v1.train.rl_trainer import RLColocateTrainerConfig

model_path = os.environ["MODEL_PATH"]
resources = AcceleratorResourcesConfig(accelerator="GPU", num_workers=8)
rollout_config = RolloutConfig(model_path=model_path, tensor_parallel_size=2, expert_parallel_size=1)
train_worker_cfg = WorkerConfig(
    optim_cfg=AdamWConfig(lr=1e-6),
    loss_cfg=GRPOLossConfig(),
    lr_cfg=LRConfig(lr_type="constant"),
    fsdp_cfg=FSDPConfig(),
    load_from=model_path,
    pack_max_length=16384,
)
dataloader_cfg = DataloaderConfig(dataset_config_list=[], pack_level="none")
agent_loop_manager_cfg = AgentLoopManagerConfig(
    tasks=TaskSpecConfig(
        task_name="train_task",
        agent_loop_config=SingleTurnAgentLoopConfig(hf_checkpoint=model_path),
        sampler_config=SamplerConfig(dataloader_cfg=dataloader_cfg, prompt_repeat_k=8),
    ),
)
trainer = RLColocateTrainerConfig(
    resources=resources,
    train_worker_cfg=train_worker_cfg,
    rollout_config=rollout_config,
    tokenizer_path=model_path,
    agent_loop_manager_cfg=agent_loop_manager_cfg,
    load_from=model_path,
    total_epochs=1,
    train_batch_size=64,
)
""",
                flagged=(15,),
                world_size=7,
                message="a rollout engine takes 2 GPUs, which does not divide the rollout's 7 GPUs",
                fix="set tensor_parallel_size to a divisor of 7 (e.g. 1), or give the rollout a multiple of 2 GPUs"),
    ),
)
