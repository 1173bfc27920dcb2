#!/bin/bash
# Long-context DPO, sequence parallel size 8; PRETRAIN_MODEL, data_path, output_dir, per_node_bsz and
# gradient_accumulation_steps are set by the job environment.

deepspeed --hostfile=/etc/mpi/hostfile \
swift/cli/rlhf.py \
    --rlhf_type dpo \
    --model $PRETRAIN_MODEL \
    --torch_dtype bfloat16 \
    --train_type full \
    --use_chat_template \
    --dataset $data_path \
    --num_train_epochs 2 \
    --per_device_train_batch_size $per_node_bsz \
    --weight_decay 0.1 \
    --learning_rate 5e-7 \
    --deepspeed zero3 \
    --gradient_accumulation_steps $gradient_accumulation_steps \
    --warmup_ratio 0.01 \
    --dataset_num_proc 16 \
    --system "You are Qwen, created by Alibaba Cloud. You are a helpful assistant." \
    --save_total_limit 5 \
    --save_strategy epoch \
    --attn_impl flash_attn \
    --max_length 131072 \
    --save_on_each_node false \
    --truncation_strategy delete \
    --split_dataset_ratio 0 \
    --eval_strategy no \
    --output_dir $output_dir \
    --lazy_tokenize true \
    --use_liger_kernel true \
    --rpo_alpha 0.1 \
    --sequence_parallel_size 8 \
    --use_hf
