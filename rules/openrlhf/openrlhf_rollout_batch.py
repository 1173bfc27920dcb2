"""
## What it does
Checks the rollout batch of an OpenRLHF PPO launch line
(`python3 -m openrlhf.cli.train_ppo_ray ...`) against the start-up asserts of
`train_ppo_ray.py`: `--rollout.n_samples_per_prompt` x `--rollout.batch_size`
// `--rollout.micro_batch_size` sample batches must be at least the actor's
processes (`--actor.num_nodes` x `--actor.num_gpus_per_node` //
`--ds.ring_attn_size` // `--ds.tensor_parallel_size`); a
`--rollout.vllm_generate_batch_size` above `--rollout.batch_size` needs
`--train.async_enable`. (One sample per prompt with a group estimator or
dynamic filtering is BL170's, the generic generation-batch rule.)

## Why is this bad?
`train_ppo_ray.py` asserts each of these after Ray has started: the job dies
once its GPUs were granted.

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

By release: the sample-batch assertion is new in 0.7.2 (it divides by
`--ds.tensor_parallel_size` from 0.8.1 on; earlier releases divide by less and
refuse more); `--rollout.vllm_generate_batch_size` is new in 0.8.1 and refused
above the rollout batch without async from 0.10.0 on.

## Source
openrlhf/cli/train_ppo_ray.py:711-717 @ v0.11.0 (sample batches >= actor processes),
690-698 (vllm_generate_batch_size); defaults 213-214, 373, 377, 414, 478-481;
the same at 757-763 and 736-745 @ 0.11.2.
"""

from collections.abc import Iterator

from batchlint.frameworks import openrlhf
from batchlint.frameworks.openrlhf import OpenRLHFSettings
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

ACTORS = Premise(
    openrlhf.DISTRIBUTION, since="0.7.2", name="sample batches",
    source="v0.7.1.post2 openrlhf/cli/train_ppo_ray.py (no such assertion); v0.7.2 openrlhf/cli/train_ppo_ray.py:458-461 "
           "(first, // ring_attn_size); v0.8.1 (// ds_tensor_parallel_size too); 0.11.2 openrlhf/cli/train_ppo_ray.py:757-763 (still)")
# --vllm_generate_batch_size is new in 0.8.1.
OVERSAMPLING = Premise(
    openrlhf.DISTRIBUTION, since="0.10.0", runs_since="0.8.1", name="over-sampling",
    source="v0.8.1 openrlhf/cli/train_ppo_ray.py:307 (the flag, first), 501-502 (no assertion); v0.9.10 "
           "train_ppo_ray.py:605-606 (none still); v0.10.0 openrlhf/cli/train_ppo_ray.py:633-637 (first); "
           "0.11.2 openrlhf/cli/train_ppo_ray.py:740-745 (still)")


