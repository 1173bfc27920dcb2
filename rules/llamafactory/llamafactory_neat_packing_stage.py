"""
## What it does
Flags a LLaMA-Factory config that enables `neat_packing` for a stage other
than `sft` (`stage` defaults to `sft`).

## Why is this bad?
Neat packing (packing without cross-attention between the packed samples) is
implemented for supervised fine-tuning only: `get_train_args` raises
"`neat_packing` cannot be set as True except SFT." when the job starts
(from 0.8.3, the release that added `neat_packing`).

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
LLaMA-Factory v0.9.5: src/llamafactory/hparams/parser.py:316-321
(`get_train_args`); stage default hparams/finetuning_args.py:460-463. First in
v0.8.3 (parser.py:169-170, the release that added `neat_packing`; v0.8.2 has
no such argument).
"""

from collections.abc import Iterator

from batchlint.frameworks.llamafactory import LlamaFactorySettings
from batchlint.frameworks.releases import LLAMAFACTORY
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

SFT_ONLY = Premise(
    LLAMAFACTORY, since="0.8.3", runs_since="0.8.3",
    source="v0.8.2 src/llamafactory/hparams/data_args.py (no neat_packing: it cannot run such a config); v0.8.3 "
           "src/llamafactory/hparams/parser.py:169-170 (first); v0.9.5 parser.py:316-321 (still)")


def check(plan: TrainingPlan, llamafactory: LlamaFactorySettings) -> Iterator[Finding]:
    neat, current = llamafactory.neat_packing, llamafactory.stage
    if neat is None or neat.value is not True or current.value in ("sft", None) or current.span is None:
        return  # a stage other than sft is written: it has a line
    yield Finding(
        span=neat.span,
        message=f"neat_packing is enabled with stage {current.value} (line {current.span.line}); it is for sft only",
        notes=("LLaMA-Factory supports neat_packing for stage sft only and refuses to start",),
        fix="remove neat_packing (use packing: true; stage pt packs by default)",
        related=(Related(f"stage = {current.value}", current.span),),
    )


RULE = Rule(
    code="BL353",
    name="llamafactory-neat-packing-stage",
    severity="error",
    summary="LLaMA-Factory: neat_packing outside stage sft",
    check=check,
    subject=LlamaFactorySettings,
    premises=(SFT_ONLY,),
    doc=__doc__,
    examples=(
        # No release pinned: every release with neat_packing (0.8.3 on) refuses it.
        Example("pt_neat.yaml", """\
model_name_or_path: Qwen/Qwen3-4B-Instruct-2507
stage: pt
do_train: true
finetuning_type: lora
dataset: c4_demo
cutoff_len: 2048
neat_packing: true
per_device_train_batch_size: 1
gradient_accumulation_steps: 8
""", flagged=(7,), severity="error",
                message="neat_packing is enabled with stage pt (line 2); it is for sft only",
                fix="remove neat_packing (use packing: true; stage pt packs by default)"),
        Example("pt_neat_pinned.yaml", """\
model_name_or_path: Qwen/Qwen3-4B-Instruct-2507
stage: pt
do_train: true
finetuning_type: lora
dataset: c4_demo
cutoff_len: 2048
neat_packing: true
per_device_train_batch_size: 1
gradient_accumulation_steps: 8
""", flagged=(7,), files=(("requirements.txt", "llamafactory>=0.9\n"),), severity="error",
                message="neat_packing is enabled with stage pt (line 2); it is for sft only",
                fix="remove neat_packing (use packing: true; stage pt packs by default)"),
        Example("pt_neat_old.yaml", """\
model_name_or_path: Qwen/Qwen3-4B-Instruct-2507
stage: pt
do_train: true
finetuning_type: lora
dataset: c4_demo
cutoff_len: 2048
neat_packing: true
per_device_train_batch_size: 1
gradient_accumulation_steps: 8
""", files=(("requirements.txt", "llamafactory==0.8.2\n"),)),
        Example("sft_neat.yaml", """\
model_name_or_path: Qwen/Qwen3-4B-Instruct-2507
stage: sft
do_train: true
finetuning_type: lora
dataset: c4_demo
cutoff_len: 2048
neat_packing: true
per_device_train_batch_size: 1
gradient_accumulation_steps: 8
"""),
    ),
)
