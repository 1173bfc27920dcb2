"""
## What it does
Flags an ms-swift config (plain or Megatron) that sets `lazy_tokenize: true`
together with `packing: true` or `streaming: true`. Left unset, ms-swift
turns lazy tokenization off for packed and streamed data by itself.

## Why is this bad?
Packing must tokenize the whole dataset up front to know the lengths it
packs by, and a streamed dataset is tokenized as it streams: ms-swift
refuses both combinations when it parses the arguments ("Packing and
lazy_tokenize are incompatible.", "Streaming and lazy_tokenize are
incompatible."), from 3.7.0 on.

## Example
```yaml
packing: true
lazy_tokenize: true
```

## Use instead
```yaml
packing: true
```

## Source
ms-swift 4.6.0: swift/arguments/base_args/base_args.py:154-168
(`_init_lazy_tokenize`, called from `BaseArguments.__post_init__`, which the
Megatron arguments run too: swift/megatron/arguments/megatron_base_args.py:38).
First in 3.7.0: swift/llm/argument/base_args/base_args.py:105-115 (Megatron:
swift/megatron/argument/train_args.py:48); 3.6.4 turned lazy_tokenize off for
streaming with a warning (train_args.py:137-144) and did not check packing.
"""

from collections.abc import Iterator

from batchlint.frameworks.releases import MS_SWIFT
from batchlint.frameworks.swift_megatron import Tokenized
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

REFUSED = Premise(
    MS_SWIFT, since="3.7.0",
    source="v3.6.4 swift/llm/argument/train_args.py:137-144 (streaming: a warning, packing: no check); v3.7.0 "
           "swift/llm/argument/base_args/base_args.py:111-115 (first); 4.6.0 (PyPI wheel) "
           "swift/arguments/base_args/base_args.py:164-168 (still)")


def check(plan: TrainingPlan, swift: Tokenized) -> Iterator[Finding]:
    tokenizing = swift.tokenizing
    lazy = tokenizing.lazy_tokenize
    if lazy is None or lazy.value is not True or lazy.span is None:
        return
    for other in (tokenizing.packing, tokenizing.streaming):
        if other is not None and other.value and other.span is not None:
            yield Finding(
                span=lazy.span,
                message=f"{lazy.key} is true together with {other.key} (line {other.span.line})",
                notes=("ms-swift refuses the combination and does not start",),
                fix=f"remove {lazy.key} (ms-swift turns it off for packed and streamed data)",
                related=(Related(f"{other.key} enabled here", other.span),),
            )
            return


RULE = Rule(
    code="BL357",
    name="swift-lazy-tokenize-conflict",
    severity="error",
    summary="ms-swift: lazy_tokenize together with packing or streaming",
    check=check,
    subject=Tokenized,
    premises=(REFUSED,),
    doc=__doc__,
    examples=(
        # No release pinned: 3.6.x and older take it.
        Example("packing_lazy.yaml", """\
model: Qwen/Qwen2.5-VL-7B-Instruct
tuner_type: lora
attn_impl: flash_attn
packing: true
lazy_tokenize: true
per_device_train_batch_size: 1
gradient_accumulation_steps: 16
""", flagged=(5,), severity="info",
                message="lazy_tokenize is true together with packing (line 4)",
                fix="remove lazy_tokenize (ms-swift turns it off for packed and streamed data)"),
        Example("packing_lazy_pinned.yaml", """\
model: Qwen/Qwen2.5-VL-7B-Instruct
tuner_type: lora
attn_impl: flash_attn
packing: true
lazy_tokenize: true
per_device_train_batch_size: 1
gradient_accumulation_steps: 16
""", flagged=(5,), files=(("requirements.txt", "ms-swift==3.7.0\n"),), severity="error",
                message="lazy_tokenize is true together with packing (line 4)",
                fix="remove lazy_tokenize (ms-swift turns it off for packed and streamed data)"),
        Example("packing_lazy_old.yaml", """\
model: Qwen/Qwen2.5-VL-7B-Instruct
tuner_type: lora
attn_impl: flash_attn
packing: true
lazy_tokenize: true
per_device_train_batch_size: 1
gradient_accumulation_steps: 16
""", files=(("requirements.txt", "ms-swift==3.6.4\n"),)),
        Example("packing_eager.yaml", """\
model: Qwen/Qwen2.5-VL-7B-Instruct
tuner_type: lora
attn_impl: flash_attn
packing: true
lazy_tokenize: false
per_device_train_batch_size: 1
gradient_accumulation_steps: 16
"""),
        Example("megatron_streaming_lazy.yaml", """\
model: Qwen/Qwen3-8B
tuner_type: full
streaming: true
lazy_tokenize: true
micro_batch_size: 1
global_batch_size: 16
""", flagged=(4,), files=(("requirements.txt", "ms-swift==4.6.0\n"),), severity="error",
                message="lazy_tokenize is true together with streaming (line 3)",
                fix="remove lazy_tokenize (ms-swift turns it off for packed and streamed data)"),
    ),
)
