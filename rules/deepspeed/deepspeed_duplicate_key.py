"""
## What it does
Flags a key given twice in the same object of a DeepSpeed JSON config, at any
depth (`"fp16"` twice at the top, `"stage"` twice in `zero_optimization`).

## Why is this bad?
Only one of the two values can count, and which one depends on who reads the
file: DeepSpeed's own reader (`deepspeed --deepspeed_config ds.json`,
`deepspeed.initialize(config="ds.json")`) refuses the file with "Duplicate
keys in DeepSpeed config"; the Hugging Face Trainer and Accelerate read it
with `json.load`, which keeps the last value silently, so the first one you
see is not the one that trains.

## Example
```json
{
  "train_micro_batch_size_per_gpu": 4,
  "gradient_accumulation_steps": 8,
  "gradient_accumulation_steps": 4
}
```

## Use instead
```json
{
  "train_micro_batch_size_per_gpu": 4,
  "gradient_accumulation_steps": 4
}
```

## Source
deepspeed/runtime/config.py:444 `DeepSpeedConfig.__init__` (hjson.load with
`object_pairs_hook=dict_raise_error_on_duplicate_keys`) and
runtime/config_utils.py:205-212 @ 0.19.8, the same hook since 0.3.0
(runtime/config.py:478, 493 @ 0.3.1); accelerate/utils/deepspeed.py:141-143
`HfDeepSpeedConfig` (plain `json.load`) @ accelerate 1.15.0.
"""

from collections.abc import Iterator

from batchlint.document import Mapping, Node, Sequence
from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    for mapping in _mappings(plan.document.root):
        for key, span in mapping.duplicates:
            yield Finding(
                span=span,
                message=f'"{key}" is given more than once in the object that starts on line {mapping.span.line}',
                notes=("DeepSpeed's own reader refuses the file (\"Duplicate keys in DeepSpeed config\"), while "
                       "the Hugging Face Trainer and Accelerate keep the last value silently",),
                fix=f'keep one "{key}" with the value you mean and delete the other',
            )


def _mappings(node: Node) -> Iterator[Mapping]:
    """Every object in the tree, depth first in file order."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, Mapping):
            yield current
            stack.extend(reversed(list(current.items.values())))
        elif isinstance(current, Sequence):
            stack.extend(reversed(current.items))


RULE = Rule(
    code="BL520",
    name="deepspeed-duplicate-key",
    severity="warning",
    summary="DeepSpeed JSON: a key given twice in the same object",
    check=check,
    frameworks=("deepspeed",),
    every_release=(
        "DeepSpeed's own reader refuses duplicate keys in every release users run: runtime/config.py loads the "
        "file with object_pairs_hook=dict_raise_error_on_duplicate_keys (config_utils.py: ValueError \"Duplicate "
        "keys in DeepSpeed config\") in every tag from v0.3.0 (config.py:478, 493 @ 0.3.1) to 0.19.8 (config.py:444)"),
    doc=__doc__,
    examples=(
        Example("ds_twice.json", """\
{
  "train_micro_batch_size_per_gpu": 4,
  "gradient_accumulation_steps": 8,
  "gradient_accumulation_steps": 4
}
""", flagged=(4,),
                message='"gradient_accumulation_steps" is given more than once in the object that starts on line 1',
                fix='keep one "gradient_accumulation_steps" with the value you mean and delete the other'),
        Example("ds_once.json", """\
{
  "train_micro_batch_size_per_gpu": 4,
  "gradient_accumulation_steps": 4
}
"""),
        Example("ds_nested_twice.json", """\
{
  "train_micro_batch_size_per_gpu": 4,
  "zero_optimization": {
    "stage": 2,
    "stage": 3
  }
}
""", flagged=(5,),
                message='"stage" is given more than once in the object that starts on line 3',
                fix='keep one "stage" with the value you mean and delete the other'),
        Example("ds_same_key_in_two_objects.json", """\
{
  "train_micro_batch_size_per_gpu": 4,
  "fp16": {"enabled": false},
  "bf16": {"enabled": true}
}
"""),
    ),
)
