#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py \
    --tensor-model-parallel-size 2 \
    --context-parallel-size 2 \
    --num-layers 32 \
    --hidden-size 4096 \
    --num-attention-heads 32 \
    --seq-length 4096 \
    --max-position-embeddings 4096 \
    --micro-batch-size 1 \
    --global-batch-size 32 \
    --bf16
