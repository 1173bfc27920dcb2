"""Shared test helpers: lint a file in-process (`lint_text`, the `lint`
fixture), run the CLI in-process (`run`) or as `python -m batchlint`
(`run_module`), and the small configs the CLI-level tests lint, each written
out in full with the line a rule reports named next to it."""

import os
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner

from batchlint.cli import main
from batchlint.config import Settings
from batchlint.engine import Options, lint_file
from batchlint.rules import RULES

SHARED = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..", "shared")
CORPUS = os.path.normpath(os.path.join(SHARED, "corpus"))


def load_tool(name):
    """A script in tools/, loaded as `python tools/NAME.py` runs it (tools/ on the path)."""
    import importlib.util

    tools = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools")
    if tools not in sys.path:
        sys.path.insert(0, tools)
    spec = importlib.util.spec_from_file_location(name, os.path.join(tools, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def lint_text(folder, filename, text, world_size=None, global_batch=None, settings=None, since=None):
    """Write `text` to folder/filename and lint it in-process; returns the FileResult. `since`: a
    git revision of `folder` the lint reads the change from (`check --since`)."""
    path = write(folder, filename, text)
    settings = settings or Settings(root=str(folder))
    options = Options(world_size=world_size, global_batch=global_batch)
    if since is not None:
        from batchlint.change import Since
        from batchlint.revision import at

        options = Options(world_size=world_size, global_batch=global_batch, since=Since(at(since, str(folder))))
    return lint_file(path, settings, options, RULES)


XTUNER_TEMPLATE = """\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = {sp}
batch_size = {micro}
accumulative_counts = {acc}
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""


def xtuner_sp(sp=1, acc=16, micro=1):
    """An XTuner config under sequence parallelism as real ones write it (sp on line 4, the accumulation on 6)."""
    return XTUNER_TEMPLATE.format(sp=sp, acc=acc, micro=micro)


def releases_asked(monkeypatch, owner):
    """The distributions (their first name) whose release `owner.release` is asked for from here on, in
    order: a list that grows as the test goes on. `owner`: the module whose `release` the code under test
    calls (lint/premise.py binds its own name; lint/versions.py's callers look it up there)."""
    asked = []
    real_release = owner.release

    def release(distribution, *args, **kwargs):
        asked.append(distribution.names[0])
        return real_release(distribution, *args, **kwargs)

    monkeypatch.setattr(owner, "release", release)
    return asked


def git(folder, *args):
    """Run git in `folder` as a user with a name would; returns its output."""
    import subprocess

    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(["git", *args], cwd=str(folder), env=env, capture_output=True, text=True, check=True)
    return done.stdout


def committed(folder, files):
    """A git repository in `folder` whose one commit holds `files` ((name, text), ...)."""
    git(folder, "init", "-q", "-b", "main")
    for name, text in files:
        write(folder, name, text)
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", "before")


@pytest.fixture(autouse=True)
def _files_read_anew():
    """The run layer reads some files once a run (lint/per_run.py: the scripts in view, the code a
    program runs); a test that lints files straight away writes them between lints: each test starts
    from what is on disk."""
    from batchlint import per_run

    per_run.forget()
    yield
    per_run.forget()


JUDGES = ("deepspeed", "transformers", "trl", "accelerate", "torchtitan", "torch")


@pytest.fixture(autouse=True)
def _the_judges_release_is_in_force(request):
    """A differential test asks batchlint what the installed framework refuses: its project pins that
    release (lint/premise.py weighs the release in force), as a requirements.txt a real project keeps."""
    if "differential" not in request.node.nodeid.split("::")[0]:
        yield
        return
    from importlib import metadata

    pins = []
    for name in JUDGES:
        try:
            pins.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            continue
    top = request.getfixturevalue("tmp_path")
    write(top, "requirements.txt", "\n".join(pins) + "\n")
    os.makedirs(os.path.join(str(top), ".git"), exist_ok=True)  # the project's top, as a checkout's
    yield


@pytest.fixture
def lint(tmp_path):
    def run(filename, text, **kwargs):
        return lint_text(tmp_path, filename, text, **kwargs)

    return run



# BL101 (warning) on line 6: an accumulation derived from sequence_parallel_size that shrinks the
# global batch (16 x W/4 here, 64 x W at sp=1).
XTUNER_SP = """\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 4
batch_size = 1
accumulative_counts = 64 // sequence_parallel_size
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""
XTUNER_SP_LINE = 6

# The same config with accumulation scaled: clean.
XTUNER_CLEAN = XTUNER_SP.replace(
    "accumulative_counts = 64 // sequence_parallel_size\n", "accumulative_counts = 16\naccumulative_counts *= sequence_parallel_size\n"
)

# HF TrainingArguments (ms-swift): global batch = 2 x 8 x W. Clean without a
# target; BL102 (warning) on line 2 when a target global batch differs.
HF_YAML = """\
per_device_train_batch_size: 2
gradient_accumulation_steps: 8
model_type: qwen2
"""
HF_LINE = 2

# DeepSpeed: 4 x 4 x 8 = 128, not 64. BL102 (error) on line 2 with W = 8.
DS_MISMATCH = """\
{
  "train_batch_size": 64,
  "train_micro_batch_size_per_gpu": 4,
  "gradient_accumulation_steps": 4
}
"""
DS_LINE = 2

# TorchTitan: 8 does not divide 100 for any W. BL103 (error) on line 6.
TITAN_INDIVISIBLE = """\
[job]
description = "llama3 8b"

[training]
local_batch_size = 8
global_batch_size = 100
seq_len = 8192
"""
TITAN_LINE = 6

# TRL: packing with length grouping. BL301 (warning) on line 4.
TRL_PACKED_GROUPED = """\
model_name_or_path: Qwen/Qwen2.5-0.5B
packing: true
per_device_train_batch_size: 2
group_by_length: true
"""
TRL_LINE = 4

FINDING = re.compile(
    r"^(?P<path>.+?):(?P<line>\d+):(?P<column>\d+): (?P<code>BL\d{3})(?: \[\*\])? \[(?P<severity>error|warning|info)\] (?P<message>.+)$"
)


def write(folder, name, text):
    """Write text (str or bytes) to folder/name, creating folders; returns the path."""
    path = os.path.join(str(folder), name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb" if isinstance(text, bytes) else "w", encoding=None if isinstance(text, bytes) else "utf-8") as handle:
        handle.write(text)
    return path


def cli_runner() -> CliRunner:
    """A CliRunner that keeps stdout and stderr apart (click < 8.2, for Python 3.9, needs asking)."""
    try:
        return CliRunner(mix_stderr=False)
    except TypeError:  # click >= 8.2 always keeps them apart
        return CliRunner()


def run(*args, env=None):
    """Invoke the CLI in-process. A crash (any exception but SystemExit) is
    re-raised so the test fails on it with its traceback."""
    result = cli_runner().invoke(main, [str(a) for a in args], env=env)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert "Traceback" not in result.stderr
    return result


def run_module(*args, cwd, env=None, timeout=60):
    """`python -m batchlint ARGS` in cwd, as a user would run it."""
    full_env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_STEP_SUMMARY", "GITHUB_WORKSPACE", "NO_COLOR")}
    full_env.update(env or {})
    proc = subprocess.run(
        [sys.executable, "-m", "batchlint", *[str(a) for a in args]],
        cwd=str(cwd), env=full_env, capture_output=True, text=True, timeout=timeout,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def findings(stdout):
    """The finding lines of text output, parsed; other lines are left out."""
    return [m.groupdict() for m in map(FINDING.match, stdout.splitlines()) if m]


def codes(stdout):
    return sorted(f["code"] for f in findings(stdout))


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A fresh folder as the working directory, free of CI variables that would
    change the output (or write into a real Actions step summary)."""
    for name in ("GITHUB_STEP_SUMMARY", "GITHUB_WORKSPACE", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A fresh folder as the working directory, where launch scripts and the configs they name are written."""
    monkeypatch.chdir(tmp_path)
    return tmp_path
