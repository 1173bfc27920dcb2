# The ring-attention flags the thread is about (the rest of the line is not shown there). The model has 2 KV
# heads ("nheads_k:2"); 4 stands for any stride above 2 that the reporter tried.
python3 -m openrlhf.cli.train_ppo_ray \
   --actor_num_nodes 1 \
   --actor_num_gpus_per_node 8 \
   --packing_samples \
   --ring_attn_size 8 \
   --ring_head_stride 4
