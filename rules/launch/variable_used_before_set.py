"""
## What it does
Flags a launch-script line that reads a variable the script sets only further down, where bash
cannot expand it: under `set -u`, any plain `$X` / `${X}` or name in `$((...))`; without it, a
divisor of `$((...))` (an unset variable is 0 there, so it divides by zero) or an `$X` in
`$((...))` whose empty expansion leaves a syntax error (`64 / $TP`).

## Why is this bad?
Under `set -u` a non-interactive bash exits: "X: unbound variable". The script never gets to its
launch line: the job is submitted, waits in the queue for its nodes, and dies at once. Without
`set -u`, bash prints "division by 0" and abandons the whole command it is in (even with
`set -e`), then goes on: what the line assigns stays unset, and the launch runs with an empty or
zero value in its place (a launch line that divides is not run at all; `sh` and `bash --posix`
exit instead). Only variables the script certainly has not set are flagged (not one a caller,
Slurm or a sourced file may give, not in a branch or function that may not run, not in `$(...)` or
a pipeline, whose error ends only that child process), and only when the script sets them itself
further down, whatever happens (so the environment is not where they are meant to come from).

## Example
```bash
set -xeuo pipefail
max_prompt_length=$((1024 * 16))
max_response_length=$((1024 * 16))
actor_ppo_max_token_len=$(((max_prompt_length + max_response_length) / sp_size))
sp_size=4
python3 -m verl.trainer.main_ppo \\
    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=${actor_ppo_max_token_len}
```

## Use instead
```bash
set -xeuo pipefail
max_prompt_length=$((1024 * 16))
max_response_length=$((1024 * 16))
sp_size=4
actor_ppo_max_token_len=$(((max_prompt_length + max_response_length) / sp_size))
python3 -m verl.trainer.main_ppo \\
    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=${actor_ppo_max_token_len}
```

## Source
bash(1), ARITHMETIC EVALUATION: "A shell variable that is null or unset evaluates to 0"; "division
by 0 is trapped and flagged as an error"; ARITHMETIC EXPANSION: "If the expression is invalid, bash
prints a message indicating failure and no substitution occurs"; The Set Builtin, `-u`: "Treat
unset variables and parameters other than the special parameters `@` and `*` ... as an error when
performing parameter expansion ... if not interactive, exits with a non-zero status"; Bash POSIX
Mode: a non-interactive shell exits on an invalid arithmetic expansion (bash 5.2 in its default
mode goes on with the next command). Upstream example:
verl examples/gspo_trainer/run_qwen3_32b_gspo_npu.sh:66 @ b178a3c (`sp_size` set on line 72).
"""

from __future__ import annotations

from collections.abc import Iterator

from batchlint.launching.lines import launches
from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule
from batchlint.sources.shell import ShellDocument

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import cast
else:
    from batchlint.annotations import cast

_SHOWN = 60  # characters of an expression shown in full


def check(plan: TrainingPlan) -> Iterator[Finding]:
    stops = getattr(plan.document, "stops", ())
    if not stops:
        return
    lines = [launch.command.span for launch in launches(cast(ShellDocument, plan.document))
             if launch.command.span.path is None]
    for stop in stops:
        line = stop.span.line
        name = f"`{stop.variable}`"
        expression = stop.expression if len(stop.expression) <= _SHOWN else f"{stop.expression[:_SHOWN - 5]} ...))"
        related = [Related(f"{name} is set here, after it is read", stop.set_at)]
        if stop.exits and stop.nounset is not None:
            reading = f"`{expression}` reading it" if expression else "reading it"
            launch = next((span for span in lines if span.line > line), None)
            message = f"bash exits here: {name} is not set yet (it is set on line {stop.set_at.line})"
            notes = (f"under `set -u` (line {stop.nounset.line}) {reading} is an error (\"{stop.variable}: unbound "
                     "variable\")",
                     f"the launch on line {launch.line} never runs" if launch is not None else "nothing after it runs")
            related.append(Related("`set -u` makes an unset variable an error", stop.nounset))
        else:
            if stop.why == "empty":
                error = (f"`${stop.variable}` expands to nothing and leaves `{expression}` without an operand "
                         f"(\"syntax error: operand expected\")")
            else:
                error = f"`{expression}` divides by zero (bash reads an unset variable as 0: \"division by 0\")"
            launch = next((span for span in lines if stop.command is not None
                           and stop.command.line <= span.line <= stop.command.end_line), None)
            if launch is not None:
                skipped = f"the launch on line {launch.line} is skipped"
            elif stop.assigns:
                shown = ", ".join(f"`{assigned}`" for assigned in stop.assigns)
                skipped = f"{shown} {'is' if len(stop.assigns) == 1 else 'are'} left unset (read later as empty)"
            else:
                skipped = "the command is skipped"
            message = f"bash cannot expand this: {name} is not set yet (it is set on line {stop.set_at.line})"
            notes = (error, f"bash abandons the command and goes on: {skipped} (sh and `bash --posix` exit here)")
        if launch is not None:
            related.append(Related("the launch that never runs" if stop.exits else "the launch skipped", launch))
        yield Finding(
            span=stop.span,
            message=message,
            notes=notes,
            fix=f"move `{stop.assignment}` (line {stop.set_at.line}) above line {line}",
            related=tuple(related),
        )


