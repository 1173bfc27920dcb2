#!/bin/bash
# DeepSpeed's own launcher on 8 GPUs: train_batch_size 128 = 4 x 4 x 8.
deepspeed --num_gpus 8 train.py --deepspeed examples/deepspeed/ds_zero2_fixed.json
