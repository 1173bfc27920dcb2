"""
## What it does
Checks an OpenRLHF PPO launch line with `--train.colocate_all` (and no
`--train.async_enable`): the vLLM engines share the actor's GPUs, so
`--vllm.num_engines` x `--vllm.tensor_parallel_size` must equal
`--actor.num_nodes` x `--actor.num_gpus_per_node` (defaults 1 x 8). Colocated
roles also need the same nodes and GPUs per node: actor and reference model
(`--train.colocate_actor_ref` or `--train.colocate_all`, while the KL
coefficient `--algo.kl.init_coef` is above 0), critic and reward model
(`--train.colocate_critic_reward`, with the default `gae` estimator, which
trains a critic).

## Why is this bad?
`train_ppo_ray.py` asserts the two are equal before it creates the engines;
the job fails after Ray has started and the GPUs were granted.

## Example
```bash
python3 -m openrlhf.cli.train_ppo_ray \\
   --actor.num_gpus_per_node 8 \\
   --vllm.num_engines 3 \\
   --vllm.tensor_parallel_size 2 \\
   --train.colocate_all      # 3 x 2 = 6 engines' GPUs for 8 actor GPUs
```

## Use instead
```bash
python3 -m openrlhf.cli.train_ppo_ray \\
   --actor.num_gpus_per_node 8 \\
   --vllm.num_engines 4 \\
   --vllm.tensor_parallel_size 2 \\
   --train.colocate_all
```

By release: the actor/ref and critic/reward placements are asserted in every
release; `--colocate_all_models` (`--train.colocate_all`) is new in 0.5.8, and
the engines' GPUs are asserted equal to the actor's, whatever the vLLM memory
share, from 0.6.0.post1 on (0.5.9 and 0.6.0 only at
`--vllm_gpu_memory_utilization` >= 0.9, the default).

## Source
openrlhf/cli/train_ppo_ray.py:55-63 @ v0.11.0 (vLLM engines), 41-46 (actor and ref),
109-113 (critic and reward), 600-606 (a critic only with `gae`), 198-237
(defaults), 419 (kl.init_coef default 0.01).
"""

from collections.abc import Iterator

from batchlint.frameworks import openrlhf
from batchlint.frameworks.openrlhf import OpenRLHFSettings, PPOArguments
from batchlint.plan import Fact, TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

PLACEMENT = Premise(
    openrlhf.DISTRIBUTION, name="placement",
    source="v0.3.6 openrlhf/cli/train_ppo_ray.py:50-53 (actor and ref), 89-93 (critic and reward); "
           "0.11.2 openrlhf/cli/train_ppo_ray.py:41-46, 109-113 (still)")
# --colocate_all_models is new in 0.5.8.
COLOCATE_ALL = Premise(
    openrlhf.DISTRIBUTION, since="0.5.8", runs_since="0.5.8", name="colocate all",
    source="v0.5.7 openrlhf/cli/train_ppo_ray.py (no --colocate_all_models); v0.5.8 openrlhf/cli/train_ppo_ray.py:54-57 "
           "(actor and ref, first); 0.11.2 openrlhf/cli/train_ppo_ray.py:41-46 (still)")
ENGINES = Premise(
    openrlhf.DISTRIBUTION, since="0.6.0.post1", runs_since="0.5.8", name="engines",
    source="v0.5.8 openrlhf/cli/train_ppo_ray.py (no such assertion); v0.5.9 train_ppo_ray.py:67-80 (only with "
           "--vllm_gpu_memory_utilization >= 0.9); v0.6.0.post1 openrlhf/cli/train_ppo_ray.py:74-79 (first, unconditional); "
           "0.11.2 openrlhf/cli/train_ppo_ray.py:56-64 (still)")


def check(plan: TrainingPlan, openrlhf_settings: OpenRLHFSettings) -> Iterator[Finding]:
    args, world = openrlhf_settings.ppo, plan.world_size
    if args is None:
        return  # not train_ppo_ray: no Ray placement
    engines, vllm_tp, colocate = args.vllm_engines, args.vllm_tp, args.colocate_all
    yield from _same_group(plan, args, "actor", "ref", (args.colocate_actor_ref, args.colocate_all), args.uses_ref)
    yield from _same_group(plan, args, "critic", "reward", (args.colocate_critic_reward,), args.uses_critic)
    n_engines, tp, w = engines.count, vllm_tp.count, world.count if world is not None else None
    if not colocate.value or args.async_enable.value or n_engines is None or tp is None or w is None:
        return
    product = n_engines * tp
    if product == w:
        return
    fix = (f"set {engines.key} to {w // tp}" if w % tp == 0 else f"make {engines.key} x {vllm_tp.key} equal {w}")
    yield Finding(
        span=engines.span,
        message=f"{product} vLLM GPUs ({n_engines} engines x tp {tp}) for the actor's {w} GPUs, colocated",
        notes=(f"{engines.describe()} x {vllm_tp.describe()} = {product}; the actor has W = {w} "
               f"({world.provenance if world is not None else ''})",
               f"with {colocate.key} the vLLM engines share the actor's GPUs: train_ppo_ray asserts they are equal"),
        fix=fix,
        related=(Related(f"{colocate.key} set here", colocate.span),) if colocate.span else (),
        premise=openrlhf.premise_name(plan, ENGINES),
    )