RULE = Rule(
    code="BL603",
    name="variable-used-before-set",
    severity="error",
    summary="a launch script reads a variable before it sets it, where bash exits (a `$((...))` divisor, "
            "or under `set -u`): the launch line never runs",
    check=check,
    frameworks=("launch",),
    every_release=("bash's own semantics: an unset variable expands to nothing (set -u aside), in every bash and POSIX "
                   "sh"),
    doc=__doc__,
    examples=(
        Example("run_qwen3_32b_gspo.sh", """\
#!/usr/bin/env bash
set -xeuo pipefail
max_prompt_length=$((1024 * 16))
max_response_length=$((1024 * 16))
actor_ppo_max_token_len=$(((max_prompt_length + max_response_length) / sp_size))
sp_size=4
python3 -m verl.trainer.main_ppo \\
    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=${actor_ppo_max_token_len} \\
    trainer.n_gpus_per_node=8
""", flagged=(5,),
                message="bash exits here: `sp_size` is not set yet (it is set on line 6)",
                fix="move `sp_size=4` (line 6) above line 5"),
        Example("run_qwen3_32b_gspo_ok.sh", """\
#!/usr/bin/env bash
set -xeuo pipefail
max_prompt_length=$((1024 * 16))
max_response_length=$((1024 * 16))
sp_size=4
actor_ppo_max_token_len=$(((max_prompt_length + max_response_length) / sp_size))
python3 -m verl.trainer.main_ppo \\
    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=${actor_ppo_max_token_len} \\
    trainer.n_gpus_per_node=8
"""),
        # Without `set -u`: the divisor reads as 0, bash skips the line and DP stays unset.
        Example("pretrain_gpt.sh", """\
#!/bin/bash
GPUS_PER_NODE=8
NNODES=8
DP=$((GPUS_PER_NODE * NNODES / TP))
TP=8
GBS=$((DP * 4))
torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NNODES pretrain_gpt.py \\
    --tensor-model-parallel-size $TP --global-batch-size $GBS --micro-batch-size 1
""", flagged=(4,),
                message="bash cannot expand this: `TP` is not set yet (it is set on line 5)",
                fix="move `TP=8` (line 5) above line 4"),
        # `$TP` expands to nothing first: `64 / ` is a syntax error.
        Example("pretrain_gpt_dollar.sh", """\
#!/bin/bash
GPUS_PER_NODE=8
NNODES=8
DP=$((GPUS_PER_NODE * NNODES / $TP))
TP=8
GBS=$((DP * 4))
torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NNODES pretrain_gpt.py \\
    --tensor-model-parallel-size $TP --global-batch-size $GBS --micro-batch-size 1
""", flagged=(4,),
                message="bash cannot expand this: `TP` is not set yet (it is set on line 5)",
                fix="move `TP=8` (line 5) above line 4"),
        Example("pretrain_gpt_ok.sh", """\
#!/bin/bash
GPUS_PER_NODE=8
NNODES=8
DP=$((GPUS_PER_NODE * NNODES / 8))
TP=8
GBS=$((DP * 4))
torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NNODES pretrain_gpt.py \\
    --tensor-model-parallel-size $TP --global-batch-size $GBS --micro-batch-size 1
"""),
        # A default where it is read: the caller may give TP, else 8.
        Example("pretrain_gpt_default.sh", """\
#!/bin/bash
GPUS_PER_NODE=8
NNODES=8
DP=$((GPUS_PER_NODE * NNODES / ${TP:-8}))
TP=8
GBS=$((DP * 4))
torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NNODES pretrain_gpt.py \\
    --tensor-model-parallel-size $TP --global-batch-size $GBS --micro-batch-size 1
"""),
    ),
)
