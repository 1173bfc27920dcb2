"""
## What it does
Checks the parallel layout against the world size W: where the framework
requires the product of its parallel degrees to equal W (TorchTitan,
torchtune, nanotron) or to divide it (Megatron, NeMo, sequence parallelism), and a
degree of -1 takes the ranks left over, that this works out. Silent while W
is unknown.

## Why is this bad?
The framework builds its device mesh from these degrees at start-up and
asserts they fit the GPUs it was given: a layout written for 32 GPUs and
launched on 8 dies after the job waited for its allocation.

## Example
```toml
[parallelism]
tensor_parallel_degree = 8
pipeline_parallel_degree = 4   # 32 GPUs, launched with NGPU=8
```

## Use instead
```toml
[parallelism]
tensor_parallel_degree = 8
pipeline_parallel_degree = 1
```
or launch on 32 GPUs.

## Source
torchtitan/distributed/parallel_dims.py `_validate` (dp_shard = -1 resolution,
product == world size; every release, 0.3.0 :183-188); Megatron-LM
megatron/training/arguments.py (world size divisible by tp x pp x cp; core_v0.16.1
:314-319); nanotron src/nanotron/parallel/context.py:22-37 @ v0.5 (tp x pp x ep x dp ==
WORLD_SIZE; context_parallel_size is on main only, in no release: a layout with one is
not checked). The other frameworks' sources and the release each check came in are
the premises below: axolotl from 0.8.0 (sequence_parallel_degree), 0.12.0 (tensor/
context parallel sizes) and 0.17.0 (expert parallelism); NeMo 1.5.0-2.5.0 (pp from
1.7.0, cp from 1.23.0); OpenRLHF from 0.7.4; verl from 0.2 (its SFT trainer to 0.7.0).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from batchlint.document import Mapping
from batchlint.frameworks.releases import AXOLOTL, EASYR1, MEGATRON, MS_SWIFT, NEMO, OPENRLHF, VERL, XTUNER
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

# TorchTitan (0.0.2's torchtitan/parallelisms/parallel_dims.py:40-45 @ b0a80df20 to 0.3.0
# distributed/parallel_dims.py:183-188), nanotron (v0.1 to v0.5 parallel/context.py:22-37) and XTuner v1
# (v1.0.0rc0 train/trainer.py:690-702, v1.0.1 :969-981) refuse it in every release: not gated.
AXOLOTL_SP = Premise(
    AXOLOTL, name="axolotl sequence_parallel_degree", since="0.8.0", runs_since="0.8.0", frameworks=("axolotl",),
    source="v0.7.1 has no sequence_parallel_degree; v0.8.0 src/axolotl/monkeypatch/attention/ring_attn.py:64-67 "
           "(first: world_size % sequence_parallel_degree asserted); 0.19.0 axolotl/utils/schemas/validation.py:"
           "1786-1790 (read as context_parallel_size), utils/distributed.py:320-378 (still)")
AXOLOTL_ND = Premise(
    AXOLOTL, name="axolotl tensor/context parallel", since="0.12.0", runs_since="0.12.0", frameworks=("axolotl",),
    source="v0.11.0.post1 has no tensor_parallel_size or context_parallel_size; v0.12.0 src/axolotl/utils/"
           "distributed.py:319-368 (first: the mesh filled with the ranks left over must use them all); 0.19.0 "
           "axolotl/utils/distributed.py:320-378 (still)")
AXOLOTL_EP = Premise(
    AXOLOTL, name="axolotl expert parallel", since="0.17.0", runs_since="0.17.0", frameworks=("axolotl",),
    source="v0.16.1 has no expert-parallel plugin; v0.17.0 src/axolotl/integrations/expert_parallel/plugin.py:"
           "209-212 (first: ep x dp_shard x tp x cp == world_size); 0.19.0 integrations/expert_parallel/plugin.py:"
           "282-285 (still)")
EASYR1_SP = Premise(
    EASYR1, name="EasyR1", since="0.3.1", runs_since="0.3.1", frameworks=("easyr1",),
    source="v0.3.0 verl/workers/fsdp_workers.py:111-119 (the key is ulysses_sequence_parallel_size: no ulysses_size); "
           "v0.3.1 verl/workers/fsdp_workers.py:120-125 (first: a (W // ulysses_size, ulysses_size) mesh); v0.3.2 "
           "fsdp_workers.py:120-125 (still)")
MEGATRON_TP_PP = Premise(
    MEGATRON, name="Megatron-LM", frameworks=("megatron",),
    source="0.1.0 (9cdc714939) megatron/arguments.py:74 (world size % (tp x pp)); core_v0.16.1 megatron/training/"
           "arguments.py:314-319 (world size % (tp x pp x cp)): every release")
MEGATRON_CP = Premise(
    MEGATRON, name="Megatron-LM context parallel", since="0.4.0", runs_since="0.4.0", frameworks=("megatron",),
    source="0.3.0 (b147dbecb6) megatron/arguments.py has no --context-parallel-size; core_v0.4.0 megatron/"
           "arguments.py:80 (first); core_v0.16.1 megatron/training/arguments.py:314-319 (still)")
_NEMO_LAST = ("2.5.0 nemo/collections/nlp/modules/common/megatron/megatron_init.py:328, parts/nlp_overrides.py:164 "
              "(last); 2.5.1 has no nemo/collections/nlp/models")
NEMO_TP = Premise(
    NEMO, name="NeMo tensor parallel", since="1.5.0", runs_since="1.5.0", until="2.5.0", runs_until="2.5.0",
    frameworks=("nemo",),
    source="v1.4.0 reads no model.tensor_model_parallel_size; v1.5.0 nemo/collections/nlp/parts/nlp_overrides.py:112 "
           "(first: apex's initialize_model_parallel, ensure_divisibility(world_size, tp x pp)); " + _NEMO_LAST)
NEMO_PP = Premise(
    NEMO, name="NeMo pipeline parallel", since="1.7.0", runs_since="1.7.0", until="2.5.0", runs_until="2.5.0",
    frameworks=("nemo",),
    source="v1.6.2 reads no pipeline_model_parallel_size; v1.7.0 nemo/collections/nlp/parts/nlp_overrides.py:151 "
           "(first); " + _NEMO_LAST)
NEMO_CP = Premise(
    NEMO, name="NeMo context parallel", since="1.23.0", runs_since="1.23.0", until="2.5.0", runs_until="2.5.0",
    frameworks=("nemo",),
    source="v1.22.0 reads no context_parallel_size; v1.23.0 nemo/collections/nlp/modules/common/megatron/"
           "megatron_init.py:229 (first); " + _NEMO_LAST)
_OPENRLHF_LAST = "0.11.2 openrlhf/utils/deepspeed/deepspeed.py:104-106 (still)"
OPENRLHF_RING = Premise(
    OPENRLHF, name="OpenRLHF", since="0.7.4", frameworks=("openrlhf",),
    source="v0.7.3 openrlhf/utils/deepspeed/deepspeed.py:104-111 (ring groups over W // ring_attn_size: the ranks "
           "left over join none, nothing refuses); v0.7.4 openrlhf/utils/deepspeed/deepspeed.py:101-103 (first: a "
           "(dp, ring, tp) device mesh); " + _OPENRLHF_LAST)
OPENRLHF_TP = Premise(
    OPENRLHF, name="OpenRLHF tensor parallel", since="0.7.4", runs_since="0.7.4", frameworks=("openrlhf",),
    source="v0.7.3 has no --ds_tensor_parallel_size; v0.7.4 openrlhf/utils/deepspeed/deepspeed.py:101-103 (first); "
           + _OPENRLHF_LAST)
SWIFT_SP = Premise(
    MS_SWIFT, name="ms-swift", since="2.0.5", runs_since="2.0.5", frameworks=("swift",),
    source="v2.0.4 has no sequence_parallel_size; v2.0.5 swift/trainers/trainers.py:46-47 (first: XTuner's "
           "init_sequence_parallel raises, xtuner/parallel/sequence/setup_distributed.py:19-21); 3.5.0 on: its "
           "own (W // sp, sp) device mesh; 4.6.0 swift/sequence_parallel/sequence_parallel.py:648-669 (still)")
SWIFT_MEGATRON = Premise(
    MS_SWIFT, name="ms-swift Megatron", since="3.2.2", runs_since="3.2.2", frameworks=("swift-megatron",),
    source="v3.2.1 has no swift/megatron; v3.2.2 swift/megatron/train/sft.py:75 (first: Megatron-LM's validate_args); "
           "4.6.0 swift/megatron/utils/megatron_lm_utils.py:72 (megatron-core's initialize_model_parallel) (still)")
VERL_MEGATRON = Premise(
    VERL, name="verl Megatron", frameworks=("verl",),
    source="v0.1 verl/trainer/ppo/workers/megatron_workers.py:87 (megatron-core's initialize_model_parallel); "
           "v0.4.0 verl/trainer/ppo/ray_trainer.py:424; 0.9.1 verl/utils/config.py:110: every release")
VERL_CP = Premise(
    VERL, name="verl Megatron context parallel", since="0.4.0", runs_since="0.4.0", frameworks=("verl",),
    source="v0.3.0.post1 ppo_megatron_trainer.yaml has no context_parallel_size; v0.4.0 verl/trainer/ppo/"
           "ray_trainer.py:424 (first); 0.9.1 verl/utils/config.py:110 (still)")
VERL_SP = Premise(
    VERL, name="verl Ulysses", since="0.2", runs_since="0.2", frameworks=("verl",),
    source="v0.1 has no ulysses_sequence_parallel_size; v0.2 verl/workers/fsdp_workers.py:95-96 (first: a "
           "(W // sp, sp) device mesh); 0.9.1 verl/workers/engine/fsdp/transformer_impl.py:248 (still)")
VERL_SFT_SP = Premise(
    VERL, name="verl SFT Ulysses", since="0.2", runs_since="0.2", until="0.7.0", runs_until="0.7.0", frameworks=("verl",),
    source="v0.1 has no ulysses_sequence_parallel_size; v0.2 verl/trainer/fsdp_sft_trainer.py:525 (first); v0.7.0 "
           "verl/trainer/fsdp_sft_trainer.py:812 (last); 0.7.1 has no fsdp_sft_trainer.py")
XTUNER_SP = Premise(
    XTUNER, name="XTuner", since="0.1.16", runs_since="0.1.16", frameworks=("xtuner",),
    source="v0.1.15 has no sequence parallelism; v0.1.16 xtuner/parallel/sequence/setup_distributed.py:19-21 (first); "
           "v0.2.0 xtuner/parallel/sequence/setup_distributed.py:23-25 (still)")


def _premise(plan: TrainingPlan) -> Optional[str]:
    """The premise of the plan's layout check, by the degrees it uses; "" where none gates it (the
    framework refuses it in every release); None where no release checks it at all."""
    parallel = plan.parallel

    def used(short: str) -> bool:
        degree = parallel.get(short)
        value = degree.number if degree is not None else None
        return value is not None and value > 1

    framework = plan.framework
    if framework == "nanotron":
        return None if used("cp") else ""  # context_parallel_size: nanotron's main only
    if framework == "axolotl":
        if used("ep"):
            return AXOLOTL_EP.name
        cp = parallel.get("cp")
        legacy = used("cp") and cp is not None and cp.key == "sequence_parallel_degree"
        return AXOLOTL_SP.name if legacy and not used("tp") else AXOLOTL_ND.name
    if framework == "megatron":
        return MEGATRON_CP.name if used("cp") else MEGATRON_TP_PP.name
    if framework == "nemo":
        return NEMO_CP.name if used("cp") else NEMO_PP.name if used("pp") else NEMO_TP.name
    if framework == "openrlhf":
        return OPENRLHF_TP.name if used("tp") else OPENRLHF_RING.name
    if framework == "verl":
        if not isinstance(plan.document.get("actor_rollout_ref"), Mapping):
            return VERL_SFT_SP.name
        if "sp" in parallel:
            return VERL_SP.name
        return VERL_CP.name if used("cp") else VERL_MEGATRON.name
    return {"easyr1": EASYR1_SP.name, "swift": SWIFT_SP.name, "swift-megatron": SWIFT_MEGATRON.name,
            "xtuner": XTUNER_SP.name}.get(framework, "")


def check(plan: TrainingPlan) -> Iterator[Finding]:
    world, layout = plan.world_size, plan.layout
    w = world.number if world is not None else None
    if world is None or w is None or not all(f.known for f in layout):
        return
    premise = _premise(plan)
    if premise is None:
        return
    rest = [f for f in layout if f.value != -1]
    wildcard = [f for f in layout if f.value == -1]
    degrees = [d for f in rest if (d := f.count) is not None]
    if len(degrees) < len(rest) or len(wildcard) > 1:
        return  # non-positive degrees are another finding
    product = math.prod(degrees)
    shown = " x ".join(f.describe() for f in rest if f.value != 1) or "1"
    if wildcard:
        if w % product == 0:
            return
        fills = w // product
        message = f"{wildcard[0].key} = -1 takes the ranks left over, but W ({w}) is not a multiple of {product}"
        notes = (f"{shown} = {product}" + (f"; {wildcard[0].key} would be {fills}, leaving "
                                            f"{w - fills * product} GPUs idle" if fills else ""),
                 "the job refuses to start")
        fix = f"run on a multiple of {product} GPUs, or change the degrees so their product divides {w}"
    elif plan.layout_exact and product != w:
        message = f"the parallel degrees multiply to {product}, but the job has W = {w} GPUs"
        notes = (f"{shown} = {product}; the product must be W", "the job refuses to start")
        fix = f"launch on {product} GPUs, or set the degrees so their product is {w}"
    elif not plan.layout_exact and w % product:
        message = f"W ({w}) is not divisible by {product}, the product of the parallel degrees"
        notes = (f"{shown} = {product}; W must be a multiple of it", "the job refuses to start")
        fix = f"launch on a multiple of {product} GPUs, or lower the degrees"
    else:
        return
    # The largest degree written (every degree in rest is positive here).
    at_fault = max((f for f in rest if f.span is not None), key=lambda f: f.count or 0, default=None)
    span = at_fault.span if at_fault else (world.span or layout[0].span)
    if span is None:
        return
    related = tuple(Related(f"{f.key} = {f.value}", f.span) for f in layout if f.span and f is not at_fault and f.value != 1)
    if world.span is not None:
        related += (Related(f"world size {w} set here", world.span),)
    yield Finding(span=span, message=message, notes=notes, fix=fix, related=related, premise=premise)


RULE = Rule(
    code="BL202",
    name="layout-world-mismatch",
    severity="error",
    summary="parallel degrees that do not fit the world size",
    check=check,
    needs=("world_size", "layout"),
    premises=(AXOLOTL_SP, AXOLOTL_ND, AXOLOTL_EP, EASYR1_SP, MEGATRON_TP_PP, MEGATRON_CP, NEMO_TP, NEMO_PP, NEMO_CP,
              OPENRLHF_RING, OPENRLHF_TP, SWIFT_SP, SWIFT_MEGATRON, VERL_MEGATRON, VERL_CP, VERL_SP, VERL_SFT_SP,
              XTUNER_SP),
    doc=__doc__,
    examples=(
        Example("titan_32_on_8.toml", """\
