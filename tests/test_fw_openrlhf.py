"""OpenRLHF: launch lines (`deepspeed --module openrlhf.cli.train_*`, `python3 -m
openrlhf.cli.train_ppo_ray`, `torchrun -m`, `ray job submit -- ...`, commands built
in heredocs) read by the generic launch interpreter (lint/launching/lines.py) into an inline
document, which lint/frameworks/openrlhf.py turns into a TrainingPlan; the generic
rules (BL103, BL202, BL104) and OpenRLHF's own start-up asserts run on it.

Most tests drive the adapter the way the engine's `script()` drives inline
settings; the end-to-end tests run the engine itself.
Behaviour checked against an OpenRLHF checkout (see docs/parity/openrlhf.toml for file:line)."""

import glob
import os

import pytest

from batchlint import explain as explaining
from batchlint.config import Settings
from batchlint.engine import Options, lint_file
from batchlint.frameworks import openrlhf
from batchlint.frameworks.facts import Outside
from batchlint.launching import lines as launch
from batchlint.plan import Fact, Origin
from batchlint.rules import RULES
from batchlint.sources.shell import read_shell

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(os.path.dirname(HERE), "examples", "openrlhf")
# A checkout of OpenRLHF (e.g. 3c3be623) to lint its example scripts, named by the environment.
REAL = os.environ.get("OPENRLHF_CHECKOUT", "")


def plans(text, path="train.sh", world=None):
    doc = read_shell(path, text)
    found = []
    for line in launch.launches(doc):
        if line.framework != openrlhf.NAME:
            continue
        given = Fact(world, "world size", None, Origin.COMMAND_LINE, detail="--world-size") if world else None
        outside = Outside(world_size=line.world_size or given)
        found.append(openrlhf.plan(launch.inline_document(line, path, text), outside))
    return found


def findings(text, path="train.sh", world=None):
    """(code, line, column, message and notes, fix) of every rule that runs on the plans, as the engine runs them."""
    out = []
    for plan in plans(text, path, world):
        for rule in RULES:
            if rule.runs_on(plan):
                out += [(rule.code, f.span.line, f.span.column, " ".join((f.message,) + f.notes), f.fix)
                        for f in rule.findings(plan)]
    return sorted(out)


def codes(text, **kwargs):
    return [f[0] for f in findings(text, **kwargs)]


def example(name):
    with open(os.path.join(EXAMPLES, name), encoding="utf-8") as handle:
        return handle.read()


HEREDOC = """\
set -x

read -r -d '' training_commands <<EOF
openrlhf.cli.train_sft \\
   --data.max_len 4096 \\
   --data.dataset Open-Orca/OpenOrca \\
   --train.batch_size {batch} \\
   --train.micro_batch_size {micro} \\
   --model.model_name_or_path meta-llama/Meta-Llama-3-8B \\
   --ds.zero_stage 2{extra}
EOF

if [[ ${{1}} != "slurm" ]]; then
    deepspeed {launcher}--module $training_commands
fi
"""

DIRECT = """\
deepspeed --num_gpus {gpus} --module openrlhf.cli.train_dpo \\
   --data.max_len 8192 \\
   --train.batch_size {batch} \\
   --train.micro_batch_size 2 \\
   --model.model_name_or_path OpenRLHF/Llama-3-8b-sft-mixture \\
   --ds.zero_stage 3
"""


# -- the batch arithmetic DeepSpeed asserts (generic BL103) -------------------------------

def test_issue_example_heredoc_256_micro_2_on_7_gpus_is_refused():
    [(code, line, column, message, fix)] = findings(HEREDOC.format(batch=256, micro=2, extra="", launcher="--num_gpus 7 "))
    assert (code, line, column) == ("BL103", 7, 23)  # the value of --train.batch_size, inside the heredoc
    assert "--train.batch_size 256" in message and "= 14" in message and "dp (7)" in message
    assert "252 or 266" in fix


def test_heredoc_on_8_gpus_is_clean_and_derives_accumulation():
    text = HEREDOC.format(batch=256, micro=2, extra="", launcher="--num_gpus 8 ")
    assert findings(text) == []
    [plan] = plans(text)
    assert plan.accumulation().value == 16 and plan.data_parallel.value == 8 and plan.seq_len.value == 4096
    assert plan.world_size.detail == "--num_gpus 8"


