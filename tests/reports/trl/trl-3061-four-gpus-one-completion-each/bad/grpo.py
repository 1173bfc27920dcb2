from trl import GRPOConfig, GRPOTrainer, ModelConfig, ScriptArguments, TrlParser

if __name__ == "__main__":
    script_args, training_args, model_args = TrlParser((ScriptArguments, GRPOConfig, ModelConfig)).parse_args_and_config()
    GRPOTrainer(model=model_args.model_name_or_path, reward_funcs=[], args=training_args).train()
