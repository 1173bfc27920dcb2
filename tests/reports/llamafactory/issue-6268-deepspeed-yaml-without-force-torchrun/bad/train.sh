#!/bin/bash
llamafactory-cli train qwen_full_sft.yaml
