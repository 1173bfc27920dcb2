"""Version awareness: the release a project runs decides which keys exist (lint/versions.py,
lint/keysets.py). Projects here are written in the shapes real repositories use: a
requirements.txt pin, pyproject dependencies (PEP 621 and poetry), setup.py
install_requires, setup.cfg, uv.lock / poetry.lock, a vendored framework folder, and
`versions` in the project config."""

import os
import random
import re

import pytest

from batchlint import per_run, versions
from batchlint.config import ConfigError, Settings, load_settings
from batchlint.engine import Options, lint_file
from batchlint.frameworks import torchtitan, verl
from batchlint.frameworks.torchtitan_keys import KEY_SETS as TITAN_SETS
from batchlint.frameworks.verl_keys import KEY_SETS as VERL_SETS
from batchlint.keysets import in_force
from batchlint.rules import RULES

from conftest import write

# grad_offload was a key of verl's fsdp_config up to 0.2.0.post2 (TinyZero-era scripts set it).
OLD_KEY = "actor_rollout_ref.actor.fsdp_config.grad_offload"
SCRIPT = f"""\
#!/bin/bash
python3 -m verl.trainer.main_ppo \\
    data.train_batch_size=256 \\
    {OLD_KEY}=False \\
    actor_rollout_ref.actor.{{mini}}=64 \\
    trainer.n_gpus_per_node=8
"""
TITAN = """\
[training]
local_batch_size = 8
compile = true
"""


@pytest.fixture(autouse=True)
def fresh_cache():
    versions._cache.clear()  # each test's project is new; the cache is per folder
    yield
    versions._cache.clear()


def _project(tmp_path, files: dict):
    os.makedirs(tmp_path / ".git", exist_ok=True)  # the project root, as a checkout's
    for name, text in files.items():
        write(tmp_path, name, text)


def _lint(tmp_path, name, settings=None):
    result = lint_file(str(tmp_path / name), settings or Settings(root=str(tmp_path)), Options(), RULES)
    assert result.error is None, result.error
    return result


def _codes(result, code):
    return [d for d in result.diagnostics if d.code == code]


def _verl(tmp_path, files, mini="ppo_mini_batch_size", settings=None):
    _project(tmp_path, {"scripts/train.sh": SCRIPT.format(mini=mini), **files})
    return _codes(_lint(tmp_path, "scripts/train.sh", settings), "BL602")


# -- verl: a key an old release has ---------------------------------------------------------

def test_a_key_of_the_pinned_old_release_is_not_flagged(tmp_path):
    assert _verl(tmp_path, {"requirements.txt": "torch==2.4.0\nverl==0.1\nvllm\n"}) == []


def test_the_same_key_under_a_release_without_it_is_flagged_naming_the_release(tmp_path):
    [finding] = _verl(tmp_path, {"requirements.txt": "torch==2.4.0\nverl==0.5.0\n"})
    assert finding.span.line == 4
    assert f"`{OLD_KEY}` is not a key of verl 0.5.0 (pinned in requirements.txt:2)" in " ".join(finding.notes)


def test_with_no_pin_a_key_any_release_had_is_not_flagged_but_a_typo_of_every_release_is(tmp_path):
    [finding] = _verl(tmp_path, {}, mini="ppo_mini_batchsize")
    assert finding.span.line == 5
    assert "is a key of no verl release from 0.1 to 0.8.0.dev (which one this project runs is unknown" in " ".join(finding.notes)


def test_a_known_release_batchlint_has_no_key_set_for_is_not_judged(tmp_path):
    assert _verl(tmp_path, {"requirements.txt": "verl==9.1.0\n"}, mini="ppo_mini_batchsize") == []


def test_a_vendored_copy_is_judged_by_its_own_config(tmp_path):
    """A fork that vendors verl (TinyZero, Search-R1): its own ppo_trainer.yaml is the key set,
    keys it added included; its version file names it."""
    config = ("actor_rollout_ref:\n  actor:\n    ppo_mini_batch_size: 256\n    fsdp_config:\n"
              "      grad_offload: False\n      my_fork_flag: 1\ntrainer:\n  n_gpus_per_node: 8\n")
    vendored = {"verl/__init__.py": "", "verl/version/version": "0.1\n", "verl/trainer/main_ppo.py": "",
                "verl/trainer/config/ppo_trainer.yaml": config, "requirements.txt": "verl==0.6.0\n"}
    assert _verl(tmp_path, vendored) == []
    [finding] = _verl(tmp_path, vendored, mini="ppo_mini_batchsize")
    assert "is not a key of verl 0.1 (the copy in verl/version/version)" in " ".join(finding.notes)


