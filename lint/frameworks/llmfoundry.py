"""MosaicML LLM Foundry train YAMLs (scripts/train/yamls/{pretrain,finetune}/*.yaml), run by
Composer's launcher (`composer [-n N] [--world_size W] train/train.py cfg.yaml key=value ...`),
and MosaicML platform run YAMLs (mcli/*.yaml) whose `parameters:` block is the train config.

The arithmetic, as llmfoundry/utils/config_utils.py @ 8c8dd48 (v0.21.0 and after) does it:
- update_batch_size_info (:496-510) calls calculate_batch_size_info (:425-462) with
  data_replication_degree = 1 (:497): whatever tp_config says, every rank counts;
- global_train_batch_size % W != 0 raises "Global batchsize G is not divisible by
  (world_size // data_replication_degree)=W as a result, the batch size would be truncated"
  (:437-443); else device_train_batch_size = G / W (:444-446);
- device_train_microbatch_size "auto" leaves accumulation to Composer at run time (:447-448);
  a number larger than the device batch is lowered to it with a warning (:450-455); the
  accumulation is ceil(device batch / micro batch) (:456-458), and Composer splits each device
  batch into micro batches of that size, the last one shorter when they do not divide
  (composer/core/data_spec.py `_split_tensor`: `t.split(microbatch_size)`): no refusal there;
- both keys are read from the YAML as written (`cfg[...]` before TrainConfig's defaults, :499-500).

The train script reads the YAML through OmegaConf (`om.load`, command_utils/train.py:661):
interpolations (`${variables.x}`, `${x}`) are followed, from the config's root (an MCLI run
YAML's: its `parameters`) (lint/sources/omegaconf.py). A YAML is llm-foundry's only with a batch key
beside `model:` and `train_loader:` mappings (TrainConfig's mandatory keys, :103-107).
"""

from __future__ import annotations

import copy
import math

from ..document import Document, Mapping, Node
from ..lean_dataclass import lean_dataclass
from ..plan import Fact, Origin, Subject, TrainingPlan
from .facts import Outside, number
from .launchers import COMPOSER
from .releases import LLMFOUNDRY as DISTRIBUTION
from .spec import ASSIGN, OMEGACONF, Framework, Launcher

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

NAME = "llm-foundry"
FORMATS = ("yaml",)
MARKERS = (b"global_train_batch_size", b"device_train_microbatch_size")

# scripts/train/train.py: `train_from_yaml(sys.argv[1], sys.argv[2:])`, the rest merged as an OmegaConf
# dotlist (command_utils/train.py:653-666). `train.py` is too common a name to claim under another
# launcher (`torchrun train.py --config x.yaml` is anyone's): only as composer's program.
LAUNCHERS = (Launcher("llm-foundry train.py", scripts=("train.py",), markers=(b"composer",), flags=ASSIGN,
                      under=(COMPOSER.name,)),)
FRAMEWORK = Framework(NAME, FORMATS, MARKERS, order=40, launchers=LAUNCHERS, distribution=DISTRIBUTION,
                      interpolation=OMEGACONF)

_BATCH_KEYS = ("global_train_batch_size", "device_train_microbatch_size")
# An MCLI run YAML (mcli/*.yaml): the platform writes `parameters` to this file, which the
# command's `composer train/train.py /mnt/config/parameters.yaml` then trains on.
_MCLI_KEYS = ("compute", "command", "image", "integrations")
_PARAMETERS_FILE = "/mnt/config/parameters.yaml"
_AUTO = "device_train_microbatch_size (auto: Composer picks it at run time)"


@lean_dataclass(frozen=True)
class FoundrySettings(Subject):
    """What llm-foundry derives from the batch keys at start-up (config_utils.py:425-493)."""

    FRAMEWORKS = (NAME,)

    # global_train_batch_size / W, when W is known and divides it (None otherwise).
    device_train_batch_size: Optional[Fact]
    # The micro batch as written: an int, "auto" (Composer's run-time search), or not known.
    microbatch_written: Optional[Fact]
    device_eval_batch_size: Optional[Fact]  # as written; absent: the micro batch, or 1 with auto (:487-492)


