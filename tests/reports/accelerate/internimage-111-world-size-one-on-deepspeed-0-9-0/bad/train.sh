accelerate launch --config_file configs/accelerate/dist_8gpus_zero3_offload.yaml main_accelerate.py \
    --cfg configs/internimage_t_1k_224.yaml \
    --data-path /mnt/lustre/share/images \
    --batch-size 128 \
    --accumulation-steps 4 \
    --output output_zero3_offload
