#!/bin/bash
# 4 nodes x 8 GPUs, sequence parallel 4 (set in the config): dp = 32 / 4 = 8.
NPROC_PER_NODE=8 NNODES=4 xtuner train examples/xtuner/internlm2_7b_sp4_sft_fixed.py --deepspeed deepspeed_zero2
