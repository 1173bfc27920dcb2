#!/bin/bash
# ms-swift on 8 GPUs: 1 x 16 x 8 = 128 sequences per step.
NPROC_PER_NODE=8 \
swift sft \
    --config examples/swift/qwen2_5_sft_fixed.yaml
