CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node 2 pretraining.py \
    --model_name_or_path Qwen/Qwen-7B \
    --train_file_dir ./data/pretrain \
    --per_device_train_batch_size 4 \
    --gradient_accumulation_steps 1 \
    --num_train_epochs 1 \
    --learning_rate 2e-4 \
    --bf16 \
    --output_dir outputs-pt-qwen \
    --deepspeed zero2.json
