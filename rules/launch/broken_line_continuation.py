"""
## What it does
Flags a `\\` at the end of a launch-script line that is followed by spaces or
a comment, when the lines after it look like more arguments of the same
command.

## Why is this bad?
Bash joins two lines only when the backslash is the very last character. A
`\\` followed by a space escapes that space instead; the command ends at the
newline and every following line runs as a command of its own: `--lr 1e-5`
fails as "command not found", `data.train_batch_size=1024` is not even an
error. The job launches without those settings, and nothing says so.

## Example
```bash
python3 -m verl.trainer.main_ppo \\
    algorithm.pf_ppo.reweight_method=pow \\  # ["pow", "max_min"]
    data.train_batch_size=1024 \\
    trainer.n_gpus_per_node=8
```

## Use instead
```bash
# reweight_method: one of "pow", "max_min"
python3 -m verl.trainer.main_ppo \\
    algorithm.pf_ppo.reweight_method=pow \\
    data.train_batch_size=1024 \\
    trainer.n_gpus_per_node=8
```

## Source
bash(1), QUOTING: "A non-quoted backslash (\\) ... If a \\<newline> pair appears ... it is treated as a line
continuation"; anything else after the backslash is not. Upstream example:
verl examples/ppo_trainer/run_deepseek7b_llm_pfppo.sh:6 @ b178a3c.
"""

from collections.abc import Iterator

from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    for broken in getattr(plan.document, "broken_continuations", ()):
        lines = "line of arguments runs as a separate command" if broken.dropped == 1 else (
            f"{broken.dropped} lines of arguments run as separate commands")
        notes = [f"the command ends here and the next {lines}, dropped from the launch (bash runs them after it "
                 "ends; `key=value` lines are mere variable assignments, with no error)"]
        if broken.carriage_return:
            after = "a carriage return (CRLF line ending)"
            notes.insert(0, "bash reads the carriage return of a CRLF line ending as part of the line")
            fix = "save the script with LF line endings (dos2unix, or `git config core.autocrlf input`)"
        else:
            after = "a comment" if broken.comment else "trailing spaces"
            fix = "make `\\` the last character of the line" + (
                " (move the comment above the command)" if broken.comment else "")
        yield Finding(
            span=broken.span,
            message=f"this `\\` is followed by {after}, so it does not continue the command",
            notes=tuple(notes),
            fix=fix,
        )


RULE = Rule(
    code="BL601",
    name="broken-line-continuation",
    severity="error",
    summary="a `\\` followed by spaces, a comment or a CR (CRLF line endings), which ends the launch command",
    check=check,
    frameworks=("launch",),
    every_release=("bash's own grammar: a backslash followed by a space escapes the space and ends the command at the "
                   "newline, in every bash and POSIX sh"),
    doc=__doc__,
    examples=(
        Example("run_comment.sh", """\
#!/bin/bash
set -x
python3 -m verl.trainer.main_ppo \\
    algorithm.adv_estimator=gae \\
    algorithm.pf_ppo.reweight_method=pow \\  # ["pow", "max_min"]
    data.train_batch_size=1024 \\
    trainer.n_gpus_per_node=8
""", flagged=(5,),
                message="this `\\` is followed by a comment, so it does not continue the command",
                fix="make `\\` the last character of the line (move the comment above the command)"),
        Example("run_spaces.sh", """\
#!/bin/bash
set -x
python3 -m verl.trainer.main_ppo \\
    algorithm.adv_estimator=gae \\
    algorithm.pf_ppo.reweight_method=pow \\\x20\x20\x20
    data.train_batch_size=1024 \\
    trainer.n_gpus_per_node=8
""", flagged=(5,),
                message="this `\\` is followed by trailing spaces, so it does not continue the command",
                fix="make `\\` the last character of the line"),
        Example("run_ok.sh", """\
#!/bin/bash
set -x
python3 -m verl.trainer.main_ppo \\
    algorithm.adv_estimator=gae \\
    algorithm.pf_ppo.reweight_method=pow \\
    data.train_batch_size=1024 \\
    trainer.n_gpus_per_node=8
"""),
        # Saved with CRLF line endings: every `\` escapes a carriage return instead of the line end.
        Example("run_crlf.sh", """\
#!/bin/bash\r
set -x\r
python3 -m verl.trainer.main_ppo \\\r
    algorithm.adv_estimator=gae \\\r
    algorithm.pf_ppo.reweight_method=pow \\\r
    data.train_batch_size=1024 \\\r
    trainer.n_gpus_per_node=8\r
""", flagged=(3, 4, 5, 6),
                message="this `\\` is followed by a carriage return (CRLF line ending), so it does not "
                        "continue the command",
                fix="save the script with LF line endings (dos2unix, or `git config core.autocrlf input`)"),
    ),
)
