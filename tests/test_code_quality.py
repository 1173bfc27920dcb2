"""batchlint's own code held to its standard: ruff's lint and mypy's types, as [tool.ruff] and
[tool.mypy] in pyproject.toml configure them, clean over the package (lint/ and rules/); ruff's
over the code that tests, measures and documents it too.

Both run as the `test` extra installs them (pinned in action/constraints.txt). On a failure the
assertion prints what they found: fix it, or (for a finding that is wrong about this code) ignore
it at the line with its code and a reason."""

from __future__ import annotations

import os
import subprocess
import sys
import typing
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "pyproject.toml"
INSTALL = "install them with: pip install -e '.[test]' -c action/constraints.txt"
# The rest of the tree ruff holds to the package's settings; fuzz/seeds and tests/reports hold inputs (users'
# configs as they wrote them), not code.
FOLDERS = ("tests", "tools", "fuzz", "benchmarks", "docs", "action")
INPUTS = (os.path.join("fuzz", "seeds"), os.path.join("tests", "reports"))


def _run(tool: str, *args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    try:
        __import__(tool)
    except ImportError:
        pytest.fail(f"{tool} is not installed: {INSTALL}")
    return subprocess.run([sys.executable, "-m", tool, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


def _ruff(*paths: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return _run("ruff", "check", "--no-cache", "--config", str(CONFIG), "--output-format", "concise", *paths, cwd=cwd)


@pytest.fixture(scope="module")
def package(tmp_path_factory) -> Path:
    """The package as it installs (lint/ as `batchlint`, rules/ as `batchlint.rules`), laid out of
    links for mypy, which cannot follow setuptools' editable mapping: a folder for MYPYPATH."""
    root = tmp_path_factory.mktemp("typed")
    tree = root / "batchlint"
    tree.mkdir()
    for entry in os.listdir(ROOT / "lint"):
        if entry != "__pycache__":
            (tree / entry).symlink_to(ROOT / "lint" / entry)
    (tree / "rules").symlink_to(ROOT / "rules")
    return root


def _mypy(root: Path, *targets: str) -> tuple[int, str]:
    env = dict(os.environ, MYPYPATH=str(root))
    result = _run("mypy", "--config-file", str(CONFIG), "--cache-dir", str(root / ".mypy_cache"),
                  "--no-error-summary", *targets, cwd=root, env=env)
    # Paths as the repository names them (mypy names them from its working directory, `root`).
    rules, lint = os.path.join("batchlint", "rules", ""), os.path.join("batchlint", "")
    shown = [f"rules{os.sep}{line[len(rules):]}" if line.startswith(rules)
             else f"lint{os.sep}{line[len(lint):]}" if line.startswith(lint) else line
             for line in (result.stdout + result.stderr).splitlines()]
    return result.returncode, "\n".join(shown)


def test_ruff_finds_nothing_in_the_package():
    result = _ruff("lint", "rules")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_finds_nothing_in_the_rest_of_the_tree():
    result = _ruff(*FOLDERS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_checks_every_python_file_of_the_rest_of_the_tree():
    """[tool.ruff] include reaches each of them: a folder it leaves out passes, "No Python files found"."""
    listed = _ruff("--show-files", *FOLDERS).stdout.splitlines()
    checked = {os.path.relpath(line.strip(), ROOT) for line in listed if line.strip().endswith(".py")}
    written = {os.path.relpath(os.path.join(folder, name), ROOT)
               for top in FOLDERS for folder, _, names in os.walk(ROOT / top)
               for name in names if name.endswith(".py")}
    assert checked == {path for path in written if not path.startswith(tuple(p + os.sep for p in INPUTS))}
    assert len(checked) > 80


def test_ruff_reads_the_projects_settings(tmp_path):
    """The settings the package is held to: 140 columns, `Optional[X]` accepted, an unused import not."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from typing import Optional\n"
        "import os\n\n"
        f"WIDE = {'1' * 120!r}\n"  # 127 columns: wraps at 120, flagged past 140
        f"WIDER = {'1' * 140!r}\n\n"
        "def f(x: Optional[int]) -> Optional[int]:\n"
        "    return x\n"
    )
    result = _ruff(str(probe), cwd=tmp_path)
    codes = sorted(line.split(": ")[1].split()[0] for line in result.stdout.splitlines() if "probe.py:" in line)
    assert codes == ["E501", "F401", "I001"], result.stdout


def test_mypy_finds_nothing_in_the_package(package):
    code, output = _mypy(package, "-p", "batchlint")
    assert code == 0, output


def test_mypy_holds_the_public_surface_to_typed_signatures(tmp_path):
    """The per-module settings reach modules by the names the package installs them under: an
    untyped function in the plan module is refused, the same function in an engine module is not."""
    untyped = "def fact(plan):\n    return [plan]\n"
    (tmp_path / "batchlint").mkdir()
    (tmp_path / "batchlint" / "__init__.py").write_text("")
    (tmp_path / "batchlint" / "plan.py").write_text(untyped)
    (tmp_path / "batchlint" / "helper.py").write_text(untyped)
    code, output = _mypy(tmp_path, "-p", "batchlint")
    assert code == 1
    assert [line.split(": error: ")[0] for line in output.splitlines()] == [f"lint{os.sep}plan.py:1"], output


def test_every_rule_check_is_typed():
    """A rule's `check` is the surface the engine calls: `(plan: TrainingPlan) -> Iterator[Finding]`, with its
    subject, typed, after the plan where it has one."""
    from batchlint.plan import TrainingPlan
    from batchlint.rule import Finding
    from batchlint.rules import RULES

    def typed(rule) -> bool:
        hints = typing.get_type_hints(rule.check)
        subject = [name for name in hints if name not in ("plan", "return")]
        expected = {"plan": TrainingPlan, "return": Iterator[Finding]}
        if rule.subject is not None:
            expected[subject[0] if subject else "subject"] = rule.subject
        return hints == expected and list(hints)[:1] == ["plan"]

    untyped = [rule.code for rule in RULES if not typed(rule)]
    assert len(RULES) > 70 and untyped == []


def test_typing_is_imported_for_the_type_checker_only():
    """`typing` costs a one-file lint ~16 M instructions to import where nothing did before (a clean venv, as
    pre-commit makes one): the package imports it under `if TYPE_CHECKING:` (`TYPE_CHECKING = False` in the
    module, a name mypy knows), and calls `overload` and `cast` from lint/annotations.py. lint/cache.py
    resolves annotations, which is typing's work, and runs only with --cache-dir."""
    import ast

    found = []
    for folder in ("lint", "rules"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path == ROOT / "lint" / "cache.py":
                continue
            for node in ast.parse(path.read_text(encoding="utf-8")).body:  # module level, outside any `if`
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                    [node.module] if isinstance(node, ast.ImportFrom) else []
                if "typing" in names:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []
