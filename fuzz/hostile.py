"""A catalogue of hostile inputs: each a shape that has crashed, hung or
exhausted a linter like batchlint, or that a rule or reader could plausibly
get wrong. Each entry names the layer that must survive it:

    reader      lint/sources/* (parsing, evaluating, bounds)
    directives  lint/directives.py (the `# batchlint:` comments)
    launch      lint/launching/lines.py (launch lines, their W and overrides)
    framework   lint/frameworks/* (adapters turning a Document into a plan)
    rules       rules/* (the checks on a plan)

Nothing here is ever executed: batchlint reads these files, it does not run them.
"""

from __future__ import annotations

from dataclasses import dataclass

DIGITS_4301 = "1" + "0" * 4300  # one digit past int()'s default limit
HUGE = "9" * 5000

RUNS_DEFAULT = ((None, None), (8, 64), (7, None))


@dataclass(frozen=True)
class Entry:
    key: str
    name: str  # file name (its suffix gives the format)
    data: bytes
    layer: str
    why: str
    runs: tuple = RUNS_DEFAULT


def _e(key, name, text, layer, why, runs=RUNS_DEFAULT):
    data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    return Entry(key, name, data, layer, why, runs)


TITAN_TP3 = """\
[job]
dump_folder = "./outputs"

[model]
name = "llama3"
flavor = "8B"

[training]
local_batch_size = 8
steps = 1000

[parallelism]
data_parallel_replicate_degree = 1
data_parallel_shard_degree = -1
tensor_parallel_degree = 3
"""

