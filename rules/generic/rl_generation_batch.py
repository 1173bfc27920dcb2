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

By release (one premise per framework whose release decides): TRL has GRPO
from 0.14.0 and refuses these batches from 0.15.0 (0.15-0.16 check the per-device
batch x W, without the accumulation: every batch this rule flags fails that
too, and where the project pins 0.15-0.16 that smaller batch is what is judged),
`num_generations` unwritten is GRPOConfig's 8 where the program that reads the
config is certainly GRPO's (RLOO's old `rloo_k` and `num_mini_batches` are read as
`num_generations` and `steps_per_generation` where the project pins 0.22.0-0.24.x, which
map them so; rloo_config.py:588-613 @ v0.22.0), `generation_batch_size`/`steps_per_generation` from 0.18.0 (the multiple
of the per-device batch x W from 0.19.1), `num_generations_eval` from 0.26.1;
OpenRLHF asserts n > 1 for rloo from 0.5.3, reinforce_baseline and group_norm
from 0.6.0, dynamic filtering from 0.8.1, dr_grpo from 0.11.0; EasyR1 makes its
checks from v0.3.0; axolotl validates the batch itself from 0.17.0 (earlier
releases leave it to TRL, which counts W in). ms-swift is judged as its adapters
read it, whatever the release (no window verified).

