"""
## What it does
Reads the DeepSpeed config a TrainingArguments config names (`deepspeed:
ds_z2.json`, resolved next to the config, then from the project root, then
from the working directory; or written inline as a mapping) and compares it
the way the Hugging Face Trainer does: every concrete (not "auto") DeepSpeed
value must equal the one TrainingArguments gives. A number written as a string
(`"gradient_accumulation_steps": "8"`) never does: the Trainer compares with `!=`.

| DeepSpeed | TrainingArguments |
| --- | --- |
| `train_micro_batch_size_per_gpu` | `per_device_train_batch_size` (not with `auto_find_batch_size`) |
| `gradient_accumulation_steps` | `gradient_accumulation_steps` |
| `train_batch_size` | W x `per_device_train_batch_size` x `gradient_accumulation_steps` (not with `auto_find_batch_size`) |
| `gradient_clipping` | `max_grad_norm` |
| `fp16.enabled` | `fp16` or `fp16_full_eval` |
| `bf16.enabled` | `bf16` or `bf16_full_eval` |

`train_batch_size` needs the world size; without it only a value that no W
can give is reported. A key not written counts with its default where that
is certain: micro batch 8 and no accumulation (ms-swift: its own), and, except
for ms-swift (which takes the precision from the model), `max_grad_norm` 1.0
and fp16 off. `bf16` off is assumed for LLaMA-Factory, and for a program in
view that parses TrainingArguments with HfArgumentParser and imports no TRL;
for a program that runs TRL's GRPOTrainer, bf16 is GRPOConfig's default of
the TRL release pinned: off before 0.19.0, `not fp16` from 0.19.0 (other TRL
configs: not assumed). A program in view whose flags name no batch key beside
`--deepspeed ds.json` is checked with TrainingArguments' defaults (micro batch
8, no accumulation), unless its own dataclass changes them.

A config that names no DeepSpeed config of its own, run by `accelerate launch
--config_file acc.yaml` with a DEEPSPEED accelerate config, is checked against
the DeepSpeed config accelerate builds from that file's `deepspeed_config`
(`gradient_accumulation_steps`, `gradient_clipping` as written; the batch sizes
"auto"; a key left out is "auto" from accelerate 0.23) or takes from its
`deepspeed_config_file` (with `gradient_accumulation_steps` 1 when the JSON
writes none): the finding is at the accelerate config's value (or its
`deepspeed_config_file` line), naming the flag's file and line. A framework's
entry point runs the Trainer; a program of the project's own counts as one
when its flags write `per_device_train_batch_size` (a loop of its own on
accelerate's Accelerator has no such check). The precision keys are
not compared there: which of the accelerate config's `mixed_precision` and
`--fp16`/`--bf16` the plugin takes changed between transformers releases.

## Why is this bad?
The Trainer collects every mismatch and refuses to start training with
"Please correct the following DeepSpeed config values that mismatch
TrainingArguments values" - after the job got its GPUs and loaded the model.

## Example
`ds_z2.json`:
```json
{"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": "auto", "zero_optimization": {"stage": 2}}
```
`sft.yaml`:
```yaml
per_device_train_batch_size: 2
gradient_accumulation_steps: 8
deepspeed: ds_z2.json
```

## Use instead
```json
{"train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto", "zero_optimization": {"stage": 2}}
```

By release: transformers compares the batch sizes, the accumulation, the
clipping and `fp16` from 4.7.0 (before, it only fills in "auto"), `bf16` and
the `*_full_eval` flags from 4.18.0, and checks the config `accelerate
launch` hands it from 4.30.0. From 4.30.0 TrainingArguments also hands the
config it names to accelerate's DeepSpeedPlugin, which adds
`"gradient_accumulation_steps": 1` when the config writes none: where the
config writes `train_batch_size` (a number, or "auto" filled in with the
Trainer's accumulation) and the Trainer accumulates more than 1, the job
refuses to start (DeepSpeed's batch check). The finding is at the `deepspeed`
reference.

## Source
transformers/deepspeed.py:157-181 `fill_match`, 193-222, 252 @ 4.7.0 (first;
4.6.0 integrations.py:343 fills "auto" only), deepspeed.py:250 (`bf16.enabled`,
`fp16_full_eval` 232-242) @ 4.18.0 (first; 4.17.0 has neither);
transformers/integrations/deepspeed.py:105-131 `fill_match`, 133-205
`trainer_config_process` (the pairs above), 269-274 (the error) @ 4.57.1, the
same at 5.23.0 (fill_match 108-134, `fp16.enabled` without apex 183);
training_args.py:2063-2075 (processed when TrainingArguments is built) and
trainer.py:2358-2370 (`auto_find_batch_size` redoes it without the batch
checks) @ 4.57.1. With `accelerate launch`: trainer.py:5537-5574
`propagate_args_to_deepspeed` @ 4.57.1 (the same since 4.30.0,
`create_accelerator_and_postprocess`); accelerate 1.15.0 commands/launch.py
1257-1277, utils/launch.py 566-577, utils/dataclasses.py 1229-1235, 1274-1275,
1299-1320.
"""

