# XTuner LLaVA-style config. FLAWED: packing makes every sequence the same
# length, so the LengthGroupedSampler has nothing to group (BL301).
from xtuner.dataset import LLaVADataset
from xtuner.dataset.samplers import LengthGroupedSampler

batch_size = 4
accumulative_counts = 4
llava_dataset = dict(type=LLaVADataset, max_length=2048, pack_to_max_length=True)
train_dataloader = dict(
    batch_size=batch_size,
    dataset=llava_dataset,
    sampler=dict(
        type=LengthGroupedSampler,
        length_property="modality_length",
        per_device_batch_size=batch_size * accumulative_counts,
    ),
)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
