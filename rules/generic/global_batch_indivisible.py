"""
## What it does
Flags a declared global batch that the rest of the layout cannot divide:
TorchTitan's `global_batch_size` against `local_batch_size` x dp,
DeepSpeed's `train_batch_size` when one of the other two batch keys is left
for DeepSpeed to derive by floor division, and LLM Foundry's
`global_train_batch_size` against the world size (it derives the per-device
batch from it and splits that into micro batches, the last one shorter if need
be). Where the world size is unknown it reports only what fails for every
world size.

## Why is this bad?
These frameworks derive gradient accumulation (or the micro batch) from the
global batch, then check the result: TorchTitan asserts
`global_batch_size % (local_batch_size * dp) == 0`, DeepSpeed floors
`train_batch_size // micro // W` and then asserts the product is exact. Either
way the job dies at start-up, after it waited in the queue.

## Example
```toml
[training]
local_batch_size = 8
global_batch_size = 100   # 8 x dp 4 = 32 does not divide 100
```

## Use instead
```toml
[training]
local_batch_size = 8
global_batch_size = 96
```

## Source
torchtitan/train.py (v0.1.0 :197-203, v0.2.2 :201-209; 0.3.0 trainer.py:420-427);
deepspeed/runtime/config.py `_set_batch_related_parameters` and `_batch_assertion`
(v0.3.1 :566-622, v0.19.8 :590-640); llmfoundry/utils/config_utils.py
`calculate_batch_size_info` (v0.1.0 :12-18, v0.22.0 :425-441); Megatron-LM
megatron/microbatches.py:64 (0.1.0), megatron/core/num_microbatches_calculator.py:340
(core_v0.16.1); NeMo megatron_init.py (1.7.0 to 2.5.0); verl fsdp_sft_trainer.py
`_normalize_config_bsz` (v0.2 to v0.7.0); ms-swift megatron_args.py (3.x: Megatron-LM's).

By release (the premises below): TorchTitan from 0.1.0, which brought
`global_batch_size`; NeMo 1.7.0-2.5.0; verl's SFT trainer 0.2-0.7.0; ms-swift's
Megatron schema all but 4.0.0-4.0.1 (which floor it silently); the others always.
"""

from collections.abc import Iterator

from batchlint.frameworks.releases import MS_SWIFT, NEMO, TORCHTITAN, VERL
from batchlint.plan import Fact, Origin, TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

# DeepSpeed (v0.3.1 runtime/config.py:566-622 to v0.19.8 :590-640), LLM Foundry (v0.1.0
# config_utils.py:12-18 to v0.22.0 :425-441), Megatron-LM (0.1.0 megatron/microbatches.py:64 to
# core_v0.16.1 num_microbatches_calculator.py:340), OpenRLHF (DeepSpeed's assertion on the
# train_batch_size it passes, x ring x tp where those flags exist: v0.3.6 utils/deepspeed.py:200 to 0.11.2
# utils/deepspeed/deepspeed.py:456) and XTuner v1 (v1.0.0rc0 train/trainer.py:630-636, v1.0.1 :890-896)
# refuse it in every release: no premise, not gated.
TITAN = Premise(
    TORCHTITAN, name="TorchTitan", since="0.1.0", runs_since="0.1.0", frameworks=("torchtitan",),
    source="0.0.2 (main before 0.1.0) has no global_batch_size (torchtitan/config_manager.py: training.batch_size "
           "only; key and check came together in 8570415c3); v0.1.0 torchtitan/train.py:197-203 (first); v0.2.2 "
           "torchtitan/train.py:201-209; 0.3.0 torchtitan/trainer.py:420-427 (still; config registries, no TOML)")
