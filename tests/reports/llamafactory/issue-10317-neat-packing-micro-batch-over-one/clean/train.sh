#!/bin/bash
llamafactory-cli train qwen3_full_sft.yaml
