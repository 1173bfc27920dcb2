"""
## What it does
Checks the batch of TRL's first RLOOTrainer (TRL 0.9 to 0.21, the one with
`rloo_k`): each process's batch, `per_device_train_batch_size` x
`gradient_accumulation_steps` x `num_mini_batches`, must be a whole number
of prompts of `rloo_k` samples each.

## Why is this bad?
RLOOTrainer divides that batch by `rloo_k` to know how many prompts each
process draws, and refuses an inexact division when it is built, after the
job has its GPUs: "ValueError: `local_batch_size` must be a multiple of
rloo_k, inexact division". `rloo_k` defaults to 2, so a per-device batch of 1
without accumulation fails even where `rloo_k` is not changed; this rule
speaks only where `rloo_k` is written (no other TRL config has it), and only
where the project pins a release that has this trainer.

From TRL 0.22.0 `rloo_k` is a deprecated name of `num_generations` (0.26.0
removes it), and RLOOTrainer is GRPO's kind, judged by BL170.

## Example
```yaml
per_device_train_batch_size: 1
gradient_accumulation_steps: 2
rloo_k: 4                  # 1 x 2 x 1 = 2 samples per process: half a prompt
```

## Use instead
```yaml
per_device_train_batch_size: 1
gradient_accumulation_steps: 4
rloo_k: 4                  # 1 x 4 x 1 = 4: one prompt of 4 samples
```

## Source
TRL v0.9.3 trl/trainer/rloo_trainer.py:90-116 (`local_batch_size` =
per_device_train_batch_size x gradient_accumulation_steps x num_mini_batches;
`exact_div(local_batch_size, rloo_k, ...)`), trl/trainer/rloo_config.py:76
(`rloo_k: int = 2`); v0.21.0 rloo_trainer.py:129-150, rloo_config.py:87-90
(last); v0.22.0 rloo_config.py:588-613 (`rloo_k` deprecated for
num_generations).
"""

from collections.abc import Iterator
from math import gcd

from batchlint.frameworks.hf import TRLSettings
from batchlint.frameworks.releases import TRL
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

REFUSED = Premise(
    TRL, since="0.9.3", until="0.21.0",
    source="v0.9.3 trl/trainer/rloo_trainer.py:90-116 (first tag; exact_div of local_batch_size by rloo_k); "
           "v0.21.0 rloo_trainer.py:129-150 (last); v0.22.0 rloo_config.py:588-613 (rloo_k maps to num_generations)")


def check(plan: TrainingPlan, trl: TRLSettings) -> Iterator[Finding]:
    rloo = trl.rloo
    if rloo is None or rloo.local_batch is None:
        return
    samples, local = rloo.samples.count, rloo.local_batch.count
    if samples is None or local is None or local % samples == 0:
        return
    accumulation = plan.grad_accum
    scaled = accumulation.count * (samples // gcd(local, samples)) if accumulation and accumulation.count else None
    related = tuple(Related(f"{fact.describe()}", fact.span) for fact in (plan.micro_batch, accumulation)
                    if fact is not None and fact.span is not None)
    yield Finding(
        span=rloo.samples.span,
        message=f"the per-process batch {rloo.local_batch.value} is not a multiple of rloo_k = {samples}",
        notes=(f"local_batch_size = {rloo.local_batch.detail} = {local}; RLOOTrainer splits it into prompts "
               f"of {samples} samples",
               f"{local} / {samples} is not whole: RLOOTrainer raises ValueError when it is built"),
        fix=(f"set gradient_accumulation_steps to {scaled}" if scaled else
             f"make the per-process batch a multiple of {samples}") + f", or rloo_k to a divisor of {local}",
        related=related,
    )


RULE = Rule(
    code="BL171",
    name="trl-rloo-batch-not-multiple-of-k",
    severity="error",
    summary="TRL's first RLOOTrainer: the per-process batch is not a whole number of rloo_k samples",
    check=check,
    subject=TRLSettings,
    needs=(),
    premises=(REFUSED,),
    doc=__doc__,
    examples=(
        Example("rloo_half_a_prompt.yaml", """\
model_name_or_path: EleutherAI/pythia-1b-deduped
output_dir: models/rloo
per_device_train_batch_size: 1
gradient_accumulation_steps: 2
rloo_k: 4
""", flagged=(5,), files=(("requirements.txt", "trl==0.19.0\n"),),
                message="the per-process batch 2 is not a multiple of rloo_k = 4",
                fix="set gradient_accumulation_steps to 4, or rloo_k to a divisor of 2"),
        Example("rloo_release_unknown.yaml", """\
model_name_or_path: EleutherAI/pythia-1b-deduped
output_dir: models/rloo
per_device_train_batch_size: 1
gradient_accumulation_steps: 2
rloo_k: 4
"""),  # no release pinned: the check is gone from 0.22.0 on, so nothing is said
        Example("rloo_mini_batches.yaml", """\
model_name_or_path: EleutherAI/pythia-1b-deduped
output_dir: models/rloo
per_device_train_batch_size: 2
gradient_accumulation_steps: 1
num_mini_batches: 3
rloo_k: 4
""", flagged=(6,), files=(("requirements.txt", "trl==0.12.2\n"),),
                message="the per-process batch 6 is not a multiple of rloo_k = 4",
                fix="set gradient_accumulation_steps to 2, or rloo_k to a divisor of 6"),
        Example("rloo_one_prompt.yaml", """\
model_name_or_path: EleutherAI/pythia-1b-deduped
output_dir: models/rloo
per_device_train_batch_size: 1
gradient_accumulation_steps: 4
rloo_k: 4
""", files=(("requirements.txt", "trl==0.19.0\n"),)),
        Example("rloo_two_mini_batches.yaml", """\
model_name_or_path: EleutherAI/pythia-1b-deduped
output_dir: models/rloo
per_device_train_batch_size: 2
gradient_accumulation_steps: 1
num_mini_batches: 2
rloo_k: 4
""", files=(("requirements.txt", "trl==0.12.2\n"),)),
        Example("rloo_k_renamed.yaml", """\
model_name_or_path: EleutherAI/pythia-1b-deduped
output_dir: models/rloo
per_device_train_batch_size: 1
gradient_accumulation_steps: 2
rloo_k: 4
""", files=(("requirements.txt", "trl==0.23.0\n"),)),
    ),
)
