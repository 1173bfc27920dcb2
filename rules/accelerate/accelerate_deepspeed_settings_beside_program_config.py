"""
## What it does
Checks one `accelerate launch --config_file acc.yaml train.py --deepspeed ds.json`
run: a training program that names a DeepSpeed config of its own
(TrainingArguments' `deepspeed`), launched with an accelerate config whose
`deepspeed_config` block writes a DeepSpeed setting accelerate takes from its
own config (`gradient_accumulation_steps`, `gradient_clipping`, `zero_stage`,
`offload_optimizer_device`, `offload_param_device`, the offload NVMe paths,
`zero3_save_16bit_model`) or that writes `mixed_precision` (unless the launch
line passes `--mixed_precision`).

## Why is this bad?
The program's DeepSpeed config replaces the one accelerate would build, and
accelerate refuses the settings it would then ignore: TrainingArguments builds
the DeepSpeedPlugin from the program's config, and the plugin raises "When
using `deepspeed_config_file`, the following accelerate config variables will
be ignored" as the program parses its arguments, after the launch got its
GPUs (transformers >= 4.30, every accelerate since 0.16).

## Example
`accelerate_config.yaml`:
```yaml
distributed_type: DEEPSPEED
deepspeed_config:
  gradient_accumulation_steps: 4
  zero_stage: 2
num_processes: 8
```
`train.sh`:
```bash
accelerate launch --config_file accelerate_config.yaml train.py --deepspeed ds_z2.json \
    --per_device_train_batch_size 4 --gradient_accumulation_steps 4
```

## Use instead
```yaml
distributed_type: DEEPSPEED
deepspeed_config:
  deepspeed_multinode_launcher: standard   # the stage and accumulation are ds_z2.json's
num_processes: 8
```

By release: transformers builds the plugin from `--deepspeed` from 4.30.0
(before, accelerate never sees the program's DeepSpeed config and nothing is
refused); 4.30 needs accelerate >= 0.20.1, which has the check (since 0.16.0).

## Source
transformers training_args.py:1566-1570 @ 4.30.0 (first; 4.29.2:1520 builds
no plugin), 1672-1674 (accelerate >= 0.20.1); accelerate
utils/dataclasses.py `_deepspeed_config_checks` and commands/launch.py:1081-1083
@ 0.16.0 (first; 0.15.0 has neither); accelerate 1.15.0: commands/launch.py 1386-1390 (the config's deepspeed_config
keys, and mixed_precision taken from the config, go to the process in
ACCELERATE_CONFIG_DS_FIELDS), utils/dataclasses.py `DeepSpeedPlugin.__post_init__`
(1264-1272: a config given) and `_deepspeed_config_checks` (1507-1531);
transformers 4.57.1 training_args.py 2067-2081 (`--deepspeed` builds the plugin
from its config, since 4.30.0).
"""

from collections.abc import Iterator

from batchlint.document import Scalar
from batchlint.frameworks.releases import TRANSFORMERS, TRL
from batchlint.frameworks.training_arguments import TrainerArguments
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

# The plugin is built by transformers' TrainingArguments. A TRL config runs a transformers its TRL release
# requires; the release of LLaMA-Factory and ms-swift is not weighed (not gated).
BUILT = Premise(
    TRANSFORMERS, name="transformers", since="4.30.0", frameworks=("transformers",),
    source="v4.29.2 transformers/training_args.py:1520 (HfTrainerDeepSpeedConfig only, no DeepSpeedPlugin); v4.30.0 "
           "training_args.py:1566-1570 (first; 1672-1674 require accelerate>=0.20.1, whose dataclasses.py "
           "_deepspeed_config_checks refuses, as from accelerate v0.16.0); v5.24.0 training_args.py:1715 (still)")
TRL_BUILT = Premise(
    TRL, name="TRL", since="0.7.5", frameworks=("trl",),
    source="v0.7.4 setup.py:64 (transformers>=4.18.0: before 4.30 no plugin is built); v0.7.5 setup.py:64 "
           "(transformers>=4.31.0) (first); v1.16.0 METADATA transformers>=4.56.2 (still)")


def check(plan: TrainingPlan, trainer: TrainerArguments) -> Iterator[Finding]:
    refused, link = trainer.deepspeed_refused, trainer.deepspeed
    if not refused or link is None:
        return
    first, rest = refused[0], refused[1:]
    names = ", ".join(f.key for f in refused)
    own = link.reference
    shown = own.value if isinstance(own, Scalar) and isinstance(own.value, str) else "an inline mapping"
    where = f"{own.span.path or plan.document.path}:{own.span.line}"
    precision = any(f.key == "mixed_precision" for f in refused)
    yield Finding(
        span=first.span,
        message=f"{first.key}{f' and {len(rest)} more' if rest else ''} beside the program's own {shown}",
        notes=(f"the accelerate config writes {names}; the program it launches writes deepspeed {shown} ({where})",
               f"with a DeepSpeed config file {'it is' if not rest else 'they are'} ignored: accelerate's "
               f"DeepSpeedPlugin refuses to start (transformers >= 4.30)"),
        fix=f"remove {names} from the accelerate config and set {'it' if not rest else 'them'} in {shown}"
            + (" (or pass --mixed_precision on the launch line)" if precision else ""),
        related=tuple(Related(f"{f.key} = {f.value}", f.span) for f in rest)
        + (Related(f"deepspeed = {shown}: the program's own DeepSpeed config", own.span),),
        premise={"transformers": BUILT.name, "trl": TRL_BUILT.name}.get(plan.framework, ""),
    )


