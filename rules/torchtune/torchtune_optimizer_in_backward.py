"""
## What it does
Flags torchtune's `optimizer_in_bwd: True` together with
`gradient_accumulation_steps` > 1, or with gradient clipping (`clip_grad_norm`
set to anything but null), in the recipes that refuse them: full finetuning
(single device and distributed), QAT (distributed), full DPO, early exit and
PPO (PPO checks accumulation only). LoRA, knowledge-distillation and GRPO
recipes ignore the flag and are not flagged.

By release: the single-device full recipe refuses accumulation from 0.1.0,
the PPO recipe from 0.3.0 (its first); clipping there, and both in
full_finetune_distributed, from 0.4.0 (before, that recipe did not read the
flag); qat_distributed and early exit from 0.5.0, full DPO from 0.6.0 (its
first). A compiled optimizer step (`compile: True`) beside the flag is refused
only on torchtune's unreleased main branch (and by qat_single_device, which is
main-only too): it is not flagged.

## Why is this bad?
With the optimizer in the backward pass each parameter is updated as soon as
its gradient exists: there is no moment when gradients of several micro
batches are summed, or when the total norm is known. The recipes raise
"Gradient accumulation is not supported with optimizer in bwd." and
"Gradient clipping is not supported with optimizer in bwd." at start-up.

## Example
```yaml
optimizer_in_bwd: True  # True saves memory. Requires gradient_accumulation_steps=1
gradient_accumulation_steps: 8
```

## Use instead
```yaml
optimizer_in_bwd: True
gradient_accumulation_steps: 1
```

## Source
recipes/full_finetune_single_device.py:117-121 @ v0.1.0 (accumulation) and
:147-157 @ v0.4.0 and v0.6.1; full_finetune_distributed.py:157-167 @ v0.4.0,
:186-196 @ v0.6.1; qat_distributed.py:165-175 and
dev/early_exit_finetune_distributed.py:196-206 @ v0.5.0 and v0.6.1;
full_dpo_distributed.py:146-156 @ v0.6.0 and v0.6.1;
ppo_full_finetune_single_device.py:311-315 @ v0.3.0, :410-414 @ v0.6.1.
"""

from __future__ import annotations

from collections.abc import Iterator

from batchlint.frameworks.releases import TORCHTUNE
from batchlint.frameworks.torchtune import TorchtuneSettings, traits
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

SINGLE_DEVICE = Premise(
    TORCHTUNE, name="single-device accumulation", since="0.1.0",
    source="0.0.1 (commit 95a2f00) recipes/full_finetune_single_device.py reads no optimizer_in_bwd; v0.1.0 "
           "recipes/full_finetune_single_device.py:117-121 (first); v0.6.1 recipes/full_finetune_single_device.py:153-157 (still)")
PPO = Premise(
    TORCHTUNE, name="PPO accumulation", since="0.3.0", runs_since="0.3.0",  # the recipe's first release
    source="v0.2.1 has no PPO recipe; v0.3.0 recipes/ppo_full_finetune_single_device.py:311-315 (first); "
           "v0.6.1 recipes/ppo_full_finetune_single_device.py:410-414 (still)")
FULL = Premise(
    TORCHTUNE, name="full finetuning", since="0.4.0",
    source="v0.3.1 recipes/full_finetune_distributed.py reads no optimizer_in_bwd, full_finetune_single_device.py "
           "has no clipping check; v0.4.0 recipes/full_finetune_distributed.py:157-167, full_finetune_single_device.py:"
           "147-152 (first); v0.6.1 recipes/full_finetune_distributed.py:186-196, full_finetune_single_device.py:147-152 (still)")
QAT_EARLY_EXIT = Premise(
    TORCHTUNE, name="QAT and early exit", since="0.5.0",
    source="v0.4.0 recipes/qat_distributed.py reads no optimizer_in_bwd and has no early-exit recipe; v0.5.0 "
           "recipes/qat_distributed.py:165-175, dev/early_exit_finetune_distributed.py:196-206 (first); v0.6.1 "
           "recipes/qat_distributed.py:165-175, dev/early_exit_finetune_distributed.py:196-206 (still)")
FULL_DPO = Premise(
    TORCHTUNE, name="full DPO", since="0.6.0", runs_since="0.6.0",  # the recipe's first release
    source="v0.5.0 has no full_dpo_distributed.py; v0.6.0 recipes/full_dpo_distributed.py:146-156 (first); "
           "v0.6.1 recipes/full_dpo_distributed.py:146-156 (still)")


