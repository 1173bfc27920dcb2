"""TorchTitan's Python config registries (after v0.2.2): functions read statically, derived
configs followed, `--module/--config` and MODULE/CONFIG from launch lines, the token
arithmetic, and the start-up refusals, both sides."""

import json

from batchlint.frameworks.facts import Outside
from batchlint.frameworks.torchtitan_registry import SEQUENCES, TOKENS, plans, read_configs
from batchlint.plan import Fact, Origin
from batchlint.project import ProjectView
from batchlint.sources.python import read_python

from conftest import cli_runner, lint_text, run, write

HEAD = """\
from torchtitan.config import ParallelismConfig, TrainingConfig
from torchtitan.models.llama3 import model_registry
from torchtitan.trainer import Trainer


"""

BASE = HEAD + """\
def base() -> Trainer.Config:
    return Trainer.Config(
        model_spec=model_registry("8B"),
        training=TrainingConfig(
            num_tokens_per_microbatch_per_dp_rank={tokens},
            max_context_length=8192,
        ),
    )
"""


def configs(text, path="configs.py"):
    return {c.name: c.value for c in read_configs(read_python(path, text), ProjectView())}


def plan_of(text, name, world=None):
    world_fact = Fact(world, "world size", None, Origin.COMMAND_LINE, detail="--world-size") if world else None
    found = plans(read_python("configs.py", text), Outside(world_size=world_fact))
    return {p.document.selected: p for p in found}[name]


def codes(result):
    return sorted((d.code, d.span.line) for d in result.diagnostics)


# --------------------------------------------------------------------------- reading


def test_a_derived_config_sets_attributes_on_a_copy_of_its_base():
    text = BASE.format(tokens="2 * 8192") + """

def tp2() -> Trainer.Config:
    config = base()
    config.parallelism.tensor_parallel_degree = 2
    config.training.num_tokens_per_train_step = 65536
    return config
"""
    found = configs(text)
    assert found["tp2"].get("parallelism", "tensor_parallel_degree").value == 2
    assert found["tp2"].get("training", "num_tokens_per_microbatch_per_dp_rank").value == 16384
    # The base is not changed by what its derived config sets.
    assert found["base"].get("parallelism", "tensor_parallel_degree") is None
    assert found["base"].get("training", "num_tokens_per_train_step") is None


def test_what_is_not_followed_stays_unknown():
    text = BASE.format(tokens="16384") + """

def picked() -> Trainer.Config:
    config = base()
    if os.environ.get("BIG"):
        return config
    config.training.num_tokens_per_train_step = 65536
    return config


def converted() -> Trainer.Config:
    return to_other_config(base())


def handed_over() -> Trainer.Config:
    config = base()
    tweak(config)
    return config


def appended() -> Trainer.Config:
    config = base()
    config.override.imports.append("x")
    return config
"""
    found = configs(text)
    assert type(found["picked"]).__name__ == "Unknown"
    assert type(found["converted"]).__name__ == "Unknown"
    assert type(found["handed_over"]).__name__ == "Unknown"  # a function of another module may set anything
    # A method changes the value it is called on, nothing else.
    assert found["appended"].get("training", "num_tokens_per_microbatch_per_dp_rank").value == 16384
    assert type(found["appended"].get("override", "imports")).__name__ == "Unknown"


def test_a_helper_with_parameters_and_one_the_config_is_given_to_are_followed():
    text = HEAD + """\
def _make(tokens: int = 4096, *, tp: int = 1) -> Trainer.Config:
    return Trainer.Config(
        model_spec=model_registry("debugmodel"),
        training=TrainingConfig(num_tokens_per_microbatch_per_dp_rank=tokens),
        parallelism=ParallelismConfig(tensor_parallel_degree=tp),
    )


def _shard(config: Trainer.Config, *, degree: int) -> None:
    config.parallelism.data_parallel_shard_degree = degree


def small() -> Trainer.Config:
    return _make()


def wide() -> Trainer.Config:
    config = _make(8192, tp=2)
    _shard(config, degree=4)
    return config
"""
    found = configs(text)
    assert set(found) == {"small", "wide"}  # private helpers are no configs
    assert found["small"].get("training", "num_tokens_per_microbatch_per_dp_rank").value == 4096
    assert found["wide"].get("training", "num_tokens_per_microbatch_per_dp_rank").value == 8192
    assert found["wide"].get("parallelism", "tensor_parallel_degree").value == 2
    assert found["wide"].get("parallelism", "data_parallel_shard_degree").value == 4


