"""Generated tables stay generated: each embedded table is exactly what its
committed generator writes, so an edit by hand (or a stale table) fails here."""

from batchlint.frameworks import torchtitan_keys, verl_keys

from conftest import load_tool


def test_verl_keys_are_the_generator_output():
    generator = load_tool("generate_verl_keys")
    with open(verl_keys.__file__, encoding="utf-8") as handle:
        assert handle.read() == generator.render(set(verl_keys.KEYS), "b178a3c")


def test_the_verl_generator_walks_nested_mappings_only():
    generator = load_tool("generate_verl_keys")
    assert generator.keys({"a": {"b": 1, "c": [{"d": 1}]}, "e": None}) == {"a", "a.b", "a.c", "e"}


def test_torchtitan_keys_are_the_generator_output():
    generator = load_tool("generate_torchtitan_keys")
    with open(torchtitan_keys.__file__, encoding="utf-8") as handle:
        assert handle.read() == generator.render(torchtitan_keys.JOB_CONFIG_KEYS, "v0.2.2")


_DATACLASSES = '''
from dataclasses import dataclass, field
from typing import ClassVar


@dataclass
class Inner:
    fqns: list[str] = field(default_factory=list)
    """A docstring, not a field."""
    limit: ClassVar[int] = 3


@dataclass(frozen=True)
class Base:
    name: str = "x"


@dataclass
class Section(Base):
    inner: Inner = field(default_factory=Inner)
    maybe: Inner | None = None  # not a bare dataclass name: a plain key

    def method(self) -> None:
        local: int = 1


class NotADataclass:
    ignored: int = 0


@dataclass
class JobConfig:
    section: Section = field(default_factory=Section)
    plain: NotADataclass = None
'''


def test_the_torchtitan_generator_reads_nested_dataclasses():
    generator = load_tool("generate_torchtitan_keys")
    keys = generator.job_config_keys(_DATACLASSES)
    assert keys == {"section": {"name": None, "inner": {"fqns": None}, "maybe": None}, "plain": None}
    assert list(keys["section"]) == ["name", "inner", "maybe"]  # a base's fields first, then source order
    assert generator.render(keys, "v9").endswith(
        'JOB_CONFIG_KEYS = {\n    "section": {\n        "name": None,\n        "inner": {\n            "fqns": None,\n'
        '        },\n        "maybe": None,\n    },\n    "plain": None,\n}\n')


def test_check_says_whether_the_module_is_exactly_the_generator_s(tmp_path):
    load_tool("generate_verl_keys")  # puts tools/ on the path
    from generated import write_or_check

    target = tmp_path / "keys.py"
    assert write_or_check(str(target), "KEYS = 1\n", check=False) == 0 and target.read_text() == "KEYS = 1\n"
    assert write_or_check(str(target), "KEYS = 1\n", check=True) == 0
    assert write_or_check(str(target), "KEYS = 2\n", check=True) == 1 and target.read_text() == "KEYS = 1\n"
