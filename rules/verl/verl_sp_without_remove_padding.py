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

By release: Ulysses and the checks are new in verl 0.2. The actor's check
holds to the newest release; the critic's, in its config, to 0.7.1 (0.8.0 reads
a critic's sp from `critic.fsdp`, the old key is deprecated, and remove padding
defaults to true); the SFT trainer's, to 0.7.0, the last release that runs such
a config (0.7.1 replaced fsdp_sft_trainer.py and its top-level keys with the
engine-based sft_trainer.py).

## Source
verl/workers/config/actor.py:331-341 @ 0.9.1 (FSDP actor);
verl/workers/config/critic.py:204-211 @ 0.7.1 (FSDP critic); defaults
verl/trainer/config/model/hf_model.yaml:40 (true) and critic/dp_critic.yaml
(false, @ 0.7.1); verl/trainer/fsdp_sft_trainer.py:232 @ v0.7.0 (SFT);
verl/trainer/ppo/ray_trainer.py:448-458 and fsdp_sft_trainer.py:198 @ v0.2 (first).
"""

from __future__ import annotations

from collections.abc import Iterator

from batchlint.frameworks import verl
from batchlint.frameworks.verl import VerlSettings
from batchlint.plan import Fact, TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

# ulysses_sequence_parallel_size is new in 0.2 (PPO and SFT): no earlier release runs a config that sets it.
ACTOR = Premise(
    verl.DISTRIBUTION, since="0.2", runs_since="0.2", name="actor",
    source="v0.1 verl/trainer/config/ppo_trainer.yaml (no ulysses_sequence_parallel_size); v0.2 "
           "verl/trainer/ppo/ray_trainer.py:448-453 (first); 0.9.1 verl/workers/config/actor.py:331-341 (still)")
CRITIC = Premise(
    verl.DISTRIBUTION, since="0.2", until="0.7.1", runs_since="0.2", name="critic",
    source="v0.2 verl/trainer/ppo/ray_trainer.py:455-458 (first); 0.7.1 verl/workers/config/critic.py:204-211 (last); "
           "0.8.0 verl/workers/config/critic.py:194-207 (critic.ulysses_sequence_parallel_size deprecated, "
           "critic.model.use_remove_padding defaults to true)")
# fsdp_sft_trainer.py and its top-level keys are gone after 0.7.0: no later release runs such a config.
SFT = Premise(
    verl.DISTRIBUTION, since="0.2", until="0.7.0", runs_since="0.2", runs_until="0.7.0", name="sft",
    source="v0.1 verl/trainer/config/sft_trainer.yaml (no ulysses_sequence_parallel_size); v0.2 "
           "verl/trainer/fsdp_sft_trainer.py:198 (first); v0.7.0 verl/trainer/fsdp_sft_trainer.py:232 (last); "
           "0.7.1 has no fsdp_sft_trainer.py (verl/trainer/sft_trainer.py reads model.use_remove_padding)")
COPY = verl.copy_premise("sp_remove_padding")
SFT_COPY = verl.copy_premise("sft_sp_remove_padding", name="sft copy")


def check(plan: TrainingPlan) -> Iterator[Finding]:
    # PPO plans hold VerlSettings; the SFT trainer's hold none (its keys are top-level): no one subject.
    settings = VerlSettings.of(plan)
    if settings is not None:
        if not settings.checks_sp_remove_padding:  # an early copy of verl: it starts, and says nothing
            return
        copy = verl.runs_copy(plan.document.path, plan.project)
        roles = [settings.actor] + ([settings.critic] if settings.critic else [])
        for role in roles:
            if role.fsdp:
                premise = COPY if copy else ACTOR if role.name == "actor" else CRITIC
                yield from _check(role.sp, role.remove_padding, role.name, premise)
        return
    padding = verl.sft_remove_padding(plan)
    if padding is not None:
        premise = SFT_COPY if verl.runs_copy(plan.document.path, plan.project) else SFT
        yield from _check(plan.parallel.get("sp"), padding, "SFT trainer", premise)


def _check(sp: Optional[Fact], padding: Fact, who: str, premise: Premise) -> Iterator[Finding]:
    if sp is None or sp.count is None or sp.count <= 1 or padding.value is not False:
        return
    at_fault = padding if padding.span is not None else sp
    if at_fault.span is None:
        return
    yield Finding(
        span=at_fault.span,
        message=f"the {who} uses Ulysses sequence parallelism (sp = {sp.count}) without use_remove_padding",
        notes=(f"{sp.describe()} with {padding.describe()}.",
               "verl slices only unpadded sequences across sp ranks, and refuses to start without "
               "use_remove_padding.",),
        fix=f"set {padding.key}: true, or {sp.key}: 1",
        related=tuple(Related(f"{f.key} = {f.value}", f.span) for f in (sp, padding) if f.span and f is not at_fault),
        premise=premise.name,
    )


RULE = Rule(
    code="BL240",
    name="verl-sp-without-remove-padding",
    severity="error",
    summary="verl: Ulysses sequence parallelism without use_remove_padding",
    check=check,
    frameworks=("verl",),
    premises=(ACTOR, CRITIC, SFT, COPY, SFT_COPY),
    doc=__doc__,
    examples=(
        Example("actor_sp_padded.yaml", """\
