"""
## What it does
Checks OpenRLHF's non-Ray PPO trainer (`deepspeed --module openrlhf.cli.train_ppo`):
one round's samples, `--rollout_batch_size` x `--n_samples_per_prompt`, trained
`--max_epochs` times, must fill at least one `--train_batch_size`.

## Why is this bad?
Each round generates its samples, trains on them in micro batches of
`--micro_train_batch_size`, then clears its replay buffer; DeepSpeed steps the
optimizer only every `--train_batch_size` samples (gradient accumulation =
train batch // (micro x W)), counting micro batches across rounds. A train
batch larger than a round's samples therefore accumulates gradients of
several rollouts, made by different policies, into one optimizer step: the
job runs, but it is not the on-policy PPO step the numbers suggest, and the
advantage normalisation of each round no longer matches the step. Nothing
checks it.

## Example
```bash
deepspeed --module openrlhf.cli.train_ppo \\
   --rollout_batch_size 32 \\
   --n_samples_per_prompt 1 \\
   --train_batch_size 128     # 4 rounds per optimizer step
```

## Use instead
```bash
deepspeed --module openrlhf.cli.train_ppo \\
   --rollout_batch_size 128 \\
   --n_samples_per_prompt 1 \\
   --train_batch_size 128
```

By release: the non-Ray trainer exists from the first release batchlint knows
(0.3.6) to 0.6.1.post1 (0.6.2 removes openrlhf/cli/train_ppo.py).
train_ppo_ray is not judged here.

## Source
openrlhf/trainer/ppo_trainer.py:180-189 @ v0.3.6 (`ppo_train`, then
`replay_buffer.clear()`), :244-245 @ v0.6.1.post1; openrlhf/cli/train_ppo.py:279-300
@ v0.3.6 and :305-326 @ v0.6.1.post1 (defaults: rollout 512, n 1, train 128,
max_epochs 1); openrlhf/utils/deepspeed/deepspeed.py:238-239 @ v0.6.1.post1
(DeepSpeed's train_batch_size).
"""

from collections.abc import Iterator

from batchlint.frameworks import openrlhf
from batchlint.frameworks.openrlhf import OpenRLHFSettings
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

NON_RAY = Premise(
    openrlhf.DISTRIBUTION, until="0.6.1.post1", name="train_ppo",
    source="v0.3.6 openrlhf/trainer/ppo_trainer.py:180-189 (first); v0.6.1.post1 ppo_trainer.py:244-245 (last); "
           "v0.6.2 has no openrlhf/cli/train_ppo.py")


def check(plan: TrainingPlan, args: OpenRLHFSettings) -> Iterator[Finding]:
    if args.entry != "train_ppo" or plan.rl is None:
        return
    rl, root = plan.rl, plan.document.root
    prompts, samples, train = rl.prompts_per_step, rl.samples_per_prompt, rl.mini_batch
    epochs = openrlhf.number(root.get("max_epochs"), "--max_epochs", default=1)
    if prompts is None or samples is None or train is None:
        return
    p, n, t, e = prompts.count, samples.count, train.count, epochs.count
    if p is None or n is None or t is None or e is None:
        return
    per_round = p * n * e
    if per_round >= t:
        return
    at_fault = next((f for f in (train, prompts) if f.span is not None), None)
    if at_fault is None:
        return
    made = f"{prompts.describe()} x {samples.describe()}" + (f" x {epochs.describe()}" if e > 1 else "")
    rounds = -(-t // per_round)
    yield Finding(
        span=at_fault.span,
        message=f"train batch {t} spans about {rounds} rollouts of {per_round} samples each",
        notes=(f"one round makes {made} = {per_round} samples, fewer than {train.describe()}",
               f"DeepSpeed steps the optimizer every {t} samples across rounds, so each step accumulates about "
               f"{rounds} rollouts made by different policies (the replay buffer is cleared after each round)"),
        fix=f"set {train.key} to at most {per_round} (a divisor of it), or raise {prompts.key} so that one round holds it",
        related=tuple(Related(f"{f.key} = {f.value}", f.span) for f in (prompts, samples, train)
                      if f.span is not None and f is not at_fault),
        premise=NON_RAY.name,
    )


RULE = Rule(
    code="BL270",
    name="openrlhf-ppo-train-batch-spans-rollouts",
    severity="warning",
    summary="OpenRLHF train_ppo: a train batch larger than one rollout's samples (one step mixes rollouts)",
    check=check,
    subject=OpenRLHFSettings,
    needs=("rl.prompts_per_step",),
    premises=(NON_RAY,),
    doc=__doc__,
    examples=(
        Example("ppo_mixed.sh", """\
deepspeed --num_gpus 8 --module openrlhf.cli.train_ppo \\
   --pretrain OpenRLHF/Llama-3-8b-sft-mixture \\
   --micro_train_batch_size 2 \\
   --train_batch_size 128 \\
   --micro_rollout_batch_size 4 \\
   --rollout_batch_size 32 \\
   --max_epochs 1
""", flagged=(4,), files=(("requirements.txt", "openrlhf==0.5.9\n"),), severity="warning",
                message="train batch 128 spans about 4 rollouts of 32 samples each",
                fix="set --train_batch_size to at most 32 (a divisor of it), or raise --rollout_batch_size so that one "
                    "round holds it"),
        Example("ppo_one_round.sh", """\
deepspeed --num_gpus 8 --module openrlhf.cli.train_ppo \\
   --pretrain OpenRLHF/Llama-3-8b-sft-mixture \\
   --micro_train_batch_size 2 \\
   --train_batch_size 128 \\
   --micro_rollout_batch_size 4 \\
   --rollout_batch_size 128 \\
   --max_epochs 1
""", files=(("requirements.txt", "openrlhf==0.5.9\n"),)),
        # No release pinned: 0.6.2 on has no train_ppo, so nothing is said.
        Example("ppo_mixed_unpinned.sh", """\
deepspeed --num_gpus 8 --module openrlhf.cli.train_ppo \\
   --pretrain OpenRLHF/Llama-3-8b-sft-mixture \\
   --micro_train_batch_size 2 \\
   --train_batch_size 128 \\
   --micro_rollout_batch_size 4 \\
   --rollout_batch_size 32 \\
   --max_epochs 1
"""),
    ),
)
