"""
## What it does
Flags ZeRO offload settings the configured `zero_optimization.stage` does not
use: `offload_param` (or the deprecated `cpu_offload_param`) with a device
other than "none" below stage 3, and `offload_optimizer` (or the deprecated
`cpu_offload`) at stage 0. Only a stage written as a number is judged. The same
for an accelerate config with `distributed_type: DEEPSPEED` and no DeepSpeed
config file: its DeepSpeedPlugin writes `deepspeed_config.zero_stage` and the
`offload_*_device` keys into `zero_optimization` as they are.

## Why is this bad?
Only stage 3 partitions the parameters, so only stage 3 hands `offload_param`
to its optimizer: at stages 0-2 DeepSpeed ignores it without a word and the
parameters stay on the GPU - the memory you planned to free is not freed.
Stage 0 builds no ZeRO optimizer at all, so nothing moves the optimizer state
off the GPU; DeepSpeed still selects its CPU optimizer for the offload, which
then refuses the GPU-resident parameters ("CPUAdam param is on cuda:0 and
must be 'cpu'") or, with an optimizer of your own, stops at start-up unless
`zero_force_ds_cpu_optimizer` is false.

## Example
```json
{
  "train_micro_batch_size_per_gpu": 4,
  "zero_optimization": {
    "stage": 2,
    "offload_param": {"device": "cpu"}
  }
}
```

## Use instead
```json
{
  "train_micro_batch_size_per_gpu": 4,
  "zero_optimization": {
    "stage": 3,
    "offload_param": {"device": "cpu"}
  }
}
```
or, to stay at stage 2, offload the optimizer state instead
(`"offload_optimizer": {"device": "cpu"}`).

## Source
deepspeed/runtime/zero/config.py:164-176 (offload_param "valid only with stage
3", offload_optimizer "valid for ZeRO stage 1, 2, 3"), 188-220 (deprecated
spellings); runtime/engine.py:2655-2709 (stages 1-2 build their optimizer
without `offload_param_config`), 2297 and 2358 (stage 0 builds no ZeRO
optimizer), 1562 and 2384 (`zero_use_cpu_optimizer` picks the CPU optimizer);
ops/adam/cpu_adam.py:148 @ 0.19.8. accelerate's DeepSpeedPlugin:
utils/dataclasses.py:437-456 @ v0.16.0 and 1281-1315 @ v1.14.0 (zero_stage ->
zero_optimization.stage, offload_param_device -> offload_param.device). In every release: stages 0-2 never hand
`offload_param` on (engine.py `_configure_zero_optimizer` passes it to stage 3
only, from v0.3.12's `cpu_offload_param` and v0.3.15's `offload_param` on; in
releases before they are unknown keys, ignored too), and stage 0 builds no
ZeRO optimizer; `cpu_offload` picks DeepSpeedCPUAdam from v0.3.1 on
(engine.py:598 @ 0.3.1), `offload_optimizer` from v0.3.15. CPUAdam refuses GPU
parameters from v0.5.10 (cpu_adam.py, "segfault guard"); before, it crashes on
them.
"""

from collections.abc import Iterator

from batchlint.frameworks.deepspeed import ZeRO
from batchlint.plan import Fact, TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule


def check(plan: TrainingPlan, zero: ZeRO) -> Iterator[Finding]:
    stage = zero.stage
    level = stage.number if stage is not None else None  # always one of 0-3 (ZeRO)
    if stage is None or level is None:
        return
    related = (Related(f"{stage.key} = {stage.value}", stage.span),)
    if level < 3 and (offload := zero.offload_param):
        yield Finding(
            span=offload.span,
            message=f"{_shown(offload)} has no effect at ZeRO stage {stage.value}",
            notes=("only stage 3 partitions, and so offloads, the parameters; DeepSpeed ignores the parameter "
                   "offload silently and they stay on the GPU",),
            fix=f"set {stage.key} to 3 to offload the parameters, or remove the parameter offload",
            related=related,
        )
    if level == 0 and (offload := zero.offload_optimizer):
        yield Finding(
            span=offload.span,
            message=f"{_shown(offload)} needs ZeRO stage 1, 2 or 3, but the stage is 0",
            notes=("stage 0 builds no ZeRO optimizer, so nothing moves the optimizer state off the GPU",
                   "the CPU optimizer DeepSpeed picks for the offload fails on GPU parameters"),
            fix=f"set {stage.key} to 1 or more, or remove the optimizer offload",
            related=related,
        )


def _shown(offload: Fact) -> str:
    """`offload_param.device ("cpu")`, or the deprecated flag: `cpu_offload_param (true)`."""
    return f"{offload.key} (true)" if offload.value is True else f'{offload.key} ("{offload.value}")'


