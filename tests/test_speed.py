"""What keeps a lint cheap may never change what it finds (issue 9's budgets,
benchmarks/bench.py): an adapter is left untried only when it could not have
recognised the file."""

import hashlib
import os
import shutil
import subprocess
import sys

import pytest

from batchlint import frameworks
from batchlint.config import Settings
from batchlint.document import ParseError
from batchlint.engine import Options, check_file, lint_file
from batchlint.frameworks.facts import Outside
from batchlint.rules import RULES
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


def test_a_plain_lint_records_what_it_read_without_digests(tmp_path):
    path = tmp_path / "ds.json"
    path.write_text('{"train_micro_batch_size_per_gpu": 2}')
    settings = Settings(root=str(tmp_path))
    plain = lint_file(str(path), settings, Options(digests=False), RULES)
    compared = lint_file(str(path), settings, Options(), RULES)  # the cache and --fix ask for them
    assert plain.reads == {str(path): ""}
    assert compared.reads == {str(path): hashlib.sha256(path.read_bytes()).hexdigest()}
    assert plain.diagnostics == compared.diagnostics


def test_a_yaml_lint_imports_only_what_it_uses(tmp_path):
    """The pre-commit case: one ms-swift YAML, linted as the hook runs it, in a project where no script runs
    it (where one does, that job is linted too: tests/test_launch.py)."""
    config = str(tmp_path / "qwen2_5_sft_fixed.yaml")
    shutil.copy(os.path.join(REPO, "examples", "swift", "qwen2_5_sft_fixed.yaml"), config)
    probe = (
        "import sys\n"
        f"sys.argv = ['batchlint', 'check', {config!r}]\n"
        "from batchlint.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    loaded = set(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                                check=True).stdout.split("\n")[-2].split())
    assert "batchlint.frameworks.swift" in loaded  # it was linted
    for module in ("hashlib", "multiprocessing", "libcst", "batchlint.launching.lines", "batchlint.sources.shell",
                   "batchlint.frameworks.axolotl", "batchlint.frameworks.torchtune", "batchlint.frameworks.verl",
                   "batchlint.frameworks.openrlhf", "batchlint.cache", "batchlint.fix"):
        assert module not in loaded, module


def _watched_lint(tmp_path, example: str, watch: str, seen: str) -> str:
    """What `seen` (an expression) says after a lint of `example` (beside its folder's files, in a process
    of its own) that ran with `watch` (statements) in force first: the last line the process printed."""
    folder = tmp_path / "configs"
    shutil.copytree(os.path.dirname(os.path.join(REPO, example)), folder)
    probe = (
        "import builtins, sys\n" + watch +
        f"sys.argv = ['batchlint', 'check', {str(folder / os.path.basename(example))!r}]\n"
        "from batchlint.entry import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print({seen})\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return done.stdout.splitlines()[-1] if done.stdout else done.stderr


@pytest.mark.parametrize("example", ["examples/swift/qwen2_5_sft_fixed.yaml", "examples/deepspeed/ds_zero2_fixed.json",
                                     "examples/deepspeed/train.sh"])
def test_a_lint_of_no_python_file_calls_compile(tmp_path, example):
    # The first `compile()` of a process builds the `ast` module's node classes (~10 M instructions of a
    # one-file lint's start-up in a clean environment); `typing` calls it for every annotation written as a
    # string that it evaluates (a NamedTuple's fields, a TypeVar's bound: lint/span.py). Only Python needs it.
    watch = (
        "calls = []\n"
        "real = builtins.compile\n"
        # the import system compiles a module's source where no bytecode is cached (PYTHONDONTWRITEBYTECODE)
        "builtins.compile = lambda *args, **kwargs: (str(args[1]).endswith('.py') or calls.append(args[1])) "
        "and 0 or real(*args, **kwargs)\n"
    )
    assert _watched_lint(tmp_path, example, watch, "calls") == "[]"


@pytest.mark.parametrize("example", ["examples/swift/qwen2_5_sft_fixed.yaml", "examples/deepspeed/ds_zero2_fixed.json",
                                     "examples/deepspeed/train.sh", "examples/xtuner/internlm2_7b_sp4_sft_fixed.py"])
def test_a_lint_imports_neither_typing_nor_threading(tmp_path, example):
    # `typing` is ~16 M instructions of a one-file lint's start-up where nothing imported it before (a clean
    # venv, as pre-commit makes one), `threading` ~3 M: batchlint imports `typing` for the type checker only
    # (lint/annotations.py). A TOML lint imports it anyway: tomllib does. Every import statement run calls
    # __import__, so one is seen here even where the site packages imported the module already.
    watch = (
        "asked = []\n"
        "real = builtins.__import__\n"
        "def watched(name, globals=None, *rest):\n"
        "    if name in ('typing', 'threading'):\n"
        "        asked.append(((globals or {}).get('__name__'), name))\n"
        "    return real(name, globals, *rest)\n"
        "builtins.__import__ = watched\n"
    )
    assert _watched_lint(tmp_path, example, watch, "sorted(set(asked))") == "[]"
