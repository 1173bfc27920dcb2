# A child of _base_/internlm2_7b_qlora_sft.py that raises sequence parallelism
# to 4. FLAWED: mmengine builds the base on its own, so its
# `accumulative_counts *= sequence_parallel_size` and its sampler choice ran at
# the base's sp=1: optim_wrapper keeps 16 (the global batch is 4x smaller than
# at sp=1, BL101) and the sampler stays DefaultSampler (BL201). Both findings
# point at the base's lines, with a note here.
# batchlint: world-size=32
from mmengine.config import read_base

with read_base():
    from ._base_.internlm2_7b_qlora_sft import *

# parallel
sequence_parallel_size = 4