defaults:
  - ppo_trainer
  - _self_
actor_rollout_ref:
  model:
    use_remove_padding: false
  actor:
    ulysses_sequence_parallel_size: 2
""", flagged=(6,), severity="error",
                message="the actor uses Ulysses sequence parallelism (sp = 2) without use_remove_padding",
                fix="set actor_rollout_ref.model.use_remove_padding: true, or "
                    "actor_rollout_ref.actor.ulysses_sequence_parallel_size: 1"),
        Example("actor_sp_unpadded.yaml", """\
defaults:
  - ppo_trainer
  - _self_
actor_rollout_ref:
  model:
    use_remove_padding: true
  actor:
    ulysses_sequence_parallel_size: 2
"""),
        # verl 0.1 has no Ulysses: a config that sets it is not one it runs.
        Example("actor_sp_padded_0_1.yaml", """\
defaults:
  - ppo_trainer
  - _self_
actor_rollout_ref:
  model:
    use_remove_padding: false
  actor:
    ulysses_sequence_parallel_size: 2
""", files=(("requirements.txt", "verl==0.1\n"),)),
        # The critic's remove-padding defaults to false (critic/dp_critic.yaml, to 0.7.1).
        Example("critic_sp.yaml", """\
defaults:
  - ppo_trainer
actor_rollout_ref:
  rollout:
    n: 1
critic:
  ulysses_sequence_parallel_size: 2
""", flagged=(7,), files=(("requirements.txt", "verl==0.7.1\n"),), severity="error",
                message="the critic uses Ulysses sequence parallelism (sp = 2) without use_remove_padding",
                fix="set critic.model.use_remove_padding: true, or critic.ulysses_sequence_parallel_size: 1"),
        # 0.8.0 reads the critic's sp from critic.fsdp and pads nothing by default.
        Example("critic_sp_0_8.yaml", """\
defaults:
  - ppo_trainer
actor_rollout_ref:
  rollout:
    n: 1
critic:
  ulysses_sequence_parallel_size: 2
""", files=(("requirements.txt", "verl==0.8.0\n"),)),
        Example("critic_sp_unpinned.yaml", """\
defaults:
  - ppo_trainer
actor_rollout_ref:
  rollout:
    n: 1
critic:
  ulysses_sequence_parallel_size: 2
"""),
        Example("critic_sp_unpadded.yaml", """\
defaults:
  - ppo_trainer
actor_rollout_ref:
  rollout:
    n: 1
critic:
  ulysses_sequence_parallel_size: 2
  model:
    use_remove_padding: true
""",
                files=(("requirements.txt", "verl==0.7.1\n"),)),
        Example("sft_sp_padded.yaml", """\
data:
  train_batch_size: 256
  micro_batch_size_per_gpu: 4
model:
  partial_pretrain: Qwen/Qwen2.5-0.5B-Instruct
ulysses_sequence_parallel_size: 2
use_remove_padding: False
""", flagged=(7,), severity="error",
                message="the SFT trainer uses Ulysses sequence parallelism (sp = 2) without "
                        "use_remove_padding",
                fix="set use_remove_padding: true, or ulysses_sequence_parallel_size: 1"),
        Example("sft_sp_padded_0_7_0.yaml", """\
data:
  train_batch_size: 256
  micro_batch_size_per_gpu: 4
model:
  partial_pretrain: Qwen/Qwen2.5-0.5B-Instruct
ulysses_sequence_parallel_size: 2
use_remove_padding: False
""", flagged=(7,),
                files=(("requirements.txt", "verl==0.7.0\n"),), severity="error",
                message="the SFT trainer uses Ulysses sequence parallelism (sp = 2) without "
                        "use_remove_padding",
                fix="set use_remove_padding: true, or ulysses_sequence_parallel_size: 1"),
        # 0.7.1 replaced fsdp_sft_trainer.py and its top-level keys.
        Example("sft_sp_padded_0_7_1.yaml", """\
data:
  train_batch_size: 256
  micro_batch_size_per_gpu: 4
model:
  partial_pretrain: Qwen/Qwen2.5-0.5B-Instruct
ulysses_sequence_parallel_size: 2
use_remove_padding: False
""", files=(("requirements.txt", "verl==0.7.1\n"),)),
        Example("sft_sp_unpadded.yaml", """\
data:
  train_batch_size: 256
  micro_batch_size_per_gpu: 4
model:
  partial_pretrain: Qwen/Qwen2.5-0.5B-Instruct
ulysses_sequence_parallel_size: 2
use_remove_padding: True
""", files=(("requirements.txt", "verl==0.7.0\n"),)),
    ),
)
