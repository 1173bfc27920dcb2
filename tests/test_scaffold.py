"""tools/new_framework.py: the files it writes make a framework that works at once."""

import json
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(ROOT, "tools", "new_framework.py")


def _scaffold(root, *args):
    return subprocess.run([sys.executable, TOOL, *args, "--root", str(root)], capture_output=True, text=True)


def _checkout(tmp_path):
    """A copy of batchlint's package as a developer's checkout lays it out, importable as
    `batchlint` (with its rules inside, as the installed package has them)."""
    repo = tmp_path / "repo"
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(os.path.join(ROOT, "lint"), repo / "lint", ignore=ignore)
    shutil.copytree(os.path.join(ROOT, "rules"), repo / "lint" / "rules", ignore=ignore)
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "batchlint").symlink_to(repo / "lint", target_is_directory=True)
    return repo


def _lint(tmp_path, path):
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    done = subprocess.run([sys.executable, "-m", "batchlint", "check", "--format", "json", "-w", "8", str(path)],
                          capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("fmt", ["yaml", "toml"])
@pytest.mark.parametrize("accumulation", [["--accumulation", "grad_steps"], []])
def test_a_scaffolded_framework_is_linted_by_the_generic_rules(tmp_path, fmt, accumulation):
    """The new module is found although the generated index does not list it yet."""
    repo = _checkout(tmp_path)
    done = _scaffold(repo, "my-trainer", "--marker", "my_trainer", "--micro", "batch_per_gpu",
                     "--format", fmt, *accumulation)
    assert done.returncode == 0, done.stderr
    for path in ("lint/frameworks/my_trainer.py", "docs/parity/my_trainer.toml", f"examples/my-trainer/train.{fmt}",
                 f"examples/my-trainer/train_fixed.{fmt}", "tests/test_fw_my_trainer.py"):
        assert (repo / path).is_file(), path
    [finding] = _lint(tmp_path, repo / "examples" / "my-trainer" / f"train.{fmt}")
    assert finding["code"] == "BL102" and finding["framework"] == "my-trainer" and "32" in finding["message"]
    assert _lint(tmp_path, repo / "examples" / "my-trainer" / f"train_fixed.{fmt}") == []


def test_it_never_overwrites(tmp_path):
    args = ("my-trainer", "--marker", "my_trainer", "--micro", "batch_per_gpu")
    assert _scaffold(tmp_path, *args).returncode == 0
    adapter = tmp_path / "lint" / "frameworks" / "my_trainer.py"
    adapter.write_text("# edited\n")
    again = _scaffold(tmp_path, *args)
    assert again.returncode == 2 and "nothing written" in again.stderr and adapter.read_text() == "# edited\n"


def test_a_name_that_is_no_framework_name_is_refused(tmp_path):
    assert _scaffold(tmp_path, "My Trainer", "--marker", "k", "--micro", "m").returncode == 2
    assert not any(tmp_path.iterdir())