NEMO_MEGATRON = Premise(
    NEMO, name="NeMo", since="1.7.0", runs_since="1.7.0", until="2.5.0", runs_until="2.5.0", frameworks=("nemo",),
    source="v1.6.2 megatron_gpt_model.py:298 (no global_batch_size: W x micro_batch_size / tp); v1.7.0 "
           "nemo/collections/nlp/modules/common/megatron/megatron_init.py:81-85 (first: apex's microbatch "
           "calculator, apex/transformer/microbatches.py:87 asserts); 2.5.0 megatron_init.py:169-202 (last: "
           "megatron-core's, decrease_batch_size_if_needed=False); 2.5.1 has no nemo/collections/nlp/models")
VERL_SFT = Premise(
    VERL, name="verl SFT", since="0.2", until="0.7.0", runs_until="0.7.0", frameworks=("verl",),
    source="v0.1 verl/trainer/fsdp_sft_trainer.py:86-87 (train_batch_size and data.micro_batch_size each % dp, no "
           "per-GPU micro batch); v0.2 verl/trainer/fsdp_sft_trainer.py:115-119 (first); v0.7.0 "
           "verl/trainer/fsdp_sft_trainer.py:149-155 (last); 0.7.1 has no fsdp_sft_trainer.py (sft_trainer.py "
           "reads no model.partial_pretrain)")
SWIFT_MEGATRON = Premise(
    MS_SWIFT, name="ms-swift Megatron", since="3.2.2", runs_since="3.2.2", gaps=("4.0.0", "4.0.1"),
    frameworks=("swift-megatron",),
    source="v3.2.1 has no swift/megatron; v3.2.2 swift/megatron/train/sft.py:75 (first: Megatron-LM's pretrain, "
           "whose microbatch calculator asserts); v4.0.0 and v4.0.1 swift/megatron/arguments/megatron_args.py:672 "
           "floor it without a check (the job trains a smaller global batch); v4.0.2 megatron_args.py:689; 4.6.0 "
           "megatron_args.py:1003 (still)")


def check(plan: TrainingPlan) -> Iterator[Finding]:
    declared, derived = plan.declared_global_batch, plan.derived_from_global
    total = declared.count if declared is not None else None
    if declared is None or total is None:
        return  # a global batch below 1 is BL104's
    if derived == "device_batch":
        yield from _per_device(plan, declared, total)
        return
    other = plan.micro_batch if derived == "grad_accum" else plan.grad_accum
    each = other.count if other is not None else None
    if other is None or each is None:
        return
    derived_name = "gradient accumulation" if derived == "grad_accum" else "the micro batch"
    word = "micro" if derived == "grad_accum" else "accumulation"
    dp = plan.data_parallel.count if plan.data_parallel is not None else None
    if dp is not None:
        divisor, parts, short = each * dp, f"{other.describe()} x dp ({dp})", f"{word} {each} x dp {dp}"
        every_w = ""
    else:
        factor = plan.data_parallel_factor
        multiple = factor.count if factor is not None and factor.count is not None else 1
        divisor = each * multiple
        parts = other.describe() + (f" x {factor.describe()}" if factor is not None and multiple > 1 else "")
        short = f"{word} {each}" + (f" x {factor.key} {multiple}" if factor is not None and multiple > 1 else "")
        every_w = " for any world size"
    if total % divisor == 0:
        return
    lower = total // divisor * divisor
    upper = lower + divisor
    suggestions = " or ".join(str(v) for v in (lower, upper) if v > 0)
    related = (Related(f"{other.key} = {other.value}", other.span),) if other.span else ()
    yield Finding(
        span=declared.span,
        message=f"{declared.key} {total} is not a multiple of {divisor} ({short}){every_w}",
        notes=(f"{parts} = {divisor}",
               f"{derived_name} is derived from {declared.key} by floor division, and the job refuses to start "
               f"on a remainder"),
        fix=f"set {declared.key} to a multiple of {divisor} ({suggestions})",
        related=related,
    )


