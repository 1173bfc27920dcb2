"""Generated tables stay generated: each embedded table is exactly what its
committed generator writes, so an edit by hand (or a stale table) fails here."""

from batchlint.frameworks import torchtitan_keys, verl, verl_keys
from batchlint.keysets import KeySets, dotted_keys, nest, spans

from conftest import load_tool


def test_verl_keys_are_the_generator_output():
    generator = load_tool("generate_verl_keys")
    sets = verl_keys.KEY_SETS
    assert sets.releases == generator.RELEASES
    with open(verl_keys.__file__, encoding="utf-8") as handle:
        assert handle.read() == generator.render({name: sets.keys(name) for name in sets.names})


def test_the_verl_reader_walks_nested_mappings_only():
    assert dotted_keys({"a": {"b": 1, "c": [{"d": 1}]}, "e": None}) == {"a", "a.b", "a.c", "e"}


def test_the_verl_reader_takes_the_flattened_config_else_the_plain_one():
    plain = {"verl/trainer/config/ppo_trainer.yaml": "data:\n  train_batch_size: 8\n"}
    assert verl.keys_from_source(plain.get) == {"data", "data.train_batch_size"}
    composed = {"verl/trainer/config/ppo_trainer.yaml": "defaults:\n  - actor@actor_rollout_ref.actor: dp_actor\n"}
    assert verl.keys_from_source(composed.get) is None  # its keys are the composition's


def test_torchtitan_keys_are_the_generator_output():
    generator = load_tool("generate_torchtitan_keys")
    sets = torchtitan_keys.KEY_SETS
    assert sets.releases == generator.RELEASES
    with open(torchtitan_keys.__file__, encoding="utf-8") as handle:
        assert handle.read() == generator.render({name: nest(sets.ordered(name)) for name in sets.names})


def test_the_release_table_notation_round_trips():
    names = ("0.1", "0.2", "0.3", "0.4", "0.5")
    table = {"a": "*", "b": "..0.2", "c": "0.3..", "d": "0.2..0.3", "e": "0.1,0.4..", "f": "0.3"}
    sets = KeySets(tuple((n, "v" + n) for n in names), table)
    assert sets.keys("0.1") == {"a", "b", "e"} and sets.keys("0.3") == {"a", "c", "d", "f"}
    assert sets.union == set(table) and sets.has("0.3.0") == "0.3" and sets.has("0.6") is None
    for key, written in table.items():
        assert spans([n for n in names if key in sets.keys(n)], names) == written


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
    flat = generator.flatten(keys)
    assert flat == ["section.", "section.name", "section.inner.", "section.inner.fqns", "section.maybe", "plain"]
    assert nest(flat) == keys


def test_check_says_whether_the_module_is_exactly_the_generator_s(tmp_path):
    load_tool("generate_verl_keys")  # puts tools/ on the path
    from generated import write_or_check

    target = tmp_path / "keys.py"
    assert write_or_check(str(target), "KEYS = 1\n", check=False) == 0 and target.read_text() == "KEYS = 1\n"
    assert write_or_check(str(target), "KEYS = 1\n", check=True) == 0
    assert write_or_check(str(target), "KEYS = 2\n", check=True) == 1 and target.read_text() == "KEYS = 1\n"
