from transformers import HfArgumentParser, Trainer, TrainingArguments


def main():
    parser = HfArgumentParser(TrainingArguments)
    (training_args,) = parser.parse_args_into_dataclasses()
    trainer = Trainer(model=None, args=training_args)
    trainer.train()


if __name__ == "__main__":
    main()
