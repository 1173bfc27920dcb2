"""Accelerate config files (`accelerate config` output, `recipes/accelerate_configs/zero3.yaml`),
linted on their own.

An accelerate config holds no batch size (the training script does), but it holds the
world size and, with DeepSpeed, the gradient accumulation or the DeepSpeed JSON the job
runs with. Read as accelerate 1.15.0 reads it:

- W: `num_processes` is the total over machines; each machine runs num_processes //
  num_machines of them (commands/launch.py `multi_gpu_launcher`, utils/launch.py:113,
  217, 476), so W = that x num_machines. `num_processes: -1` (the default) means "pass
  --num_processes": unknown. A W from the launch line or the user wins.
- `deepspeed_config:` (distributed_type DEEPSPEED): without `deepspeed_config_file`
  DeepSpeedPlugin builds the DeepSpeed config from these keys, the batch sizes "auto"
  and `gradient_accumulation_steps` as written (utils/dataclasses.py:1301-1320). With
  one, the JSON is the DeepSpeed config, checked here with W = num_processes by the
  DeepSpeed adapter's own reading (its facts point into the JSON); and accelerate
  refuses the keys it would ignore (`_deepspeed_config_checks`, dataclasses.py:1507-1531,
  fed by commands/launch.py:1394-1397) and a JSON without `zero_optimization`
  (dataclasses.py:1273-1274).

Named by a launch line (`accelerate launch --config_file cfg.yaml train.py --flags`), a
DEEPSPEED config also hands the program the DeepSpeed config its DeepSpeedPlugin holds
(`hands`): commands/launch.py:1257-1277 copies the deepspeed_config keys into the launch
arguments (a launcher option of the same name wins), utils/launch.py:566-577 exports them
(ACCELERATE_GRADIENT_ACCUMULATION_STEPS, ACCELERATE_GRADIENT_CLIPPING, ...), and the plugin,
built by TrainingArguments (transformers training_args.py:2082-2088 @ 4.57.1), builds
{"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto",
"gradient_accumulation_steps": <as exported, an int when its text is digits>,
"gradient_clipping": <float, unless "auto">} (dataclasses.py:1229-1235, 1299-1320), or
takes the JSON with gradient_accumulation_steps 1 added when absent (1274-1275). The
Trainer then fills and checks it against its TrainingArguments as it does a `deepspeed:`
file (trainer.py:5537-5574 `propagate_args_to_deepspeed`; the same since transformers
4.30.0, trainer.py `create_accelerator_and_postprocess`). The precision keys are left out:
which of mixed_precision and --fp16/--bf16 the plugin takes moved between transformers
releases (4.36 sets ACCELERATE_MIXED_PRECISION from the flags before building it, 4.57 after).
"""

from __future__ import annotations

from ..document import Document, Mapping, Scalar
from ..lean_dataclass import field, fields, lean_dataclass, replace
from ..plan import Fact, Origin, Subject, TrainingPlan
from ..project import ProjectView
from . import deepspeed
from .deepspeed import DeepSpeedSettings, TrainerValues, ZeRO
from .facts import Outside, number
from .linked import BuiltBy, BuiltDeepSpeed, DeepSpeedLink, LinkedConfig, accumulation_added
from .releases import ACCELERATE as DISTRIBUTION
from .spec import Framework

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

NAME = "accelerate-config"  # the config file; "accelerate launch" is a generic launcher (launchers.py)
FORMATS = ("yaml", "json")
MARKERS = (b"distributed_type",)


