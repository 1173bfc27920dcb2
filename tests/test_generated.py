"""Generated tables stay generated: each embedded table is exactly what its
committed generator writes, so an edit by hand (or a stale table) fails here."""

import importlib.util
import os

from batchlint.frameworks import verl_keys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _tool(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(REPO, "tools", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_verl_keys_are_the_generator_output():
    generator = _tool("generate_verl_keys")
    with open(verl_keys.__file__, encoding="utf-8") as handle:
        assert handle.read() == generator.render(set(verl_keys.KEYS), "b178a3c")


def test_the_verl_generator_walks_nested_mappings_only():
    generator = _tool("generate_verl_keys")
    assert generator.keys({"a": {"b": 1, "c": [{"d": 1}]}, "e": None}) == {"a", "a.b", "a.c", "e"}