def test_a_copy_whose_config_is_out_of_view_is_not_judged_by_its_release(tmp_path):
    """Logic-RL, TinyZero's lineage: a copy whose version file says 0.1 and whose own ppo_trainer.yaml is
    not in view may define keys verl 0.1 had not (`rollout.n`): its keys are unknown, nothing is said."""
    copy = {"verl/__init__.py": "", "verl/version/version": "0.1\n", "verl/trainer/main_ppo.py": ""}
    assert _verl(tmp_path, copy, mini="ppo_mini_batchsize") == []
    # The same line with the release pinned and no copy: judged by that release's keys.
    assert len(_verl(tmp_path / "pinned", {"requirements.txt": "verl==0.1\n"}, mini="ppo_mini_batchsize")) == 1


def test_a_copy_of_the_frameworks_repository_in_a_folder_of_its_name_is_the_copy(tmp_path):
    """rllm keeps its verl fork whole in verl/ (the package in verl/verl/): keys the fork added
    (`rollout.n_val`) are keys of the release it runs, not typos."""
    config = ("actor_rollout_ref:\n  actor:\n    ppo_mini_batch_size: 256\n    fsdp_config:\n"
              "      grad_offload: False\n      my_fork_flag: 1\ntrainer:\n  n_gpus_per_node: 8\n")
    repository = {"verl/setup.py": "", "verl/verl/__init__.py": "", "verl/verl/version/version": "0.1\n",
                  "verl/verl/trainer/main_ppo.py": "", "verl/verl/trainer/config/ppo_trainer.yaml": config}
    assert _verl(tmp_path, repository) == []
    [finding] = _verl(tmp_path, repository, mini="ppo_mini_batchsize")
    assert "is not a key of verl 0.1 (the copy in verl/verl/version/version)" in " ".join(finding.notes)


def test_a_line_running_a_module_the_copy_lacks_is_not_judged_by_the_copy(tmp_path):
    """rllm's pipeline scripts run `verl.trainer.main_ppo_async`, which its copy of verl does not
    have: they run another verl, whose keys (`rollout.val_kwargs`) the copy cannot tell."""
    config = "actor_rollout_ref:\n  actor:\n    ppo_mini_batch_size: 256\ntrainer:\n  n_gpus_per_node: 8\n"
    repository = {"verl/verl/__init__.py": "", "verl/verl/version/version": "0.1\n",
                  "verl/verl/trainer/main_ppo.py": "", "verl/verl/trainer/config/ppo_trainer.yaml": config}
    _project(tmp_path, {"scripts/train.sh": SCRIPT.format(mini="ppo_mini_batchsize").replace(
        "verl.trainer.main_ppo", "verl.trainer.main_ppo_async"), **repository})
    assert _codes(_lint(tmp_path, "scripts/train.sh", None), "BL602") == []


def test_the_project_config_versions_wins(tmp_path):
    settings = Settings(root=str(tmp_path), source="pyproject.toml", versions={"verl": "0.5.0"})
    [finding] = _verl(tmp_path, {"requirements.txt": "verl==0.1\n"}, settings=settings)
    assert "verl 0.5.0 (set by `versions` in pyproject.toml)" in " ".join(finding.notes)


# -- where a pin is written -------------------------------------------------------------------

@pytest.mark.parametrize("files, where", [
    ({"requirements/base.txt": "verl[vllm]==0.5.0 ; python_version >= '3.9'\n"}, "requirements/base.txt:1"),
    ({"pyproject.toml": '[project]\nname = "r1"\ndependencies = [\n  "torch",\n  "verl==0.5.0",\n]\n'},
     "pyproject.toml:5"),
    ({"pyproject.toml": '[tool.poetry.dependencies]\npython = "^3.10"\nverl = "0.5.0"\n'}, "pyproject.toml:3"),
    ({"setup.py": "from setuptools import setup\nREQUIRED = [\n    'ray',\n    'verl==0.5.0',\n]\n"
                  "setup(name='r1', install_requires=REQUIRED)\n"}, "setup.py:4"),
    ({"setup.cfg": "[metadata]\nname = r1\n\n[options]\ninstall_requires =\n    ray\n    verl==0.5.0\n"},
     "setup.cfg:7"),
    ({"uv.lock": 'version = 1\n\n[[package]]\nname = "verl"\nversion = "0.5.0"\nsource = { registry = "x" }\n'},
     "uv.lock:4"),
    ({"poetry.lock": '[[package]]\nname = "verl"\nversion = "0.5.0"\ndescription = ""\n'}, "poetry.lock:2"),
])
def test_each_place_a_release_is_written(tmp_path, files, where):
    [finding] = _verl(tmp_path, files)
    assert f"verl 0.5.0 (pinned in {where})" in " ".join(finding.notes)


