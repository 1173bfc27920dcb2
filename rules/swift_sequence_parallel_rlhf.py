"""
## What it does
Flags an ms-swift RLHF config (`rlhf_type`) with `sequence_parallel_size`
above 1 for a training type that has no sequence-parallel support: only
`grpo` and `dpo` do.

## Why is this bad?
Sequence parallelism splits every sequence across ranks, which each RLHF
loss has to be written for. ms-swift checks the type while it parses the
arguments and refuses to start ("The current rlhf_type ... does not support
sequence_parallel").

## Example
```yaml
rlhf_type: kto
sequence_parallel_size: 2
```

## Use instead
```yaml
rlhf_type: kto
sequence_parallel_size: 1
```

## Source
ms-swift 3602360: swift/arguments/rlhf_args.py:718-724
(`_check_sequence_parallel`, called from `RLHFArguments.__post_init__`, 284).
"""

from collections.abc import Iterator

from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule

SUPPORTED = ("grpo", "dpo")


def check(plan: TrainingPlan) -> Iterator[Finding]:
    sp, rlhf = plan.parallel.get("sp"), plan.rl.algorithm
    kind = rlhf.value
    if kind in SUPPORTED or sp is None or not sp.known or sp.value <= 1 or sp.span is None:
        return
    yield Finding(
        span=sp.span,
        message=f"sequence_parallel_size is {sp.value}, but rlhf_type {kind} (line {rlhf.span.line}) has no "
                f"sequence-parallel support (only {', '.join(SUPPORTED)}): ms-swift refuses to start",
        fix="set sequence_parallel_size: 1",
        related=(Related(f"rlhf_type = {kind}", rlhf.span),),
    )


_CONFIG = """\
rlhf_type: {kind}
model: Qwen/Qwen2.5-7B-Instruct
tuner_type: lora
attn_impl: flash_attn
padding_free: true
sequence_parallel_size: 2
per_device_train_batch_size: 1
gradient_accumulation_steps: 8
"""

RULE = Rule(
    code="BL253",
    name="swift-sequence-parallel-rlhf",
    severity="error",
    summary="ms-swift: sequence parallelism for an RLHF type without support for it",
    check=check,
    needs=("rl.algorithm", "parallel.sp"),
    frameworks=("swift",),
    doc=__doc__,
    examples=(
        Example("kto_sp2.yaml", _CONFIG.format(kind="kto"), flagged=(6,)),
        Example("dpo_sp2.yaml", _CONFIG.format(kind="dpo")),
    ),
)
