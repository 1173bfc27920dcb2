"""
## What it does
Flags an ms-swift Megatron config with `sequence_parallel: true` whose
`tensor_model_parallel_size` is 1 (its default). In a Ray config the train
group's tensor parallel size counts.

## Why is this bad?
Megatron sequence parallelism splits the activations of the tensor-parallel
group; without tensor parallelism there is nothing to split, and ms-swift
silently sets `sequence_parallel` back to false. The run works, but not as
written: the memory the author counted on saving is not saved.

## Example
```yaml
micro_batch_size: 1
global_batch_size: 16
sequence_parallel: true
```

## Use instead
```yaml
micro_batch_size: 1
global_batch_size: 16
tensor_model_parallel_size: 2
sequence_parallel: true
```
or drop `sequence_parallel`.

## Source
ms-swift 3602360: swift/megatron/arguments/megatron_args.py:891-892
(`MegatronArguments.__post_init__`); tensor_model_parallel_size default 592.
"""

from batchlint.frameworks.facts import flag
from batchlint.frameworks.swift_megatron import lookup
from batchlint.rule import Example, Finding, Related, Rule


def check(plan):
    sp = flag(lookup(plan.document.root, "sequence_parallel"), "sequence_parallel")
    tp = plan.parallel.get("tp")
    if sp is None or sp.value is not True or tp is None or not tp.known or tp.value > 1:
        return
    yield Finding(
        span=sp.span,
        message=f"sequence_parallel is true, but {tp.key} is 1{' (its default)' if tp.span is None else ''}: "
                f"ms-swift turns sequence parallelism off without tensor parallelism, silently",
        fix="set tensor_model_parallel_size to 2 or more, or remove sequence_parallel",
        related=(Related(f"{tp.key} = {tp.value}", tp.span),) if tp.span else (),
    )


_CONFIG = """\
model: Qwen/Qwen3-8B
tuner_type: lora
micro_batch_size: 1
global_batch_size: 16
{tp}sequence_parallel: true
"""

RULE = Rule(
    code="BL252",
    name="swift-megatron-sequence-parallel-ignored",
    severity="warning",
    summary="ms-swift Megatron: sequence_parallel without tensor parallelism is silently off",
    check=check,
    frameworks=("swift-megatron",),
    doc=__doc__,
    examples=(
        Example("megatron_sp_tp1.yaml", _CONFIG.format(tp=""), flagged=(5,)),
        Example("megatron_sp_tp2.yaml", _CONFIG.format(tp="tensor_model_parallel_size: 2\n")),
        Example(
            "ray_sp_train_tp2.yaml",
            _CONFIG.format(tp="") + "train:\n  gpus: 4\n  tensor_model_parallel_size: 2\n",
        ),
    ),
)
