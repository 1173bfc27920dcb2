# The values the error message reports (one process, per_device_train_batch_size 1, num_generations 4); the
# rest of the reporter's program is not shown in the thread.
from trl import GRPOConfig, GRPOTrainer

training_args = GRPOConfig(
    output_dir="grpo-out",
    per_device_train_batch_size=1,
    num_generations=4,
)
trainer = GRPOTrainer(model="Qwen/Qwen2.5-0.5B-Instruct", reward_funcs=[], args=training_args, train_dataset=None)
trainer.train()
