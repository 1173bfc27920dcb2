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

By release: accelerate refuses a JSON without `zero_optimization` from 0.10.0
(the first release that takes a `deepspeed_config_file`), and the keys beside
the file from 0.16.0 (the offload NVMe paths from 0.20.0); before, they are
ignored without a word.

## Source
accelerate 0.10.0 utils/dataclasses.py:270-271 (first: 0.9.0 takes no config
file); 0.16.0 utils/dataclasses.py:585-607 and commands/launch.py:1081-1083
(first: 0.15.0 has neither); 0.20.0 utils/dataclasses.py:702-722 (the NVMe
paths first listed; 0.19.0:678 lists none);
accelerate 1.15.0: utils/dataclasses.py `DeepSpeedPlugin.__post_init__`
(1273-1274) and `_deepspeed_config_checks` (1507-1531); commands/launch.py
1394-1397 (the accelerate config's deepspeed_config keys, and mixed_precision
taken from the config file, are what it checks).
"""

from collections.abc import Iterator

from batchlint.frameworks.accelerate import AccelerateSettings
from batchlint.frameworks.releases import ACCELERATE
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

IGNORED = Premise(
    ACCELERATE, name="keys beside the file", since="0.16.0",
    source="v0.15.0 src/accelerate/utils/dataclasses.py (no _deepspeed_config_checks, no ACCELERATE_CONFIG_DS_FIELDS); "
           "v0.16.0 utils/dataclasses.py:585-607, commands/launch.py:1081-1083 (first); v1.15.0 "
           "utils/dataclasses.py:1507-1531, commands/launch.py:1394-1397 (still)")
NVME = Premise(
    ACCELERATE, name="NVMe paths beside the file", since="0.20.0",
    source="v0.19.0 src/accelerate/utils/dataclasses.py:678 (_deepspeed_config_checks lists no NVMe path); v0.20.0 "
           "utils/dataclasses.py:702-722 (first); v1.15.0 utils/dataclasses.py:1507-1531 (still)")
NO_ZERO = Premise(
    ACCELERATE, name="zero_optimization", since="0.10.0",
    source="v0.9.0 src/accelerate (no deepspeed_config_file); v0.10.0 utils/dataclasses.py:270-271 (first); "
           "v1.15.0 utils/dataclasses.py:1276-1277 (still)")


def check(plan: TrainingPlan, typed: AccelerateSettings) -> Iterator[Finding]:
    file = typed.deepspeed_file
    if file is None:
        return
    reference = file.reference
    if file.ignored:
        first, rest = file.ignored[0], file.ignored[1:]
        names = ", ".join(f.key for f in file.ignored)
        yield Finding(
            span=first.span,
            message=f"{names} beside a DeepSpeed config file ({reference.value})",
            notes=(f"{reference.key} names {reference.value}; with a DeepSpeed config file "
                   f"{'it is' if not rest else 'they are'} ignored: accelerate's DeepSpeedPlugin refuses to start",),
            fix=f"move {'it' if not rest else 'them'} into {reference.value} and remove {names} from this config"
                + (" (or pass --mixed_precision on the launch line)" if any(f.key == "mixed_precision" for f in file.ignored) else ""),
            related=tuple(Related(f"{f.key} = {f.value}", f.span) for f in rest)
            + (Related(f"{reference.key} = {reference.value}", reference.span),),
            premise=(NVME if all(f.key.endswith("_nvme_path") for f in file.ignored) else IGNORED).name,
        )
    if not file.has_zero and file.linked is not None:
        yield Finding(
            span=reference.span,
            message=f"{reference.value}, the DeepSpeed config this names, has no zero_optimization section",
            notes=(f"{reference.key} names {file.linked.path}, read without a zero_optimization section",
                   "accelerate's DeepSpeedPlugin refuses to start (\"Please specify the ZeRO optimization config\")"),
            fix=f'add "zero_optimization": {{"stage": N}} to {reference.value}',
            premise=NO_ZERO.name,
        )


RULE = Rule(
    code="BL122",
    name="accelerate-deepspeed-config-file-conflict",
    severity="error",
    summary="accelerate: DeepSpeed settings beside a deepspeed_config_file, or a file without zero_optimization",
    check=check,
    subject=AccelerateSettings,
    premises=(IGNORED, NVME, NO_ZERO),
    doc=__doc__,
    examples=(
        # No accelerate release pinned: before 0.16 the keys are ignored without a word.
        Example("zero3_file_and_stage.yaml", """\
compute_environment: LOCAL_MACHINE
distributed_type: DEEPSPEED
deepspeed_config:
  deepspeed_config_file: configs/ds_zero3.json
  deepspeed_multinode_launcher: standard
  zero3_init_flag: true
  zero_stage: 3
num_machines: 1
num_processes: 8
""", flagged=(7,), severity="info",
                message="deepspeed_config.zero_stage beside a DeepSpeed config file (configs/ds_zero3.json)",
                fix="move it into configs/ds_zero3.json and remove deepspeed_config.zero_stage from this config"),
        Example("zero3_file_and_stage_pinned.yaml", """\
