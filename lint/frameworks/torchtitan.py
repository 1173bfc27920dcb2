"""TorchTitan TOML (up to v0.2.2).

dp = data_parallel_replicate_degree x data_parallel_shard_degree, where a
shard degree of -1 takes the ranks left over: W // (dp_rep x cp x tp x pp)
(torchtitan/distributed/parallel_dims.py). The global batch must divide by
local_batch_size x dp; gradient accumulation is derived from it
(torchtitan/train.py). `training.batch_size` is the name before PR #1238.

The TorchTitan rules (rules/torchtitan_*.py) share the helpers at the end of
this module: the v0.2.2 key set, the resolved shard degree, the model name.
"""

from __future__ import annotations

from ..document import Document, Mapping, Scalar
from ..plan import Fact, Origin, TrainingPlan
from .facts import Outside, number
from .spec import Count, Framework, Launcher

NAME = "torchtitan"
FORMATS = ("toml",)
MARKERS = (b"[training]", b"[parallelism]")

# run_train.sh: NGPU=${NGPU:-"8"} torchrun --nproc_per_node=${NGPU} -m torchtitan.train "$@".
LAUNCHERS = (Launcher("run_train.sh", commands=("run_train.sh",), markers=(b"run_train.sh",),
                      nproc=Count(env=("NGPU",), default=8, source='run_train.sh: NGPU=${NGPU:-"8"}')),)
FRAMEWORK = Framework(NAME, FORMATS, MARKERS, order=30, launchers=LAUNCHERS)

_DEGREES = {
    "dp_replicate": "data_parallel_replicate_degree",
    "dp_shard": "data_parallel_shard_degree",
    "tp": "tensor_parallel_degree",
    "pp": "pipeline_parallel_degree",
    "cp": "context_parallel_degree",
    "ep": "expert_parallel_degree",
    "etp": "expert_tensor_parallel_degree",
}


def plan(doc: Document, outside: Outside):
    training = doc.get("training")
    parallelism = doc.get("parallelism")
    if not isinstance(training, Mapping) and not isinstance(parallelism, Mapping):
        return None
    training = training if isinstance(training, Mapping) else Mapping()
    parallelism = parallelism if isinstance(parallelism, Mapping) else Mapping()

    local_key = "local_batch_size" if "local_batch_size" in training.items else "batch_size"
    parallel = {
        short: number(parallelism.get(key), f"[parallelism] {key}", default=-1 if short == "dp_shard" else 1)
        for short, key in _DEGREES.items()
    }
    plan = TrainingPlan(
        framework=NAME,
        document=doc,
        micro_batch=number(training.get(local_key), f"[training] {local_key}", default=8),
        world_size=outside.world_size,
        target_global_batch=outside.target_global_batch,
        parallel=parallel,
        seq_len=number(training.get("seq_len"), "[training] seq_len", default=2048),
        derived_from_global="grad_accum",
    )
    declared = number(training.get("global_batch_size"), "[training] global_batch_size")
    if declared is not None and not (declared.known and declared.value < 0):
        plan.declared_global_batch = declared  # -1 means local x dp: nothing declared
    plan.layout = tuple(parallel[k] for k in ("dp_replicate", "dp_shard", "cp", "tp", "pp"))
    plan.seq_len_multiple = _seq_len_multiple(doc, parallel)
    plan.data_parallel = _data_parallel(parallel, outside.world_size)
    if plan.data_parallel is None and parallel["dp_replicate"].positive:
        plan.data_parallel_factor = parallel["dp_replicate"]
    if plan.declared_global_batch is None and plan.data_parallel and plan.micro_batch.known:
        # No global batch given: TorchTitan trains with local x dp and no accumulation.
        plan.grad_accum = Fact(1, "gradient accumulation", None, Origin.DERIVED, detail="no global_batch_size")
    return plan


# Models whose parallelize function asserts seq_len % parallel_dims.seq_len_divisor (v0.2.2):
# models/{llama3,llama4,qwen3,deepseek_v3,gpt_oss}/infra/parallelize.py, llama3_ft (llama3's),
# experiments/{vlm,transformers_modeling_backend}/infra/parallelize.py, experiments/simple_fsdp/*.
_SEQ_LEN_CHECKED = {
    "llama3", "llama3_ft", "llama4", "qwen3", "deepseek_v3", "gpt_oss", "transformers_modeling_backend", "vlm",
    "simple_fsdp.llama3", "simple_fsdp.deepseek_v3",
}


