export WORLD_SIZE=$OMPI_COMM_WORLD_SIZE
local_rank=$OMPI_COMM_WORLD_LOCAL_RANK
APP="python3 ../src/train_bash.py --stage sft \
    --model_name_or_path /data/baichuan-13b-chat \
    --do_train \
    --template baichuan \
    --dataset self_cognition \
    --finetuning_type full \
    --output_dir output/baichuan-13b \
    --per_device_train_batch_size 1 \
    --gradient_accumulation_steps 1 \
    --lr_scheduler_type cosine \
    --logging_steps 10 \
    --save_steps 2 \
    --learning_rate 1e-4 \
    --num_train_epochs 1.0 \
    --plot_loss \
    --fp16 \
    --deepspeed deepspeed.json \
    --local_rank $local_rank
"

case ${local_rank} in
[0])
  export CUDA_VISIBLE_DEVICES=$string
  numactl --cpunodebind=0 --membind=0 ${APP}
  ;;
[1])
  export CUDA_VISIBLE_DEVICES=$string
  numactl --cpunodebind=1 --membind=1 ${APP}
  ;;
esac
