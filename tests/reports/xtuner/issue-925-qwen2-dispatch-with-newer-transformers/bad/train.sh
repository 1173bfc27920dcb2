NPROC_PER_NODE=8 xtuner train qwen2_7b_instruct_full_custom.py --deepspeed deepspeed_zero2
