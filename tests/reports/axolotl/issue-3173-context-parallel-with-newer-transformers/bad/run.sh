axolotl train examples/distributed-parallel/qwen3-8b-fsdp-tp-cp.yaml
