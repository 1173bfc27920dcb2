"""Rules about LLaMA-Factory's configs (v0 and v1)."""