def hands(plan: TrainingPlan, options: dict) -> dict:
    """What `accelerate launch --config_file <this config>` hands the program (Framework.hands): the
    data-parallel size its parallelism_config gives (Outside.data_parallel), and, for a DEEPSPEED
    config, the DeepSpeed config its DeepSpeedPlugin holds (Outside.deepspeed); on the local machine
    only (commands/launch.py:1257: the config's keys are copied there alone)."""
    typed = settings(plan)
    if typed is None or typed.compute_environment is not None and typed.compute_environment.value != "LOCAL_MACHINE":
        return {}
    given = {str(option).lstrip("-").replace("-", "_") for option in options if option}
    overridden = bool(given & _LAUNCH_OVERRIDES)
    handed = {}
    if typed.data_parallel is not None:
        # Launch options that change the sizes or the kind leave the split unknown.
        changed = overridden or any(option.startswith("parallelism_config") for option in given)
        handed["data_parallel"] = Fact(None, "dp", None, Origin.LAUNCH) if changed else typed.data_parallel
    if typed.distributed_type.value != "DEEPSPEED" or overridden:
        return handed
    path = plan.document.path
    if typed.deepspeed_file is not None:
        built = _built_from_file(typed.deepspeed_file, path)
        return {**handed, "deepspeed": BuiltDeepSpeed(built)} if built is not None else handed
    root = plan.document.root
    block = root.get("deepspeed_config")
    block = block if isinstance(block, Mapping) else Mapping()
    # The program's own DeepSpeed config replaces this one, and the plugin refuses these beside it
    # (with a deepspeed_config_file BL122 reports them in the config alone).
    refused = tuple(_elsewhere(fact, path) for fact in _refused(root, block)
                    if not (fact.key == "mixed_precision" and "mixed_precision" in given))
    return {**handed, "deepspeed": BuiltDeepSpeed(_built_from_block(block, path), refused)}


# Launcher options (commands/launch.py) that make the plugin's DeepSpeed config another than the file's,
# or the launch no DeepSpeed one.
_LAUNCH_OVERRIDES = {"gradient_accumulation_steps", "gradient_clipping", "deepspeed_config_file", "use_fsdp",
                     "multi_gpu", "cpu", "use_cpu", "tpu", "use_megatron_lm"}


def _built_from_block(block: Mapping, path: str) -> LinkedConfig:
    """The config DeepSpeedPlugin builds from the exported deepspeed_config keys (batch sizes "auto")."""
    values = TrainerValues(
        train_micro_batch_size_per_gpu=None, train_batch_size=None, fp16_enabled=None, bf16_enabled=None,
        gradient_accumulation_steps=_exported(block, "gradient_accumulation_steps", _accumulation, path),
        gradient_clipping=_exported(block, "gradient_clipping", _clipping, path))
    return LinkedConfig(block, path, block, DeepSpeedSettings(None, values), built_by=BuiltBy(
        f"the DeepSpeed config accelerate builds from {path}", _VERSIONS,
        "set {key} to auto (accelerate >= 0.23; older releases need a number there)"))


def _built_from_file(file: DeepSpeedFile, path: str) -> Optional[LinkedConfig]:
    """The JSON as the plugin holds it: gradient_accumulation_steps 1 added when it writes none."""
    link = file.linked
    if link is None or link.path is None:
        return None
    written = link.settings.trainer_values
    moved = {name: _elsewhere(getattr(written, name), link.path) for name in (f.name for f in fields(written))}
    if moved["gradient_accumulation_steps"] is None:
        written_at = file.reference.span  # the file's name as written: always in the config
        moved["gradient_accumulation_steps"] = accumulation_added(
            link.path, written_at.elsewhere(path) if written_at is not None else None)
    return replace(link, settings=replace(link.settings, trainer_values=TrainerValues(**moved)), built_by=BuiltBy(
        f"the DeepSpeed config accelerate takes from {link.path} ({path})", _VERSIONS,
        'set "{key}" to "auto"'))


# What a finding about the config accelerate hands the Trainer assumes.
_VERSIONS = "transformers >= 4.30 checks the DeepSpeed config `accelerate launch` hands it"


def _exported(block: Mapping, key: str, reading, path: str) -> Optional[Fact]:
    """The value the plugin reads back from the environment variable the launch exports for `key`
    (str(value)); None when not written (the plugin's default then: "auto" since accelerate 0.23)."""
    node = block.get(key)
    if not isinstance(node, Scalar) or node.value is None or isinstance(node.value, bool):
        return None
    return Fact(reading(str(node.value)), f"deepspeed_config.{key}", node.span.elsewhere(path), node=node)


def _accumulation(text: str):
    """dataclasses.py:1229-1231: an int when the text is digits, else the text ("auto" is filled in)."""
    return int(text) if text.isascii() and text.isdigit() and len(text) < 10 else (
        "auto" if text == "auto" else None)


def _clipping(text: str):
    """dataclasses.py:1233-1235 and 1317-1318: "auto", else a float; 0 is left out of the config."""
    text = text.lower()
    if text == "auto":
        return text
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value and value == value and abs(value) != float("inf") else None