def test_a_config_imported_from_another_module_of_the_project_is_followed(tmp_path):
    write(tmp_path, "torchtitan/models/llama3/config_registry.py", BASE.format(tokens="8 * 2048"))
    write(tmp_path, "recipes/__init__.py", HEAD + "def _spmd(config: Trainer.Config) -> None:\n"
                                                  "    config.parallelism.context_parallel_degree = 2\n")
    path = write(tmp_path, "recipes/llama3.py", HEAD + """\
from torchtitan.models.llama3.config_registry import base

from . import _spmd


def cp2_tp2() -> Trainer.Config:
    config = base()
    _spmd(config)
    config.parallelism.tensor_parallel_degree = 2
    return config
""")
    with open(path, encoding="utf-8") as handle:
        [config] = read_configs(read_python(path, handle.read()), ProjectView())
    tokens = config.value.get("training", "num_tokens_per_microbatch_per_dp_rank")
    assert tokens.value == 16384 and tokens.span.path.endswith("torchtitan/models/llama3/config_registry.py")
    assert config.value.get("parallelism", "context_parallel_degree").value == 2


# --------------------------------------------------------------------------- the arithmetic


def test_tokens_per_dp_rank_count_the_pipeline_microbatches_and_the_accumulation_is_derived():
    text = BASE.format(tokens="8192") + """

def pp2() -> Trainer.Config:
    config = base()
    config.parallelism.pipeline_parallel_degree = 2
    config.parallelism.num_pp_microbatches = 4
    config.training.num_tokens_per_train_step = 8192 * 4 * 4 * 3
    return config
"""
    plan = plan_of(text, "pp2", world=8)
    assert plan.unit == TOKENS and plan.settings.arithmetic == TOKENS
    assert plan.micro_batch.value == 32768 and "num_pp_microbatches 4" in plan.micro_batch.detail
    assert plan.data_parallel.value == 4
    assert plan.accumulation().value == 3
    base = plan_of(text, "base", world=8)
    assert base.micro_batch.value == 8192 and base.accumulation().value == 1  # -1: tokens per dp rank x dp
    assert base.micro_batch.span.line == 10


def test_the_pipeline_microbatches_count_only_with_pipeline_parallelism():
    text = BASE.format(tokens="8192") + """

def no_pp() -> Trainer.Config:
    config = base()
    config.parallelism.num_pp_microbatches = 4
    return config
"""
    assert plan_of(text, "no_pp", world=8).micro_batch.value == 8192


def test_the_release_on_pypi_counts_sequences():
    text = HEAD + """\
def seqs() -> Trainer.Config:
    return Trainer.Config(
        model_spec=model_registry("8B"),
        training=TrainingConfig(local_batch_size=2, global_batch_size=64, seq_len=8192),
    )
"""
    plan = plan_of(text, "seqs", world=8)
    assert plan.settings.arithmetic == SEQUENCES and plan.unit == ""
    assert plan.micro_batch.value == 2 and plan.accumulation().value == 4


def test_without_batch_keys_or_a_copy_of_torchtitan_the_batch_is_unknown():
    text = HEAD + """\
def bare() -> Trainer.Config:
    return Trainer.Config(model_spec=model_registry("8B"))
"""
    plan = plan_of(text, "bare", world=8)
    assert plan.settings.arithmetic is None and plan.micro_batch is None and plan.data_parallel.value == 8


# --------------------------------------------------------------------------- the refusals, both sides

STEP = BASE.format(tokens="16384") + """

def stepped() -> Trainer.Config:
    config = base()
    config.training.num_tokens_per_train_step = {step}
    return config
"""


def test_a_token_budget_the_micro_steps_cannot_fill_is_refused(tmp_path):
    result = lint_text(tmp_path, "configs.py", STEP.format(step=100000))
    assert codes(result) == [("BL103", 18)]
    assert "16384" in result.diagnostics[0].message and "num_tokens_per_train_step" in result.diagnostics[0].message
    assert codes(lint_text(tmp_path, "configs.py", STEP.format(step=131072))) == []
    # On 16 GPUs dp is 16: 131072 tokens is half a micro-step of all ranks.
    assert codes(lint_text(tmp_path, "configs.py", STEP.format(step=131072), world_size=16)) == [("BL103", 18)]
    assert codes(lint_text(tmp_path, "configs.py", STEP.format(step=262144), world_size=16)) == []


CP = BASE.format(tokens="{tokens}") + """

def split() -> Trainer.Config:
    config = base()
    config.parallelism = ParallelismConfig(tensor_parallel_degree=4, context_parallel_degree=2{sp})
    return config
"""


def test_tokens_of_a_micro_batch_sequence_and_context_parallelism_cannot_split_are_refused(tmp_path):
    assert codes(lint_text(tmp_path, "configs.py", CP.format(tokens=16376, sp=""))) == [("BL401", 10)]
    assert codes(lint_text(tmp_path, "configs.py", CP.format(tokens=16384, sp=""))) == []
    # Without sequence parallelism tp does not split them: 2 x cp 2 = 4 divides 16376.
    off = ", enable_sequence_parallel=False"
    assert codes(lint_text(tmp_path, "configs.py", CP.format(tokens=16376, sp=off))) == []


