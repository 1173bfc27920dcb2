"""Rules about NeMo's configs."""
