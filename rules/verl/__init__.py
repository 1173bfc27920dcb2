"""Rules about verl's PPO and SFT trainer configs."""
