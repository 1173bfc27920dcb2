CUDA_VISIBLE_DEVICES=0,1 \
NPROC_PER_NODE=2 \
VIDEO_MAX_PIXELS=378000 \
FPS=0.5 \
swift rlhf \
    --rlhf_type grpo \
    --model /huggingface.co/Qwen/Qwen2.5-VL-3B-Instruct \
    --max_length 64000 \
    --external_plugins examples/train/grpo/plugin/plugin.py \
    --reward_funcs external_duration \
    --use_vllm false \
    --train_type lora \
    --lora_rank 8 \
    --freeze_vit true \
    --torch_dtype bfloat16 \
    --dataset '../demo.json' \
    --max_completion_length 512 \
    --num_train_epochs 1 \
    --per_device_train_batch_size 1 \
    --split_dataset_ratio 0\
    --learning_rate 1e-6 \
    --gradient_accumulation_steps 2 \
    --save_strategy 'steps' \
    --save_steps 100 \
    --save_total_limit 10 \
    --logging_steps 1 \
    --output_dir output/GRPO_CLEVR_COUNTDOWN \
    --warmup_ratio 0.01 \
    --dataloader_num_workers 1 \
    --num_generations 8 \
    --temperature 1.0 \
    --top_p 0.9 \
    --top_k 50 \
    --deepspeed zero3 \
    --log_completions true \
    --num_iterations 1 \
    --async_generate false \
    --beta 0.001
