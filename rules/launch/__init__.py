"""Rules about launch scripts themselves (shell line continuations, variables, override keys)."""
