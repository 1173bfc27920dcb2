"""
## What it does
With `load_best_model_at_end: true` (and a `save_strategy` other than
"best"), checks what TrainingArguments demands: the evaluation and save
strategies match, and with "steps" `save_steps` is a multiple of
`eval_steps`. Defaults are transformers': `eval_strategy` "no",
`save_strategy` "steps", `save_steps` 500, `eval_steps` falling back to
`logging_steps` (which is only assumed where the default is certain:
LLaMA-Factory keeps transformers' 500, TRL's configs log every 10 steps).

## Why is this bad?
The best checkpoint can only be picked among checkpoints that were
evaluated: transformers refuses such a config when it builds its
TrainingArguments ("--load_best_model_at_end requires the save and eval
strategy to match", "... requires the saving steps to be a round multiple of
the evaluation steps"), so the job dies before training.

## Example
```yaml
load_best_model_at_end: true
eval_strategy: steps
eval_steps: 300
save_steps: 500
```

## Use instead
```yaml
load_best_model_at_end: true
eval_strategy: steps
eval_steps: 250
save_steps: 500
```

By release: transformers checks it from 4.9.0 on (the config is accepted
before); a config writing `eval_strategy` runs from 4.41.0 on only (before,
only `evaluation_strategy` exists and `eval_strategy` is refused as an
unknown key), so it is judged against those releases. The old name
`evaluation_strategy` counts wherever it is written (it overrides
`eval_strategy` through 4.50.3) and is judged against 4.9.0-4.50.3, the
releases that read it.

## Source
transformers/training_args.py:683-694 @ 4.9.0 (first; 4.8.2 has none),
1533-1558 @ 4.41.0 (first with `eval_strategy`, 784; 4.40.2 has
`evaluation_strategy` only, 770); training_args.py:1686-1712 (the checks), 1657-1666 (`eval_steps`
falls back to `logging_steps`), 852, 977, 987-991 (defaults) @ 4.57.1;
training_args.py:1748-1775 and 1575-1578 @ 5.23.0; trl/trainer/base_config.py
(`logging_steps` default 10) @ 1.16.0.
"""

from __future__ import annotations

from collections.abc import Iterator

from batchlint.document import Span
from batchlint.frameworks.releases import TRANSFORMERS, TRL
from batchlint.frameworks.training_arguments import Checkpointing, TrainerArguments
from batchlint.plan import Fact, Origin, TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

# The checks are transformers'. A TRL config runs a transformers its TRL release requires; LLaMA-Factory's
# release is not weighed (not gated).
CHECKED = Premise(
    TRANSFORMERS, name="schedule", since="4.9.0", frameworks=("transformers",),
    source="v4.8.2 transformers/training_args.py (no load_best_model_at_end check); v4.9.0 training_args.py:683-694 "
           "(first); v5.24.0 training_args.py:1748-1775 (still)")
# A config writing eval_strategy runs on transformers 4.41 and later only: the older releases are not weighed.
EVAL_STRATEGY = Premise(
    TRANSFORMERS, name="eval_strategy", since="4.41.0", runs_since="4.41.0", frameworks=("transformers",),
    source="v4.40.2 transformers/training_args.py:770 (evaluation_strategy only; hf_argparser.py:377 refuses "
           "eval_strategy as an unused key); v4.41.0 training_args.py:784, 1533-1558 (first); v5.24.0 "
           "training_args.py:1106, 1748-1775 (still)")
# The pre-4.41 name counts wherever it is written, from the first release that checks (4.9.0) to the last that
# has it (4.50.3: it then overrides eval_strategy); 4.51.0 refuses it as an unknown key, so later releases are
# not weighed.
EVALUATION_STRATEGY = Premise(
    TRANSFORMERS, name="evaluation_strategy", since="4.9.0", until="4.50.3", runs_until="4.50.3",
    frameworks=("transformers",),
    source="v4.9.0 transformers/training_args.py:364 (evaluation_strategy), 683-694 (first check); v4.50.3 "
           "training_args.py:1430, 1610-1615 (evaluation_strategy overrides eval_strategy), 1677-1678 (the check); "
           "v4.51.0 training_args.py (no evaluation_strategy)")
TRL_CHECKED = Premise(
    TRL, name="TRL", frameworks=("trl",),
    source="TRL 0.1.0 has no TrainingArguments configs (trl/core.py, gpt2.py, ppo.py only); v0.2.0 setup.py:63 "
           "requires transformers>=4.18.0, v1.16.0 transformers>=4.56.2 (METADATA): each checks it "
           "(transformers training_args.py:683-694 @ 4.9.0 on), and runs a config writing eval_strategy only "
           "with transformers 4.41 or later")


