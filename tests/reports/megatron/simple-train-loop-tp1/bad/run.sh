#!/bin/bash
# examples/run_simple_mcore_train_loop.py with tensor_model_parallel_size edited from 2 to 1 in the script.
torchrun --nproc-per-node 2 examples/run_simple_mcore_train_loop.py
