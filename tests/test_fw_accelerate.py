"""Accelerate config files linted on their own: the world size they give (num_processes, the
total over machines), the DeepSpeed accumulation they set, the DeepSpeed JSON they name
(checked under that W by the DeepSpeed adapter's reading, reported in the JSON), and BL122."""

import json

import pytest

from batchlint.config import Settings
from batchlint.engine import Options, check_file
from batchlint.frameworks import accelerate

from conftest import run, write


def codes(result):
    return sorted((d.code, d.path.rsplit("/", 1)[-1], d.span.line) for d in result.diagnostics)


# In the shape of trl examples/accelerate_configs/deepspeed_zero3.yaml.
ZERO3 = """\
compute_environment: LOCAL_MACHINE
debug: false
deepspeed_config:
  deepspeed_multinode_launcher: standard
  offload_optimizer_device: none
  offload_param_device: none
  zero3_init_flag: true
  zero3_save_16bit_model: true
  zero_stage: 3
distributed_type: DEEPSPEED
downcast_bf16: 'no'
machine_rank: 0
main_training_function: main
mixed_precision: bf16
num_machines: {machines}
num_processes: {processes}
rdzv_backend: static
same_network: true
use_cpu: false
"""

# With a DeepSpeed JSON next to it (the keys accelerate would ignore left out).
WITH_FILE = """\
compute_environment: LOCAL_MACHINE
deepspeed_config:
  deepspeed_config_file: ds.json
  zero3_init_flag: true
distributed_type: DEEPSPEED
machine_rank: 0
num_machines: 1
num_processes: 8
"""


def test_an_accelerate_config_is_recognised_and_gives_w(lint):
    result = lint("zero3.yaml", ZERO3.format(machines=1, processes=8))
    assert result.framework == "accelerate-config" and result.diagnostics == []


@pytest.mark.parametrize("machines, processes, world", [
    (1, 8, 8), (2, 16, 16),  # num_processes is the total over machines
    (2, 15, 14),  # 15 // 2 = 7 per machine: accelerate floors, 14 processes run
    (1, -1, "?"),  # -1: pass --num_processes on the launch line
])
def test_world_size_is_num_processes_over_machines(tmp_path, machines, processes, world):
    path = write(tmp_path, "zero3.yaml", ZERO3.format(machines=machines, processes=processes))
    [explained] = json.loads(run("explain", "--format", "json", path).stdout)
    rows = {row["name"]: row for row in explained["rows"]}
    assert explained["framework"] == "accelerate-config" and rows["world size W"]["values"] == [world]
    if world == 14:
        assert "num_processes (15) // num_machines (2) = 7 per machine x 2 machines" in rows["world size W"]["source"]


def test_deepspeed_accumulation_written_in_the_accelerate_config(tmp_path):
    text = ZERO3.format(machines=1, processes=8).replace("  zero_stage: 3\n", "  zero_stage: 3\n  gradient_accumulation_steps: 16\n")
    [explained] = json.loads(run("explain", "--format", "json", write(tmp_path, "z.yaml", text)).stdout)
    rows = {row["name"]: row for row in explained["rows"]}
    assert rows["gradient accumulation"]["values"] == [16]
    assert rows["gradient accumulation"]["source"] == "deepspeed_config.gradient_accumulation_steps, line 10"


def test_other_yaml_with_distributed_type_is_not_taken(lint):
    """A key named distributed_type alone (or an unknown kind) does not make an accelerate config."""
    assert lint("a.yaml", "distributed_type: DEEPSPEED\nfoo: 1\n").framework != "accelerate-config"
    assert lint("b.yaml", "distributed_type: ring\nnum_processes: 8\n").framework != "accelerate-config"


def test_the_linked_json_is_checked_with_w_from_num_processes(tmp_path, lint):
    """train_batch_size 100 is not 4 x 4 x 8: DeepSpeed refuses; reported in the JSON, at its line."""
    ds = {"train_batch_size": 100, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 4,
          "zero_optimization": {"stage": 3}}
    write(tmp_path, "ds.json", json.dumps(ds, indent=2) + "\n")
    assert codes(lint("acc.yaml", WITH_FILE)) == [("BL102", "ds.json", 2)]
    write(tmp_path, "ds.json", json.dumps({**ds, "train_batch_size": 128}, indent=2) + "\n")
    assert codes(lint("acc.yaml", WITH_FILE)) == []
    # The HF integration fills "auto": nothing to check.
    write(tmp_path, "ds.json", json.dumps({**ds, "train_batch_size": "auto"}, indent=2) + "\n")
    assert codes(lint("acc.yaml", WITH_FILE)) == []


