#!/bin/bash
NPROC_PER_NODE=4 xtuner train llama3_8b_full_custom_sp4.py --deepspeed deepspeed_zero3
