"""What keeps a lint cheap may never change what it finds (issue 9's budgets,
benchmarks/bench.py): an adapter is left untried only when it could not have
recognised the file."""

import os

import pytest

from batchlint import frameworks
from batchlint.config import Settings
from batchlint.engine import Options, check_file
from batchlint.document import ParseError
from batchlint.frameworks.facts import Outside
from batchlint.sources import format_of, read

from conftest import CORPUS

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = ("yaml", "json", "toml")


def names(fmt, held=None):
    return [framework.name for framework in frameworks.adapters_for(fmt, held)]


def test_a_data_file_tries_only_the_adapters_whose_markers_it_holds():
    swift = b"model: Qwen/Qwen2.5-7B-Instruct\nper_device_train_batch_size: 1\n"
    assert names("yaml", swift) == ["llamafactory", "swift", "transformers"]
    assert names("yaml", b"base_model: x\nmicro_batch_size: 2\n") == ["axolotl", "nemo", "llamafactory", "swift"]
    assert names("yaml", b"seed: 1\n") == []
    assert names("yaml") == names("yaml", None) and len(names("yaml")) > 5  # no bytes: every one, in order


def test_a_python_config_is_never_preselected():
    # `from xtuner import v1` makes an XTuner v1 config without the bytes b"xtuner.v1".
    assert names("python", b"from xtuner import v1\n") == names("python")


# Configs each recognised through one key alone: the key must be among its framework's markers.
ONE_KEY = [
    ("nemo.yaml", "trainer:\n  devices: 8\nmodel:\n  pipeline_model_parallel_size: 2\n", "nemo"),
    ("nemo_mbs.yaml", "trainer:\n  num_nodes: 1\nmodel:\n  micro_batch_size: 2\n", "nemo"),
    ("args.yaml", "global-batch-size: 256\n", "megatron"),
    ("args_pp.yaml", "pipeline-model-parallel-size: 2\n", "megatron"),
    ("ds.json", '{"gradient_clipping": 1.0}', "deepspeed"),
    ("ds_print.json", '{"steps_per_print": 10}', "deepspeed"),
    ("ds_untested.json", '{"zero_allow_untested_optimizer": true}', "deepspeed"),
    ("ta.yaml", "train_sampling_strategy: sequential\noutput_dir: out\n", "transformers"),
    ("v1.yaml", "global_batch_size: 64\nmodel_class: llm\n", "llamafactory-v1"),
]


@pytest.mark.parametrize("name, text, framework", ONE_KEY)
def test_a_config_recognised_by_one_key_is_still_linted(tmp_path, name, text, framework):
    path = tmp_path / name
    path.write_text(text)
    checker = check_file(str(path), Settings(root=str(tmp_path)), Options(), rules=())
    assert [plan.framework for _, plan in checker.plans] == [framework]


def _data_files():
    folders = [os.path.join(REPO, "examples")] + ([CORPUS] if os.path.isdir(CORPUS) else [])
    for folder in folders:
        for top, dirs, files in os.walk(folder):
            dirs.sort()
            for name in sorted(files):
                if format_of(name) in DATA:
                    yield os.path.join(top, name)


def test_every_adapter_that_recognises_a_data_file_finds_one_of_its_markers_in_it():
    """The contract the preselection stands on (Framework.markers), on every data config
    at hand, each adapter asked whether or not its markers are there."""
    recognised = 0
    for path in _data_files():
        with open(path, "rb") as handle:
            raw = handle.read()
        fmt = format_of(path)
        try:
            document = read(path, raw.decode("utf-8-sig"), fmt)
        except (UnicodeDecodeError, ParseError):  # no document: no adapter to ask
            continue
        for framework in frameworks.adapters_for(fmt):
            if framework.plan(document, Outside()) is not None:
                recognised += 1
                assert any(m in raw for m in framework.markers), (path, framework.name)
    assert recognised >= 5