def test_no_toml_key_rule_reads_a_registry(tmp_path):
    text = STEP.format(step=131072).replace("max_context_length=8192", "max_context_length=8192, steps=10")
    assert [d.code for d in lint_text(tmp_path, "configs.py", text).diagnostics] == []


def test_a_toml_file_in_a_project_whose_torchtitan_reads_registries_is_not_judged_by_v0_2_keys(tmp_path):
    write(tmp_path, "torchtitan/__init__.py", "")
    write(tmp_path, "assets/version.txt", "0.2.2\n")
    write(tmp_path, "torchtitan/config/configs.py", "class TrainingConfig:\n    num_tokens_per_microbatch_per_dp_rank: int = 16384\n")
    toml = "[training]\nnum_tokens = 3\nlocal_batch_size = 2\n"
    result = lint_text(tmp_path, "old.toml", toml)
    assert "BL510" not in {d.code for d in result.diagnostics}
    assert result.framework is None  # no TorchTitan config at all: its TorchTitan reads no TOML
    write(tmp_path, "torchtitan/config/configs.py", "")
    write(tmp_path, "torchtitan/config/job_config.py", "")
    assert "BL510" in {d.code for d in lint_text(tmp_path, "old.toml", toml).diagnostics}


# --------------------------------------------------------------------------- launch lines

RUN_TRAIN = """\
#!/usr/bin/bash
NGPU=${NGPU:-"8"}
MODULE=${MODULE:-"llama3"}
CONFIG=${CONFIG:-"llama3_debugmodel"}
torchrun --nproc_per_node=${NGPU} --rdzv_backend c10d --rdzv_endpoint="localhost:0" \\
    -m torchtitan.train --module ${MODULE} --config ${CONFIG} "$@"
"""


def project(tmp_path):
    write(tmp_path, "torchtitan/models/llama3/config_registry.py", STEP.format(step=131072).replace(
        "def base()", "def llama3_debugmodel()").replace("config = base()", "config = llama3_debugmodel()"))
    write(tmp_path, "run_train.sh", RUN_TRAIN)


def test_module_and_config_from_run_train_sh_and_its_overrides(workdir):
    project(workdir)
    write(workdir, "go.sh", "NGPU=16 CONFIG=stepped ./run_train.sh\n")
    write(workdir, "ok.sh", "NGPU=8 CONFIG=stepped ./run_train.sh\n")
    write(workdir, "over.sh", "NGPU=16 CONFIG=stepped ./run_train.sh --training.num_tokens_per_train_step 262144\n")
    found = codes(lint_text(workdir, "go.sh", open("go.sh").read()))
    assert found == [("BL103", 18)]
    assert codes(lint_text(workdir, "ok.sh", open("ok.sh").read())) == []
    assert codes(lint_text(workdir, "over.sh", open("over.sh").read())) == []


def test_module_and_config_flags_on_a_torchrun_line(workdir):
    project(workdir)
    line = ("torchrun --nproc_per_node 16 -m torchtitan.train --module llama3 --config={name} "
            "--training.num_tokens_per_train_step {step}\n")
    assert codes(lint_text(workdir, "a.sh", line.format(name="stepped", step=100000))) == [("BL103", 1)]
    assert codes(lint_text(workdir, "b.sh", line.format(name="stepped", step=262144))) == []
    # The module a line names is not in the project: nothing is read, nothing is claimed.
    result = lint_text(workdir, "c.sh", line.replace("llama3", "qwen3").format(name="stepped", step=100000))
    assert codes(result) == [] and any("qwen3" in n for n in result.notices)


def test_explain_shows_the_token_arithmetic_with_its_sources(workdir):
    project(workdir)
    write(workdir, "go.sh", "NGPU=8 CONFIG=stepped ./run_train.sh\n")
    result = cli_runner().invoke(__import__("batchlint.cli", fromlist=["main"]).main,
                                 ["explain", "--format", "json", "go.sh"])
    assert result.exit_code == 0, result.output
    [explanation] = json.loads(result.stdout)
    assert explanation["config"].startswith("torchtitan/models/llama3/config_registry.py, config stepped")
    rows = {row["name"]: row for row in explanation["rows"]}
    micro = rows["tokens per micro-step (per dp rank)"]
    assert micro["values"] == [16384] and micro["unit"] == "tokens" and "line 10" in micro["source"]
    assert rows["tokens per optimizer step"]["values"] == [131072]
    assert rows["declared tokens per optimizer step"]["source"].endswith("line 18")
    assert rows["gradient accumulation"]["values"] == [1] and rows["world size W"]["values"] == [8]


def test_explain_of_a_registry_file_shows_each_config(workdir):
    write(workdir, "configs.py", STEP.format(step=131072))
    result = run("explain", "configs.py", "-w", "8")
    assert result.stdout.count("configs.py, config ") == 2
    assert "config stepped" in result.stdout and "131,072 tokens" in result.stdout
