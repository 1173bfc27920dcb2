#!/bin/bash
# In the shape of TorchTitan's run_train.sh: NGPU defaults to 8.
set -ex
NGPU=${NGPU:-"8"}
CONFIG_FILE=${CONFIG_FILE:-"examples/torchtitan/llama3_8b_fixed.toml"}

torchrun --nproc_per_node=${NGPU} --rdzv_backend c10d --rdzv_endpoint="localhost:0" \
    --local-ranks-filter 0 --role rank --tee 3 \
    -m torchtitan.train --job.config_file ${CONFIG_FILE} "$@"
