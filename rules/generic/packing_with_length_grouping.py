"""
## What it does
Flags packing and length-grouped sampling enabled together: XTuner
`pack_to_max_length=True` with a `LengthGroupedSampler`; `packing`,
`neat_packing` or axolotl's `sample_packing` together with `group_by_length`
(or `train_sampling_strategy: group_by_length`).

## Why is this bad?
Packing concatenates samples into sequences of one fixed length, so there are
no lengths left to group by: the grouping costs start-up time and does
nothing (TRL's default "bfd" packing fills rows up to max_length without
padding: grouping them saves no padding either). ms-swift can crash on it (its
length sampler reads a `lengths` column a packed dataset lacks). No framework
checks the combination.

## Example
```yaml
packing: true
group_by_length: true
```

## Use instead
```yaml
packing: true
group_by_length: false
```

## Source
xtuner docs `length_grouped_sampler.rst`; axolotl 0.19.0 core/trainers/base.py:200-216
(a multipack sampler whenever sample_packing; group_by_length only adds a length column,
utils/trainer.py:331-337); ms-swift 4.6.0 swift/trainers/mixin.py:1444-1446 (reads the
`lengths` column); transformers training_args.py: `group_by_length` from 4.3.0 to 5.1.0,
`train_sampling_strategy` from 5.2.0 - so a TRL or LLaMA-Factory config is judged by the
transformers release it runs (ms-swift and axolotl read group_by_length themselves).
"""

from collections.abc import Iterator

from batchlint.frameworks.releases import TRANSFORMERS
from batchlint.plan import Fact, TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Edit, Example, Finding, Related, Rule

# The grouping keys of transformers' TrainingArguments, which TRL's and LLaMA-Factory's configs are (ms-swift
# declares its own group_by_length from 4.0.0 and requires transformers < 4.58 before it; axolotl's and
# XTuner's grouping is their own: those are not gated). A premise names the plans it is about; the finding
# names its premise (ms-swift's train_sampling_strategy too, so it is not listed).
GROUP_BY_LENGTH = Premise(
    TRANSFORMERS, name="group_by_length", since="4.3.0", runs_since="4.3.0", until="5.1.0", runs_until="5.1.0",
    frameworks=("trl", "llamafactory"),
    source="v4.2.2 transformers/training_args.py has no group_by_length; v4.3.0 training_args.py:430 (first); "
           "v5.1.0 training_args.py:1180 (last); v5.2.0 has none (train_sampling_strategy replaces it), and "
           "HfArgumentParser refuses the key (TrlParser; LLaMA-Factory hparams/parser.py:103-111 @ v0.9.5)")
SAMPLING_STRATEGY = Premise(
    TRANSFORMERS, name="train_sampling_strategy", since="5.2.0", runs_since="5.2.0", frameworks=("trl", "llamafactory"),
    source="v5.1.0 transformers/training_args.py has no train_sampling_strategy; v5.2.0 training_args.py:1309 "
           "(first); v5.24.0 training_args.py:1380 (still)")


def _premise(plan: TrainingPlan, grouping: Fact) -> str:
    if grouping.key == "train_sampling_strategy":
        return SAMPLING_STRATEGY.name
    return GROUP_BY_LENGTH.name if grouping.key == "group_by_length" and plan.framework in ("trl", "llamafactory") else ""


def check(plan: TrainingPlan) -> Iterator[Finding]:
    packing, grouping = plan.packing, plan.length_grouping
    if packing is None or grouping is None or packing.value is not True or grouping.value is not True:
        return
    where = ""
    if packing.span is not None:  # the file too when it is not the grouping's (a base's, a launch script's)
        elsewhere = packing.span.path if grouping.span is None or packing.span.path != grouping.span.path else None
        where = f" ({elsewhere}:{packing.span.line})" if elsewhere else f" (line {packing.span.line})"
    message = f"{grouping.key} has nothing to group: {packing.key}{where} packs sequences to full length"
    notes = (f"{grouping.key} batches samples of similar length together; packing joins samples into sequences "
             "of the full length, so every sequence it groups has the same length",)
    if plan.sampler is not None and grouping.node is plan.sampler.node:  # grouping is the sampler class itself
        fix = f"use the default sampler, or set {packing.key} = False if you want length grouping"
    else:
        fix = f"remove {grouping.key}, or turn {packing.key} off if you want length grouping"
    related = (Related(f"{packing.key} enabled here", packing.span),) if packing.span else ()
    yield Finding(span=grouping.span, message=message, notes=notes, fix=fix, related=related,
                  edits=_turn_off(plan, grouping), premise=_premise(plan, grouping))


def _turn_off(plan: TrainingPlan, grouping: Fact) -> tuple[Edit, ...]:
    """The adapter's one-value edit, unless the grouping is written in another file."""
    off = plan.length_grouping_off
    if off is None or grouping.span is None or grouping.span.path:
        return ()
    return (Edit(grouping.span, off),)


