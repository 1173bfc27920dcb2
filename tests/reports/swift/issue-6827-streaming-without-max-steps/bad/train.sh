torchrun \
    --nproc_per_node 8 \
    swift/cli/sft.py \
    --model gme \
    --train_type lora \
    --max_length 2048 \
    --dataset data \
    --num_train_epochs 1 \
    --per_device_train_batch_size 64 \
    --gradient_accumulation_steps 2 \
    --deepspeed zero2 \
    --task_type embedding \
    --loss_type infonce \
    --attn_impl flash_attn \
    --streaming true \
    --max_epochs 1
