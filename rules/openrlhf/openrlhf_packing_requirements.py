"""
## What it does
Checks what OpenRLHF's packing (`--ds.packing_samples`) depends on: SFT, DPO
and reward-model training (`openrlhf.cli.train_sft|train_dpo|train_rm`) refuse
ring attention (`--ds.ring_attn_size` > 1) without packing, and PPO
(`train_ppo_ray`) refuses packing without vLLM (`--vllm.num_engines` unset or
0).

## Why is this bad?
Ring attention splits packed sequences across its ranks; PPO's packed
experience path is only implemented for vLLM rollouts. The CLI asserts both
at start-up, after the job waited for its GPUs. (train_ppo_ray turns packing
on by itself when ring attention is on, so ring without packing is not an
error there.)

## Example
```bash
deepspeed --num_gpus 8 --module openrlhf.cli.train_sft \\
   --train.batch_size 256 \\
   --train.micro_batch_size 2 \\
   --ds.ring_attn_size 2
```

## Use instead
```bash
deepspeed --num_gpus 8 --module openrlhf.cli.train_sft \\
   --train.batch_size 256 \\
   --train.micro_batch_size 2 \\
   --ds.ring_attn_size 2 \\
   --ds.packing_samples
```

By release: each trainer asserts ring attention's packing from the release
that gave it `--ring_attn_size` (DPO 0.4.3, RM 0.4.4, SFT 0.5.4); PPO asserts
packing with vLLM from 0.4.4, which gave it `--packing_samples`, and turns
packing on for ring attention from 0.8.4 (0.6.0-0.8.3 take ring attention
without packing, and say nothing).

## Source
openrlhf/cli/train_sft.py:321-322 @ v0.11.0, train_dpo.py:355-356, train_rm.py:332-333
(ring attention needs packing); train_ppo_ray.py:642-645 (PPO forces packing
on), 655-661 (packing needs vLLM), 232 (vllm.num_engines default None).
"""

from collections.abc import Iterator

from batchlint.frameworks import openrlhf
from batchlint.frameworks.openrlhf import OpenRLHFSettings
from batchlint.plan import Origin, TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Rule

# Each trainer asserts it from the release that gave it --ring_attn_size: no earlier one runs such a line.
RING = {
    "train_dpo": Premise(
        openrlhf.DISTRIBUTION, since="0.4.3", runs_since="0.4.3", name="ring dpo",
        source="v0.4.3 openrlhf/cli/train_dpo.py:201 (--ring_attn_size, first), 260 (the assertion); "
               "0.11.2 openrlhf/cli/train_dpo.py:356-357 (still)"),
    "train_rm": Premise(
        openrlhf.DISTRIBUTION, since="0.4.4", runs_since="0.4.4", name="ring rm",
        source="v0.4.4 openrlhf/cli/train_rm.py:175 (--ring_attn_size, first), 248 (the assertion); "
               "0.11.2 openrlhf/cli/train_rm.py:333-334 (still)"),
    "train_sft": Premise(
        openrlhf.DISTRIBUTION, since="0.5.4", runs_since="0.5.4", name="ring sft",
        source="v0.5.4 openrlhf/cli/train_sft.py:179 (--ring_attn_size, first), 247 (the assertion); "
               "0.11.2 openrlhf/cli/train_sft.py:321-322 (still)"),
}
# PPO's --packing_samples is new in 0.4.4, with the assertion.
PPO_VLLM = Premise(
    openrlhf.DISTRIBUTION, since="0.4.4", runs_since="0.4.4", name="ppo vllm",
    source="v0.4.4 openrlhf/cli/train_ppo_ray.py:235 (--packing_samples, first), 349 (the assertion); "
           "0.11.2 openrlhf/cli/train_ppo_ray.py:705 (still)")
# Packing turned on by ring attention (PPO's --ring_attn_size is new in 0.6.0).
PPO_RING = Premise(
    openrlhf.DISTRIBUTION, since="0.8.4", runs_since="0.6.0", name="ppo ring",
    source="v0.6.0 openrlhf/cli/train_ppo_ray.py:342 (--ring_attn_size), 431-436 (packing only when written); "
           "v0.8.3 train_ppo_ray.py:483-487 (the same); v0.8.4 openrlhf/cli/train_ppo_ray.py:483-486 "
           "(ring attention turns packing on, first); 0.11.2 openrlhf/cli/train_ppo_ray.py:686-689, 705 (still)")