def _per_device(plan: TrainingPlan, declared: Fact, total: int) -> Iterator[Finding]:
    """The per-device batch is global / W; with W unknown any global batch fits W = 1."""
    world = plan.world_size
    size = world.count if world is not None else None
    if world is None or size is None or total % size == 0:
        return
    lower = total // size * size
    suggestions = " or ".join(str(v) for v in (lower, lower + size) if v > 0)
    # A W written in a file (a job's GPU count) is pointed at; a launch line's is noted by the engine.
    related = (Related(f"W = {size}", world.span, world.span.path),) \
        if world.span and world.origin is Origin.FILE else ()
    yield Finding(
        span=declared.span,
        message=f"{declared.key} {total} is not a multiple of the world size {size}",
        notes=(f"W is {world.describe()}",
               f"the per-device batch is {declared.key} / W, and the job refuses to start on a remainder"),
        fix=f"set {declared.key} to a multiple of {size} ({suggestions})",
        related=related,
    )


RULE = Rule(
    code="BL103",
    name="global-batch-indivisible",
    severity="error",
    summary="a declared global batch that micro batch x dp cannot divide",
    check=check,
    needs=("declared_global_batch", "derived_from_global"),
    premises=(TITAN, NEMO_MEGATRON, VERL_SFT, SWIFT_MEGATRON),
    doc=__doc__,
    examples=(
        # W=8, tp=2 -> dp_shard = 4; 8 x 4 = 32 does not divide 100.
        Example("titan_indivisible.toml", """\
[job]
description = "llama3 8b"

[training]
local_batch_size = 8
global_batch_size = 100
seq_len = 8192

[parallelism]
data_parallel_replicate_degree = 1
data_parallel_shard_degree = -1
tensor_parallel_degree = 2
""", flagged=(6,), world_size=8,
                message="[training] global_batch_size 100 is not a multiple of 32 (micro 8 x dp 4)",
                fix="set [training] global_batch_size to a multiple of 32 (96 or 128)"),
        Example("titan_divisible.toml", """\
[job]
description = "llama3 8b"

[training]
local_batch_size = 8
global_batch_size = 96
seq_len = 8192

[parallelism]
data_parallel_replicate_degree = 1
data_parallel_shard_degree = -1
tensor_parallel_degree = 2
""", world_size=8),
        # Without W only what fails for every W: 8 does not divide 100.
        Example("titan_any_w.toml", """\
[job]
description = "llama3 8b"

[training]
local_batch_size = 8
global_batch_size = 100
seq_len = 8192

[parallelism]
data_parallel_replicate_degree = 1
data_parallel_shard_degree = -1
tensor_parallel_degree = 2
""", flagged=(6,),
                message="[training] global_batch_size 100 is not a multiple of 8 (micro 8) for any world size",
                fix="set [training] global_batch_size to a multiple of 8 (96 or 104)"),
        Example("titan_unknown_w.toml", """\
[job]
description = "llama3 8b"

[training]
local_batch_size = 8
global_batch_size = 104
seq_len = 8192

[parallelism]
data_parallel_replicate_degree = 1
data_parallel_shard_degree = -1
tensor_parallel_degree = 2
"""),
        Example("ds_floor.json", """\
{
  "train_batch_size": 100,
  "train_micro_batch_size_per_gpu": 4,
  "zero_optimization": {"stage": 2}
}
""", flagged=(2,), world_size=8,
                message="train_batch_size 100 is not a multiple of 32 (micro 4 x dp 8)",
                fix="set train_batch_size to a multiple of 32 (96 or 128)"),
        Example("ds_exact.json", """\
{
  "train_batch_size": 96,
  "train_micro_batch_size_per_gpu": 4,
  "zero_optimization": {"stage": 2}
}
""", world_size=8),
        Example("ds_alone.json", """\
{
  "train_batch_size": 12,
  "steps_per_print": 10
}
""", flagged=(2,), world_size=8,
                message="train_batch_size 12 is not a multiple of 8 (accumulation 1 x dp 8)",
                fix="set train_batch_size to a multiple of 8 (8 or 16)"),
        # 6 does not divide 256; 8 does (micro 8 x 8 = 64 need not divide it: micro batches split the device batch).
        Example("foundry_indivisible.yaml", """\
max_seq_len: 2048
model:
  name: mpt_causal_lm
train_loader:
  name: text
global_train_batch_size: 256
device_train_microbatch_size: 8
""", flagged=(6,), world_size=6,
                message="global_train_batch_size 256 is not a multiple of the world size 6",
                fix="set global_train_batch_size to a multiple of 6 (252 or 258)"),
        Example("foundry_divisible.yaml", """\
max_seq_len: 2048
model:
  name: mpt_causal_lm
train_loader:
  name: text
global_train_batch_size: 40
device_train_microbatch_size: 8
""", world_size=8),
        Example("foundry_unknown_w.yaml", """\
max_seq_len: 2048
model:
  name: mpt_causal_lm
train_loader:
  name: text
global_train_batch_size: 100
device_train_microbatch_size: 8
"""),
        # TorchTitan: global_batch_size and its check came in 0.1.0 (0.0.2 has neither).
        Example("titan_pinned_0_2_2.toml", """\
[job]
description = "llama3 8b"

[training]
local_batch_size = 8
global_batch_size = 100
seq_len = 8192

[parallelism]
data_parallel_replicate_degree = 1
data_parallel_shard_degree = -1
tensor_parallel_degree = 2
""", flagged=(6,), world_size=8, severity="error", files=(("requirements.txt", """\
torchtitan==0.2.2
"""),),
                message="[training] global_batch_size 100 is not a multiple of 32 (micro 8 x dp 4)",
                fix="set [training] global_batch_size to a multiple of 32 (96 or 128)"),
        Example("titan_pinned_0_0_2.toml", """\
[job]
description = "llama3 8b"

[training]
local_batch_size = 8
global_batch_size = 100
seq_len = 8192

[parallelism]
data_parallel_replicate_degree = 1
data_parallel_shard_degree = -1
tensor_parallel_degree = 2
""", world_size=8, files=(("requirements.txt", """\
torchtitan==0.0.2
"""),)),
        # NeMo's Megatron YAML: checked from 1.7.0 (1.6.2 has no global_batch_size) to 2.5.0 (gone in 2.5.1).
        Example("nemo_pinned_2_4_0.yaml", """\
trainer:
  devices: 8
  num_nodes: 1
model:
  micro_batch_size: 4
  global_batch_size: 100
  tensor_model_parallel_size: 2
""", flagged=(6,), severity="error", files=(("requirements.txt", """\
nemo-toolkit==2.4.0
"""),),
                message="model.global_batch_size 100 is not a multiple of 16 (micro 4 x dp 4)",
                fix="set model.global_batch_size to a multiple of 16 (96 or 112)"),
        Example("nemo_pinned_1_6_2.yaml", """\
trainer:
  devices: 8
  num_nodes: 1
model:
  micro_batch_size: 4
  global_batch_size: 100
  tensor_model_parallel_size: 2
""", files=(("requirements.txt", """\
nemo-toolkit==1.6.2
"""),)),
        Example("nemo_pinned_2_5_1.yaml", """\
trainer:
  devices: 8
  num_nodes: 1
model:
  micro_batch_size: 4
  global_batch_size: 100
  tensor_model_parallel_size: 2
""", files=(("requirements.txt", """\
nemo-toolkit==2.5.1
"""),)),
        Example("nemo_unpinned.yaml", """\
trainer:
  devices: 8
  num_nodes: 1
model:
  micro_batch_size: 4
  global_batch_size: 100
  tensor_model_parallel_size: 2
""", flagged=(6,), severity="error",
                message="model.global_batch_size 100 is not a multiple of 16 (micro 4 x dp 4)",
                fix="set model.global_batch_size to a multiple of 16 (96 or 112)"),
        Example("nemo_divisible.yaml", """\
trainer:
  devices: 8
  num_nodes: 1
model:
  micro_batch_size: 4
  global_batch_size: 96
  tensor_model_parallel_size: 2
""", files=(("requirements.txt", """\
nemo-toolkit==2.4.0
"""),)),
        # verl's fsdp_sft_trainer: 0.2 to 0.7.0 (0.1 has no micro_batch_size_per_gpu; 0.7.1 no such trainer).
        Example("verl_sft_pinned_0_4_0.yaml", """\
data:
  train_batch_size: 100
  micro_batch_size_per_gpu: 4
model:
  partial_pretrain: Qwen/Qwen2.5-0.5B
""", flagged=(2,), world_size=8, severity="error", files=(("requirements.txt", """\
verl==0.4.0
"""),),
                message="data.train_batch_size 100 is not a multiple of 32 (micro 4 x dp 8)",
                fix="set data.train_batch_size to a multiple of 32 (96 or 128)"),
        Example("verl_sft_pinned_0_1.yaml", """\
data:
  train_batch_size: 100
  micro_batch_size_per_gpu: 4
model:
  partial_pretrain: Qwen/Qwen2.5-0.5B
""", world_size=8, files=(("requirements.txt", """\
verl==0.1
"""),)),
        Example("verl_sft_pinned_0_9_1.yaml", """\
data:
  train_batch_size: 100
  micro_batch_size_per_gpu: 4
model:
  partial_pretrain: Qwen/Qwen2.5-0.5B
""", world_size=8, files=(("requirements.txt", """\
verl==0.9.1
"""),)),
        # No release pinned: 0.1 runs such a config too, without this check.
        Example("verl_sft_unpinned.yaml", """\
data:
  train_batch_size: 100
  micro_batch_size_per_gpu: 4
model:
  partial_pretrain: Qwen/Qwen2.5-0.5B
""", flagged=(2,), world_size=8, severity="info",
                message="data.train_batch_size 100 is not a multiple of 32 (micro 4 x dp 8)",
                fix="set data.train_batch_size to a multiple of 32 (96 or 128)"),
        # ms-swift's Megatron schema: from 3.2.2, but 4.0.0 and 4.0.1 floor the accumulation without a word.
        Example("swift_megatron.yaml", """\
model: Qwen/Qwen3-8B
tuner_type: lora
micro_batch_size: 2
global_batch_size: 100
""", flagged=(4,), world_size=8, severity="info",
                message="global_batch_size 100 is not a multiple of 16 (micro 2 x dp 8)",
                fix="set global_batch_size to a multiple of 16 (96 or 112)"),
        Example("swift_megatron_pinned_4_6_0.yaml", """\
model: Qwen/Qwen3-8B
tuner_type: lora
micro_batch_size: 2
global_batch_size: 100
""", flagged=(4,), world_size=8, severity="error", files=(("requirements.txt", """\
ms-swift==4.6.0
"""),),
                message="global_batch_size 100 is not a multiple of 16 (micro 2 x dp 8)",
                fix="set global_batch_size to a multiple of 16 (96 or 112)"),
        Example("swift_megatron_pinned_4_0_1.yaml", """\
model: Qwen/Qwen3-8B
tuner_type: lora
micro_batch_size: 2
global_batch_size: 100
""", world_size=8, files=(("requirements.txt", """\
ms-swift==4.0.1
"""),)),
        Example("swift_megatron_pinned_3_2_1.yaml", """\
model: Qwen/Qwen3-8B
tuner_type: lora
micro_batch_size: 2
global_batch_size: 100
""", world_size=8, files=(("requirements.txt", """\
ms-swift==3.2.1
"""),)),
        Example("swift_megatron_divisible.yaml", """\
model: Qwen/Qwen3-8B
tuner_type: lora
micro_batch_size: 2
global_batch_size: 96
""", world_size=8),
    ),
)
