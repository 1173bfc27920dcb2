"""Rules about TorchTitan's TOML configs and config registries."""
