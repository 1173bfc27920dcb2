"""
## What it does
Checks the generation batch of an ms-swift Megatron GRPO config
(`rlhf_type: grpo`) the way ms-swift resolves it: `generation_batch_size`,
else `global_batch_size` (default 16) x `steps_per_generation` (default 1),
must be a whole number of groups of `num_generations` (default 8); with the
world size known, the prompts (generation batch / num_generations) must
split evenly over dp = W / (tp x pp x cp) and each rank's share over
`micro_batch_size`. A Ray config's `train:` group and `train.gpus` count.

## Why is this bad?
Each prompt is sampled `num_generations` times and the group is scored
together, so the prompts, not the completions, are what the data-parallel
ranks share. ms-swift refuses a generation batch that does not split this
way when it parses the arguments (and the Ray driver before it spawns the
workers).

## Example
```yaml
rlhf_type: grpo
micro_batch_size: 2
global_batch_size: 12
num_generations: 8     # 12 completions are not whole groups of 8
```

## Use instead
```yaml
rlhf_type: grpo
micro_batch_size: 2
global_batch_size: 16
num_generations: 8
```

## Source
ms-swift 3602360: swift/megatron/arguments/megatron_args.py:260-341
(`resolve_generation_batch_size`, `validate_batch_dp_alignment`,
`_init_generation_batch_params`), defaults 74-76 and 482-483;
swift/ray/megatron/pipeline.py:170-187 and driver_utils.py:162-168 (Ray).
"""

from batchlint.rule import Example, Finding, Rule


def check(plan):
    settings = plan.settings
    facts = vars(settings)
    if not all(f is None or f.known for f in facts.values()):
        return
    if not all(facts[k] is None or facts[k].positive for k in _SIZES):
        return  # a size of 0 or less makes no generation batch (BL104 reports the batch sizes)
    at = next((f for f in (facts[k] for k in _BLAME) if f is not None and f.span is not None), None)
    if at is None:
        return
    problem = _resolve(settings) or _align(settings, plan)
    if problem:
        message, fix = problem
        yield Finding(span=at.span, message=f"{message}; ms-swift refuses to start", fix=fix)


# What must be 1 or more for the generation batch to be worked out (steps_per_generation has its own finding).
_SIZES = ("global_batch_size", "generation_batch_size", "num_generations", "micro_batch_size")
# The value to point at, in the order a user would change them.
_BLAME = ("generation_batch_size", "steps_per_generation", "global_batch_size", "num_generations")


def _resolve(settings):
    given, steps, global_ = settings.generation_batch_size, settings.steps_per_generation, settings.global_batch_size
    n = settings.num_generations.value
    if given is not None and steps is not None and given.value != global_.value * steps.value:
        return (f"{given.describe()} is not {global_.describe()} x {steps.describe()} = {global_.value * steps.value}",
                "give only one of generation_batch_size and steps_per_generation")
    if given is not None and steps is None and given.value % global_.value:
        return (f"{given.describe()} is not a multiple of {global_.describe()}",
                f"set generation_batch_size to a multiple of {global_.value}")
    if steps is not None and steps.value <= 0:
        return f"{steps.describe()} must be 1 or more", "set steps_per_generation to 1 or more"
    batch, how = settings.generation_batch()
    if n > 1 and batch % n:
        return (f"the generation batch {how} = {batch} is not a multiple of num_generations ({n}): the completions "
                f"do not form whole groups", f"make the generation batch a multiple of {n}")
    return None


def _align(settings, plan):
    dp, world = plan.data_parallel, plan.world_size
    if dp is None or not dp.known or dp.value <= 0:
        return None
    batch, how = settings.generation_batch()
    n, micro = settings.num_generations.value, settings.micro_batch_size.value
    prompts = batch // n
    if prompts % dp.value:
        return (f"the {prompts} prompts per generation ({how} = {batch} / num_generations {n}) do not split over "
                f"dp {dp.value}", f"make the generation batch a multiple of num_generations x dp = {n * dp.value}")
    if prompts // dp.value == 0 or (prompts // dp.value) % micro:
        return (f"each of dp {dp.value} ranks gets {prompts // dp.value} prompts ({how} = {batch} / num_generations "
                f"{n} / dp {dp.value}), not a multiple of micro_batch_size ({micro})",
                f"make the generation batch a multiple of num_generations x dp x micro = {n * dp.value * micro}")
    if world is not None and world.positive and batch // world.value < 1:
        return (f"the generation batch {batch} gives each of W {world.value} GPUs less than one completion",
                f"raise the generation batch to at least {world.value}")
    return None


_CONFIG = """\
rlhf_type: grpo
model: Qwen/Qwen2.5-VL-3B-Instruct
micro_batch_size: 2
global_batch_size: {global_}
num_generations: 8
steps_per_generation: {steps}
use_vllm: true
"""

RULE = Rule(
    code="BL153",
    name="swift-megatron-grpo-generation-batch",
    severity="error",
    summary="ms-swift Megatron GRPO: a generation batch that does not split into groups, prompts and micro batches",
    check=check,
    frameworks=("swift-megatron",),  # ms-swift's own resolution of its GRPO keys
    needs=("settings",),
    doc=__doc__,
    examples=(
        Example("grpo_12x1.yaml", _CONFIG.format(global_=12, steps=1), flagged=(6,)),
        Example("grpo_16x1.yaml", _CONFIG.format(global_=16, steps=1)),
        # 16 x 4 = 64 completions = 8 prompts; over dp 4 that is 2 per rank, one micro batch of 2.
        Example("grpo_64_on_4.yaml", _CONFIG.format(global_=16, steps=4), world_size=4),
        # over dp 8 that is 1 prompt per rank, not a multiple of micro_batch_size 2.
        Example("grpo_64_on_8.yaml", _CONFIG.format(global_=16, steps=4), flagged=(6,), world_size=8),
    ),
)