def test_a_linked_json_without_zero_optimization_is_refused(tmp_path, lint):
    write(tmp_path, "ds.json", json.dumps({"train_micro_batch_size_per_gpu": "auto", "bf16": {"enabled": True}}) + "\n")
    [finding] = lint("acc.yaml", WITH_FILE).diagnostics
    assert (finding.code, finding.span.line) == ("BL122", 3) and "has no zero_optimization section" in finding.message
    write(tmp_path, "ds.json", json.dumps({"zero_optimization": {"stage": 2}}) + "\n")
    assert lint("acc.yaml", WITH_FILE).diagnostics == []


def test_a_missing_linked_json_is_no_finding(lint):
    result = lint("acc.yaml", WITH_FILE)
    assert result.framework == "accelerate-config" and result.diagnostics == []


@pytest.mark.parametrize("extra, flagged", [
    ("  gradient_accumulation_steps: 4\n", ["deepspeed_config.gradient_accumulation_steps"]),
    ("  offload_param_device: none\n", ["deepspeed_config.offload_param_device"]),  # any value: the key is refused
    ("  deepspeed_multinode_launcher: standard\n", []),
    ("mixed_precision: 'no'\n", ["mixed_precision"]),
    ("mixed_precision: null\n", []),
])
def test_keys_accelerate_refuses_beside_a_deepspeed_file(tmp_path, lint, extra, flagged):
    write(tmp_path, "ds.json", json.dumps({"zero_optimization": {"stage": 3}}) + "\n")
    text = WITH_FILE.replace("  zero3_init_flag: true\n", "  zero3_init_flag: true\n" + extra) if extra.startswith("  ") \
        else WITH_FILE + extra
    result = lint("acc.yaml", text)
    [(_, plan)] = check_file(str(tmp_path / "acc.yaml"), Settings(root=str(tmp_path)), Options(), rules=()).plans
    assert [f.key for f in accelerate.settings(plan).deepspeed_file.ignored] == flagged
    assert [d.code for d in result.diagnostics] == (["BL122"] if flagged else [])


@pytest.mark.parametrize("requirement, severity", [
    ("accelerate>=0.16\n", "error"),  # every release it admits refuses the keys
    ("accelerate==0.15.0\n", None),  # no check yet: the keys are ignored without a word
    (None, "info"),  # no release named: only 0.16 and later refuse
])
def test_keys_beside_the_file_are_refused_from_accelerate_0_16(tmp_path, lint, requirement, severity):
    write(tmp_path, "ds.json", json.dumps({"zero_optimization": {"stage": 3}}) + "\n")
    if requirement is not None:
        write(tmp_path, "requirements.txt", requirement)
    text = WITH_FILE.replace("  zero3_init_flag: true\n", "  zero3_init_flag: true\n  zero_stage: 3\n")
    assert [(d.code, d.severity) for d in lint("acc.yaml", text).diagnostics] == (
        [("BL122", severity)] if severity else [])


def test_the_examples():
    result = run("check", "--format", "json", "examples/accelerate")
    found = [(d["code"], d["path"], d["line"]) for d in json.loads(result.stdout)]
    assert found == [("BL122", "examples/accelerate/zero3.yaml", 9)]


# -- one `accelerate launch --config_file acc.yaml train.py --flags` run: the DeepSpeed config accelerate's
# plugin builds from the accelerate config, filled and checked by the Trainer against the flags (BL120).

# In the shape of an `accelerate config` DeepSpeed answer file (LLaMA-Factory issue 201).
DS_BLOCK = """\
compute_environment: LOCAL_MACHINE
deepspeed_config:
{block}distributed_type: {kind}
downcast_bf16: 'no'
machine_rank: 0
main_training_function: main
mixed_precision: fp16
num_machines: 1
num_processes: 4
rdzv_backend: static
use_cpu: false
"""
ZERO2 = "  gradient_accumulation_steps: {ga}\n  gradient_clipping: {clip}\n  offload_optimizer_device: none\n" \
        "  zero3_init_flag: false\n  zero_stage: 2\n"
ZERO2_GA1 = ZERO2.format(ga=1, clip=1.0)

