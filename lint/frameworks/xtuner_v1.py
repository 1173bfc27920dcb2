"""XTuner v1 Python configs (`from xtuner.v1 ...`), as `xtuner/v1/train/cli/sft.py`
loads them: the top-level `trainer` (`Config.fromfile(config)["trainer"]`). An RL
config's trainer (RLColocateTrainerConfig, ...) is read by xtuner_v1_rl.py.

A v1 config builds pydantic objects by calling their classes,
`trainer = TrainerConfig(global_batch_size=64, sp_size=4, ...)`; the Python
reader gives such a keyword-only call as a Mapping of its arguments, as it
gives mmengine's `dict(type=..., ...)`.

Facts (xtuner main @ b934f46): dp = W / (fsdp_cfg.tp_size x sp_size), and W
must be a multiple of tp x sp (trainer.py:1105-1128). Each rank takes
global_batch_size / dp packed samples per step, which must be whole
(trainer.py:1024-1040), and feeds them intra_layer_micro_batch at a time,
which must divide them (engine/train_engine.py:195-210): global_batch_size
must divide by intra_layer_micro_batch x dp. Left as None it is dp x
intra_layer_micro_batch (trainer.py:674-676). Length grouping is meant to go
with packing in v1, so the v0.1 packing facts are not filled.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..document import Document, Mapping, Scalar, Sequence, Symbol
from ..lean_dataclass import lean_dataclass
from ..plan import Fact, Origin, Subject, TrainingPlan
from .facts import Outside, divide, flag, number
from .releases import XTUNER_V1 as DISTRIBUTION
from .spec import Framework
from .xtuner import is_v1
from .xtuner_v1_rl import TRAINERS, Rollout, fill as fill_rl, trainer_call

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

NAME = "xtuner-v1"
FORMATS = ("python",)
MARKERS = (b"xtuner.v1",)

FRAMEWORK = Framework(NAME, FORMATS, MARKERS, order=10, distribution=DISTRIBUTION)

def plan(doc: Document, outside: Outside) -> Optional[TrainingPlan]:
    if doc.format != "python" or "trainer" not in doc.namespace or not is_v1(doc):
        return None
    plan = TrainingPlan(
        framework=NAME, document=doc, world_size=outside.world_size, target_global_batch=outside.target_global_batch
    )
    trainer = next((c for c in calls(doc, "TrainerConfig") if c.origin == "trainer"), None)
    rl_trainer = trainer_call(c for name in TRAINERS for c in calls(doc, name)) if trainer is None else None
    if trainer is not None:
        _batch_facts(plan, trainer, outside)
    loaders = tuple(dataloader_configs(doc))
    # The tokens a packed micro batch holds, as written (shown by explain; no rule reads it).
    plan.seq_len = next((number(c.get("pack_max_length"), "pack_max_length") for c in loaders
                         if c.get("pack_max_length") is not None), None)
    rollout = fill_rl(plan, rl_trainer, outside) if rl_trainer is not None else None
    plan.settings = XTunerV1Settings(dataloader_configs=tuple(_dataloader(c) for c in loaders), rollout=rollout)
    return plan


@lean_dataclass(frozen=True)
class Dataloader:
    """A DataloaderConfig call's packing and length grouping, as written: with
    pack_level "none" it refuses group_by_length=True and infers False when it is
    left out (xtuner/v1/datasets/config.py:365-377 @ b934f46)."""

    pack_level: Optional[Fact]  # None unless written as a plain value
    group_by_length: Optional[Fact]  # None unless written true/false


@lean_dataclass(frozen=True)
class XTunerV1Settings(Subject):
    """XTuner v1 settings its own rules read."""

    FRAMEWORKS = (NAME,)

    dataloader_configs: tuple[Dataloader, ...]  # Dataloader of every DataloaderConfig call
    rollout: Optional[Rollout] = None  # an RL trainer's rollout engines


def _dataloader(config: Mapping) -> Dataloader:
    level = config.get("pack_level")
    return Dataloader(
        pack_level=Fact(level.value, "pack_level", level.span, node=level) if isinstance(level, Scalar) else None,
        group_by_length=flag(config.get("group_by_length"), "group_by_length"),
    )


def _batch_facts(plan: TrainingPlan, trainer: Mapping, outside: Outside) -> None:
    fsdp = trainer.get("fsdp_cfg")
    if isinstance(fsdp, Scalar) and fsdp.value is None:
        fsdp = None  # the trainer then uses FSDPConfig() (trainer.py:617-618)
    tp = number(fsdp.get("tp_size") if isinstance(fsdp, Mapping) else fsdp, "fsdp_cfg.tp_size", default=1)
    sp = number(trainer.get("sp_size"), "sp_size", default=1)
    plan.parallel = {"tp": tp, "sp": sp}
    plan.layout, plan.layout_exact = (tp, sp), False
    plan.data_parallel = divide(outside.world_size, [tp, sp])
    plan.micro_batch = number(trainer.get("intra_layer_micro_batch"), "intra_layer_micro_batch", default=1)
    declared = trainer.get("global_batch_size")
    if isinstance(declared, Scalar) and declared.value is None:
        plan.grad_accum = Fact(1, "gradient accumulation", None, Origin.DERIVED, detail="global_batch_size None")
    elif declared is not None:
        plan.declared_global_batch = number(declared, "global_batch_size")
        plan.derived_from_global = "grad_accum"


# -- finding the calls -------------------------------------------------------------------

def calls(doc: Document, class_name: str) -> Iterator[Mapping]:
    """Every call of the xtuner.v1 class `class_name` the config makes, assigned
    or nested in another call's arguments: the reader gives each as a Mapping
    of its keyword arguments with `type` = the class."""
    seen: set = set()
    queue = list(doc.namespace.values())
    while queue:
        node = queue.pop(0)
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, Mapping):
            kind = node.get("type")
            if isinstance(kind, Scalar) and isinstance(kind.value, Symbol) and kind.value.name == class_name \
                    and kind.value.qualname.startswith("xtuner.v1"):
                yield node
            queue.extend(node.items.values())
        elif isinstance(node, Sequence):
            queue.extend(node.items)


def dataloader_configs(doc: Document) -> Iterator[Mapping]:
    """The v1 DataloaderConfig calls of a config."""
    return calls(doc, "DataloaderConfig")
