"""batchlint: static checks for the batch arithmetic of distributed-training configs."""

__version__ = "0.1.0"