RULE = Rule(
    code="BL521",
    name="deepspeed-offload-ignored",
    severity="warning",
    summary="DeepSpeed ZeRO offload settings the chosen stage does not use",
    check=check,
    subject=ZeRO,
    every_release=(
        "no release offloads what the rule flags: from v0.3.1 to 0.19.8 only stage 3 takes offload_param "
        "(engine.py _configure_zero_optimizer @ 0.19.8:2655-2773; cpu_offload_param from v0.3.12, offload_param "
        "from v0.3.15, unknown keys before, so ignored there too) and stage 0 builds no ZeRO optimizer "
        "(engine.py:598 @ 0.3.1, :2384 @ 0.19.8 pick the CPU optimizer for the offload, which cannot step GPU "
        "parameters: refused from v0.5.10, a crash before); accelerate's DeepSpeedPlugin writes its own config's "
        "zero_stage and offload devices into zero_optimization unchanged from v0.16.0 to v1.14.0 "
        "(utils/dataclasses.py:437-456, 1281-1315)"),
    doc=__doc__,
    examples=(
        Example("accelerate_z2_param_offload.yaml", """\
compute_environment: LOCAL_MACHINE
distributed_type: DEEPSPEED
deepspeed_config:
  zero_stage: 2
  offload_optimizer_device: none
  offload_param_device: cpu
mixed_precision: bf16
num_machines: 1
num_processes: 4
""", flagged=(6,),
                message='deepspeed_config.offload_param_device ("cpu") has no effect at ZeRO stage 2',
                fix="set deepspeed_config.zero_stage to 3 to offload the parameters, or remove the parameter offload"),
        Example("accelerate_z3_param_offload.yaml", """\
compute_environment: LOCAL_MACHINE
distributed_type: DEEPSPEED
deepspeed_config:
  zero_stage: 3
  offload_optimizer_device: none
  offload_param_device: cpu
mixed_precision: bf16
num_machines: 1
num_processes: 4
"""),
        # No zero_stage written: the plugin takes it from the environment, else 2; not judged.
        Example("accelerate_unwritten_stage_param_offload.yaml", """\
compute_environment: LOCAL_MACHINE
distributed_type: DEEPSPEED
deepspeed_config:
  offload_param_device: cpu
mixed_precision: bf16
num_machines: 1
num_processes: 4
"""),
        Example("ds_z2_param_offload.json", """\
{
  "train_micro_batch_size_per_gpu": 4,
  "zero_optimization": {
    "stage": 2,
    "offload_param": {"device": "cpu"}
  }
}
""", flagged=(5,),
                message='zero_optimization.offload_param.device ("cpu") has no effect at ZeRO stage 2',
                fix="set zero_optimization.stage to 3 to offload the parameters, or remove the parameter offload"),
        Example("ds_z3_param_offload.json", """\
{
  "train_micro_batch_size_per_gpu": 4,
  "zero_optimization": {
    "stage": 3,
    "offload_param": {"device": "cpu"}
  }
}
"""),
        Example("ds_z2_no_param_offload.json", """\
{
  "train_micro_batch_size_per_gpu": 4,
  "zero_optimization": {
    "stage": 2,
    "offload_param": {"device": "none"}
  }
}
"""),
        Example("ds_z0_optimizer_offload.json", """\
{
  "train_micro_batch_size_per_gpu": 4,
  "zero_optimization": {
    "stage": 0,
    "offload_optimizer": {"device": "nvme"}
  }
}
""", flagged=(5,),
                message='zero_optimization.offload_optimizer.device ("nvme") needs ZeRO stage 1, 2 or 3, '
                        'but the stage is 0',
                fix="set zero_optimization.stage to 1 or more, or remove the optimizer offload"),
        Example("ds_z1_optimizer_offload.json", """\
{
  "train_micro_batch_size_per_gpu": 4,
  "zero_optimization": {
    "stage": 1,
    "offload_optimizer": {"device": "nvme"}
  }
}
"""),
        Example("ds_z2_deprecated.json", """\
{
  "train_batch_size": 8,
  "zero_optimization": {
    "stage": 2,
    "cpu_offload_param": true
  }
}
""", flagged=(5,),
                message="zero_optimization.cpu_offload_param (true) has no effect at ZeRO stage 2",
                fix="set zero_optimization.stage to 3 to offload the parameters, or remove the parameter offload"),
        Example("ds_z3_deprecated.json", """\
{
  "train_batch_size": 8,
  "zero_optimization": {
    "stage": 3,
    "cpu_offload_param": true
  }
}
"""),
    ),
)
