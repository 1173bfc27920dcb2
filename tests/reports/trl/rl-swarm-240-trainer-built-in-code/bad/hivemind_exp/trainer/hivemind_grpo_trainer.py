from trl import GRPOConfig, GRPOTrainer


class HivemindGRPOTrainer:
    def __init__(self, config: GRPOConfig, model, reward_funcs):
        self.config, self.model, self.reward_funcs = config, model, reward_funcs

    def train_stages(self, round_num, stage):
        # the batch and group size of each stage are decided here, per round and per machine
        trainer = GRPOTrainer(model=self.model, reward_funcs=self.reward_funcs, args=self.config)
        trainer.train()