compute_environment: LOCAL_MACHINE
distributed_type: DEEPSPEED
deepspeed_config:
  deepspeed_config_file: configs/ds_zero3.json
  deepspeed_multinode_launcher: standard
  zero3_init_flag: true
  zero_stage: 3
num_machines: 1
num_processes: 8
""", flagged=(7,), files=(("requirements.txt", "accelerate==0.16.0\n"),), severity="error",
                message="deepspeed_config.zero_stage beside a DeepSpeed config file (configs/ds_zero3.json)",
                fix="move it into configs/ds_zero3.json and remove deepspeed_config.zero_stage from this config"),
        Example("zero3_file_and_stage_pinned_old.yaml", """\
compute_environment: LOCAL_MACHINE
distributed_type: DEEPSPEED
deepspeed_config:
  deepspeed_config_file: configs/ds_zero3.json
  deepspeed_multinode_launcher: standard
  zero3_init_flag: true
  zero_stage: 3
num_machines: 1
num_processes: 8
""", files=(("requirements.txt", "accelerate==0.15.0\n"),)),
        Example("zero3_file_and_nvme_pinned.yaml", """\
compute_environment: LOCAL_MACHINE
distributed_type: DEEPSPEED
deepspeed_config:
  deepspeed_config_file: configs/ds_zero3.json
  deepspeed_multinode_launcher: standard
  zero3_init_flag: true
  offload_param_nvme_path: /nvme
num_machines: 1
num_processes: 8
""", flagged=(7,), files=(("requirements.txt", "accelerate==0.20.0\n"),), severity="error",
                message="deepspeed_config.offload_param_nvme_path beside a DeepSpeed config file (configs/ds_zero3.json)",
                fix="move it into configs/ds_zero3.json and remove deepspeed_config.offload_param_nvme_path from this "
                    "config"),
        Example("zero3_file_and_nvme_pinned_old.yaml", """\
compute_environment: LOCAL_MACHINE
distributed_type: DEEPSPEED
deepspeed_config:
  deepspeed_config_file: configs/ds_zero3.json
  deepspeed_multinode_launcher: standard
  zero3_init_flag: true
  offload_param_nvme_path: /nvme
num_machines: 1
num_processes: 8
""", files=(("requirements.txt", "accelerate==0.19.0\n"),)),
        Example("zero3_file_and_precision.yaml", """\
compute_environment: LOCAL_MACHINE
distributed_type: DEEPSPEED
deepspeed_config:
  deepspeed_config_file: configs/ds_zero3.json
  deepspeed_multinode_launcher: standard
  zero3_init_flag: true
mixed_precision: bf16
num_machines: 1
num_processes: 8
""", flagged=(7,), severity="info",
                message="mixed_precision beside a DeepSpeed config file (configs/ds_zero3.json)",
                fix="move it into configs/ds_zero3.json and remove mixed_precision from this config (or pass "
                    "--mixed_precision on the launch line)"),
        # The JSON it names has no zero_optimization: refused from 0.10 on.
        Example("zero_missing_pinned.yaml", """\
compute_environment: LOCAL_MACHINE
distributed_type: DEEPSPEED
deepspeed_config:
  deepspeed_config_file: configs/ds_zero3.json
  deepspeed_multinode_launcher: standard
  zero3_init_flag: true
num_machines: 1
num_processes: 8
""", flagged=(4,),
                files=(("configs/ds_zero3.json", '{"train_micro_batch_size_per_gpu": "auto"}\n'),
                       ("requirements.txt", "accelerate==0.10.0\n")), severity="error",
                message="configs/ds_zero3.json, the DeepSpeed config this names, has no zero_optimization section",
                fix='add "zero_optimization": {"stage": N} to configs/ds_zero3.json'),
        Example("zero_missing_pinned_old.yaml", """\
compute_environment: LOCAL_MACHINE
distributed_type: DEEPSPEED
deepspeed_config:
  deepspeed_config_file: configs/ds_zero3.json
  deepspeed_multinode_launcher: standard
  zero3_init_flag: true
num_machines: 1
num_processes: 8
""", files=(("configs/ds_zero3.json", '{"train_micro_batch_size_per_gpu": "auto"}\n'), ("requirements.txt", "accelerate==0.9.0\n"))),
        Example("zero3_file_only.yaml", """\
compute_environment: LOCAL_MACHINE
distributed_type: DEEPSPEED
deepspeed_config:
  deepspeed_config_file: configs/ds_zero3.json
  deepspeed_multinode_launcher: standard
  zero3_init_flag: true
num_machines: 1
num_processes: 8
"""),
        Example("zero3_file_precision_null.yaml", """\
compute_environment: LOCAL_MACHINE
distributed_type: DEEPSPEED
deepspeed_config:
  deepspeed_config_file: configs/ds_zero3.json
  deepspeed_multinode_launcher: standard
  zero3_init_flag: true
mixed_precision: null
num_machines: 1
num_processes: 8
"""),
        Example("zero3_no_file.yaml", """\
compute_environment: LOCAL_MACHINE
distributed_type: DEEPSPEED
deepspeed_config:
  deepspeed_multinode_launcher: standard
  zero3_init_flag: true
  zero_stage: 3
num_machines: 1
num_processes: 8
"""),
    ),
)