def check(plan: TrainingPlan, args: OpenRLHFSettings) -> Iterator[Finding]:
    ring, packing = plan.parallel.get("sp"), plan.packing
    if args.ring_needs_packing:
        ring_size = ring.number if ring is not None else None
        if ring is not None and ring_size is not None and ring_size > 1 and packing is not None \
                and packing.value is False:
            yield Finding(
                span=ring.span,
                message=f"{ring.describe()} without {packing.key}",
                notes=(f"{args.entry} asserts \"packing_samples must be enabled when using ring attention\" and "
                       f"refuses to start",),
                fix=f"add {packing.key}, or drop {ring.key}",
                premise=openrlhf.premise_name(plan, RING[args.entry]),
            )
    elif args.ppo is not None and packing is not None and packing.value is True:
        engines = args.ppo.vllm_engines
        engine_count = engines.number
        if engines.value is None or (engine_count is not None and engine_count <= 0):
            shown = f"{engines.key} {engines.value}" if engines.value is not None else f"{engines.key} not set"
            yield Finding(
                span=packing.span or (ring.span if ring is not None else None) or engines.span,
                message=f"{packing.key} without vLLM engines ({shown})",
                notes=(f"packing: {packing.describe()}; engines: "
                       + (engines.describe() if engines.value is not None else f"{engines.key} (not set)"),
                       "train_ppo_ray asserts \"Only support `--packing_samples` with vLLM\" and refuses to start"),
                fix=f"set --vllm.num_engines to 1 or more, or drop {packing.key}",
                premise=openrlhf.premise_name(plan, PPO_RING if packing.origin is Origin.DERIVED else PPO_VLLM),
            )


_SFT_FLAT = """\
deepspeed --num_gpus 8 --module openrlhf.cli.train_sft \\
   --train_batch_size 256 \\
   --micro_train_batch_size 2 \\
   --ring_attn_size 2
"""
_PPO_RING_FLAT = """\
python3 -m openrlhf.cli.train_ppo_ray \\
   --ring_attn_size 2 \\
   --actor_num_gpus_per_node 8 \\
   --train_batch_size 128 \\
   --micro_train_batch_size 4
"""

RULE = Rule(
    code="BL360",
    name="openrlhf-packing-requirements",
    severity="error",
    summary="OpenRLHF: ring attention without --ds.packing_samples (SFT/DPO/RM), packing without vLLM (PPO)",
    check=check,
    subject=OpenRLHFSettings,
    premises=tuple(p for premise in (*RING.values(), PPO_VLLM, PPO_RING) for p in openrlhf.variants(premise)),
    doc=__doc__,
    examples=(
        Example("sft_ring_no_packing.sh", """\
deepspeed --num_gpus 8 --module openrlhf.cli.train_sft \\
   --train.batch_size 256 \\
   --train.micro_batch_size 2 \\
   --ds.ring_attn_size 2
""", flagged=(4,), severity="error",
                message="--ds.ring_attn_size (2) without --ds.packing_samples",
                fix="add --ds.packing_samples, or drop --ds.ring_attn_size"),
        # The flat flags: train_sft has --ring_attn_size, and asserts packing with it, from 0.5.4 on.
        Example("sft_ring_no_packing_flat.sh", _SFT_FLAT, flagged=(4,), severity="error",
                message="--ring_attn_size (2) without --ds.packing_samples",
                fix="add --ds.packing_samples, or drop --ring_attn_size"),
        Example("sft_ring_no_packing_flat_0_5_3.sh", _SFT_FLAT, files=(("requirements.txt", "openrlhf==0.5.3\n"),)),
        # PPO turns packing on for ring attention from 0.8.4 on (0.6.0-0.8.3 leave it off).
        Example("ppo_ring_no_vllm_flat.sh", _PPO_RING_FLAT, flagged=(2,), severity="info",
                message="--ds.packing_samples without vLLM engines (--vllm.num_engines not set)",
                fix="set --vllm.num_engines to 1 or more, or drop --ds.packing_samples"),
        Example("ppo_ring_no_vllm_flat_0_8_4.sh", _PPO_RING_FLAT, flagged=(2,),
                files=(("requirements.txt", "openrlhf==0.8.4\n"),), severity="error",
                message="--ds.packing_samples without vLLM engines (--vllm.num_engines not set)",
                fix="set --vllm.num_engines to 1 or more, or drop --ds.packing_samples"),
        Example("ppo_ring_no_vllm_flat_0_8_3.sh", _PPO_RING_FLAT, files=(("requirements.txt", "openrlhf==0.8.3\n"),)),
        Example("sft_ring_packing.sh", """\
deepspeed --num_gpus 8 --module openrlhf.cli.train_sft \\
   --train.batch_size 256 \\
   --train.micro_batch_size 2 \\
   --ds.ring_attn_size 2 \\
   --ds.packing_samples
"""),
        Example("ppo_packing_no_vllm.sh", """\
python3 -m openrlhf.cli.train_ppo_ray \\
   --actor.num_gpus_per_node 8 \\
   --train.batch_size 128 \\
   --train.micro_batch_size 4 \\
   --ds.packing_samples
""", flagged=(5,),
                message="--ds.packing_samples without vLLM engines (--vllm.num_engines not set)",
                fix="set --vllm.num_engines to 1 or more, or drop --ds.packing_samples"),
        Example("ppo_packing_vllm.sh", """\
python3 -m openrlhf.cli.train_ppo_ray \\
   --actor.num_gpus_per_node 8 \\
   --train.batch_size 128 \\
   --train.micro_batch_size 4 \\
   --ds.packing_samples \\
   --vllm.num_engines 4
"""),
    ),
)