[training]
local_batch_size = 1

[parallelism]
data_parallel_shard_degree = -1
tensor_parallel_degree = 8
pipeline_parallel_degree = 4
""", flagged=(6,), world_size=8,
                message="[parallelism] data_parallel_shard_degree = -1 takes the ranks left over, but W (8) is not a multiple "
                    "of 32",
                fix="run on a multiple of 32 GPUs, or change the degrees so their product divides 8"),
        Example("titan_32_on_32.toml", """\
[training]
local_batch_size = 1

[parallelism]
data_parallel_shard_degree = -1
tensor_parallel_degree = 8
pipeline_parallel_degree = 4
""", world_size=32),
        Example("titan_exact_wrong.toml", """\
[training]
local_batch_size = 1

[parallelism]
data_parallel_shard_degree = 2
tensor_parallel_degree = 8
pipeline_parallel_degree = 1
""", flagged=(6,), world_size=8,
                message="the parallel degrees multiply to 16, but the job has W = 8 GPUs",
                fix="launch on 16 GPUs, or set the degrees so their product is 8"),
        Example("titan_exact_right.toml", """\
[training]
local_batch_size = 1

[parallelism]
data_parallel_shard_degree = 2
tensor_parallel_degree = 8
pipeline_parallel_degree = 1
""", world_size=16),
        Example("titan_unknown_w.toml", """\
