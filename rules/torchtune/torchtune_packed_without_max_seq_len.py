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

Packing reads the tokenizer's `max_seq_len` from torchtune 0.3.0 on (0.2
packed to each dataset builder's own `max_seq_len`, 512 by default);
`wikitext_dataset` passes `packed` on from 0.4.0 (0.3 ignored it).

## Source
v0.3.0 torchtune/datasets/_alpaca.py:152-155, _chat.py:265-268,
_instruct.py:258-261, _grammar.py:86-89, _samsum.py:87-90,
_slimorca.py:86-89, _text_completion.py:159-162; v0.6.1 _alpaca.py:90-93,
_chat.py:182-185, _instruct.py:150-153, _grammar.py:91-94, _samsum.py:92-95,
_slimorca.py:91-94, _text_completion.py:160-163; _wikitext.py:66 @ v0.4.0
and v0.6.1 (passes `packed` on to text_completion_dataset).
"""

from collections.abc import Iterator

from batchlint.frameworks.releases import TORCHTUNE
from batchlint.frameworks.torchtune import TorchtuneSettings
from batchlint.plan import Origin, TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

TOKENIZER_LENGTH = Premise(
    TORCHTUNE, name="packing", since="0.3.0",
    source="v0.2.1 torchtune/datasets/_alpaca.py:19 (packs to the builder's own max_seq_len, default 512); "
           "v0.3.0 torchtune/datasets/_alpaca.py:152-155, _chat.py:265-268, _instruct.py:258-261, _grammar.py:86-89, "
           "_samsum.py:87-90, _slimorca.py:86-89, _text_completion.py:159-162 (first); v0.6.1 _alpaca.py:90-93, "
           "_chat.py:182-185, _instruct.py:150-153, _text_completion.py:160-163 (still)")
WIKITEXT = Premise(
    TORCHTUNE, name="wikitext", since="0.4.0",
    source="v0.3.1 torchtune/datasets/_wikitext.py:56-64 (packed not passed on); v0.4.0 _wikitext.py:66 "
           "(first); v0.6.1 _wikitext.py:66, _text_completion.py:160-163 (still)")


def check(plan: TrainingPlan, torchtune: TorchtuneSettings) -> Iterator[Finding]:
    tokenizer = torchtune.tokenizer
    if tokenizer is None or tokenizer.max_seq_len.value is not None:
        return
    length = tokenizer.max_seq_len
    related: tuple[Related, ...]
    if length.origin is Origin.DEFAULT or length.span is None:
        why, related = f"{tokenizer.builder} has no max_seq_len (its default is None)", ()
    else:
        why, related = f"{length.key} is null (line {length.span.line})", (Related("max_seq_len: null", length.span),)
    for dataset in torchtune.packed_datasets:
        if dataset.requires_max_seq_len:
            yield Finding(
                span=dataset.packed.span,
                message=f"{dataset.builder} is packed, but {why}",
                notes=("packing needs a length to fill, and the dataset builder raises at start-up",),
                fix="set tokenizer.max_seq_len to the sequence length to pack to (e.g. 2048), or packed: False",
                related=related,
                premise=(WIKITEXT if dataset.builder == "wikitext_dataset" else TOKENIZER_LENGTH).name,
            )


RULE = Rule(
    code="BL310",
    name="torchtune-packed-without-max-seq-len",
    severity="error",
    summary="torchtune: dataset.packed without tokenizer.max_seq_len",
    check=check,
    subject=TorchtuneSettings,
    premises=(TOKENIZER_LENGTH, WIKITEXT),
    doc=__doc__,
    examples=(
        # No release pinned: torchtune 0.2 packs to the dataset builder's own max_seq_len.
        Example("tune_packed_null.yaml", """\
tokenizer:
  _component_: torchtune.models.llama3.llama3_tokenizer
  path: /tmp/Meta-Llama-3.1-8B-Instruct/original/tokenizer.model
  max_seq_len: null

dataset:
  _component_: torchtune.datasets.alpaca_cleaned_dataset
  packed: True  # True increases speed

optimizer:
  _component_: torch.optim.AdamW
  lr: 2e-5
batch_size: 2
gradient_accumulation_steps: 1
""", flagged=(8,),
                message="alpaca_cleaned_dataset is packed, but tokenizer.max_seq_len is null (line 4)",
                fix="set tokenizer.max_seq_len to the sequence length to pack to (e.g. 2048), or packed: False",
                severity="info"),
        Example("tune_packed_null_pinned.yaml", """\
