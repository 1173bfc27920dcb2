#!/bin/bash
python3 -m verl.trainer.main_ppo \
    actor_rollout_ref.rollout.tensor_model_parallel_size=1 \
    actor_rollout_ref.rollout.data_parallel_size=2 \
    trainer.n_gpus_per_node=2 \
    trainer.nnodes=1
