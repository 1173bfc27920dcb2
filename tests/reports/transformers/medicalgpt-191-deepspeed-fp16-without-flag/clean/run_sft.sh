CUDA_VISIBLE_DEVICES=1 python supervised_finetuning.py \
    --model_name_or_path THUDM/chatglm2-6b \
    --train_file_dir ./data/finetune \
    --per_device_train_batch_size 4 \
    --gradient_accumulation_steps 1 \
    --num_train_epochs 1 \
    --learning_rate 2e-5 \
    --output_dir outputs-sft-chatglm2 \
    --template_name chatglm2 \
    --deepspeed deepspeed_zero_stage2_config.json
