#!/usr/bin/bash
# Run on each of the 2 nodes (NODE_RANK 0 and 1), 8 GPUs per node.
set -ex

NGPU=${NGPU:-"8"}
NNODES=${NNODES:-"2"}
NODE_RANK=${NODE_RANK:-"0"}
MASTER_ADDR=${MASTER_ADDR:-"node0"}
CONFIG_FILE=${CONFIG_FILE:-"./torchtitan/models/llama/train_configs/llama3_8b_tp16.toml"}

overrides=""
if [ $# -ne 0 ]; then
    overrides="$*"
fi

PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True" \
torchrun --nnodes=${NNODES} --nproc_per_node=${NGPU} --node_rank=${NODE_RANK} \
--rdzv_backend c10d --rdzv_endpoint="${MASTER_ADDR}:29500" \
--local-ranks-filter 0 --role rank --tee 3 \
torchtitan/train.py --job.config_file ${CONFIG_FILE} $overrides
