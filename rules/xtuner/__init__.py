"""Rules about XTuner's configs (mmengine Python configs and XTuner v1)."""
