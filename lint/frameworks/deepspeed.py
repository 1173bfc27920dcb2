"""DeepSpeed JSON configs.

train_batch_size (tb) = train_micro_batch_size_per_gpu (mb) x
gradient_accumulation_steps (ga) x W, W being the data-parallel world size.
When one of them is omitted DeepSpeed derives it by floor division and then
asserts the identity (deepspeed/runtime/config.py `_set_batch_related_parameters`,
`_batch_assertion`). "auto" values are filled in by the Hugging Face
integration, so no batch arithmetic is checked while any is "auto".

Precision sections are read as DeepSpeed reads them: `bf16`, or the older
spelling `bfloat16` only when there is no `bf16` (precision_config.py
`get_bfloat16_config`); `enabled` is a pydantic bool, so `"true"` and `1` count,
while "auto" is dropped before validation (config_utils.py
`DeepSpeedConfigModel.__init__`) and means off to raw DeepSpeed.

`plan.settings` (DeepSpeedSettings) types the ZeRO offload and the values the
Hugging Face Trainer compares; linked.py gives the same for a config a
TrainingArguments file names.
"""

from __future__ import annotations

from ..document import Document, Mapping, Node, Scalar
from ..lean_dataclass import lean_dataclass
from ..plan import Fact, Origin, Subject, TrainingPlan
from .facts import Outside, number
from .releases import DEEPSPEED as DISTRIBUTION
from .spec import LAUNCHER_VARIABLES, STARTS_PROCESSES, Framework, OneProcess

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

NAME = "deepspeed"
FORMATS = ("json",)
# Every key of _OWN_KEYS: one of them is how plan() recognises a config (Framework.markers).
MARKERS = (b"train_batch_size", b"train_micro_batch_size_per_gpu", b"zero_optimization", b"steps_per_print",
           b"gradient_clipping", b"zero_allow_untested_optimizer")

# A program run by a plain `python train.py` (no launcher): deepspeed.initialize calls init_distributed
# (deepspeed/__init__.py:510 @ 0.19.8), which without all of RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
# and LOCAL_RANK discovers the processes through MPI (comm/comm.py:889-898 init_distributed,
# :913-921 mpi_discovery: mpi4py's COMM_WORLD), one rank outside mpirun/srun; the batch identity is
# then asserted with that world size (runtime/config.py:471, :602). The Hugging Face Trainer given
# `--deepspeed ds.json` comes to the same: TrainingArguments.world_size is accelerate's num_processes
# (transformers/training_args.py:2400-2409 @ 4.57.1), 1 without LOCAL_RANK (accelerate/state.py:202,
# :287-290 @ 1.15.0), and the Trainer compares train_batch_size with it
# (transformers/integrations/deepspeed.py:140). A program that may start processes of its own (Lightning,
# torch.multiprocessing, a launcher's API, a subprocess) is not known to be one.
ONE_PROCESS = OneProcess(
    env=LAUNCHER_VARIABLES,
    drives=("deepspeed", "transformers", "trl", "accelerate"),
    starts=STARTS_PROCESSES,
    why="plain `python` starts one process (DeepSpeed's MPI discovery finds one rank outside mpirun/srun); "
        "launch with `deepspeed --num_gpus N` or torchrun for more",
    source="deepspeed/comm/comm.py:889-921 init_distributed, mpi_discovery @ 0.19.8")

FRAMEWORK = Framework(NAME, FORMATS, MARKERS, order=40, one_process=ONE_PROCESS, distribution=DISTRIBUTION)

TB, MB, GA = "train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps"
_OWN_KEYS = {TB, MB, "zero_optimization", "steps_per_print", "gradient_clipping", "zero_allow_untested_optimizer"}


def plan(doc: Document, outside: Outside):
    root = doc.root
    if not (_OWN_KEYS & set(root.items)) or "per_device_train_batch_size" in root.items:
        return None
    plan = TrainingPlan(
        framework=NAME,
        document=doc,
        world_size=outside.world_size,
        target_global_batch=outside.target_global_batch,
    )
    plan.settings = read_settings(root)
    plan.fp16 = _enabled(root, "fp16")
    plan.bf16 = _enabled(root, "bfloat16" if _absent(root.items.get("bf16")) else "bf16")
    nodes = {key: root.get(key) for key in (TB, MB, GA)}
    if any(isinstance(n, Scalar) and n.value == "auto" for n in nodes.values()):
        return plan  # the Hugging Face integration fills these in
    tb, mb, ga = (number(nodes[k], k) for k in (TB, MB, GA))
    if world := outside.world_size:
        plan.data_parallel = Fact(world.value, "W", world.span, world.origin, detail=world.detail)
    plan.micro_batch, plan.grad_accum, plan.declared_global_batch = mb, ga, tb
    if tb is not None and (mb is None or ga is None):
        # DeepSpeed derives the missing factor from train_batch_size.
        if ga is None:
            plan.derived_from_global = "grad_accum"
            if mb is None:  # tb alone: ga = 1, mb = tb // W
                plan.grad_accum = Fact(1, GA, None, Origin.DEFAULT)
                plan.derived_from_global = "micro_batch"
        else:
            plan.derived_from_global = "micro_batch"
    elif tb is None and mb is not None and ga is None:
        plan.grad_accum = Fact(1, GA, None, Origin.DEFAULT)
    return plan


