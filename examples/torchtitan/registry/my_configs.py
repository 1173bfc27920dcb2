# A module of TorchTitan configs (after v0.2.2), in the shape of torchtitan_recipes/*.py:
# each function returns a whole Trainer.Config; `--module ... --config NAME` picks one.
from torchtitan.components.checkpointer import CheckpointManager
from torchtitan.components.optimizer import default_adamw
from torchtitan.config import ParallelismConfig, TrainingConfig
from torchtitan.models.llama3 import model_registry
from torchtitan.trainer import Trainer


def llama3_8b_base() -> Trainer.Config:
    return Trainer.Config(
        hf_assets_path="./assets/hf/Llama-3.1-8B",
        model_spec=model_registry("8B"),
        optimizer=default_adamw(lr=3e-4),
        training=TrainingConfig(
            num_tokens_per_microbatch_per_dp_rank=2 * 8192,
            max_context_length=8192,
            steps=1000,
        ),
        checkpoint=CheckpointManager.Config(interval=500),
    )


def llama3_8b_accum() -> Trainer.Config:
    # 100000 tokens is no whole number of 16384-token micro-steps: refused on any number of GPUs.
    config = llama3_8b_base()
    config.training.num_tokens_per_train_step = 100000
    return config


def llama3_8b_accum_fixed() -> Trainer.Config:
    config = llama3_8b_base()
    config.training.num_tokens_per_train_step = 131072
    return config


def llama3_8b_tp4_cp2() -> Trainer.Config:
    # Sequence parallelism splits each micro-batch's tokens by tp 4, load-balanced context
    # parallelism by 2 x cp 2: 16376 tokens is no multiple of 16.
    config = llama3_8b_base()
    config.training.num_tokens_per_microbatch_per_dp_rank = 8 * 2047
    config.parallelism = ParallelismConfig(tensor_parallel_degree=4, context_parallel_degree=2)
    return config


def llama3_8b_tp4_cp2_fixed() -> Trainer.Config:
    config = llama3_8b_base()
    config.training.num_tokens_per_microbatch_per_dp_rank = 8 * 2048
    config.parallelism = ParallelismConfig(tensor_parallel_degree=4, context_parallel_degree=2)
    return config


def llama3_8b_tp2() -> Trainer.Config:
    config = llama3_8b_base()
    config.parallelism.tensor_parallel_degree = 2
    return config
