"""Rules about Megatron-LM's arguments."""
