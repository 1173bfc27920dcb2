"""Rules about EasyR1's configs (a verl fork) and the verl settings they share."""
