python3 -m openrlhf.cli.train_ppo_ray \
   --actor_num_nodes 1 \
   --actor_num_gpus_per_node 1 \
   --rollout_batch_size 16 \
   --micro_rollout_batch_size 4 \
   --train_batch_size 4 \
   --micro_train_batch_size 2 \
   --max_epochs 1
