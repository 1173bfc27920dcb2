"""BL604: a launch script's `$(( ... ))` whose division drops a remainder from a batch setting.

The scripts are written in the shapes launch scripts use (a target batch divided by the per-device
batch and the GPU count into an accumulation; a per-GPU batch from an effective one), with near
twins that must stay clean: an exact division, a node count, an unknown operand, a result the launch
line does not use or changes, the ceiling idiom."""

import pytest

from batchlint.sources.shell import read_shell, truncation

CODE = "BL604"

# InternVL-style fine-tuning script: the accumulation derived from a target batch.
ACCUMULATION = """\
set -x
GPUS=${{GPUS:-{gpus}}}
BATCH_SIZE=${{BATCH_SIZE:-128}}
PER_DEVICE_BATCH_SIZE=${{PER_DEVICE_BATCH_SIZE:-4}}
GRADIENT_ACC=$((BATCH_SIZE / PER_DEVICE_BATCH_SIZE / GPUS))

export MASTER_PORT=34229
torchrun \\
  --nnodes=1 \\
  --node_rank=0 \\
  --nproc_per_node=${{GPUS}} \\
  --master_port=${{MASTER_PORT}} \\
  internvl/train/internvl_chat_finetune.py \\
  --model_name_or_path "./pretrained/model" \\
  --per_device_train_batch_size ${{PER_DEVICE_BATCH_SIZE}} \\
  --gradient_accumulation_steps {use} \\
  --learning_rate 4e-5
"""

# DeepSpeedExamples-style: a per-GPU batch from an effective batch.
PER_GPU = """\
NGPU={ngpu}
EFFECTIVE_BATCH_SIZE={batch}
PER_GPU_BATCH_SIZE=$((EFFECTIVE_BATCH_SIZE/NGPU))
deepspeed --num_gpus ${{NGPU}} run_classifier.py \\
    --per_device_train_batch_size ${{PER_GPU_BATCH_SIZE}} \\
    --learning_rate 2e-5
"""

# open-instruct-style: `$`-prefixed names inside the arithmetic, accelerate as the launcher.
ACCELERATE = """\
NUM_GPUS={gpus}
BATCH_SIZE_PER_GPU=1
TOTAL_BATCH_SIZE=128
GRADIENT_ACC_STEPS=$(($TOTAL_BATCH_SIZE/$NUM_GPUS/$BATCH_SIZE_PER_GPU))
echo "Training using $NUM_GPUS GPUs, $BATCH_SIZE_PER_GPU batch size per GPU, $GRADIENT_ACC_STEPS gradient accumulation steps"
accelerate launch \\
    --mixed_precision bf16 \\
    --num_machines 1 \\
    --num_processes $NUM_GPUS \\
    finetune.py \\
    --per_device_train_batch_size $BATCH_SIZE_PER_GPU \\
    --gradient_accumulation_steps $GRADIENT_ACC_STEPS \\
    --learning_rate 2e-5
"""


def found(lint, name, text):
    result = lint(name, text)
    assert result.framework is not None, "not read as a launch script"
    return [d for d in result.diagnostics if d.code == CODE]


def test_accumulation_that_drops_a_remainder(lint):
    [finding] = found(lint, "finetune_full.sh", ACCUMULATION.format(gpus=24, use="${GRADIENT_ACC}"))
    assert (finding.span.line, finding.span.column) == (5, 14)  # the `$((...))` of the assignment
    assert "`BATCH_SIZE / PER_DEVICE_BATCH_SIZE / GPUS` is 128 / 4 / 24 = 1" in " ".join((finding.message,) + finding.notes)
    assert "the remainder of 32 / 24 (8)" in " ".join((finding.message,) + finding.notes)
    assert "GRADIENT_ACC = 1, not 4/3 (1.33)" in finding.message
    assert "the global batch is 96 (per_device_train_batch_size (4) x gradient_accumulation_steps (1) x dp (24))" \
        in " ".join((finding.message,) + finding.notes)
    assert finding.message.endswith("not BATCH_SIZE (128)")
    assert finding.fix.startswith("set BATCH_SIZE to a multiple of 96 (PER_DEVICE_BATCH_SIZE x GPUS = 4 x 24): 96 or 192")