def test_a_lock_file_beats_a_loose_requirement(tmp_path):
    files = {"requirements.txt": "verl>=0.1\n", "uv.lock": '[[package]]\nname = "verl"\nversion = "0.1"\n'}
    assert _verl(tmp_path, files) == []


def test_the_nearest_folder_that_says_anything_decides(tmp_path):
    files = {"requirements.txt": "verl==0.5.0\n", "scripts/requirements.txt": "verl==0.1\n"}
    assert _verl(tmp_path, files) == []


def test_a_poetry_caret_admitting_one_embedded_release_names_it(tmp_path):
    [finding] = _verl(tmp_path, {"pyproject.toml": '[tool.poetry.dependencies]\nverl = "~0.5.0"\n'})
    assert "verl 0.5.0 (>=0.5.0,<0.6 in pyproject.toml:2)" in " ".join(finding.notes)


# -- TorchTitan: 0.1.0 reads another key set, and drops unknown keys ------------------------

def _titan(tmp_path, files, settings=None):
    _project(tmp_path, {"train_configs/llama3_8b.toml": TITAN, **files})
    return _codes(_lint(tmp_path, "train_configs/llama3_8b.toml", settings), "BL510")


def test_torchtitan_0_1_has_training_compile(tmp_path):
    assert _titan(tmp_path, {"requirements.txt": "torchtitan==0.1.0\n"}) == []


def test_torchtitan_0_2_refuses_training_compile(tmp_path):
    [finding] = _titan(tmp_path, {"requirements.txt": "torchtitan==0.2.2\n"})
    assert finding.severity == "error" and finding.span.line == 3
    assert "'compile' in [training] is unknown to TorchTitan 0.2.2" in finding.message
    assert "TorchTitan 0.2.2 (pinned in requirements.txt:1)" in " ".join(finding.notes)


def test_a_range_admitting_exactly_one_embedded_release_names_it(tmp_path):
    [finding] = _titan(tmp_path, {"requirements.txt": "torchtitan>=0.2.1,<0.2.2\n"})
    assert "TorchTitan 0.2.1 (>=0.2.1,<0.2.2 in requirements.txt:1)" in " ".join((finding.message,) + finding.notes)


def test_a_range_admitting_several_is_unknown_so_a_key_0_1_had_stays_silent(tmp_path):
    assert _titan(tmp_path, {"requirements.txt": "torchtitan>=0.1\n"}) == []


def test_torchtitan_0_1_drops_an_unknown_key_silently_a_warning(tmp_path):
    _project(tmp_path, {"requirements.txt": "torchtitan==0.1.0\n",
                        "t.toml": "[training]\nlocal_batch_size = 8\nbatch_sise = 8\n"})
    [finding] = _codes(_lint(tmp_path, "t.toml"), "BL510")
    assert finding.severity == "warning" and "drops it silently" in " ".join((finding.message,) + finding.notes)


def test_torchtitan_s_own_repository_is_judged_by_its_job_config(tmp_path):
    source = ("from dataclasses import dataclass, field\n\n@dataclass\nclass Training:\n    local_batch_size: int = 8\n"
              "    compile: bool = False\n\n@dataclass\nclass JobConfig:\n    training: Training = field(default_factory=Training)\n")
    own = {"torchtitan/__init__.py": "", "assets/version.txt": "0.3.0\n", "torchtitan/config/job_config.py": source}
    assert _titan(tmp_path, own) == []
    result = in_force(torchtitan.DISTRIBUTION, TITAN_SETS, str(tmp_path / "train_configs/llama3_8b.toml"),
                      torchtitan.keys_from_source)
    assert result.named == "TorchTitan 0.3.0 (the copy in assets/version.txt)"
    assert result.keys == {"training.", "training.local_batch_size", "training.compile"}


# -- the specifier subset, and inputs no project should have --------------------------------