def check(plan: TrainingPlan, args: OpenRLHFSettings) -> Iterator[Finding]:
    rl, ppo = plan.rl, args.ppo
    if rl is None or ppo is None:
        return  # not train_ppo_ray
    prompts, n = rl.prompts_per_step, rl.samples_per_prompt
    rollout_micro = rl.micro_batch.get("rollout")
    ring, tp, world = plan.parallel["sp"], plan.parallel["tp"], plan.world_size
    prompt_count = prompts.count if prompts is not None else None
    samples = n.count if n is not None else None
    per_batch = rollout_micro.count if rollout_micro is not None else None
    gpus = world.count if world is not None else None
    ring_size, tp_size = ring.count, tp.count
    if prompts is not None and n is not None and rollout_micro is not None and world is not None \
            and prompt_count is not None and samples is not None and per_batch is not None \
            and gpus is not None and ring_size is not None and tp_size is not None:
        batches = samples * prompt_count // per_batch
        actors = gpus // ring_size // tp_size
        if batches < actors:
            yield Finding(
                span=next((f.span for f in (prompts, rollout_micro, n) if f.span is not None), None),
                message=f"{batches} sample batches for {actors} actor processes",
                notes=(f"{n.describe()} x {prompts.describe()} // {rollout_micro.describe()} = {batches} sample "
                       f"batches; W {gpus} // {ring.key} {ring_size} // {tp.key} {tp_size} = {actors} "
                       f"actor processes",
                       "train_ppo_ray asserts at least one batch per actor process and refuses to start"),
                fix=(f"raise {prompts.key} to at least {-(-actors * per_batch // samples)} "
                     f"or lower {rollout_micro.key}"),
                related=(Related(f"W = {world.value}", world.span),) if world.span is not None else (),
                premise=openrlhf.premise_name(plan, ACTORS),
            )
    generation, is_async = ppo.generate_batch, ppo.async_enable
    generation_count = generation.count if generation is not None else None
    if (generation is not None and generation_count is not None and prompts is not None and prompt_count is not None
            and generation_count > prompt_count and not is_async.value):
        flag = "--async_train" if openrlhf.flag_style(plan.document.root) == "flat" else "--train.async_enable"
        yield Finding(
            span=generation.span,
            message=f"{generation.key} {generation.value} is larger than {prompts.key} {prompts.value}",
            notes=(f"{generation.describe()} > {prompts.describe()}: over-sampling needs the async queue, and "
                   f"train_ppo_ray refuses to start without {flag}",),
            fix=f"add {flag}, or lower {generation.key} to at most {prompts.value}",
            premise=openrlhf.premise_name(plan, OVERSAMPLING),
        )


