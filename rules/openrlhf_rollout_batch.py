"""
## What it does
Checks the rollout batch of an OpenRLHF PPO launch line
(`python3 -m openrlhf.cli.train_ppo_ray ...`) against the start-up asserts of
`train_ppo_ray.py`: `--rollout.n_samples_per_prompt` x `--rollout.batch_size`
// `--rollout.micro_batch_size` sample batches must be at least the actor's
processes (`--actor.num_nodes` x `--actor.num_gpus_per_node` //
`--ds.ring_attn_size` // `--ds.tensor_parallel_size`); a
`--rollout.vllm_generate_batch_size` above `--rollout.batch_size` needs
`--train.async_enable`; and the group-baseline estimators (`rloo`,
`reinforce_baseline`, `group_norm`, `dr_grpo`) and dynamic filtering
(`--algo.dynamic_filtering_enable`) need more than one sample per prompt.

## Why is this bad?
`train_ppo_ray.py` asserts each of these after Ray has started: the job dies
once its GPUs were granted. With one sample per prompt a group baseline is the
sample itself, every advantage is 0 and nothing is learned.

## Example
```bash
python3 -m openrlhf.cli.train_ppo_ray \\
   --actor.num_gpus_per_node 8 \\
   --rollout.batch_size 64 \\
   --rollout.micro_batch_size 16 \\
   --rollout.n_samples_per_prompt 1   # 64 // 16 = 4 batches for 8 actor ranks
```

## Use instead
```bash
python3 -m openrlhf.cli.train_ppo_ray \\
   --actor.num_gpus_per_node 8 \\
   --rollout.batch_size 128 \\
   --rollout.micro_batch_size 16 \\
   --rollout.n_samples_per_prompt 1
```

## Source
openrlhf/cli/train_ppo_ray.py:711-717 (sample batches >= actor processes),
690-698 (vllm_generate_batch_size), 700-709 (dynamic filtering needs
n_samples_per_prompt > 1), 606-615 (group estimators need
n_samples_per_prompt > 1); defaults 213-214, 373, 377, 414, 478-481.
"""

from batchlint.frameworks import openrlhf
from batchlint.rule import Example, Finding, Related, Rule

GROUP_ESTIMATORS = ("rloo", "reinforce_baseline", "group_norm", "dr_grpo")


def check(plan):
    facts = openrlhf.rl(plan)
    if facts is None:
        return
    root = plan.document.root
    prompts, n = facts.prompts_per_step, facts.samples_per_prompt
    rollout_micro = facts.micro_batch.get("rollout")
    ring, tp, world = plan.parallel["sp"], plan.parallel["tp"], plan.world_size
    if all(f is not None and f.positive for f in (prompts, n, rollout_micro, ring, tp, world)):
        batches = n.value * prompts.value // rollout_micro.value
        actors = world.value // ring.value // tp.value
        if batches < actors:
            yield Finding(
                span=next((f.span for f in (prompts, rollout_micro, n) if f.span is not None), None),
                message=(f"{n.describe()} x {prompts.describe()} // {rollout_micro.describe()} = {batches} sample "
                         f"batches, fewer than the {actors} actor processes (W {world.value} // {ring.key} "
                         f"{ring.value} // {tp.key} {tp.value}): train_ppo_ray asserts it and refuses to start"),
                fix=(f"raise {prompts.key} to at least {-(-actors * rollout_micro.value // n.value)} "
                     f"or lower {rollout_micro.key}"),
                related=(Related(f"W = {world.value}", world.span),) if world.span is not None else (),
            )
    node, key = openrlhf.get(root, "algo.advantage.estimator")
    estimator = getattr(node, "value", None)
    filtering = openrlhf.switch(root, "algo.dynamic_filtering_enable")
    if filtering.value and n is not None and n.known and n.value <= 1 and estimator not in GROUP_ESTIMATORS:
        yield Finding(
            span=n.span or filtering.span,
            message=(f"{filtering.key} filters prompts by the spread of their samples' rewards but {n.describe()}: "
                     f"train_ppo_ray asserts n_samples_per_prompt > 1"),
            fix=f"set {n.key} to 2 or more",
            related=(Related(f"{filtering.key} set here", filtering.span),) if filtering.span else (),
        )
    if estimator in GROUP_ESTIMATORS and n is not None and n.known and n.value <= 1:
        yield Finding(
            span=n.span or node.span,
            message=(f"{key} {estimator} computes a per-prompt group baseline but {n.describe()}: every advantage "
                     f"is 0, and train_ppo_ray asserts n_samples_per_prompt > 1"),
            fix=f"set {n.key} to 2 or more",
            related=(Related(f"{key} = {estimator}", node.span),),
        )
    generation = openrlhf.fact(root, "rollout.vllm_generate_batch_size")
    is_async = openrlhf.switch(root, "train.async_enable")
    if (generation is not None and generation.positive and prompts is not None and prompts.positive
            and generation.value > prompts.value and not is_async.value):
        yield Finding(
            span=generation.span,
            message=(f"{generation.describe()} is larger than {prompts.describe()}: over-sampling needs the async "
                     f"queue, and train_ppo_ray refuses to start without --train.async_enable"),
            fix=f"add --train.async_enable, or lower {generation.key} to at most {prompts.value}",
        )


_PPO = """\
python3 -m openrlhf.cli.train_ppo_ray \\
   --actor.num_nodes 1 \\
   --actor.num_gpus_per_node 8 \\
   --vllm.num_engines 2 \\
   --train.batch_size 128 \\
   --train.micro_batch_size 4 \\
   --rollout.batch_size {rollout} \\
   --rollout.micro_batch_size 16 \\
   --rollout.n_samples_per_prompt {n}{extra}
"""

RULE = Rule(
    code="BL160",
    name="openrlhf-rollout-batch",
    severity="error",
    summary="OpenRLHF PPO: a rollout batch train_ppo_ray refuses (too few sample batches, n=1 with a group baseline)",
    check=check,
    frameworks=("openrlhf",),
    doc=__doc__,
    examples=(
        Example("ppo_few_batches.sh", _PPO.format(rollout=64, n=1, extra=""), flagged=(7,)),
        Example("ppo_enough_batches.sh", _PPO.format(rollout=128, n=1, extra="")),
        Example("ppo_group_norm_n1.sh", _PPO.format(rollout=128, n=1, extra=" \\\n   --algo.advantage.estimator group_norm"),
                flagged=(9,)),
        Example("ppo_group_norm_n8.sh", _PPO.format(rollout=128, n=8, extra=" \\\n   --algo.advantage.estimator group_norm")),
        Example("ppo_oversampling.sh", _PPO.format(rollout=128, n=4, extra=" \\\n   --rollout.vllm_generate_batch_size 256"),
                flagged=(10,)),
        Example("ppo_oversampling_async.sh", _PPO.format(
            rollout=128, n=4, extra=" \\\n   --rollout.vllm_generate_batch_size 256 \\\n   --train.async_enable")),
    ),
)
