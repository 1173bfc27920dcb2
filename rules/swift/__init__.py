"""Rules about ms-swift's arguments (its Trainer and its Megatron backend)."""
