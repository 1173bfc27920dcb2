"""A config a program of the project's own reads is judged by that program: key-set rules are silent
where the project keeps its own loader (a pretraining project's config_manager.py with its own
JobConfig), and speak where the loader is TorchTitan's, in view as a copy or installed."""

from conftest import lint_text, write

TOML = """\
[job]
dump_folder = "./outputs"

[training]
local_batch_size = 8
seq_len = 2048
warmup_ratio = 0.01

[parallelism]
data_parallel_shard_degree = -1
"""

OWN_MANAGER = """\
import argparse
from dataclasses import dataclass, field


@dataclass
class Training:
    local_batch_size: int = 8
    seq_len: int = 2048
    warmup_ratio: float = 0.0


@dataclass
class JobConfig:
    training: Training = field(default_factory=Training)
"""


def _codes(tmp_path, files):
    (tmp_path / ".git").mkdir()
    for name, text in files.items():
        write(tmp_path, name, text)
    return [d.code for d in lint_text(tmp_path, "train_configs/base.toml", TOML).diagnostics]


def test_a_key_torchtitan_lacks_is_reported_where_torchtitan_reads_the_file(tmp_path):
    assert _codes(tmp_path, {"train.py": "from torchtitan.train import main\nmain()\n"}) == ["BL510"]


def test_the_projects_own_config_manager_reads_it(tmp_path):
    files = {"my_pretrain/config_manager.py": OWN_MANAGER,
             "my_pretrain/train.py": "from my_pretrain.config_manager import JobConfig\n"}
    assert _codes(tmp_path, files) == []


def test_a_copy_of_torchtitan_is_torchtitan_not_a_loader_of_the_projects_own(tmp_path):
    files = {"torchtitan/__init__.py": "", "torchtitan/config_manager.py": OWN_MANAGER.replace("warmup_ratio", "x")}
    # the copy's own key set is the judge: it has no warmup_ratio either
    assert "BL510" in _codes(tmp_path, files)


def test_a_jobconfig_named_in_prose_or_an_import_is_no_loader(tmp_path):
    files = {"notes.py": '"""We read the TOML with torchtitan\'s\nclass JobConfig."""\n'.replace("\nclass", " class"),
             "train.py": "from torchtitan.config import JobConfig\n"}
    assert _codes(tmp_path, files) == ["BL510"]


def test_a_loader_of_the_projects_own_beside_a_copy_of_torchtitan_is_the_reader(tmp_path):
    # A fork that keeps TorchTitan's tree and reads its TOML through a config manager of its own.
    files = {"torchtitan/__init__.py": "", "torchtitan/config_manager.py": OWN_MANAGER.replace("warmup_ratio", "x"),
             "fork/config_manager.py": OWN_MANAGER, "fork/train.py": "from fork.config_manager import JobConfig\n"}
    assert _codes(tmp_path, files) == []