@lean_dataclass(frozen=True)
class ZeRO(Subject):
    """`zero_optimization` (deepspeed/runtime/zero/config.py @ 0.19.8), as a DeepSpeed config writes it or as
    accelerate's DeepSpeedPlugin builds it from its own config (AccelerateSettings.zero): the subject of
    the rules about ZeRO's settings."""

    FRAMEWORKS = (NAME, "accelerate-config")

    # An int 0-3 as written (ZeroStageEnum); None otherwise: an absent, "auto" or
    # string stage is not judged.
    stage: Optional[Fact]
    # Where the parameters / the optimizer state are offloaded: `offload_param.device`
    # ("cpu", "nvme", OffloadDeviceEnum; config.py:164-176), else the deprecated
    # `cpu_offload_param` / `cpu_offload` written true (config.py:188-220). None: not offloaded.
    offload_param: Optional[Fact]
    offload_optimizer: Optional[Fact]

    @classmethod
    def of(cls, plan: TrainingPlan) -> Optional[ZeRO]:
        zero = getattr(plan.settings, "zero", None)  # DeepSpeedSettings' and AccelerateSettings'
        return zero if isinstance(zero, ZeRO) else None


@lean_dataclass(frozen=True)
class TrainerValues:
    """The values the Hugging Face Trainer fills in ("auto") or requires to equal
    its TrainingArguments (transformers/integrations/deepspeed.py:133-205
    `trainer_config_process` @ 4.57.1). Each as written ("auto" and null
    included, the value None when not a scalar); None when absent."""

    train_micro_batch_size_per_gpu: Optional[Fact]
    gradient_accumulation_steps: Optional[Fact]
    train_batch_size: Optional[Fact]
    gradient_clipping: Optional[Fact]
    fp16_enabled: Optional[Fact]  # key "fp16.enabled"
    bf16_enabled: Optional[Fact]  # key "bf16.enabled"


@lean_dataclass(frozen=True)
class DeepSpeedSettings(Subject):
    """The DeepSpeed adapter's typed facts of one config: its own plan's
    `settings`, and what linked.py gives for a config a TrainingArguments file names."""

    FRAMEWORKS = (NAME,)  # the DeepSpeed rules judge DeepSpeed's own plans only

    zero: Optional[ZeRO]  # None: no `zero_optimization` mapping
    trainer_values: TrainerValues


_OFFLOAD_DEVICES = ("cpu", "nvme")


def read_settings(root: Node) -> DeepSpeedSettings:
    """The typed facts of a DeepSpeed config (a root that is no mapping writes nothing)."""
    mapping = root if isinstance(root, Mapping) else None
    zero = mapping.get("zero_optimization") if mapping is not None else None
    return DeepSpeedSettings(
        zero=_zero(zero) if isinstance(zero, Mapping) else None,
        trainer_values=TrainerValues(*(_as_written(mapping, key) for key in (
            MB, GA, TB, "gradient_clipping", "fp16.enabled", "bf16.enabled"))),
    )


def _zero(zero: Mapping) -> ZeRO:
    stage = zero.items.get("stage")
    valid = stage if isinstance(stage, Scalar) and type(stage.value) is int and stage.value in (0, 1, 2, 3) else None
    return ZeRO(
        stage=None if valid is None else Fact(valid.value, "zero_optimization.stage", valid.span, node=valid),
        offload_param=_offload(zero, "offload_param", "cpu_offload_param"),
        offload_optimizer=_offload(zero, "offload_optimizer", "cpu_offload"),
    )


def _offload(zero: Mapping, key: str, deprecated: str) -> Optional[Fact]:
    device = zero.get(key, "device")
    if isinstance(device, Scalar) and device.value in _OFFLOAD_DEVICES:
        return Fact(device.value, f"zero_optimization.{key}.device", device.span, node=device)
    flag = zero.items.get(deprecated)
    if isinstance(flag, Scalar) and flag.value is True:
        return Fact(True, f"zero_optimization.{deprecated}", flag.span, node=flag)
    return None


def _as_written(root: Optional[Mapping], dotted: str) -> Optional[Fact]:
    node = root.get(*dotted.split(".")) if root is not None else None
    return None if node is None else Fact(getattr(node, "value", None), dotted, node.span, node=node)


# pydantic's lax bool (DeepSpeedConfigModel is a pydantic model).
_PYDANTIC_BOOL = {"1": True, "on": True, "t": True, "true": True, "y": True, "yes": True,
                  "0": False, "off": False, "f": False, "false": False, "n": False, "no": False}


def _enabled(root: Mapping, section: str) -> Optional[Fact]:
    """`<section>.enabled` as DeepSpeed validates it; None when not a bool to it."""
    node = root.get(section, "enabled")
    value = _pydantic_bool(node)  # None for no node
    return None if value is None or node is None else Fact(value, f"{section}.enabled", node.span, Origin.FILE, node)


def _absent(node: Optional[Node]) -> bool:
    return node is None or (isinstance(node, Scalar) and node.value is None)


def _pydantic_bool(node: Optional[Node]) -> Optional[bool]:
    if not isinstance(node, Scalar):
        return None
    value = node.value
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        return _PYDANTIC_BOOL.get(value.lower())
    return None