@pytest.mark.parametrize("spec, version, admitted", [
    ("==0.3.0.post1", "0.3.0.post1", True), ("==0.1", "0.1.0", True), (">=0.1,<0.2", "0.2", False),
    ("~=0.4.0", "0.4.1", True), ("~=0.4.0", "0.5.0", False), ("==0.2.*", "0.2.0.post2", True),
    ("==1.0.*", "1.1", False), ("!=0.4.0", "0.4.0", False), ("", "0.7.0", True), (">0.8.0.dev", "0.8.0", True),
    ("@ git+https://x", "0.1", None),
])
def test_specifiers(spec, version, admitted):
    assert versions.admits(spec, version) is admitted


def test_version_keys_order_plain_and_marked_releases_as_pip():
    # A plain release (`4.57.1`) is keyed without the pattern; the marked ones through it: one order.
    ordered = ["0.9", "1.0.dev1", "1.0.dev2", "1.0a1", "1.0rc1", "1", "1.0.0", " 1.0 ", "v1.0.0", "1.0.post1", "1.0.0.post2", "1.0.1",
               "1.10", "10.0"]
    keys = [versions.version_key(v) for v in ordered]
    assert keys == sorted(keys)
    assert keys[5] == keys[6] == keys[7] == keys[8]  # 1, 1.0.0, padded and v-prefixed: one release
    assert keys[4] < keys[5] < keys[9] < keys[10] < keys[11]
    assert versions.version_key("1.0.dev1") == versions.version_key("1.0-dev1") == versions.version_key("1.0dev1")
    assert versions.version_key("1.0.post1.dev2") == versions.version_key("1.0post1dev2") < keys[9]
    assert versions.version_key("1.0.post1") == versions.version_key("1.0-1") == versions.version_key("1.0.0post1")
    assert versions.version_key("1..2") is None and versions.version_key("") is None
    assert versions.version_key("\u0661.0") == versions.version_key("1.0")  # as the pattern's \d reads it


@pytest.mark.parametrize("spec, side", [
    (">=0.29.0", True), (">0.20", True), ("==0.21.*", None), ("~=0.20.1", True), (">=0.19.1", None),
    (">=0.19.1,<0.20", False), ("<0.20.0", False), ("<=0.19.9", False), ("<=0.20", None), ("==0.18.0", False),
    ("!=0.21.0", None), ("", None), ("@ git+https://x", None),
])
def test_the_side_of_a_boundary_a_range_admits(spec, side):
    assert versions.side_of(spec, "0.20.0") is side


@pytest.mark.parametrize("files", [
    {"requirements.txt": b"\xff\xfe\x00verl==\n" * 100},
    {"requirements.txt": "verl @ git+https://github.com/volcengine/verl@3f6a5e8\n"},  # a commit: no release
    {"setup.py": "setup(install_requires=[" * 300},
    {"setup.py": "import os\nsetup(install_requires=open('r.txt').read().splitlines())\n"},
    {"setup.cfg": "[options\ninstall_requires = verl==0.5.0"},
    {"pyproject.toml": "[project]\ndependencies = 3\n[tool.poetry]\ndependencies = 'x'\n"},
    {"pyproject.toml": "a" + ".b" * 5000 + " = 1\n"},
    {"uv.lock": "[[package]]\nname = \"verl\"\nversion = \"not a version\"\n"},
    {"verl/__init__.py": "", "verl/version/version": "\x00\x01"},
])
def test_odd_files_mean_an_unknown_release_never_a_crash(tmp_path, files):
    """Whatever the project's files hold, the release is unknown and only a key no release had is flagged."""
    assert _verl(tmp_path, files) == []


def test_files_read_for_the_release_are_recorded_for_the_cache(tmp_path):
    _verl(tmp_path, {"requirements.txt": "verl==0.1\n"})
    for _ in range(2):  # the second lint comes from the per-folder cache
        result = _lint(tmp_path, "scripts/train.sh")
        assert os.path.abspath(tmp_path / "requirements.txt") in result.reads


def test_the_project_config_versions_table(tmp_path):
    write(tmp_path, "pyproject.toml", '[tool.batchlint]\nversions = { verl = "0.4.1", TorchTitan = "0.1.0" }\n')
    assert load_settings(start=str(tmp_path)).versions == {"TorchTitan": "0.1.0", "verl": "0.4.1"}
    write(tmp_path, "pyproject.toml", '[tool.batchlint]\nversions = { verl = 0.4 }\n')
    with pytest.raises(ConfigError, match="versions.verl must be a version string"):
        load_settings(start=str(tmp_path))


