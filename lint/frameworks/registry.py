"""The adapter registry: each module of this package that declares `FRAMEWORK`, with what the engine
needs to pick it without importing it: its framework"s name, the formats it reads, its order (the first
adapter that recognises a file takes it), the markers a file of it holds, whether it reads job files, and
each launcher"s (commands, modules, scripts, markers). A lint imports only the adapters a file may be
read by, and a launcher"s framework only when a command may be its.

Hand-written, as rules/registry.py is: tests/test_registry.py checks every row against its module"s
FRAMEWORK, and that every module declaring one has a row; `tools/new_framework.py` adds one.
"""

# module: (framework, formats, order, markers, reads job files, launchers)
ADAPTERS = {
    "accelerate": ("accelerate-config", ("yaml", "json"), 900, (b"distributed_type",), False, ()),
    "axolotl": ("axolotl", ("yaml",), 50, (b"base_model",), False, ()),
    "deepspeed": ("deepspeed", ("json",), 40,
        (b"train_batch_size", b"train_micro_batch_size_per_gpu", b"zero_optimization", b"steps_per_print",
         b"gradient_clipping", b"zero_allow_untested_optimizer"),
        False, ()),
    "easyr1": ("easyr1", ("yaml",), 65,
        (b"rollout_batch_size", b"global_batch_size", b"micro_batch_size_per_device", b"ulysses_size"), False,
        (((), ("verl.trainer.main",), (), (b"verl.trainer.main",)),)),
    "hf": ("transformers", ("yaml", "json"), 1000,
        (b"per_device_train_batch_size", b"gradient_accumulation_steps", b"group_by_length", b"packing",
         b"train_sampling_strategy"),
        False, (((), ("*",), ("*.py",), (b"per_device_train_batch_size",)),)),
    "llamafactory": ("llamafactory", ("yaml", "json"), 100,
        (b"per_device_train_batch_size", b"gradient_accumulation_steps", b"group_by_length", b"packing",
         b"train_sampling_strategy", b"micro_batch_size", b"global_batch_size"),
        False,
        ((("llamafactory-cli",), (), (), (b"llamafactory-cli",)),
         ((), ("llamafactory.launcher",), ("*.py",), (b"--stage",)))),
    "llmfoundry": ("llm-foundry", ("yaml",), 40, (b"global_train_batch_size", b"device_train_microbatch_size"), False,
        (((), (), ("train.py",), (b"composer",)),)),
    "megatron": ("megatron", ("yaml",), 90,
        (b"micro-batch-size", b"tensor-model-parallel-size", b"global-batch-size", b"pipeline-model-parallel-size"),
        False, (((), (), ("pretrain_*",), (b"pretrain_",)), ((), (), ("*.py",), (b"micro-batch-size",)))),
    "nanotron": ("nanotron", ("yaml",), 35, (b"batch_accumulation_per_replica",), False,
        (((), (), ("run_train.py", "train_*.py"), (b"--config-file",)),)),
    "nemo": ("nemo", ("yaml",), 80,
        (b"tensor_model_parallel_size", b"global_batch_size", b"micro_batch_size", b"pipeline_model_parallel_size",
         b"train_ds"),
        False, ()),
    "openrlhf": ("openrlhf", ("yaml",), 5, (b"openrlhf.cli",), False,
        (((), ("openrlhf.cli.train_*",), (), (b"openrlhf.cli",)),
         ((), (), ("train_sft.py", "train_dpo.py", "train_rm.py", "train_ppo.py", "train_ppo_ray.py"),
          (b"--micro_train_batch_size",)))),
    "skypilot": ("skypilot", ("yaml",), 950, (b"run:",), True, ()),
    "swift": ("swift", ("yaml", "json"), 110,
        (b"per_device_train_batch_size", b"gradient_accumulation_steps", b"group_by_length", b"packing",
         b"train_sampling_strategy", b"micro_batch_size", b"global_batch_size"),
        False,
        ((("swift",), (), (), (b"swift",)), (("megatron",), (), (), (b"megatron",)),
         ((), ("swift.cli.*",), ("swift/cli/*.py",), (b"swift.cli", b"swift/cli")))),
    "torchtitan": ("torchtitan", ("toml", "python"), 30,
        (b"[training]", b"[parallelism]", b"Trainer.Config", b"TrainingConfig("), False,
        ((("run_train.sh",), (), (), (b"run_train.sh",)), ((), ("torchtitan.train",), (), (b"torchtitan.train",)),
         ((), (), ("train.py",), (b"job.config_file",)))),
    "torchtune": ("torchtune", ("yaml",), 60, (b"_component_",), False, ((("tune",), (), (), (b"tune",)),)),
    "verl": ("verl", ("yaml",), 70, (b"actor_rollout_ref", b"partial_pretrain"), False,
        (((), ("verl.trainer.main_*",), (), (b"verl.trainer",)),
         ((), ("verl.trainer.fsdp_sft_trainer", "verl.trainer.sft_trainer"), (), (b"verl.trainer",)))),
    "xtuner": ("xtuner", ("python",), 20, (b"train_dataloader", b"accumulative_counts", b"_base_", b"read_base"), False,
        ((("xtuner",), (), (), (b"xtuner",)),)),
    "xtuner_v1": ("xtuner-v1", ("python",), 10, (b"xtuner.v1",), False, ()),
}
