"""
## What it does
Checks the generation batch of RL training (GRPO, RLOO, PPO with sampled
groups): the completions generated per round must be whole groups of the
samples drawn per prompt, and whatever else the framework demands of that
batch at start-up. Each framework's adapter says which checks its framework
makes (`GenerationChecks` in the plan); this rule does the arithmetic:

- one sample per prompt where advantages are computed within each prompt's
  group (GRPO, RLOO, OpenRLHF's group estimators and dynamic filtering);
- two keys the framework refuses together (TRL: `generation_batch_size` and
  `steps_per_generation`), or that must agree (ms-swift Megatron:
  `generation_batch_size` = `global_batch_size` x `steps_per_generation`);
- a generation batch that is not whole groups of `num_generations`, or not a
  whole number of the batch one step consumes (TRL: the per-device batch x
  W; ms-swift Megatron: `global_batch_size`);
- prompts that do not split over the data-parallel ranks and their micro
  batches (ms-swift Megatron), or fewer than one group per rank (axolotl);
- an evaluation batch that is not whole groups (TRL).

What needs the world size W is checked when W is known, or when it fails for
every W.

## Why is this bad?
Advantages are computed within each prompt's group of completions: a batch
that would split a group, or a group of one, has nothing to compare with.
TRL's GRPOConfig/RLOOConfig, axolotl's validation, ms-swift's argument
parsing and OpenRLHF's `train_ppo_ray` refuse such a batch at start-up,
after the job has its GPUs.

## Example
```yaml
per_device_train_batch_size: 4
gradient_accumulation_steps: 1
num_generations: 6     # on 4 GPUs the generation batch is 4 x 4 x 1 = 16
```

## Use instead
```yaml
per_device_train_batch_size: 4
gradient_accumulation_steps: 1
num_generations: 8     # 16 holds two groups of 8
```

## Source
Each adapter names the checks of its framework: TRL grpo_config.py:1096-1141
(`__post_init__`), rloo_config.py:659-704 @ 1.16.0; axolotl 067b021
validation.py:785-867; ms-swift 3602360 megatron_args.py:260-341, and for plain GRPO
ms-swift 4.6.0.dev0 swift/rlhf_trainers/args_mixin.py:200-242; OpenRLHF
train_ppo_ray.py (n_samples_per_prompt > 1 asserts); EasyR1 b44b311
verl/trainer/ray_trainer.py:211-236. Replaces BL121 (TRL),
BL152 (axolotl) and BL153 (ms-swift Megatron), whose codes redirect here.
"""

from collections.abc import Iterator

from batchlint.plan import Origin, TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    rl = plan.rl
    checks, n = rl.generation_checks, rl.samples_per_prompt
    if n is None or not n.known:
        return
    if checks.group_baseline is not None and n.value < 2:
        baseline = checks.group_baseline
        yield Finding(
            span=n.span or baseline.span,
            message=(f"{n.describe()}: {baseline.describe() if baseline.span else baseline.value} compares each "
                     f"prompt's samples with each other (its advantages or its filter), which needs at least 2 per "
                     f"prompt; {checks.refusal}"),
            fix=f"set {n.key} to 2 or more",
            related=_related(baseline) if baseline.span != n.span else (),
        )
        return
    if checks.exclusive:
        first, second = checks.exclusive
        yield Finding(
            span=second.span,
            message=f"{first.describe()} and {second.describe()} are both set: {checks.refusal}",
            fix="remove one of them",
            related=(Related(f"{first.key} set here", first.span),),
        )
        return
    if not n.positive:
        return  # BL104 reports a batch size of 0 or less
    yield from _generation(plan, rl.generation_batch, n, checks)
    yield from _evaluation(rl.eval_generation_batch, rl.eval_samples_per_prompt, checks)


