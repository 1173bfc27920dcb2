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

from batchlint.frameworks.easyr1 import EasyR1Settings
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


def check(plan: TrainingPlan, settings: EasyR1Settings) -> Iterator[Finding]:
    budget, prompt, response = settings.token_budget, settings.prompt_length, settings.response_length
    if budget is None or prompt is None or response is None:
        return
    tokens, prompts, responses = budget.count, prompt.count, response.count
    if tokens is None or prompts is None or responses is None:
        return
    needed = prompts + responses
    if tokens >= needed:
        return
    span = budget.span or response.span or prompt.span
    yield Finding(
        span=span,
        message=f"{budget.describe()} is less than one sequence of {needed} tokens",
        notes=(f"A sequence is {prompt.describe()} + {response.describe()} = {needed} tokens.",
               "The vLLM rollout cannot schedule one whole sequence: EasyR1 refuses to start."),
        fix=f"set {budget.key} to at least {needed}, or shorten {response.key}",
        related=tuple(Related(f"{f.key} = {f.value}", f.span) for f in (prompt, response) if f.span and f.span != span),
    )


RULE = Rule(
    code="BL402",
    name="easyr1-rollout-token-budget",
    severity="error",
    summary="EasyR1: a rollout max_num_batched_tokens shorter than prompt + response",
    check=check,
    subject=EasyR1Settings,
    premises=(CHECKED,),
    doc=__doc__,
    examples=(
        # The default budget of 8192 is reported at the response length that outgrew it.
        Example("long_response.yaml", """\
data:
  max_prompt_length: 1024
  max_response_length: 8192
worker:
  actor:
    global_batch_size: 16
  rollout:
    n: 4
""", flagged=(3,),
                message="worker.rollout.max_num_batched_tokens (default 8192) is less than one sequence of "
                        "9216 tokens",
                fix="set worker.rollout.max_num_batched_tokens to at least 9216, or shorten "
                    "data.max_response_length"),
        Example("short_response.yaml", """\
data:
  max_prompt_length: 1024
  max_response_length: 7168
worker:
  actor:
    global_batch_size: 16
  rollout:
    n: 4
"""),
        Example("budget_raised.yaml", """\
data:
  max_prompt_length: 1024
  max_response_length: 8192
worker:
  actor:
    global_batch_size: 16
  rollout:
    n: 4
    max_num_batched_tokens: 9216
"""),
        Example("budget_short.yaml", """\
data:
  max_prompt_length: 1024
  max_response_length: 8192
worker:
  actor:
    global_batch_size: 16
  rollout:
    n: 4
    max_num_batched_tokens: 9000
""", flagged=(9,),
                message="worker.rollout.max_num_batched_tokens (9000) is less than one sequence of 9216 "
                        "tokens",
                fix="set worker.rollout.max_num_batched_tokens to at least 9216, or shorten "
                    "data.max_response_length"),
    ),
)