# After every framework schema (a config of theirs never writes distributed_type), before TrainingArguments.
FRAMEWORK = Framework(NAME, FORMATS, MARKERS, order=900, hands=hands, distribution=DISTRIBUTION)

# commands/config/config_args.py ClusterConfig / BaseConfig: the keys beside distributed_type that
# make a mapping an accelerate config.
_OWN_KEYS = {"compute_environment", "num_processes", "num_machines", "machine_rank", "mixed_precision",
             "deepspeed_config", "fsdp_config", "main_training_function", "use_cpu", "rdzv_backend"}
_DISTRIBUTED_TYPES = {"NO", "MULTI_CPU", "MULTI_GPU", "MULTI_NPU", "MULTI_MLU", "MULTI_SDAA", "MULTI_MUSA",
                      "MULTI_XPU", "MULTI_HPU", "MULTI_NEURON", "DEEPSPEED", "FSDP", "XLA", "MEGATRON_LM"}
# The deepspeed_config keys accelerate refuses beside deepspeed_config_file: the ACCELERATE_* names of
# `_deepspeed_config_checks` (dataclasses.py:1508-1521) with the prefixes dropped, as it compares them.
IGNORED_BESIDE_FILE = ("gradient_accumulation_steps", "gradient_clipping", "zero_stage", "offload_optimizer_device",
                       "offload_param_device", "offload_param_nvme_path", "offload_optimizer_nvme_path",
                       "zero3_save_16bit_model")


@lean_dataclass(frozen=True)
class DeepSpeedFile:
    """`deepspeed_config.deepspeed_config_file` and what accelerate checks with it."""

    reference: Fact  # the path as written
    # Settings accelerate refuses beside the file: the deepspeed_config keys above, and a
    # `mixed_precision` written in the config (commands/launch.py:1395-1396 adds it when the
    # launch line passes no --mixed_precision).
    ignored: tuple[Fact, ...] = ()
    # The DeepSpeed JSON, read as linked.py reads a TrainingArguments' `deepspeed:` (None: not
    # found, outside the project, or not JSON); its `settings` are the DeepSpeed adapter's.
    linked: Optional[LinkedConfig] = None

    @property
    def has_zero(self) -> bool:
        """The JSON writes zero_optimization (DeepSpeedPlugin raises without it); True when not read."""
        return self.linked is None or "zero_optimization" in self.linked.root.items


@lean_dataclass(frozen=True)
class AccelerateSettings(Subject):
    """What an accelerate config writes that its rules read."""

    FRAMEWORKS = (NAME,)

    distributed_type: Fact
    compute_environment: Optional[Fact]
    num_processes: Optional[Fact]
    num_machines: Optional[Fact]
    mixed_precision: Optional[Fact]
    zero_stage: Optional[Fact] = None  # deepspeed_config.zero_stage (accelerate's default 2)
    zero3_init_flag: Optional[Fact] = None
    # The zero_optimization the DeepSpeedPlugin builds from deepspeed_config (no config file): a stage
    # written as 0-3, the offload devices written "cpu" or "nvme" (dataclasses.py:437-456 @ v0.16.0,
    # 1281-1315 @ v1.14.0: zero_stage -> zero_optimization.stage, offload_*_device -> offload_*.device).
    zero: Optional[ZeRO] = None
    deepspeed_file: Optional[DeepSpeedFile] = None  # DEEPSPEED with a config file on the local machine
    fsdp: dict = field(default_factory=dict)  # fsdp_config key -> Fact, as written
    # With a parallelism_config: the ranks the data is split over (value None when not known); None without.
    data_parallel: Optional[Fact] = None


def settings(plan: TrainingPlan) -> Optional[AccelerateSettings]:
    """The accelerate settings of a plan (None for other frameworks)."""
    return AccelerateSettings.of(plan)