from __future__ import annotations

from collections.abc import Iterator

from batchlint.document import Span
from batchlint.frameworks.deepspeed import TrainerValues
from batchlint.frameworks.linked import BuiltBy, LinkedConfig, accumulation_added
from batchlint.frameworks.releases import TRANSFORMERS, TRL
from batchlint.frameworks.training_arguments import TrainerArguments
from batchlint.lean_dataclass import lean_dataclass
from batchlint.plan import Fact, TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Edit, Example, Finding, Related, Rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

# The comparison is transformers'. A TRL config runs a transformers its TRL release requires; the release of
# LLaMA-Factory and ms-swift is not weighed (not gated).
VALUES = Premise(
    TRANSFORMERS, name="batch, clipping, fp16", since="4.7.0", frameworks=("transformers",),
    source="v4.6.0 transformers/integrations.py:343 (fills \"auto\", compares nothing); v4.7.0 "
           "transformers/deepspeed.py:157-181, 193-218, 252 (first); v5.24.0 transformers/integrations/deepspeed.py:"
           "131, 136-183, 261 (still)")
PRECISION = Premise(
    TRANSFORMERS, name="bf16, full-eval precision", since="4.18.0", frameworks=("transformers",),
    source="v4.17.0 transformers/deepspeed.py (fp16.enabled from fp16 alone, no bf16.enabled); v4.18.0 "
           "deepspeed.py:232-250 (first); v5.24.0 transformers/integrations/deepspeed.py:183-184 (still)")
LAUNCHED = Premise(
    TRANSFORMERS, name="accelerate launch", since="4.30.0", frameworks=("transformers",),
    source="v4.29.2 transformers/trainer.py (the Trainer builds no Accelerator: the launcher's DeepSpeed plugin is "
           "unused); v4.30.0 trainer.py:3956-3981 `create_accelerator_and_postprocess` (first); v5.24.0 "
           "transformers/integrations/deepspeed.py:704 `propagate_args_to_deepspeed` (still)")
TRL_VALUES = Premise(
    TRL, name="TRL batch, clipping, fp16", frameworks=("trl",),
    source="TRL 0.1.0 has no TrainingArguments configs (trl/core.py, gpt2.py, ppo.py only); v0.2.0 setup.py:63 "
           "requires transformers>=4.18.0, v1.16.0 transformers>=4.56.2 (METADATA): each compares them (from 4.7.0)")
TRL_PRECISION = Premise(
    TRL, name="TRL bf16, full-eval precision", frameworks=("trl",),
    source="TRL 0.1.0 has no TrainingArguments configs; v0.2.0 setup.py:63 requires transformers>=4.18.0, v1.16.0 "
           "transformers>=4.56.2 (METADATA): each compares them (transformers deepspeed.py:232-250 @ 4.18.0 on)")