def _generation(plan, batch, n, checks):
    if batch is None or not batch.positive:
        return
    alternative = checks.alternative
    if alternative is not None and alternative.known and alternative.value != batch.value:
        yield Finding(
            span=batch.span,
            message=f"{batch.describe()} is not {alternative.detail} = {alternative.value}: {checks.refusal}",
            fix=f"remove {batch.key}, or set it to {alternative.value}",
            related=_related(alternative),
        )
        return
    given = batch.origin is not Origin.DERIVED
    how = batch.describe() if given else f"the generation batch {batch.detail} = {batch.value}"
    if batch.value % n.value:
        fix = (f"set {batch.key} to a multiple of {n.value}, or {n.key} to a divisor of {batch.value}" if given else
               f"set {n.key} to a divisor of {batch.value}, or change {batch.detail} so that it holds whole groups "
               f"of {n.value}")
        yield Finding(
            span=batch.span or n.span,
            message=(f"{how} is not a multiple of {n.describe()}: a group of completions would be split, and "
                     f"{checks.refusal}"),
            fix=fix,
            related=_related(n) if batch.span else (),
        )
    for factors in (checks.step_batch, *checks.multiples):
        yield from _step_batch(plan, batch, how, factors, checks.refusal)
    if batch.value % n.value:
        return  # the splits below count whole groups
    if checks.split_over_dp:
        yield from _split_over_dp(plan, batch, how, n, checks)
    world = plan.world_size
    if checks.group_per_rank and world is not None and world.positive and batch.value < n.value * world.value:
        yield Finding(
            span=batch.span or n.span,
            message=(f"{how} is less than {n.describe()} x W ({world.value}) = {n.value * world.value}: each rank "
                     f"needs a whole group, and {checks.refusal}"),
            fix=f"raise the generation batch to at least {n.value * world.value}",
            related=_related(n),
        )


def _step_batch(plan, batch, how, factors, refusal):
    """The generation batch must be a whole number of what one step consumes (the product of `factors`)."""
    factors = [f for f in factors if f is not None]
    if not factors or any(f.known and not f.positive for f in factors):
        return
    known = [f for f in factors if f.positive]
    missing = [f for f in factors if not f.known]
    if not known:
        return
    size = 1
    for f in known:
        size *= f.value
    if batch.value % size == 0:
        return
    shown = " x ".join(f"W ({f.value})" if f is plan.world_size else f.describe() for f in known)
    if len(known) > 1:
        shown += f" = {size}"
    every = "".join(f", so no {f.key} makes it a multiple" for f in missing)
    yield Finding(
        span=batch.span,
        message=f"{how} is not a multiple of {shown}{every}: {refusal}",
        fix=f"set {batch.key} to a multiple of {size}" if batch.origin is not Origin.DERIVED else
            f"make {batch.detail} a multiple of {size}",
        related=tuple(Related(f"{f.key} = {f.value}", f.span) for f in known if f.span and f is not plan.world_size),
    )


def _split_over_dp(plan, batch, how, n, checks):
    """The prompts are shared by the dp ranks, each rank's share in micro batches."""
    dp, micro, world = plan.data_parallel, plan.rl.micro_batch.get("actor"), plan.world_size
    if dp is None or not dp.positive or micro is None or not micro.positive:
        return
    prompts = batch.value // n.value
    per_rank = prompts // dp.value
    shown = f"{how} / {n.key} {n.value}"
    if prompts % dp.value:
        yield Finding(
            span=batch.span or n.span,
            message=f"the {prompts} prompts per generation ({shown}) do not split over dp {dp.value}: {checks.refusal}",
            fix=f"make the generation batch a multiple of {n.key} x dp = {n.value * dp.value}",
        )
    elif per_rank == 0 or per_rank % micro.value:
        yield Finding(
            span=batch.span or n.span,
            message=(f"each of dp {dp.value} ranks gets {per_rank} prompts ({shown} / dp {dp.value}), not a "
                     f"multiple of {micro.describe()}: {checks.refusal}"),
            fix=f"make the generation batch a multiple of {n.key} x dp x micro = {n.value * dp.value * micro.value}",
        )
    elif world is not None and world.positive and batch.value < world.value:
        yield Finding(
            span=batch.span or n.span,
            message=f"{how} gives each of W {world.value} GPUs less than one completion: {checks.refusal}",
            fix=f"raise the generation batch to at least {world.value}",
        )


def _evaluation(batch, n, checks):
    if batch is None or n is None or not (batch.positive and n.positive) or batch.value % n.value == 0:
        return
    yield Finding(
        span=n.span or batch.span,
        message=f"the evaluation batch {batch.detail} = {batch.value} is not a multiple of {n.describe()}: {checks.refusal}",
        fix=f"change {batch.detail} so that it is a multiple of {n.value}, or set a number of evaluation generations that divides it",
    )


def _related(fact):
    return (Related(f"{fact.key} = {fact.value}", fact.span),) if fact.span else ()


_TRL = """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 4
gradient_accumulation_steps: 1
num_generations: {generations}
"""

