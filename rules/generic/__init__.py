"""Rules about the batch facts every adapter fills: they judge any framework whose plans hold what they need."""