TRL_LAUNCHED = Premise(
    TRL, name="TRL accelerate launch", since="0.7.5", frameworks=("trl",),
    source="v0.7.4 setup.py:64 (transformers>=4.18.0: before 4.30 the launcher's plugin is unused); v0.7.5 "
           "setup.py:64 (transformers>=4.31.0) (first); v1.16.0 METADATA transformers>=4.56.2 (still)")
# TrainingArguments hands its DeepSpeed config to accelerate's DeepSpeedPlugin, which adds
# "gradient_accumulation_steps": 1 when the config writes none, after the Trainer filled the batch in.
PLUGIN = Premise(
    TRANSFORMERS, name="accumulation 1 added by accelerate", since="4.30.0", frameworks=("transformers",),
    source="v4.29.2 training_args.py:1521 (the config processed, no plugin); v4.30.0 training_args.py:1564-1570 "
           "`DeepSpeedPlugin(hf_ds_config=...)` (first); v4.57.1 training_args.py:2075-2081; v5.24.0 "
           "training_args.py:1711-1715 (still); accelerate 0.20.3 utils/dataclasses.py:531-532 and 1.11.0 :1237-1238 "
           "add the key")
TRL_PLUGIN = Premise(
    TRL, name="TRL accumulation 1 added by accelerate", since="0.7.5", frameworks=("trl",),
    source="v0.7.4 setup.py:64 (transformers>=4.18.0: before 4.30 no plugin); v0.7.5 setup.py:64 requires "
           "transformers>=4.31.0, whose TrainingArguments builds the plugin (4.30.0 on) (first); v1.16.0 METADATA "
           "transformers>=4.56.2 (still)")
_PREMISES = {"transformers": (VALUES, PRECISION, LAUNCHED, PLUGIN),
             "trl": (TRL_VALUES, TRL_PRECISION, TRL_LAUNCHED, TRL_PLUGIN)}


def check(plan: TrainingPlan, trainer: TrainerArguments) -> Iterator[Finding]:
    linked = trainer.deepspeed.config() if trainer.deepspeed is not None else None
    if linked is None:
        return
    where = linked.path or "the inline deepspeed config"
    windows = _PREMISES.get(plan.framework)
    values = linked.settings.trainer_values
    written = getattr(linked.reference, "value", None)
    named = written.strip() if linked.path is not None and isinstance(written, str) else where  # as it is named
    added = _added_accumulation(linked, values, named)
    if added is not None:
        values = TrainerValues(**{**values.__dict__, "gradient_accumulation_steps": added})
    for ds_fact, expected, filled, precision in _expected_values(plan, trainer, values):
        if ds_fact is None or not _comparable(ds_fact, expected):
            continue
        verdict = _verdict(ds_fact.value, expected)
        if verdict is None:
            continue
        if ds_fact is added:
            yield _added(linked, named, ds_fact, expected, "" if windows is None else windows[3].name)
            continue
        premise = "" if windows is None else windows[2 if linked.built_by is not None else int(precision)].name
        if linked.built_by is not None:
            yield _built(plan, linked.built_by, ds_fact, expected, verdict, premise)
            continue
        yield Finding(
            span=_at_fault(linked, ds_fact, expected),
            message=f"DeepSpeed {ds_fact.key} {_shown(ds_fact.value)} {verdict.short}",
            notes=(f"{ds_fact.key} ({_shown(ds_fact.value)}) in {where} {verdict.full}", _REFUSED),
            fix=f'set "{ds_fact.key}" to "auto" in {where} so the Trainer fills it in, or {verdict.fix}',
            related=_related(linked, ds_fact, expected),
            edits=_auto(linked, ds_fact) if filled else (),
            premise=premise,
        )


