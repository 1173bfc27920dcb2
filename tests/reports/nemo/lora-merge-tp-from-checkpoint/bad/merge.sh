#!/bin/bash
# Merge a LoRA adapter trained on Minitron-4B-Base back into the base .nemo model, on one GPU.
python /opt/NeMo/scripts/nlp_language_modeling/merge_lora_weights/merge.py \
    trainer.accelerator=gpu \
    trainer.devices=1 \
    gpt_model_file=minitron-4b-base/nemo/minitron-4b-base.nemo \
    lora_model_path=results/peft_1000_minitron-4b-base/checkpoints/megatron_gpt_peft_lora_tuning.nemo \
    merged_model_path=results/minitron-4b-base-merged.nemo
