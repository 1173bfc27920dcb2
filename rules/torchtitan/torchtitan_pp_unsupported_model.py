"""
## What it does
Flags `pipeline_parallel_degree` > 1 for a TorchTitan model that has no
pipelining function: flux, qwen3, gpt_oss and the vlm experiment (v0.2.2).

## Why is this bad?
The trainer raises "Pipeline Parallel is enabled but qwen3 does not support
pipelining" once the model has been built on every GPU.

## Example
```toml
[model]
name = "qwen3"

[parallelism]
pipeline_parallel_degree = 2
```

## Use instead
```toml
[model]
name = "qwen3"

[parallelism]
pipeline_parallel_degree = 1
tensor_parallel_degree = 2
```

A release without the model refuses its name instead (qwen3 and vlm are new
in 0.2.0, gpt_oss in 0.2.1): such releases are not weighed.

## Source
torchtitan/train.py:218-223 @ v0.2.2; `pipelining_fn=None` in
models/flux/__init__.py:113, models/qwen3/__init__.py:199,
models/gpt_oss/__init__.py:85, experiments/vlm/__init__.py:54. See "When it
holds" for the other releases.
"""

from collections.abc import Iterator

from batchlint.frameworks.torchtitan import TitanSettings, model_premises, model_window
from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule

PREMISES = model_premises({
    "0.0.2": "torchtitan/train.py:196-201 @ d2b57cfaa (flux, pipelining_fn=None at experiments/flux/__init__.py:115; "
             "the check since 785c34c99)",
    "0.1.0": "torchtitan/train.py:216-221, experiments/flux/__init__.py:114",
    "0.2.0": "torchtitan/train.py:221-226, models/qwen3/__init__.py:199, experiments/vlm/__init__.py:54",
    "0.2.1": "torchtitan/train.py:218-223, experiments/gpt_oss/__init__.py:82",
    "0.2.2": "torchtitan/train.py:218-223, models/gpt_oss/__init__.py:85",
})


def check(plan: TrainingPlan, titan: TitanSettings) -> Iterator[Finding]:
    pp, model = plan.parallel["pp"], titan.model
    stages = pp.number
    if stages is None or stages <= 1 or pp.span is None or titan.model_support.pipelining:
        return
    yield Finding(
        premise=model_window(titan.model_support),
        span=pp.span,
        message=f"pp = {stages}, but TorchTitan's {model.value} model has no pipelining support",
        notes=(f"pp comes from {pp.describe()}.",
               f"{model.value} registers no pipelining function: the trainer refuses to start."),
        fix=f"set {pp.key} to 1 and use tensor or data parallelism instead",
        related=(Related(f"model {model.value}", model.span),) if model.span is not None else (),
    )


_TITAN_QWEN3_PP = """\
[model]
name = "qwen3"
flavor = "32B"

[parallelism]
pipeline_parallel_degree = 2
"""


RULE = Rule(
    code="BL213",
    name="torchtitan-pp-unsupported-model",
    severity="error",
    summary="TorchTitan: pipeline parallelism for a model without pipelining support",
    check=check,
    subject=TitanSettings,
    needs=("parallel.pp",),
    premises=PREMISES,
    doc=__doc__,
    examples=(
        Example("titan_qwen3_pp.toml", _TITAN_QWEN3_PP, flagged=(6,), severity="error",
                message="pp = 2, but TorchTitan's qwen3 model has no pipelining support",
                fix="set [parallelism] pipeline_parallel_degree to 1 and use tensor or data parallelism instead"),
        Example("titan_llama3_pp.toml", """\
[model]
name = "llama3"
flavor = "32B"

[parallelism]
pipeline_parallel_degree = 2
"""),
        Example("titan_flux_pp.toml", """\
[model]
name = "flux"
flavor = "32B"

[parallelism]
pipeline_parallel_degree = 2
""", flagged=(6,), severity="error",
                message="pp = 2, but TorchTitan's flux model has no pipelining support",
                fix="set [parallelism] pipeline_parallel_degree to 1 and use tensor or data parallelism instead"),
        # 0.1.0 has no qwen3 (it refuses the name): not this verdict.
        Example("titan_qwen3_pp_010.toml", _TITAN_QWEN3_PP, files=(('requirements.txt', 'torchtitan==0.1.0\n'),)),
    ),
)