def _added_accumulation(linked: LinkedConfig, values: TrainerValues, where: str) -> Optional[Fact]:
    """The accumulation 1 accelerate's DeepSpeedPlugin adds to a config the program names that writes
    none, where the config writes `train_batch_size` and `train_micro_batch_size_per_gpu` (numbers, or
    "auto" the Trainer filled in with its own accumulation): DeepSpeed's batch check then fails. Without
    both DeepSpeed derives the one left out and starts (with the plugin's accumulation): not judged."""
    if linked.built_by is not None or values.gradient_accumulation_steps is not None \
            or values.train_batch_size is None or values.train_micro_batch_size_per_gpu is None:
        return None
    return accumulation_added(where)


def _added(linked: LinkedConfig, named: str, ds_fact: Fact, expected: _Expected, premise: str) -> Finding:
    """At the `deepspeed` reference: the key to add is in the config it names."""
    return Finding(
        span=linked.reference.span if linked.path is not None else ds_fact.span or expected.span,
        message=f"{named} writes no gradient_accumulation_steps: DeepSpeed runs 1, not {expected.short}",
        notes=(f"gradient_accumulation_steps (1) is what accelerate's DeepSpeedPlugin adds when {named} writes "
               "none: TrainingArguments hands the config to it after filling in its batch sizes with "
               f"{expected.described}",
               "the job refuses to start: DeepSpeed's batch check (train_batch_size is not equal to "
               "micro_batch_per_gpu * gradient_acc_step * world_size)"),
        fix=f'add "gradient_accumulation_steps": "auto" to {named} so the Trainer fills it in',
        related=(Related(f"{expected.described} set here", expected.span),) if expected.span else (),
        premise=premise,
    )


# How the Trainer refuses (integrations/deepspeed.py:269-274 @ 4.57.1).
_REFUSED = ('the Hugging Face Trainer refuses to start ("Please correct the following DeepSpeed config values that '
            'mismatch TrainingArguments values")')


@lean_dataclass(frozen=True)
class _Verdict:
    """What is wrong: in the message (`short`), in full for the notes, and the other fix than "auto"."""

    short: str
    full: str
    fix: str


def _built(plan: TrainingPlan, built: BuiltBy, ds_fact: Fact, expected: _Expected, verdict: _Verdict,
           premise: str) -> Finding:
    """A mismatch in the DeepSpeed config a launcher built from its own config: reported at the value
    that config (or the file it names) writes, which fixes every launch of it; the TrainingArguments
    value named with its place."""
    where = f" ({expected.span.path or plan.document.path}:{expected.span.line})" if expected.span else ""
    return Finding(
        span=ds_fact.span or expected.span or plan.document.root.span,
        message=f"DeepSpeed {ds_fact.key.split(' ')[0]} {_shown(ds_fact.value)} {verdict.short}",
        notes=(f"{ds_fact.key} ({_shown(ds_fact.value)}) in {built.name} {verdict.full}{where}",
               f"{_REFUSED}; {built.versions}"),
        fix=f"{built.auto.format(key=ds_fact.key.split(' ')[0])} so the Trainer fills it in, or {verdict.fix}",
        related=(Related(f"{expected.described} set here", expected.span),) if expected.span else (),
        premise=premise,
    )


def _auto(linked: LinkedConfig, ds_fact: Fact) -> tuple[Edit, ...]:
    """"auto" where the Trainer fills the value in (the batch keys), in a DeepSpeed JSON file."""
    if linked.path is None or not linked.path.endswith(".json") or ds_fact.span is None:
        return ()
    return (Edit(ds_fact.span, '"auto"', path=linked.path),)


def _at_fault(linked: LinkedConfig, ds_fact: Fact, expected: _Expected) -> Optional[Span]:
    """The DeepSpeed value when it is in this file, else the TrainingArguments value,
    else the `deepspeed:` line that names the other file."""
    if linked.path is None:
        return ds_fact.span
    if isinstance(ds_fact.value, str) and ds_fact.span is not None:  # the quotes are the fault, in the DeepSpeed file
        return ds_fact.span._replace(path=linked.path)
    return expected.span or linked.reference.span


