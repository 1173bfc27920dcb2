"""nanotron: YAML configs in the shape `Config.save_as_yaml` writes (examples/config_tiny_llama.yaml),
recognised only by their `tokens:` and `parallelism:` sections; the batch arithmetic
(micro_batch_size x batch_accumulation_per_replica x parallelism.dp); W = dp x tp x pp x cp x ep
as ParallelContext asserts, checked against a torchrun launch of run_train.py --config-file;
the 1F1B engine's microbatch minimum (BL113). Checked against huggingface/nanotron @ 2411b022."""

import json

import pytest

from batchlint.cli import main
from batchlint.document import Mapping
from batchlint.frameworks import nanotron
from batchlint.frameworks.facts import Outside
from batchlint.launching.lines import launch_of
from batchlint.plan import Fact, Origin
from batchlint.sources.shell import read_shell
from batchlint.sources.yaml import read_yaml

from conftest import cli_runner, lint_text, write

# In the shape of examples/config_tiny_llama.yaml (keys sorted, as yaml.dump writes them).
TINY = """\
checkpoints:
  checkpoint_interval: 1000
  checkpoints_path: checkpoints
general:
  project: debug
  run: tiny_llama_%date_%jobid
  seed: 42
model:
  dtype: bfloat16
  model_config:
    hidden_size: 2048
    num_attention_heads: 16
    num_hidden_layers: 28
    num_key_value_heads: 2
    vocab_size: 128256
optimizer:
  clip_grad: 1.0
  zero_stage: 0
parallelism:
  dp: {dp}
  expert_parallel_size: {ep}
  pp: {pp}
  pp_engine: {engine}
  tp: 2
  tp_linear_async_communication: true
  tp_mode: REDUCE_SCATTER
tokens:
  batch_accumulation_per_replica: {accumulation}
  limit_test_batches: 0
  micro_batch_size: 3
  sequence_length: 4096
  train_steps: 2000
"""
DP_LINE, EP_LINE, PP_LINE, ACCUMULATION_LINE, MICRO_LINE, SEQ_LINE = 20, 21, 22, 28, 30, 31


def config(dp=4, ep=1, pp=1, engine="1f1b", accumulation=1, extra=""):
    return TINY.format(dp=dp, ep=ep, pp=pp, engine=engine, accumulation=accumulation) + extra


def plan_of(text, world_size=None):
    doc = read_yaml("c.yaml", text)
    world = Fact(world_size, "world size", None, Origin.COMMAND_LINE, detail="--world-size") if world_size else None
    return nanotron.plan(doc, Outside(world_size=world))


def codes(result):
    return sorted((d.code, d.span.line) for d in result.diagnostics)


