#!/bin/bash
# NeMo-Aligner's DPO example on a toy model, built from main (2024-04), with the micro batch raised to 2.
python examples/nlp/gpt/train_gpt_dpo.py \
    model.micro_batch_size=2
