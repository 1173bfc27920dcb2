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
    """The new module is found at once: the scaffold adds its row to lint/frameworks/registry.py."""
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
    repo = _checkout(tmp_path)
    assert _scaffold(repo, *args).returncode == 0
    adapter = repo / "lint" / "frameworks" / "my_trainer.py"
    adapter.write_text("# edited\n")
    again = _scaffold(repo, *args)
    assert again.returncode == 2 and "nothing written" in again.stderr and adapter.read_text() == "# edited\n"


def test_a_name_that_is_no_framework_name_is_refused(tmp_path):
    assert _scaffold(tmp_path, "My Trainer", "--marker", "k", "--micro", "m").returncode == 2
    assert not any(tmp_path.iterdir())


# -- tools/new_rule.py -------------------------------------------------------------------------------

RULE_TOOL = os.path.join(ROOT, "tools", "new_rule.py")


def _new_rule(root, *args):
    return subprocess.run([sys.executable, RULE_TOOL, *args, "--root", str(root)], capture_output=True, text=True)


def _rule_checkout(tmp_path):
    """A checkout as a developer has it (lint/ and rules/ side by side), importable as `batchlint`
    with rules/ as its `rules` (a link, as the editable install maps it)."""
    repo = tmp_path / "repo"
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(os.path.join(ROOT, "lint"), repo / "lint", ignore=ignore)
    shutil.copytree(os.path.join(ROOT, "rules"), repo / "rules", ignore=ignore)
    (repo / "lint" / "rules").symlink_to(repo / "rules", target_is_directory=True)
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "batchlint").symlink_to(repo / "lint", target_is_directory=True)
    return repo


def _run_in(tmp_path, code):
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)


@pytest.mark.parametrize("group, subject", [("verl", ["--subject", "verl:VerlSettings"]), ("generic", []),
                                            ("my_group", [])])
def test_a_scaffolded_rule_is_registered_named_after_itself_and_loads(tmp_path, group, subject):
    repo = _rule_checkout(tmp_path)
    subject = subject if "VerlSettings" in (repo / "lint" / "frameworks" / "verl.py").read_text() else []
    done = _new_rule(repo, group, "my-new-check", "--code", "BL999", "--severity", "warning",
                     "--summary", "a thing that is wrong", *subject, "--needs", "parallel.pp")
    assert done.returncode == 0, done.stderr
    module = repo / "rules" / group / "my_new_check.py"
    assert module.is_file()
    checked = _run_in(tmp_path, (
        "from batchlint import rules\n"
        "from batchlint.rules.registry import REGISTRY\n"
        f"assert REGISTRY['BL999'][::2] == ('{group}.my_new_check', ('parallel.pp',)), REGISTRY['BL999']\n"
        "rule = rules.find('BL999')\n"
        "assert rule.name == 'my-new-check' and rule.needs == ('parallel.pp',) and rule.severity == 'warning'\n"
        "assert rule.check.__module__.endswith('my_new_check')\n"
        "assert list(rule.check(None, None) if rule.subject else rule.check(None)) == []\n"
        "assert REGISTRY['BL999'][1] == rule.applies, (REGISTRY['BL999'], rule.applies)\n"
        "print('ok')\n"))
    assert checked.stdout.strip() == "ok", checked.stderr
    again = _new_rule(repo, group, "my-new-check", "--code", "BL999", "--severity", "warning", "--summary", "x")
    assert again.returncode == 2 and "nothing written" in again.stderr


def test_the_registry_rows_stay_in_code_order(tmp_path):
    repo = _rule_checkout(tmp_path)
    assert _new_rule(repo, "generic", "an-early-check", "--code", "BL100", "--severity", "info",
                     "--summary", "x").returncode == 0
    text = (repo / "rules" / "registry.py").read_text()
    codes = [line.split('"')[1] for line in text.splitlines() if line.startswith('    "BL')]
    assert codes == sorted(codes) and "BL100" in codes
