from transformers import Trainer, TrainingArguments

if __name__ == "__main__":
    training_args = TrainingArguments(
        output_dir="rm_checkpoint/",
        per_device_train_batch_size=1,
        gradient_accumulation_steps=4,
        fp16=True,
        deepspeed="ds_config_gpt_j.json",
    )
    Trainer(model=None, args=training_args).train()
