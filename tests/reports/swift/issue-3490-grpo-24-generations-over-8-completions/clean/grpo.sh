# Run from an ms-swift checkout (main, March 2025) on one GPU.
CUDA_VISIBLE_DEVICES=0 \
torchrun --nproc_per_node=1 ./swift/cli/rlhf.py \
    --rlhf_type grpo \
    --model Qwen/Qwen2.5-VL-3B-Instruct \
    --train_type full \
    --freeze_vit true \
    --torch_dtype bfloat16 \
    --dataset data/grpo_train.jsonl \
    --external_plugins plugin/plugin.py \
    --reward_funcs external_acc format \
    --max_completion_length 1024 \
    --num_train_epochs 1 \
    --per_device_train_batch_size 8 \
    --per_device_eval_batch_size 8 \
    --gradient_accumulation_steps 1 \
    --learning_rate 1e-6 \
    --num_generations 8 \
    --temperature 0.9 \
    --eval_steps 100 \
    --save_steps 100 \
    --logging_steps 5 \
    --output_dir output/grpo
