"""A project that brings its own copy of the trainer (a fork vendoring verl:
`verl/trainer/main_ppo.py` and its Hydra `config/` in the repository) runs
that copy: keys its own config defines are not typos of the released one's,
while a typo of neither is still one."""

from conftest import lint_text, write

SCRIPT = """\
#!/bin/bash
python3 -m verl.trainer.main_ppo \\
    data.train_batch_size=256 \\
    actor_rollout_ref.actor.fsdp_config.{key}=False \\
    actor_rollout_ref.rollout.n_agent=1 \\
    trainer.n_gpus_per_node=8
"""
MAIN = """\
import hydra


@hydra.main(config_path='config', config_name='ppo_trainer', version_base=None)
def main(config):
    pass
"""
# The fork's own config, in the shape of verl 0.1's ppo_trainer.yaml.
CONFIG = """\
data:
  train_batch_size: 1024
actor_rollout_ref:
  actor:
    fsdp_config:
      param_offload: False
      grad_offloads: False
  rollout:
    n: 1
    n_agent: 1
trainer:
  n_gpus_per_node: 8
"""


def typos(result):
    return [(d.code, d.span.line) for d in result.diagnostics if d.code == "BL602"]


def fork(tmp_path, main=MAIN, config=CONFIG):
    (tmp_path / ".git").mkdir(exist_ok=True)  # the repository is the project batchlint may read
    write(tmp_path, "verl/trainer/main_ppo.py", main)
    write(tmp_path, "verl/trainer/config/ppo_trainer.yaml", config)


def test_without_its_own_trainer_the_released_keys_judge(tmp_path):
    # grad_offloads (a key the fork added) and n_agent are keys of no release, each near one that is.
    assert typos(lint_text(tmp_path, "examples/run.sh", SCRIPT.format(key="grad_offloads"))) == [
        ("BL602", 4), ("BL602", 5)]


def test_keys_the_projects_own_trainer_defines_are_not_typos(tmp_path):
    fork(tmp_path)
    assert typos(lint_text(tmp_path, "examples/ppo/run.sh", SCRIPT.format(key="grad_offloads"))) == []


def test_a_typo_of_both_configs_is_still_one(tmp_path):
    fork(tmp_path)
    assert typos(lint_text(tmp_path, "examples/ppo/run.sh", SCRIPT.format(key="grad_ofload"))) == [("BL602", 4)]


def test_the_config_the_copy_names_is_the_one_read(tmp_path):
    # Its hydra.main names another config, which lacks the key: the key is judged as before.
    fork(tmp_path, main=MAIN.replace("config_name='ppo_trainer'", "config_name='other'"))
    write(tmp_path, "verl/trainer/config/other.yaml", "data:\n  train_batch_size: 8\n")
    assert typos(lint_text(tmp_path, "run.sh", SCRIPT.format(key="grad_offloads"))) == [("BL602", 4), ("BL602", 5)]


def test_a_copy_without_hydra_main_or_config_changes_nothing(tmp_path):
    fork(tmp_path, main="def main():\n    pass\n")
    assert typos(lint_text(tmp_path, "run.sh", SCRIPT.format(key="grad_offloads"))) == [
        ("BL602", 4), ("BL602", 5)]
    write(tmp_path, "verl/trainer/main_ppo.py", MAIN)
    write(tmp_path, "verl/trainer/config/ppo_trainer.yaml", "data: [unclosed\n")
    assert typos(lint_text(tmp_path, "run2.sh", SCRIPT.format(key="grad_offloads"))) == [("BL602", 4), ("BL602", 5)]


def test_a_copy_outside_the_project_is_not_read(tmp_path):
    # The script's own folder is the project (no repository): the copy above it is not followed.
    write(tmp_path, "verl/trainer/main_ppo.py", MAIN)
    write(tmp_path, "verl/trainer/config/ppo_trainer.yaml", CONFIG)
    result = lint_text(tmp_path / "examples", "run.sh", SCRIPT.format(key="grad_offloads"))
    assert typos(result) == [("BL602", 4), ("BL602", 5)]
