"""
## What it does
With `actor_rollout_ref.actor.use_dynamic_bsz`, checks that the actor's
token budget, `ppo_max_token_len_per_gpu` (default 16384) times the
sequence-parallel degree (Ulysses `ulysses_sequence_parallel_size`, or the
Megatron context-parallel degree), holds one sequence as verl pads it:
`data.max_prompt_length` + `data.max_response_length`.

## Why is this bad?
verl's legacy workers pad every prompt to `max_prompt_length` and every
response to the response length, and pack micro batches by tokens up to the
budget. `rearrange_micro_batches` refuses a budget below one padded sequence
("max_token_len must be greater than the sequence length"), after the model
is loaded and the first rollout has run. Raising the response length for
long reasoning without the budget is the usual slip.

## Example
```bash
python3 -m verl.trainer.main_ppo data.max_prompt_length=8192 data.max_response_length=32768 \
    actor_rollout_ref.actor.use_dynamic_bsz=True actor_rollout_ref.actor.ppo_max_token_len_per_gpu=16384 ...
```

## Use instead
```bash
python3 -m verl.trainer.main_ppo data.max_prompt_length=8192 data.max_response_length=32768 \
    actor_rollout_ref.actor.use_dynamic_bsz=True actor_rollout_ref.actor.ppo_max_token_len_per_gpu=40960 ...
```

## Source
verl/utils/seqlen_balancing.py:230-231 @ v0.2 (`rearrange_micro_batches`:
`attention_mask.shape[-1]`), :277-279 @ v0.5.0, :382 @ v0.7.0;
verl/workers/actor/dp_actor.py:223 @ v0.2 and :441 @ v0.7.0, megatron_actor.py
:765 @ v0.7.0 (the budget times sp or cp). The workers of 0.8.0 on pass
nested (unpadded) sequences, whose real lengths are checked instead: data, not
the config (verl/utils/seqlen_balancing.py:373-384 @ 0.9.1).
"""

from collections.abc import Iterator

from batchlint.frameworks.releases import VERL
from batchlint.frameworks.verl import VerlSettings
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Rule

PADDED = Premise(
    VERL, since="0.2", until="0.7.1",
    source="v0.1 (no use_dynamic_bsz); v0.2 verl/utils/seqlen_balancing.py:230-231, dp_actor.py:223 (first); "
           "v0.7.0 seqlen_balancing.py:382 (padded DataProto from the legacy workers); 0.7.1 (the last release "
           "whose default workers are the legacy ones, main_ppo.py:128-170); 0.8.0 on: nested sequences")


def check(plan: TrainingPlan, settings: VerlSettings) -> Iterator[Finding]:
    actor = settings.actor
    budget, seq_len = plan.micro_tokens, plan.seq_len
    if not actor.dynamic or not settings.legacy_workers or budget is None or seq_len is None:
        return
    per_gpu, length = budget.count, seq_len.count
    if per_gpu is None or length is None:
        return
    split = plan.parallel.get("sp") or plan.parallel.get("cp")
    degree = split.count if split is not None and split.count else 1
    if per_gpu * degree >= length:
        return
    times = f" x {split.key} {degree}" if split is not None and degree > 1 else ""
    needed = -(-length // degree)
    yield Finding(
        span=budget.span or seq_len.span or plan.document.root.span,
        message=f"token budget {per_gpu}{times} is below one padded sequence of {length} tokens",
        notes=(f"{budget.describe()}{times} = {per_gpu * degree} tokens per micro batch; a sequence is "
               f"{seq_len.describe()} = {length} tokens, padded to that width",
               "verl refuses it after the first rollout (rearrange_micro_batches: \"max_token_len must be greater "
               "than the sequence length\")"),
        fix=f"set {budget.key} to at least {needed}, or shorten data.max_prompt_length / data.max_response_length",
    )


RULE = Rule(
    code="BL183",
    name="verl-token-budget-below-sequence",
    severity="error",
    summary="verl: a dynamic-batch token budget below one padded sequence (max_prompt_length + max_response_length)",
    check=check,
    subject=VerlSettings,
    needs=(),
    premises=(PADDED,),
    doc=__doc__,
    examples=(
        Example("long_responses.sh", """\
python3 -m verl.trainer.main_ppo \\
    data.train_batch_size=64 \\
    data.max_prompt_length=8192 \\
    data.max_response_length=32768 \\
    actor_rollout_ref.actor.ppo_mini_batch_size=16 \\
    actor_rollout_ref.actor.use_dynamic_bsz=True \\
    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=16384 \\
    actor_rollout_ref.rollout.n=4 \\
    trainer.n_gpus_per_node=8
""", flagged=(7,), files=(("requirements.txt", "verl==0.4.1\n"),),
                message="token budget 16384 is below one padded sequence of 40960 tokens",
                fix="set actor_rollout_ref.actor.ppo_max_token_len_per_gpu to at least 40960, or shorten "
                    "data.max_prompt_length / data.max_response_length"),
        Example("long_responses_sp.sh", """\
python3 -m verl.trainer.main_ppo \\
    data.train_batch_size=64 \\
    data.max_prompt_length=8192 \\
    data.max_response_length=32768 \\
    actor_rollout_ref.actor.ppo_mini_batch_size=16 \\
    actor_rollout_ref.actor.use_dynamic_bsz=True \\
    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=16384 \\
    actor_rollout_ref.actor.ulysses_sequence_parallel_size=4 \\
    actor_rollout_ref.model.use_remove_padding=True \\
    actor_rollout_ref.rollout.n=4 \\
    trainer.n_gpus_per_node=8
""", files=(("requirements.txt", "verl==0.4.1\n"),)),
        # 0.8.0 on check the real lengths of unpadded sequences: data, not the config.
        Example("long_responses_new.sh", """\
python3 -m verl.trainer.main_ppo \\
    data.train_batch_size=64 \\
    data.max_prompt_length=8192 \\
    data.max_response_length=32768 \\
    actor_rollout_ref.actor.ppo_mini_batch_size=16 \\
    actor_rollout_ref.actor.use_dynamic_bsz=True \\
    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=16384 \\
    actor_rollout_ref.rollout.n=4 \\
    trainer.n_gpus_per_node=8
""", files=(("requirements.txt", "verl==0.9.1\n"),)),
    ),
)
