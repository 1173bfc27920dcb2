#!/usr/bin/bash
# On a branch whose parallelize_llama.py was edited to apply DDP (replicate) together with TP.
NGPU=${NGPU:-"8"}
CONFIG_FILE=${CONFIG_FILE:-"./train_configs/debug_model.toml"}
torchrun --nproc_per_node=${NGPU} --rdzv_backend c10d --rdzv_endpoint="localhost:0" \
train.py --job.config_file ${CONFIG_FILE} "$@"
