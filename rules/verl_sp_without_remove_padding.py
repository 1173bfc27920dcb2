"""
## What it does
Flags a verl config that turns on Ulysses sequence parallelism
(`ulysses_sequence_parallel_size` > 1) without remove-padding: the FSDP
actor with `actor_rollout_ref.model.use_remove_padding: false`, an FSDP
critic without `critic.model.use_remove_padding: true` (its default is
false), or the SFT trainer without the top-level `use_remove_padding: true`
(default false).

## Why is this bad?
verl's Ulysses implementation slices the unpadded (remove-padding) token
stream across the sp ranks; with padded batches it has nothing to slice, so
verl refuses to start ("When using sequence parallelism ..., you must enable
`use_remove_padding`"). It holds whatever the GPU count. An early copy of
verl in the project (TinyZero's and its forks') has no such check: it patches
Ulysses in only with remove padding and otherwise starts without a word, so
such a project is not told its job refuses to start.

## Example
```yaml
actor_rollout_ref:
  model:
    use_remove_padding: false
  actor:
    ulysses_sequence_parallel_size: 2
```

## Use instead
```yaml
actor_rollout_ref:
  model:
    use_remove_padding: true
  actor:
    ulysses_sequence_parallel_size: 2
```

## Source
verl/workers/config/actor.py:300-308 @ b178a3c (FSDP actor);
verl/workers/config/critic.py:202-211 (FSDP critic); defaults
verl/trainer/config/model/hf_model.yaml:40 (true) and critic/dp_critic.yaml
(false); verl/trainer/fsdp_sft_trainer.py:231-232 (SFT).
"""

from collections.abc import Iterator

from batchlint.frameworks import verl
from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    settings = verl.ppo(plan)
    if settings is not None:
        if not settings.checks_sp_remove_padding:  # an early copy of verl: it starts, and says nothing
            return
        roles = [settings.actor] + ([settings.critic] if settings.critic else [])
        for role in roles:
            if role.fsdp:
                yield from _check(role.sp, role.remove_padding, role.name)
        return
    padding = verl.sft_remove_padding(plan)
    if padding is not None:
        yield from _check(plan.parallel.get("sp"), padding, "SFT trainer")


def _check(sp, padding, who):
    if sp is None or not sp.known or sp.value <= 1 or padding.value is not False:
        return
    at_fault = padding if padding.span is not None else sp
    if at_fault.span is None:
        return
    yield Finding(
        span=at_fault.span,
        message=(
            f"the {who} uses Ulysses sequence parallelism ({sp.describe()}) with {padding.describe()}: "
            f"verl slices only unpadded sequences across sp ranks and refuses to start"
        ),
        fix=f"set {padding.key}: true, or {sp.key}: 1",
        related=tuple(Related(f"{f.key} = {f.value}", f.span) for f in (sp, padding) if f.span and f is not at_fault),
    )


_PPO = """\
defaults:
  - ppo_trainer
  - _self_
actor_rollout_ref:
  model:
    use_remove_padding: {padding}
  actor:
    ulysses_sequence_parallel_size: 2
"""

_SFT = """\
data:
  train_batch_size: 256
  micro_batch_size_per_gpu: 4
model:
  partial_pretrain: Qwen/Qwen2.5-0.5B-Instruct
ulysses_sequence_parallel_size: 2
use_remove_padding: {padding}
"""

RULE = Rule(
    code="BL240",
    name="verl-sp-without-remove-padding",
    severity="error",
    summary="verl: Ulysses sequence parallelism without use_remove_padding",
    check=check,
    frameworks=("verl",),
    doc=__doc__,
    examples=(
        Example("actor_sp_padded.yaml", _PPO.format(padding="false"), flagged=(6,)),
        Example("actor_sp_unpadded.yaml", _PPO.format(padding="true")),
        # The critic's remove-padding defaults to false (critic/dp_critic.yaml).
        Example(
            "critic_sp.yaml",
            "defaults:\n  - ppo_trainer\nactor_rollout_ref:\n  rollout:\n    n: 1\ncritic:\n"
            "  ulysses_sequence_parallel_size: 2\n",
            flagged=(7,),
        ),
        Example(
            "critic_sp_unpadded.yaml",
            "defaults:\n  - ppo_trainer\nactor_rollout_ref:\n  rollout:\n    n: 1\ncritic:\n"
            "  ulysses_sequence_parallel_size: 2\n  model:\n    use_remove_padding: true\n",
        ),
        Example("sft_sp_padded.yaml", _SFT.format(padding="False"), flagged=(7,)),
        Example("sft_sp_unpadded.yaml", _SFT.format(padding="True")),
    ),
)