def plan(doc: Document, outside: Outside) -> Optional[TrainingPlan]:
    root = doc.root
    parameters = root.get("parameters")
    if isinstance(parameters, Mapping) and any(key in root.items for key in _MCLI_KEYS):
        return _mcli_plan(doc, parameters, outside)
    if not is_config(root):
        return None
    return _plan(doc, root, outside.world_size, outside)


def is_config(root: Mapping) -> bool:
    """An llm-foundry train config: a batch key beside `model:` and `train_loader:` mappings."""
    return any(key in root.items for key in _BATCH_KEYS) and isinstance(root.get("model"), Mapping) \
        and isinstance(root.get("train_loader"), Mapping)


def _plan(doc: Document, root: Mapping, world: Optional[Fact], outside: Outside) -> TrainingPlan:
    written = _number(root, "device_train_microbatch_size")
    declared = _number(root, "global_train_batch_size")
    device = _device_batch(declared, world)
    micro = _micro(written, device)
    plan = TrainingPlan(
        framework=NAME,
        document=doc,
        micro_batch=micro,
        grad_accum=_accumulation(micro, device),
        world_size=world,
        target_global_batch=outside.target_global_batch,
        declared_global_batch=declared,
        derived_from_global="device_batch",
        seq_len=_number(root, "max_seq_len"),
    )
    if world is not None and world.positive:
        plan.data_parallel = Fact(world.value, "dp", None, Origin.DERIVED,
                                  detail=f"W ({world.value}): every rank, whatever tp_config says")
    tp = _number(root.get("tp_config"), "tensor_parallel_degree")
    if tp is not None:
        plan.parallel = {"tp": Fact(tp.value, f"tp_config.{tp.key}", tp.span, tp.origin, tp.node, tp.detail)}
    plan.settings = FoundrySettings(device_train_batch_size=device, microbatch_written=written,
                                    device_eval_batch_size=_number(root, "device_eval_batch_size"))
    return plan


def _device_batch(declared: Optional[Fact], world: Optional[Fact]) -> Optional[Fact]:
    """global_train_batch_size / W (config_utils.py:444), when W divides it."""
    if declared is None or world is None:
        return None
    global_batch, world_size = declared.count, world.count
    if global_batch is None or world_size is None:
        return None
    if global_batch % world_size:
        return None  # refused at start-up: BL103 says so
    return Fact(global_batch // world_size, "device_train_batch_size", None, Origin.DERIVED,
                detail=f"{declared.key} {global_batch} / W {world_size}")


def _micro(written: Optional[Fact], device: Optional[Fact]) -> Optional[Fact]:
    """The micro batch Composer runs: as written, lowered to the device batch when larger
    (config_utils.py:450-455); "auto" claims none (Composer searches for one at run time)."""
    if written is None:
        return None
    if isinstance(written.value, str) and written.value == "auto":
        return Fact(None, _AUTO, written.span, Origin.FILE, written.node)
    if device is None:
        return written
    micro_batch, device_batch = written.number, device.count  # the device batch is positive (_device_batch)
    if micro_batch is not None and device_batch is not None and micro_batch > device_batch:
        return Fact(device_batch, written.key, written.span, Origin.DERIVED, written.node,
                    detail=f"{micro_batch} lowered to {device.describe()}: llm-foundry warns and lowers it")
    return written


