"""The yardstick for throughput: merely parse the files batchlint would read,
with the libraries its readers build on (ast, libyaml's composer, tomllib,
json), in one process, and nothing else.

    python benchmarks/parse_only.py TREE [TREE ...]
"""

from __future__ import annotations

import ast
import json
import os
import sys

import yaml

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse(path: str) -> None:
    with open(path, "rb") as handle:
        raw = handle.read()
    suffix = os.path.splitext(path)[1].lower()
    try:
        text = raw.decode("utf-8-sig")
        if suffix == ".py":
            ast.parse(text)
        elif suffix in (".yaml", ".yml"):
            yaml.compose(text, Loader=Loader)
        elif suffix == ".toml":
            tomllib.loads(text)
        elif suffix == ".json":
            json.loads(text)
    except Exception:  # a broken file costs what it costs; the yardstick only times
        pass


def main(trees: list) -> None:
    for tree in trees:
        for folder, dirs, files in os.walk(tree):
            dirs.sort()
            for name in sorted(files):
                parse(os.path.join(folder, name))


if __name__ == "__main__":
    main(sys.argv[1:])
