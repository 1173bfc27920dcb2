NPROC_PER_NODE=8 \
swift rlhf \
    --rlhf_type gkd \
    --model Qwen/Qwen3-8B \
    --teacher_model Qwen/Qwen3-32B \
    --train_type full \
    --dataset data/train.jsonl \
    --torch_dtype bfloat16 \
    --per_device_train_batch_size 1 \
    --gradient_accumulation_steps 4 \
    --max_length 32768 \
    --sequence_parallel_size 4 \
    --attn_impl flash_attn \
    --deepspeed zero3 \
    --output_dir output
