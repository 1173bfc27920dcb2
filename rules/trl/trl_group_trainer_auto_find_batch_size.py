"""
## What it does
Flags `auto_find_batch_size: true` in a TRL GRPO or RLOO config (one with
`num_generations`, or read by a program that runs GRPOTrainer).

## Why is this bad?
`auto_find_batch_size` makes the Trainer halve the per-device batch after an
out-of-memory error, but GRPO and RLOO derive the generation batch from it,
which must hold whole groups of `num_generations` completions: once halved,
the rewards no longer group by prompt and training fails with "shape
'[-1, N]' is invalid". From TRL 1.9.0 GRPOConfig and RLOOConfig refuse the
option when the config is built ("auto_find_batch_size is not supported by
GRPO"), at start-up, after the job has its GPUs.

## Example
```yaml
per_device_train_batch_size: 8
num_generations: 4
auto_find_batch_size: true
```

## Use instead
```yaml
per_device_train_batch_size: 4     # what fits, set by hand
num_generations: 4
```

## Source
TRL v1.9.0 trl/trainer/grpo_config.py:1065-1072 and trl/trainer/rloo_config.py:633-638
(first: `if self.auto_find_batch_size: raise ValueError`, PR #6411); v1.8.0 grpo_config.py
has no such check; 1.16.0 (PyPI wheel) grpo_config.py:1086-1093, rloo_config.py:649-656
(still).
"""

from collections.abc import Iterator

from batchlint.frameworks.hf import TRLSettings
from batchlint.frameworks.releases import TRL
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

REFUSED = Premise(
    TRL, since="1.9.0",
    source="v1.9.0 trl/trainer/grpo_config.py:1065-1072, rloo_config.py:633-638 (first); 1.16.0 "
           "grpo_config.py:1086-1093, rloo_config.py:649-656 (still)")


def check(plan: TrainingPlan, trl: TRLSettings) -> Iterator[Finding]:
    halving, rl = trl.auto_find_batch_size, plan.rl
    if halving is None or rl is None or rl.samples_per_prompt is None:
        return  # not a GRPO/RLOO config, or the option is off
    samples = rl.samples_per_prompt
    yield Finding(
        span=halving.span,
        message="auto_find_batch_size is on in a GRPO/RLOO config: TRL refuses it",
        notes=("the Trainer halves the per-device batch on out-of-memory, and the generation batch made from it "
               f"would no longer hold whole groups of {samples.describe()}",),
        fix="remove auto_find_batch_size, and set per_device_train_batch_size to what fits",
        related=(Related(f"{samples.describe()}", samples.span),) if samples.span else (),
    )


RULE = Rule(
    code="BL562",
    name="trl-group-trainer-auto-find-batch-size",
    severity="error",
    summary="TRL GRPO/RLOO: auto_find_batch_size, which would halve the batch below whole groups",
    check=check,
    subject=TRLSettings,
    needs=(),
    premises=(REFUSED,),
    doc=__doc__,
    examples=(
        Example("grpo_auto_batch.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
per_device_train_batch_size: 8
num_generations: 4
auto_find_batch_size: true
""", flagged=(4,), files=(("requirements.txt", "trl==1.9.0\n"),),
                message="auto_find_batch_size is on in a GRPO/RLOO config: TRL refuses it",
                fix="remove auto_find_batch_size, and set per_device_train_batch_size to what fits"),
        Example("grpo_auto_batch_release_unknown.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
per_device_train_batch_size: 8
num_generations: 4
auto_find_batch_size: true
""", flagged=(4,), severity="info",
                message="auto_find_batch_size is on in a GRPO/RLOO config: TRL refuses it",
                fix="remove auto_find_batch_size, and set per_device_train_batch_size to what fits"),
        Example("grpo_auto_batch_before_the_check.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
per_device_train_batch_size: 8
num_generations: 4
auto_find_batch_size: true
""", files=(("requirements.txt", "trl==1.8.0\n"),)),
        Example("grpo_batch_by_hand.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
per_device_train_batch_size: 4
num_generations: 4
auto_find_batch_size: false
""", files=(("requirements.txt", "trl==1.9.0\n"),)),
        Example("sft_auto_batch.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
per_device_train_batch_size: 8
packing: true
auto_find_batch_size: true
""", files=(("requirements.txt", "trl==1.9.0\n"),)),
    ),
)