def explain(path, *args):
    result = cli_runner().invoke(main, ["explain", "--format", "json", str(path), *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def rows(explanation):
    return {row["name"]: (row["values"][0], row["source"]) for row in explanation["rows"]}


# -- recognition ---------------------------------------------------------------------------


def test_a_saved_config_is_read_as_nanotron(tmp_path):
    assert lint_text(tmp_path, "config_tiny_llama.yaml", config()).framework == "nanotron"


@pytest.mark.parametrize("text", [
    # axolotl's `tokens:` are special tokens; its batch keys are its own.
    "base_model: state-spaces/mamba-2.8b\nmicro_batch_size: 2\ngradient_accumulation_steps: 4\n"
    "tokens:\n  - \"<|im_start|>\"\n",
    # A nanotron inference/generation config: parallelism without a training `tokens:` section.
    "parallelism:\n  dp: 1\n  pp: 1\n  tp: 2\ngeneral:\n  project: gen\n",
    # The accumulation under another section (nanotron reads it only under tokens:).
    "parallelism:\n  dp: 2\n  pp: 1\n  tp: 1\ntraining:\n  micro_batch_size: 2\n  batch_accumulation_per_replica: 4\n",
    # tokens: without any degree of ParallelismArgs.
    "parallelism:\n  data_parallel_shard_degree: 2\ntokens:\n  micro_batch_size: 2\n  batch_accumulation_per_replica: 4\n",
])
def test_other_files_are_not_nanotron(tmp_path, text):
    assert lint_text(tmp_path, "c.yaml", text).framework != "nanotron"


def test_an_axolotl_config_with_special_tokens_stays_axolotl(tmp_path):
    text = ("base_model: NousResearch/Meta-Llama-3-8B\nmicro_batch_size: 2\ngradient_accumulation_steps: 4\n"
            "tokens:\n  - \"<|im_start|>\"\n")
    assert lint_text(tmp_path, "axolotl.yaml", text).framework == "axolotl"


# -- the facts -----------------------------------------------------------------------------


def test_batch_facts_and_their_lines():
    plan = plan_of(config(dp=4, accumulation=8))
    assert (plan.micro_batch.value, plan.micro_batch.span.line) == (3, MICRO_LINE)
    assert (plan.grad_accum.value, plan.grad_accum.span.line) == (8, ACCUMULATION_LINE)
    assert (plan.seq_len.value, plan.seq_len.span.line) == (4096, SEQ_LINE)
    # dp is the degree as written (dp_pg has data_parallel_size ranks), not W / the others.
    assert (plan.data_parallel.value, plan.data_parallel.span.line) == (4, DP_LINE)
    assert plan.produced_global_batch()[0] == 3 * 8 * 4
    assert plan.declared_global_batch is None


def test_world_size_is_the_product_of_the_degrees_unless_a_launch_gives_it():
    plan = plan_of(config(dp=4, ep=1, pp=2))
    assert plan.world_size.value == 4 * 2 * 2 and plan.world_size.origin is Origin.DERIVED
    assert [f.value for f in plan.layout] == [4, 2, 2, 1, 1] and plan.layout_exact
    assert plan.parallel["cp"].origin is Origin.DEFAULT  # context_parallel_size defaults to 1
    launched = plan_of(config(dp=4), world_size=16)
    assert launched.world_size.value == 16 and launched.data_parallel.value == 4


def test_expert_parallelism_is_in_the_layout():
    # examples/moe/config_llamoe.yaml's shape: dp 1 x tp 2 x ep 2, launched with --nproc_per_node=4.
    plan = plan_of(config(dp=1, ep=2))
    assert plan.world_size.value == 4


def test_context_parallel_size_is_read():
    plan = plan_of(config(dp=2).replace("  tp: 2\n", "  tp: 2\n  context_parallel_size: 2\n"))
    assert plan.parallel["cp"].value == 2 and plan.world_size.value == 2 * 2 * 2


@pytest.mark.parametrize("dp", [0, -1])
def test_a_degree_below_one_leaves_no_layout(dp):
    plan = plan_of(config(dp=dp))
    assert plan.layout == () and plan.world_size is None


def test_an_unknown_degree_leaves_w_unknown():
    plan = plan_of(config(dp="${DP}"))
    assert not plan.parallel["dp"].known and plan.world_size is None


def test_pp_engine_as_written_or_afab():
    assert plan_of(config(engine="1f1b")).settings.pp_engine.value == "1f1b"
    default = plan_of(config().replace("  pp_engine: 1f1b\n", ""))
    assert default.settings.pp_engine.value == "afab" and default.settings.pp_engine.origin is Origin.DEFAULT
    assert plan_of(config(engine="[1f1b]")).settings.pp_engine.value is None


def test_explain_rows_name_their_sources(tmp_path):
    path = write(tmp_path, "config_tiny_llama.yaml", config(dp=4, accumulation=2))
    [e] = explain(path)
    assert e["framework"] == "nanotron"
    r = rows(e)
    assert r["micro batch (per GPU)"] == (3, f"tokens.micro_batch_size, line {MICRO_LINE}")
    assert r["gradient accumulation"] == (2, f"tokens.batch_accumulation_per_replica, line {ACCUMULATION_LINE}")
    assert r["data parallel dp"] == (4, f"parallelism.dp, line {DP_LINE}")
    assert r["world size W"][0] == 8 and "parallelism.dp (4) x parallelism.tp (2)" in r["world size W"][1]
    assert r["global batch (sequences/step)"][0] == 3 * 2 * 4
    assert r["sequence length"] == (4096, f"tokens.sequence_length, line {SEQ_LINE}")


# -- launch lines --------------------------------------------------------------------------

LAUNCH = """\
#!/bin/bash
export CUDA_DEVICE_MAX_CONNECTIONS=1
torchrun --nproc_per_node={n} run_train.py --config-file examples/config_tiny_llama.yaml{tail}
"""


def test_a_torchrun_launch_on_another_w_is_refused(tmp_path):
    write(tmp_path, "examples/config_tiny_llama.yaml", config(dp=4))
    result = lint_text(tmp_path, "train.sh", LAUNCH.format(n=4, tail=""))
    [finding] = result.diagnostics
    assert finding.code == "BL202" and finding.span.line == DP_LINE
    assert "= 8" in " ".join((finding.message,) + finding.notes) and "W = 4" in finding.message


def test_a_torchrun_launch_on_the_product_is_clean(tmp_path):
    write(tmp_path, "examples/config_tiny_llama.yaml", config(dp=4))
    assert lint_text(tmp_path, "train.sh", LAUNCH.format(n=8, tail="")).diagnostics == []
    # torch.distributed.run under python, with an env prefix (examples/train_tiny_llama.sh's shape).
    text = ("CUDA_DEVICE_MAX_CONNECTIONS=1 python -u -m torch.distributed.run --nproc_per_node 4 --nnodes 1 "
            "--rdzv_backend c10d --max_restarts 0 --tee 3 run_train.py --config-file=examples/config_tiny_llama.yaml\n")
    assert [d.code for d in lint_text(tmp_path, "run.sh", text).diagnostics] == ["BL202"]


def test_the_program_flags_are_not_written_into_the_config(tmp_path):
    text = LAUNCH.format(n=8, tail=" --sanity-check-dataloader-interval 10")
    [line] = [found for found in map(lambda c: launch_of(c, "train.sh"), read_shell("train.sh", text).commands) if found]
    # run_train.py's argparse takes --config-file and its own flags: the file is linted as written.
    assert (line.entry, line.world_size.value, line.configs) == ("run_train.py", 8, [])
    assert [w.value for w in line.linked] == ["examples/config_tiny_llama.yaml"]
    write(tmp_path, "examples/config_tiny_llama.yaml", config(dp=4))
    [e] = explain(write(tmp_path, "train.sh", text))
    assert e["framework"] == "nanotron" and rows(e)["world size W"][0] == 8


def test_a_script_without_config_file_is_not_nanotrons():
    # nanotron's entry points require --config-file; another program's run_train.py stays the generic reading.
    text = "torchrun --nproc_per_node=8 run_train.py --config examples/c.yaml\n"
    [line] = [found for found in map(lambda c: launch_of(c, "t.sh"), read_shell("t.sh", text).commands) if found]
    assert [w.value for w in line.configs] == ["examples/c.yaml"] and line.linked == []


# -- the 1F1B engine (BL113) ---------------------------------------------------------------


def test_1f1b_with_too_few_microbatches_fails_at_the_first_step(tmp_path):
    result = lint_text(tmp_path, "c.yaml", config(dp=1, pp=4, accumulation=2))  # W = 1 x 2 x 4 = 8
    assert codes(result) == [("BL113", ACCUMULATION_LINE)]
    [finding] = result.diagnostics
    assert "at least parallelism.pp - 1 = 3" in " ".join(finding.notes)
    assert "batch_accumulation_per_replica to 3" in finding.fix and "afab" in finding.fix


@pytest.mark.parametrize("pp, engine, accumulation", [
    (4, "1f1b", 3),  # pp - 1 is enough
    (4, "afab", 1),  # AllForwardAllBackward takes any count
    (2, "1f1b", 1),  # one warm-up forward
])
def test_1f1b_near_misses_are_clean(tmp_path, pp, engine, accumulation):
    assert lint_text(tmp_path, "c.yaml", config(dp=1, pp=pp, engine=engine, accumulation=accumulation)).diagnostics == []


def test_a_layout_that_does_not_fit_w(tmp_path):
    assert codes(lint_text(tmp_path, "c.yaml", config(dp=4), world_size=8)) == []
    assert codes(lint_text(tmp_path, "c.yaml", config(dp=4), world_size=7)) == [("BL202", DP_LINE)]
    assert codes(lint_text(tmp_path, "c.yaml", config(dp=0))) == [("BL211", DP_LINE)]
    # -1 is no "ranks left over" in nanotron: refused, never resolved against W.
    assert codes(lint_text(tmp_path, "c.yaml", config(dp=-1), world_size=8)) == [("BL211", DP_LINE)]


def test_global_batch_target(tmp_path):
    assert codes(lint_text(tmp_path, "c.yaml", config(dp=4, accumulation=4), global_batch=48)) == []
    assert [c for c, _ in codes(lint_text(tmp_path, "c.yaml", config(dp=4, accumulation=4), global_batch=64))] == ["BL102"]


def test_the_adapter_ignores_what_is_not_a_mapping():
    assert nanotron.plan(read_yaml("c.yaml", "parallelism: 4\ntokens:\n  batch_accumulation_per_replica: 1\n"),
                         Outside()) is None
    assert isinstance(read_yaml("c.yaml", config()).root, Mapping)
