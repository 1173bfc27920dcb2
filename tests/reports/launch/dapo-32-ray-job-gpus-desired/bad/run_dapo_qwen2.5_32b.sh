#!/usr/bin/env bash
set -euxo pipefail

NNODES=${NNODES:-4}
WORKING_DIR=${WORKING_DIR:-"${PWD}"}
RUNTIME_ENV=${RUNTIME_ENV:-"./verl/trainer/runtime_env.yaml"}

ray job submit --no-wait --runtime-env="${RUNTIME_ENV}" \
    --working-dir "${WORKING_DIR}" \
    -- python3 -m recipe.dapo.src.main_dapo \
    data.prompt_key=prompt \
    data.truncation=left \
    data.max_prompt_length=2048 \
    data.max_response_length=20480 \
    data.gen_batch_size=96 \
    data.train_batch_size=32 \
    actor_rollout_ref.rollout.n=16 \
    algorithm.adv_estimator=grpo \
    actor_rollout_ref.actor.use_dynamic_bsz=True \
    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=22528 \
    actor_rollout_ref.rollout.tensor_model_parallel_size=4 \
    trainer.n_gpus_per_node=8 \
    trainer.nnodes="${NNODES}"
