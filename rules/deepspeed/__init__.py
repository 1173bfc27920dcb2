"""Rules about DeepSpeed's JSON configs."""