def test_every_embedded_release_is_a_release_the_specifiers_read():
    for sets, dist in ((VERL_SETS, verl.DISTRIBUTION), (TITAN_SETS, torchtitan.DISTRIBUTION)):
        assert all(versions.version_key(name) is not None for name in sets.names), dist
        keys = [versions.version_key(name) for name in sets.names]
        assert keys == sorted(keys)  # oldest first: a run "a..b" means the releases between


# -- a start-up check a copy of verl predates ------------------------------------------------------

_SMALL_STEP = ("#!/bin/bash\npython3 -m verl.trainer.main_ppo \\\n    data.train_batch_size=8 \\\n"
               "    actor_rollout_ref.actor.ppo_mini_batch_size=32 \\\n    trainer.n_gpus_per_node=4\n")
_EARLY_TRAINER = "def _validate_config(self):\n    config = self.config\n    n_gpus = config.trainer.n_gpus_per_node\n"


@pytest.mark.parametrize("trainer, flagged", [
    (_EARLY_TRAINER, False),  # Logic-RL's and TinyZero's copies: no such check, the job runs
    (_EARLY_TRAINER + "    assert config.data.train_batch_size >= config.actor_rollout_ref.actor.ppo_mini_batch_size\n", True),
])
def test_a_copy_of_verl_without_the_mini_batch_check_is_not_said_to_refuse(tmp_path, trainer, flagged):
    _project(tmp_path, {"scripts/train.sh": _SMALL_STEP, "verl/__init__.py": "", "verl/trainer/main_ppo.py": "",
                        "verl/trainer/ppo/ray_trainer.py": trainer})
    found = _codes(_lint(tmp_path, "scripts/train.sh"), "BL141")
    assert [d.span.line for d in found] == ([4] if flagged else [])


def test_without_a_copy_the_released_verl_refuses_a_mini_batch_over_the_step(tmp_path):
    _project(tmp_path, {"scripts/train.sh": _SMALL_STEP})
    assert [d.span.line for d in _codes(_lint(tmp_path, "scripts/train.sh"), "BL141")] == [4]


_TWICE = ("#!/bin/bash\npython3 -m verl.trainer.main_ppo \\\n    actor_rollout_ref.actor.ppo_micro_batch_size=32 \\\n"
          "    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 \\\n    trainer.n_gpus_per_node=8\n")
_CHECKING_CONFIG = ("def validate_config(config):\n    def check_mutually_exclusive(mbs, mbs_per_gpu, name):\n"
                    "        if mbs is not None and mbs_per_gpu is not None:\n"
                    "            raise ValueError(f\"[{name}] You have set both '{name}.micro_batch_size' AND ...\")\n")


@pytest.mark.parametrize("files, flagged", [
    ({}, False),  # an early copy: the deprecated key wins, silently
    ({"verl/utils/config.py": _CHECKING_CONFIG}, True),  # SkyThought's copy: refuses the pair
])
def test_a_micro_batch_set_twice_is_judged_by_the_copys_own_check(tmp_path, files, flagged):
    _project(tmp_path, {"scripts/train.sh": _TWICE, "verl/__init__.py": "", "verl/trainer/main_ppo.py": "", **files})
    assert [d.span.line for d in _codes(_lint(tmp_path, "scripts/train.sh"), "BL143")] == ([3] if flagged else [])


_SP_PADDED = ("#!/bin/bash\npython3 -m verl.trainer.main_ppo \\\n    actor_rollout_ref.model.use_remove_padding=False \\\n"
              "    actor_rollout_ref.actor.ulysses_sequence_parallel_size=2 \\\n    trainer.n_gpus_per_node=8\n")
_SP_CHECK = ("    if config.actor_rollout_ref.actor.get('ulysses_sequence_parallel_size', 1) > 1:\n"
             "        assert config.actor_rollout_ref.model.use_remove_padding, \\\n"
             "            \"When using sequence parallelism for actor/ref policy, you must enable `use_remove_padding`.\"\n")


@pytest.mark.parametrize("trainer, flagged", [
    (_EARLY_TRAINER, False),  # TinyZero's copy: Ulysses is patched in only with remove padding; the job starts
    (_EARLY_TRAINER + _SP_CHECK, True),  # verl 0.2-0.4's _validate_config
])
def test_sp_without_remove_padding_is_judged_by_the_copys_own_check(tmp_path, trainer, flagged):
    _project(tmp_path, {"scripts/train.sh": _SP_PADDED, "verl/__init__.py": "", "verl/trainer/main_ppo.py": "",
                        "verl/trainer/ppo/ray_trainer.py": trainer})
    assert [d.span.line for d in _codes(_lint(tmp_path, "scripts/train.sh"), "BL240")] == ([3] if flagged else [])