_TRAIN = """\
#!/bin/bash
accelerate launch --config_file configs/accelerate_config.yaml train.py \\
    --model_name_or_path Qwen/Qwen2.5-0.5B \\
    --deepspeed configs/ds_z2.json \\
    --per_device_train_batch_size 4 \\
    --gradient_accumulation_steps 4
"""

RULE = Rule(
    code="BL123",
    name="accelerate-deepspeed-settings-beside-program-config",
    severity="error",
    summary="accelerate: DeepSpeed settings in the accelerate config of a program that names its own DeepSpeed config",
    check=check,
    subject=TrainerArguments,
    needs=("trainer.deepspeed_refused",),
    premises=(BUILT, TRL_BUILT),
    doc=__doc__,
    # The lines are the accelerate config's (configs/accelerate_config.yaml), where the finding is.
    examples=(
        # No transformers release pinned: before 4.30 the program's DeepSpeed config never reaches accelerate.
        Example("train.sh", _TRAIN, flagged=(3,), files=(("configs/accelerate_config.yaml", """\
compute_environment: LOCAL_MACHINE
deepspeed_config:
  gradient_accumulation_steps: 4
  zero_stage: 2
  deepspeed_multinode_launcher: standard
distributed_type: DEEPSPEED
machine_rank: 0
num_machines: 1
num_processes: 8
"""),), severity="info",
                message="deepspeed_config.gradient_accumulation_steps and 1 more beside the program's own configs/ds_z2.json",
                fix="remove deepspeed_config.gradient_accumulation_steps, deepspeed_config.zero_stage from the "
                    "accelerate config and set them in configs/ds_z2.json"),
        Example("train_pinned.sh", _TRAIN, flagged=(3,), files=(("configs/accelerate_config.yaml", """\
compute_environment: LOCAL_MACHINE
deepspeed_config:
  gradient_accumulation_steps: 4
  zero_stage: 2
  deepspeed_multinode_launcher: standard
distributed_type: DEEPSPEED
machine_rank: 0
num_machines: 1
num_processes: 8
"""), ("requirements.txt", "transformers==4.30.0\n")), severity="error",
                message="deepspeed_config.gradient_accumulation_steps and 1 more beside the program's own configs/ds_z2.json",
                fix="remove deepspeed_config.gradient_accumulation_steps, deepspeed_config.zero_stage from the "
                    "accelerate config and set them in configs/ds_z2.json"),
        Example("train_pinned_old.sh", _TRAIN, files=(("configs/accelerate_config.yaml", """\
compute_environment: LOCAL_MACHINE
deepspeed_config:
  gradient_accumulation_steps: 4
  zero_stage: 2
  deepspeed_multinode_launcher: standard
distributed_type: DEEPSPEED
machine_rank: 0
num_machines: 1
num_processes: 8
"""), ("requirements.txt", "transformers==4.29.2\n"))),
        Example("train_precision.sh", _TRAIN, flagged=(8,), files=(("configs/accelerate_config.yaml", """\
compute_environment: LOCAL_MACHINE
deepspeed_config:
  deepspeed_multinode_launcher: standard
distributed_type: DEEPSPEED
machine_rank: 0
num_machines: 1
num_processes: 8
mixed_precision: bf16
"""),), severity="info",
                message="mixed_precision beside the program's own configs/ds_z2.json",
                fix="remove mixed_precision from the accelerate config and set it in configs/ds_z2.json (or pass "
                    "--mixed_precision on the launch line)"),
        Example("train_clean.sh", _TRAIN, files=(("configs/accelerate_config.yaml", """\
compute_environment: LOCAL_MACHINE
deepspeed_config:
  deepspeed_multinode_launcher: standard
distributed_type: DEEPSPEED
machine_rank: 0
num_machines: 1
num_processes: 8
"""),)),
        Example("train_launcher_precision.sh", """\
#!/bin/bash
accelerate launch --mixed_precision bf16 --config_file configs/accelerate_config.yaml train.py \\
    --model_name_or_path Qwen/Qwen2.5-0.5B \\
    --deepspeed configs/ds_z2.json \\
    --per_device_train_batch_size 4 \\
    --gradient_accumulation_steps 4
""", files=(("configs/accelerate_config.yaml", """\
compute_environment: LOCAL_MACHINE
deepspeed_config:
  deepspeed_multinode_launcher: standard
distributed_type: DEEPSPEED
machine_rank: 0
num_machines: 1
num_processes: 8
mixed_precision: bf16
"""),)),
    ),
)
