"""
## What it does
Flags an ms-swift RLHF config (`rlhf_type`) with `sequence_parallel_size`
above 1 for a training type that has no sequence-parallel support: only
`grpo` and `dpo` do; and, where the project runs ms-swift 3.2.2 to 3.4.0,
any `rlhf_type` with `sequence_parallel_size` above 1 (those releases
refuse sequence parallelism for RLHF altogether: "RLHF do not support
sequence parallel").

## Why is this bad?
Sequence parallelism splits every sequence across ranks, which each RLHF
loss has to be written for. ms-swift checks the type while it parses the
arguments and refuses to start ("The current rlhf_type ... does not support
sequence_parallel"), from 3.7.0 on.

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
ms-swift 4.6.0: swift/arguments/rlhf_args.py:719-724 (`_check_sequence_parallel`,
called from `RLHFArguments.__post_init__`, 285). First in 3.7.0:
swift/llm/argument/rlhf_args.py:364-369 (`_check_padding_free_sp`, called at
133); 3.6.4 runs any rlhf_type with sequence parallelism. Every type:
swift/llm/argument/rlhf_args.py:191-193 `_check_rlhf` @ 3.2.2 (first;
3.2.1 has none), :207-209 @ 3.4.0 (last; 3.4.1 has none).
"""

from collections.abc import Iterator

from batchlint.frameworks.releases import MS_SWIFT
from batchlint.frameworks.swift import SwiftSettings
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

REFUSED = Premise(
    MS_SWIFT, since="3.7.0", name="types without support",
    source="v3.6.4 swift/llm/argument/rlhf_args.py (no sequence-parallel check); v3.7.0 "
           "swift/llm/argument/rlhf_args.py:364-369 (first); 4.6.0 (PyPI wheel) swift/arguments/rlhf_args.py:719-724 "
           "(still)")

# 3.2.2 to 3.4.0 refused it for every rlhf_type, grpo and dpo included (`_check_rlhf`); 3.4.1 dropped the check.
EVERY_TYPE = Premise(
    MS_SWIFT, since="3.2.2", until="3.4.0", name="every rlhf_type",
    source="v3.2.1 swift/llm/argument/rlhf_args.py (no check); v3.2.2 rlhf_args.py:191-193 `_check_rlhf` (first); "
           "v3.4.0 rlhf_args.py:207-209 (last); v3.4.1 rlhf_args.py (no check)")

SUPPORTED = ("grpo", "dpo")


def check(plan: TrainingPlan, swift: SwiftSettings) -> Iterator[Finding]:
    sp, rlhf = plan.parallel["sp"], plan.rl.algorithm if plan.rl is not None else None
    if rlhf is None or rlhf.span is None:
        return  # present (needs rl.algorithm): the guard is for the type checker
    kind, degree = rlhf.value, sp.count
    if degree is None or degree <= 1 or sp.span is None:
        return
    yield Finding(  # the gate keeps it only where the project runs 3.2.2 to 3.4.0
        span=sp.span,
        message=f"sequence_parallel_size is {degree}, but this ms-swift runs no rlhf_type with sequence parallelism",
        notes=("ms-swift 3.2.2 to 3.4.0 refuse it while parsing the arguments (\"RLHF do not support sequence "
               "parallel\"); 3.4.1 runs dpo with it, 3.5.0 grpo",),
        fix="set sequence_parallel_size: 1, or run ms-swift 3.5.0 or later",
        related=(Related(f"rlhf_type = {kind}", rlhf.span),),
        premise=EVERY_TYPE.name,
    )
    if kind in SUPPORTED:
        return
    yield Finding(
        span=sp.span,
        message=f"sequence_parallel_size is {degree}, but rlhf_type {kind} (line {rlhf.span.line}) has no sequence parallelism",
        notes=(f"ms-swift supports sequence parallelism for {', '.join(SUPPORTED)} only and refuses to start",),
        fix="set sequence_parallel_size: 1",
        related=(Related(f"rlhf_type = {kind}", rlhf.span),),
        premise=REFUSED.name,
    )


RULE = Rule(
    code="BL253",
    name="swift-sequence-parallel-rlhf",
    severity="error",
    summary="ms-swift: sequence parallelism for an RLHF type without support for it",
    check=check,
    subject=SwiftSettings,
    needs=("rl.algorithm", "parallel.sp"),
    premises=(REFUSED, EVERY_TYPE),
    doc=__doc__,
    examples=(
        # No release pinned: 3.6.x and older run it.
        Example("kto_sp2.yaml", """\
rlhf_type: kto
model: Qwen/Qwen2.5-7B-Instruct
tuner_type: lora
attn_impl: flash_attn
padding_free: true
sequence_parallel_size: 2
per_device_train_batch_size: 1
gradient_accumulation_steps: 8
""", flagged=(6,), severity="info",
                message="sequence_parallel_size is 2, but rlhf_type kto (line 1) has no sequence parallelism",
                fix="set sequence_parallel_size: 1"),
        Example("kto_sp2_pinned.yaml", """\
rlhf_type: kto
model: Qwen/Qwen2.5-7B-Instruct
tuner_type: lora
attn_impl: flash_attn
padding_free: true
sequence_parallel_size: 2
per_device_train_batch_size: 1
gradient_accumulation_steps: 8
""", flagged=(6,), files=(("requirements.txt", "ms-swift==4.5.2\n"),), severity="error",
                message="sequence_parallel_size is 2, but rlhf_type kto (line 1) has no sequence parallelism",
                fix="set sequence_parallel_size: 1"),
        Example("kto_sp2_old.yaml", """\
rlhf_type: kto
model: Qwen/Qwen2.5-7B-Instruct
tuner_type: lora
attn_impl: flash_attn
padding_free: true
sequence_parallel_size: 2
per_device_train_batch_size: 1
gradient_accumulation_steps: 8
""", files=(("requirements.txt", "ms-swift==3.6.4\n"),)),
        Example("grpo_sp2_3_3.yaml", """\
rlhf_type: grpo
model: Qwen/Qwen2.5-7B-Instruct
sequence_parallel_size: 2
per_device_train_batch_size: 1
""", flagged=(3,), files=(("requirements.txt", "ms-swift==3.3.0\n"),), severity="error",
                message="sequence_parallel_size is 2, but this ms-swift runs no rlhf_type with sequence parallelism",
                fix="set sequence_parallel_size: 1, or run ms-swift 3.5.0 or later"),
        Example("grpo_sp2_3_5.yaml", """\
rlhf_type: grpo
model: Qwen/Qwen2.5-7B-Instruct
sequence_parallel_size: 2
per_device_train_batch_size: 1
""", files=(("requirements.txt", "ms-swift==3.5.0\n"),)),
        Example("dpo_sp2.yaml", """\
rlhf_type: dpo
model: Qwen/Qwen2.5-7B-Instruct
tuner_type: lora
attn_impl: flash_attn
padding_free: true
sequence_parallel_size: 2
per_device_train_batch_size: 1
gradient_accumulation_steps: 8
"""),
    ),
)