def test_without_a_copy_the_released_verl_refuses_sp_without_remove_padding(tmp_path):
    _project(tmp_path, {"scripts/train.sh": _SP_PADDED})
    assert [d.span.line for d in _codes(_lint(tmp_path, "scripts/train.sh"), "BL240")] == [3]


_SFT_SP = ("data:\n  train_batch_size: 64\n  micro_batch_size_per_gpu: 4\nmodel:\n  partial_pretrain: Qwen/Qwen2.5-0.5B\n"
           "ulysses_sequence_parallel_size: 2\nuse_remove_padding: false\n")


@pytest.mark.parametrize("sft_trainer, flagged", [
    ("class FSDPSFTTrainer:\n    pass\n", False),  # an early copy: no Ulysses in its SFT trainer
    ("class FSDPSFTTrainer:\n    def __init__(self):\n"
     "        assert self.use_remove_padding, \"Sequence parallel is only supported when remove_padding is enabled\"\n",
     True),
])
def test_sft_sp_without_remove_padding_is_judged_by_the_copys_own_check(tmp_path, sft_trainer, flagged):
    _project(tmp_path, {"configs/sft.yaml": _SFT_SP, "verl/__init__.py": "", "verl/trainer/fsdp_sft_trainer.py": sft_trainer})
    assert [d.span.line for d in _codes(_lint(tmp_path, "configs/sft.yaml"), "BL240")] == ([7] if flagged else [])


_INDIVISIBLE = ("#!/bin/bash\npython3 -m verl.trainer.main_ppo \\\n    data.train_batch_size=100 \\\n"
                "    actor_rollout_ref.rollout.n=1 \\\n    trainer.n_gpus_per_node=8\n")
_BATCH_CHECK = ("    real_train_batch_size = config.data.train_batch_size * config.actor_rollout_ref.rollout.n\n"
                "    assert real_train_batch_size % minimal_bsz == 0\n")


@pytest.mark.parametrize("trainer, says", [
    (_EARLY_TRAINER, "its first step fails when the 100 prompts are split over the 8 ranks"),  # TinyZero's copy
    (_EARLY_TRAINER + _BATCH_CHECK, "validate_config refuses to start"),
])
def test_an_indivisible_train_batch_is_told_as_the_copy_fails(tmp_path, trainer, says):
    _project(tmp_path, {"scripts/train.sh": _INDIVISIBLE, "verl/__init__.py": "", "verl/trainer/main_ppo.py": "",
                        "verl/trainer/ppo/ray_trainer.py": trainer})
    found = _codes(_lint(tmp_path, "scripts/train.sh"), "BL140")
    assert [d.span.line for d in found] == [3] and says in " ".join((found[0].message,) + found[0].notes)


def test_an_indivisible_megatron_batch_is_not_judged_for_a_copy_without_the_check(tmp_path):
    script = _INDIVISIBLE.replace("main_ppo \\\n", "main_ppo --config-name=ppo_megatron_trainer \\\n") \
        .replace("    trainer.n", "    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 \\\n    trainer.n")
    released, early = tmp_path / "released", tmp_path / "early"
    _project(released, {"scripts/train.sh": script})
    assert [d.span.line for d in _codes(_lint(released, "scripts/train.sh"), "BL140")] == [3]
    _project(early, {"scripts/train.sh": script, "verl/__init__.py": "", "verl/trainer/main_ppo.py": "",
                     "verl/trainer/ppo/ray_trainer.py": _EARLY_TRAINER})
    assert _codes(_lint(early, "scripts/train.sh"), "BL140") == []


# -- install commands: what a job's scripts, Dockerfiles and launchers install -----------------------

TUNE = versions.Distribution(("torchtune",), "torchtune", ("version.txt",), title="torchtune",
                             releases=("0.4.0", "0.5.0", "0.6.0", "0.6.1"))


def _release(tmp_path, files, config="configs/full.yaml"):
    _project(tmp_path, {config: "batch_size: 4\n", **files})
    return versions.release(TUNE, str(tmp_path / config), TUNE.releases)


