#!/bin/bash
# Multi-node video-token GPT: seq-length 50016 (a multiple of tp 4), sequence parallel.
torchrun --nnodes 4 --nproc_per_node 8 pretrain_gpt.py \
    --tensor-model-parallel-size 4 \
    --sequence-parallel \
    --num-layers 24 \
    --hidden-size 2048 \
    --num-attention-heads 16 \
    --seq-length 50016 \
    --max-position-embeddings 50016 \
    --micro-batch-size 1 \
    --global-batch-size 64 \
    --bf16
