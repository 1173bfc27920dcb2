#!/bin/bash
torchrun --nproc_per_node=8 run_train.py --config-file examples/config_tiny_llama.yaml