[training]
local_batch_size = 1

[parallelism]
data_parallel_shard_degree = -1
tensor_parallel_degree = 8
pipeline_parallel_degree = 4
"""),
        # ms-swift's sequence parallelism came in 2.0.5 (more windows: tests/test_premises_generic.py).
        Example("swift_sp3_on_8.yaml", """\
model: Qwen/Qwen2.5-0.5B
train_type: lora
per_device_train_batch_size: 1
sequence_parallel_size: 3
""", flagged=(4,), world_size=8, severity="error",
                message="W (8) is not divisible by 3, the product of the parallel degrees",
                fix="launch on a multiple of 3 GPUs, or lower the degrees"),
        Example("swift_sp3_on_8_2_0_4.yaml", """\
model: Qwen/Qwen2.5-0.5B
train_type: lora
per_device_train_batch_size: 1
sequence_parallel_size: 3
""", world_size=8, files=(("requirements.txt", """\
ms-swift==2.0.4
"""),)),
        # NeMo's Megatron YAML is read by 1.5.0 to 2.5.0 (2.5.1 on cannot run it).
        Example("nemo_tp3_on_8_2_4_0.yaml", """\
trainer:
  devices: 8
  num_nodes: 1
model:
  micro_batch_size: 1
  global_batch_size: 64
  tensor_model_parallel_size: 3
""", flagged=(7,), severity="error", files=(("requirements.txt", """\
nemo-toolkit==2.4.0
"""),),
                message="W (8) is not divisible by 3, the product of the parallel degrees",
                fix="launch on a multiple of 3 GPUs, or lower the degrees"),
        Example("nemo_tp3_on_8.yaml", """\
trainer:
  devices: 8
  num_nodes: 1
model:
  micro_batch_size: 1
  global_batch_size: 64
  tensor_model_parallel_size: 3
""", flagged=(7,), severity="error",
                message="W (8) is not divisible by 3, the product of the parallel degrees",
                fix="launch on a multiple of 3 GPUs, or lower the degrees"),
        Example("nemo_tp3_on_8_1_4_0.yaml", """\
trainer:
  devices: 8
  num_nodes: 1
model:
  micro_batch_size: 1
  global_batch_size: 64
  tensor_model_parallel_size: 3
""", files=(("requirements.txt", """\
nemo-toolkit==1.4.0
"""),)),
    ),
)
