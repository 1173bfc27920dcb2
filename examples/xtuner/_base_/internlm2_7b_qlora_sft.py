# The base the two internlm2_7b_sp4_inherited* configs build on, in the shape of
# the upstream QLoRA configs: clean on its own (sp=1, accumulation and sampler
# derived from sequence_parallel_size, as XTuner's guide writes them).
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
sequence_parallel_size = 1

batch_size = 1  # per_device
accumulative_counts = 16
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
