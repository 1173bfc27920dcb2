# olmOCR's GRPO trainer on one GPU, with its own defaults (--per_device_train_batch_size 1,
# --gradient_accumulation_steps 8, --num_generations 28), which it passes to trl's GRPOConfig itself.
python -m olmocr.train.grpo_train \
    --train_bench_data_folder olmOCR-bench/bench_data
