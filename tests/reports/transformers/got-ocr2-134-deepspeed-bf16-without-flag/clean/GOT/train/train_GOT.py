import transformers

from GOT.utils.arguments import DataArguments, ModelArguments, TrainingArguments


def train():
    parser = transformers.HfArgumentParser((ModelArguments, DataArguments, TrainingArguments))
    model_args, data_args, training_args = parser.parse_args_into_dataclasses()
    trainer = transformers.Trainer(model=None, args=training_args)
    trainer.train()


if __name__ == "__main__":
    train()
