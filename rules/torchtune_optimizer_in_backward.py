"""
## What it does
Flags torchtune's `optimizer_in_bwd: True` together with
`gradient_accumulation_steps` > 1, with gradient clipping (`clip_grad_norm`
set to anything but null), or, in the distributed full and QAT recipes, with
a compiled optimizer step (`compile: True`, or `compile.optimizer_step:
True`), in the recipes that read the
flag: full finetuning (single device and distributed), QAT, full DPO, early
exit and PPO (PPO checks accumulation only). LoRA, knowledge-distillation and
GRPO recipes ignore the flag and are not flagged.

## Why is this bad?
With the optimizer in the backward pass each parameter is updated as soon as
its gradient exists: there is no moment when gradients of several micro
batches are summed, or when the total norm is known, and no optimizer step
to compile. The recipes raise "Gradient accumulation is not supported with
optimizer in bwd.", "Gradient clipping is not supported with optimizer in
bwd." and "optimizer_in_bwd not supported with compiling the optimizer
step" at start-up.

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
torchtune recipes @ bd2a0fc: full_finetune_distributed.py:222-232,
full_finetune_single_device.py:151-160, qat_distributed.py:231-241,
qat_single_device.py:140-150, full_dpo_distributed.py:170-180,
dev/early_exit_finetune_distributed.py:214-224,
ppo_full_finetune_single_device.py:436-440 (accumulation only); compiled
optimizer step: full_finetune_distributed.py:343-354 and 399-403,
qat_distributed.py:351-362 and 410-414.
"""

from collections.abc import Iterator

from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    settings = plan.settings.optimizer_in_bwd
    in_bwd = settings.enabled
    if in_bwd.value is not True:
        return
    related = (Related("optimizer_in_bwd: True", in_bwd.span),)
    ga = plan.grad_accum
    if ga is not None and ga.known and ga.value > 1 and ga.span is not None:
        yield Finding(
            span=ga.span,
            message=f"{ga.key} is {ga.value}, but optimizer_in_bwd (line {in_bwd.span.line}) steps the optimizer"
                    " inside every backward pass: the recipe refuses to start",
            fix=f"set {ga.key}: 1 (raise batch_size instead), or optimizer_in_bwd: False",
            related=related,
        )
    compiled = settings.compiled_step
    if compiled is not None:
        yield Finding(
            span=compiled.span,
            message=f"compile (line {compiled.span.line}) compiles the optimizer step, which optimizer_in_bwd"
                    f" (line {in_bwd.span.line}) replaces with per-parameter hooks: the distributed recipe refuses to start",
            fix="set compile: {model: True, loss: True, optimizer_step: False}, or optimizer_in_bwd: False",
            related=related,
        )
    clip = settings.clip_grad_norm
    if clip is not None:
        shown = "set" if clip.value is None else clip.value
        yield Finding(
            span=clip.span,
            message=f"clip_grad_norm is {shown}, but optimizer_in_bwd (line {in_bwd.span.line}) updates each parameter"
                    " before the total gradient norm is known: the recipe refuses to start",
            fix="set clip_grad_norm: null, or optimizer_in_bwd: False",
            related=related,
        )


_TUNE = """\
model:
  _component_: torchtune.models.llama3_2.llama3_2_1b
optimizer:
  _component_: bitsandbytes.optim.PagedAdamW8bit
  lr: 2e-5
batch_size: 4
clip_grad_norm: {clip}
optimizer_in_bwd: True  # True saves memory. Requires gradient_accumulation_steps=1
gradient_accumulation_steps: {ga}
"""

RULE = Rule(
    code="BL512",
    name="torchtune-optimizer-in-backward",
    severity="error",
    summary="torchtune: optimizer_in_bwd with gradient accumulation or gradient clipping",
    check=check,
    needs=("settings.optimizer_in_bwd",),
    doc=__doc__,
    examples=(
        Example("tune_in_bwd_ga8.yaml", _TUNE.format(clip="null", ga=8), flagged=(9,)),
        Example("tune_in_bwd_ga1.yaml", _TUNE.format(clip="null", ga=1)),
        Example("tune_in_bwd_clip.yaml", _TUNE.format(clip=1.0, ga=1), flagged=(7,)),
        Example("tune_in_bwd_compile.yaml", _TUNE.format(clip="null", ga=1) + "compile: True\n", flagged=(10,)),
        Example("tune_in_bwd_compile_model.yaml", _TUNE.format(clip="null", ga=1) + "compile:\n  model: True\n  optimizer_step: False\n"),
        # LoRA recipes never read optimizer_in_bwd.
        Example("tune_lora_in_bwd_ga8.yaml", _TUNE.format(clip="null", ga=8).replace("llama3_2_1b", "lora_llama3_2_1b")),
    ),
)
