"""Framework specs: one registered `Framework` per framework module, and a launch
reader that interprets launcher specs without naming any framework."""

import ast
import importlib
import os
import pkgutil
import re
import subprocess
import sys

import pytest

import batchlint.frameworks as frameworks
from batchlint.frameworks import FRAMEWORKS, LAUNCHERS, verl
from batchlint.frameworks.spec import FLAGS, Framework, Launcher
from batchlint.launching import lines as launch
from batchlint.sources.shell import read_shell

LINT = os.path.dirname(launch.__file__)
# Read by their parent framework's adapter (swift's Megatron schema, LLaMA-Factory v1), not registered.
SUB_SCHEMAS = {"swift_megatron", "llamafactory_v1"}
# The adapter order before specs (the ADAPTERS tuple): specific schemas first, TrainingArguments last.
BEFORE = ["xtuner-v1", "xtuner", "torchtitan", "deepspeed", "axolotl", "torchtune", "verl", "nemo", "megatron",
          "llamafactory", "swift", "transformers"]
# Modules outside lint/frameworks/ that still name frameworks, with why; keep this empty.
NAMING_ALLOWED: dict = {}


def _modules():
    for info in pkgutil.iter_modules(frameworks.__path__):
        yield info.name, importlib.import_module(f"{frameworks.__name__}.{info.name}")


def test_every_framework_module_declares_one_framework():
    for name, module in _modules():
        if hasattr(module, "NAME") and callable(getattr(module, "plan", None)) and name not in SUB_SCHEMAS:
            assert isinstance(getattr(module, "FRAMEWORK", None), Framework), name
            assert module.FRAMEWORK.name == module.NAME and module.NAME in {f.name for f in FRAMEWORKS}, name
    assert all(callable(f.plan) for f in FRAMEWORKS)


def test_names_are_unique():
    names = [f.name for f in FRAMEWORKS]
    assert len(names) == len(set(names))


def test_the_order_is_the_adapter_order_it_replaces():
    assert [f.name for f in FRAMEWORKS if f.name in BEFORE] == BEFORE
    for fmt in ("yaml", "json"):
        assert frameworks.for_format(fmt)[-1].name == "transformers"


def test_every_launcher_can_be_recognised_and_prefilters_its_scripts():
    for launcher, owner in LAUNCHERS:
        assert launcher.commands or launcher.modules or launcher.scripts, launcher.name
        assert launcher.markers and set(launcher.markers) <= set(launch.markers()), launcher.name
        assert owner is None or not launcher.program, "a generic launcher belongs to no framework"


def _string_literals(path):
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def test_no_module_outside_the_framework_package_names_a_framework():
    names = sorted({f.name for f in FRAMEWORKS})
    pattern = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, names)) + r")(?![\w-])")
    found = []
    for folder, dirs, files in os.walk(LINT):
        dirs[:] = [d for d in dirs if d not in ("frameworks", "__pycache__")]
        for file in files:
            path = os.path.join(folder, file)
            if not file.endswith(".py") or os.path.relpath(path, LINT) in NAMING_ALLOWED:
                continue
            found += [(os.path.relpath(path, LINT), line, match.group(0))
                      for line, text in _string_literals(path) for match in [pattern.search(text)] if match]
    assert found == []


# -- the interpreter reads any declared entry point --------------------------------------------

TOOL = Launcher("mytool", modules=("mytool.cli.train_*",), markers=(b"mytool.cli",), flags=FLAGS,
                config_files=False, inline=True)


@pytest.fixture
def with_tool(monkeypatch):
    """A framework module "mytool" with TOOL as its launcher, as the index would list it."""
    from batchlint import frameworks

    globs, at = frameworks.launcher_globs, frameworks.launcher_at
    monkeypatch.setattr(frameworks, "launcher_globs",
                        lambda: globs() + (("mytool", 0, TOOL.commands, TOOL.modules, TOOL.scripts, TOOL.markers,
                                            TOOL.requires, TOOL.under),))
    monkeypatch.setattr(frameworks, "launcher_at", lambda module, index: (TOOL, "mytool") if module == "mytool"
                        else at(module, index))


def _line(text):
    (found,) = launch.launches(read_shell("train.sh", text))
    return found


@pytest.mark.parametrize("text, shown, world", [
    ("deepspeed --num_nodes 2 --num_gpus 8 --module mytool.cli.train_sft --micro 2\n", "deepspeed", 16),
    ("deepspeed --num_gpus=4 --module mytool.cli.train_ppo --micro 2\n", "deepspeed", 4),
    ("torchrun --nnodes 2 --nproc_per_node 4 -m mytool.cli.train_sft --micro 2\n", "torchrun", 8),
    ("python3 -m mytool.cli.train_sft --micro 2\n", "mytool", None),
])
def test_an_entry_point_under_a_generic_launcher(with_tool, text, shown, world):
    line = _line(text)
    assert (line.launcher, line.framework, line.configs) == (shown, "mytool", [])
    assert (line.world_size.value if line.world_size else None) == world
    assert [(keys, value.value) for keys, value, _ in line.overrides] == [(("micro",), "2")]


def test_a_module_no_framework_owns_is_a_trainer_script_whose_flags_never_go_into_the_json(with_tool):
    """Its flags may be TrainingArguments (the fallback entry point); `--deepspeed ds.json` is linked:
    linted under the launch with its W, as it is written."""
    line = _line("deepspeed --num_gpus 8 --module other.train --deepspeed ds.json --lr 1\n")
    assert (line.framework, line.configs, [w.value for w in line.linked], line.world_size.value) == (
        "transformers", [], ["ds.json"], 8)
    assert [keys for keys, _, _ in line.overrides] == [("deepspeed",), ("lr",)]


def test_verl_world_size_is_one_policy():
    line = _line("python3 -m verl.trainer.main_ppo trainer.nnodes=2\n")
    assert line.world_size.value == verl.GPUS_PER_NODE.default * 2
    assert f"assumed: {verl.GPUS_PER_NODE.key} defaults to {verl.GPUS_PER_NODE.default}" in line.world_size.detail
    assert verl.DEFAULTS[verl.NODES.key] == verl.NODES.default


@pytest.mark.parametrize("line, imported", [
    ("deepspeed --num_gpus 8 train.py --deepspeed ds.json\n", set()),
    ("torchrun --nproc_per_node 8 train.py --job.config_file llama.toml\n", {"torchtitan"}),
    ("composer train.py cfg.yaml\n", {"llmfoundry"}),
])
def test_a_launchers_framework_is_imported_only_when_the_command_may_be_its(tmp_path, line, imported):
    # `train.py` is a script glob of TorchTitan's (with --job.config_file) and LLM Foundry's (under composer):
    # the registry's requirements decide before either is imported.
    (tmp_path / "train.sh").write_text("#!/bin/bash\n" + line)
    code = ("import sys\nfrom batchlint.entry import main\nsys.argv = ['batchlint', 'train.sh']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m.rsplit('.', 1)[-1] for m in sys.modules if m.startswith('batchlint.frameworks.')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    loaded = set(ast.literal_eval(done.stdout.strip().splitlines()[-1]))
    candidates = {"torchtitan", "llmfoundry", "megatron", "llamafactory"}
    assert loaded & candidates == imported, done.stdout + done.stderr