def _accumulation(micro: Optional[Fact], device: Optional[Fact]) -> Optional[Fact]:
    """ceil(device batch / micro batch) (config_utils.py:456-458); Composer's last micro batch
    of each step holds the remainder."""
    if micro is not None and micro.key == _AUTO:
        return Fact(None, "gradient accumulation (auto, with the micro batch)", micro.span, Origin.FILE, micro.node)
    if micro is None or device is None:
        return None
    micro_batch, device_batch = micro.count, device.count  # the device batch is positive (_device_batch)
    if micro_batch is None or device_batch is None:
        return None
    steps = math.ceil(device_batch / micro_batch)
    shown = f"ceil({device.describe()} / {micro.key} {micro_batch})"
    left = device_batch % micro_batch
    if left:
        shown += f"; the last micro batch of each step holds {left}"
    return Fact(steps, "gradient accumulation", None, Origin.DERIVED, detail=shown)


def _number(mapping: Optional[Node], key: str) -> Optional[Fact]:
    """mapping.<key> as a number fact (one read through an interpolation is named by the key that
    writes it, and placed there)."""
    return number(mapping.get(key), key) if isinstance(mapping, Mapping) else None


# --------------------------------------------------------------------------- MCLI run YAMLs


def _mcli_plan(doc: Document, parameters: Mapping, outside: Outside) -> Optional[TrainingPlan]:
    """An MCLI run YAML whose command trains on the parameters it writes to /mnt/config/parameters.yaml:
    those are the config, W the launch line's --world_size, else compute.gpus (the run's GPUs in all:
    the platform sets WORLD_SIZE, which composer reads when no --world_size is given, whatever -n says)."""
    if not is_config(parameters):
        return None
    gpus = _gpus(doc.root.get("compute"))
    launch = _parameters_launch(doc, gpus)
    if launch is None:
        return None  # parameters no command reads as the train config: not this file's config
    # The train script loads the parameters file alone: its interpolations resolve from its root.
    written = doc.resolved.written.root.get("parameters") if doc.resolved is not None else parameters
    config = written
    if launch.overrides:
        from ..launching.lines import apply_overrides

        config = copy.deepcopy(written)
        apply_overrides(Document(doc.path, doc.format, config, doc.text), launch.overrides, script=None)
    world = outside.world_size
    if world is None or world.origin is Origin.DEFAULT:
        world = gpus if launch.world_size is not None and launch.world_size.detail.startswith("WORLD_SIZE") \
            else launch.world_size
    from ..sources.omegaconf import resolve

    sub = resolve(Document(path=doc.path, format=doc.format, root=config, text=doc.text))
    return _plan(sub, sub.root, world, outside)


def _parameters_launch(doc: Document, gpus: Optional[Fact]):
    """The composer launch in `command` that trains on the parameters file, or None. The platform
    runs the command with WORLD_SIZE = compute.gpus, which composer takes unless --world_size is given."""
    from ..document import LimitExceeded, ParseError
    from ..launching.lines import launch_of
    from ..sources.shell import UNKNOWN, Word, read_shell
    from ..sources.yaml import string_in_place

    command = doc.root.get("command")
    text = string_in_place(doc.text, command) if command is not None else None
    if text is None:
        return None
    # A written compute.gpus has its place (number() of a node).
    where = gpus.span if gpus is not None and gpus.span is not None else \
        doc.root.key_spans.get("command", doc.root.span)
    environment = {"WORLD_SIZE": Word(str(gpus.value) if gpus is not None else UNKNOWN, where, "")}
    try:
        script = read_shell(doc.path, text, environment)
    except (ParseError, LimitExceeded):
        return None
    for command in script.commands:
        launch = launch_of(command, doc.path)
        if launch is not None and launch.launcher == COMPOSER.name and any(
                word.known and word.value == _PARAMETERS_FILE for word in launch.configs):
            return launch
    return None


def _gpus(compute: Optional[Node]) -> Optional[Fact]:
    """compute.gpus: the run's GPUs in all (`gpus: 16` is two nodes of 8); unknown without it."""
    if not isinstance(compute, Mapping):
        return None
    gpus = number(compute.get("gpus"), "compute.gpus")
    return gpus if gpus is not None and gpus.positive else None
