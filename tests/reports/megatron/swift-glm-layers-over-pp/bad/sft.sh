#!/bin/bash
# ms-swift's Megatron-LM training of GLM-4.5-Air (its layer count is in the checkpoint's config).
NPROC_PER_NODE=8 NNODES=16 \
megatron sft \
    --load ZhipuAI/GLM-4.5-Air-Base-mcore \
    --dataset swift/Chinese-Qwen3-235B-2507-Distill-data-110k-SFT \
    --tensor_model_parallel_size 8 \
    --pipeline_model_parallel_size 4 \
    --context_parallel_size 1 \
    --expert_tensor_parallel_size 1 \
    --expert_model_parallel_size 16 \
    --micro_batch_size 2 \
    --global_batch_size 16 \
    --packing true \
    --max_length 4096 \
    --sequence_parallel true \
    --save GLM-4.5-Air-Base
