"""
## What it does
Checks an axolotl GRPO config (`rl: grpo` with `trl.num_generations`) the
way its validation does: `num_generations` must be at least 2, the
generation batch (`trl.generation_batch_size`, else `micro_batch_size` x
`gradient_accumulation_steps`) must be a multiple of `num_generations`, and
with the world size known it must be at least `num_generations` x W.

## Why is this bad?
GRPO scores every prompt against `num_generations` completions of it: a
generation batch that is not whole groups cannot be split into prompts, a
single generation has no group to compare with, and each rank needs a full
group. axolotl refuses such a config at start-up, after the job has its GPUs.

## Example
```yaml
rl: grpo
micro_batch_size: 2
gradient_accumulation_steps: 3   # 6 completions, not a multiple of 4
trl:
  num_generations: 4
```

## Use instead
```yaml
rl: grpo
micro_batch_size: 2
gradient_accumulation_steps: 4
trl:
  num_generations: 4
```

## Source
axolotl 067b021 (0.18.0): src/axolotl/utils/schemas/validation.py:785-867
(`check_grpo_batch_size_divisibility`; the world size is WORLD_SIZE,
cli/config.py:369).
"""

from math import gcd

from batchlint.plan import Origin
from batchlint.rule import Example, Finding, Related, Rule


def check(plan):
    generations, batch = plan.rl.samples_per_prompt, plan.rl.generation_batch
    if generations is None or not generations.known:
        return  # TRL's own default applies; axolotl checks nothing
    if generations.value < 2:
        yield Finding(
            span=generations.span,
            message=f"trl.num_generations is {generations.value}: GRPO needs at least 2 completions per prompt "
                    f"(one gives every group zero advantage) and axolotl refuses the config",
            fix="set trl.num_generations to 2 or more",
        )
        return
    if batch is None:
        return
    n = generations.value
    how = batch.detail if batch.origin is Origin.DERIVED else batch.key
    related = (Related(f"trl.num_generations = {n}", generations.span),)
    if batch.value % n:
        yield Finding(
            span=batch.span,
            message=f"the generation batch {how} = {batch.value} is not a multiple of trl.num_generations ({n}): "
                    f"the completions do not form whole groups and axolotl refuses the config",
            fix=_fix(plan, batch, n),
            related=related,
        )
        return
    world = plan.world_size
    if world is not None and world.known and batch.value < n * world.value:
        yield Finding(
            span=batch.span,
            message=f"the generation batch {how} = {batch.value} is less than trl.num_generations ({n}) x W ({world.value}) "
                    f"= {n * world.value}: each rank needs a full group and axolotl refuses the config",
            fix=f"raise the generation batch to at least {n * world.value}",
            related=related,
        )


def _fix(plan, batch, n):
    if batch.origin is not Origin.DERIVED:
        return f"set trl.generation_batch_size to a multiple of {n}"
    micro = plan.micro_batch
    mb = micro.value if micro.positive else 1
    ga = n // gcd(n, mb)
    return f"set gradient_accumulation_steps to a multiple of {ga} (micro_batch_size {mb} x {ga} = {mb * ga})"


_CONFIG = """\
base_model: Qwen/Qwen2.5-0.5B-Instruct
rl: grpo
micro_batch_size: 2
gradient_accumulation_steps: {ga}
trl:
  num_generations: {n}
"""

RULE = Rule(
    code="BL152",
    name="axolotl-grpo-generation-batch",
    severity="error",
    summary="axolotl GRPO: a generation batch that is not whole groups of num_generations",
    check=check,
    frameworks=("axolotl",),  # axolotl's own validation, with its own limits
    needs=("rl.samples_per_prompt",),
    doc=__doc__,
    examples=(
        Example("grpo_6_of_4.yaml", _CONFIG.format(ga=3, n=4), flagged=(4,)),
        Example("grpo_8_of_4.yaml", _CONFIG.format(ga=4, n=4)),
        Example("grpo_one_generation.yaml", _CONFIG.format(ga=4, n=1), flagged=(6,)),
        Example("grpo_8_on_4_gpus.yaml", _CONFIG.format(ga=4, n=4), flagged=(4,), world_size=4),
        Example("grpo_16_on_4_gpus.yaml", _CONFIG.format(ga=8, n=4), world_size=4),
    ),
)
