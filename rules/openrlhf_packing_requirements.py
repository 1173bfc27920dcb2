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

## Source
openrlhf/cli/train_sft.py:321-322, train_dpo.py:355-356, train_rm.py:332-333
(ring attention needs packing); train_ppo_ray.py:642-645 (PPO forces packing
on), 655-661 (packing needs vLLM), 232 (vllm.num_engines default None).
"""

from collections.abc import Iterator

from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    args, ring, packing = plan.settings, plan.parallel.get("sp"), plan.packing
    if args.ring_needs_packing:
        if ring is not None and ring.known and ring.value > 1 and packing is not None and packing.value is False:
            yield Finding(
                span=ring.span,
                message=(f"{ring.describe()} but {packing.key} is not set: {args.entry} asserts \"packing_samples must "
                         f"be enabled when using ring attention\" and refuses to start"),
                fix=f"add {packing.key}, or drop {ring.key}",
            )
    elif args.ppo is not None and packing is not None and packing.value is True:
        engines = args.ppo.vllm_engines
        if engines.value is None or (engines.known and engines.value <= 0):
            shown = engines.describe() if engines.value is not None else f"{engines.key} (not set)"
            yield Finding(
                span=packing.span or engines.span,
                message=(f"{packing.describe()} but {shown}: train_ppo_ray asserts \"Only support "
                         f"`--packing_samples` with vLLM\" and refuses to start"),
                fix=f"set --vllm.num_engines to 1 or more, or drop {packing.key}",
            )


_SFT = """\
deepspeed --num_gpus 8 --module openrlhf.cli.train_sft \\
   --train.batch_size 256 \\
   --train.micro_batch_size 2 \\
   --ds.ring_attn_size 2{extra}
"""
_PPO = """\
python3 -m openrlhf.cli.train_ppo_ray \\
   --actor.num_gpus_per_node 8 \\
   --train.batch_size 128 \\
   --train.micro_batch_size 4 \\
   --ds.packing_samples{extra}
"""

RULE = Rule(
    code="BL360",
    name="openrlhf-packing-requirements",
    severity="error",
    summary="OpenRLHF: ring attention without --ds.packing_samples (SFT/DPO/RM), packing without vLLM (PPO)",
    check=check,
    needs=("settings.ring_needs_packing",),
    doc=__doc__,
    examples=(
        Example("sft_ring_no_packing.sh", _SFT.format(extra=""), flagged=(4,)),
        Example("sft_ring_packing.sh", _SFT.format(extra=" \\\n   --ds.packing_samples")),
        Example("ppo_packing_no_vllm.sh", _PPO.format(extra=""), flagged=(5,)),
        Example("ppo_packing_vllm.sh", _PPO.format(extra=" \\\n   --vllm.num_engines 4")),
    ),
)
