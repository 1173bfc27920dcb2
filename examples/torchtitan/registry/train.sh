#!/bin/bash
# In the shape of TorchTitan's README: run_train.sh (NGPU, MODULE, CONFIG) picks a config function.
# 16 GPUs, tp 2: dp 8, so one micro-step takes 16384 x 8 = 131072 tokens, more than the step's 65536.
NGPU=16 MODULE=examples.torchtitan.registry.my_configs CONFIG=llama3_8b_tp2 ./run_train.sh \
    --training.num_tokens_per_train_step 65536
