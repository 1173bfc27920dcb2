"""Hydra composition (lint/sources/hydra.py): a verl or NeMo config's `defaults:` list composed as
Hydra 1.3 composes it (groups at their package, `_self_` order, `override` entries, optional and
null options, nested defaults, `hydra.searchpath`, the framework's config folder in the project's
copy), a launch line's overrides last; each value keeps the file and line it is written at."""

import os

from batchlint import reads
from batchlint.config import Settings
from batchlint.document import LaunchDocument, Span
from batchlint.engine import Options, lint_file
from batchlint.frameworks import verl
from batchlint.project import Project, ProjectView, using
from batchlint.rules import RULES
from batchlint.sources import read
from batchlint.sources.hydra import compose
from batchlint.sources.shell import Word

from conftest import run, write

# A copy of verl in the project (its own repository, or a fork vendoring it), in the shape of
# verl/trainer/config: a trainer config composing per-role group configs.
VERL_COPY = {
    "verl/__init__.py": "",
    "verl/version/version": "0.6.0\n",
    "verl/trainer/__init__.py": "",
    "verl/trainer/main_ppo.py": (
        "import hydra\n\n\n"
        "@hydra.main(config_path=\"config\", config_name=\"ppo_trainer\", version_base=None)\n"
        "def main(config):\n    pass\n"),
    # The legacy FSDP workers' normalisation of the mini-batch, in the shape 0.4-0.7.1 write it (BL142 reads a
    # copy's own workers).
    "verl/workers/fsdp_workers.py": """\
class ActorRolloutRefWorker:
    def __init__(self, config, role):
        self.config = config
        if self._is_actor:
            self.config.actor.ppo_mini_batch_size *= self.config.rollout.n
            self.config.actor.ppo_mini_batch_size //= self.device_mesh.size() // self.ulysses_sequence_parallel_size
            assert self.config.actor.ppo_mini_batch_size > 0, (
                f"ppo_mini_batch_size {self.config.actor.ppo_mini_batch_size} should be larger than 0 after "
                "normalization"
            )
            if self.config.actor.ppo_micro_batch_size_per_gpu is not None:
                assert self.config.actor.ppo_mini_batch_size % self.config.actor.ppo_micro_batch_size_per_gpu == 0
""",
    "verl/trainer/config/ppo_trainer.yaml": """\
# specify the default per-component configs
defaults:
  # actor_rollout_ref.actor: trainer/config/actor/dp_actor.yaml
  - actor@actor_rollout_ref.actor: dp_actor
  - data@data: legacy_data
  - rollout@actor_rollout_ref.rollout: rollout
  - critic@critic: dp_critic
  - _self_

actor_rollout_ref:
  hybrid_engine: true

algorithm:
  adv_estimator: gae

trainer:
  nnodes: 1
  n_gpus_per_node: 8
""",
    "verl/trainer/config/actor/dp_actor.yaml": """\
defaults:
  - ../engine@fsdp_config: fsdp
  - actor
  - _self_

strategy: fsdp
ulysses_sequence_parallel_size: 1
""",
    "verl/trainer/config/actor/megatron_actor.yaml": """\
defaults:
  - actor
  - _self_

strategy: megatron
""",
    "verl/trainer/config/actor/actor.yaml": """\
strategy: ???
ppo_mini_batch_size: 256
ppo_micro_batch_size: null
ppo_micro_batch_size_per_gpu: null
use_dynamic_bsz: false
""",
    "verl/trainer/config/engine/fsdp.yaml": "param_offload: false\n",
    "verl/trainer/config/data/legacy_data.yaml": """\
train_batch_size: 1024
max_prompt_length: 512
max_response_length: 512
""",
    "verl/trainer/config/rollout/rollout.yaml": "name: vllm\nn: 1\n",
    "verl/trainer/config/critic/dp_critic.yaml": """\
strategy: fsdp
ppo_mini_batch_size: ${oc.select:actor_rollout_ref.actor.ppo_mini_batch_size,256}
ppo_micro_batch_size_per_gpu: null
rollout_n: ${oc.select:actor_rollout_ref.rollout.n,1}
enable: null
""",
}


def project(tmp_path, files: dict) -> str:
    (tmp_path / ".git").mkdir(parents=True, exist_ok=True)
    for name, text in {**VERL_COPY, **files}.items():
        write(tmp_path, name, text)
    return str(tmp_path)


