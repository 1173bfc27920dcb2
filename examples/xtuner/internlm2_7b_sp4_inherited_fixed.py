# The same child, correct: what the base computed from sequence_parallel_size
# is set again for sp=4, so the global batch is 1 x 64 x (32 / 4) = 512
# sequences, as at sp=1, and the sampler splits by data-parallel rank.
# batchlint: world-size=32
from mmengine.config import read_base

with read_base():
    from ._base_.internlm2_7b_qlora_sft import *

# parallel
sequence_parallel_size = 4

accumulative_counts *= sequence_parallel_size
optim_wrapper.accumulative_counts = accumulative_counts
train_dataloader.sampler.type = SequenceParallelSampler
