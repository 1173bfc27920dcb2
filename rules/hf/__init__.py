"""Rules about the Hugging Face Trainer's own arguments, for every framework built on it."""
