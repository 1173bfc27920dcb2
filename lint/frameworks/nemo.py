"""NeMo 1 Megatron YAML configs (`trainer:` + `model:`, examples/nlp/*/conf).

W = trainer.devices x trainer.num_nodes (devices "auto", -1 or a list is
unknown; num_nodes defaults to 1). A W from the user wins over the file's.
dp = W / (tp x pp x cp); the global batch must divide by micro batch x dp,
and gradient accumulation is derived from it (megatron-core's microbatch
calculator, initialised by nemo/collections/nlp/modules/common/megatron/
megatron_init.py). Defaults are MegatronBaseModel's `cfg.get(key, 1)`.
NeMo reads the YAML through OmegaConf (hydra_runner): interpolations are followed
(lint/sources/omegaconf.py); a resolver NeMo registers (`${multiply:...}`), `???` and
null are unknown.

With `model.rampup_batch_size` the global batch is not checked (the ramp
reaches it only later in the run). A config whose model is restored from `model.pretrained_model_path` (T5
LM adaptation) takes its parallel layout from the checkpoint, not the file:
no layout is checked there.

The NeMo rules read `plan.settings`, a NemoSettings: the model settings
MegatronBaseModel validates, written or its defaults.
"""

from __future__ import annotations

from ..document import Document, Mapping, Scalar
from ..lean_dataclass import lean_dataclass
from ..plan import Fact, Origin, Subject, TrainingPlan
from .facts import Outside, divide, flag, number
from .releases import NEMO as DISTRIBUTION
from .spec import HYDRA_COMPOSED, Framework

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional, overload
else:
    from ..annotations import overload

NAME = "nemo"
FORMATS = ("yaml",)
# Every key of _MODEL_KEYS: one of them is how plan() recognises a config (Framework.markers).
MARKERS = (b"tensor_model_parallel_size", b"global_batch_size", b"micro_batch_size", b"pipeline_model_parallel_size",
           b"train_ds")

FRAMEWORK = Framework(NAME, FORMATS, MARKERS, order=80, interpolation=HYDRA_COMPOSED, distribution=DISTRIBUTION)

# MegatronBaseModel._validate_and_override_config logs it at info level and turns it off
# (nemo/collections/nlp/models/language_modeling/megatron_base_model.py:1019-1025 @ 8cfedd7;
# NeMo 2's llm/api.py:1363-1367 warns with Megatron-LM's words).
SEQUENCE_PARALLEL_OFF = (
    'NeMo logs "Sequence parallel should only be used with tensor parallel size > 1. Setting sequence '
    'parallel to False" (info level) and turns it off'
)

_MODEL_KEYS = {"micro_batch_size", "global_batch_size", "tensor_model_parallel_size", "pipeline_model_parallel_size"}
_DEGREES = {
    "tp": "tensor_model_parallel_size",
    "pp": "pipeline_model_parallel_size",
    "cp": "context_parallel_size",
    "ep": "expert_model_parallel_size",
}


def plan(doc: Document, outside: Outside):
    trainer, model = doc.get("trainer"), doc.get("model")
    if not (isinstance(trainer, Mapping) and isinstance(model, Mapping)):
        return None
    if not {"devices", "num_nodes"} & set(trainer.items):
        return None
    if not _MODEL_KEYS & set(model.items):
        return _lightning_plan(doc, trainer, model, outside)
    world = outside.world_size or _file_world_size(trainer)
    parallel = {short: model_number(model, key, default=1) for short, key in _DEGREES.items()}
    layout = () if _restored_layout(doc, model) else (parallel["tp"], parallel["pp"], parallel["cp"])
    plan = TrainingPlan(
        framework=NAME,
        document=doc,
        world_size=world,
        target_global_batch=outside.target_global_batch,
        micro_batch=model_number(model, "micro_batch_size"),
        declared_global_batch=None if _ramps_up(model) else _declared_global_batch(model),
        derived_from_global="grad_accum",
        parallel=parallel,
        layout=layout,
        layout_exact=False,
        data_parallel=divide(world, list(layout)) if layout else None,
        sequence_parallel=flag(model.get("sequence_parallel"), "model.sequence_parallel"),
        sequence_parallel_off=SEQUENCE_PARALLEL_OFF,
    )
    plan.seq_len, plan.seq_len_multiple = _context_parallel_split(model, parallel["cp"])
    # Shown by explain for every config; only the split above makes a rule check it.
    plan.seq_len = plan.seq_len or _seq_length(model)
    plan.settings = _settings(trainer, model)
    return plan


