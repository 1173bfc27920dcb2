set -x

# GRPO-style group baseline, everything colocated on one 8-GPU node.
python3 -m openrlhf.cli.train_ppo_ray \
   --ref.num_nodes 1 \
   --ref.num_gpus_per_node 8 \
   --actor.num_nodes 1 \
   --actor.num_gpus_per_node 8 \
   --vllm.num_engines 4 \
   --vllm.tensor_parallel_size 2 \
   --train.colocate_all \
   --vllm.gpu_memory_utilization 0.5 \
   --actor.model_name_or_path OpenRLHF/Llama-3-8b-sft-mixture \
   --reward.remote_url http://localhost:5000/get_reward \
   --ckpt.output_dir ./checkpoint/llama3-8b-grpo \
   --algo.advantage.estimator group_norm \
   --train.micro_batch_size 4 \
   --train.batch_size 128 \
   --rollout.micro_batch_size 8 \
   --rollout.batch_size 128 \
   --rollout.n_samples_per_prompt 8 \
   --train.max_epochs 1 \
   --data.max_len 4096 \
   --data.prompt_dataset OpenRLHF/prompt-collection-v0.1 \
   --data.input_key context_messages \
   --data.apply_chat_template \
   --ds.zero_stage 3 \
   --ds.param_dtype bf16 \
   --actor.adam.lr 5e-7 \
   --actor.gradient_checkpointing_enable \
   --ds.packing_samples \
   --vllm.enable_sleep \
   --ds.enable_sleep