def test_deepspeed_module_form_without_heredoc():
    [(code, line, column, _, _)] = findings(DIRECT.format(gpus=7, batch=256))
    assert (code, line, column) == ("BL103", 3, 23)
    assert findings(DIRECT.format(gpus=7, batch=252)) == []
    assert findings(DIRECT.format(gpus=8, batch=256)) == []


def test_unknown_world_size_reports_only_what_fails_for_every_w():
    # deepspeed without --num_gpus runs on every local GPU: W unknown.
    assert findings(HEREDOC.format(batch=256, micro=2, extra="", launcher="")) == []
    [(code, line, _, message, _)] = findings(HEREDOC.format(batch=256, micro=3, extra="", launcher=""))
    assert code == "BL103" and line == 7 and "for any world size" in message
    # ...and the command line's -w fills it in.
    assert codes(HEREDOC.format(batch=256, micro=2, extra="", launcher=""), world=7) == ["BL103"]


def test_legacy_flat_flags_of_earlier_releases():
    text = ("deepspeed --num_gpus 7 --module openrlhf.cli.train_sft \\\n   --max_len 2048 \\\n"
            "   --train_batch_size 256 \\\n   --micro_train_batch_size 2 \\\n   --packing_samples\n")
    [(code, line, column, message, _)] = findings(text)
    assert (code, line, column) == ("BL103", 3, 23) and "--train_batch_size 256" in message
    [plan] = plans(text.replace("--num_gpus 7", "--num_gpus 8"))
    assert plan.packing.value is True and plan.seq_len.value == 2048 and plan.accumulation().value == 16


def test_torchrun_module_form_counts_nodes():
    text = ("torchrun --nproc_per_node 8 --nnodes 2 -m openrlhf.cli.train_rm \\\n"
            "   --train.batch_size 120 \\\n   --train.micro_batch_size 1\n")
    [(code, line, _, message, _)] = findings(text)
    assert code == "BL103" and line == 2 and "dp (16)" in message
    assert findings(text.replace("120", "128")) == []


def test_dynamic_batch_gives_deepspeed_no_train_batch_size():
    # deepspeed.py:451-453: micro 1, GA 1, train_batch_size not set: nothing to divide.
    text = DIRECT.format(gpus=7, batch=256).rstrip() + " \\\n   --train.dynamic_batch_enable\n"
    assert findings(text) == []
    [plan] = plans(text)
    assert plan.declared_global_batch is None and plan.accumulation().value == 1


def test_defaults_per_entry_point():
    [sft] = plans("deepspeed --num_gpus 8 --module openrlhf.cli.train_sft --data.dataset x\n")
    [rm] = plans("deepspeed --num_gpus 8 --module openrlhf.cli.train_rm --data.dataset x\n")
    assert (sft.micro_batch.value, sft.seq_len.value) == (8, 2048)  # train_sft.py:166, 284
    assert (rm.micro_batch.value, rm.seq_len.value) == (1, 512)  # train_rm.py:246, 298
    assert sft.declared_global_batch is None  # the default 128 has no line to point at


def test_non_positive_micro_batch():
    assert "BL104" in codes(DIRECT.format(gpus=8, batch=256).replace("micro_batch_size 2", "micro_batch_size 0"))


# -- ring attention / DeepSpeed tensor parallel: the (dp, ring, tp) mesh ---------------------

def test_ring_attention_degree_must_divide_w():
    text = HEREDOC.format(batch=256, micro=2, extra=" \\\n   --ds.packing_samples \\\n   --ds.ring_attn_size 2",
                          launcher="--num_gpus 7 ")
    assert "BL202" in codes(text)
    clean = text.replace("--num_gpus 7", "--num_gpus 8")
    assert findings(clean) == []
    [plan] = plans(clean)
    assert plan.parallel["sp"].value == 2 and plan.data_parallel.value == 4 and plan.accumulation().value == 32


def test_ring_attention_without_packing_is_refused_by_sft():
    text = HEREDOC.format(batch=256, micro=2, extra=" \\\n   --ds.ring_attn_size 2", launcher="--num_gpus 8 ")
    [(code, line, _, message, fix)] = findings(text)
    assert (code, line) == ("BL360", 11) and "packing_samples must be enabled" in message
    assert "--ds.packing_samples" in fix


