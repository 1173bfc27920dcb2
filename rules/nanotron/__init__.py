"""Rules about nanotron's configs."""
