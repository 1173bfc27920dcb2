"""
## What it does
Checks an accelerate config that hands DeepSpeed a JSON file
(`deepspeed_config: {deepspeed_config_file: ds.json}`) for what accelerate
refuses with one: DeepSpeed settings also written in the accelerate config
(`gradient_accumulation_steps`, `gradient_clipping`, `zero_stage`,
`offload_optimizer_device`, `offload_param_device`, the offload NVMe paths,
`zero3_save_16bit_model`) or a `mixed_precision` written there, and a JSON
without `zero_optimization`.

## Why is this bad?
With a DeepSpeed config file those settings belong in the JSON: accelerate's
DeepSpeedPlugin raises "When using `deepspeed_config_file`, the following
accelerate config variables will be ignored" when the process starts (after
the launch got its GPUs), and "Please specify the ZeRO optimization config in
the DeepSpeed config." for a JSON without `zero_optimization`. A
`mixed_precision` written in the config is refused too unless the launch line
passes `--mixed_precision` (the flag then takes its place).

## Example
```yaml
distributed_type: DEEPSPEED
deepspeed_config:
  deepspeed_config_file: ds_zero3.json
  zero_stage: 3
mixed_precision: bf16
num_processes: 8
```

## Use instead
```yaml
distributed_type: DEEPSPEED
deepspeed_config:
  deepspeed_config_file: ds_zero3.json   # stage and precision in the JSON
num_processes: 8
```

## Source
accelerate 1.15.0: utils/dataclasses.py `DeepSpeedPlugin.__post_init__`
(1273-1274) and `_deepspeed_config_checks` (1507-1531); commands/launch.py
1394-1397 (the accelerate config's deepspeed_config keys, and mixed_precision
taken from the config file, are what it checks).
"""

from collections.abc import Iterator

from batchlint.frameworks import accelerate
from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    typed = accelerate.settings(plan)
    file = typed.deepspeed_file if typed is not None else None
    if file is None:
        return
    reference = file.reference
    if file.ignored:
        first, rest = file.ignored[0], file.ignored[1:]
        names = ", ".join(f.key for f in file.ignored)
        yield Finding(
            span=first.span,
            message=(f"{names} {'is' if not rest else 'are'} written beside {reference.key} ({reference.value}): "
                     f"accelerate's DeepSpeedPlugin refuses to start, since with a DeepSpeed config file "
                     f"{'it is' if not rest else 'they are'} ignored"),
            fix=f"move {'it' if not rest else 'them'} into {reference.value} and remove {names} from this config"
                + (" (or pass --mixed_precision on the launch line)" if any(f.key == "mixed_precision" for f in file.ignored) else ""),
            related=tuple(Related(f"{f.key} = {f.value}", f.span) for f in rest)
            + (Related(f"{reference.key} = {reference.value}", reference.span),),
        )
    if not file.has_zero:
        yield Finding(
            span=reference.span,
            message=(f"{file.linked.path}, the DeepSpeed config this names, has no zero_optimization section: "
                     f"accelerate's DeepSpeedPlugin refuses to start (\"Please specify the ZeRO optimization config\")"),
            fix=f'add "zero_optimization": {{"stage": N}} to {file.linked.path}',
        )


_CONFIG = """\
compute_environment: LOCAL_MACHINE
distributed_type: DEEPSPEED
deepspeed_config:
  deepspeed_config_file: configs/ds_zero3.json
  deepspeed_multinode_launcher: standard
  zero3_init_flag: true
{extra}num_machines: 1
num_processes: 8
"""

RULE = Rule(
    code="BL122",
    name="accelerate-deepspeed-config-file-conflict",
    severity="error",
    summary="accelerate: DeepSpeed settings beside a deepspeed_config_file, or a file without zero_optimization",
    check=check,
    needs=("settings.deepspeed_file",),
    frameworks=("accelerate-config",),
    doc=__doc__,
    examples=(
        Example("zero3_file_and_stage.yaml", _CONFIG.format(extra="  zero_stage: 3\n"), flagged=(7,)),
        Example("zero3_file_and_precision.yaml", _CONFIG.format(extra="mixed_precision: bf16\n"), flagged=(7,)),
        Example("zero3_file_only.yaml", _CONFIG.format(extra="")),
        Example("zero3_file_precision_null.yaml", _CONFIG.format(extra="mixed_precision: null\n")),
        Example("zero3_no_file.yaml", _CONFIG.format(extra="  zero_stage: 3\n").replace(
            "  deepspeed_config_file: configs/ds_zero3.json\n", "")),
    ),
)
