"""Rules about TRL's trainer arguments."""
