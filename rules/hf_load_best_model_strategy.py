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

from batchlint.frameworks.facts import flag
from batchlint.rule import Example, Finding, Related, Rule

_EVAL = {"no", "steps", "epoch"}
_SAVE = _EVAL | {"best"}


def check(plan):
    root = plan.document.root
    load_best = flag(root.get("load_best_model_at_end"), "load_best_model_at_end")
    if load_best is None or not load_best.value or "evaluation_strategy" in root.items:
        return  # `evaluation_strategy` is the pre-4.46 name: which one counts depends on the version
    save = _setting(root, "save_strategy", "steps", _SAVE)
    evaluation = _setting(root, "eval_strategy", "no", _EVAL)
    if save is None or evaluation is None or save.value == "best":
        return
    related = (Related("load_best_model_at_end enabled here", load_best.span),)
    if evaluation.value != save.value:
        yield Finding(
            span=_first_written(evaluation, save, load_best),
            message=(
                f"load_best_model_at_end (line {load_best.span.line}) needs the evaluation and save strategies to match, but "
                f"{evaluation.describe()} differs from {save.describe()}: transformers refuses to start"
            ),
            fix=f'set eval_strategy to "{save.value}", or save_strategy to "best"',
            related=related,
        )
    elif save.value == "steps":
        yield from _steps(plan, root, load_best, related)


class _Setting:
    def __init__(self, key, value, node=None):
        self.key, self.value, self.node = key, value, node

    @property
    def span(self):
        return self.node.span if self.node is not None else None

    def describe(self):
        shown = f'"{self.value}"' if isinstance(self.value, str) else _shown(self.value)
        return f"{self.key} {shown}" + ("" if self.node is not None else " (default)")


def _shown(number):
    return str(int(number)) if float(number).is_integer() else str(number)


def _setting(root, key, default, allowed):
    node = root.get(key)
    if node is None:
        return _Setting(key, default)
    value = getattr(node, "value", None)
    return _Setting(key, value, node) if value in allowed else None


def _number(root, key, default=None):
    """A positive step setting as written, else the default; None when unknown."""
    node = root.get(key)
    if node is None:
        return None if default is None else _Setting(key, default)
    value = getattr(node, "value", None)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return _Setting(key, value, node)
    return None


def _unset(root, key):
    """Absent, null or 0: transformers then takes eval_steps from logging_steps."""
    value = getattr(root.get(key), "value", 0)
    return value is None or (value == 0 and not isinstance(value, bool))


def _steps(plan, root, load_best, related):
    save = _number(root, "save_steps", 500)
    # eval_steps unset (or 0) falls back to logging_steps (the adapter knows its default).
    if _unset(root, "eval_steps"):
        logging = plan.logging_steps
        evaluation = None if logging is None else _Setting(logging.key, logging.value, logging.node)
    else:
        evaluation = _number(root, "eval_steps")
    if save is None or evaluation is None or _multiple(save.value, evaluation.value):
        return
    if (save.value < 1) != (evaluation.value < 1):
        why = "one is a ratio of the training steps and the other a step count, so the multiple cannot be guaranteed"
        fix = "give both as step counts, or both as ratios"
    else:
        why = f"{_shown(save.value)} is not a multiple of {_shown(evaluation.value)}"
        fix = _fix(save, evaluation)
    if evaluation.key == "logging_steps":
        why += " (eval_steps is unset, so it is logging_steps)"
    yield Finding(
        span=_first_written(save, evaluation, load_best),
        message=(
            f"load_best_model_at_end needs {save.describe()} to be a multiple of {evaluation.describe()}: "
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
    frameworks=("transformers", "trl", "llamafactory"),
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
