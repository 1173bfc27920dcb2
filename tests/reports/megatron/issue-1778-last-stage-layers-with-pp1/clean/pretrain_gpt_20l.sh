#!/bin/bash
# GPT, 20 layers, no pipeline parallelism: one node of 8 GPUs.

export CUDA_DEVICE_MAX_CONNECTIONS=1

GPUS_PER_NODE=8
NNODES=1
CHECKPOINT_PATH=checkpoints/gpt_20l
VOCAB_FILE=data/gpt2-vocab.json
MERGE_FILE=data/gpt2-merges.txt
DATA_PATH=data/my-gpt2_text_document

DISTRIBUTED_ARGS="--nproc_per_node $GPUS_PER_NODE --nnodes $NNODES --master_addr localhost --master_port 6000"

GPT_ARGS="
    --num-layers 20 \
    --hidden-size 2048 \
    --num-attention-heads 16 \
    --seq-length 2048 \
    --max-position-embeddings 2048 \
    --micro-batch-size 2 \
    --global-batch-size 128 \
    --tensor-model-parallel-size 1 \
    --pipeline-model-parallel-size 1 \
    --lr 0.0003 \
    --train-iters 10000 \
    --lr-decay-style cosine \
    --bf16
"

DATA_ARGS="--data-path $DATA_PATH --vocab-file $VOCAB_FILE --merge-file $MERGE_FILE --split 949,50,1"

torchrun $DISTRIBUTED_ARGS pretrain_gpt.py $GPT_ARGS $DATA_ARGS --save $CHECKPOINT_PATH --load $CHECKPOINT_PATH
