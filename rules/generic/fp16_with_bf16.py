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

By release: DeepSpeed reads a `bfloat16` section and refuses it beside fp16
from 0.5.5, the `bf16` spelling from 0.6.0 (before, the section is not read
and nothing is refused); transformers has `bf16` (and refuses it beside
`fp16`) from 4.13.0 (a config writing `bf16` runs on no older release).
Every TRL release whose configs are TrainingArguments requires a transformers
that refuses it.

## Source
DeepSpeed: runtime/config.py:808 @ 0.5.5 (first: 0.5.4 has no bf16 at all;
the section is "bfloat16", constants.py:121, until 0.5.10), config.py:901 and
constants.py:121-122 ("bf16", "bfloat16" kept) @ 0.6.0, config.py:511-512 @
0.19.8. transformers: training_args.py:802 @ 4.13.0 (4.12.5 has no `bf16`),
1750 @ 4.57.1, 1785 @ 5.24.0. Megatron-LM (arguments.py) asserts the same;
LLaMA-Factory and ms-swift build on transformers' TrainingArguments.
"""

from collections.abc import Iterator

from batchlint.frameworks.releases import DEEPSPEED, TRANSFORMERS, TRL
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

# One premise per framework whose start-up refuses the pair and whose release batchlint weighs; the plans
# of other frameworks (Megatron-LM, LLaMA-Factory, ms-swift: no releases listed) are not gated.
DEEPSPEED_BF16 = Premise(
    DEEPSPEED, name="DeepSpeed bf16", since="0.6.0", frameworks=("deepspeed",),
    source="v0.5.10 deepspeed/runtime/constants.py:121 (the section read is \"bfloat16\": \"bf16\" is ignored); "
           "v0.6.0 runtime/config.py:901, constants.py:121 (first); v0.19.8 runtime/config.py:511-512 (still)")
DEEPSPEED_BFLOAT16 = Premise(
    DEEPSPEED, name="DeepSpeed bfloat16", since="0.5.5", frameworks=("deepspeed",),
    source="v0.5.4 deepspeed/runtime (no bfloat16 section, no check); v0.5.5 runtime/config.py:808 (first); "
           "v0.19.8 runtime/config.py:511-512, precision_config.py (\"bfloat16\" read when there is no \"bf16\") (still)")
HF = Premise(
    TRANSFORMERS, name="transformers", since="4.13.0", runs_since="4.13.0", frameworks=("transformers",),
    source="v4.12.5 transformers/training_args.py (no bf16 field: a config writing bf16 is refused as an unknown "
           "key, so it runs from 4.13.0 only); v4.13.0 training_args.py:802 (first); "
           "v5.24.0 training_args.py:1785 (still)")
TRL_CONFIGS = Premise(
    TRL, name="TRL", frameworks=("trl",),
    source="TRL 0.1.0 has no TrainingArguments configs (trl/core.py, gpt2.py, ppo.py only); v0.2.0 setup.py:63 "
           "requires transformers>=4.18.0, v1.16.0 transformers>=4.56.2 (METADATA): each refuses the pair "
           "(transformers training_args.py:802 @ 4.13.0 on)")


def check(plan: TrainingPlan) -> Iterator[Finding]:
    fp16, bf16 = plan.fp16, plan.bf16
    if fp16 is None or bf16 is None or fp16.value is not True or bf16.value is not True:
        return
    related = (Related(f"{fp16.key} enabled here", fp16.span),) if fp16.span else ()
    if plan.framework == "deepspeed":
        premise = (DEEPSPEED_BFLOAT16 if bf16.key.startswith("bfloat16") else DEEPSPEED_BF16).name
    else:
        premise = {"transformers": HF.name, "trl": TRL_CONFIGS.name}.get(plan.framework, "")
    yield Finding(
        span=bf16.span,
        message=f"{fp16.key} and {bf16.key} are both enabled",
        notes=("only one mixed precision can be in force, and the job refuses to start with both",),
        fix=f"keep {bf16.key} (on GPUs that support it) and turn {fp16.key} off, or the reverse",
        related=related,
        premise=premise,
    )


_HF = "output_dir: out\nper_device_train_batch_size: 2\nfp16: true\nbf16: true\n"

RULE = Rule(
    code="BL501",
    name="fp16-with-bf16",
    severity="error",
    summary="fp16 and bf16 enabled together",
    check=check,
    needs=("fp16", "bf16"),
    premises=(DEEPSPEED_BF16, DEEPSPEED_BFLOAT16, HF, TRL_CONFIGS),
    doc=__doc__,
    examples=(
        # Every transformers release that has bf16 (4.13 on) refuses it beside fp16; older ones refuse the key.
        Example("hf_both.yaml", _HF, flagged=(4,),
                message="fp16 and bf16 are both enabled",
                fix="keep bf16 (on GPUs that support it) and turn fp16 off, or the reverse"),
        Example("hf_both_pinned.yaml", _HF, flagged=(4,),
                files=(("requirements.txt", "transformers==4.13.0\n"),),
                severity="error",
                message="fp16 and bf16 are both enabled",
                fix="keep bf16 (on GPUs that support it) and turn fp16 off, or the reverse"),
        Example("hf_both_pinned_old.yaml", _HF, files=(("requirements.txt", "transformers==4.12.5\n"),)),
        Example("hf_bf16.yaml", """\