def test_exact_accumulation_is_clean(lint):
    assert found(lint, "finetune_full.sh", ACCUMULATION.format(gpus=8, use="${GRADIENT_ACC}")) == []


@pytest.mark.parametrize("use", ["${GRADIENT_ACC}0", "$((GRADIENT_ACC * 2))", "4"])
def test_a_value_changed_on_the_way_or_not_used_is_not_the_division(lint, use):
    # `${GRADIENT_ACC}0` is 10 and `$((GRADIENT_ACC * 2))` 2: not what the division gave; `4`: not used.
    assert found(lint, "finetune_full.sh", ACCUMULATION.format(gpus=24, use=use)) == []


def test_per_gpu_batch_that_drops_a_remainder(lint):
    [finding] = found(lint, "run_glue.sh", PER_GPU.format(ngpu=8, batch=100))
    assert finding.span.line == 3
    assert "100 / 8 = 12 in bash, which drops the remainder 4" in " ".join((finding.message,) + finding.notes)
    assert "the global batch is 96" in finding.message and "not EFFECTIVE_BATCH_SIZE (100)" in finding.message
    assert "96 or 104" in finding.fix and "NGPU to a divisor of 100" in finding.fix


def test_exact_per_gpu_batch_is_clean(lint):
    assert found(lint, "run_glue.sh", PER_GPU.format(ngpu=32, batch=96)) == []  # 96 % 32 == 0


def test_dollar_names_inside_the_arithmetic(lint):
    [finding] = found(lint, "finetune.sh", ACCELERATE.format(gpus=6))
    assert "`$TOTAL_BATCH_SIZE/$NUM_GPUS/$BATCH_SIZE_PER_GPU` is 128 / 6 / 1 = 21" in " ".join((finding.message,) + finding.notes)
    assert "global batch is 126" in finding.message and "not TOTAL_BATCH_SIZE (128)" in finding.message
    assert found(lint, "finetune.sh", ACCELERATE.format(gpus=8)) == []


def test_a_node_count_is_no_batch(lint):
    script = ("GPUS=24\nGPUS_PER_NODE=16\nNNODES=$((GPUS / GPUS_PER_NODE))\n"
              "torchrun --nnodes=${NNODES} --nproc_per_node=8 train.py --per_device_train_batch_size 4\n")
    assert found(lint, "run.sh", script) == []


def test_an_operand_from_the_caller_is_not_known(lint):
    text = ACCUMULATION.format(gpus=24, use="${GRADIENT_ACC}").replace("GPUS=${GPUS:-24}", "GPUS=$1")
    assert found(lint, "finetune_full.sh", text) == []


def test_the_ceiling_idiom_rounds_on_purpose(lint):
    text = ACCUMULATION.format(gpus=24, use="${GRADIENT_ACC}").replace(
        "$((BATCH_SIZE / PER_DEVICE_BATCH_SIZE / GPUS))",
        "$(( (BATCH_SIZE + PER_DEVICE_BATCH_SIZE * GPUS - 1) / (PER_DEVICE_BATCH_SIZE * GPUS) ))")
    assert found(lint, "finetune_full.sh", text) == []


def test_world_size_not_known_still_reports_the_truncation(lint):
    script = ("GRADIENT_ACC=$((128 / 4 / 24))\n"
              "torchrun --nproc_per_node=$1 train.py --per_device_train_batch_size 4 "
              "--gradient_accumulation_steps $GRADIENT_ACC\n")
    [finding] = found(lint, "run.sh", script)
    assert "GRADIENT_ACC = 1, not 4/3 (1.33) (the global batch is not known here: dp is not)" \
        in " ".join((finding.message,) + finding.notes)


