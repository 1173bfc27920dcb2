#!/bin/bash
llamafactory-cli train qwen2_5vl_full_sft.yaml
