#!/bin/bash
FORCE_TORCHRUN=1 llamafactory-cli train qwen_full_sft.yaml
