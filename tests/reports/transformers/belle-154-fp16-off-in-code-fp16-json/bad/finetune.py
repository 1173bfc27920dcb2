import argparse
import json

import transformers


def train(args):
    model_config = json.load(open(args.model_config_file))
    trainer = transformers.Trainer(
        model=None,
        args=transformers.TrainingArguments(
            per_device_train_batch_size=model_config["per_device_train_batch_size"],
            gradient_accumulation_steps=model_config["gradient_accumulation_steps"],
            num_train_epochs=model_config["num_epochs"],
            learning_rate=model_config["learning_rate"],
            fp16=False,
            output_dir="trained_models/bloom",
            deepspeed=args.deepspeed,
        ),
    )
    trainer.train()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_config_file", type=str, required=True)
    parser.add_argument("--deepspeed", type=str)
    parser.add_argument("--local_rank", type=int)
    train(parser.parse_args())
