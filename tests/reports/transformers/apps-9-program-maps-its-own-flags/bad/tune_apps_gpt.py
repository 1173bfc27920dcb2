import argparse

import transformers


def run_training(args):
    training_args = transformers.TrainingArguments(
        output_dir=args.save_dir,
        per_device_train_batch_size=args.batch_size_per_replica,
        gradient_accumulation_steps=args.grad_acc_steps,
        learning_rate=5e-5,
        fp16=args.fp16,
        deepspeed=args.deepspeed,
    )
    transformers.Trainer(model=None, args=training_args).train()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size-per-replica", type=int, default=8)
    parser.add_argument("--grad-acc-steps", type=int, default=4)
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--deepspeed", type=str)
    parser.add_argument("--save-dir", type=str)
    run_training(parser.parse_known_args()[0])
