"""The pre-commit hook, for real: `pre-commit try-repo` against this checkout
builds the hook's environment from .pre-commit-hooks.yaml and runs it on a
temporary git repository with a flawed config, then with the fixed one."""

import os
import shutil
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

pytestmark = pytest.mark.slow

FLAWED = """\
sequence_parallel_size = 4
batch_size = 1
accumulative_counts = 16  # tuned at sp=1
train_dataloader = dict(batch_size=batch_size)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""
FIXED = FLAWED.replace("# tuned at sp=1\n", "# tuned at sp=1\naccumulative_counts *= sequence_parallel_size\n")


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    pytest.importorskip("pre_commit")
    if not os.path.isdir(os.path.join(REPO, ".git")):
        pytest.skip("this checkout is not a git repository")
    folder = tmp_path_factory.mktemp("training-repo")
    _git(folder, "init", "-q")
    os.makedirs(folder / "configs")
    (folder / "README.md").write_text("not a config\n")
    return folder


def _try_repo(project, tmp_home):
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_home), PRE_COMMIT_COLOR="never")
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", REPO, "batchlint", "--all-files", "--verbose"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_hook_fails_on_flawed_config_and_passes_once_fixed(project, tmp_path_factory):
    home = tmp_path_factory.mktemp("pre-commit-home")
    config = project / "configs" / "sft_sp4.py"
    config.write_text(FLAWED)
    _git(project, "add", "-A")
    flawed = _try_repo(project, home)
    output = flawed.stdout + flawed.stderr
    assert flawed.returncode == 1, output
    assert "configs/sft_sp4.py:3:23: BL101 [warning]" in output, output

    config.write_text(FIXED)
    _git(project, "add", "-A")
    fixed = _try_repo(project, home)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "BL101" not in fixed.stdout
