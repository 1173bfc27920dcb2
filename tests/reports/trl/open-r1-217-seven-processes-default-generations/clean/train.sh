#!/bin/bash
# 8 GPUs: one serves vLLM, the others train
ACCELERATE_LOG_LEVEL=info accelerate launch --config_file recipes/accelerate_configs/zero3.yaml --num_processes=7 src/open_r1/grpo.py --config recipes/Qwen2.5-1.5B-Instruct/grpo/config_full.yaml