def test_ppo_ring_attention_forces_packing_instead():
    text = ("python3 -m openrlhf.cli.train_ppo_ray --vllm.num_engines 4 --ds.ring_attn_size 2 "
            "--train.batch_size 128 --train.micro_batch_size 4\n")
    [plan] = plans(text)
    assert plan.packing.value is True and plan.packing.origin is Origin.DERIVED
    assert findings(text) == []


# -- PPO (train_ppo_ray) ------------------------------------------------------------------

def test_ppo_example_and_its_fixed_twin():
    flagged = findings(example("train_ppo_ray.sh"))
    assert [(c, line) for c, line, *_ in flagged] == [("BL170", 21), ("BL260", 9)]
    assert "= 6; the actor has W = 8" in flagged[1][3] and flagged[1][4] == "set --vllm.num_engines to 4"
    assert "group_norm" in flagged[0][3]
    assert findings(example("train_ppo_ray_fixed.sh")) == []
    [plan] = plans(example("train_ppo_ray_fixed.sh"))
    facts = openrlhf.rl(plan)
    assert plan.world_size.value == 8 and plan.accumulation().value == 4  # 128 // (4 x 8)
    assert (facts.prompts_per_step.value, facts.samples_per_prompt.value, facts.generation_batch.value) == (128, 8, 1024)
    assert facts.micro_batch["rollout"].value == 8 and facts.micro_batch["actor"].value == 4
    assert facts.mini_batch.value == 128 and plan.rl.samples_per_prompt.value == 8  # the plan's RL facts are the adapter's


PPO = """\
python3 -m openrlhf.cli.train_ppo_ray \\
   --actor.num_nodes {nodes} \\
   --actor.num_gpus_per_node 8 \\
   --vllm.num_engines {engines} \\
   --train.batch_size 128 \\
   --train.micro_batch_size 4 \\
   --rollout.batch_size {rollout} \\
   --rollout.micro_batch_size 16 \\
   --rollout.n_samples_per_prompt 1{extra}
"""


def test_ppo_actor_world_comes_from_the_actor_flags():
    [plan] = plans(PPO.format(nodes=2, engines=2, rollout=1024, extra=""))
    assert plan.world_size.value == 16 and plan.data_parallel.value == 16 and plan.accumulation().value == 2
    [(code, line, _, message, _)] = findings(PPO.format(nodes=2, engines=2, rollout=1024, extra="").replace(
        "--train.batch_size 128", "--train.batch_size 96"))
    assert (code, line) == ("BL103", 5) and "dp (16)" in message


def test_ppo_too_few_sample_batches_for_the_actor_processes():
    # 1 x 64 // 16 = 4 batches < 8 actor processes (train_ppo_ray.py:711-717).
    [(code, line, _, message, fix)] = findings(PPO.format(nodes=1, engines=2, rollout=64, extra=""))
    assert (code, line) == ("BL160", 7) and "4 sample batches for 8 actor processes" in message
    assert "at least 128" in fix
    assert findings(PPO.format(nodes=1, engines=2, rollout=128, extra="")) == []


def test_ppo_generation_batch_over_rollout_batch_needs_async():
    text = PPO.format(nodes=1, engines=2, rollout=128, extra=" \\\n   --rollout.vllm_generate_batch_size 256")
    [(code, line, _, message, _)] = findings(text)
    assert (code, line) == ("BL160", 10) and "async" in message
    assert findings(text.rstrip() + " \\\n   --train.async_enable\n") == []


def test_ppo_packing_needs_vllm():
    text = PPO.format(nodes=1, engines=0, rollout=128, extra=" \\\n   --ds.packing_samples")
    [(code, line, _, message, _)] = findings(text)
    assert (code, line) == ("BL360", 10) and "Only support `--packing_samples` with vLLM" in message
    assert findings(PPO.format(nodes=1, engines=1, rollout=128, extra=" \\\n   --ds.packing_samples")) == []


def test_ray_job_submit_entrypoint():
    text = ('ray job submit --address="http://127.0.0.1:8265" \\\n   -- python3 -m openrlhf.cli.train_ppo_ray \\\n'
            "   --actor.num_gpus_per_node 4 \\\n   --train.batch_size 30 \\\n   --train.micro_batch_size 4\n")
    [(code, line, _, message, _)] = findings(text)
    assert (code, line) == ("BL103", 4) and "= 16" in message