def _same_group(plan: TrainingPlan, args: PPOArguments, first: str, second: str, switches: tuple[Fact, ...],
                applies: bool) -> Iterator[Finding]:
    """Colocated roles share one placement group: the same nodes and GPUs per node (train_ppo_ray.py:41-46, 109-113)."""
    on = next((s for s in switches if s.value), None)
    if on is None or not applies:
        return
    shapes = []
    for role in (first, second):
        nodes, gpus = args.roles[role].nodes, args.roles[role].gpus
        if not (nodes.known and gpus.known):
            return
        shapes.append((nodes, gpus))
    (n1, g1), (n2, g2) = shapes
    if (n1.value, g1.value) == (n2.value, g2.value):
        return
    at = next((f.span for f in (g2, n2, g1, n1) if f.span is not None), on.span)
    yield Finding(
        span=at,
        message=(f"the {first} has {n1.value} x {g1.value} GPUs and the {second} {n2.value} x {g2.value}; "
                 f"colocated, they must match"),
        notes=(f"{first}: {n1.describe()} x {g1.describe()}; {second}: {n2.describe()} x {g2.describe()}",
               f"with {on.key} the {first} and {second} models share a placement group: train_ppo_ray asserts "
               f"they are the same"),
        fix=f"give --{second}.num_nodes and --{second}.num_gpus_per_node the {first}'s values ({n1.value} x {g1.value})",
        related=(Related(f"{on.key} set here", on.span),) if on.span else (),
        premise=openrlhf.premise_name(plan, COLOCATE_ALL if on is args.colocate_all else PLACEMENT),
    )


_FLAT = """\
python3 -m openrlhf.cli.train_ppo_ray \\
   --actor_num_nodes 1 \\
   --actor_num_gpus_per_node 8 \\
   --vllm_num_engines 3 \\
   --vllm_tensor_parallel_size 2 \\
   --colocate_all_models \\
   --train_batch_size 128 \\
   --micro_train_batch_size 4
"""

RULE = Rule(
    code="BL260",
    name="openrlhf-colocated-gpus",
    severity="error",
    summary="OpenRLHF PPO: colocated roles on different GPUs (vLLM engines x tp vs the actor, actor vs ref, critic vs reward)",
    check=check,
    subject=OpenRLHFSettings,
    premises=tuple(p for premise in (PLACEMENT, COLOCATE_ALL, ENGINES) for p in openrlhf.variants(premise)),
    doc=__doc__,
    examples=(
        Example("colocate_6_on_8.sh", """\
python3 -m openrlhf.cli.train_ppo_ray \\
   --actor.num_nodes 1 \\
   --actor.num_gpus_per_node 8 \\
   --vllm.num_engines 3 \\
   --vllm.tensor_parallel_size 2 \\
   --train.colocate_all \\
   --train.batch_size 128 \\
   --train.micro_batch_size 4 \\
   --data.max_len 2048
""", flagged=(4,), severity="error",
                message="6 vLLM GPUs (3 engines x tp 2) for the actor's 8 GPUs, colocated",
                fix="set --vllm.num_engines to 4"),
        # The flat flags: 0.5.9 and 0.6.0 assert it only at a vLLM memory share of 0.9 or more.
        Example("colocate_6_on_8_flat.sh", _FLAT, flagged=(4,), severity="info",
                message="6 vLLM GPUs (3 engines x tp 2) for the actor's 8 GPUs, colocated",
                fix="set --vllm_num_engines to 4"),
        Example("colocate_6_on_8_flat_0_6_0_post1.sh", _FLAT, flagged=(4,),
                files=(("requirements.txt", "openrlhf==0.6.0.post1\n"),), severity="error",
                message="6 vLLM GPUs (3 engines x tp 2) for the actor's 8 GPUs, colocated",
                fix="set --vllm_num_engines to 4"),
        Example("colocate_6_on_8_flat_0_6_0.sh", _FLAT, files=(("requirements.txt", "openrlhf==0.6.0\n"),)),
        Example("colocate_8_on_8.sh", """\
python3 -m openrlhf.cli.train_ppo_ray \\
   --actor.num_nodes 1 \\
   --actor.num_gpus_per_node 8 \\
   --vllm.num_engines 4 \\
   --vllm.tensor_parallel_size 2 \\
   --train.colocate_all \\
   --train.batch_size 128 \\
   --train.micro_batch_size 4 \\
   --data.max_len 2048
"""),
        Example("colocate_ref_4.sh", """\
python3 -m openrlhf.cli.train_ppo_ray \\
   --actor.num_nodes 1 \\
   --actor.num_gpus_per_node 8 \\
   --vllm.num_engines 4 \\
   --vllm.tensor_parallel_size 2 \\
   --train.colocate_all \\
   --train.batch_size 128 \\
   --train.micro_batch_size 4 \\
   --data.max_len 2048 \\
   --ref.num_gpus_per_node 4
""", flagged=(10,),
                message="the actor has 1 x 8 GPUs and the ref 1 x 4; colocated, they must match",
                fix="give --ref.num_nodes and --ref.num_gpus_per_node the actor's values (1 x 8)"),
        Example("colocate_ref_8.sh", """\
python3 -m openrlhf.cli.train_ppo_ray \\
   --actor.num_nodes 1 \\
   --actor.num_gpus_per_node 8 \\
   --vllm.num_engines 4 \\
   --vllm.tensor_parallel_size 2 \\
   --train.colocate_all \\
   --train.batch_size 128 \\
   --train.micro_batch_size 4 \\
   --data.max_len 2048 \\
   --ref.num_gpus_per_node 8
"""),
    ),
)