def check(plan: TrainingPlan, trainer: TrainerArguments) -> Iterator[Finding]:
    schedule = trainer.checkpointing
    if schedule is None:
        return  # the framework rewrites the schedule from its own defaults (ms-swift)
    load_best = schedule.load_best_model_at_end
    if load_best is None or not load_best.value or load_best.span is None:
        return
    save, evaluation = schedule.save_strategy, schedule.eval_strategy
    premise = _premise(plan.framework, evaluation)
    legacy = schedule.evaluation_strategy
    if legacy is not None:  # the pre-4.41 name: it counts in every release that has it (EVALUATION_STRATEGY)
        if plan.framework != "transformers" or legacy.value not in ("no", "steps", "epoch"):
            return
        evaluation, premise = legacy, EVALUATION_STRATEGY.name
    if save is None or evaluation is None or save.value == "best":
        return
    related = (Related("load_best_model_at_end enabled here", load_best.span),)
    if evaluation.value != save.value:
        yield Finding(
            span=_first_written(evaluation, save, load_best),
            message=f"load_best_model_at_end with {_describe(evaluation)} but {_describe(save)}",
            notes=(f"load_best_model_at_end (line {load_best.span.line}) needs the evaluation and save strategies "
                   f"to match: transformers refuses to start",),
            fix=f'set {evaluation.key} to "{save.value}", or save_strategy to "best"',
            related=related,
            premise=premise,
        )
    elif save.value == "steps":
        yield from _steps(schedule, load_best, related, premise)


def _premise(framework: str, evaluation: Optional[Fact]) -> str:
    """Which window the finding rests on: a config writing `eval_strategy` runs on transformers 4.41 on."""
    written = evaluation is not None and evaluation.origin is not Origin.DEFAULT
    names = {"transformers": (CHECKED, EVAL_STRATEGY), "trl": (TRL_CHECKED, TRL_CHECKED)}.get(framework)
    return "" if names is None else names[written].name


def _describe(fact: Fact) -> str:
    shown = f'"{fact.value}"' if isinstance(fact.value, str) else _shown(fact.value)
    return f"{fact.key} {shown}" + (" (default)" if fact.origin is Origin.DEFAULT else "")


def _shown(number: object) -> str:
    """A step count or ratio as transformers would print it: 2.0 as 2."""
    return str(int(number)) if isinstance(number, (int, float)) and float(number).is_integer() else str(number)


def _steps(schedule: Checkpointing, load_best: Fact, related: tuple[Related, ...], premise: str) -> Iterator[Finding]:
    save, evaluation = schedule.save_steps, schedule.eval_steps
    if save is None or evaluation is None:
        return
    save_steps, eval_steps = save.value, evaluation.value
    # (both are positive counts or ratios: training_arguments reads nothing else)
    if not isinstance(save_steps, (int, float)) or not isinstance(eval_steps, (int, float)):
        return
    if _multiple(save_steps, eval_steps):
        return
    if (save_steps < 1) != (eval_steps < 1):
        why = "one is a ratio of the training steps and the other a step count, so the multiple cannot be guaranteed"
        fix = "give both as step counts, or both as ratios"
    else:
        why = f"{_shown(save_steps)} is not a multiple of {_shown(eval_steps)}"
        fix = _fix(save, evaluation)
    if schedule.eval_steps_from_logging:
        why += " (eval_steps is unset, so it is logging_steps)"
    yield Finding(
        span=_first_written(save, evaluation, load_best),
        message=f"load_best_model_at_end needs {_describe(save)} to be a multiple of {_describe(evaluation)}",
        notes=(f"{why}; transformers refuses to start",),
        fix=fix,
        related=related + tuple(Related(f"{s.key} = {_shown(s.value)}", s.span) for s in (evaluation,) if s.span),
        premise=premise,
    )


def _multiple(save: float, evaluation: float) -> bool:
    """transformers' test: exact for step counts, scaled by 1e6 for two ratios."""
    if save % evaluation == 0:
        return True
    if save < 1 and evaluation < 1:
        return (save * 1_000_000) % (evaluation * 1_000_000) == 0
    return False


def _fix(save: Fact, evaluation: Fact) -> str:
    if isinstance(save.value, int) and save.value >= 1 and isinstance(evaluation.value, int):
        lower = save.value // evaluation.value * evaluation.value
        options = " or ".join(str(v) for v in (lower, lower + evaluation.value) if v > 0)
        return f"set save_steps to a multiple of {evaluation.value} ({options}), or eval_steps to a divisor of {save.value}"
    return "set save_steps to a multiple of eval_steps"


def _first_written(*settings: Fact) -> Optional[Span]:
    return next((s.span for s in settings if s.span is not None), None)


_NO_EVAL = "output_dir: out\nper_device_train_batch_size: 4\nload_best_model_at_end: true\n"

