"""Rules about accelerate's launcher configs and the DeepSpeed plugin they build."""
