"""The seeds the fuzzer mutates: real configs in the shapes batchlint reads.

In order: fuzz/seeds/ (one hand-written config per framework and format),
examples/, every config-like file under tests/, the configs written inline in
tests/*.py (string literals passed next to a file name, found with `ast`), the
examples every rule carries, and, when asked, the shared corpus of upstream
configs (../shared/corpus). The order is fixed, so a seed's index is stable
for a given tree.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUFFIXES = (".py", ".yaml", ".yml", ".toml", ".json", ".sh", ".bash")
SHARED_CORPUS = os.path.normpath(os.path.join(REPO, "..", "shared", "corpus"))
MAX_SEED_BYTES = 256 << 10


@dataclass(frozen=True)
class Seed:
    name: str  # the file name it is linted under (its suffix picks the format)
    data: bytes
    origin: str  # where it came from, for reports
    # A seed that names files next to it (a launch script under examples/) is
    # linted at its real path, so the configs its launch lines name are found.
    path: str = ""


def fmt_of(name: str) -> str:
    ext = os.path.splitext(name)[1].lower()
    return {".py": "python", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".json": "json",
            ".sh": "shell", ".bash": "shell"}.get(ext, "")


def _files(folder: str):
    for base, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in sorted(names):
            if name.endswith(SUFFIXES):
                yield os.path.join(base, name)


def _from_folder(folder: str, keep_path: bool = False, skip_py: bool = False) -> list:
    seeds = []
    if not os.path.isdir(folder):
        return seeds
    for path in _files(folder):
        if skip_py and path.endswith(".py"):
            continue
        if os.path.getsize(path) > MAX_SEED_BYTES:
            continue
        with open(path, "rb") as handle:
            data = handle.read()
        rel = os.path.relpath(path, REPO)
        seeds.append(Seed(os.path.basename(path), data, rel, path if keep_path and path.endswith((".sh", ".bash")) else ""))
    return seeds


def _inline_test_configs(folder: str) -> list:
    """(file name, text) pairs written inline in the tests: a string literal that is
    a config file name followed by a string literal, in a call or a tuple."""
    seeds, seen = [], set()
    if not os.path.isdir(folder):
        return seeds
    for name in sorted(os.listdir(folder)):
        if not (name.startswith(("test_", "conftest")) and name.endswith(".py")):
            continue
        path = os.path.join(folder, name)
        with open(path, encoding="utf-8") as handle:
            try:
                tree = ast.parse(handle.read())
            except SyntaxError:
                continue
        constants = {}  # module-level NAME = "text"
        for stmt in tree.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                value = _string(stmt.value, constants)
                if value is not None:
                    constants[stmt.targets[0].id] = value
        for node in ast.walk(tree):
            items = node.args if isinstance(node, ast.Call) else node.elts if isinstance(node, (ast.Tuple, ast.List)) else None
            if not items:
                continue
            for first, second in zip(items, items[1:]):
                filename = _string(first, constants)
                text = _string(second, constants)
                if filename is None or text is None or "\n" in filename or not filename.endswith(SUFFIXES):
                    continue
                key = (os.path.basename(filename), text)
                if key in seen or not text.strip():
                    continue
                seen.add(key)
                seeds.append(Seed(os.path.basename(filename), text.encode("utf-8", "surrogatepass"),
                                  f"tests/{name}:{getattr(first, 'lineno', 0)}"))
    return seeds


def _string(node, constants: dict):
    """A string literal, a module constant, or `A + B` / `A.replace(...)` of those."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _string(node.left, constants), _string(node.right, constants)
        return left + right if left is not None and right is not None else None
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "replace"
            and len(node.args) == 2 and not node.keywords):
        base = _string(node.func.value, constants)
        old, new = (_string(a, constants) for a in node.args)
        if None not in (base, old, new):
            return base.replace(old, new)
    return None


def _rule_examples() -> list:
    from batchlint.rules import RULES

    seeds = []
    for rule in RULES:
        for index, example in enumerate(rule.examples):
            seeds.append(Seed(example.filename, example.text.encode("utf-8", "surrogatepass"), f"{rule.code} example {index}"))
    return seeds


def load(shared: bool = False) -> list:
    """Every seed, deduplicated by (name, bytes), in a fixed order."""
    found = (
        _from_folder(os.path.join(REPO, "fuzz", "seeds"), keep_path=True)
        + _from_folder(os.path.join(REPO, "examples"), keep_path=True)
        + _from_folder(os.path.join(REPO, "tests"), skip_py=True)
        + _inline_test_configs(os.path.join(REPO, "tests"))
        + _rule_examples()
    )
    if shared:
        found += _from_folder(SHARED_CORPUS)
    seeds, seen = [], set()
    for seed in found:
        key = (seed.name, seed.data)
        if key not in seen and fmt_of(seed.name):
            seen.add(key)
            seeds.append(seed)
    return seeds
