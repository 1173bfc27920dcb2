deepspeed --num_gpus=8 finetune.py --model_config_file run_config/Bloom_config.json --deepspeed run_config/deepspeed_config.json
