"""Patterns compiled on first use (lint/lazy_pattern.py): the same matches as `re.compile`'s, and
PyYAML's import-time patterns deferred without changing what YAML reads."""

import re
import threading

import yaml

from batchlint.lazy_pattern import LazyPattern, compiling_lazily


def test_a_lazy_pattern_matches_as_the_compiled_one():
    lazy, compiled = LazyPattern(r"(\w+)=(\d+)", re.A), re.compile(r"(\w+)=(\d+)", re.A)
    text = "a=1 b=22 c=x"
    assert lazy.findall(text) == compiled.findall(text)
    assert lazy.sub(r"\2", text) == compiled.sub(r"\2", text)
    assert lazy.match(text).groups() == ("a", "1") and lazy.pattern == compiled.pattern and lazy.groups == 2


def test_a_lazy_patterns_text_is_read_without_compiling_it(monkeypatch):
    # A cache keyed by the text (own_trainer._program_holds) asks for it before any search.
    compiled = []
    real = re.compile
    monkeypatch.setattr(re, "compile", lambda *args: compiled.append(args) or real(*args))
    lazy = LazyPattern(rb"\bTrainer\(")
    assert lazy.pattern == rb"\bTrainer\(" and compiled == []
    assert lazy.search(b"x = Trainer(") and len(compiled) == 1 and lazy.pattern == rb"\bTrainer\("


def test_only_the_importing_thread_gets_lazy_patterns():
    other = []
    with compiling_lazily():
        mine = re.compile("a+")
        thread = threading.Thread(target=lambda: other.append(re.compile("b+")))
        thread.start()
        thread.join()
    assert isinstance(mine, LazyPattern) and isinstance(other[0], re.Pattern)
    assert isinstance(re.compile("c+"), re.Pattern)  # restored after the block
    assert mine.fullmatch("aaa")


def test_yaml_reads_the_same_with_its_resolver_patterns_deferred():
    import batchlint.sources.yaml  # noqa: F401  (imports PyYAML under compiling_lazily, if first)

    text = "a: 1\nb: 1.5e+3\nc: yes\nd: ~\ne: 2024-01-02\nf: 0x1f\ng: text\n"
    expected = {"a": 1, "b": 1500.0, "c": True, "d": None, "f": 31, "g": "text"}
    for loader in (yaml.SafeLoader, getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
        loaded = yaml.load(text, Loader=loader)
        assert str(loaded.pop("e")) == "2024-01-02" and loaded == expected
