#!/bin/bash
python3 -m verl.trainer.main_generation \
    trainer.nnodes=1 \
    trainer.n_gpus_per_node=2 \
    data.path=$HOME/data/hle/all_text_only.30.parquet \
    data.prompt_key=prompt \
    data.n_samples=1 \
    data.batch_size=1 \
    data.output_path=$output_dir/deepseek_r1_14b_gen.10.parquet \
    model.path=$MODEL \
    +model.trust_remote_code=True \
    rollout.temperature=1.0 \
    rollout.top_k=1 \
    rollout.top_p=0.7 \
    rollout.prompt_length=4096 \
    rollout.response_length=1024 \
    rollout.max_num_batched_tokens=8192 \
    rollout.tensor_model_parallel_size=2 \
    rollout.gpu_memory_utilization=0.8
