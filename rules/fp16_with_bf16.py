"""
## What it does
Flags a config that enables fp16 and bf16 mixed precision together
(DeepSpeed `fp16.enabled` with `bf16.enabled`, Hugging Face `fp16: true`
with `bf16: true`).

## Why is this bad?
The two are exclusive: DeepSpeed asserts "bf16 and fp16 modes cannot be
simultaneously enabled" and transformers raises in TrainingArguments'
validation, both at start-up.

## Example
```yaml
fp16: true
bf16: true
```

## Use instead
```yaml
bf16: true
```

## Source
deepspeed/runtime/config.py (bf16 and fp16 cannot be simultaneously enabled);
transformers/training_args.py (`--bf16` and `--fp16` cannot be used together).
"""

from collections.abc import Iterator

from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    fp16, bf16 = plan.fp16, plan.bf16
    if fp16 is None or bf16 is None or fp16.value is not True or bf16.value is not True:
        return
    related = (Related(f"{fp16.key} enabled here", fp16.span),) if fp16.span else ()
    yield Finding(
        span=bf16.span,
        message=f"{fp16.key} and {bf16.key} are both enabled; only one mixed precision can be: the job refuses to start",
        fix=f"keep {bf16.key} (on GPUs that support it) and turn {fp16.key} off, or the reverse",
        related=related,
    )


_MEGATRON = """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --micro-batch-size 1 --global-batch-size 64 {flags}
"""

_TRL = """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 4
num_generations: 8
bf16: true
fp16: {fp16}
"""

_LLAMAFACTORY = """\
model_name_or_path: Qwen/Qwen2.5-0.5B
stage: sft
finetuning_type: lora
per_device_train_batch_size: 2
bf16: true
fp16: {fp16}
"""

RULE = Rule(
    code="BL501",
    name="fp16-with-bf16",
    severity="error",
    summary="fp16 and bf16 enabled together",
    check=check,
    needs=("fp16", "bf16"),
    doc=__doc__,
    examples=(
        Example("hf_both.yaml", "output_dir: out\nper_device_train_batch_size: 2\nfp16: true\nbf16: true\n", flagged=(4,)),
        Example("hf_bf16.yaml", "output_dir: out\nper_device_train_batch_size: 2\nfp16: false\nbf16: true\n"),
        Example(
            "ds_both.json",
            '{\n  "train_micro_batch_size_per_gpu": 2,\n  "fp16": {"enabled": true},\n  "bf16": {"enabled": true}\n}\n',
            flagged=(4,),
        ),
        Example(
            "ds_auto.json",
            '{\n  "train_micro_batch_size_per_gpu": 2,\n  "fp16": {"enabled": "auto"},\n  "bf16": {"enabled": true}\n}\n',
        ),
        Example("megatron_both.sh", _MEGATRON.format(flags="--fp16 --bf16"), flagged=(2,)),
        Example("megatron_bf16.sh", _MEGATRON.format(flags="--bf16")),
        Example("trl_both.yaml", _TRL.format(fp16="true"), flagged=(4,)),
        Example("trl_bf16.yaml", _TRL.format(fp16="false")),
        Example("llamafactory_both.yaml", _LLAMAFACTORY.format(fp16="true"), flagged=(5,)),
        Example("llamafactory_bf16.yaml", _LLAMAFACTORY.format(fp16="false")),
    ),
)
