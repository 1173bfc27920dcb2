"""
## What it does
Checks the generation batch of a TRL GRPO or RLOO config (one that sets
`num_generations`). The generation batch is `generation_batch_size`, or
`per_device_train_batch_size` x W x `steps_per_generation` (which defaults to
`gradient_accumulation_steps`); it must hold whole groups of
`num_generations` completions, and a given `generation_batch_size` must be a
multiple of `per_device_train_batch_size` x W. With evaluation on,
`per_device_eval_batch_size` x W must also be a multiple of the number of
generations used for evaluation. `num_generations` must be at least 2, and
`generation_batch_size` and `steps_per_generation` exclude each other. What
needs the world size W is checked when W is known, or when it fails for
every W.

## Why is this bad?
Advantages are computed within each prompt's group of completions: GRPOConfig
and RLOOConfig refuse a batch that would split a group, at start-up
("generation_batch_size (...) must be divisible by num_generations").

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
trl/trainer/grpo_config.py:1096-1141 (`__post_init__`), 480-486 (`num_generations`
default 8), 521-531; trl/trainer/rloo_config.py:659-704 @ 1.16.0; the same
checks since 0.19.1 (grpo_config.py:529-575).
"""

from batchlint.rule import Example, Finding, Related, Rule


def check(plan):
    settings = plan.settings.grpo
    generations = settings.num_generations
    if not generations.known:
        return
    related = (Related(f"num_generations = {generations.value}", generations.span),)
    if generations.value < 2:
        yield Finding(
            span=generations.span,
            message=f"num_generations is {generations.value}: GRPO needs at least 2 completions per prompt to compute advantages",
            fix="set num_generations to 2 or more",
        )
        return
    size, steps = settings.generation_batch_size, settings.steps_per_generation
    if size is not None and steps is not None:
        yield Finding(
            span=steps.span,
            message=f"generation_batch_size ({size.value}) and steps_per_generation ({steps.value}) are both set; TRL accepts one",
            fix="remove one of them",
            related=(Related("generation_batch_size set here", size.span),),
        )
        return
    micro, world = plan.micro_batch, plan.world_size
    if not (micro is not None and micro.known and micro.value > 0):
        return
    w_known = world is not None and world.known
    if size is not None:
        yield from _given_size(size, micro, world if w_known else None, generations, related)
    elif w_known:
        yield from _derived_size(steps or plan.grad_accum, micro, world, generations)
    if w_known:
        yield from _eval_batch(settings, world, generations)


def _given_size(size, micro, world, generations, related):
    if not size.known:
        return
    if size.value % generations.value:
        yield Finding(
            span=size.span,
            message=(
                f"generation_batch_size ({size.value}) is not a multiple of num_generations ({generations.value}): "
                f"a group of completions would be split, and TRL refuses to start"
            ),
            fix=f"set generation_batch_size to a multiple of {generations.value}, or num_generations to a divisor of {size.value}",
            related=related,
        )
    per_step, shown = (micro.value * world.value, f"{micro.describe()} x W ({world.value})") if world else (micro.value, micro.describe())
    if size.value % per_step:
        every = "" if world else ", so no world size makes it a multiple of the global batch"
        yield Finding(
            span=size.span,
            message=(
                f"generation_batch_size ({size.value}) is not a multiple of {shown} = {per_step}{every}: "
                f"TRL refuses to start"
            ),
            fix=f"set generation_batch_size to a multiple of {per_step}",
            related=(Related(f"{micro.key} = {micro.value}", micro.span),) if micro.span else (),
        )


def _derived_size(steps, micro, world, generations):
    if steps is None or not steps.known or steps.value <= 0:
        return
    size = micro.value * world.value * steps.value
    if size % generations.value == 0:
        return
    formula = f"{micro.describe()} x W ({world.value}) x {steps.describe()}"
    yield Finding(
        span=generations.span,
        message=(
            f"the generation batch {formula} = {size} is not a multiple of num_generations ({generations.value}): "
            f"a group of completions would be split, and TRL refuses to start"
        ),
        fix=f"set num_generations to a divisor of {size}, or change the batch so that it holds whole groups of {generations.value}",
        related=tuple(Related(f"{f.key} = {f.value}", f.span) for f in (micro, steps) if f.span),
    )


def _eval_batch(settings, world, generations):
    if not settings.evaluates:
        return
    strategy, eval_micro = settings.eval_strategy, settings.per_device_eval_batch_size
    eval_generations = settings.num_generations_eval or generations
    if not (eval_micro.known and eval_generations.known and eval_generations.value > 0):
        return
    size = eval_micro.value * world.value
    if size % eval_generations.value == 0:
        return
    yield Finding(
        span=eval_generations.span or eval_micro.span or strategy.span,
        message=(
            f"the evaluation batch {eval_micro.describe()} x W ({world.value}) = {size} is not a multiple of "
            f"{eval_generations.describe()}: TRL refuses to start"
        ),
        fix=f"set per_device_eval_batch_size so that it times {world.value} is a multiple of {eval_generations.value}, or set num_generations_eval",
    )


_GRPO = """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 4
gradient_accumulation_steps: 1
num_generations: {generations}
"""

RULE = Rule(
    code="BL121",
    name="trl-generation-batch-indivisible",
    severity="error",
    summary="TRL GRPO/RLOO: a generation batch that does not hold whole groups of num_generations",
    check=check,
    frameworks=("trl",),  # GRPOConfig's own checks of its arguments
    needs=("settings.grpo",),
    doc=__doc__,
    examples=(
        Example("grpo_6_on_4.yaml", _GRPO.format(generations=6), flagged=(4,), world_size=4),
        Example("grpo_8_on_4.yaml", _GRPO.format(generations=8), world_size=4),
        Example("grpo_6_unknown_w.yaml", _GRPO.format(generations=6)),
        Example(
            "grpo_given_size.yaml",
            _GRPO.format(generations=8) + "generation_batch_size: 30\n",
            flagged=(5, 5),
        ),
        Example("grpo_given_size_ok.yaml", _GRPO.format(generations=8) + "generation_batch_size: 32\n"),
    ),
)
