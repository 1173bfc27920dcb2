#!/bin/bash
tune run --nproc_per_node 4 full_finetune_distributed --config 7B_full_fp16.yaml