_AXOLOTL = """\
base_model: Qwen/Qwen2.5-0.5B-Instruct
rl: grpo
micro_batch_size: 2
gradient_accumulation_steps: {ga}
trl:
  num_generations: {n}
"""

_OPENRLHF = """\
python3 -m openrlhf.cli.train_ppo_ray \\
   --actor.num_gpus_per_node 8 \\
   --rollout.batch_size 128 \\
   --rollout.n_samples_per_prompt {n} \\
   --algo.advantage.estimator {estimator}
"""

_SWIFT = """\
rlhf_type: grpo
model: Qwen/Qwen2.5-VL-3B-Instruct
micro_batch_size: 2
global_batch_size: {global_}
num_generations: 8
steps_per_generation: {steps}
use_vllm: true
"""

_EASYR1 = """\
data:
  rollout_batch_size: {prompts}
algorithm:
  adv_estimator: {estimator}
worker:
  actor:
    global_batch_size: 64
    micro_batch_size_per_device_for_experience: {experience}
  rollout:
    n: {n}
"""

RULE = Rule(
    code="BL170",
    name="rl-generation-batch",
    severity="error",
    summary="RL: a generation batch the framework refuses (split groups, a group of one, ranks without a share)",
    check=check,
    needs=("rl.generation_checks",),
    doc=__doc__,
    examples=(
        Example("grpo_6_on_4.yaml", _TRL.format(generations=6), flagged=(4,), world_size=4),
        Example("grpo_8_on_4.yaml", _TRL.format(generations=8), world_size=4),
        Example("grpo_6_unknown_w.yaml", _TRL.format(generations=6)),
        Example("grpo_given_size.yaml", _TRL.format(generations=8) + "generation_batch_size: 30\n", flagged=(5, 5)),
        Example("grpo_given_size_ok.yaml", _TRL.format(generations=8) + "generation_batch_size: 32\n"),
        Example("axolotl_grpo_6_of_4.yaml", _AXOLOTL.format(ga=3, n=4), flagged=(4,)),
        Example("axolotl_grpo_8_of_4.yaml", _AXOLOTL.format(ga=4, n=4)),
        Example("axolotl_grpo_one_generation.yaml", _AXOLOTL.format(ga=4, n=1), flagged=(6,)),
        Example("axolotl_grpo_8_on_4_gpus.yaml", _AXOLOTL.format(ga=4, n=4), flagged=(4,), world_size=4),
        Example("axolotl_grpo_16_on_4_gpus.yaml", _AXOLOTL.format(ga=8, n=4), world_size=4),
        Example("swift_grpo_12x1.yaml", _SWIFT.format(global_=12, steps=1), flagged=(6,)),
        Example("swift_grpo_16x1.yaml", _SWIFT.format(global_=16, steps=1)),
        # 16 x 4 = 64 completions = 8 prompts; over dp 4 that is 2 per rank, one micro batch of 2.
        Example("swift_grpo_64_on_4.yaml", _SWIFT.format(global_=16, steps=4), world_size=4),
        # over dp 8 that is 1 prompt per rank, not a multiple of micro_batch_size 2.
        Example("swift_grpo_64_on_8.yaml", _SWIFT.format(global_=16, steps=4), flagged=(6,), world_size=8),
        Example("openrlhf_group_norm_n1.sh", _OPENRLHF.format(n=1, estimator="group_norm"), flagged=(4,)),
        Example("openrlhf_group_norm_n8.sh", _OPENRLHF.format(n=8, estimator="group_norm")),
        Example("openrlhf_gae_n1.sh", _OPENRLHF.format(n=1, estimator="gae")),  # one sample is valid for gae
        # EasyR1: rollout_batch_size must be whole mini-batches (global_batch_size), x n whole experience micro batches.
        Example("easyr1_grpo_n1.yaml", _EASYR1.format(prompts=512, estimator="grpo", experience=16, n=1), flagged=(10,)),
        Example("easyr1_remax_n1.yaml", _EASYR1.format(prompts=512, estimator="remax", experience=16, n=1)),
        Example("easyr1_rollout_100.yaml", _EASYR1.format(prompts=100, estimator="grpo", experience=4, n=5), flagged=(2,)),
        Example("easyr1_rollout_128.yaml", _EASYR1.format(prompts=128, estimator="grpo", experience=4, n=5)),
        Example("easyr1_experience_3.yaml", _EASYR1.format(prompts=128, estimator="grpo", experience=3, n=5), flagged=(2,)),
    ),
)
