#!/bin/bash
MODEL=Qwen/Qwen2-VL-7B-Instruct
deepspeed_config=examples/deepspeed/ds_z3_config.json
output_dir=saves/qwen2_vl-7b/full/sft
per_device_train_batch_size=1
gradient_accumulation_steps=8

deepspeed --hostfile=/hostfile_remote \
    src/train.py \
    --deepspeed $deepspeed_config \
    --stage sft \
    --do_train \
    --model_name_or_path $MODEL \
    --dataset XXX_img,XXX_noimg \
    --template qwen2_vl \
    --finetuning_type full \
    --streaming True \
    --buffer_size 128 \
    --preprocessing_batch_size 128 \
    --dispatch_batches False \
    --output_dir $output_dir \
    --overwrite_cache \
    --overwrite_output_dir True \
    --warmup_ratio 0.01 \
    --weight_decay 0.1 \
    --adam_beta2 0.95 \
    --per_device_train_batch_size $per_device_train_batch_size \
    --gradient_accumulation_steps $gradient_accumulation_steps \
    --ddp_timeout 9000 \
    --learning_rate 5e-6 \
    --lr_scheduler_type cosine \
    --logging_steps 1 \
    --cutoff_len 10240 \
    --save_steps 2000 \
    --save_total_limit 3 \
    --plot_loss \
    --max_steps 6000 \
    --report_to 'wandb' \
    --bf16 True \
    --tf32 True