XTUNER = """\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = {sp}
batch_size = {micro}
accumulative_counts = {ga}
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""

CATALOGUE = [
    # -- integers past int()'s 4300-digit limit, in every format --
    _e("int-4301-yaml", "sft.yaml",
       f"model_type: qwen2\nper_device_train_batch_size: {DIGITS_4301}\ngradient_accumulation_steps: 8\n"
       f"sequence_parallel_size: {DIGITS_4301}\n", "reader", "YAML int of 4301 digits"),
    _e("int-4301-json", "ds.json",
       f'{{"train_batch_size": {DIGITS_4301}, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 2}}',
       "reader", "JSON int of 4301 digits"),
    _e("int-4301-toml", "titan.toml",
       f"[training]\nlocal_batch_size = {DIGITS_4301}\n[parallelism]\ntensor_parallel_degree = {DIGITS_4301}\n",
       "reader", "TOML int of 4301 digits"),
    _e("int-4301-python", "sft.py", XTUNER.format(sp=DIGITS_4301, micro=1, ga=16), "reader",
       "Python int literal of 4301 digits"),
    _e("int-pow-python", "sft.py", XTUNER.format(sp="10 ** 5000", micro="10 ** 4000", ga="16 * 10 ** 5000"), "reader",
       "Python ints computed past 4300 digits"),
    _e("int-4301-launch", "train.sh",
       f"torchrun --nproc_per_node {HUGE} --nnodes 2 train.py\nNPROC_PER_NODE={HUGE} swift sft --sequence_parallel_size 2\n"
       f"python -m verl.trainer.main_ppo trainer.n_gpus_per_node={HUGE} data.train_batch_size={HUGE}\n",
       "launch", "launch-line process counts of 5000 digits"),
    _e("int-4301-swift-env", "swift.yaml",
       f"model_type: qwen2\nper_device_train_batch_size: 2\nENV:\n  NPROC_PER_NODE: '{HUGE}'\n  NNODES: '{HUGE}'\n",
       "framework", "ms-swift ENV: NPROC_PER_NODE of 5000 digits (a string)"),
    # -- unicode digits --
    _e("directive-superscript", "sft.yaml",
       "# batchlint: world-size=²\nmodel_type: qwen2\nper_device_train_batch_size: 2\ngradient_accumulation_steps: 8\n",
       "directives", "'²'.isdigit() is True but int('²') raises"),
    _e("directive-huge", "sft.yaml",
       f"# batchlint: world-size={HUGE}\n# batchlint: global-batch={HUGE}\nmodel_type: qwen2\n"
       "per_device_train_batch_size: 2\n", "directives", "a directive of 5000 digits"),
    _e("swift-env-superscript", "swift.yaml",
       "model_type: qwen2\nper_device_train_batch_size: 2\nENV:\n  NPROC_PER_NODE: '²'\n  NNODES: ¹\n",
       "framework", "ms-swift ENV: values that isdigit() but int() refuses"),
    _e("launch-superscript", "train.sh",
       "NPROC_PER_NODE=² swift sft --per_device_train_batch_size 2\n"
       "python -m verl.trainer.main_ppo trainer.n_gpus_per_node=² trainer.nnodes=¹\n"
       "torchrun --nproc_per_node=٣ --nnodes=𝟠 train.py\n", "launch", "unicode digits as process counts"),
    # -- YAML tags --
    _e("yaml-int-tag-empty", "sft.yaml",
       "model_type: qwen2\nper_device_train_batch_size: !!int\ngradient_accumulation_steps: !!float\n"
       "sequence_parallel_size: !!bool\n", "reader", "`!!int` with no value"),
    # -- shell --
    _e("shell-array-env-prefix", "train.sh",
       "A=(1 2) torchrun --nproc_per_node 8 train.py --config sft.yaml\n"
       "NPROC_PER_NODE=(4 4) NNODES=(1) swift sft --per_device_train_batch_size 2 --sequence_parallel_size 2\n"
       "NGPU=(8) ./run_train.sh --training.local_batch_size 2\n", "launch", "an array as an env prefix"),
    _e("shell-doubling-bomb", "train.sh",
       "X=x\n" + "X=$X$X\n" * 64 + "torchrun --nproc_per_node 8 train.py --config $X.yaml\n", "reader",
       "a variable doubled 64 times (2**64 characters if expanded)"),
    _e("shell-array-doubling-bomb", "train.sh",
       "args=(--per_device_train_batch_size 2)\n" + 'args=("${args[@]}" "${args[@]}")\n' * 40
       + 'swift sft "${args[@]}"\n', "reader", "an array doubled 40 times"),
    _e("shell-1mb-word", "train.sh",
       "torchrun --nproc_per_node 8 train.py --config " + "x" * (1 << 20) + ".yaml --per_device_train_batch_size 2\n",
       "reader", "one shell word of 1 MB"),
    _e("shell-arith-nesting", "train.sh",
       "N=$((" + "(" * 20000 + "8" + ")" * 20000 + "))\ntorchrun --nproc_per_node $N train.py\n", "reader",
       "arithmetic nested 20000 deep"),
    _e("shell-arith-overflow", "train.sh",
       "N=$((2**64 * 2**64))\nM=$((1/0))\nK=$((8 % 0))\ntorchrun --nproc_per_node $N --nnodes $M train.py\n"
       "deepspeed --num_gpus $K train.py --deepspeed ds.json\n", "reader", "arithmetic that overflows or divides by 0"),
    _e("shell-zero-counts", "train.sh",
       "torchrun --nproc_per_node 0 --nnodes 0 train.py --config a.yaml\n"
       "python -m verl.trainer.main_ppo trainer.n_gpus_per_node=0 trainer.nnodes=-1 data.train_batch_size=0\n"
       "deepspeed --num_gpus=-1 train.py --deepspeed ds.json\naccelerate launch --num_processes 0 sft.py\n"
       "NGPU=0 ./run_train.sh --parallelism.tensor_parallel_degree 0\n"
       "python pretrain_gpt.py --micro-batch-size 0 --global-batch-size -1 --tensor-model-parallel-size 0 "
       "--context-parallel-size 0 --seq-length 0\n"
       "megatron sft --micro_batch_size 0 --global_batch_size 7 --tensor_model_parallel_size 0 --sequence_parallel true\n",
       "launch", "zero and negative counts and degrees on launch lines"),
    _e("shell-launch-bad-overrides", "train.sh",
       f"swift sft --per_device_train_batch_size {HUGE} --gradient_accumulation_steps nan --sequence_parallel_size inf\n"
       "python -m verl.trainer.main_ppo actor_rollout_ref.actor.ppo_mini_batch_size=.nan "
       "actor_rollout_ref.rollout.n=-.inf data.train_batch_size=1e999 trainer.n_gpus_per_node=8\n"
       "megatron sft --micro_batch_size [1,2] --global_batch_size {a:1} --tensor_model_parallel_size true\n",
       "launch", "launch-line overrides of the wrong type"),
    # -- JSON --
    _e("json-lone-surrogate-key", "ds.json",
       '{"\\ud800": 1, "train_batch_size": 8, "\\udfff\\ud800": {"enabled": true}, '
       '"train_micro_batch_size_per_gpu": 2, "zero_optimization": {"\\ud800stage": 3}, '
       '"gradient_accumulation_steps": 4, "train_batch_size": 16}', "reader", "a lone surrogate in JSON keys"),
    _e("json-deep", "ds.json", '{"train_batch_size": ' + "[" * 100_000 + "]" * 100_000 + "}", "reader",
       "JSON nested 100000 deep"),
    _e("json-nan-inf", "ds.json",
       '{"train_batch_size": NaN, "train_micro_batch_size_per_gpu": Infinity, "gradient_accumulation_steps": -Infinity,'
       ' "bf16": {"enabled": NaN}, "fp16": {"enabled": 1e999}}', "rules", "NaN and infinities as batch factors"),
    # -- TorchTitan --
    _e("titan-tp3", "llama3_8b.toml", TITAN_TP3, "rules", "a plain TorchTitan config with tp 3 (reported to crash)",
       runs=((None, None), (8, None), (7, None), (6, 48), (3, None), (1, None))),
    _e("titan-tp3-seq-len", "llama3_8b.toml", TITAN_TP3.replace("steps = 1000", "seq_len = 8192\nsteps = 1000"),
       "rules", "the same with seq_len written", runs=((None, None), (8, None), (6, 48))),
    _e("titan-zero-negative", "titan.toml",
       "[training]\nlocal_batch_size = 0\nglobal_batch_size = 0\nseq_len = 0\n[parallelism]\n"
       "data_parallel_replicate_degree = 0\ndata_parallel_shard_degree = -2\ntensor_parallel_degree = -1\n"
       "pipeline_parallel_degree = 0\ncontext_parallel_degree = -3\nexpert_parallel_degree = 0\n"
       "expert_tensor_parallel_degree = -1\npipeline_parallel_microbatch_size = 0\n", "rules",
       "zero and negative degrees"),
    _e("titan-nan-inf", "titan.toml",
       "[training]\nlocal_batch_size = nan\nglobal_batch_size = inf\nseq_len = -inf\n[parallelism]\n"
       "tensor_parallel_degree = inf\ncontext_parallel_degree = nan\npipeline_parallel_degree = 2.5\n"
       "pipeline_parallel_microbatch_size = 1e300\nexpert_parallel_degree = true\n", "rules", "NaN, inf, floats, bools"),
    _e("titan-wrong-types", "titan.toml",
       '[model]\nname = 3\n[training]\nlocal_batch_size = "8"\nglobal_batch_size = [64]\nseq_len = {a = 1}\n'
       '[parallelism]\ntensor_parallel_degree = "2"\npipeline_parallel_degree = [2]\npipeline_parallel_schedule = 3\n'
       'data_parallel_shard_degree = true\ncontext_parallel_degree = {a = 1}\n', "rules", "strings, lists, tables"),
    _e("toml-long-dotted-key", "titan.toml", "[training]\nlocal_batch_size = 8\n" + "a." * 50_000 + "b = 1\n",
       "reader", "a dotted key of 50000 parts"),
    _e("toml-deep", "titan.toml", "[training]\nlocal_batch_size = " + "[" * 50_000 + "]" * 50_000 + "\n", "reader",
       "a TOML array nested 50000 deep"),
    # -- Python --
    _e("python-fstring-bomb", "sft.py",
       "x = 'ab'\n" + "x = f'{x}{x}'\n" * 80 + XTUNER.format(sp="len(x)", micro=1, ga=16), "reader",
       "an f-string doubled 80 times"),
    _e("python-string-doubling", "sft.py",
       "x = 'ab'\n" + "x = x + x\n" * 80 + XTUNER.format(sp=2, micro="len(x)", ga=16), "reader",
       "a string doubled 80 times"),
    _e("python-round-bomb", "sft.py", XTUNER.format(sp="round(1, -10**9)", micro="round(1.5, 10**9)", ga=16),
       "reader", "round(1, -10**9)"),
    _e("python-pow-bomb", "sft.py", XTUNER.format(sp="10 ** 10 ** 10", micro="9 ** 9 ** 9", ga="2 ** 2 ** 40"),
       "reader", "exponent towers"),
    _e("python-format-bomb", "sft.py",
       XTUNER.format(sp="len('{:>1000000000}'.format(1))", micro="len(f'{1:>{10**9}}')", ga=16), "reader",
       "format widths of 10**9"),
    _e("python-deep", "sft.py", "x = " + "(" * 100_000 + "1" + ")" * 100_000 + "\n" + XTUNER.format(sp=2, micro=1, ga=16),
       "reader", "parentheses nested 100000 deep"),
    _e("python-nan-inf", "sft.py",
       XTUNER.format(sp="float('nan')", micro="float('inf')", ga="-float('inf')") + "max_length = 1e999\n",
       "rules", "NaN and infinities as XTuner facts"),
    _e("python-zero-negative", "sft.py", XTUNER.format(sp=0, micro=-1, ga=0) + "accumulative_counts *= 0\n",
       "rules", "zero and negative XTuner facts"),
    _e("python-wrong-types", "sft.py", XTUNER.format(sp="'4'", micro="[1, 2]", ga="dict(a=1)"), "rules",
       "strings, lists and dicts as XTuner facts"),
    _e("python-bools", "sft.py", XTUNER.format(sp="True", micro="True", ga="False"), "rules",
       "booleans, which are ints to Python"),
    # -- YAML --
    _e("yaml-many-nodes", "sft.yaml",
       "model_type: qwen2\nper_device_train_batch_size: 2\nmany:\n" + "- 1\n" * 150_000, "reader",
       "150000 sequence items"),
    _e("yaml-alias-bomb", "sft.yaml",
       "a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + "".join(
           f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(9))
       + "per_device_train_batch_size: 2\nmodel_type: qwen2\n", "reader", "a billion laughs of aliases"),
    _e("yaml-long-line", "sft.yaml",
       "model_type: qwen2\nper_device_train_batch_size: 2\nname: " + "x" * 2_000_000 + "\n", "reader",
       "one YAML line of 2 MB"),
    _e("yaml-long-key-line", "sft.yaml", "x" * 500_000 + ": 1\nper_device_train_batch_size: 2\n", "reader",
       "a YAML key of 500 kB"),
    _e("yaml-deep-flow", "sft.yaml", "per_device_train_batch_size: " + "[" * 40_000 + "]" * 40_000 + "\n", "reader",
       "a flow sequence nested 40000 deep"),
    _e("yaml-deep-block", "sft.yaml",
       "".join(" " * i + "a:\n" for i in range(6000)) + "per_device_train_batch_size: 2\n", "reader",
       "a block mapping nested 6000 deep"),
    _e("yaml-unicode-breaks", "sft.yaml",
       "\ufeffmodel_type: qwen2\u2028\nper_device_train_batch_size: 2\x85\ngradient_accumulation_steps: 8 # \u202e\u200f\n"
       "sequence_parallel_size: '²'\nname: \"\\ud800\"\n", "reader", "U+2028, U+0085, RTL marks, an escaped surrogate"),
    _e("yaml-nan-inf-degrees", "sft.yaml",
       "model_type: qwen2\nper_device_train_batch_size: .nan\ngradient_accumulation_steps: .inf\n"
       "sequence_parallel_size: -.inf\n", "rules", "NaN and infinities as TrainingArguments facts"),
    _e("yaml-zero-negative", "sft.yaml",
       "model_type: qwen2\nper_device_train_batch_size: 0\ngradient_accumulation_steps: -4\nsequence_parallel_size: 0\n"
       "packing: true\ngroup_by_length: true\n", "rules", "zero and negative TrainingArguments facts",
       runs=((None, None), (8, 64), (7, 0), (1, 1))),
    _e("yaml-wrong-types", "sft.yaml",
       "model_type: qwen2\nper_device_train_batch_size: [2]\ngradient_accumulation_steps: {a: 1}\n"
       "sequence_parallel_size: '2'\nbf16: 'true'\nfp16: 1\npacking: yes\n", "rules", "lists, dicts, strings"),
    _e("axolotl-bad-values", "axolotl.yaml",
       "base_model: x\nmicro_batch_size: 0\ngradient_accumulation_steps: .nan\nbatch_size: -.inf\n"
       "context_parallel_size: 0\ntensor_parallel_size: -2\nsequence_len: .inf\nsample_packing: true\n"
       "plugins: [axolotl.integrations.expert_parallel]\nexpert_parallel_size: 1e999\ndp_shard_size: 0\n"
       "num_generations: 0\nrl: grpo\ntrl:\n  num_generations: 0\n  generation_batch_size: -1\n", "rules",
       "axolotl factors that are zero, negative, NaN, infinite"),
    _e("verl-bad-values", "ppo.yaml",
       "actor_rollout_ref:\n  actor:\n    ppo_mini_batch_size: 0\n    ppo_micro_batch_size_per_gpu: -1\n"
       "    ulysses_sequence_parallel_size: 0\n    megatron:\n      tensor_model_parallel_size: 0\n"
       "  rollout:\n    n: .nan\n  model:\n    use_remove_padding: false\n"
       "critic:\n  ppo_mini_batch_size: .inf\n  ppo_micro_batch_size_per_gpu: 0\n  ulysses_sequence_parallel_size: -2\n"
       "data:\n  train_batch_size: 0\ntrainer:\n  n_gpus_per_node: 0\n  nnodes: -1\n", "rules",
       "verl factors that are zero, negative, NaN, infinite"),
    _e("nemo-bad-values", "nemo.yaml",
       "trainer:\n  devices: 0\n  num_nodes: -1\n  accumulate_grad_batches: 0\nmodel:\n  micro_batch_size: 0\n"
       "  global_batch_size: .nan\n  tensor_model_parallel_size: 0\n  pipeline_model_parallel_size: -1\n"
       "  virtual_pipeline_model_parallel_size: 0\n  context_parallel_size: .inf\n  expert_model_parallel_size: 0\n"
       "  num_moe_experts: 0\n  encoder_seq_length: 0\n  num_layers: 0\n  sequence_parallel: true\n", "rules",
       "NeMo factors that are zero, negative, NaN, infinite"),
    _e("torchtune-bad-values", "tune.yaml",
       "model:\n  _component_: torchtune.models.llama3_1.lora_llama3_1_8b\noptimizer:\n  _component_: torch.optim.AdamW\n"
       "batch_size: 0\ngradient_accumulation_steps: .nan\ntensor_parallel_dim: 0\ndata_parallel_shard_dim: -2\n"
       "data_parallel_replicate_dim: .inf\ncontext_parallel_dim: -1\nppo_batch_size: 0\nforward_batch_size: -1\n"
       "tokenizer:\n  _component_: x\n  max_seq_len: 0\ndataset:\n  _component_: x\n  packed: true\n"
       "optimizer_in_bwd: true\n", "rules", "torchtune factors that are zero, negative, NaN, infinite"),
    _e("deepspeed-bad-values", "ds.json",
       '{"train_batch_size": 0, "train_micro_batch_size_per_gpu": -1, "gradient_accumulation_steps": 0.5,'
       ' "zero_optimization": {"stage": 1e999, "offload_optimizer": {"device": 3}}, "bf16": {"enabled": "maybe"}}',
       "rules", "DeepSpeed factors that are zero, negative, fractional", runs=((None, None), (8, 64), (7, 0), (1, 1))),
    _e("trl-bad-values", "grpo.yaml",
       "model_name_or_path: x\nper_device_train_batch_size: 0\ngradient_accumulation_steps: 0\nnum_generations: 0\n"
       "generation_batch_size: -1\nsteps_per_generation: .nan\npadding_free: true\nmax_seq_length: .inf\n"
       "load_best_model_at_end: true\nsave_strategy: steps\neval_strategy: steps\nsave_steps: 0\neval_steps: 0\n",
       "rules", "TRL factors that are zero, negative, NaN"),
    _e("world-huge-valid", "sft.yaml",
       "# batchlint: world-size=99999999999999999999999999999999\n# batchlint: global-batch=3\n"
       "model_type: qwen2\nper_device_train_batch_size: 99999999999999999999\ngradient_accumulation_steps: 7\n"
       "sequence_parallel_size: 3\n", "rules", "a valid but enormous W"),
]

BY_KEY = {entry.key: entry for entry in CATALOGUE}
