#!/bin/bash
#SBATCH --nodes=16
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
# 80-layer GPT, tp 8 x pp 16 = 128 GPUs, interleaved schedule with 2 layers per virtual stage.

export CUDA_DEVICE_MAX_CONNECTIONS=1
MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)

srun torchrun --nnodes 16 --nproc_per_node 8 --rdzv_backend c10d --rdzv_endpoint $MASTER_ADDR:6000 \
    pretrain_gpt.py \
    --tensor-model-parallel-size 8 \
    --pipeline-model-parallel-size 16 \
    --num-layers-per-virtual-pipeline-stage 2 \
    --num-layers 80 \
    --hidden-size 8192 \
    --num-attention-heads 64 \
    --seq-length 2048 \
    --max-position-embeddings 2048 \
    --micro-batch-size 1 \
    --global-batch-size 1024 \
    --train-iters 100000 \
    --lr 1.5e-4 \
    --bf16 \
    --data-path data/my-gpt_text_document \
    --vocab-file data/gpt2-vocab.json \
    --merge-file data/gpt2-merges.txt
