"""
## What it does
Flags a torchtune text dataset with `packed: True` whose tokenizer has no
`max_seq_len` (written as `null`, or left out for a tokenizer whose builder
defaults it to None, which all text tokenizers do).

## Why is this bad?
Packing concatenates samples into sequences of exactly `max_seq_len` tokens;
without one, the dataset builder raises "PackedDataset requires a max_seq_len
to be set on the tokenizer." when the recipe sets up its data, after the
model has been loaded. The shipped configs write `max_seq_len: null` next to
`packed: False  # True increases speed`, so turning packing on alone fails.

## Example
```yaml
tokenizer:
  _component_: torchtune.models.llama3.llama3_tokenizer
  path: /tmp/Meta-Llama-3.1-8B-Instruct/original/tokenizer.model
  max_seq_len: null
dataset:
  _component_: torchtune.datasets.alpaca_cleaned_dataset
  packed: True
```

## Use instead
```yaml
tokenizer:
  _component_: torchtune.models.llama3.llama3_tokenizer
  path: /tmp/Meta-Llama-3.1-8B-Instruct/original/tokenizer.model
  max_seq_len: 4096
dataset:
  _component_: torchtune.datasets.alpaca_cleaned_dataset
  packed: True
```

## Source
torchtune @ bd2a0fc: torchtune/datasets/_alpaca.py:89-94, _grammar.py:90-95,
_samsum.py:91-96, _slimorca.py:90-95, _instruct.py:149-154, _chat.py:181-186,
_text_completion.py:163-169 (wikitext_dataset passes `packed` on to it).
"""

from collections.abc import Iterator

from batchlint.plan import Origin, TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    tokenizer = plan.settings.tokenizer
    length = tokenizer.max_seq_len
    related: tuple[Related, ...]
    if length.value is not None:
        return
    if length.origin is Origin.DEFAULT:
        why, related = f"{tokenizer.builder} has no max_seq_len (its default is None)", ()
    else:
        why, related = f"{length.key} is null (line {length.span.line})", (Related("max_seq_len: null", length.span),)
    for dataset in plan.settings.packed_datasets:
        if dataset.requires_max_seq_len:
            yield Finding(
                span=dataset.packed.span,
                message=f"{dataset.builder} is packed, but {why}: packing needs a length to fill,"
                        " and the dataset builder raises at start-up",
                fix="set tokenizer.max_seq_len to the sequence length to pack to (e.g. 2048), or packed: False",
                related=related,
            )


_TUNE = """\
tokenizer:
  _component_: torchtune.models.llama3.llama3_tokenizer
  path: /tmp/Meta-Llama-3.1-8B-Instruct/original/tokenizer.model
  max_seq_len: {max_seq_len}

dataset:
  _component_: torchtune.datasets.alpaca_cleaned_dataset
  packed: {packed}  # True increases speed

optimizer:
  _component_: torch.optim.AdamW
  lr: 2e-5
batch_size: 2
gradient_accumulation_steps: 1
"""

RULE = Rule(
    code="BL310",
    name="torchtune-packed-without-max-seq-len",
    severity="error",
    summary="torchtune: dataset.packed without tokenizer.max_seq_len",
    check=check,
    needs=("settings.tokenizer", "settings.packed_datasets"),
    doc=__doc__,
    examples=(
        Example("tune_packed_null.yaml", _TUNE.format(max_seq_len="null", packed="True"), flagged=(8,)),
        Example("tune_packed_4096.yaml", _TUNE.format(max_seq_len=4096, packed="True")),
        Example("tune_unpacked_null.yaml", _TUNE.format(max_seq_len="null", packed="False")),
        Example(
            "tune_packed_absent.yaml",
            _TUNE.format(max_seq_len="null", packed="True").replace("  max_seq_len: null\n", ""),
            flagged=(7,),
        ),
    ),
)
