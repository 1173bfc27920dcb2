python3 -m openrlhf.cli.train_ppo_ray \
   --actor_num_nodes 1 \
   --actor_num_gpus_per_node 8 \
   --ring_attn_size 2 \
   --packing_samples \
   --rollout_batch_size 4 \
   --micro_rollout_batch_size 1 \
   --train_batch_size 4 \
   --micro_train_batch_size 1
