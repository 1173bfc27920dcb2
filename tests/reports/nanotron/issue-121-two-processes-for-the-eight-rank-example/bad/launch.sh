#!/bin/bash
torchrun --nproc_per_node=2 run_train.py --config-file examples/config_tiny_llama.yaml
