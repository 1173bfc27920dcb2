"""
## What it does
Flags a launch line that starts more processes on a machine
(`torchrun --nproc_per_node`, `accelerate launch --num_processes` on one
machine, or their environment variables) than the GPUs its
`CUDA_VISIBLE_DEVICES` lists.

## Why is this bad?
Each process binds the GPU of its local rank (`cuda:LOCAL_RANK`): accelerate's
state does it before the program's first line, and the Trainer, DeepSpeed and
Megatron do it when they start. The processes whose local rank has no visible
GPU fail with "CUDA error: invalid device ordinal", and the job with them,
after it was queued.

## Example
```bash
CUDA_VISIBLE_DEVICES=1,2,3,4 accelerate launch --num_processes=8 train.py
```

## Use instead
```bash
CUDA_VISIBLE_DEVICES=1,2,3,4 accelerate launch --num_processes=4 train.py
```

## Source
accelerate utils/launch.py:270-271 @ v0.25.0 (one machine: torchrun's
nproc_per_node is num_processes), state.py:205-208 (`torch.cuda.set_device`
of `cuda:LOCAL_RANK`), the same in state.py @ v1.11.0; torch/distributed/run.py
(LOCAL_RANK 0 to nproc_per_node - 1 on each machine); CUDA's device ordinals
are the visible devices, renumbered from 0.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from batchlint.launching.lines import launches
from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule
from batchlint.sources.shell import ShellDocument, Word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import cast
else:
    from batchlint.annotations import cast


def check(plan: TrainingPlan) -> Iterator[Finding]:
    for launch in launches(cast(ShellDocument, plan.document)):
        per_node, visible = launch.per_node, launch.visible
        if per_node is None or visible is None or per_node.count is None or visible.count is None:
            continue
        if launch.machines_file is not None and not _one_machine(plan, *launch.machines_file):
            continue
        if per_node.value <= visible.value or per_node.span is None or per_node.span.path is not None:
            continue
        yield Finding(
            span=per_node.span,
            message=f"{launch.launcher} starts {per_node.value} processes on a machine that shows {visible.value} GPUs",
            notes=(f"{per_node.detail}; {visible.detail}",
                   f"local ranks {visible.value} to {per_node.value - 1} find no GPU of their index: \"CUDA error: "
                   "invalid device ordinal\" at start-up"),
            fix=f"start {visible.value} processes, or list {per_node.value} devices in CUDA_VISIBLE_DEVICES",
            related=(Related(f"CUDA_VISIBLE_DEVICES lists {visible.value}", visible.span),)
            if visible.span is not None and visible.span.path is None else (),
        )


def _one_machine(plan: TrainingPlan, word: Word, key: str) -> bool:
    """Whether the launcher's config file the line names (beside the script, else at the top of the project)
    gives one machine: `num_machines` 1, or not written (accelerate's ClusterConfig default, config_args.py:182
    @ v1.11.0). False when it is not found or not read: the machines are then not known."""
    from batchlint.document import Mapping, Scalar
    from batchlint.project import ProjectView
    from batchlint.sources import format_of, read

    view, written = plan.project or ProjectView.now(), str(word.value)  # a launch plan: the run's view
    folders = [os.path.dirname(os.path.abspath(plan.document.path))]
    folders += list(view.boundary.roots) if view.boundary is not None else []
    for folder in folders:
        path = os.path.normpath(os.path.join(folder, written))
        fmt = format_of(path)
        if fmt is None or not view.may_read(path) or not view.is_file(path):
            continue
        try:
            root = read(path, view.read_bytes(path).decode("utf-8-sig"), fmt, from_utf8=True).root
        except Exception:  # noqa: BLE001  (unreadable, or not a config: the machines are not known)
            return False
        node = root.get(key) if isinstance(root, Mapping) else None
        return node is None or (isinstance(node, Scalar) and node.value == 1)
    return False


RULE = Rule(
    code="BL611",
    name="processes-over-visible-devices",
    severity="error",
    summary="a launch line starting more processes on a machine than the GPUs CUDA_VISIBLE_DEVICES shows it",
    check=check,
    needs=(),
    frameworks=("launch",),
    every_release=("torchrun gives each process of a machine a local rank below nproc_per_node, and every training "
                   "runtime binds cuda:LOCAL_RANK (accelerate's state, the Trainer, DeepSpeed, Megatron), in every "
                   "release; CUDA numbers the visible devices from 0"),
    doc=__doc__,
    examples=(
        Example("finetune.sh", """\
#!/bin/bash
export CUDA_VISIBLE_DEVICES=1,2,3,4
accelerate launch --num_machines 1 --num_processes=8 train.py \\
    --per_device_train_batch_size 4
""", flagged=(3,), message="accelerate launch starts 8 processes on a machine that shows 4 GPUs",
                fix="start 4 processes, or list 8 devices in CUDA_VISIBLE_DEVICES"),
        Example("finetune_4.sh", """\
#!/bin/bash
export CUDA_VISIBLE_DEVICES=1,2,3,4
accelerate launch --num_machines 1 --num_processes=4 train.py \\
    --per_device_train_batch_size 4
"""),
        # No machine count on the line nor a config named: accelerate reads the user's own default config.
        Example("no_machines.sh", """\
#!/bin/bash
export CUDA_VISIBLE_DEVICES=1,2,3,4
accelerate launch --num_processes=8 train.py --per_device_train_batch_size 4
"""),
        Example("torchrun_prefix.sh", """\
#!/bin/bash
CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node 4 train.py --per_device_train_batch_size 4
""", flagged=(2,), message="torchrun starts 4 processes on a machine that shows 2 GPUs",
                fix="start 2 processes, or list 4 devices in CUDA_VISIBLE_DEVICES"),
        # The accelerate config the line names says one machine: 8 processes on the 4 GPUs shown.
        Example("with_config.sh", """\
#!/bin/bash
CUDA_VISIBLE_DEVICES=1,2,3,4 accelerate launch --config_file=acc.yaml --num_processes=8 train.py \\
    --per_device_train_batch_size 4
""", flagged=(2,), files=(("acc.yaml", "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\n"
                                        "num_machines: 1\nnum_processes: 8\n"),),
                message="accelerate launch starts 8 processes on a machine that shows 4 GPUs",
                fix="start 4 processes, or list 8 devices in CUDA_VISIBLE_DEVICES"),
        Example("with_config_two_machines.sh", """\
#!/bin/bash
CUDA_VISIBLE_DEVICES=1,2,3,4 accelerate launch --config_file=acc.yaml --num_processes=8 train.py \\
    --per_device_train_batch_size 4
""", files=(("acc.yaml", "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\n"
                         "num_machines: 2\nnum_processes: 8\n"),)),
        # Two machines: 8 processes in all, 4 on each.
        Example("two_machines.sh", """\
#!/bin/bash
export CUDA_VISIBLE_DEVICES=0,1,2,3
accelerate launch --num_processes 8 --num_machines 2 --machine_rank 0 train.py --per_device_train_batch_size 4
"""),
    ),
)
