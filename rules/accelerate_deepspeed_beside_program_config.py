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

## Source
accelerate 1.15.0: commands/launch.py 1386-1390 (the config's deepspeed_config
keys, and mixed_precision taken from the config, go to the process in
ACCELERATE_CONFIG_DS_FIELDS), utils/dataclasses.py `DeepSpeedPlugin.__post_init__`
(1264-1272: a config given) and `_deepspeed_config_checks` (1507-1531);
transformers 4.57.1 training_args.py 2067-2081 (`--deepspeed` builds the plugin
from its config, since 4.30.0).
"""

from collections.abc import Iterator

from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    refused = plan.trainer.deepspeed_refused
    if not refused:
        return
    first, rest = refused[0], refused[1:]
    names = ", ".join(f.key for f in refused)
    own = plan.trainer.deepspeed.reference
    shown = own.value if hasattr(own, "value") and isinstance(own.value, str) else "an inline mapping"
    where = f"{own.span.path or plan.document.path}:{own.span.line}"
    precision = any(f.key == "mixed_precision" for f in refused)
    yield Finding(
        span=first.span,
        message=(f"{names} {'is' if not rest else 'are'} written in the accelerate config while the program it "
                 f"launches names its own DeepSpeed config (deepspeed {shown}, {where}): accelerate's DeepSpeedPlugin "
                 f"refuses to start, as with a DeepSpeed config file {'it is' if not rest else 'they are'} ignored "
                 f"(transformers >= 4.30)"),
        fix=f"remove {names} from the accelerate config and set {'it' if not rest else 'them'} in {shown}"
            + (" (or pass --mixed_precision on the launch line)" if precision else ""),
        related=tuple(Related(f"{f.key} = {f.value}", f.span) for f in rest)
        + (Related(f"deepspeed = {shown}: the program's own DeepSpeed config", own.span),),
    )


_ACCELERATE = """\
compute_environment: LOCAL_MACHINE
deepspeed_config:
{block}  deepspeed_multinode_launcher: standard
distributed_type: DEEPSPEED
machine_rank: 0
num_machines: 1
num_processes: 8
"""

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
    needs=("trainer.deepspeed_refused",),
    doc=__doc__,
    # The lines are the accelerate config's (configs/accelerate_config.yaml), where the finding is.
    examples=(
        Example("train.sh", _TRAIN, flagged=(3,), files=(
            ("configs/accelerate_config.yaml", _ACCELERATE.format(block="  gradient_accumulation_steps: 4\n"
                                                                         "  zero_stage: 2\n")),)),
        Example("train_precision.sh", _TRAIN, flagged=(8,), files=(
            ("configs/accelerate_config.yaml", _ACCELERATE.format(block="") + "mixed_precision: bf16\n"),)),
        Example("train_clean.sh", _TRAIN, files=(("configs/accelerate_config.yaml", _ACCELERATE.format(block="")),)),
        Example("train_launcher_precision.sh", _TRAIN.replace("--config_file", "--mixed_precision bf16 --config_file"),
                files=(("configs/accelerate_config.yaml", _ACCELERATE.format(block="") + "mixed_precision: bf16\n"),)),
    ),
)