RULE = Rule(
    code="BL301",
    name="packing-with-length-grouping",
    severity="warning",
    summary="packing and length-grouped sampling enabled together",
    check=check,
    needs=("packing", "length_grouping"),
    premises=(GROUP_BY_LENGTH, SAMPLING_STRATEGY),
    doc=__doc__,
    examples=(
        Example("xtuner_packed_grouped.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.dataset import process_hf_dataset
from xtuner.dataset.samplers import LengthGroupedSampler

pack_to_max_length = True
batch_size = 1
accumulative_counts = 16
train_dataset = dict(type=process_hf_dataset, max_length=2048, pack_to_max_length=pack_to_max_length)
train_dataloader = dict(
    batch_size=batch_size,
    dataset=train_dataset,
    sampler=dict(
        type=LengthGroupedSampler,
        length_property="length",
        per_device_batch_size=batch_size * accumulative_counts,
    ),
)
""", flagged=(13,),
                message="LengthGroupedSampler has nothing to group: pack_to_max_length (line 5) packs "
                        "sequences to full length",
                fix="use the default sampler, or set pack_to_max_length = False if you want length grouping"),
        Example("xtuner_grouped.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.dataset import process_hf_dataset
from xtuner.dataset.samplers import LengthGroupedSampler

pack_to_max_length = False
batch_size = 1
accumulative_counts = 16
train_dataset = dict(type=process_hf_dataset, max_length=2048, pack_to_max_length=pack_to_max_length)
train_dataloader = dict(
    batch_size=batch_size,
    dataset=train_dataset,
    sampler=dict(
        type=LengthGroupedSampler,
        length_property="length",
        per_device_batch_size=batch_size * accumulative_counts,
    ),
)
"""),
        Example("xtuner_packed.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.dataset import process_hf_dataset
from xtuner.dataset.samplers import LengthGroupedSampler

pack_to_max_length = True
batch_size = 1
accumulative_counts = 16
train_dataset = dict(type=process_hf_dataset, max_length=2048, pack_to_max_length=pack_to_max_length)
train_dataloader = dict(
    batch_size=batch_size,
    dataset=train_dataset,
    sampler=dict(
        type=DefaultSampler,
        length_property="length",
        per_device_batch_size=batch_size * accumulative_counts,
    ),
)
"""),
        # transformers 4.3.0 to 5.1.0 read group_by_length (5.2.0 on refuses it).
        Example("trl_packed_grouped.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
packing: true
per_device_train_batch_size: 2
group_by_length: true
""", flagged=(4,),
                severity="warning",
                message="group_by_length has nothing to group: packing (line 2) packs sequences to full length",
                fix="remove group_by_length, or turn packing off if you want length grouping",
                fixed="""\
model_name_or_path: Qwen/Qwen2.5-0.5B
packing: true
per_device_train_batch_size: 2
group_by_length: false
"""),
        Example("trl_packed_grouped_4_57.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
packing: true
per_device_train_batch_size: 2
group_by_length: true
""", flagged=(4,),
                files=(("requirements.txt", "transformers==4.57.1\n"),),
                severity="warning",
                message="group_by_length has nothing to group: packing (line 2) packs sequences to full length",
                fix="remove group_by_length, or turn packing off if you want length grouping",
                fixed="""\
model_name_or_path: Qwen/Qwen2.5-0.5B
packing: true
per_device_train_batch_size: 2
group_by_length: false
"""),
        Example("trl_packed_grouped_5_2.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
packing: true
per_device_train_batch_size: 2
group_by_length: true
""", files=(("requirements.txt", "transformers==5.2.0\n"),)),
        Example("trl_grouped.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
packing: false
per_device_train_batch_size: 2
group_by_length: true
"""),
        Example("lf_neat_strategy.yaml", """\
stage: sft
neat_packing: true
train_sampling_strategy: group_by_length
""", flagged=(3,),
                severity="warning",
                message="train_sampling_strategy has nothing to group: neat_packing (line 2) packs sequences "
                        "to full length",
                fix="remove train_sampling_strategy, or turn neat_packing off if you want length grouping",
                fixed="""\
stage: sft
neat_packing: true
train_sampling_strategy: "random"
"""),
        Example("lf_neat_strategy_5_1.yaml", """\
stage: sft
neat_packing: true
train_sampling_strategy: group_by_length
""", files=(("requirements.txt", "transformers==5.1.0\n"),)),
        Example("axolotl_packed_grouped.yaml", """\
base_model: NousResearch/Llama-3.2-1B
sample_packing: true
group_by_length: true
micro_batch_size: 2
""", flagged=(3,),
                message="group_by_length has nothing to group: sample_packing (line 2) packs sequences to full "
                        "length",
                fix="remove group_by_length, or turn sample_packing off if you want length grouping",
                fixed="""\
base_model: NousResearch/Llama-3.2-1B
sample_packing: true
group_by_length: false
micro_batch_size: 2
"""),
        Example("swift_packed_grouped.yaml", """\
model: Qwen/Qwen2.5-0.5B
train_type: lora
attn_impl: flash_attn
per_device_train_batch_size: 2
packing: true
group_by_length: true
""", flagged=(6,),
                message="group_by_length has nothing to group: packing (line 5) packs sequences to full length",
                fix="remove group_by_length, or turn packing off if you want length grouping",
                fixed="""\
model: Qwen/Qwen2.5-0.5B
train_type: lora
attn_impl: flash_attn
per_device_train_batch_size: 2
packing: true
group_by_length: false
"""),
        Example("swift_packed.yaml", """\
model: Qwen/Qwen2.5-0.5B
train_type: lora
attn_impl: flash_attn
per_device_train_batch_size: 2
packing: true
group_by_length: false
"""),
        Example("axolotl_packed.yaml", """\
base_model: NousResearch/Llama-3.2-1B
sample_packing: true
group_by_length: false
micro_batch_size: 2
"""),
    ),
)
