"""
## What it does
Flags a LLaMA-Factory v1 config with `cp_size` above 1 whose attention is not
`flash_attn: flash_attention_2` (v1 defaults to `sdpa`), or whose
`dist_config` is DeepSpeed.

## Why is this bad?
v1's Ulysses context parallelism swaps the flash-attention kernel for a
sequence-parallel one and is built on the FSDP2 engine: the trainer raises
"Sequence parallelism requires flash attention" or "Context parallelism
currently requires `dist_config.name: fsdp2`" after the model is loaded.

## Example
```yaml
dist_config:
  name: fsdp2
cp_size: 2
```

## Use instead
```yaml
flash_attn: flash_attention_2
dist_config:
  name: fsdp2
cp_size: 2
```

## Source
LLaMA-Factory ff6d4d1: src/llamafactory/v1/core/base_trainer.py:100-102
(DeepSpeed) and 149-160 (flash attention); default attention
v1/config/model_args.py:36-41.
"""

from collections.abc import Iterator

from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    cp, args = plan.parallel["cp"], plan.settings
    if not cp.known or cp.value <= 1 or cp.span is None:
        return
    engine = args.dist_engine
    if engine is not None and engine.value == "deepspeed":
        yield Finding(
            span=cp.span,
            message=f"cp_size is {cp.value} with dist_config.name deepspeed: v1 context parallelism requires the "
                    f"fsdp2 engine and the trainer refuses to start",
            fix="set dist_config.name: fsdp2, or cp_size: 1",
            related=(Related("dist_config.name = deepspeed", engine.span),),
        )
    attn = args.attn_implementation
    impl = attn.value
    if impl is not None and impl != "flash_attention_2":
        written = f"flash_attn is {impl}" if attn.span is not None else f"flash_attn is not set (default {impl})"
        yield Finding(
            span=cp.span,
            message=f"cp_size is {cp.value}, but {written}: v1 sequence parallelism needs flash_attention_2 and the "
                    f"trainer refuses to start",
            fix="set flash_attn: flash_attention_2",
            related=(Related(f"flash_attn = {impl}", attn.span),) if attn.span is not None else (),
        )


_CONFIG = """\
model: Qwen/Qwen3-0.6B
model_class: llm
{attention}dist_config:
  name: fsdp2
cp_mode: ulysses
cp_size: 2
train_dataset: data/v1_sft_demo.yaml
micro_batch_size: 1
max_steps: 10
"""

RULE = Rule(
    code="BL251",
    name="llamafactory-v1-context-parallel",
    severity="error",
    summary="LLaMA-Factory v1: cp_size > 1 without flash_attention_2 or with DeepSpeed",
    check=check,
    needs=("parallel.cp", "settings.attn_implementation"),
    doc=__doc__,
    examples=(
        Example("v1_cp_sdpa.yaml", _CONFIG.format(attention=""), flagged=(6,)),
        Example("v1_cp_fa2.yaml", _CONFIG.format(attention="flash_attn: flash_attention_2\n")),
        Example("v1_cp_deepspeed.yaml",
                _CONFIG.format(attention="flash_attn: flash_attention_2\n").replace("name: fsdp2", "name: deepspeed"),
                flagged=(7,)),
    ),
)