def _seq_len_multiple(doc: Document, parallel: dict):
    """tp x 2 x cp: sequence parallelism splits by tp, load-balanced context parallelism by 2 x cp."""
    tp, cp = parallel["tp"], parallel["cp"]
    if not (model_name(doc) in _SEQ_LEN_CHECKED and tp.known and cp.known):
        return None
    return Fact(tp.value * 2 * cp.value, "seq_len divisor", tp.span or cp.span, Origin.DERIVED,
                detail=f"tensor_parallel_degree {tp.value} x 2 x context_parallel_degree {cp.value}")


def _data_parallel(parallel: dict, world):
    replicate = parallel["dp_replicate"]
    shard = resolved_shard(parallel, world)
    if shard is None or not replicate.positive:
        return None  # a degree below 1 is BL211's finding, not a dp
    if parallel["dp_shard"].value != -1:
        return Fact(replicate.value * shard, "dp", None, Origin.DERIVED,
                    detail=f"{replicate.describe()} x {parallel['dp_shard'].describe()}")
    shown = f"dp_shard -1 resolved to W ({world.value}) // {world.value // shard} = {shard}"
    return Fact(replicate.value * shard, "dp", None, Origin.DERIVED, detail=shown)


# --------------------------------------------------------------------------- shared with the rules


def model_name(doc: Document):
    """`[model] name` as written (TorchTitan's default is "llama3"), or None if not a plain string."""
    name = doc.get("model", "name")
    if name is None:
        return "llama3"
    return name.value if isinstance(name, Scalar) and isinstance(name.value, str) else None


# Models whose TrainSpec has no pipelining_fn: train.py:218-223 raises when pp > 1
# (models/{flux,qwen3,gpt_oss}/__init__.py, experiments/vlm/__init__.py @ v0.2.2).
WITHOUT_PIPELINING = {"flux", "qwen3", "gpt_oss", "vlm"}


def pipelining_refused(doc: Document) -> bool:
    """True when the model cannot be pipelined, so pp > 1 fails before any schedule is built."""
    return model_name(doc) in WITHOUT_PIPELINING


def resolved_shard(parallel: dict, world) -> "int | None":
    """The shard degree TorchTitan runs with: as written, or the ranks left over
    for -1 when W is known (parallel_dims.py:49-50); None when it cannot be known
    or the layout does not fit W (that is the layout rule's finding)."""
    shard = parallel["dp_shard"]
    if not shard.known:
        return None
    if shard.value != -1:
        return shard.value if shard.value >= 1 else None
    others = [parallel[k] for k in ("dp_replicate", "cp", "tp", "pp")]
    if world is None or not world.known or not all(f.known and f.value >= 1 for f in others):
        return None
    product = 1
    for f in others:
        product *= f.value
    if world.value % product or world.value < product:
        return None
    return world.value // product


def parallelism_value(doc: Document, key: str, default):
    """A `[parallelism]` value: (value, node); the default when not written."""
    node = doc.get("parallelism", key)
    if node is None:
        return default, None
    return (node.value if isinstance(node, Scalar) else None), node


def custom_config_module(doc: Document) -> bool:
    """`[job] custom_config_module` merges a user JobConfig into TorchTitan's
    (config/manager.py:86-116): any section may then hold keys batchlint cannot know."""
    module = doc.get("job", "custom_config_module")
    return module is not None and not (isinstance(module, Scalar) and module.value == "")


# Every section and key TorchTitan v0.2.2 accepts in a TOML file: the fields of
# JobConfig and its nested dataclasses (torchtitan/config/job_config.py), which
# ConfigManager._dict_to_dataclass checks, rejecting any other name
# (torchtitan/config/manager.py:160-171). A nested dict is a nested dataclass.
_DATALOADER = {"num_workers": None, "persistent_workers": None, "pin_memory": None, "prefetch_factor": None}