def _windows(found: set[str]) -> tuple[Optional[Premise], Optional[Premise]]:
    """(the premise of the accumulation check, of the clipping check) of the recipe the config is
    for; None where no release of it refuses."""
    if "ppo" in found:
        return PPO, None
    if "dpo" in found:
        return FULL_DPO, FULL_DPO
    if "early_exit" in found:
        return QAT_EARLY_EXIT, QAT_EARLY_EXIT
    if "quantizer" in found:  # qat_single_device exists on main only
        return (None, None) if "single_device" in found else (QAT_EARLY_EXIT, QAT_EARLY_EXIT)
    if "single_device" in found:
        return SINGLE_DEVICE, FULL
    return FULL, FULL


def check(plan: TrainingPlan, torchtune: TorchtuneSettings) -> Iterator[Finding]:
    settings = torchtune.optimizer_in_bwd
    in_bwd = settings.enabled if settings is not None else None
    if settings is None or in_bwd is None or in_bwd.value is not True or in_bwd.span is None:
        return
    accumulation, clipping = _windows(traits(plan.document))
    related = (Related("optimizer_in_bwd: True", in_bwd.span),)
    ga = plan.grad_accum
    steps = ga.number if ga is not None else None
    if accumulation is not None and ga is not None and steps is not None and steps > 1 and ga.span is not None:
        yield Finding(
            span=ga.span,
            message=f"{ga.key} is {steps}, but optimizer_in_bwd is True (line {in_bwd.span.line})",
            notes=("optimizer_in_bwd steps the optimizer inside every backward pass, so no gradient can "
                   "accumulate: the recipe refuses to start",),
            fix=f"set {ga.key}: 1 (raise batch_size instead), or optimizer_in_bwd: False",
            related=related,
            premise=accumulation.name,
        )
    # settings.compiled_step (compile beside it) is refused on torchtune's main branch only: not judged.
    clip = settings.clip_grad_norm
    if clipping is not None and clip is not None:
        shown = "set" if clip.value is None else clip.value
        yield Finding(
            span=clip.span,
            message=f"clip_grad_norm is {shown}, but optimizer_in_bwd is True (line {in_bwd.span.line})",
            notes=("optimizer_in_bwd updates each parameter before the total gradient norm is known: "
                   "the recipe refuses to start",),
            fix="set clip_grad_norm: null, or optimizer_in_bwd: False",
            related=related,
            premise=clipping.name,
        )