def composed(tmp_path, name: str):
    """(the document `name` composed, the notices left)."""
    path = os.path.join(str(tmp_path), name)
    with using(Project((os.path.realpath(str(tmp_path)),))), reads.tracking() as touched:
        doc = read(path, open(path).read(), "yaml")
        return compose(doc, ProjectView.now(), verl.CONFIGS, verl.DISTRIBUTION), touched.notices


def lint(tmp_path, name: str, world_size=None):
    return lint_file(os.path.join(str(tmp_path), name), Settings(root=str(tmp_path)), Options(world_size=world_size),
                     RULES)


def codes(result) -> list:
    return [(d.code, os.path.basename(d.path), d.span.line) for d in result.diagnostics]


# An experiment config in the shape of verl's examples/*/config/*.yaml.
EXPERIMENT = """\
hydra:
  searchpath:
    - file://verl/trainer/config

defaults:
  - ppo_trainer
  - _self_

data:
  train_batch_size: 64
"""


def test_groups_are_placed_at_their_package_each_value_with_its_file_and_line(tmp_path):
    project(tmp_path, {"examples/grpo/config/exp.yaml": EXPERIMENT})
    doc, notices = composed(tmp_path, "examples/grpo/config/exp.yaml")
    assert notices == []
    assert doc.composed is not None and "defaults" not in doc.root.items and "hydra" not in doc.root.items
    mini = doc.get("actor_rollout_ref", "actor", "ppo_mini_batch_size")
    assert mini.value == 256 and mini.span.path.endswith("verl/trainer/config/actor/actor.yaml") and mini.span.line == 2
    # `../engine@fsdp_config` inside actor/dp_actor.yaml: engine/fsdp.yaml under the actor's package.
    assert doc.get("actor_rollout_ref", "actor", "fsdp_config", "param_offload").value is False
    # dp_actor.yaml's own `strategy: fsdp` comes after actor.yaml's `???` (its `_self_` is last).
    assert doc.get("actor_rollout_ref", "actor", "strategy").value == "fsdp"
    assert doc.get("actor_rollout_ref", "rollout", "n").span.path.endswith("rollout/rollout.yaml")
    # The experiment's own value wins (`_self_` last), with no path: it is the file's own.
    train = doc.get("data", "train_batch_size")
    assert (train.value, train.span.path, train.span.line) == (64, None, 10)
    assert doc.get("data", "max_prompt_length").value == 512


def test_self_first_lets_the_defaults_win(tmp_path):
    first = EXPERIMENT.replace("  - ppo_trainer\n  - _self_\n", "  - _self_\n  - ppo_trainer\n")
    project(tmp_path, {"examples/grpo/config/exp.yaml": first})
    doc, _ = composed(tmp_path, "examples/grpo/config/exp.yaml")
    assert doc.get("data", "train_batch_size").value == 1024  # data/legacy_data.yaml's, merged after
    # No `_self_` at all: the file's own values last, as Hydra appends it.
    project(tmp_path, {"examples/grpo/config/exp.yaml": EXPERIMENT.replace("  - _self_\n", "")})
    doc, _ = composed(tmp_path, "examples/grpo/config/exp.yaml")
    assert doc.get("data", "train_batch_size").value == 64


def test_an_override_entry_picks_another_option_of_a_nested_group(tmp_path):
    text = EXPERIMENT.replace("  - _self_\n", "  - override actor@actor_rollout_ref.actor: megatron_actor\n  - _self_\n")
    project(tmp_path, {"examples/grpo/config/exp.yaml": text})
    doc, notices = composed(tmp_path, "examples/grpo/config/exp.yaml")
    assert notices == []
    assert doc.get("actor_rollout_ref", "actor", "strategy").value == "megatron"
    assert doc.get("actor_rollout_ref", "actor", "fsdp_config") is None


def test_optional_null_and_header_packages(tmp_path):
    project(tmp_path, {
        "conf/model_base.yaml": "# @package _global_\nmodel:\n  micro_batch_size: 2\n",
        "conf/gpt.yaml": ("defaults:\n  - _self_\n  - optional tp_overlap@model.ub_cfg:\n"
                          "  - optional extra@model.extra: missing_one\n  - .@model.encoder: enc\n  - model_base\n\n"
                          "trainer:\n  devices: 8\nmodel:\n  micro_batch_size: 4\n"),
        "conf/enc.yaml": "hidden_size: 64\n",
    })
    doc, notices = composed(tmp_path, "conf/gpt.yaml")
    assert notices == []
    assert doc.get("model", "ub_cfg") is None and doc.get("model", "extra") is None  # null option; optional missing
    assert doc.get("model", "encoder", "hidden_size").value == 64  # `.@model.encoder`: the same folder
    # `# @package _global_` places model_base.yaml at the root; `_self_` came first: the base wins.
    assert doc.get("model", "micro_batch_size").value == 2


