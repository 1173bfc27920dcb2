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

## Source
transformers/training_args.py:1686-1712 (the checks), 1657-1666 (`eval_steps`
falls back to `logging_steps`), 852, 977, 987-991 (defaults) @ 4.57.1;
training_args.py:1748-1775 and 1575-1578 @ 5.23.0; trl/trainer/base_config.py
(`logging_steps` default 10) @ 1.16.0.
"""

from collections.abc import Iterator

from batchlint.plan import Origin, TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    schedule = plan.trainer.checkpointing
    load_best = schedule.load_best_model_at_end
    if load_best is None or not load_best.value or schedule.evaluation_strategy is not None:
        return  # `evaluation_strategy` is the pre-4.46 name: which one counts depends on the version
    save, evaluation = schedule.save_strategy, schedule.eval_strategy
    if save is None or evaluation is None or save.value == "best":
        return
    related = (Related("load_best_model_at_end enabled here", load_best.span),)
    if evaluation.value != save.value:
        yield Finding(
            span=_first_written(evaluation, save, load_best),
            message=(
                f"load_best_model_at_end (line {load_best.span.line}) needs the evaluation and save strategies to match, but "
                f"{_describe(evaluation)} differs from {_describe(save)}: transformers refuses to start"
            ),
            fix=f'set eval_strategy to "{save.value}", or save_strategy to "best"',
            related=related,
        )
    elif save.value == "steps":
        yield from _steps(schedule, load_best, related)


def _describe(fact):
    shown = f'"{fact.value}"' if isinstance(fact.value, str) else _shown(fact.value)
    return f"{fact.key} {shown}" + (" (default)" if fact.origin is Origin.DEFAULT else "")


def _shown(number):
    return str(int(number)) if float(number).is_integer() else str(number)


def _steps(schedule, load_best, related):
    save, evaluation = schedule.save_steps, schedule.eval_steps
    if save is None or evaluation is None or _multiple(save.value, evaluation.value):
        return
    if (save.value < 1) != (evaluation.value < 1):
        why = "one is a ratio of the training steps and the other a step count, so the multiple cannot be guaranteed"
        fix = "give both as step counts, or both as ratios"
    else:
        why = f"{_shown(save.value)} is not a multiple of {_shown(evaluation.value)}"
        fix = _fix(save, evaluation)
    if schedule.eval_steps_from_logging:
        why += " (eval_steps is unset, so it is logging_steps)"
    yield Finding(
        span=_first_written(save, evaluation, load_best),
        message=(
            f"load_best_model_at_end needs {_describe(save)} to be a multiple of {_describe(evaluation)}: "
            f"{why}; transformers refuses to start"
        ),
        fix=fix,
        related=related + tuple(Related(f"{s.key} = {_shown(s.value)}", s.span) for s in (evaluation,) if s.span),
    )


def _multiple(save, evaluation):
    """transformers' test: exact for step counts, scaled by 1e6 for two ratios."""
    if save % evaluation == 0:
        return True
    if save < 1 and evaluation < 1:
        return (save * 1_000_000) % (evaluation * 1_000_000) == 0
    return False


def _fix(save, evaluation):
    if save.value >= 1 and isinstance(save.value, int) and isinstance(evaluation.value, int):
        lower = save.value // evaluation.value * evaluation.value
        options = " or ".join(str(v) for v in (lower, lower + evaluation.value) if v > 0)
        return f"set save_steps to a multiple of {evaluation.value} ({options}), or eval_steps to a divisor of {save.value}"
    return "set save_steps to a multiple of eval_steps"


def _first_written(*settings):
    return next(s.span for s in settings if s.span is not None)


_HF = """\
output_dir: out
per_device_train_batch_size: 4
load_best_model_at_end: true
eval_strategy: {eval}
eval_steps: {eval_steps}
save_steps: 500
"""

RULE = Rule(
    code="BL522",
    name="hf-load-best-model-strategy",
    severity="error",
    summary="load_best_model_at_end with save and eval schedules that do not line up",
    check=check,
    needs=("trainer.checkpointing",),
    doc=__doc__,
    examples=(
        Example("hf_steps_not_multiple.yaml", _HF.format(eval="steps", eval_steps=300), flagged=(6,)),
        Example("hf_steps_multiple.yaml", _HF.format(eval="steps", eval_steps=250)),
        Example("hf_epoch_vs_steps.yaml", _HF.format(eval="epoch", eval_steps=250), flagged=(4,)),
        Example("hf_no_eval.yaml", "output_dir: out\nper_device_train_batch_size: 4\nload_best_model_at_end: true\n", flagged=(3,)),
        Example(
            "hf_save_best.yaml",
            "output_dir: out\nper_device_train_batch_size: 4\nload_best_model_at_end: true\nsave_strategy: best\n",
        ),
    ),
)
