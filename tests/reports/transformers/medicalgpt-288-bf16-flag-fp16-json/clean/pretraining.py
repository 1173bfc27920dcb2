from transformers import HfArgumentParser, Seq2SeqTrainingArguments, Trainer

from arguments import DataArguments, ModelArguments


def main():
    parser = HfArgumentParser((ModelArguments, DataArguments, Seq2SeqTrainingArguments))
    model_args, data_args, training_args = parser.parse_args_into_dataclasses()
    trainer = Trainer(model=None, args=training_args)
    trainer.train()


if __name__ == "__main__":
    main()
