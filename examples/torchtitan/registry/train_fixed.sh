#!/bin/bash
# 8 GPUs, tp 2: dp 4, 16384 x 4 = 65536 tokens a micro-step: one micro-step per optimizer step.
NGPU=8 MODULE=examples.torchtitan.registry.my_configs CONFIG=llama3_8b_tp2 ./run_train.sh \
    --training.num_tokens_per_train_step 65536
