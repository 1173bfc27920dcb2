#!/usr/bin/bash
set -ex

NGPU=${NGPU:-"2"}
LOG_RANK=${LOG_RANK:-0,1}
CONFIG_FILE=${CONFIG_FILE:-"./train_configs/debug_model_pp2.toml"}

overrides=""
if [ $# -ne 0 ]; then
    overrides="$*"
fi

torchrun --nproc_per_node=${NGPU} --rdzv_backend c10d --rdzv_endpoint="localhost:0" \
--local-ranks-filter ${LOG_RANK} --role rank --tee 3 \
train.py --job.config_file ${CONFIG_FILE} $overrides