def _keys(*names: str, **nested) -> dict:
    return {**dict.fromkeys(names), **nested}


JOB_CONFIG_KEYS = {
    "job": _keys("config_file", "dump_folder", "description", "print_config", "save_config_file", "custom_config_module"),
    "profiling": _keys("enable_profiling", "save_traces_folder", "profile_freq", "profiler_active", "profiler_warmup",
                       "enable_memory_snapshot", "save_memory_snapshot_folder"),
    "metrics": _keys("log_freq", "enable_tensorboard", "disable_color_printing", "save_tb_folder", "save_for_all_ranks",
                     "enable_wandb"),
    "model": _keys("name", "flavor", "hf_assets_path", "tokenizer_path", "converters", "print_after_conversion"),
    "optimizer": _keys("name", "lr", "beta1", "beta2", "eps", "weight_decay", "implementation", "early_step_in_backward"),
    "lr_scheduler": _keys("warmup_steps", "total_steps", "decay_ratio", "decay_type", "min_lr_factor"),
    "training": _keys("dataset", "dataset_path", "local_batch_size", "global_batch_size", "seq_len", "max_norm", "steps",
                      "enable_cpu_offload", "dtype", "mixed_precision_param", "mixed_precision_reduce", "gc_freq",
                      "gc_debug", dataloader=_DATALOADER),
    "parallelism": _keys(
        "data_parallel_replicate_degree", "data_parallel_shard_degree", "fsdp_reshard_after_forward",
        "tensor_parallel_degree", "disable_loss_parallel", "enable_async_tensor_parallel", "pipeline_parallel_degree",
        "module_fqns_per_model_part", "pipeline_parallel_first_stage_less_layers",
        "pipeline_parallel_last_stage_less_layers", "pipeline_parallel_layers_per_stage", "pipeline_parallel_schedule",
        "pipeline_parallel_schedule_csv", "pipeline_parallel_microbatch_size", "pipeline_parallel_expert_parallel_overlap",
        "context_parallel_degree", "context_parallel_load_balancer", "context_parallel_rotate_method",
        "expert_parallel_degree", "expert_tensor_parallel_degree", "expert_parallel_comm_backend"),
    "checkpoint": _keys(
        "enable", "enable_ft_dataloader_checkpoints", "folder", "interval", "initial_load_path", "initial_load_model_only",
        "initial_load_in_hf", "initial_load_in_hf_quantized", "last_save_model_only", "last_save_in_hf", "export_dtype",
        "async_mode", "keep_latest_k", "load_step", "exclude_from_loading", "enable_first_step_checkpoint",
        "create_seed_checkpoint", "load_only"),
    "activation_checkpoint": _keys(
        "mode", "selective_ac_option", "per_op_sac_force_recompute_mm_shapes_by_fqns", "early_stop", "memory_budget",
        "visualize_memory_budget_pareto", "preserve_rng_state", "determinism_check", "debug"),
    "compile": _keys("enable", "components", "backend"),
    "quantize": _keys(
        linear=_keys(
            float8=_keys("enable_fsdp_float8_all_gather", "precompute_float8_dynamic_scale_for_fsdp", "recipe_name",
                         "filter_fqns", "emulate"),
            mx=_keys("mxfp8_dim1_cast_kernel_choice", "recipe_name", "filter_fqns")),
        grouped_mm=_keys(float8=_keys("fqns"), mx=_keys("recipe_name", "fqns"))),
    "comm": _keys("init_timeout_seconds", "train_timeout_seconds", "trace_buf_size", "save_traces_folder",
                  "save_traces_file_prefix", "mode"),
    "memory_estimation": _keys("enable", "disable_fake_mode"),
    "fault_tolerance": _keys("enable", "process_group", "process_group_timeout_ms", "replica_id", "group_size",
                             "min_replica_size", "semi_sync_method"),
    "experimental": _keys("custom_import", "custom_args_module"),
    "validation": _keys("enable", "dataset", "dataset_path", "local_batch_size", "seq_len", "freq", "steps",
                        dataloader=_DATALOADER),
    "debug": _keys("seed", "deterministic", "deterministic_warn_only", "moe_force_load_balance"),
}