## Source
Each adapter names the checks of its framework: TRL grpo_config.py:1096-1141
(`__post_init__`), rloo_config.py:659-704 @ 1.16.0; axolotl 067b021
validation.py:785-867; ms-swift 3602360 megatron_args.py:260-341, and for plain GRPO
ms-swift 4.6.0.dev0 swift/rlhf_trainers/args_mixin.py:200-242; OpenRLHF
train_ppo_ray.py:656-659, 746-755 @ 0.11.2 (n_samples_per_prompt > 1 asserts); EasyR1
verl/trainer/ray_trainer.py:211-236 @ v0.3.2. Replaces BL121 (TRL),
BL152 (axolotl) and BL153 (ms-swift Megatron), whose codes redirect here.
"""

from __future__ import annotations

from collections.abc import Iterator

from batchlint.frameworks import openrlhf
from batchlint.frameworks.hf import TRLSettings
from batchlint.frameworks.releases import AXOLOTL, EASYR1, TRL
from batchlint.plan import RL, Fact, GenerationChecks, Origin, TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

# TRL: GRPOConfig is new in 0.14.0; no earlier release runs a GRPO config.
TRL_GROUPS = Premise(
    TRL, since="0.15.0", runs_since="0.14.0", name="TRL", frameworks=("trl",),
    source="v0.14.0 trl/trainer/grpo_trainer.py (no check of num_generations); v0.15.0 trl/trainer/grpo_trainer.py:341-358 "
           "(per-device batch x W, and the eval batch, divisible by num_generations >= 2, first); v0.17.0 "
           "grpo_trainer.py:591-620 (x gradient_accumulation_steps); v0.18.0 trl/trainer/grpo_config.py:532-558; "
           "1.16.0 trl/trainer/grpo_config.py:1118-1141 (still)")
# Before 0.17.0 the check leaves the accumulation out: per_device_train_batch_size x W alone must be whole groups.
TRL_PER_DEVICE = Premise(
    TRL, since="0.15.0", until="0.16.1", runs_since="0.14.0", name="TRL per-device batch", frameworks=("trl",),
    source="v0.14.0 trl/trainer/grpo_trainer.py (no check); v0.15.0 trl/trainer/grpo_trainer.py:342-350 "
           "(per_device_train_batch_size x num_processes, first); v0.16.1 trl/trainer/grpo_trainer.py:425-433 "
           "(still); v0.17.0 trl/trainer/grpo_trainer.py:597-608 (x gradient_accumulation_steps)")
# generation_batch_size and steps_per_generation are new in 0.18.0.
TRL_KEYS = Premise(
    TRL, since="0.18.0", runs_since="0.18.0", name="TRL generation keys", frameworks=("trl",),
    source="v0.17.0 trl/trainer/grpo_config.py (no generation_batch_size, steps_per_generation); v0.18.0 "
           "trl/trainer/grpo_config.py:512-515 (both refused together), 532-546 (whole groups, first); 1.16.0 "
           "trl/trainer/grpo_config.py:1112-1115, 1129-1135 (still)")
TRL_STEP = Premise(
    TRL, since="0.19.1", runs_since="0.18.0", name="TRL step batch", frameworks=("trl",),
    source="v0.18.0-v0.19.0 trl/trainer/grpo_config.py:523/547 (`generation_batch_size % per_device_train_batch_size "
           "* num_processes`: only the per-device batch is checked); v0.19.1 trl/trainer/grpo_config.py:547 "
           "(per-device batch x W, first); 1.16.0 trl/trainer/grpo_config.py:1101-1106 (still)")
TRL_EVAL = Premise(
    TRL, since="0.26.1", runs_since="0.26.0", name="TRL eval generations", frameworks=("trl",),
    source="v0.26.0 trl/trainer/grpo_config.py:394 (num_generations_eval), 833-838 (the eval batch checked against "
           "num_generations); v0.26.1 trl/trainer/grpo_config.py:835 (against num_generations_eval, first); "
           "1.16.0 trl/trainer/grpo_config.py:1118-1126 (still)")
# OpenRLHF: each estimator from the release that asserts n > 1 for it; the flag values are the release's choices.
OPENRLHF_RLOO = Premise(
    openrlhf.DISTRIBUTION, since="0.5.3", runs_since="0.5.3", name="OpenRLHF rloo", frameworks=("openrlhf",),
    source="v0.5.2.post1 openrlhf/cli/train_ppo_ray.py (--advantage_estimator choices gae, reinforce); v0.5.3 "
           "openrlhf/cli/train_ppo_ray.py:366-367 (rloo, first); 0.11.2 openrlhf/cli/train_ppo_ray.py:656-659 (still)")
OPENRLHF_GROUP = Premise(
    openrlhf.DISTRIBUTION, since="0.6.0", runs_since="0.6.0", name="OpenRLHF group estimators", frameworks=("openrlhf",),
    source="v0.5.9.post1 openrlhf/cli/train_ppo_ray.py:398-399 (rloo only; no reinforce_baseline, group_norm); "
           "v0.6.0 openrlhf/cli/train_ppo_ray.py:415-416 (first); 0.11.2 openrlhf/cli/train_ppo_ray.py:656-659 (still)")
OPENRLHF_DR_GRPO = Premise(
    openrlhf.DISTRIBUTION, since="0.11.0", runs_since="0.8.0", name="OpenRLHF dr_grpo", frameworks=("openrlhf",),
    source="v0.8.0 openrlhf/cli/train_ppo_ray.py:360 (dr_grpo a choice, not asserted); v0.10.4 "
           "train_ppo_ray.py:608-611 (still not); v0.11.0 openrlhf/cli/train_ppo_ray.py:612-615 (first); "
           "0.11.2 openrlhf/cli/train_ppo_ray.py:656-659 (still)")
OPENRLHF_FILTERING = Premise(
    openrlhf.DISTRIBUTION, since="0.8.1", runs_since="0.8.1", name="OpenRLHF dynamic filtering", frameworks=("openrlhf",),
    source="v0.8.0 openrlhf/cli/train_ppo_ray.py (no --dynamic_filtering); v0.8.1 openrlhf/cli/train_ppo_ray.py:430, "
           "504-513 (first); 0.11.2 openrlhf/cli/train_ppo_ray.py:746-755 (still)")
_ESTIMATORS = {"rloo": OPENRLHF_RLOO, "reinforce_baseline": OPENRLHF_GROUP, "group_norm": OPENRLHF_GROUP,
             "dr_grpo": OPENRLHF_DR_GRPO}
# axolotl: before 0.17.0 it hands the batch to TRL's GRPOConfig, whose check counts W in (not this one).
AXOLOTL_CHECKS = Premise(
    AXOLOTL, since="0.17.0", name="axolotl", frameworks=("axolotl",),
    source="v0.16.1 src/axolotl/utils/schemas/validation.py (no check_grpo_batch_size_divisibility); v0.17.0 "
           "src/axolotl/utils/schemas/validation.py:789-867 (first); 0.19.0 axolotl/utils/schemas/validation.py:829-907 "
           "(still)")
EASYR1_CHECKS = Premise(
    EASYR1, since="0.3.0", name="EasyR1", frameworks=("easyr1",),
    source="EasyR1 before v0.3.0: the checks land 2025-04-03 (39cab8f) and 04-04 (30fe6b5, 4487c09); v0.3.0 "
           "verl/trainer/ray_trainer.py:229-254 (first tag); v0.3.2 verl/trainer/ray_trainer.py:211-236 (still)")


def _premise(plan: TrainingPlan, checks: GenerationChecks, kind: str) -> str:
    """The name of the premise a finding of `kind` rests on, for the plan's framework ("" where none is
    declared: ms-swift)."""
    framework, root = plan.framework, plan.document.root
    if framework == "trl":
        if kind in ("exclusive", "step"):
            return (TRL_KEYS if kind == "exclusive" else TRL_STEP).name
        if kind == "multiple" and any(k in root.items for k in ("generation_batch_size", "steps_per_generation")):
            return TRL_KEYS.name
        if kind == "eval" and "num_generations_eval" in root.items:
            return TRL_EVAL.name
        trl = TRLSettings.of(plan)
        if kind == "multiple" and trl is not None and trl.accumulation_left_out:
            return TRL_PER_DEVICE.name
        return TRL_GROUPS.name
    if framework == "openrlhf":
        baseline = checks.group_baseline
        premise = _ESTIMATORS.get(str(baseline.value if baseline is not None else ""), OPENRLHF_FILTERING)
        return openrlhf.premise_name(plan, premise)
    return {"easyr1": EASYR1_CHECKS.name, "axolotl": AXOLOTL_CHECKS.name}.get(framework, "")


def check(plan: TrainingPlan, rl: RL) -> Iterator[Finding]:
    checks, n = rl.generation_checks, rl.samples_per_prompt
    samples = n.number if n is not None else None
    if checks is None or n is None or samples is None:
        return
    if checks.group_baseline is not None and samples < 2:
        baseline = checks.group_baseline
        shown = baseline.describe() if baseline.span else str(baseline.value)
        yield Finding(
            span=n.span or baseline.span,
            message=f"{_short(n)}: {baseline.value} needs at least 2 samples per prompt",
            notes=(*_origins(n),
                   f"{shown} compares each prompt's samples with each other (its advantages or its filter)",
                   checks.refusal),
            fix=f"set {n.key} to 2 or more",
            related=_related(baseline) if baseline.span != n.span else (),
            premise=_premise(plan, checks, "group"),
        )
        return
    if checks.exclusive:
        first, second = checks.exclusive
        yield Finding(
            span=second.span,
            message=f"{first.key} and {second.key} are both set",
            notes=(f"{first.describe()} and {second.describe()}: the framework takes one or the other",
                   checks.refusal),
            fix="remove one of them",
            related=(Related(f"{first.key} set here", first.span),),
            premise=_premise(plan, checks, "exclusive"),
        )
        return
    if not n.positive:
        return  # BL104 reports a batch size of 0 or less
    yield from _generation(plan, rl, n, checks)
    yield from _evaluation(plan, rl.eval_generation_batch, rl.eval_samples_per_prompt, checks)


def _generation(plan: TrainingPlan, rl: RL, n: Fact, checks: GenerationChecks) -> Iterator[Finding]:
    batch = rl.generation_batch
    size = batch.count if batch is not None else None
    group = n.count  # positive: check() returned before otherwise
    if batch is None or size is None or group is None:
        return
    alternative = checks.alternative
    if alternative is not None and alternative.known and alternative.value != batch.value:
        yield Finding(
            span=batch.span,
            message=f"{_short(batch)} is not {alternative.detail} = {alternative.value}",
            notes=(*_origins(batch), "the framework accepts both ways of setting the generation batch only if they agree",
                   checks.refusal),
            fix=f"remove {batch.key}, or set it to {alternative.value}",
            related=_related(alternative),
            premise=_premise(plan, checks, "alternative"),
        )
        return
    given = batch.origin is not Origin.DERIVED
    how = batch.describe() if given else f"the generation batch {batch.detail} = {batch.value}"
    short = _short(batch) if given else f"generation batch {batch.value}"
    whence = _origins(batch) if given else (f"the generation batch is {batch.detail} = {batch.value}",)
    if size % group:
        fix = (f"set {batch.key} to a multiple of {n.value}, or {n.key} to a divisor of {batch.value}" if given else
               f"set {n.key} to a divisor of {batch.value}, or change {batch.detail} so that it holds whole groups "
               f"of {n.value}")
        yield Finding(
            span=batch.span or n.span,
            message=f"{short} is not a multiple of {_short(n)}",
            notes=(*whence, *_origins(n), "a group of completions would be split", checks.refusal),
            fix=fix,
            related=_related(n) if batch.span else (),
            premise=_premise(plan, checks, "multiple"),
        )
    for factors in (checks.step_batch, *checks.multiples):
        yield from _step_batch(plan, checks, batch, short, whence, factors)
    if size % group:
        return  # the splits below count whole groups
    if checks.split_over_dp:
        yield from _split_over_dp(plan, batch, how, n, rl.micro_batch.get("actor"), checks)
    world = plan.world_size
    gpus = world.count if world is not None else None
    if checks.group_per_rank and gpus is not None and size < group * gpus:
        yield Finding(
            span=batch.span or n.span,
            message=f"{short} is less than {group * gpus}, one group of {group} for each of {gpus} GPUs",
            notes=(*whence, f"{n.describe()} x W ({gpus}) = {group * gpus}: each rank needs a whole group",
                   checks.refusal),
            fix=f"raise the generation batch to at least {group * gpus}",
            related=_related(n),
            premise=_premise(plan, checks, "rank"),
        )


def _step_batch(plan: TrainingPlan, checks: GenerationChecks, batch: Fact, short: str, whence: tuple[str, ...],
                written: tuple[Optional[Fact], ...]) -> Iterator[Finding]:
    """The generation batch must be a whole number of what one step consumes (the product of the factors)."""
    factors = [f for f in written if f is not None]
    total = batch.count  # positive: _generation returned before otherwise
    if not factors or total is None or any(f.known and not f.positive for f in factors):
        return
    known = [f for f in factors if f.positive]
    missing = [f for f in factors if not f.known]
    if not known:
        return
    size = 1
    for f in known:
        size *= f.count or 0
    if total % size == 0:
        return
    shown = " x ".join(f"W ({f.value})" if f is plan.world_size else f.describe() for f in known)
    if len(known) > 1:
        shown += f" = {size}"
    every = tuple(f"the factors known do not divide it, so no {f.key} makes it a multiple" for f in missing)
    yield Finding(
        span=batch.span,
        message=f"{short} is not a multiple of {size} ({' x '.join('W' if f is plan.world_size else f.key for f in known)})",
        notes=(*whence, f"it must be a whole number of {shown}", *every, checks.refusal),
        fix=f"set {batch.key} to a multiple of {size}" if batch.origin is not Origin.DERIVED else
            f"make {batch.detail} a multiple of {size}",
        related=tuple(Related(f"{f.key} = {f.value}", f.span) for f in known if f.span and f is not plan.world_size),
        premise=_premise(plan, checks, "step"),
    )


def _split_over_dp(plan: TrainingPlan, batch: Fact, how: str, n: Fact, micro: Optional[Fact],
                   checks: GenerationChecks) -> Iterator[Finding]:
    """The prompts are shared by the dp ranks, each rank's share in micro batches."""
    dp, world = plan.data_parallel, plan.world_size
    ranks = dp.count if dp is not None else None
    per_gpu = micro.count if micro is not None else None
    gpus = world.count if world is not None else None
    size, group = batch.count, n.count  # positive: _generation returned before otherwise
    if ranks is None or micro is None or per_gpu is None or size is None or group is None:
        return
    prompts = size // group
    per_rank = prompts // ranks
    shown = f"{how} / {n.key} {group}"
    if prompts % ranks:
        yield Finding(
            span=batch.span or n.span,
            message=f"the {prompts} prompts per generation do not split over dp {ranks}",
            notes=(f"{shown} = {prompts} prompts", checks.refusal),
            fix=f"make the generation batch a multiple of {n.key} x dp = {group * ranks}",
            premise=_premise(plan, checks, "split"),
        )
    elif per_rank == 0 or per_rank % per_gpu:
        yield Finding(
            span=batch.span or n.span,
            message=(f"each of dp {ranks} ranks gets {per_rank} prompt{'s' if per_rank != 1 else ''}, not a multiple "
                     f"of {_short(micro)}"),
            notes=(f"{shown} / dp {ranks} = {per_rank} prompts per rank", *_origins(micro), checks.refusal),
            fix=f"make the generation batch a multiple of {n.key} x dp x micro = {group * ranks * per_gpu}",
            premise=_premise(plan, checks, "split"),
        )
    elif gpus is not None and size < gpus:
        yield Finding(
            span=batch.span or n.span,
            message=f"generation batch {size} gives each of W {gpus} GPUs less than one completion",
            notes=(f"the generation batch is {how}", checks.refusal),
            fix=f"raise the generation batch to at least {gpus}",
            premise=_premise(plan, checks, "split"),
        )


