#!/bin/bash
# LoRA SFT of Qwen3-4B from LLaMA-Factory's examples/ folder, with an evaluation split
# and the best checkpoint kept at the end.
CUDA_VISIBLE_DEVICES=0 llamafactory-cli train \
    --stage sft \
    --do_train \
    --model_name_or_path /models/Qwen3-4B \
    --dataset alpaca_zh_demo \
    --dataset_dir ../data \
    --template qwen3 \
    --finetuning_type lora \
    --output_dir ../saves/qwen3-4b/lora/sft \
    --overwrite_cache \
    --overwrite_output_dir \
    --cutoff_len 1024 \
    --preprocessing_num_workers 16 \
    --per_device_train_batch_size 2 \
    --per_device_eval_batch_size 1 \
    --gradient_accumulation_steps 8 \
    --lr_scheduler_type cosine \
    --logging_steps 50 \
    --warmup_steps 20 \
    --save_steps 100 \
    --eval_steps 50 \
    --eval_strategy steps \
    --load_best_model_at_end \
    --learning_rate 5e-5 \
    --num_train_epochs 5.0 \
    --max_samples 1000 \
    --val_size 0.1 \
    --plot_loss \
    --fp16