@pytest.mark.parametrize("files, version, where", [
    ({"scripts/setup.sh": "set -e\npip install --upgrade pip\npip install torchtune==0.5.0 torchao\n"},
     "0.5.0", "scripts/setup.sh:3"),
    ({"Dockerfile": "FROM pytorch/pytorch\nRUN pip install --no-cache-dir \\\n    'torchtune==0.6.1' \\\n    wandb\n"},
     "0.6.1", "Dockerfile:3"),
    ({"docker/train.dockerfile": "RUN uv pip install --system torchtune==0.4.0\n"}, "0.4.0",
     "docker/train.dockerfile:1"),
    # a job launcher building its image in Python (modal-style)
    ({"launch/modal_train.py": 'import modal\nimage = modal.Image.debian_slim().pip_install(\n'
                               '    ["torch==2.5.1", "torchtune==0.5.0", "wandb"]\n)\n'}, "0.5.0",
     "launch/modal_train.py:3"),
    ({"scripts/setup.sh": "pip install git+https://github.com/pytorch/torchtune.git@v0.6.0\n"}, "0.6.0",
     "scripts/setup.sh:1"),
])
def test_an_install_command_names_the_release(tmp_path, files, version, where):
    found = _release(tmp_path, files)
    assert (found.version, found.where) == (version, where)


@pytest.mark.parametrize("files", [
    # a commit pin: which release it belongs to is not known here
    {"launch/modal_train.py": 'image = Image.pip_install(["torchtune @ git+https://github.com/pytorch/torchtune.git'
                              '@3f6a5e8c21d1a7e4bbbc1f8f6d5b3ab7c2f30f11"])\n'},
    # two scripts installing two releases
    {"a.sh": "pip install torchtune==0.5.0\n", "b.sh": "pip install torchtune==0.6.1\n"},
    # a branch
    {"a.sh": "pip install 'git+https://github.com/pytorch/torchtune@main'\n"},
])
def test_an_install_naming_no_single_release_is_unknown(tmp_path, files):
    found = _release(tmp_path, files)
    assert found is not None and found.version is None


def test_a_bare_install_names_none_and_a_requirement_pin_wins_over_no_install(tmp_path):
    assert _release(tmp_path, {"a.sh": "pip install torchtune\n"}) is None
    versions._cache.clear()
    per_run.forget()
    found = _release(tmp_path, {"requirements.txt": "torchtune==0.4.0\n", "a.sh": "pip install -r requirements.txt\n"})
    assert (found.version, found.where) == ("0.4.0", "requirements.txt:1")


def test_an_install_command_decides_where_the_requirements_name_no_release(tmp_path):
    found = _release(tmp_path, {"requirements.txt": "torchtune\n", "a.sh": "pip install torchtune==0.6.1\n"})
    assert found.version == "0.6.1"


# What the install-command search was written as, one pattern over the whole text (its `pip` at the start or
# after a space or one of `;&|(`"'`): the search now looks for `pip` as a string and checks before it apart.
_PIP_INSTALL_AS_WRITTEN = re.compile(r"(?:^|[\s;&|(`\"'])(?:uv\s+)?pip3?(?:\.\d+)?\s+install\s+([^\n;&|)`]*)")


def test_the_install_search_finds_what_its_one_pattern_found():
    pieces = ["pip", " ", "install", "\n", "a", "x", "uv", "3", ".1", ";", "|", "(", "'", '"', "`", "-r", "==1.2",
              "\\\n", "\u2028", "\t", "mypip", "pip3.10", "\u00a0"]
    generated = random.Random(28)
    for _ in range(20_000):
        text = "".join(generated.choice(pieces) for _ in range(generated.randint(1, 14)))
        written = [(m.start(1), m.group(1)) for m in _PIP_INSTALL_AS_WRITTEN.finditer(text)]
        assert [(m.start(1), m.group(1)) for m in versions._pip_installs(text)] == written, repr(text)


def test_install_requirements_are_numbered_by_the_lines_they_are_on():
    text = ("# setup\npip install torch==2.5.1 \\\n    'trl==0.19.0' \\\n  -r req.txt peft\n"
            "RUN uv pip install --system deepspeed==0.16.7; pip3 install vllm\n"
            "image = Image.pip_install(\n  'a==1',\n  \"b\")\nimage.pip_install('c')\n")
    assert versions.install_requirements(text) == (
        ("torch==2.5.1", 2), ("trl==0.19.0", 3), ("peft", 4), ("deepspeed==0.16.7", 5), ("vllm", 5),
        ("a==1", 7), ("b", 8), ("c", 9))