@pytest.mark.parametrize("passing", [
    "torchrun --nproc_per_node=$GPUS train.py --per_device_train_batch_size=4 --gradient_accumulation_steps=$GA",
    'ARGS="--per_device_train_batch_size 4 --gradient_accumulation_steps $GA"\n'
    "torchrun --nproc_per_node=$GPUS train.py $ARGS",
    'ARGS=(--per_device_train_batch_size 4 --gradient_accumulation_steps "$GA")\n'
    'torchrun --nproc_per_node=$GPUS train.py "${ARGS[@]}"',
    "GA2=$GA\ntorchrun --nproc_per_node=$GPUS train.py --per_device_train_batch_size 4 --gradient_accumulation_steps $GA2",
])
def test_every_way_a_launch_line_takes_the_variable(lint, passing):
    [finding] = found(lint, "run.sh", f"GPUS=24\nGA=$((128 / 4 / GPUS))\n{passing}\n")
    assert finding.span.line == 2 and "GA = 1" in finding.message and "global batch is 96" in finding.message


def test_inline_division_on_the_launch_line(lint):
    script = "torchrun --nproc_per_node=24 train.py --per_device_train_batch_size 4 --gradient_accumulation_steps $((100 / 24))\n"
    [finding] = found(lint, "run.sh", script)
    assert finding.span.line == 1 and finding.span.column > 90  # the `$((...))` on the line itself
    assert "gradient_accumulation_steps = 4, not 25/6 (4.17)" in finding.message
    assert "global batch is 384 (" in " ".join((finding.message,) + finding.notes) and finding.message.endswith(", not 400")


def test_a_value_alike_on_every_path_keeps_no_remainder_of_one(lint):
    # Undecided branch: GA is 1 on both paths, but only one divides; the other writes it.
    launch = "torchrun --nproc_per_node=8 train.py --per_device_train_batch_size 4 --gradient_accumulation_steps $GA\n"
    for branches in ("then GA=1; else GA=$((40 / 32));", "then GA=$((40 / 32)); else GA=1;"):
        assert found(lint, "run.sh", f"if [ -f big.flag ]; {branches} fi\n{launch}") == []
    both = "if [ -f big.flag ]; then GA=$((40 / 32)); else GA=$((40 / 32)); fi\n"
    assert len(found(lint, "run.sh", both + launch)) == 1


def test_arrays_alike_on_every_path():
    variables = read_shell("run.sh", "if [ -f x ]; then A=(1 2); else A=(1 2); fi\n").variables
    assert [word.value for word in variables["A"]] == ["1", "2"]


def test_verl_micro_batch_sets_no_global_batch(lint):
    # verl derives accumulation from the mini batch and the micro batch: a truncated micro batch
    # changes the split, not the batch (BL142 judges whether it divides).
    script = """\
NGPUS=8
MICRO=$((33 / NGPUS))
python3 -m verl.trainer.main_ppo \\
    data.train_batch_size=1024 \\
    actor_rollout_ref.actor.ppo_mini_batch_size=256 \\
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=$MICRO \\
    trainer.n_gpus_per_node=$NGPUS \\
    trainer.nnodes=1
"""
    assert found(lint, "run_verl.sh", script) == []


def test_truncation_steps_in_bash_order():
    variables = read_shell("vars.sh", "A=128\nB=4\nC=24\n").variables
    cut = truncation("A / B / C", variables)
    assert cut.shown == "128 / 4 / 24" and cut.value == 1 and cut.exact == (4, 3)
    assert cut.steps == ((32, 24, 1, 8),)
    assert cut.chain == (("A", 128), (("B", 4), ("C", 24)))
    two = truncation("100 / 3 / 11", variables)  # 100 / 3 = 33 remainder 1, then 33 / 11 = 3 exactly
    assert two.steps == ((100, 3, 33, 1),) and two.value == 3 and two.exact == (100, 33)
    grouped = truncation("A / (B * C)", variables)
    assert grouped.value == 1 and grouped.chain == () and grouped.steps == ((128, 96, 1, 32),)


@pytest.mark.parametrize("expr", [
    "A / B",  # exact
    "A % C",  # a remainder, asked for
    "(A + C - 1) / C",  # the ceiling idiom
    "A / 0",  # bash fails
    "-A / C",  # no batch is negative
    "A / X",  # X not known
    "A > C && A / C",  # a test, not a batch
])
def test_no_truncation(expr):
    variables = read_shell("vars.sh", "A=128\nB=4\nC=24\n").variables
    assert truncation(expr, variables) is None
