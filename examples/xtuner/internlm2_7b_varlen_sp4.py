# XTuner v0.1 long-context SFT with variable-length attention and sequence
# parallelism 4, in the shape of the upstream
# internlm2_7b_full_finetune_custom_dataset_e1_sequence_parallel_4.py.
# FLAWED: batch_size was raised to 2 to fill the GPUs, but varlen attention
# takes one packed sequence per device: `xtuner train` refuses it (BL130).
# batchlint: world-size=32
from datasets import load_dataset
from mmengine.optim import AmpOptimWrapper
from torch.optim import AdamW
from torch.utils.data import BatchSampler
from transformers import AutoModelForCausalLM, AutoTokenizer
from xtuner.dataset import process_hf_dataset
from xtuner.dataset.collate_fns import default_collate_fn
from xtuner.dataset.samplers import InternRepoSampler
from xtuner.model import SupervisedFinetune

pretrained_model_name_or_path = "internlm/internlm2-7b"
use_varlen_attn = True

max_length = 32768
pack_to_max_length = True

# parallel
sequence_parallel_size = 4

batch_size = 2  # per_device
accumulative_counts = 1
accumulative_counts *= sequence_parallel_size

tokenizer = dict(type=AutoTokenizer.from_pretrained, pretrained_model_name_or_path=pretrained_model_name_or_path)
model = dict(
    type=SupervisedFinetune,
    use_varlen_attn=use_varlen_attn,
    llm=dict(type=AutoModelForCausalLM.from_pretrained, pretrained_model_name_or_path=pretrained_model_name_or_path),
)
train_dataset = dict(
    type=process_hf_dataset,
    use_varlen_attn=use_varlen_attn,
    dataset=dict(type=load_dataset, path="json", data_files=["/path/to/file.json"]),
    tokenizer=tokenizer,
    max_length=max_length,
    pack_to_max_length=pack_to_max_length,
)
train_dataloader = dict(
    batch_size=batch_size,
    dataset=train_dataset,
    sampler=dict(type=InternRepoSampler, shuffle=True, seed=1024),
    batch_sampler=dict(type=BatchSampler, drop_last=True, batch_size=batch_size),
    collate_fn=dict(type=default_collate_fn, use_varlen_attn=use_varlen_attn),
)
optim_wrapper = dict(
    type=AmpOptimWrapper,
    optimizer=dict(type=AdamW, lr=4e-5),
    accumulative_counts=accumulative_counts,
    dtype="bfloat16",
)