RULE = Rule(
    code="BL160",
    name="openrlhf-rollout-batch",
    severity="error",
    summary="OpenRLHF PPO: a rollout batch train_ppo_ray refuses (too few sample batches, over-sampling without async)",
    check=check,
    subject=OpenRLHFSettings,
    needs=("rl.prompts_per_step",),
    premises=(*openrlhf.variants(ACTORS), *openrlhf.variants(OVERSAMPLING)),
    doc=__doc__,
    examples=(
        # The dotted flags run on 0.10.2 and later only, all of which assert both.
        Example("ppo_few_batches.sh", """\
python3 -m openrlhf.cli.train_ppo_ray \\
   --actor.num_nodes 1 \\
   --actor.num_gpus_per_node 8 \\
   --vllm.num_engines 2 \\
   --train.batch_size 128 \\
   --train.micro_batch_size 4 \\
   --rollout.batch_size 64 \\
   --rollout.micro_batch_size 16 \\
   --rollout.n_samples_per_prompt 1
""", flagged=(7,), severity="error",
                message="4 sample batches for 8 actor processes",
                fix="raise --rollout.batch_size to at least 128 or lower --rollout.micro_batch_size"),
        # The flat flags of earlier releases: 0.7.1 makes no such assertion.
        Example("ppo_few_batches_flat.sh", """\
python3 -m openrlhf.cli.train_ppo_ray \\
   --actor_num_nodes 1 \\
   --actor_num_gpus_per_node 8 \\
   --vllm_num_engines 2 \\
   --train_batch_size 128 \\
   --rollout_batch_size 64 \\
   --micro_rollout_batch_size 16 \\
   --n_samples_per_prompt 1 \\
   --micro_train_batch_size 4
""", flagged=(6,), severity="info",
                message="4 sample batches for 8 actor processes",
                fix="raise --rollout_batch_size to at least 128 or lower --micro_rollout_batch_size"),
        Example("ppo_few_batches_flat_0_7_2.sh", """\
python3 -m openrlhf.cli.train_ppo_ray \\
   --actor_num_nodes 1 \\
   --actor_num_gpus_per_node 8 \\
   --vllm_num_engines 2 \\
   --train_batch_size 128 \\
   --rollout_batch_size 64 \\
   --micro_rollout_batch_size 16 \\
   --n_samples_per_prompt 1 \\
   --micro_train_batch_size 4
""", flagged=(6,), files=(("requirements.txt", "openrlhf==0.7.2\n"),), severity="error",
                message="4 sample batches for 8 actor processes",
                fix="raise --rollout_batch_size to at least 128 or lower --micro_rollout_batch_size"),
        Example("ppo_few_batches_flat_0_7_1.sh", """\
python3 -m openrlhf.cli.train_ppo_ray \\
   --actor_num_nodes 1 \\
   --actor_num_gpus_per_node 8 \\
   --vllm_num_engines 2 \\
   --train_batch_size 128 \\
   --rollout_batch_size 64 \\
   --micro_rollout_batch_size 16 \\
   --n_samples_per_prompt 1 \\
   --micro_train_batch_size 4
""", files=(("requirements.txt", "openrlhf==0.7.1\n"),)),
        Example("ppo_enough_batches.sh", """\
python3 -m openrlhf.cli.train_ppo_ray \\
   --actor.num_nodes 1 \\
   --actor.num_gpus_per_node 8 \\
   --vllm.num_engines 2 \\
   --train.batch_size 128 \\
   --train.micro_batch_size 4 \\
   --rollout.batch_size 128 \\
   --rollout.micro_batch_size 16 \\
   --rollout.n_samples_per_prompt 1
"""),
        Example("ppo_oversampling.sh", """\
python3 -m openrlhf.cli.train_ppo_ray \\
   --actor.num_nodes 1 \\
   --actor.num_gpus_per_node 8 \\
   --vllm.num_engines 2 \\
   --train.batch_size 128 \\
   --train.micro_batch_size 4 \\
   --rollout.batch_size 128 \\
   --rollout.micro_batch_size 16 \\
   --rollout.n_samples_per_prompt 4 \\
   --rollout.vllm_generate_batch_size 256
""", flagged=(10,), severity="error",
                message="--rollout.vllm_generate_batch_size 256 is larger than --rollout.batch_size 128",
                fix="add --train.async_enable, or lower --rollout.vllm_generate_batch_size to at most 128"),
        Example("ppo_oversampling_flat_0_9.sh", """\
python3 -m openrlhf.cli.train_ppo_ray \\
   --actor_num_nodes 1 \\
   --actor_num_gpus_per_node 8 \\
   --vllm_num_engines 2 \\
   --train_batch_size 128 \\
   --rollout_batch_size 128 \\
   --micro_rollout_batch_size 16 \\
   --n_samples_per_prompt 1 \\
   --micro_train_batch_size 4 \\
   --vllm_generate_batch_size 256
""", files=(("requirements.txt", "openrlhf==0.9.10\n"),)),
        Example("ppo_oversampling_flat_0_10.sh", """\
python3 -m openrlhf.cli.train_ppo_ray \\
   --actor_num_nodes 1 \\
   --actor_num_gpus_per_node 8 \\
   --vllm_num_engines 2 \\
   --train_batch_size 128 \\
   --rollout_batch_size 128 \\
   --micro_rollout_batch_size 16 \\
   --n_samples_per_prompt 1 \\
   --micro_train_batch_size 4 \\
   --vllm_generate_batch_size 256
""", flagged=(10,), files=(("requirements.txt", "openrlhf==0.10.0\n"),), severity="error",
                message="--vllm_generate_batch_size 256 is larger than --rollout_batch_size 128",
                fix="add --async_train, or lower --vllm_generate_batch_size to at most 128"),
        Example("ppo_oversampling_async.sh", """\
python3 -m openrlhf.cli.train_ppo_ray \\
   --actor.num_nodes 1 \\
   --actor.num_gpus_per_node 8 \\
   --vllm.num_engines 2 \\
   --train.batch_size 128 \\
   --train.micro_batch_size 4 \\
   --rollout.batch_size 128 \\
   --rollout.micro_batch_size 16 \\
   --rollout.n_samples_per_prompt 4 \\
   --rollout.vllm_generate_batch_size 256 \\
   --train.async_enable
"""),
    ),
)
