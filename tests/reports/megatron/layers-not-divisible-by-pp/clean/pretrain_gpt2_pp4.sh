#!/bin/bash
# GPT-2 (32 layers) on 4 pipeline stages, one node of 8 GPUs.

export CUDA_DEVICE_MAX_CONNECTIONS=1

GPUS_PER_NODE=8
NNODES=1
CHECKPOINT_PATH=checkpoints/gpt2_pp4
VOCAB_FILE=data/gpt2-vocab.json
MERGE_FILE=data/gpt2-merges.txt
DATA_PATH=data/my-gpt2_text_document

DISTRIBUTED_ARGS="--nproc_per_node $GPUS_PER_NODE --nnodes $NNODES --master_addr localhost --master_port 6000"

GPT_ARGS="
    --num-layers 32 \
    --hidden-size 1024 \
    --num-attention-heads 16 \
    --seq-length 1024 \
    --max-position-embeddings 1024 \
    --micro-batch-size 4 \
    --global-batch-size 64 \
    --pipeline-model-parallel-size 4 \
    --tensor-model-parallel-size 1 \
    --lr 0.00015 \
    --train-iters 5000 \
    --lr-decay-style cosine \
    --bf16
"

DATA_ARGS="--data-path $DATA_PATH --vocab-file $VOCAB_FILE --merge-file $MERGE_FILE --split 949,50,1"

torchrun $DISTRIBUTED_ARGS pretrain_gpt.py $GPT_ARGS $DATA_ARGS --save $CHECKPOINT_PATH --load $CHECKPOINT_PATH
