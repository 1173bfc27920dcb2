accelerate launch --num_processes 4 grpo.py --config grpo.yaml
