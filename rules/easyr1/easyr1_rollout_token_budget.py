"""
## What it does
Checks that EasyR1's `worker.rollout.max_num_batched_tokens` (default 8192)
holds one whole sequence: `data.max_prompt_length` + `data.max_response_length`.

## Why is this bad?
The vLLM rollout is built with that token budget per scheduler step and a
context of prompt + response; EasyR1 raises "max_num_batched_tokens should be
greater than prompt_length + response_length" when the workers start, after
Ray placed the job. Raising the response length for long reasoning (8k, 16k)
without the budget is the usual slip.

## Example
```yaml
data:
  max_prompt_length: 1024
  max_response_length: 8192   # 9216 tokens > the default budget of 8192
```

## Use instead
```yaml
data:
  max_prompt_length: 1024
  max_response_length: 8192
worker:
  rollout:
    max_num_batched_tokens: 9216
```

EasyR1 checks it in every tag; its layouts before v0.3.0 from 2025-02-25 on
(10b28ee; the first commit, two days earlier, has no such check).

## Source
EasyR1 verl/workers/rollout/vllm_rollout_spmd.py:97-98 @ v0.3.2;
verl/workers/rollout/config.py:38 (default 8192); verl/trainer/config.py:170-171
(prompt_length and response_length come from data).
"""

from collections.abc import Iterator

from batchlint.frameworks.releases import EASYR1
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

# Every tag; of the layouts before v0.3.0 ("0.dev0") all but the first two days'.
CHECKED = Premise(
    EASYR1,
    source="b3d72a7 (first commit, 2025-02-23) verl/workers/rollout/vllm_rollout/vllm_rollout_spmd.py (no check); "
           "10b28ee (2025-02-25) vllm_rollout_spmd.py:66-68 (first); v0.3.0 verl/workers/rollout/vllm_rollout_spmd.py:66-67; "
           "v0.3.2 verl/workers/rollout/vllm_rollout_spmd.py:97-98 (still)")


def check(plan: TrainingPlan) -> Iterator[Finding]:
    settings = plan.settings
    budget, prompt, response = settings.token_budget, settings.prompt_length, settings.response_length
    if not all(f is not None and f.positive for f in (budget, prompt, response)):
        return
    needed = prompt.value + response.value
    if budget.value >= needed:
        return
    span = budget.span or response.span or prompt.span
    yield Finding(
        span=span,
        message=(f"{budget.describe()} is less than {prompt.describe()} + {response.describe()} = {needed}: "
                 f"the vLLM rollout cannot schedule one whole sequence, and EasyR1 refuses to start"),
        fix=f"set {budget.key} to at least {needed}, or shorten {response.key}",
        related=tuple(Related(f"{f.key} = {f.value}", f.span) for f in (prompt, response) if f.span and f.span != span),
    )


_CONFIG = """\
data:
  max_prompt_length: 1024
  max_response_length: {response}
worker:
  actor:
    global_batch_size: 16
  rollout:
    n: 4
"""

RULE = Rule(
    code="BL402",
    name="easyr1-rollout-token-budget",
    severity="error",
    summary="EasyR1: a rollout max_num_batched_tokens shorter than prompt + response",
    check=check,
    needs=("settings.token_budget", "settings.prompt_length", "settings.response_length"),
    premises=(CHECKED,),
    doc=__doc__,
    examples=(
        # The default budget of 8192 is reported at the response length that outgrew it.
        Example("long_response.yaml", _CONFIG.format(response=8192), flagged=(3,)),
        Example("short_response.yaml", _CONFIG.format(response=7168)),
        Example("budget_raised.yaml", _CONFIG.format(response=8192) + "    max_num_batched_tokens: 9216\n"),
        Example("budget_short.yaml", _CONFIG.format(response=8192) + "    max_num_batched_tokens: 9000\n", flagged=(9,)),
    ),
)