def test_what_hydra_refuses_or_is_not_known_leaves_the_file_alone_with_a_notice(tmp_path):
    cases = {
        "missing.yaml": "defaults:\n  - nowhere\n  - _self_\nactor_rollout_ref:\n  actor: {}\n",
        "cycle.yaml": "defaults:\n  - cycle_b\nx: 1\n",
        "cycle_b.yaml": "defaults:\n  - cycle\ny: 1\n",
        "mandatory.yaml": "defaults:\n  - actor@actor_rollout_ref.actor: ???\n",
        "interpolated.yaml": "defaults:\n  - actor@actor_rollout_ref.actor: ${oc.env:ACTOR}\n",
        "outside.yaml": "defaults:\n  - /../../elsewhere\n",
        "not_a_list.yaml": "defaults:\n  actor: dp_actor\n",
    }
    project(tmp_path, {f"conf/{name}": text for name, text in cases.items()})
    for name in ("missing.yaml", "cycle.yaml", "mandatory.yaml", "interpolated.yaml", "outside.yaml"):
        doc, notices = composed(tmp_path, f"conf/{name}")
        assert doc.composed is None and "defaults" in doc.root.items, name
        assert len(notices) == 1 and "not composed" in notices[0], (name, notices)
    doc, notices = composed(tmp_path, "conf/not_a_list.yaml")  # no list: nothing Hydra composes here
    assert doc.composed is None


def test_a_finding_points_at_the_base_that_wrote_the_value_and_self_first_decides(tmp_path):
    # A project's own base config (BL142: 32 x 1 // 8 GPUs = 4 per GPU, no multiple of 8).
    base = """\
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 32
    ppo_micro_batch_size_per_gpu: 8
trainer:
  n_gpus_per_node: 8
"""
    child = "defaults:\n  - {first}\n  - {second}\n\nactor_rollout_ref:\n  actor:\n    ppo_micro_batch_size_per_gpu: 4\n"
    project(tmp_path, {
        "configs/base_grpo.yaml": base,
        "configs/exp_self_first.yaml": child.format(first="_self_", second="base_grpo"),
        "configs/exp_self_last.yaml": child.format(first="base_grpo", second="_self_"),
    })
    flagged = lint(tmp_path, "configs/exp_self_first.yaml")
    assert ("BL142", "base_grpo.yaml", 4) in codes(flagged)
    finding = next(d for d in flagged.diagnostics if d.code == "BL142")
    assert any(os.path.basename(r.path) == "exp_self_first.yaml" and "composed in" in r.message for r in finding.related)
    assert "BL142" not in [c for c, _, _ in codes(lint(tmp_path, "configs/exp_self_last.yaml"))]


def test_the_framework_default_gpu_count_is_no_world_size(tmp_path):
    # ppo_trainer.yaml's n_gpus_per_node: 8 is composed in, but a launch line sets W: no BL142 on it.
    text = EXPERIMENT + "actor_rollout_ref:\n  actor:\n    ppo_mini_batch_size: 32\n    ppo_micro_batch_size_per_gpu: 8\n"
    project(tmp_path, {"examples/grpo/config/exp.yaml": text})
    assert "BL142" not in [c for c, _, _ in codes(lint(tmp_path, "examples/grpo/config/exp.yaml"))]
    assert "BL142" in [c for c, _, _ in codes(lint(tmp_path, "examples/grpo/config/exp.yaml", world_size=8))]


def test_explain_shows_composed_values_with_their_file(tmp_path):
    project(tmp_path, {"examples/grpo/config/exp.yaml": EXPERIMENT.replace(
        "  train_batch_size: 64\n", "  train_batch_size: 64\nactor_rollout_ref:\n  actor:\n"
        "    ppo_mini_batch_size: 32\n    ppo_micro_batch_size_per_gpu: 2\n")})
    out = run("explain", "--world-size", "8", str(tmp_path / "examples/grpo/config/exp.yaml")).output
    assert "verl/trainer/config/actor/dp_actor.yaml:7" in out  # ulysses_sequence_parallel_size
    assert "verl/trainer/config/rollout/rollout.yaml:2" in out  # rollout.n
    rows = {line.split("  ")[1].strip(): line for line in out.splitlines() if line.startswith("  ")}
    assert rows["gradient accumulation"].split()[2] == "2"  # 32 x 1 / dp 8 / micro 2