RULE = Rule(
    code="BL512",
    name="torchtune-optimizer-in-backward",
    severity="error",
    summary="torchtune: optimizer_in_bwd with gradient accumulation or gradient clipping",
    check=check,
    subject=TorchtuneSettings,
    premises=(SINGLE_DEVICE, PPO, FULL, QAT_EARLY_EXIT, FULL_DPO),
    doc=__doc__,
    examples=(
        # No release pinned: full_finetune_distributed (this config's recipe) reads the flag from 0.4.0 on.
        Example("tune_in_bwd_ga8.yaml", """\
model:
  _component_: torchtune.models.llama3_2.llama3_2_1b
optimizer:
  _component_: bitsandbytes.optim.PagedAdamW8bit
  lr: 2e-5
batch_size: 4
clip_grad_norm: null
optimizer_in_bwd: True  # True saves memory. Requires gradient_accumulation_steps=1
gradient_accumulation_steps: 8
""", flagged=(9,),
                message="gradient_accumulation_steps is 8, but optimizer_in_bwd is True (line 8)",
                fix="set gradient_accumulation_steps: 1 (raise batch_size instead), or optimizer_in_bwd: False",
                severity="info"),
        Example("tune_in_bwd_ga8_pinned.yaml", """\
model:
  _component_: torchtune.models.llama3_2.llama3_2_1b
optimizer:
  _component_: bitsandbytes.optim.PagedAdamW8bit
  lr: 2e-5
batch_size: 4
clip_grad_norm: null
optimizer_in_bwd: True  # True saves memory. Requires gradient_accumulation_steps=1
gradient_accumulation_steps: 8
""", flagged=(9,),
                message="gradient_accumulation_steps is 8, but optimizer_in_bwd is True (line 8)",
                fix="set gradient_accumulation_steps: 1 (raise batch_size instead), or optimizer_in_bwd: False",
                files=(("requirements.txt", "torchtune==0.4.0\n"),),
                severity="error"),
        Example("tune_in_bwd_ga8_before.yaml", """\
model:
  _component_: torchtune.models.llama3_2.llama3_2_1b
optimizer:
  _component_: bitsandbytes.optim.PagedAdamW8bit
  lr: 2e-5
batch_size: 4
clip_grad_norm: null
optimizer_in_bwd: True  # True saves memory. Requires gradient_accumulation_steps=1
gradient_accumulation_steps: 8
""", files=(("requirements.txt", "torchtune==0.3.1\n"),)),
        Example("tune_in_bwd_ga1.yaml", """\
model:
  _component_: torchtune.models.llama3_2.llama3_2_1b
optimizer:
  _component_: bitsandbytes.optim.PagedAdamW8bit
  lr: 2e-5
batch_size: 4
clip_grad_norm: null
optimizer_in_bwd: True  # True saves memory. Requires gradient_accumulation_steps=1
gradient_accumulation_steps: 1
"""),
        Example("tune_in_bwd_clip.yaml", """\
model:
  _component_: torchtune.models.llama3_2.llama3_2_1b
optimizer:
  _component_: bitsandbytes.optim.PagedAdamW8bit
  lr: 2e-5
batch_size: 4
clip_grad_norm: 1.0
optimizer_in_bwd: True  # True saves memory. Requires gradient_accumulation_steps=1
gradient_accumulation_steps: 1
""", flagged=(7,),
                message="clip_grad_norm is 1.0, but optimizer_in_bwd is True (line 8)",
                fix="set clip_grad_norm: null, or optimizer_in_bwd: False",
                severity="info"),
        Example("tune_in_bwd_clip_pinned.yaml", """\
model:
  _component_: torchtune.models.llama3_2.llama3_2_1b
optimizer:
  _component_: bitsandbytes.optim.PagedAdamW8bit
  lr: 2e-5
batch_size: 4
clip_grad_norm: 1.0
optimizer_in_bwd: True  # True saves memory. Requires gradient_accumulation_steps=1
gradient_accumulation_steps: 1
""", flagged=(7,),
                message="clip_grad_norm is 1.0, but optimizer_in_bwd is True (line 8)",
                fix="set clip_grad_norm: null, or optimizer_in_bwd: False",
                files=(("requirements.txt", "torchtune==0.6.1\n"),),
                severity="error"),
        # The single-device recipe refuses accumulation from 0.1.0, clipping from 0.4.0.
        Example("tune_single_device_ga8.yaml", """\
# Config for single device full finetuning in full_finetune_single_device.py
model:
  _component_: torchtune.models.llama3_2.llama3_2_1b
optimizer:
  _component_: bitsandbytes.optim.PagedAdamW8bit
  lr: 2e-5
batch_size: 4
clip_grad_norm: null
optimizer_in_bwd: True  # True saves memory. Requires gradient_accumulation_steps=1
gradient_accumulation_steps: 8
""", flagged=(10,),
                message="gradient_accumulation_steps is 8, but optimizer_in_bwd is True (line 9)",
                fix="set gradient_accumulation_steps: 1 (raise batch_size instead), or optimizer_in_bwd: False",
                files=(("requirements.txt", "torchtune==0.1.0\n"),),
                severity="error"),
        Example("tune_single_device_clip_0_3.yaml", """\
# Config for single device full finetuning in full_finetune_single_device.py
model:
  _component_: torchtune.models.llama3_2.llama3_2_1b
optimizer:
  _component_: bitsandbytes.optim.PagedAdamW8bit
  lr: 2e-5
batch_size: 4
clip_grad_norm: 1.0
optimizer_in_bwd: True  # True saves memory. Requires gradient_accumulation_steps=1
gradient_accumulation_steps: 1
""", files=(("requirements.txt", "torchtune==0.3.1\n"),)),
        # A compiled optimizer step beside it is refused on torchtune's main branch only.
        Example("tune_in_bwd_compile.yaml", """\
model:
  _component_: torchtune.models.llama3_2.llama3_2_1b
optimizer:
  _component_: bitsandbytes.optim.PagedAdamW8bit
  lr: 2e-5
batch_size: 4
clip_grad_norm: null
optimizer_in_bwd: True  # True saves memory. Requires gradient_accumulation_steps=1
gradient_accumulation_steps: 1
compile: True
""", files=(("requirements.txt", "torchtune==0.6.1\n"),)),
        Example("tune_in_bwd_compile_model.yaml", """\
model:
  _component_: torchtune.models.llama3_2.llama3_2_1b
optimizer:
  _component_: bitsandbytes.optim.PagedAdamW8bit
  lr: 2e-5
batch_size: 4
clip_grad_norm: null
optimizer_in_bwd: True  # True saves memory. Requires gradient_accumulation_steps=1
gradient_accumulation_steps: 1
compile:
  model: True
  optimizer_step: False
"""),
        # LoRA recipes never read optimizer_in_bwd.
        Example("tune_lora_in_bwd_ga8.yaml", """\
model:
  _component_: torchtune.models.llama3_2.lora_llama3_2_1b
optimizer:
  _component_: bitsandbytes.optim.PagedAdamW8bit
  lr: 2e-5
batch_size: 4
clip_grad_norm: null
optimizer_in_bwd: True  # True saves memory. Requires gradient_accumulation_steps=1
gradient_accumulation_steps: 8
"""),
    ),
)