def test_other_modules_are_not_training_launches():
    assert plans("python -m openrlhf.cli.serve_rm --reward_pretrain x --port 5000\n") == []
    assert plans("python -m openrlhf.cli.lora_combiner --model_path x\n") == []
    assert plans("deepspeed --num_gpus 8 train.py --deepspeed ds.json\n") == []


# -- explain ------------------------------------------------------------------------------

def test_explain_shows_the_arithmetic_of_the_example():
    [plan] = plans(example("train_sft.sh"), path="examples/openrlhf/train_sft.sh")
    text = explaining.as_text([explaining.Explanation("examples/openrlhf/train_sft.sh", plan.framework,
                                                      explaining._rows([plan]))], ())
    rows = {line.split("  ")[1].strip(): line for line in text.splitlines()[2:]}
    assert rows["world size W"].split()[-6:] == ["7", "from", "the", "launch", "line:", "--num_gpus"] or \
        "7  from the launch line: --num_gpus 7" in rows["world size W"]
    assert "256  --train.batch_size, line 9" in rows["declared global batch"]
    assert "7  dp: derived: W (7)" in rows["data parallel dp"]
    # 256 over micro 2 x dp 7: OpenRLHF refuses to start, so there is no global batch, and the row says why.
    assert "?  fails: --train.batch_size 256 is not a multiple of 14 (micro 2 x dp 7)" in \
        rows["global batch (sequences/step)"]
    assert "?  = global batch x sequence length" in rows["tokens per optimizer step"]
    [fixed] = plans(example("train_sft_fixed.sh"))
    assert fixed.accumulation().value == 16 and fixed.effective_global_batch()[0] == 256


# -- end to end through the engine ---------------------------------------------------------

def engine(path, world_size=None):
    result = lint_file(path, Settings(root=os.path.dirname(path)), Options(world_size=world_size), RULES)
    return [(d.code, d.span.line) for d in result.diagnostics]


def test_examples_end_to_end_through_the_engine():
    assert engine(os.path.join(EXAMPLES, "train_sft.sh")) == [("BL103", 9)]
    assert engine(os.path.join(EXAMPLES, "train_ppo_ray.sh")) == [("BL260", 9), ("BL170", 21)]
    assert engine(os.path.join(EXAMPLES, "train_sft_fixed.sh")) == []
    assert engine(os.path.join(EXAMPLES, "train_ppo_ray_fixed.sh")) == []


def test_python_module_form_takes_w_from_the_command_line(tmp_path):
    path = tmp_path / "sft.sh"
    path.write_text("python -m openrlhf.cli.train_sft \\\n   --train.batch_size 256 \\\n   --train.micro_batch_size 2\n")
    assert engine(str(path)) == []  # python gives no W
    assert engine(str(path), world_size=7) == [("BL103", 2)]


def test_heredoc_end_to_end_through_the_engine(tmp_path):
    path = tmp_path / "sft.sh"
    path.write_text(HEREDOC.format(batch=256, micro=2, extra="", launcher="--num_gpus 7 "))
    assert engine(str(path)) == [("BL103", 7)]


def test_ray_job_submit_end_to_end_through_the_engine(tmp_path):
    path = tmp_path / "ppo.sh"
    path.write_text('ray job submit --address="http://127.0.0.1:8265" \\\n   -- python3 -m openrlhf.cli.train_ppo_ray \\\n'
                    "   --actor.num_gpus_per_node 4 \\\n   --train.batch_size 30 \\\n   --train.micro_batch_size 4\n")
    assert engine(str(path)) == [("BL103", 4)]


# -- the real repository --------------------------------------------------------------------

@pytest.mark.skipif(not REAL or not os.path.isdir(REAL), reason="set OPENRLHF_CHECKOUT to an OpenRLHF checkout")
def test_real_example_scripts_are_read_and_clean():
    read = {}
    for path in sorted(glob.glob(os.path.join(REAL, "examples", "scripts", "*.sh"))):
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        found = plans(text, path)
        if found:
            read[os.path.basename(path)] = [p.world_size.value if p.world_size else None for p in found]
            assert findings(text, path) == [], path
    # the 4 heredoc scripts (deepspeed --module, W unknown) and the 8 train_ppo_ray lines (3 behind ray job
    # submit, 1 more inside `srun ... bash -c "... ray job submit -- ..."`)
    assert len(read) == 12
    assert read["train_sft.sh"] == [None] and read["train_ppo_ray_hybrid_engine.sh"] == [8]
    assert read["train_ppo_ray_slurm.sh"] == [4]  # --actor.num_nodes 1 x --actor.num_gpus_per_node 4


