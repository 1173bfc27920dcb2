"""Rules about OpenRLHF's launch arguments."""
