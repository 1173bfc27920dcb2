#!/bin/bash
# Full finetune with axolotl's own Llama 2 example (sequence_len 4096, sample_packing,
# flash_attention), a micro batch of 4 and no evaluation split given on the launch line.
accelerate launch -m axolotl.cli.train examples/llama-2/fft_optimized.yml --micro_batch_size 4 --val_set_size 0