def _lightning_plan(doc: Document, trainer: Mapping, model: Mapping, outside: Outside) -> Optional[TrainingPlan]:
    """A model Lightning trains data-parallel (ASR, TTS, audio, speaker tasks): each rank's DataLoader
    takes model.train_ds.batch_size (TTS: train_ds.dataloader_params.batch_size; ctc_models.py:370-372,
    tts/models/aligner.py:221 @ 8cfedd7), and Lightning accumulates trainer.accumulate_grad_batches
    (default 1) of them. A sampler that batches by duration or tokens (Lhotse `batch_duration`,
    `batch_tokens`, bucketing, semi-sorted batching; common/data/lhotse/dataloader.py:555-600) makes
    batch_size a cap only: then no micro batch is claimed."""
    train = model.get("train_ds")
    if not isinstance(train, Mapping):
        return None
    params = train.get("dataloader_params")
    key, node = ("model.train_ds.batch_size", train.get("batch_size"))
    if node is None and isinstance(params, Mapping):
        key, node = ("model.train_ds.dataloader_params.batch_size", params.get("batch_size"))
    if node is None:
        return None
    world = outside.world_size or _file_world_size(trainer)
    plan = TrainingPlan(
        framework=NAME,
        document=doc,
        world_size=world,
        target_global_batch=outside.target_global_batch,
        micro_batch=number(node, key),
        grad_accum=number(trainer.get("accumulate_grad_batches"), "trainer.accumulate_grad_batches", default=1),
        data_parallel=divide(world, []),
    )
    dynamic = _dynamic(train)
    if dynamic is not None:
        plan.micro_batch = Fact(None, f"{key} (only a cap: {dynamic} sets the batches)", node.span)
    return plan


# Settings that make a NeMo speech loader batch by duration or tokens, batch_size only its cap.
_DYNAMIC_BATCHING = ("batch_duration", "batch_tokens", "bucket_batch_size", "bucketing_batch_size")
_DYNAMIC_SWITCHES = ("use_bucketing", "use_semi_sorted_batching", "use_multimodal_sampling")


def _dynamic(train: Mapping) -> Optional[str]:
    """The train_ds key that makes its batches vary, if any (an unreadable value counts)."""
    for key in _DYNAMIC_BATCHING:
        node = train.get(key)
        if node is not None and not (isinstance(node, Scalar) and node.value is None):
            return f"train_ds.{key}"
    for key in _DYNAMIC_SWITCHES:
        node = train.get(key)
        if node is not None and not (isinstance(node, Scalar) and node.value is False):
            return f"train_ds.{key}"
    return None


@lean_dataclass(frozen=True)
class NemoSettings(Subject):
    """MegatronBaseModel's settings (`cfg.get(key, default)`) its own rules read; the
    lines are nemo/collections/nlp/models/language_modeling/megatron_base_model.py @ 8cfedd7."""

    FRAMEWORKS = (NAME,)

    # Lightning's own accumulation, as written; only for a model that accumulates inside
    # training_step from model.global_batch_size (legacy RETRO accumulates with Lightning).
    accumulate_grad_batches: Optional[Fact]
    # Flags: None when written as no boolean (an interpolation).
    fsdp: Optional[Fact]  # default False (:254)
    fp8: Optional[Fact]  # default False (:211)
    sequence_parallel: Optional[Fact]  # default False (:1019); NeMo turns it off with tp 1 (:1019-1025)
    ub_tp_comm_overlap: Optional[Fact]  # default False (:1072)
    num_moe_experts: Fact  # value None: null, or absent (default None, megatron_gpt_model.py:2263)
    virtual_pipeline_model_parallel_size: Fact  # default None (:181); 1 means none
    num_layers: Optional[Fact]  # read without a default (:192)
    # Both true: the pipeline split accounts for the embedding and the loss, and the
    # layers per stage need not divide into model chunks (:187-189; each default False).
    account_for_embedding_in_pipeline_split: Optional[Fact]
    account_for_loss_in_pipeline_split: Optional[Fact]


def _settings(trainer: Mapping, model: Mapping) -> NemoSettings:
    return NemoSettings(
        accumulate_grad_batches=number(trainer.get("accumulate_grad_batches"), "trainer.accumulate_grad_batches")
        if "global_batch_size" in model.items else None,
        fsdp=_model_flag(model, "fsdp"),
        fp8=_model_flag(model, "fp8"),
        sequence_parallel=_model_flag(model, "sequence_parallel"),
        ub_tp_comm_overlap=_model_flag(model, "ub_tp_comm_overlap"),
        num_moe_experts=model_number(model, "num_moe_experts") or Fact(None, "model.num_moe_experts", None, Origin.DEFAULT),
        virtual_pipeline_model_parallel_size=model_number(model, "virtual_pipeline_model_parallel_size")
        or Fact(None, "model.virtual_pipeline_model_parallel_size", None, Origin.DEFAULT),
        num_layers=model_number(model, "num_layers"),
        account_for_embedding_in_pipeline_split=_model_flag(model, "account_for_embedding_in_pipeline_split"),
        account_for_loss_in_pipeline_split=_model_flag(model, "account_for_loss_in_pipeline_split"),
    )


