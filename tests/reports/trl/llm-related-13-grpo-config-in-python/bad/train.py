from trl import GRPOConfig

args = GRPOConfig(output_dir='out', per_device_train_batch_size=1, num_generations=16)