def _related(linked: LinkedConfig, ds_fact: Fact, expected: _Expected) -> tuple[Related, ...]:
    shown = _shown(ds_fact.value)
    if linked.path is not None and isinstance(ds_fact.value, str):
        return tuple(Related(text, span) for text, span in (
            (f"{expected.described} set here", expected.span),
            (f"the DeepSpeed config {linked.path} is named here", linked.reference.span)) if span is not None)
    related = [Related(f"{ds_fact.key} = {shown} in the DeepSpeed config", ds_fact.span, linked.path)]
    if linked.path is None and expected.span is not None:
        related.append(Related(f"{expected.described} set here", expected.span))
    if linked.path is not None and expected.span is not None:
        related.append(Related(f"the DeepSpeed config {linked.path} is named here", linked.reference.span))
    return tuple(related)


@lean_dataclass(frozen=True)
class _Expected:
    """A TrainingArguments value, how to name it (in full, and `short` for a message), and where it is
    written (None: a default)."""

    value: object
    described: str
    span: Optional[Span] = None
    per_world: Optional[int] = None  # train_batch_size without W: the per-GPU product W multiplies
    short: str = ""


def _expected_values(plan: TrainingPlan, trainer: TrainerArguments,
                     ds: TrainerValues) -> Iterator[tuple[Optional[Fact], _Expected, bool, bool]]:
    """(the DeepSpeed value, what TrainingArguments gives for it, whether the Trainer fills it in when "auto",
    whether transformers compares it only from 4.18: bf16, or a *_full_eval flag)."""
    micro, ga = plan.micro_batch, plan.grad_accum
    auto_find = trainer.auto_find_batch_size
    batch_checked = auto_find is not None and auto_find.value is False
    if batch_checked and micro is not None and micro.known:
        yield ds.train_micro_batch_size_per_gpu, _of(micro, micro.describe()), True, False
    if ga is not None and ga.known:
        yield ds.gradient_accumulation_steps, _of(ga, ga.describe()), True, False
    if batch_checked and micro is not None and ga is not None:
        train_batch = _train_batch(plan.world_size, micro, ga)
        if train_batch is not None:
            yield ds.train_batch_size, train_batch, True, False
    for ds_fact, fact in ((ds.gradient_clipping, plan.max_grad_norm), (ds.fp16_enabled, trainer.deepspeed_fp16),
                          (ds.bf16_enabled, trainer.deepspeed_bf16)):
        if fact is not None:
            later = ds_fact is ds.bf16_enabled or fact.key.endswith("_full_eval")
            yield ds_fact, _of(fact, _described(fact)), False, later


def _of(fact: Fact, described: str) -> _Expected:
    default = " (default)" if fact.span is None else ""
    return _Expected(fact.value, described, fact.span, short=f"{fact.key} {_shown(fact.value)}{default}")


def _train_batch(world: Optional[Fact], micro: Fact, ga: Fact) -> Optional[_Expected]:
    micro_batch, grad_accum = micro.count, ga.count
    if micro_batch is None or grad_accum is None:
        return None  # a micro batch or accumulation of 0 or less is BL104's finding: no product to compare
    span = ga.span or micro.span
    factors = f"micro {micro.value} x accumulation {ga.value}"
    world_size = world.number if world is not None else None
    if world_size is not None:
        value = world_size * micro_batch * grad_accum
        return _Expected(value, f"W ({world_size}) x {micro.describe()} x {ga.describe()} = {value}", span,
                         short=f"{value} (W {world_size} x {factors})")
    per_world = micro_batch * grad_accum
    return _Expected(None, f"W x {micro.describe()} x {ga.describe()} = W x {per_world}", span, per_world,
                     short=factors)


def _described(fact: Fact) -> str:
    """`max_grad_norm (1.0)`, `fp16 (default false)`: a value written, or a default."""
    default = "default " if fact.span is None else ""
    return f"{fact.key} ({default}{_shown(fact.value)})"


def _comparable(ds_fact: Fact, expected: _Expected) -> bool:
    value = ds_fact.value
    if value is None or value == "auto":
        return False
    if isinstance(value, str):
        return expected.value is not None or expected.per_world is not None
    if isinstance(expected.value, bool):
        return isinstance(value, bool)
    return _is_number(value)