tokenizer:
  _component_: torchtune.models.llama3.llama3_tokenizer
  path: /tmp/Meta-Llama-3.1-8B-Instruct/original/tokenizer.model
  max_seq_len: null

dataset:
  _component_: torchtune.datasets.alpaca_cleaned_dataset
  packed: True  # True increases speed

optimizer:
  _component_: torch.optim.AdamW
  lr: 2e-5
batch_size: 2
gradient_accumulation_steps: 1
""", flagged=(8,),
                message="alpaca_cleaned_dataset is packed, but tokenizer.max_seq_len is null (line 4)",
                fix="set tokenizer.max_seq_len to the sequence length to pack to (e.g. 2048), or packed: False",
                files=(("requirements.txt", "torchtune==0.3.0\n"),),
                severity="error"),
        Example("tune_packed_null_before.yaml", """\
tokenizer:
  _component_: torchtune.models.llama3.llama3_tokenizer
  path: /tmp/Meta-Llama-3.1-8B-Instruct/original/tokenizer.model
  max_seq_len: null

dataset:
  _component_: torchtune.datasets.alpaca_cleaned_dataset
  packed: True  # True increases speed

optimizer:
  _component_: torch.optim.AdamW
  lr: 2e-5
batch_size: 2
gradient_accumulation_steps: 1
""", files=(("requirements.txt", "torchtune==0.2.1\n"),)),
        Example("tune_wikitext_packed.yaml", """\
tokenizer:
  _component_: torchtune.models.llama3.llama3_tokenizer
  path: /tmp/Meta-Llama-3.1-8B-Instruct/original/tokenizer.model
  max_seq_len: null

dataset:
  _component_: torchtune.datasets.wikitext_dataset
  packed: True  # True increases speed

optimizer:
  _component_: torch.optim.AdamW
  lr: 2e-5
batch_size: 2
gradient_accumulation_steps: 1
""", flagged=(8,),
                message="wikitext_dataset is packed, but tokenizer.max_seq_len is null (line 4)",
                fix="set tokenizer.max_seq_len to the sequence length to pack to (e.g. 2048), or packed: False",
                files=(("requirements.txt", "torchtune==0.4.0\n"),),
                severity="error"),
        Example("tune_wikitext_packed_0_3.yaml", """\
tokenizer:
  _component_: torchtune.models.llama3.llama3_tokenizer
  path: /tmp/Meta-Llama-3.1-8B-Instruct/original/tokenizer.model
  max_seq_len: null

dataset:
  _component_: torchtune.datasets.wikitext_dataset
  packed: True  # True increases speed

optimizer:
  _component_: torch.optim.AdamW
  lr: 2e-5
batch_size: 2
gradient_accumulation_steps: 1
""", files=(("requirements.txt", "torchtune==0.3.1\n"),)),
        Example("tune_packed_4096.yaml", """\
tokenizer:
  _component_: torchtune.models.llama3.llama3_tokenizer
  path: /tmp/Meta-Llama-3.1-8B-Instruct/original/tokenizer.model
  max_seq_len: 4096

dataset:
  _component_: torchtune.datasets.alpaca_cleaned_dataset
  packed: True  # True increases speed

optimizer:
  _component_: torch.optim.AdamW
  lr: 2e-5
batch_size: 2
gradient_accumulation_steps: 1
"""),
        Example("tune_unpacked_null.yaml", """\
tokenizer:
  _component_: torchtune.models.llama3.llama3_tokenizer
  path: /tmp/Meta-Llama-3.1-8B-Instruct/original/tokenizer.model
  max_seq_len: null

dataset:
  _component_: torchtune.datasets.alpaca_cleaned_dataset
  packed: False  # True increases speed

optimizer:
  _component_: torch.optim.AdamW
  lr: 2e-5
batch_size: 2
gradient_accumulation_steps: 1
"""),
        Example("tune_packed_absent.yaml", """\
tokenizer:
  _component_: torchtune.models.llama3.llama3_tokenizer
  path: /tmp/Meta-Llama-3.1-8B-Instruct/original/tokenizer.model

dataset:
  _component_: torchtune.datasets.alpaca_cleaned_dataset
  packed: True  # True increases speed

optimizer:
  _component_: torch.optim.AdamW
  lr: 2e-5
batch_size: 2
gradient_accumulation_steps: 1
""", flagged=(7,),
                message="alpaca_cleaned_dataset is packed, but llama3_tokenizer has no max_seq_len "
                        "(its default is None)",
                fix="set tokenizer.max_seq_len to the sequence length to pack to (e.g. 2048), or packed: False",
                files=(("requirements.txt", "torchtune>=0.3.0\n"),),
                severity="error"),
    ),
)