LAUNCH = """\
#!/bin/bash
python3 -m verl.trainer.main_ppo --config-path=config --config-name={name} \\
    data.train_batch_size=128 \\
    actor_rollout_ref.actor.ppo_mini_batch_size=32 \\
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu={micro} \\
    {extra}trainer.n_gpus_per_node=8
"""


def test_a_launch_line_composes_the_config_it_names_with_its_overrides_last(tmp_path):
    project(tmp_path, {
        "run_ok.sh": LAUNCH.format(name="ppo_trainer", micro=4, extra=""),
        "run_bad.sh": LAUNCH.format(name="ppo_trainer", micro=8, extra=""),
        # `group=option` picks another option of the trainer's defaults list.
        "run_megatron.sh": LAUNCH.format(name="ppo_trainer", micro=4, extra="actor@actor_rollout_ref.actor=megatron_actor \\\n    "),
    })
    assert "BL142" in [c for c, _, _ in codes(lint(tmp_path, "run_bad.sh"))]
    assert "BL142" not in [c for c, _, _ in codes(lint(tmp_path, "run_ok.sh"))]
    out = run("explain", str(tmp_path / "run_ok.sh")).output
    assert "verl/trainer/config/actor/dp_actor.yaml:7" in out  # composed under the line's overrides
    script = str(tmp_path / "run_megatron.sh")
    doc = LaunchDocument(path=script, format="yaml", root=read(script, "{}", "yaml").root, text="",
                         launched_by="verl", entry="verl.trainer.main_ppo",
                         config_path=Word("config", Span(2, 1, 2, 2), "config"),
                         overrides=[(("actor@actor_rollout_ref", "actor"),
                                     Word("megatron_actor", Span(5, 1, 5, 2), "megatron_actor"),
                                     Word("actor@actor_rollout_ref.actor=megatron_actor", Span(5, 1, 5, 2),
                                          "actor@actor_rollout_ref.actor=megatron_actor"))])
    with using(Project((os.path.realpath(str(tmp_path)),))):
        made = compose(doc, ProjectView.now(), verl.CONFIGS, verl.DISTRIBUTION)
    assert made.get("actor_rollout_ref", "actor", "strategy").value == "megatron"
    assert made.get("actor@actor_rollout_ref") is None


def test_a_launch_line_of_an_installed_verl_is_not_composed(tmp_path):
    (tmp_path / ".git").mkdir()
    write(tmp_path, "run.sh", LAUNCH.format(name="ppo_trainer", micro=8, extra=""))
    write(tmp_path, "requirements.txt", "verl==0.5.0\n")  # installed, with the legacy FSDP workers
    # As before: the line's own settings, verl's defaults for the rest (W from the line: BL142).
    assert "BL142" in [c for c, _, _ in codes(lint(tmp_path, "run.sh"))]
    out = run("explain", str(tmp_path / "run.sh")).output
    assert "ulysses_sequence_parallel_size: framework default" in out and ".yaml:" not in out


def test_bounds_and_odd_lists_are_notices_never_crashes(tmp_path):
    from batchlint.limits import MAX_COMPOSE_DEPTH, MAX_COMPOSED_CONFIGS

    files = {f"conf/many/c{i}.yaml": f"k{i}: {i}\n" for i in range(MAX_COMPOSED_CONFIGS + 1)}
    files["conf/wide.yaml"] = "defaults:\n" + "".join(f"  - many/c{i}\n" for i in range(MAX_COMPOSED_CONFIGS + 1))
    files["conf/fits.yaml"] = "defaults:\n" + "".join(f"  - many/c{i}\n" for i in range(8))
    depth = MAX_COMPOSE_DEPTH + 2
    files.update({f"conf/d{i}.yaml": f"defaults:\n  - d{i + 1}\nv{i}: 1\n" for i in range(depth)})
    files[f"conf/d{depth}.yaml"] = "end: 1\n"
    files["conf/shallow.yaml"] = "defaults:\n  - d" + str(depth - 3) + "\n"
    odd = {
        "ints.yaml": "defaults:\n  - 1\n  - [a]\n",
        "two_keys.yaml": "defaults:\n  - {a: x, b: y}\n",
        "keyword.yaml": "defaults:\n  - sometimes a: x\n",
        "nested_value.yaml": "defaults:\n  - a: {x: 1}\n",
        "late_override.yaml": "defaults:\n  - override a: x\n  - b\n",
        "legacy.yaml": "defaults:\n  - a@_group_: x\n",
    }
    files.update({f"conf/{name}": text for name, text in odd.items()})
    project(tmp_path, files)
    for name in ["wide.yaml", "d0.yaml"] + list(odd):
        doc, notices = composed(tmp_path, f"conf/{name}")
        assert doc.composed is None and len(notices) == 1, (name, notices)
    doc, notices = composed(tmp_path, "conf/fits.yaml")
    assert notices == [] and doc.get("many", "k7").value == 7  # `- many/c7`: at package `many`
    assert doc.get("many", "k7").span.path.endswith("conf/many/c7.yaml")
    doc, notices = composed(tmp_path, "conf/shallow.yaml")
    assert notices == [] and doc.get("end").value == 1