def test_legacy_colocation_flags_are_read_in_both_roles():
    # Every role in the flat spelling: no default of the dotted one may stand in for a written value.
    text = ("python3 -m openrlhf.cli.train_ppo_ray --actor_num_nodes 1 --actor_num_gpus_per_node 4 "
            "--ref_num_nodes 1 --ref_num_gpus_per_node {ref} --colocate_actor_ref "
            "--train_batch_size 128 --micro_train_batch_size 4 --rollout_batch_size 128\n")
    assert findings(text.format(ref=4)) == []
    assert codes(text.format(ref=2)) == ["BL260"]


SLURM = """\
read -r -d '' training_commands <<EOF
openrlhf.cli.train_sft \\
   --train.batch_size 256 \\
   --train.micro_batch_size 2
EOF
GPUS_PER_NODE={gpus}
srun --container-image="$IMAGE" -w "$NODE" \\
    bash -c " cd /openrlhf; pip install . ; torchrun \\
--nproc_per_node $GPUS_PER_NODE --nnodes 1 -m ${{training_commands}}" &>> log
"""


def test_srun_bash_c_torchrun_of_a_heredoc_command():
    [plan] = plans(SLURM.format(gpus=8))
    assert plan.world_size.value == 8 and plan.accumulation().value == 16 and plan.settings.entry == "train_sft"
    [(code, line, column, message, _)] = findings(SLURM.format(gpus=7))
    assert (code, line, column) == ("BL103", 3, 23) and "dp (7)" in message


def test_wrapped_lines_that_are_not_training_launches():
    assert plans('ray job submit --address="http://127.0.0.1:8265" -- python3 -m openrlhf.cli.serve_rm --port 5000\n') == []
    assert plans("ray job submit --address=x --entrypoint-num-gpus 1 python3 -m openrlhf.cli.train_sft\n") == []  # no --
    assert plans('srun -N 1 bash -c "ray start --head --block"\n') == []


# -- which OpenRLHF release refuses (lint/premise.py) ----------------------------------------------------

def _judged(tmp_path, text, requirement=None, files=()):
    """(code, severity, line) of the engine's findings on a launch line in its own project."""
    (tmp_path / ".git").mkdir(exist_ok=True)
    if requirement is not None:
        (tmp_path / "requirements.txt").write_text(requirement + "\n")
    for name, content in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(content)
    path = tmp_path / "train.sh"
    path.write_text(text)
    result = lint_file(str(path), Settings(root=str(tmp_path)), Options(), RULES)
    return [(d.code, d.severity, d.span.line) for d in result.diagnostics]


GROUP_OF_ONE = ("python3 -m openrlhf.cli.train_ppo_ray \\\n   --rollout{sep}batch_size 128 \\\n"
                "   --rollout{sep}n_samples_per_prompt 1 \\\n   --{estimator} {value}\n")


@pytest.mark.parametrize("spelling, value, requirement, found", [
    # The dotted flags run on 0.10.2 and later: all assert n > 1 for group_norm (from 0.6.0).
    ("dotted", "group_norm", None, [("BL170", "error", 3)]),
    # dr_grpo is asserted from 0.11.0: 0.10.2-0.10.4 take it with one sample.
    ("dotted", "dr_grpo", None, [("BL170", "info", 3)]),
    ("dotted", "dr_grpo", "openrlhf==0.11.0", [("BL170", "error", 3)]),
    # The flat flags run to 0.10.1.post2, none of which asserts it for dr_grpo.
    ("flat", "dr_grpo", None, []),
    ("flat", "rloo", None, [("BL170", "error", 3)]),
    ("flat", "rloo", "openrlhf==0.5.2", []),  # no rloo estimator yet: not a line it runs
])
def test_a_group_of_one_is_judged_by_the_release_and_the_flag_spelling(tmp_path, spelling, value, requirement, found):
    sep, flag = (".", "algo.advantage.estimator") if spelling == "dotted" else ("_", "advantage_estimator")
    text = GROUP_OF_ONE.format(sep=sep, estimator=flag, value=value)
    if spelling == "flat":
        text = text.replace("--rollout_n_samples_per_prompt", "--n_samples_per_prompt")
    assert _judged(tmp_path, text, requirement) == found


