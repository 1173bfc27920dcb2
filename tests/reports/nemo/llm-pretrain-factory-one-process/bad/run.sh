#!/bin/bash
# Inside `srun -p batch -N 1 --container-image nvcr.io/nvidia/nemo:24.09 --pty bash` on an 8-GPU node.
nemo llm pretrain --factory llama3_8b