def plan(doc: Document, outside: Outside):
    root = doc.root
    kind = root.get("distributed_type")
    if not (isinstance(kind, Scalar) and isinstance(kind.value, str) and _OWN_KEYS & set(root.items)):
        return None
    if kind.value.upper() not in _DISTRIBUTED_TYPES:
        return None
    typed = _read(doc, root, kind, outside.view)
    world = outside.world_size or _file_world_size(typed)
    plan = TrainingPlan(framework=NAME, document=doc, world_size=world,
                        target_global_batch=outside.target_global_batch, settings=typed)
    if typed.data_parallel is not None:
        plan.data_parallel = typed.data_parallel if typed.data_parallel.known else None
    elif world is not None and world.known:
        # DDP, FSDP and ZeRO all replicate the data over every rank (a parallelism_config splits them).
        plan.data_parallel = Fact(world.value, "dp", None, Origin.DERIVED, detail=f"W ({world.value})")
    if typed.deepspeed_file is not None:
        _take_deepspeed(plan, typed.deepspeed_file, world, outside.view)
    elif typed.distributed_type.value == "DEEPSPEED":
        block = root.get("deepspeed_config")
        plan.grad_accum = number(block.get("gradient_accumulation_steps"), "deepspeed_config.gradient_accumulation_steps") \
            if isinstance(block, Mapping) else None
    return plan


def _read(doc: Document, root: Mapping, kind: Scalar, view: ProjectView) -> AccelerateSettings:
    block = root.get("deepspeed_config")
    block = block if isinstance(block, Mapping) else Mapping()
    kind_name = str(kind.value).upper()
    distributed = Fact(kind_name, "distributed_type", kind.span, node=kind)
    local = _text(root, "compute_environment") in (None, "LOCAL_MACHINE")
    reference = block.get("deepspeed_config_file")
    file = None
    if distributed.value == "DEEPSPEED" and local and isinstance(reference, Scalar) \
            and isinstance(reference.value, str) and reference.value.strip() not in ("", "none"):
        file = _deepspeed_file(doc, root, block, reference, view)
    fsdp = root.get("fsdp_config")
    return AccelerateSettings(
        distributed_type=distributed,
        compute_environment=_as_written(root, "compute_environment"),
        num_processes=number(root.get("num_processes"), "num_processes",
                             default=1 if distributed.value == "NO" else None),
        num_machines=number(root.get("num_machines"), "num_machines", default=1),
        mixed_precision=_as_written(root, "mixed_precision"),
        zero_stage=number(block.get("zero_stage"), "deepspeed_config.zero_stage"),
        zero3_init_flag=_as_written(block, "zero3_init_flag", "deepspeed_config."),
        zero=_zero(block) if distributed.value == "DEEPSPEED" and file is None else None,
        deepspeed_file=file,
        fsdp={key: _as_written(fsdp, key, "fsdp_config.") for key in fsdp.items} if isinstance(fsdp, Mapping) else {},
        data_parallel=_data_parallel(root, kind_name),
    )


def _zero(block: Mapping) -> ZeRO:
    """The ZeRO settings the plugin builds: only a stage written as a number (unwritten, the plugin takes
    ACCELERATE_DEEPSPEED_ZERO_STAGE from the environment, else 2: not judged here)."""
    stage = number(block.get("zero_stage"), "deepspeed_config.zero_stage")
    written = stage.number if stage is not None else None

    def device(key: str) -> Optional[Fact]:
        fact = _as_written(block, key, "deepspeed_config.")
        value = fact.value.lower() if fact is not None and isinstance(fact.value, str) else None
        return fact if value in ("cpu", "nvme") else None

    return ZeRO(stage if written is not None and 0 <= written <= 3 else None,
                device("offload_param_device"), device("offload_optimizer_device"))


# parallelism_config keys (commands/launch.py:899-925, each default 1) and the dimensions they size.
_MESH = ("dp_replicate", "dp_shard", "tp", "cp", "sp")


def _data_parallel(root: Mapping, kind: str) -> Optional[Fact]:
    """The data-parallel size a parallelism_config gives (accelerate >= 1.10 exports it, utils/launch.py:402-426;
    the Accelerator builds its ParallelismConfig from it, accelerator.py:459-460): under FSDP the
    dataloader splits the data over dp_replicate x dp_shard ranks, cp and tp ranks sharing a batch
    (data_loader.py:1150-1165). Unknown (value None) under DeepSpeed (its own mesh, data_loader.py:1130-1140),
    with sequence parallelism, or a size not a whole number; None without a parallelism_config."""
    block = root.get("parallelism_config")
    if not isinstance(block, Mapping) or not block.items:
        return None
    sizes: dict[str, Optional[int]] = {}
    for name in _MESH:
        node = block.get(f"parallelism_config_{name}_size")
        value = getattr(node, "value", None) if node is not None else 1
        sizes[name] = value if type(value) is int and value >= 1 else None
    span = block.span
    replicate, shard = sizes["dp_replicate"], sizes["dp_shard"]
    if kind != "FSDP" or sizes["sp"] != 1 or replicate is None or shard is None:
        return Fact(None, "dp", span, Origin.DERIVED, detail="parallelism_config: not known here (DeepSpeed's "
                                                            "own mesh, sequence parallelism, or a size not a count)")
    return Fact(replicate * shard, "dp", span, Origin.DERIVED, detail=f"parallelism_config: dp_replicate_size "
                f"({replicate}) x dp_shard_size ({shard}); cp and tp ranks share a batch (accelerate >= 1.10)")