FEW_BATCHES = ("python3 -m openrlhf.cli.train_ppo_ray \\\n   --actor_num_gpus_per_node 8 \\\n"
               "   --rollout_batch_size 64 \\\n   --micro_rollout_batch_size 16 \\\n   --n_samples_per_prompt 1\n")


@pytest.mark.parametrize("requirement, files, found", [
    (None, (), [("BL160", "info", 3)]),  # 0.7.1 and earlier make no such assertion
    ("openrlhf==0.7.2", (), [("BL160", "error", 3)]),
    ("openrlhf==0.7.1", (), []),
    # OpenRLHF's own checkout (or a fork): version.txt beside the package says the release.
    (None, (("version.txt", "0.9.3\n"), ("openrlhf/__init__.py", "")), [("BL160", "error", 3)]),
])
def test_too_few_sample_batches_are_refused_from_0_7_2(tmp_path, requirement, files, found):
    assert _judged(tmp_path, FEW_BATCHES, requirement, files) == found


# -- before openrlhf.cli: OpenRLHF's own scripts under deepspeed (to 0.3.x) --------------------------------

SCRIPT_FORM = """\
deepspeed --num_gpus 7 ../train_sft.py \\
   --max_len 2048 \\
   --train_batch_size {batch} \\
   --micro_train_batch_size 2 \\
   --zero_stage 2
"""


@pytest.mark.parametrize("batch, found", [(256, ["BL103"]), (126, [])])
def test_the_script_form_of_earlier_releases_is_read(batch, found):
    """examples/scripts/train_sft_llama.sh @ v0.3.5: `deepspeed ../train_sft.py` with OpenRLHF's flags;
    256 over micro 2 x 7 GPUs does not divide (issue 346)."""
    [plan] = plans(SCRIPT_FORM.format(batch=batch))
    assert plan.settings.entry == "train_sft" and plan.world_size.value == 7
    assert codes(SCRIPT_FORM.format(batch=batch)) == found


def test_a_script_of_that_name_without_openrlhf_flags_is_not_openrlhf():
    assert plans("deepspeed --num_gpus 8 train_sft.py --per_device_train_batch_size 2 --deepspeed ds.json\n") == []
    assert plans("python train_sft.py --micro_train_batch_size 2\n") == []  # only under deepspeed


# -- the non-Ray PPO trainer (openrlhf.cli.train_ppo, to 0.6.1.post1) -----------------------------------

NON_RAY = """\
deepspeed --num_gpus 8 --module openrlhf.cli.train_ppo \\
   --micro_train_batch_size 2 \\
   --train_batch_size 128 \\
   --micro_rollout_batch_size 4 \\
   --rollout_batch_size {rollout} \\
   --n_samples_per_prompt {n} \\
   --max_epochs 1
"""


@pytest.mark.parametrize("rollout, n, found", [
    (32, 1, ["BL270"]),  # 32 samples a round, 128 a step: each optimizer step spans 4 rounds
    (32, 4, []),  # 128 samples a round
    (128, 1, []),
])
def test_a_non_ray_train_batch_larger_than_a_round(tmp_path, rollout, n, found):
    (tmp_path / "requirements.txt").write_text("openrlhf==0.5.9\n")
    path = tmp_path / "train_ppo.sh"
    path.write_text(NON_RAY.format(rollout=rollout, n=n))
    result = lint_file(str(path), Settings(root=str(tmp_path)), Options(), RULES)
    assert [d.code for d in result.diagnostics if d.code == "BL270"] == found
    assert all(d.severity == "warning" for d in result.diagnostics if d.code == "BL270")


def test_the_non_ray_trainer_counts_its_rounds():
    [plan] = plans(NON_RAY.format(rollout=32, n=2))
    assert plan.rl.generation_batch.value == 64 and plan.rl.mini_batch.value == 128
    assert plan.settings.ppo is None  # train_ppo_ray's Ray placement does not apply