def _verdict(ds_value: object, expected: _Expected) -> Optional[_Verdict]:
    """What is wrong, or None when the two agree."""
    if isinstance(ds_value, str):  # fill_match compares with `!=`: "8" is never 8
        want = expected.value if expected.per_world is None else f"a multiple of {expected.per_world}"
        return _Verdict(f"is a string, never equal to {expected.short}",
                        f"is a string, which never equals {expected.described} (even when it reads the same)",
                        f"write it as a number: {_shown(want)}, without quotes")
    if expected.per_world is not None:
        # (a number: _comparable let nothing else through)
        if isinstance(ds_value, (int, float)) and ds_value > 0 and ds_value % expected.per_world == 0:
            return None
        return _Verdict(f"is not a multiple of {expected.per_world} ({expected.short}) for any W",
                        f"is not {expected.described} for any world size W",
                        f"give it a multiple of {expected.per_world} (W x {expected.per_world})")
    if ds_value == expected.value:
        return None
    return _Verdict(f"differs from {expected.short}", f"differs from {expected.described}",
                    f"make it {_shown(expected.value)}")


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _shown(value: object) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    return str(value).lower() if isinstance(value, bool) else str(value)


_LAUNCH = """\
accelerate launch --config_file accelerate_config.yaml src/train.py \\
    --stage sft --do_train --finetuning_type lora --output_dir saves/sft \\
    --per_device_train_batch_size 4 --gradient_accumulation_steps 4
"""

_LAUNCH_OWN = """\
accelerate launch --config_file accelerate_config.yaml train.py \\
    --output_dir out --per_device_train_batch_size 4 --gradient_accumulation_steps 4
"""

_NO_ACCUMULATION = ('{"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto", '
                    '"zero_optimization": {"stage": 3}}\n')