output_dir: out
per_device_train_batch_size: 2
fp16: false
bf16: true
"""),
        # No DeepSpeed release pinned: before 0.6.0 a "bf16" section is not read.
        Example("ds_both.json", """\
{
  "train_micro_batch_size_per_gpu": 2,
  "fp16": {"enabled": true},
  "bf16": {"enabled": true}
}
""", flagged=(4,),
                severity="info",
                message="fp16.enabled and bf16.enabled are both enabled",
                fix="keep bf16.enabled (on GPUs that support it) and turn fp16.enabled off, or the reverse"),
        Example("ds_both_pinned.json", """\
{
  "train_micro_batch_size_per_gpu": 2,
  "fp16": {"enabled": true},
  "bf16": {"enabled": true}
}
""", flagged=(4,),
                files=(("requirements.txt", "deepspeed==0.6.0\n"),),
                severity="error",
                message="fp16.enabled and bf16.enabled are both enabled",
                fix="keep bf16.enabled (on GPUs that support it) and turn fp16.enabled off, or the reverse"),
        Example("ds_both_pinned_old.json", """\
{
  "train_micro_batch_size_per_gpu": 2,
  "fp16": {"enabled": true},
  "bf16": {"enabled": true}
}
""", files=(("requirements.txt", "deepspeed==0.5.10\n"),)),
        Example("ds_bfloat16_pinned.json", """\
{
  "train_micro_batch_size_per_gpu": 2,
  "fp16": {"enabled": true},
  "bfloat16": {"enabled": true}
}
""", flagged=(4,),
                files=(("requirements.txt", "deepspeed==0.5.5\n"),),
                severity="error",
                message="fp16.enabled and bfloat16.enabled are both enabled",
                fix="keep bfloat16.enabled (on GPUs that support it) and turn fp16.enabled off, or the reverse"),
        Example("ds_bfloat16_pinned_old.json", """\
{
  "train_micro_batch_size_per_gpu": 2,
  "fp16": {"enabled": true},
  "bfloat16": {"enabled": true}
}
""", files=(("requirements.txt", "deepspeed==0.5.4\n"),)),
        Example("ds_auto.json", """\
{
  "train_micro_batch_size_per_gpu": 2,
  "fp16": {"enabled": "auto"},
  "bf16": {"enabled": true}
}
"""),
        Example("megatron_both.sh", """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --micro-batch-size 1 --global-batch-size 64 --fp16 --bf16
""", flagged=(2,),
                message="--fp16 and --bf16 are both enabled",
                fix="keep --bf16 (on GPUs that support it) and turn --fp16 off, or the reverse"),
        Example("megatron_bf16.sh", """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --micro-batch-size 1 --global-batch-size 64 --bf16
"""),
        Example("trl_both.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 4
num_generations: 8
bf16: true
fp16: true
""", flagged=(4,),
                message="fp16 and bf16 are both enabled",
                fix="keep bf16 (on GPUs that support it) and turn fp16 off, or the reverse"),
        Example("trl_bf16.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 4
num_generations: 8
bf16: true
fp16: false
"""),
        Example("llamafactory_both.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
stage: sft
finetuning_type: lora
per_device_train_batch_size: 2
bf16: true
fp16: true
""", flagged=(5,),
                message="fp16 and bf16 are both enabled",
                fix="keep bf16 (on GPUs that support it) and turn fp16 off, or the reverse"),
        Example("llamafactory_bf16.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
stage: sft
finetuning_type: lora
per_device_train_batch_size: 2
bf16: true
fp16: false
"""),
    ),
)