def _deepspeed_file(doc: Document, root: Mapping, block: Mapping, reference: Scalar,
                    view: ProjectView) -> DeepSpeedFile:
    written = Fact(reference.value, "deepspeed_config.deepspeed_config_file", reference.span, node=reference)
    return DeepSpeedFile(written, _refused(root, block), DeepSpeedLink(reference, doc.path, view).config())


def _refused(root: Mapping, block: Mapping) -> tuple:
    """What the plugin refuses beside a DeepSpeed config file (its own, or the program's): the
    deepspeed_config keys written (any value), and a mixed_precision written in the config."""
    ignored = [_as_written(block, key, "deepspeed_config.") for key in IGNORED_BESIDE_FILE if key in block.items]
    precision = root.get("mixed_precision")
    if isinstance(precision, Scalar) and precision.value is not None:
        ignored.append(Fact(precision.value, "mixed_precision", precision.span, node=precision))
    return tuple(ignored)


def _take_deepspeed(plan: TrainingPlan, file: DeepSpeedFile, world: Optional[Fact], view: ProjectView) -> None:
    """The batch facts of the linked JSON as the DeepSpeed adapter reads it under W, each
    pointing into the JSON, so the generic batch rules check it and report it there."""
    link = file.linked
    if link is None or link.path is None:
        return
    linked_doc = Document(link.path, "json", link.root, "")
    read = deepspeed.plan(linked_doc, Outside(world_size=world, project=view))
    if read is None:
        # Only ZeRO settings or nothing DeepSpeed checks: accelerate still sets accumulation 1 when absent.
        return
    moved = {name: _elsewhere(getattr(read, name), link.path)
             for name in ("micro_batch", "grad_accum", "declared_global_batch")}
    if moved["grad_accum"] is None and moved["micro_batch"] is not None and read.derived_from_global is None:
        moved["grad_accum"] = Fact(1, "gradient_accumulation_steps", None, Origin.DEFAULT,
                                   detail="accelerate sets it to 1 when the JSON does not (dataclasses.py:1271-1272)")
    plan.micro_batch, plan.grad_accum, plan.declared_global_batch = (
        moved["micro_batch"], moved["grad_accum"], moved["declared_global_batch"])
    plan.derived_from_global = read.derived_from_global
    if read.data_parallel is not None:
        plan.data_parallel = read.data_parallel


def _elsewhere(fact: Optional[Fact], path: str) -> Optional[Fact]:
    if fact is None or fact.span is None:
        return fact
    return replace(fact, span=fact.span.elsewhere(path))


def _file_world_size(typed: AccelerateSettings) -> Optional[Fact]:
    """num_processes // num_machines per machine, x num_machines."""
    processes, machines = typed.num_processes, typed.num_machines
    count = processes.count if processes is not None else None
    nodes = machines.count if machines is not None else None
    if processes is None or machines is None or count is None or nodes is None:
        return None
    per_machine = count // nodes
    if per_machine < 1:
        return None
    if per_machine * nodes == count:
        return Fact(count, "num_processes", processes.span, processes.origin, processes.node)
    return Fact(per_machine * nodes, "world size", processes.span, Origin.DERIVED,
                detail=f"{processes.describe()} // {machines.describe()} = {per_machine} per machine "
                       f"x {nodes} machines")


def _text(root: Mapping, key: str) -> Optional[str]:
    node = root.get(key)
    return node.value if isinstance(node, Scalar) and isinstance(node.value, str) else None


def _as_written(mapping: Mapping, key: str, prefix: str = "") -> Optional[Fact]:
    node = mapping.get(key)
    return None if node is None else Fact(getattr(node, "value", None), prefix + key, node.span, node=node)
