# The same config, correct: accumulation scales with sequence parallelism, so
# the global batch is 1 x 64 x (32 / 4) = 512 sequences, as at sp=1.
# batchlint: world-size=32
from mmengine.dataset import DefaultSampler
from mmengine.optim import AmpOptimWrapper
from torch.optim import AdamW
from xtuner.dataset import process_hf_dataset
from xtuner.dataset.collate_fns import default_collate_fn
from xtuner.parallel.sequence import SequenceParallelSampler

max_length = 32768
pack_to_max_length = True

# parallel
sequence_parallel_size = 4

batch_size = 1  # per_device
accumulative_counts = 16  # tuned at sp=1
accumulative_counts *= sequence_parallel_size
lr = 2e-4

train_dataset = dict(
    type=process_hf_dataset,
    max_length=max_length,
    pack_to_max_length=pack_to_max_length,
)
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(
    batch_size=batch_size,
    dataset=train_dataset,
    sampler=dict(type=sampler, shuffle=True),
    collate_fn=dict(type=default_collate_fn),
)
optim_wrapper = dict(
    type=AmpOptimWrapper,
    optimizer=dict(type=AdamW, lr=lr),
    accumulative_counts=accumulative_counts,
    dtype="bfloat16",
)
