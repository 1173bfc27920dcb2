#!/bin/bash
tune run --nnodes 1 --nproc_per_node 2 lora_dpo_distributed --config 8B_lora_dpo.yaml
