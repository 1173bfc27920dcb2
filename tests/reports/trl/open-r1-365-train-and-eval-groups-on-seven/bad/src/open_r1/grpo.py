from dataclasses import dataclass, field

from trl import GRPOConfig, GRPOTrainer, ModelConfig, ScriptArguments, TrlParser


@dataclass
class GRPOScriptArguments(ScriptArguments):
    reward_funcs: list[str] = field(default_factory=lambda: ["accuracy", "format"])


def main(script_args, training_args, model_args):
    trainer = GRPOTrainer(model=model_args.model_name_or_path, reward_funcs=[], args=training_args)
    trainer.train()


if __name__ == "__main__":
    parser = TrlParser((GRPOScriptArguments, GRPOConfig, ModelConfig))
    script_args, training_args, model_args = parser.parse_args_and_config()
    main(script_args, training_args, model_args)