def _evaluation(plan: TrainingPlan, batch: Optional[Fact], n: Optional[Fact],
                checks: GenerationChecks) -> Iterator[Finding]:
    size = batch.count if batch is not None else None
    group = n.count if n is not None else None
    if batch is None or n is None or size is None or group is None or size % group == 0:
        return
    yield Finding(
        span=n.span or batch.span,
        message=f"evaluation batch {batch.value} is not a multiple of {_short(n)}",
        notes=(f"the evaluation batch is {batch.detail} = {batch.value}", *_origins(n), checks.refusal),
        fix=f"change {batch.detail} so that it is a multiple of {n.value}, or set a number of evaluation generations that divides it",
        premise=_premise(plan, checks, "eval"),
    )


def _short(fact: Fact) -> str:
    """`key value`: a message's form of a number (where it came from, when not written, is a note)."""
    return f"{fact.key} {fact.value}"


def _origins(fact: Fact) -> tuple[str, ...]:
    """Where a value not written as is in the file came from (a default, a launch line, a formula)."""
    return () if fact.origin is Origin.FILE and not fact.detail else (fact.describe(),)


def _related(fact: Fact) -> tuple[Related, ...]:
    return (Related(f"{fact.key} = {fact.value}", fact.span),) if fact.span else ()


_TRL_ACCUMULATED = """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 2
gradient_accumulation_steps: 4
num_generations: 8
"""