RULE = Rule(
    code="BL522",
    name="hf-load-best-model-strategy",
    severity="error",
    summary="load_best_model_at_end with save and eval schedules that do not line up",
    check=check,
    subject=TrainerArguments,
    needs=("trainer.checkpointing",),
    premises=(CHECKED, EVAL_STRATEGY, EVALUATION_STRATEGY, TRL_CHECKED),
    doc=__doc__,
    examples=(
        # Written eval_strategy: every release that reads it (4.41 on) checks it; the check is made from 4.9 on.
        Example("hf_steps_not_multiple.yaml", """\
output_dir: out
per_device_train_batch_size: 4
load_best_model_at_end: true
eval_strategy: steps
eval_steps: 300
save_steps: 500
""", flagged=(6,),
                message="load_best_model_at_end needs save_steps 500 to be a multiple of eval_steps 300",
                fix="set save_steps to a multiple of 300 (300 or 600), or eval_steps to a divisor of 500"),
        Example("hf_steps_not_multiple_pinned.yaml", """\
output_dir: out
per_device_train_batch_size: 4
load_best_model_at_end: true
eval_strategy: steps
eval_steps: 300
save_steps: 500
""", flagged=(6,), files=(("requirements.txt", "transformers==4.41.0\n"),), severity="error",
                message="load_best_model_at_end needs save_steps 500 to be a multiple of eval_steps 300",
                fix="set save_steps to a multiple of 300 (300 or 600), or eval_steps to a divisor of 500"),
        Example("hf_steps_not_multiple_pinned_old.yaml", """\
output_dir: out
per_device_train_batch_size: 4
load_best_model_at_end: true
eval_strategy: steps
eval_steps: 300
save_steps: 500
""", files=(("requirements.txt", "transformers==4.40.2\n"),)),
        Example("hf_steps_multiple.yaml", """\
output_dir: out
per_device_train_batch_size: 4
load_best_model_at_end: true
eval_strategy: steps
eval_steps: 250
save_steps: 500
"""),
        Example("hf_epoch_vs_steps.yaml", """\
output_dir: out
per_device_train_batch_size: 4
load_best_model_at_end: true
eval_strategy: epoch
eval_steps: 250
save_steps: 500
""", flagged=(4,),
                message='load_best_model_at_end with eval_strategy "epoch" but save_strategy "steps" (default)',
                fix='set eval_strategy to "steps", or save_strategy to "best"'),
        # No eval_strategy written and no release pinned: 4.8 and older accept it.
        Example("hf_no_eval.yaml", _NO_EVAL, flagged=(3,), severity="info",
                message='load_best_model_at_end with eval_strategy "no" (default) but save_strategy "steps" (default)',
                fix='set eval_strategy to "steps", or save_strategy to "best"'),
        Example("hf_no_eval_pinned.yaml", _NO_EVAL, flagged=(3,), files=(("requirements.txt", "transformers==4.9.0\n"),), severity="error",
                message='load_best_model_at_end with eval_strategy "no" (default) but save_strategy "steps" (default)',
                fix='set eval_strategy to "steps", or save_strategy to "best"'),
        Example("hf_no_eval_pinned_old.yaml", _NO_EVAL, files=(("requirements.txt", "transformers==4.8.2\n"),)),
        # TRL: every release with TrainingArguments configs requires a transformers that checks it.
        Example("trl_no_eval.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
packing: true
per_device_train_batch_size: 4
load_best_model_at_end: true
save_steps: 500
""", flagged=(4,), severity="error",
                message='load_best_model_at_end with eval_strategy "no" (default) but save_strategy "steps" (default)',
                fix='set eval_strategy to "steps", or save_strategy to "best"'),
        Example("trl_epoch_vs_steps.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
packing: true
per_device_train_batch_size: 4
load_best_model_at_end: true
eval_strategy: epoch
save_steps: 500
""", flagged=(5,), severity="error",
                message='load_best_model_at_end with eval_strategy "epoch" but save_strategy "steps" (default)',
                fix='set eval_strategy to "steps", or save_strategy to "best"'),
        # The pre-4.41 name: checked from 4.9.0 to 4.50.3, the last release that reads it.
        Example("hf_legacy_no_vs_epoch.yaml", """\
output_dir: out
per_device_train_batch_size: 4
load_best_model_at_end: true
evaluation_strategy: "no"
save_strategy: epoch
""", flagged=(4,), severity="info",
                message='load_best_model_at_end with evaluation_strategy "no" but save_strategy "epoch"',
                fix='set evaluation_strategy to "epoch", or save_strategy to "best"'),
        Example("hf_legacy_no_vs_epoch_pinned.yaml", """\
output_dir: out
per_device_train_batch_size: 4
load_best_model_at_end: true
evaluation_strategy: "no"
save_strategy: epoch
""", flagged=(4,), files=(("requirements.txt", "transformers==4.33.0\n"),), severity="error",
                message='load_best_model_at_end with evaluation_strategy "no" but save_strategy "epoch"',
                fix='set evaluation_strategy to "epoch", or save_strategy to "best"'),
        Example("hf_legacy_no_vs_epoch_pinned_old.yaml", """\
output_dir: out
per_device_train_batch_size: 4
load_best_model_at_end: true
evaluation_strategy: "no"
save_strategy: epoch
""", files=(("requirements.txt", "transformers==4.8.2\n"),)),
        Example("hf_legacy_epoch.yaml", """\
output_dir: out
per_device_train_batch_size: 4
load_best_model_at_end: true
evaluation_strategy: "epoch"
save_strategy: epoch
""", files=(("requirements.txt", "transformers==4.33.0\n"),)),
        Example("hf_save_best.yaml", """\
output_dir: out
per_device_train_batch_size: 4
load_best_model_at_end: true
save_strategy: best
"""),
    ),
)
