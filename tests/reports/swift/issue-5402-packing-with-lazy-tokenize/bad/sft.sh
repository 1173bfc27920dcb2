NPROC_PER_NODE=8 \
swift sft \
    --model Qwen/Qwen2.5-7B-Instruct \
    --train_type full \
    --dataset data/train.jsonl \
    --torch_dtype bfloat16 \
    --per_device_train_batch_size 1 \
    --gradient_accumulation_steps 8 \
    --max_length 8192 \
    --packing true \
    --lazy_tokenize true \
    --attn_impl flash_attn \
    --output_dir output