RULE = Rule(
    code="BL170",
    name="rl-generation-batch",
    severity="error",
    summary="RL: a generation batch the framework refuses (split groups, a group of one, ranks without a share)",
    check=check,
    subject=RL,
    needs=("rl.generation_checks",),
    premises=(TRL_GROUPS, TRL_PER_DEVICE, TRL_KEYS, TRL_STEP, TRL_EVAL,
              *(p for premise in (OPENRLHF_RLOO, OPENRLHF_GROUP, OPENRLHF_DR_GRPO, OPENRLHF_FILTERING)
                for p in openrlhf.variants(premise)),
              AXOLOTL_CHECKS, EASYR1_CHECKS),
    doc=__doc__,
    examples=(
        # No TRL release pinned: 0.14.0 runs GRPO without the check.
        Example("grpo_6_on_4.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 4
gradient_accumulation_steps: 1
num_generations: 6
""", flagged=(4,),
                world_size=4,
                severity="info",
                message="generation batch 16 is not a multiple of num_generations 6",
                fix="set num_generations to a divisor of 16, or change per_device_train_batch_size (4) x W (4) "
                    "x gradient_accumulation_steps (1) so that it holds whole groups of 6"),
        Example("grpo_6_on_4_pinned.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 4
gradient_accumulation_steps: 1
num_generations: 6
""", flagged=(4,),
                world_size=4,
                files=(("requirements.txt", "trl==0.15.0\n"),),
                severity="error",
                message="generation batch 16 is not a multiple of num_generations 6",
                fix="set num_generations to a divisor of 16, or change per_device_train_batch_size (4) x W (4) "
                    "x accumulation (1, not counted before TRL 0.17.0) so that it holds whole groups of 6"),
        Example("grpo_6_on_4_0_14.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 4
gradient_accumulation_steps: 1
num_generations: 6
""", world_size=4,
                files=(("requirements.txt", "trl==0.14.0\n"),)),
        Example("grpo_8_on_4.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 4
gradient_accumulation_steps: 1
num_generations: 8
""", world_size=4),
        # 2 x W 2 x 4 = 16 holds two groups of 8; TRL 0.15-0.16 count 2 x 2 = 4 only, and refuse it.
        Example("grpo_accumulated.yaml", _TRL_ACCUMULATED, world_size=2),
        Example("grpo_accumulated_0_16.yaml", _TRL_ACCUMULATED, flagged=(4,),
                world_size=2,
                files=(("requirements.txt", "trl==0.16.1\n"),),
                severity="error",
                message="generation batch 4 is not a multiple of num_generations 8",
                fix="set num_generations to a divisor of 4, or change per_device_train_batch_size (2) x W (2) "
                    "x accumulation (1, not counted before TRL 0.17.0) so that it holds whole groups of 8"),
        Example("grpo_accumulated_0_17.yaml", _TRL_ACCUMULATED, world_size=2,
                files=(("requirements.txt", "trl==0.17.0\n"),)),
        Example("grpo_6_unknown_w.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 4
gradient_accumulation_steps: 1
num_generations: 6
"""),
        # 30 is no whole groups of 8 (from 0.18.0, which has the key), nor a multiple of the per-device 4 (asserted
        # as the global batch from 0.19.1: info without a pin).
        Example("grpo_given_size.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 4
gradient_accumulation_steps: 1
num_generations: 8
generation_batch_size: 30
""", flagged=(5, 5),
                message="generation_batch_size 30 is not a multiple of 4 (per_device_train_batch_size)",
                fix="set generation_batch_size to a multiple of 4"),
        Example("grpo_given_size_0_18.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 4
gradient_accumulation_steps: 1
num_generations: 8
generation_batch_size: 30
""", flagged=(5,),
                files=(("requirements.txt", "trl==0.18.0\n"),),
                severity="error",
                message="generation_batch_size 30 is not a multiple of num_generations 8",
                fix="set generation_batch_size to a multiple of 8, or num_generations to a divisor of 30"),
        Example("grpo_given_size_1_16.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 4
gradient_accumulation_steps: 1
num_generations: 8
generation_batch_size: 30
""", flagged=(5, 5),
                files=(("requirements.txt", "trl==1.16.0\n"),),
                severity="error",
                message="generation_batch_size 30 is not a multiple of 4 (per_device_train_batch_size)",
                fix="set generation_batch_size to a multiple of 4"),
        Example("grpo_given_size_ok.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 4
gradient_accumulation_steps: 1
num_generations: 8
generation_batch_size: 32
"""),
        Example("axolotl_grpo_6_of_4.yaml", """\
base_model: Qwen/Qwen2.5-0.5B-Instruct
rl: grpo
micro_batch_size: 2
gradient_accumulation_steps: 3
trl:
  num_generations: 4
""", flagged=(4,),
                severity="info",
                message="generation batch 6 is not a multiple of trl.num_generations 4",
                fix="set trl.num_generations to a divisor of 6, or change micro_batch_size (2) x "
                    "gradient_accumulation_steps (3) so that it holds whole groups of 4"),
        Example("axolotl_grpo_6_of_4_pinned.yaml", """\
base_model: Qwen/Qwen2.5-0.5B-Instruct
rl: grpo
micro_batch_size: 2
gradient_accumulation_steps: 3
trl:
  num_generations: 4
""", flagged=(4,),
                files=(("requirements.txt", "axolotl==0.17.0\n"),),
                severity="error",
                message="generation batch 6 is not a multiple of trl.num_generations 4",
                fix="set trl.num_generations to a divisor of 6, or change micro_batch_size (2) x "
                    "gradient_accumulation_steps (3) so that it holds whole groups of 4"),
        Example("axolotl_grpo_6_of_4_0_16.yaml", """\
base_model: Qwen/Qwen2.5-0.5B-Instruct
rl: grpo
micro_batch_size: 2
gradient_accumulation_steps: 3
trl:
  num_generations: 4
""", files=(("requirements.txt", "axolotl==0.16.1\n"),)),
        Example("axolotl_grpo_8_of_4.yaml", """\
base_model: Qwen/Qwen2.5-0.5B-Instruct
rl: grpo
micro_batch_size: 2
gradient_accumulation_steps: 4
trl:
  num_generations: 4
"""),
        Example("axolotl_grpo_one_generation.yaml", """\
base_model: Qwen/Qwen2.5-0.5B-Instruct
rl: grpo
micro_batch_size: 2
gradient_accumulation_steps: 4
trl:
  num_generations: 1
""", flagged=(6,),
                message="trl.num_generations 1: grpo needs at least 2 samples per prompt",
                fix="set trl.num_generations to 2 or more"),
        Example("axolotl_grpo_8_on_4_gpus.yaml", """\
base_model: Qwen/Qwen2.5-0.5B-Instruct
rl: grpo
micro_batch_size: 2
gradient_accumulation_steps: 4
trl:
  num_generations: 4
""", flagged=(4,),
                world_size=4,
                message="generation batch 8 is less than 16, one group of 4 for each of 4 GPUs",
                fix="raise the generation batch to at least 16"),
        Example("axolotl_grpo_16_on_4_gpus.yaml", """\
base_model: Qwen/Qwen2.5-0.5B-Instruct
rl: grpo
micro_batch_size: 2
gradient_accumulation_steps: 8
trl:
  num_generations: 4
""", world_size=4),
        Example("swift_grpo_12x1.yaml", """\
rlhf_type: grpo
model: Qwen/Qwen2.5-VL-3B-Instruct
micro_batch_size: 2
global_batch_size: 12
num_generations: 8
steps_per_generation: 1
use_vllm: true
""", flagged=(6,),
                message="generation batch 12 is not a multiple of num_generations 8",
                fix="set num_generations to a divisor of 12, or change global_batch_size (12) x "
                    "steps_per_generation (1) so that it holds whole groups of 8"),
        Example("swift_grpo_16x1.yaml", """\
rlhf_type: grpo
model: Qwen/Qwen2.5-VL-3B-Instruct
micro_batch_size: 2
global_batch_size: 16
num_generations: 8
steps_per_generation: 1
use_vllm: true
"""),
        # 16 x 4 = 64 completions = 8 prompts; over dp 4 that is 2 per rank, one micro batch of 2.
        Example("swift_grpo_64_on_4.yaml", """\
rlhf_type: grpo
model: Qwen/Qwen2.5-VL-3B-Instruct
micro_batch_size: 2
global_batch_size: 16
num_generations: 8
steps_per_generation: 4
use_vllm: true
""", world_size=4),
        # over dp 8 that is 1 prompt per rank, not a multiple of micro_batch_size 2.
        Example("swift_grpo_64_on_8.yaml", """\
rlhf_type: grpo
model: Qwen/Qwen2.5-VL-3B-Instruct
micro_batch_size: 2
global_batch_size: 16
num_generations: 8
steps_per_generation: 4
use_vllm: true
""", flagged=(6,),
                world_size=8,
                message="each of dp 8 ranks gets 1 prompt, not a multiple of micro_batch_size 2",
                fix="make the generation batch a multiple of num_generations x dp x micro = 128"),
        Example("openrlhf_group_norm_n1.sh", """\
python3 -m openrlhf.cli.train_ppo_ray \\
   --actor.num_gpus_per_node 8 \\
   --rollout.batch_size 128 \\
   --rollout.n_samples_per_prompt 1 \\
   --algo.advantage.estimator group_norm
""", flagged=(4,),
                severity="error",
                message="--rollout.n_samples_per_prompt 1: group_norm needs at least 2 samples per prompt",
                fix="set --rollout.n_samples_per_prompt to 2 or more"),
        Example("openrlhf_group_norm_n8.sh", """\
python3 -m openrlhf.cli.train_ppo_ray \\
   --actor.num_gpus_per_node 8 \\
   --rollout.batch_size 128 \\
   --rollout.n_samples_per_prompt 8 \\
   --algo.advantage.estimator group_norm
"""),
        Example("openrlhf_gae_n1.sh", """\
python3 -m openrlhf.cli.train_ppo_ray \\
   --actor.num_gpus_per_node 8 \\
   --rollout.batch_size 128 \\
   --rollout.n_samples_per_prompt 1 \\
   --algo.advantage.estimator gae
"""),  # one sample is valid for gae
        # dr_grpo is asserted from 0.11.0 only (a choice since 0.8.0, the dotted flags since 0.10.2).
        Example("openrlhf_dr_grpo_n1.sh", """\
python3 -m openrlhf.cli.train_ppo_ray \\
   --actor.num_gpus_per_node 8 \\
   --rollout.batch_size 128 \\
   --rollout.n_samples_per_prompt 1 \\
   --algo.advantage.estimator dr_grpo
""", flagged=(4,),
                severity="info",
                message="--rollout.n_samples_per_prompt 1: dr_grpo needs at least 2 samples per prompt",
                fix="set --rollout.n_samples_per_prompt to 2 or more"),
        Example("openrlhf_dr_grpo_n1_0_11.sh", """\
python3 -m openrlhf.cli.train_ppo_ray \\
   --actor.num_gpus_per_node 8 \\
   --rollout.batch_size 128 \\
   --rollout.n_samples_per_prompt 1 \\
   --algo.advantage.estimator dr_grpo
""", flagged=(4,),
                files=(("requirements.txt", "openrlhf==0.11.0\n"),),
                severity="error",
                message="--rollout.n_samples_per_prompt 1: dr_grpo needs at least 2 samples per prompt",
                fix="set --rollout.n_samples_per_prompt to 2 or more"),
        Example("openrlhf_dr_grpo_n1_0_10.sh", """\
python3 -m openrlhf.cli.train_ppo_ray \\
   --actor.num_gpus_per_node 8 \\
   --rollout.batch_size 128 \\
   --rollout.n_samples_per_prompt 1 \\
   --algo.advantage.estimator dr_grpo
""", files=(("requirements.txt", "openrlhf==0.10.4\n"),)),
        # The flat flags of the releases before 0.10.2: rloo is a choice, and asserted, from 0.5.3.
        Example("openrlhf_rloo_n1_flat.sh", """\
python3 -m openrlhf.cli.train_ppo_ray \\
   --rollout_batch_size 128 \\
   --n_samples_per_prompt 1 \\
   --advantage_estimator rloo
""", flagged=(3,),
                severity="error",
                message="--n_samples_per_prompt 1: rloo needs at least 2 samples per prompt",
                fix="set --n_samples_per_prompt to 2 or more"),
        # No release that takes the flat flags asserts it for dr_grpo.
        Example("openrlhf_dr_grpo_n1_flat.sh", """\
python3 -m openrlhf.cli.train_ppo_ray \\
   --rollout_batch_size 128 \\
   --n_samples_per_prompt 1 \\
   --advantage_estimator dr_grpo
"""),
        # EasyR1: rollout_batch_size must be whole mini-batches (global_batch_size), x n whole experience micro batches.
        # No EasyR1 copy in the project: a fork from before v0.3.0 may predate the checks.
        Example("easyr1_grpo_n1.yaml", """\
data:
  rollout_batch_size: 512
algorithm:
  adv_estimator: grpo
worker:
  actor:
    global_batch_size: 64
    micro_batch_size_per_device_for_experience: 16
  rollout:
    n: 1
""", flagged=(10,),
                severity="info",
                message="worker.rollout.n 1: grpo needs at least 2 samples per prompt",
                fix="set worker.rollout.n to 2 or more"),
        Example("easyr1_grpo_n1_v0_3_2.yaml", """\
data:
  rollout_batch_size: 512
algorithm:
  adv_estimator: grpo
worker:
  actor:
    global_batch_size: 64
    micro_batch_size_per_device_for_experience: 16
  rollout:
    n: 1
""", flagged=(10,),
                files=(("verl/__init__.py", '__version__ = "0.3.2"\n'),),
                severity="error",
                message="worker.rollout.n 1: grpo needs at least 2 samples per prompt",
                fix="set worker.rollout.n to 2 or more"),
        Example("easyr1_grpo_n1_early.yaml", """\
data:
  rollout_batch_size: 512
algorithm:
  adv_estimator: grpo
worker:
  actor:
    global_batch_size: 64
    micro_batch_size_per_device_for_experience: 16
  rollout:
    n: 1
""", files=(("verl/__init__.py", '__version__ = "0.2.0.dev"\n'),)),
        Example("easyr1_remax_n1.yaml", """\
data:
  rollout_batch_size: 512
algorithm:
  adv_estimator: remax
worker:
  actor:
    global_batch_size: 64
    micro_batch_size_per_device_for_experience: 16
  rollout:
    n: 1
"""),
        Example("easyr1_rollout_100.yaml", """\
data:
  rollout_batch_size: 100
algorithm:
  adv_estimator: grpo
worker:
  actor:
    global_batch_size: 64
    micro_batch_size_per_device_for_experience: 4
  rollout:
    n: 5
""", flagged=(2,),
                message="generation batch 500 is not a multiple of 320 (worker.actor.global_batch_size x "
                        "worker.rollout.n)",
                fix="make data.rollout_batch_size (100) x worker.rollout.n (5) a multiple of 320"),
        Example("easyr1_rollout_128.yaml", """\
data:
  rollout_batch_size: 128
algorithm:
  adv_estimator: grpo
worker:
  actor:
    global_batch_size: 64
    micro_batch_size_per_device_for_experience: 4
  rollout:
    n: 5
"""),
        Example("easyr1_experience_3.yaml", """\
data:
  rollout_batch_size: 128
algorithm:
  adv_estimator: grpo
worker:
  actor:
    global_batch_size: 64
    micro_batch_size_per_device_for_experience: 3
  rollout:
    n: 5
""", flagged=(2,),
                message="generation batch 640 is not a multiple of 3 "
                        "(worker.actor.micro_batch_size_per_device_for_experience)",
                fix="make data.rollout_batch_size (128) x worker.rollout.n (5) a multiple of 3"),
    ),
)
