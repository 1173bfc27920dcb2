"""
## What it does
Flags a LLaMA-Factory config that enables `neat_packing` for a stage other
than `sft` (`stage` defaults to `sft`).

## Why is this bad?
Neat packing (packing without cross-attention between the packed samples) is
implemented for supervised fine-tuning only: `get_train_args` raises
"`neat_packing` cannot be set as True except SFT." when the job starts.

## Example
```yaml
stage: pt
neat_packing: true
```

## Use instead
```yaml
stage: pt
packing: true   # stage pt packs by default anyway
```

## Source
LLaMA-Factory ff6d4d1: src/llamafactory/hparams/parser.py:418-423
(`get_train_args`); stage default hparams/finetuning_args.py:460-463.
"""

from collections.abc import Iterator

from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    neat, current = plan.settings.neat_packing, plan.settings.stage
    if neat is None or neat.value is not True or current.value in ("sft", None):
        return
    yield Finding(
        span=neat.span,
        message=f"neat_packing is enabled with stage {current.value} (line {current.span.line}); LLaMA-Factory supports it "
                f"for stage sft only and refuses to start",
        fix="remove neat_packing (use packing: true; stage pt packs by default)",
        related=(Related(f"stage = {current.value}", current.span),),
    )


_CONFIG = """\
model_name_or_path: Qwen/Qwen3-4B-Instruct-2507
stage: {stage}
do_train: true
finetuning_type: lora
dataset: c4_demo
cutoff_len: 2048
neat_packing: true
per_device_train_batch_size: 1
gradient_accumulation_steps: 8
"""

RULE = Rule(
    code="BL353",
    name="llamafactory-neat-packing-stage",
    severity="error",
    summary="LLaMA-Factory: neat_packing outside stage sft",
    check=check,
    needs=("settings",),
    frameworks=("llamafactory",),
    doc=__doc__,
    examples=(
        Example("pt_neat.yaml", _CONFIG.format(stage="pt"), flagged=(7,)),
        Example("sft_neat.yaml", _CONFIG.format(stage="sft")),
    ),
)