RUN = """\
#!/bin/bash
accelerate launch {options}--config_file accelerate_config.yaml src/train_bash.py \\
    --stage sft \\
    --model_name_or_path path_to_llama_model \\
    --do_train \\
    --dataset alpaca_gpt4_en \\
    --finetuning_type lora \\
    --output_dir path_to_sft_checkpoint \\
    --per_device_train_batch_size 4 \\
    --gradient_accumulation_steps 4 \\
{extra}    --learning_rate 5e-5 \\
    --fp16
"""


def _launched(tmp_path, block=ZERO2_GA1, kind="DEEPSPEED", options="", extra="", files=()):
    write(tmp_path, "accelerate_config.yaml", DS_BLOCK.format(block=block, kind=kind))
    write(tmp_path, "run.sh", RUN.format(options=options, extra=extra))
    for name, text in files:
        write(tmp_path, name, text)
    found = json.loads(run("check", "--format", "json", tmp_path).stdout)
    return [(f["code"], f["path"].rsplit("/", 1)[-1], f["line"], _said(f)) for f in found]


def _said(finding):
    """A JSON finding's message and its notes (the arithmetic, the sources of its numbers)."""
    return " ".join([finding["message"], *finding["notes"]])


def test_the_accelerate_accumulation_against_the_flag_is_reported_at_the_accelerate_value(tmp_path):
    [(code, path, line, message)] = _launched(tmp_path)
    assert (code, path, line) == ("BL120", "accelerate_config.yaml", 3)
    assert "deepspeed_config.gradient_accumulation_steps (1) in the DeepSpeed config accelerate builds from " in message
    assert "differs from gradient_accumulation_steps (4) (" in message and "run.sh:10)" in message
    assert "transformers >= 4.30" in message
    [finding] = json.loads(run("check", "--format", "json", tmp_path).stdout)
    assert "accelerate >= 0.23" in finding["fix"]["message"] and "make it 4" in finding["fix"]["message"]


@pytest.mark.parametrize("ga, flagged", [
    (4, False), ("auto", False), ("'4'", False),  # equal, filled in, "4" exported and read back as 4
    (1, True), (8, True),
])
def test_the_accelerate_accumulation_values(tmp_path, ga, flagged):
    found = _launched(tmp_path, block=ZERO2.format(ga=ga, clip=1.0))
    assert [(c, p, line) for c, p, line, _ in found] == ([("BL120", "accelerate_config.yaml", 3)] if flagged else [])


def test_an_accumulation_the_accelerate_config_leaves_out_is_not_judged(tmp_path):
    """accelerate >= 0.23 exports nothing and the plugin writes "auto" (0.20-0.22: 1)."""
    assert _launched(tmp_path, block="  zero_stage: 2\n") == []


@pytest.mark.parametrize("clip, extra, flagged", [
    (1.0, "", False), (1.0, "    --max_grad_norm 1.0 \\\n", False),
    (1.0, "    --max_grad_norm 0.5 \\\n", True),
    (0.5, "", True),  # max_grad_norm's default is 1.0
    ("auto", "    --max_grad_norm 0.5 \\\n", False),
    (0, "    --max_grad_norm 0.5 \\\n", False),  # 0 is left out of the config it builds
])
def test_the_accelerate_gradient_clipping_against_max_grad_norm(tmp_path, clip, extra, flagged):
    found = _launched(tmp_path, block=ZERO2.format(ga=4, clip=clip), extra=extra)
    assert [(c, p, line) for c, p, line, _ in found] == ([("BL120", "accelerate_config.yaml", 4)] if flagged else [])


@pytest.mark.parametrize("options, extra, kind", [
    ("--gradient_accumulation_steps 4 ", "", "DEEPSPEED"),  # the launcher's own option wins over the file
    ("--use_fsdp ", "", "DEEPSPEED"),
    ("", "", "MULTI_GPU"),  # no DeepSpeed: the block is not read
    ("", "    --deepspeed ds.json \\\n", "DEEPSPEED"),  # the program's own DeepSpeed config wins
])
def test_what_the_accelerate_config_does_not_hand_over(tmp_path, options, extra, kind):
    ds = '{"gradient_accumulation_steps": "auto", "zero_optimization": {"stage": 2}}\n'
    found = _launched(tmp_path, options=options, extra=extra, kind=kind, files=(("ds.json", ds),))
    # With the program's own config accelerate refuses the block's keys instead (BL123, below).
    assert [code for code, *_ in found] == (["BL123"] if extra else [])


