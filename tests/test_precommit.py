"""The pre-commit hook, for real: `pre-commit try-repo` against this checkout
builds the hook's environment from .pre-commit-hooks.yaml and runs it on a
temporary git repository with a flawed config, then with the fixed one."""

import json
import os
import re
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


# -- the README's snippet, as written, against a tag of a clone ---------------------------------

SOURCE_FILES = ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml", "lint", "rules")


def readme_snippet() -> str:
    """The README's .pre-commit-config.yaml block."""
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as handle:
        text = handle.read()
    [block] = [b for b in re.findall(r"```yaml\n(.*?)```", text, re.S) if "id: batchlint" in b and "rev:" in b]
    return block


@pytest.fixture(scope="module")
def tagged_clone(tmp_path_factory):
    """This checkout's files as a git repository of their own, tagged v0.1.0-test: what a user's
    fork or mirror is to pre-commit (it needs no push: pre-commit clones a local path too)."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    pytest.importorskip("pre_commit")
    folder = tmp_path_factory.mktemp("batchlint-clone")
    for name in SOURCE_FILES:
        source = os.path.join(REPO, name)
        if os.path.isdir(source):
            shutil.copytree(source, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, folder / name)
    _git(folder, "init", "-q")
    _git(folder, "add", "-A")
    _git(folder, "-c", "user.name=test", "-c", "user.email=test@example.invalid", "commit", "-qm", "batchlint")
    _git(folder, "tag", "v0.1.0-test")
    return folder


def test_the_readme_snippet_installs_the_hook_at_a_tag_and_runs_it(tagged_clone, tmp_path):
    """The snippet with only its two placeholders filled in (the clone's path, its tag). Offline:
    pip gets no index; batchlint's dependencies come from this suite's environment and setuptools
    from virtualenv's embedded wheels (tests/test_action.py)."""
    from test_action import offline_site, wheelhouse

    snippet = readme_snippet()
    assert "https://github.com/<you>/batchlint" in snippet and "<tag-or-commit>" in snippet
    config = snippet.replace("https://github.com/<you>/batchlint", str(tagged_clone)).replace("<tag-or-commit>", "v0.1.0-test")
    project = tmp_path / "training-repo"
    (project / "configs").mkdir(parents=True)
    _git(project, "init", "-q")
    (project / ".pre-commit-config.yaml").write_text(config)
    (project / "configs" / "sft_sp4.py").write_text(FLAWED)
    _git(project, "add", "-A")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(PRE_COMMIT_HOME=str(tmp_path / "home"), PRE_COMMIT_COLOR="never", PIP_NO_INDEX="1",
               PIP_CONFIG_FILE=os.devnull, PIP_FIND_LINKS=wheelhouse(), PYTHONPATH=offline_site(tmp_path / "site"))

    def run():
        return subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=project, env=env,
                              capture_output=True, text=True, timeout=600)

    flawed = run()
    output = flawed.stdout + flawed.stderr
    assert flawed.returncode == 1, output
    assert "configs/sft_sp4.py:3:23: BL101 [warning]" in output, output

    (project / "configs" / "sft_sp4.py").write_text(FIXED)
    _git(project, "add", "-A")
    fixed = run()
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr

    # A literal accumulation written for sp 4 (BL105, an info) beside an unrelated edit: shown, and the commit passes.
    (project / "configs" / "sft_sp4.py").write_text(FLAWED.replace("  # tuned at sp=1", "") + "lr = 2e-5\n")
    _git(project, "add", "-A")
    info = run()
    assert info.returncode == 0, info.stdout + info.stderr


def test_the_readme_git_url_install_at_a_tag(tagged_clone, tmp_path):
    """`pip install "git+<url>@<tag-or-commit>"` as the README writes it, the URL a
    file:// one of the tagged clone (offline: no index, setuptools from virtualenv's wheels)."""
    from test_action import wheelhouse

    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as handle:
        [requirement] = re.findall(r'pip install "(git\+https://github\.com/<you>/batchlint@<tag-or-commit>)"',
                                   handle.read())
    requirement = requirement.replace("https://github.com/<you>/batchlint", f"file://{tagged_clone}")
    requirement = requirement.replace("<tag-or-commit>", "v0.1.0-test")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON"))}
    env.update(PIP_NO_INDEX="1", PIP_CONFIG_FILE=os.devnull, PIP_FIND_LINKS=wheelhouse())
    target = tmp_path / "site"
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target),
                                requirement], env=env, capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, installed.stderr
    assert (target / "batchlint" / "rules" / "__init__.py").is_file()
    [record] = (target).glob("batchlint-*.dist-info/direct_url.json")
    assert json.loads(record.read_text())["vcs_info"]["requested_revision"] == "v0.1.0-test"


