"""Rules about axolotl's configs."""