RULE = Rule(
    code="BL120",
    name="hf-deepspeed-mismatch",
    severity="error",
    summary="a DeepSpeed config value that differs from the TrainingArguments that name it",
    check=check,
    subject=TrainerArguments,
    premises=(VALUES, PRECISION, LAUNCHED, PLUGIN, TRL_VALUES, TRL_PRECISION, TRL_LAUNCHED, TRL_PLUGIN),
    doc=__doc__,
    examples=(
        # No transformers release pinned: 4.6 and older compare nothing.
        Example("sft_inline_mismatch.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 2
gradient_accumulation_steps: 8
bf16: true
deepspeed:
  train_micro_batch_size_per_gpu: 4
  gradient_accumulation_steps: auto
  bf16:
    enabled: true
  zero_optimization:
    stage: 2
""", flagged=(6,), severity="info",
                message="DeepSpeed train_micro_batch_size_per_gpu 4 differs from per_device_train_batch_size 2",
                fix='set "train_micro_batch_size_per_gpu" to "auto" in the inline deepspeed config so the Trainer fills '
                    "it in, or make it 2"),
        Example("sft_inline_mismatch_pinned.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 2
gradient_accumulation_steps: 8
bf16: true
deepspeed:
  train_micro_batch_size_per_gpu: 4
  gradient_accumulation_steps: auto
  bf16:
    enabled: true
  zero_optimization:
    stage: 2
""", flagged=(6,), files=(("requirements.txt", "transformers==4.7.0\n"),), severity="error",
                message="DeepSpeed train_micro_batch_size_per_gpu 4 differs from per_device_train_batch_size 2",
                fix='set "train_micro_batch_size_per_gpu" to "auto" in the inline deepspeed config so the Trainer fills '
                    "it in, or make it 2"),
        Example("sft_inline_mismatch_pinned_old.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 2
gradient_accumulation_steps: 8
bf16: true
deepspeed:
  train_micro_batch_size_per_gpu: 4
  gradient_accumulation_steps: auto
  bf16:
    enabled: true
  zero_optimization:
    stage: 2
""", files=(("requirements.txt", "transformers==4.6.1\n"),)),
        # From transformers 4.30 accelerate's plugin adds an accumulation of 1 to a config that writes none.
        Example("sft_plugin_accumulation.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 2
gradient_accumulation_steps: 8
deepspeed: ds_z3.json
""", flagged=(4,), files=(("requirements.txt", "transformers==4.30.0\n"), ("ds_z3.json", _NO_ACCUMULATION)),
                severity="error",
                message="ds_z3.json writes no gradient_accumulation_steps: DeepSpeed runs 1, not "
                        "gradient_accumulation_steps 8",
                fix='add "gradient_accumulation_steps": "auto" to ds_z3.json so the Trainer fills it in'),
        Example("sft_plugin_accumulation_auto.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 2
gradient_accumulation_steps: 8
deepspeed: ds_z3.json
""", files=(("requirements.txt", "transformers==4.30.0\n"),
            ("ds_z3.json", _NO_ACCUMULATION.replace('"auto",', '"auto", "gradient_accumulation_steps": "auto",', 1)))),
        Example("sft_plugin_accumulation_before.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 2
gradient_accumulation_steps: 8
deepspeed: ds_z3.json
""", files=(("requirements.txt", "transformers==4.29.2\n"), ("ds_z3.json", _NO_ACCUMULATION))),
        Example("sft_inline_auto.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 2
gradient_accumulation_steps: 8
bf16: true
deepspeed:
  train_micro_batch_size_per_gpu: auto
  gradient_accumulation_steps: auto
  bf16:
    enabled: auto
  zero_optimization:
    stage: 2
"""),
        Example("sft_inline_match.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 2
gradient_accumulation_steps: 8
bf16: true
deepspeed:
  train_micro_batch_size_per_gpu: 2
  gradient_accumulation_steps: auto
  bf16:
    enabled: true
  zero_optimization:
    stage: 2
"""),
        Example("sft_inline_bf16_off.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 2
gradient_accumulation_steps: 8
bf16: true
deepspeed:
  train_micro_batch_size_per_gpu: 2
  gradient_accumulation_steps: auto
  bf16:
    enabled: false
  zero_optimization:
    stage: 2
""", flagged=(9,), severity="info",
                message="DeepSpeed bf16.enabled false differs from bf16 true",
                fix='set "bf16.enabled" to "auto" in the inline deepspeed config so the Trainer fills it in, or make it '
                    "true"),
        Example("sft_inline_bf16_off_pinned.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 2
gradient_accumulation_steps: 8
bf16: true
deepspeed:
  train_micro_batch_size_per_gpu: 2
  gradient_accumulation_steps: auto
  bf16:
    enabled: false
  zero_optimization:
    stage: 2
""", flagged=(9,), files=(("requirements.txt", "transformers==4.18.0\n"),), severity="error",
                message="DeepSpeed bf16.enabled false differs from bf16 true",
                fix='set "bf16.enabled" to "auto" in the inline deepspeed config so the Trainer fills it in, or make it '
                    "true"),
        Example("sft_inline_bf16_off_pinned_old.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 2
gradient_accumulation_steps: 8
bf16: true
deepspeed:
  train_micro_batch_size_per_gpu: 2
  gradient_accumulation_steps: auto
  bf16:
    enabled: false
  zero_optimization:
    stage: 2
""", files=(("requirements.txt", "transformers==4.17.0\n"),)),
        # TRL's configs: every TRL release with such configs requires a transformers that compares them.
        Example("trl_inline_bf16_off.yaml", """\
packing: true
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 2
gradient_accumulation_steps: 8
bf16: true
deepspeed:
  train_micro_batch_size_per_gpu: 2
  gradient_accumulation_steps: auto
  bf16:
    enabled: false
  zero_optimization:
    stage: 2
""", flagged=(10,), severity="error",
                message="DeepSpeed bf16.enabled false differs from bf16 true",
                fix='set "bf16.enabled" to "auto" in the inline deepspeed config so the Trainer fills it in, or make it '
                    "true"),
        Example("sft_train_batch.yaml", """\
per_device_train_batch_size: 2
gradient_accumulation_steps: 8
deepspeed:
  train_batch_size: 100
""", flagged=(4,), severity="info",
                message="DeepSpeed train_batch_size 100 is not a multiple of 16 (micro 2 x accumulation 8) for any W",
                fix='set "train_batch_size" to "auto" in the inline deepspeed config so the Trainer fills it in, or give '
                    "it a multiple of 16 (W x 16)"),
        Example("sft_inline_string.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 2
gradient_accumulation_steps: 8
bf16: true
deepspeed:
  train_micro_batch_size_per_gpu: "2"
  gradient_accumulation_steps: auto
  bf16:
    enabled: true
  zero_optimization:
    stage: 2
""", flagged=(6,), severity="info",
                message='DeepSpeed train_micro_batch_size_per_gpu "2" is a string, never equal to '
                        "per_device_train_batch_size 2",
                fix='set "train_micro_batch_size_per_gpu" to "auto" in the inline deepspeed config so the Trainer fills '
                    "it in, or write it as a number: 2, without quotes"),
        # A program of the project's own under `accelerate launch`: checked from transformers 4.30 on.
        Example("launch_own.sh", _LAUNCH_OWN, flagged=(3,), files=(("accelerate_config.yaml", """\
compute_environment: LOCAL_MACHINE
deepspeed_config:
  gradient_accumulation_steps: 1
  zero_stage: 2
distributed_type: DEEPSPEED
num_machines: 1
num_processes: 4
"""), ("requirements.txt", "transformers==4.30.0\n")), severity="error",
                message="DeepSpeed deepspeed_config.gradient_accumulation_steps 1 differs from gradient_accumulation_steps 4",
                fix="set deepspeed_config.gradient_accumulation_steps to auto (accelerate >= 0.23; older releases need a "
                    "number there) so the Trainer fills it in, or make it 4"),
        Example("launch_own_old.sh", _LAUNCH_OWN, files=(("accelerate_config.yaml", """\
compute_environment: LOCAL_MACHINE
deepspeed_config:
  gradient_accumulation_steps: 1
  zero_stage: 2
distributed_type: DEEPSPEED
num_machines: 1
num_processes: 4
"""), ("requirements.txt", "transformers==4.29.2\n"))),
        # One `accelerate launch --config_file` run (LLaMA-Factory issue 201): the accelerate config's line.
        Example("launch.sh", _LAUNCH, flagged=(3,), files=(("accelerate_config.yaml", """\
compute_environment: LOCAL_MACHINE
deepspeed_config:
  gradient_accumulation_steps: 1
  zero_stage: 2
distributed_type: DEEPSPEED
num_machines: 1
num_processes: 4
"""),),
                message="DeepSpeed deepspeed_config.gradient_accumulation_steps 1 differs from gradient_accumulation_steps 4",
                fix="set deepspeed_config.gradient_accumulation_steps to auto (accelerate >= 0.23; older releases need a "
                    "number there) so the Trainer fills it in, or make it 4"),
        Example("launch_auto.sh", _LAUNCH, files=(("accelerate_config.yaml", """\
compute_environment: LOCAL_MACHINE
deepspeed_config:
  gradient_accumulation_steps: auto
  zero_stage: 2
distributed_type: DEEPSPEED
num_machines: 1
num_processes: 4
"""),)),
        Example("launch_match.sh", _LAUNCH, files=(("accelerate_config.yaml", """\
compute_environment: LOCAL_MACHINE
deepspeed_config:
  gradient_accumulation_steps: 4
  zero_stage: 2
distributed_type: DEEPSPEED
num_machines: 1
num_processes: 4
"""),)),
        Example("sft_train_batch_w8.yaml", """\
per_device_train_batch_size: 2
gradient_accumulation_steps: 8
deepspeed:
  train_batch_size: 128
""", world_size=8),
    ),
)
