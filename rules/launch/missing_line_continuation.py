"""
## What it does
Flags a launch line whose next lines are its own options (`--deepspeed ds.json`,
`--gradient_accumulation_steps 8`) but that ends without a `\\`: bash ends the
command at that newline and runs the option lines as a command of their own.

## Why is this bad?
A command whose first word is `--gradient_accumulation_steps` is looked up as a program:
bash prints "--gradient_accumulation_steps: command not found" after the job has
already started, without those settings. The training program runs with its
defaults for every option on the lines after the break (one process's batch
of 8 instead of 2, no DeepSpeed config, no accumulation), and a `set -e` script
stops only after training ends, if at all.

## Example
```bash
torchrun --nproc_per_node 8 train.py \\
    --per_device_train_batch_size 2
    --gradient_accumulation_steps 8 \\
    --deepspeed ds_z2.json
```

## Use instead
```bash
torchrun --nproc_per_node 8 train.py \\
    --per_device_train_batch_size 2 \\
    --gradient_accumulation_steps 8 \\
    --deepspeed ds_z2.json
```

## Source
bash(1), SHELL GRAMMAR: a simple command ends at a newline; QUOTING: only a `\\<newline>`
pair continues it. COMMAND EXECUTION: a command name not found prints "command not
found" (status 127). The option lines are not a command any launcher or program
reads.
"""

from collections.abc import Iterator

from batchlint.document import Span
from batchlint.launching.lines import launch_of
from batchlint.lazy_pattern import LazyPattern
from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Rule
from batchlint.sources.shell import Command

# A word bash would look up as a command but that is an option: `--deepspeed`, `-m` is left out
# (`-` alone and numbers are not options of anything).
_OPTION = LazyPattern(r"--?[A-Za-z][\w.-]*(=.*)?")


def check(plan: TrainingPlan) -> Iterator[Finding]:
    doc = plan.document
    commands = sorted((c for c in getattr(doc, "commands", ()) if c.words and c.span.path is None),
                      key=lambda c: (c.span.line, c.span.column))
    broken = {b.span.line for b in getattr(doc, "broken_continuations", ())}  # BL601's: said there
    path = getattr(doc, "path", "")
    index = 0
    while index < len(commands):
        command = commands[index]
        dropped: list[Command] = []
        while index + 1 + len(dropped) < len(commands) and _options(commands[index + 1 + len(dropped)]) \
                and commands[index + len(dropped)].span.end_line + 1 == commands[index + 1 + len(dropped)].span.line:
            dropped.append(commands[index + 1 + len(dropped)])
        index += 1 + len(dropped)
        if not dropped or _options(command) or command.span.end_line in broken or launch_of(command, path) is None:
            continue
        last = [w for w in command.words if w.span.path is None and w.span.end_line == command.span.end_line]
        where = last[-1].span if last else Span.point(command.span.end_line)
        lines = dropped[-1].span.end_line - dropped[0].span.line + 1
        shown = " ".join(w.raw for w in dropped[0].words[:2])
        yield Finding(
            span=where,
            message=f"line {command.span.end_line} does not end with `\\`, so the launch command ends here",
            notes=(f"the next {lines} line{'s' if lines > 1 else ''} of its options (`{shown}` ...) run as a command "
                   f"of their own (\"{dropped[0].words[0].raw.partition('=')[0]}: command not found\")",
                   "the program starts without them, with its defaults"),
            fix=f"end line {command.span.end_line} with ` \\` so the option lines continue the command",
        )


def _options(command: Command) -> bool:
    first = command.words[0]
    return first.span.path is None and bool(_OPTION.fullmatch(first.raw))


RULE = Rule(
    code="BL610",
    name="missing-line-continuation",
    severity="error",
    summary="a launch line that ends without `\\` before lines of its own options, which then run as a command",
    check=check,
    frameworks=("launch",),
    every_release=("bash's own grammar: a command ends at a newline not escaped by `\\`, and a word such as "
                   "`--deepspeed` in command position is looked up as a program, in every bash and POSIX sh"),
    doc=__doc__,
    examples=(
        Example("run_missing.sh", """\
#!/bin/bash
torchrun --nproc_per_node 8 train.py \\
    --model_name_or_path Qwen/Qwen2.5-7B \\
    --per_device_train_batch_size 2
    --gradient_accumulation_steps 8 \\
    --deepspeed ds_z2.json
echo done
""", flagged=(4,),
                message="line 4 does not end with `\\`, so the launch command ends here",
                fix="end line 4 with ` \\` so the option lines continue the command"),
        Example("run_ok.sh", """\
#!/bin/bash
torchrun --nproc_per_node 8 train.py \\
    --model_name_or_path Qwen/Qwen2.5-7B \\
    --per_device_train_batch_size 2 \\
    --gradient_accumulation_steps 8 \\
    --deepspeed ds_z2.json
echo done
"""),
        # A quoted string may hold options on lines of their own: no command ends there.
        Example("run_quoted.sh", """\
ARGS="
    --per_device_train_batch_size 2
    --gradient_accumulation_steps 8
"
torchrun --nproc_per_node 8 train.py $ARGS
"""),
        # Not after a launch line: nothing is dropped from a launch.
        Example("run_echo.sh", """\
echo start
    --verbose
torchrun --nproc_per_node 8 train.py --per_device_train_batch_size 2
"""),
    ),
)
