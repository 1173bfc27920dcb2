#!/bin/bash
# batchlint: world-size=16
set -euo pipefail

NNODES=${NNODES:-2}
NPROC_PER_NODE=8
GPUS=$((NPROC_PER_NODE * NNODES))
MASTER_PORT=${MASTER_PORT:-29500}
export CUDA_DEVICE_MAX_CONNECTIONS=1
args=(--micro-batch-size 2 --global-batch-size 512 --tensor-model-parallel-size 4)
args+=(--pipeline-model-parallel-size 2 --context-parallel-size 2 --seq-length 4096 --sequence-parallel)

torchrun --nproc_per_node $NPROC_PER_NODE --nnodes $NNODES --master_port $MASTER_PORT \
    pretrain_gpt.py "${args[@]}" --bf16

NPROC_PER_NODE=4 NNODES=1 swift sft --config swift_sft.yaml \
    --per_device_train_batch_size 2 --gradient_accumulation_steps 4 --sequence_parallel_size 2

deepspeed --num_gpus 8 train.py --deepspeed ds_zero3.json --per_device_train_batch_size 4

accelerate launch --num_processes 8 --config_file fsdp.yaml sft.py --config trl_sft.yaml

tune run --nproc_per_node 4 full_finetune_distributed --config torchtune_full.yaml batch_size=4

python3 -m verl.trainer.main_ppo --config-name verl_ppo data.train_batch_size=512 \
    trainer.n_gpus_per_node=8 trainer.nnodes=1 actor_rollout_ref.actor.ppo_mini_batch_size=64 \
    actor_rollout_ref.rollout.n=4

NGPU=8 ./run_train.sh --job.config_file llama3_8b_titan.toml --parallelism.tensor_parallel_degree 2 \
    --training.local_batch_size 2

NPROC_PER_NODE=$GPUS xtuner train xtuner_qlora_sp.py --deepspeed deepspeed_zero2

FORCE_TORCHRUN=1 NPROC_PER_NODE=8 llamafactory-cli train llamafactory_sft.yaml per_device_train_batch_size=2