def test_a_release_is_asked_of_a_folder_once_and_its_reads_replayed_for_every_file(tmp_path):
    from batchlint import reads

    _project(tmp_path, {"configs/a.yaml": "batch_size: 4\n", "configs/b.yaml": "batch_size: 2\n",
                        "requirements.txt": "torchtune==0.5.0\n", "scripts/setup.sh": "pip install torchtune\n"})
    asked = []
    real = versions._release
    versions._release = lambda *args: asked.append(args[1]) or real(*args)
    try:
        touched = []
        for name in ("a.yaml", "b.yaml"):
            with reads.tracking() as seen:
                found = versions.release(TUNE, str(tmp_path / "configs" / name), TUNE.releases)
            touched.append((found.version, found.where, dict(seen.paths), set(seen.read), set(seen.searched)))
    finally:
        versions._release = real
    assert len(asked) == 1 and touched[0] == touched[1]
    assert touched[0][:2] == ("0.5.0", "requirements.txt:1")
    assert str(tmp_path / "requirements.txt") in touched[0][3]  # read, as the requirements are


def test_prose_and_other_distributions_are_no_install(tmp_path):
    files = {"README.sh": "# run: pip install torchtune-extras==1.0\necho pip install torchtunes==2.0\n",
             "b.py": 'print("pip install")\n'}
    assert _release(tmp_path, files) is None


# -- a README's setup section: what a project that has no manifest says to install --------------------

LISTED = "## Dependencies\n\n```\nPackage      Version\n------------ -------\ntorch        2.5.1\ntorchtune    0.5.0\n```\n"


@pytest.mark.parametrize("readme, version, where", [
    ("# Setup\n\n```bash\nconda create -n t python=3.10\npip install torchtune==0.6.1 wandb\n```\n", "0.6.1", "README.md:5"),
    (LISTED, "0.5.0", "README.md:7"),  # the authors' environment, as `pip list` prints it
    ("Installed:\n\n~~~\ntorch==2.5.1\ntorchtune==0.4.0\n~~~\n", "0.4.0", "README.md:5"),  # as `pip freeze` prints it
    # lines counted at "\n" only, as its install commands are (a form feed or U+2028 in prose ends no line)
    ("Setup\f notes\u2028 more\r\n```\r\ntorchtune   0.6.1\r\n```\r\n", "0.6.1", "README.md:3"),
])
def test_a_readme_names_the_release_where_no_manifest_does(tmp_path, readme, version, where):
    found = _release(tmp_path, {"README.md": readme})
    assert (found.version, found.where) == (version, where)


@pytest.mark.parametrize("files", [
    {"README.md": "Developed upon torchtune 0.5.0, see below.\n"},  # prose, not a setup step
    {"README.md": "torchtune    0.5.0\n"},  # a line outside a code block
    {"README.md": "```python\nassert torchtune.__version__ == '0.5.0'\n```\n"},  # code that is no listing
    {"README.md": "```\ntorchtune-extras   0.5.0\ntorchtunes==0.6.1\n```\n"},  # other distributions
    {"eval/README.md": "```\npip install torchtune==0.6.1\n```\n"},  # another folder's README: its own tools
])
def test_a_readme_that_names_no_release_of_it_says_nothing(tmp_path, files):
    assert _release(tmp_path, files) is None


def test_a_manifest_wins_over_the_readme_and_a_readme_naming_two_releases_names_none(tmp_path):
    found = _release(tmp_path, {"requirements.txt": "torchtune==0.4.0\n", "README.md": LISTED})
    assert (found.version, found.where) == ("0.4.0", "requirements.txt:1")
    versions._cache.clear()
    per_run.forget()
    found = _release(tmp_path, {"requirements.txt": "", "README.md": LISTED + "\n```\npip install torchtune==0.6.1\n```\n"})
    assert found is not None and found.version is None


def test_a_readme_above_the_config_speaks_for_it_and_is_recorded_as_read(tmp_path):
    from batchlint import reads

    _project(tmp_path, {"recipes/sft/full.yaml": "batch_size: 4\n", "README.md": LISTED})
    with reads.tracking() as seen:
        found = versions.release(TUNE, str(tmp_path / "recipes/sft/full.yaml"), TUNE.releases)
    assert found.version == "0.5.0"
    assert str(tmp_path / "README.md") in seen.paths  # a cached result is reused only while it is unchanged
