#!/bin/bash
# In the shape of nanotron's README launch line: 8 GPUs on one node.
set -e -x
CONFIG_FILE=${CONFIG_FILE:-"examples/nanotron/config_llama_pp_fixed.yaml"}

export CUDA_DEVICE_MAX_CONNECTIONS=1
torchrun --nproc_per_node=8 run_train.py --config-file ${CONFIG_FILE}