def test_a_searchpath_is_seen_from_the_folder_the_job_runs_in(tmp_path):
    # `file://../../verl/trainer/config`, as verl's examples/split_placement writes it: relative to the
    # folder the job runs in, the config's folder here; `file://verl/...`: the project's root.
    near = EXPERIMENT.replace("file://verl/trainer/config", "file://../../../verl/trainer/config")
    project(tmp_path, {"examples/a/config/near.yaml": near, "examples/a/config/far.yaml": EXPERIMENT})
    for name in ("near.yaml", "far.yaml"):
        doc, notices = composed(tmp_path, f"examples/a/config/{name}")
        assert notices == [] and doc.get("actor_rollout_ref", "actor", "ppo_mini_batch_size").value == 256
    # Without a copy of verl in the project, a config naming the trainer's is left alone.
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    write(other, "examples/b/config/plain.yaml", EXPERIMENT.replace(
        "hydra:\n  searchpath:\n    - file://verl/trainer/config\n\n", ""))
    doc, notices = composed(other, "examples/b/config/plain.yaml")
    assert doc.composed is None and "`ppo_trainer` is not found" in notices[0]


EARLY_WORKERS = """\
class ActorRolloutRefWorker:
    def __init__(self, config):
        self.config = config
        self.config.actor.ppo_mini_batch_size //= (self.device_mesh.shape[0] // self.ulysses_sequence_parallel_size)
        self.config.actor.ppo_micro_batch_size //= (self.device_mesh.shape[0] //
                                                    self.ulysses_sequence_parallel_size)
        self.config.actor.ppo_mini_batch_size *= self.config.rollout.n
        self.config.actor.ppo_micro_batch_size *= self.config.rollout.n
"""
LATER_WORKERS = EARLY_WORKERS.replace("        self.config.actor.ppo_micro_batch_size *= self.config.rollout.n\n", "")

GRPO_LINE = """\
python3 -m verl.trainer.main_ppo \\
    algorithm.adv_estimator=grpo \\
    actor_rollout_ref.actor.ppo_mini_batch_size=256 \\
    actor_rollout_ref.actor.ppo_micro_batch_size=128 \\
    actor_rollout_ref.rollout.n=5 \\
    trainer.n_gpus_per_node=8
"""


def test_a_vendored_early_verl_that_scales_the_micro_batch_by_n_is_counted_so(tmp_path):
    # TinyZero-style forks: their copy's workers multiply the deprecated micro batch by rollout.n.
    for workers, micro, steps in ((EARLY_WORKERS, "80", "2"), (LATER_WORKERS, "16", "10")):
        folder = tmp_path / str(steps)
        project(folder, {"verl/workers/fsdp_workers.py": workers, "run.sh": GRPO_LINE})
        out = run("explain", str(folder / "run.sh")).output
        rows = {line.split("  ")[1].strip(): line.split() for line in out.splitlines() if line.startswith("  ")}
        assert rows["micro batch (per GPU)"][4] == micro, out  # 128 // 8 (x 5)
        assert rows["gradient accumulation"][2] == steps, out  # 256 x 5 / 8 / micro


def test_a_framework_config_of_an_installed_verl_is_not_a_notice(tmp_path):
    """`defaults: [ppo_trainer, _self_]` in a project with no copy of verl: Hydra composes it from the
    installed package, which is out of view: nothing to say (each config of such a project said so
    once per lint). A config of the project's own that is missing still is said."""
    (tmp_path / ".git").mkdir()
    body = "  - _self_\ndata:\n  train_batch_size: 64\nactor_rollout_ref:\n  actor:\n    ppo_mini_batch_size: 32\n"
    write(tmp_path, "conf/grpo.yaml", "defaults:\n  - ppo_trainer\n" + body)
    write(tmp_path, "conf/mine.yaml", "defaults:\n  - my_base\n" + body)
    result = run("check", tmp_path / "conf")
    notices = [line for line in result.stderr.splitlines() if "notice" in line]
    assert len(notices) == 1 and "mine.yaml: config `my_base` is not found" in notices[0]
