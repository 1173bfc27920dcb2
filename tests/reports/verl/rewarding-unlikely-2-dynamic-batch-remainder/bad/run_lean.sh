#!/bin/bash
python3 -m verl.trainer.main_lean \
    data.train_batch_size=64 \
    actor_rollout_ref.actor.ppo_mini_batch_size=64 \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 \
    actor_rollout_ref.rollout.n=8 \
    trainer.n_gpus_per_node=8 \
    trainer.nnodes=1