def _model_flag(model: Mapping, key: str) -> Optional[Fact]:
    """model.<key> as a boolean fact: default False when absent, None when written as no boolean."""
    node = model.get(key)
    return flag(node, f"model.{key}") if node is not None else Fact(False, f"model.{key}", None, Origin.DEFAULT)


@overload
def model_number(model: Mapping, key: str, default: int) -> Fact: ...
@overload
def model_number(model: Mapping, key: str, default: None = None) -> Optional[Fact]: ...
def model_number(model: Mapping, key: str, default: Optional[int] = None) -> Optional[Fact]:
    """model.<key> as an integer fact; null is unknown (None when absent without default)."""
    return number(model.get(key), f"model.{key}", default=default)


def _file_world_size(trainer: Mapping) -> Optional[Fact]:
    devices = number(trainer.get("devices"), "trainer.devices")
    nodes = number(trainer.get("num_nodes"), "trainer.num_nodes", default=1)
    if devices is None:
        return None
    device_count, node_count = devices.count, nodes.count
    if device_count is None or node_count is None:
        return None
    return Fact(device_count * node_count, "trainer.devices x trainer.num_nodes", devices.span)


def _ramps_up(model: Mapping) -> bool:
    """A batch-size ramp-up reaches global_batch_size only later in the run: its checks are not start-up ones."""
    ramp = model.get("rampup_batch_size")
    return ramp is not None and not (isinstance(ramp, Scalar) and ramp.value is None)


def _restored_layout(doc: Document, model: Mapping) -> bool:
    """The layout comes from a checkpoint: `model.pretrained_model_path`, or NeMo-Aligner's
    `pretrained_checkpoint.restore_from_path` (null in the file, given on the command line), whose
    model config the file's `model:` section only overrides (nemo_aligner/utils/utils.py
    load_and_override_model_config): degrees the file does not write are the checkpoint's."""
    path = model.get("pretrained_model_path")
    if isinstance(path, Scalar) and path.value is not None:
        return True
    restored = doc.get("pretrained_checkpoint")
    return isinstance(restored, Mapping) and "restore_from_path" in restored.items and not (
        {"tensor_model_parallel_size", "pipeline_model_parallel_size"} <= set(model.items))


def _declared_global_batch(model: Mapping) -> Optional[Fact]:
    """model.global_batch_size; 0 declares none: NeMo-Aligner's serving configs write 0 "to disable
    checks" (examples/nlp/gpt/conf/inference_rm.yaml), which Megatron's microbatch calculator accepts
    (0 % (micro x dp) == 0)."""
    declared = model_number(model, "global_batch_size")
    return None if declared is not None and declared.known and declared.value == 0 else declared


def _context_parallel_split(model: Mapping, cp: Fact) -> tuple[Optional[Fact], Optional[Fact]]:
    """GPT pre-training cuts every sequence into 2 x cp chunks (megatron_gpt_model.py
    get_batch_on_this_context_parallel_rank); fine-tuning datasets pad to that
    multiple themselves, so only GPT-family (encoder_seq_length, not BERT)
    pre-training configs (no data.train_ds) are checked."""
    cp_size = cp.number
    if cp_size is None or cp_size <= 1 or not _gpt_pretraining(model):
        return None, None
    seq = _seq_length(model)
    if seq is None:
        return None, None
    multiple = Fact(2 * cp_size, "seq_length divisor", cp.span, Origin.DERIVED,
                    detail=f"2 x {cp.describe()}: each sequence is cut into 2 x cp chunks")
    return seq, multiple


def _gpt_pretraining(model: Mapping) -> bool:
    keys = set(model.items)
    return "encoder_seq_length" in keys and not keys & {"mcore_bert", "bert_binary_head"} and not isinstance(
        model.get("data", "train_ds"), Mapping
    )


def _seq_length(model: Mapping) -> Optional[Fact]:
    """model.data.seq_length when it is a number (often `${model.encoder_seq_length}`, read through),
    else model.encoder_seq_length when data.seq_length is not written."""
    data_seq = model.get("data", "seq_length")
    if isinstance(data_seq, Scalar) and isinstance(data_seq.value, int) and not isinstance(data_seq.value, bool):
        return number(data_seq, "model.data.seq_length")
    if data_seq is None:
        fact = model_number(model, "encoder_seq_length")
        return fact if fact is not None and fact.known else None
    return None