def test_a_loop_of_its_own_meets_no_trainer_check(tmp_path):
    """`--train_batch_size`: not TrainingArguments' name, so no Trainer compares the DeepSpeed config."""
    write(tmp_path, "accelerate_config.yaml", DS_BLOCK.format(block=ZERO2.format(ga=1, clip=1.0), kind="DEEPSPEED"))
    write(tmp_path, "run.sh", "accelerate launch --config_file accelerate_config.yaml train.py "
                              "--train_batch_size 4 --gradient_accumulation_steps 8\n")
    assert json.loads(run("check", "--format", "json", tmp_path).stdout) == []


@pytest.mark.parametrize("ds, where", [
    ({"train_micro_batch_size_per_gpu": "auto"}, ("accelerate_config.yaml", 3)),  # accelerate adds 1
    ({"train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto"}, None),
    ({"gradient_accumulation_steps": 4}, None),
    ({"gradient_accumulation_steps": 2}, ("ds_z2.json", 2)),
])
def test_the_json_the_accelerate_config_names(tmp_path, ds, where):
    text = json.dumps({**ds, "zero_optimization": {"stage": 2}}, indent=2) + "\n"
    found = _launched(tmp_path, block="  deepspeed_config_file: ds_z2.json\n  zero3_init_flag: false\n",
                      files=(("ds_z2.json", text),))
    found = [f for f in found if f[0] != "BL122"]  # mixed_precision beside the file: BL122's, tested above
    assert [(p, line) for _, p, line, _ in found] == ([where] if where else [])
    if where == ("accelerate_config.yaml", 3):
        assert found[0][3].startswith("DeepSpeed gradient_accumulation_steps 1 differs")
        assert "gradient_accumulation_steps (added by accelerate: " in found[0][3]
        assert "ds_z2.json writes none) (1) in the DeepSpeed config accelerate takes from " in found[0][3]


def test_a_launched_config_file_meets_the_accelerate_deepspeed_config(tmp_path):
    """`accelerate launch --config_file acc.yaml src/train.py sft.yaml`: the YAML's accumulation."""
    write(tmp_path, "accelerate_config.yaml", DS_BLOCK.format(block=ZERO2.format(ga=2, clip=1.0), kind="DEEPSPEED"))
    write(tmp_path, "sft.yaml", "stage: sft\nfinetuning_type: lora\nper_device_train_batch_size: 2\n"
                                "gradient_accumulation_steps: 8\nfp16: true\n")
    write(tmp_path, "train.sh", "accelerate launch --config_file accelerate_config.yaml src/train.py sft.yaml\n")
    found = json.loads(run("check", "--format", "json", tmp_path).stdout)
    assert [(f["code"], f["path"].rsplit("/", 1)[-1], f["line"]) for f in found] == \
        [("BL120", "accelerate_config.yaml", 3)]
    assert "sft.yaml:4)" in _said(found[0])


# -- BL123: the program names its own DeepSpeed config; accelerate refuses the keys of its block.

@pytest.mark.parametrize("block, options, precision, flagged", [
    ("  gradient_accumulation_steps: 4\n  zero_stage: 2\n", "", "", [3]),
    ("  zero3_init_flag: false\n", "", "mixed_precision: fp16\n", [8]),
    ("  zero3_init_flag: false\n", "--mixed_precision fp16 ", "mixed_precision: fp16\n", []),  # the flag wins
    ("  zero3_init_flag: false\n", "", "mixed_precision: null\n", []),
    ("  deepspeed_multinode_launcher: standard\n", "", "", []),
])
def test_the_accelerate_block_beside_the_programs_own_deepspeed_config(tmp_path, block, options, precision, flagged):
    text = DS_BLOCK.format(block=block, kind="DEEPSPEED").replace("mixed_precision: fp16\n", precision)
    write(tmp_path, "accelerate_config.yaml", text)
    write(tmp_path, "run.sh", RUN.format(options=options, extra="    --deepspeed ds_z2.json \\\n"))
    write(tmp_path, "ds_z2.json", '{"gradient_accumulation_steps": "auto", "zero_optimization": {"stage": 2}}\n')
    found = json.loads(run("check", "--format", "json", tmp_path).stdout)
    assert [(f["code"], f["path"].rsplit("/", 1)[-1], f["line"]) for f in found] == \
        [("BL123", "accelerate_config.yaml", line) for line in flagged]
    if flagged:
        assert "the program it launches writes deepspeed ds_z2.json (" in _said(found[0])