# -- the change as evidence: `git commit` through the installed hook ----------------------------

LAUNCH = "#!/bin/bash\nNPROC_PER_NODE={n} xtuner train configs/sft.py --deepspeed deepspeed_zero2\n"


def test_a_commit_that_moves_the_layout_alone_is_blocked_with_the_batch_before_and_after(tagged_clone, tmp_path):
    """As a user installs it (the README's snippet, `pre-commit install`), `git commit` runs the hook on
    the staged files against HEAD: sp raised alone is blocked, sp raised with the accumulation scaled
    passes, the GPUs changed alone are blocked, and an unrelated edit beside an info passes."""
    from conftest import xtuner_sp
    from test_action import offline_site, wheelhouse

    config = readme_snippet().replace("https://github.com/<you>/batchlint", str(tagged_clone)) \
        .replace("<tag-or-commit>", "v0.1.0-test")
    project = tmp_path / "training-repo"
    (project / "configs").mkdir(parents=True)
    (project / "scripts").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON", "VIRTUAL_ENV", "GIT_"))}
    env.update(PRE_COMMIT_HOME=str(tmp_path / "home"), PRE_COMMIT_COLOR="never", PIP_NO_INDEX="1",
               PIP_CONFIG_FILE=os.devnull, PIP_FIND_LINKS=wheelhouse(), PYTHONPATH=offline_site(tmp_path / "site"),
               GIT_AUTHOR_NAME="u", GIT_AUTHOR_EMAIL="u@example.invalid", GIT_COMMITTER_NAME="u",
               GIT_COMMITTER_EMAIL="u@example.invalid", GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")

    def git(*args, check=True):
        return subprocess.run(["git", *args], cwd=project, env=env, capture_output=True, text=True, check=check,
                              timeout=600)

    def stage(sp, acc, n, extra=""):
        (project / "configs" / "sft.py").write_text(xtuner_sp(sp, acc) + extra)
        (project / "scripts" / "train.sh").write_text(LAUNCH.format(n=n))
        git("add", "-A")

    def commit(message):
        done = git("commit", "-m", message, check=False)
        return done.returncode, done.stdout + done.stderr

    git("init", "-q", "-b", "main")
    (project / ".pre-commit-config.yaml").write_text(config)
    stage(1, 16, 8)
    git("commit", "-q", "--no-verify", "-m", "sp 1 on 8 GPUs: global batch 128")
    subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=project, env=env, check=True,
                   capture_output=True, timeout=600)

    stage(4, 16, 8)
    code, output = commit("sp 4, accumulation left at 16")
    assert code != 0, output
    assert "configs/sft.py:4:26: BL106 [warning]" in output, output
    assert "moves the global batch from 128 to 32 sequences" in output and "per optimizer step" in output, output
    git("reset", "-q", "--hard")

    stage(1, 16, 4)
    code, output = commit("half the GPUs")
    assert code != 0, output
    assert "scripts/train.sh:2:16: BL106 [warning]" in output and "from 128 to 64" in output, output
    git("reset", "-q", "--hard")

    # The same change setting the batch on purpose: the micro batch moved with it, or the target is stated.
    stage(4, 16, 8)
    (project / "configs" / "sft.py").write_text(xtuner_sp(4, 16, micro=4))
    git("add", "-A")
    code, output = commit("sp 4 with the micro batch raised")
    assert code == 0 and "BL106" not in output, output
    git("reset", "-q", "--hard", "HEAD~1")
    stage(4, 16, 8, extra="# batchlint: global-batch=32\n")
    code, output = commit("sp 4, the smaller batch stated")
    assert code == 0 and "BL106" not in output, output
    git("reset", "-q", "--hard", "HEAD~1")

    stage(4, 64, 8)  # scaled by hand: a literal under sp 4 is BL105, an info, which does not fail the hook
    code, output = commit("sp 4, accumulation scaled by hand")
    assert code == 0, output
    assert "BL106" not in output, output

    stage(4, 64, 8, extra="lr = 2e-5\n")
    code, output = commit("an unrelated edit beside the info")
    assert code == 0, output
    assert "BL106" not in output, output
