#!/bin/bash
tune run --nproc_per_node 8 full_finetune_distributed --config 8B_full.yaml \
    dataset.packed=True