def test_no_program_deepspeed_config_no_refusal(tmp_path):
    """Without `--deepspeed` the block is the DeepSpeed config: nothing refused (BL120 compares it)."""
    found = _launched(tmp_path, block=ZERO2.format(ga=4, clip=1.0))
    assert found == []


# -- parallelism_config: the data-parallel size the launch line implies.

CONTEXT_PARALLEL = """\
compute_environment: LOCAL_MACHINE
distributed_type: {kind}
fsdp_config:
  fsdp_version: 2
mixed_precision: bf16
num_machines: 1
num_processes: 8
parallelism_config:
  parallelism_config_dp_replicate_size: 1
  parallelism_config_dp_shard_size: 4
  parallelism_config_{other}_size: 2
"""


@pytest.mark.parametrize("kind, other, dp, batch", [
    ("FSDP", "cp", 4, 32), ("FSDP", "tp", 4, 32),  # cp and tp ranks share a batch
    ("FSDP", "sp", "?", "?"),  # sequence parallelism: not judged
    ("DEEPSPEED", "tp", "?", "?"),  # DeepSpeed's own mesh: not judged
])
def test_parallelism_config_data_parallel_size(tmp_path, kind, other, dp, batch):
    write(tmp_path, "cp.yaml", CONTEXT_PARALLEL.format(kind=kind, other=other))
    path = write(tmp_path, "run.sh", "accelerate launch --config_file cp.yaml train.py "
                                     "--per_device_train_batch_size 2 --gradient_accumulation_steps 4\n")
    [explained] = json.loads(run("explain", "--format", "json", path).stdout)
    rows = {row["name"]: row for row in explained["rows"]}
    assert rows["world size W"]["values"] == [8]
    assert rows["data parallel dp"]["values"] == [dp]
    assert rows["global batch (sequences/step)"]["values"] == [batch]
    [alone] = json.loads(run("explain", "--format", "json", tmp_path / "cp.yaml").stdout)
    assert {row["name"]: row for row in alone["rows"]}["data parallel dp"]["values"] == [dp]


def test_without_parallelism_config_the_data_is_split_over_w(tmp_path):
    write(tmp_path, "fsdp.yaml", CONTEXT_PARALLEL.format(kind="FSDP", other="cp").split("parallelism_config:")[0])
    path = write(tmp_path, "run.sh", "accelerate launch --config_file fsdp.yaml train.py "
                                     "--per_device_train_batch_size 2 --gradient_accumulation_steps 4\n")
    [explained] = json.loads(run("explain", "--format", "json", path).stdout)
    rows = {row["name"]: row for row in explained["rows"]}
    assert rows["data parallel dp"]["values"] == [8] and rows["global batch (sequences/step)"]["values"] == [64]


@pytest.mark.parametrize("flag, flagged", [(16, False), (8, True)])
def test_a_framework_entry_point_is_a_trainer_without_writing_the_micro_batch(tmp_path, flag, flagged):
    """In the shape of ms-swift's examples/train/multi-node/accelerate: `swift/cli/sft.py` under
    `accelerate launch --config_file multi_node.yaml`, its micro batch left to ms-swift's default."""
    write(tmp_path, "multi_node.yaml", "compute_environment: LOCAL_MACHINE\ndeepspeed_config:\n"
                                       "    deepspeed_multinode_launcher: standard\n    gradient_accumulation_steps: 16\n"
                                       "    zero_stage: 3\ndistributed_type: DEEPSPEED\nnum_machines: 2\n"
                                       "num_processes: 8\n")
    write(tmp_path, "train_node1.sh", "accelerate launch --config_file multi_node.yaml --machine_rank 0 \\\n"
                                      "    swift/cli/sft.py \\\n    --model Qwen/Qwen2.5-7B-Instruct \\\n"
                                      f"    --gradient_accumulation_steps {flag} \\\n    --logging_steps 5\n")
    found = json.loads(run("check", "--format", "json", tmp_path).stdout)
    assert [(f["code"], f["path"].rsplit("/", 1)[-1], f["line"]) for f in found] == \
        ([("BL120", "multi_node.yaml", 4)] if flagged else [])
