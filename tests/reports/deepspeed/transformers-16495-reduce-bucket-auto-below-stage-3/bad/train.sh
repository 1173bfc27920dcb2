deepspeed --num_gpus 2 train.py \
    --deepspeed ds_config_zero2.json \
    --output_dir output \
    --per_device_train_batch_size 4 \
    --do_train
