"""`lean_dataclass` behaves as `dataclasses.dataclass` where batchlint relies on it (equality,
hashing, repr, frozenness, `replace`/`asdict`/`fields`, pickling for workers), and every class
of the package uses it: a plain `@dataclass` compiles up to six methods at import, a cost each
one-file lint pays (tests/test_speed.py; README, Performance)."""

import dataclasses
import pathlib
import pickle
import re
from dataclasses import field
from typing import Optional

import pytest

from batchlint.lean_dataclass import lean_dataclass


@lean_dataclass(frozen=True)
class Point:
    x: int
    y: int = 0
    label: str = field(default="", compare=False)


@lean_dataclass
class Box:
    items: list = field(default_factory=list)
    name: Optional[str] = None


@lean_dataclass(eq=False)
class Node:
    value: int


@lean_dataclass(frozen=True)
class Labelled(Point):
    tag: str = "t"


def test_equality_and_hashing_are_the_dataclass_ones():
    assert Point(1, 2, "a") == Point(1, 2, "b")  # `compare=False` is left out
    assert Point(1, 2) != Point(2, 1)
    assert hash(Point(1, 2, "a")) == hash(Point(1, 2, "b"))
    assert len({Point(1, 2), Point(1, 2), Point(3)}) == 2
    assert Point(1, 2) != (1, 2) and Point(1, 2).__eq__((1, 2)) is NotImplemented
    assert Box([1]) == Box([1]) and Box([1]) != Box([2])
    with pytest.raises(TypeError):
        hash(Box())  # mutable with eq: unhashable, as a dataclass
    a, b = Node(1), Node(1)
    assert a != b and a == a and len({a, b}) == 2  # eq=False: identity
    # A subclass compares its own fields, and never equals its base.
    assert Labelled(1, 2, tag="u") != Labelled(1, 2, tag="v") and Labelled(1, 2) != Point(1, 2)


def test_repr_names_the_fields_and_survives_cycles():
    assert repr(Point(1, 2, "a")) == "Point(x=1, y=2, label='a')"
    box = Box(name="b")
    box.items.append(box)
    assert repr(box) == "Box(items=[...], name='b')"


def test_frozen_refuses_assignment_and_deletion():
    point = Point(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        del point.y
    assert point.x == 1
    box = Box()
    box.name = "changed"  # not frozen: assignable
    assert box.name == "changed"


def test_dataclass_functions_and_pickling_work():
    point = Labelled(1, 2, "a", "u")
    assert [f.name for f in dataclasses.fields(point)] == ["x", "y", "label", "tag"]
    assert dataclasses.replace(point, x=5) == Labelled(5, 2, "a", "u")
    assert dataclasses.asdict(point) == {"x": 1, "y": 2, "label": "a", "tag": "u"}
    copy = pickle.loads(pickle.dumps(point))
    assert copy == point and copy.label == "a"
    with pytest.raises(dataclasses.FrozenInstanceError):
        copy.x = 0


def test_every_class_of_the_package_is_lean():
    package = pathlib.Path(__file__).resolve().parent.parent
    plain = [f"{path.relative_to(package)}:{number}"
             for folder in ("lint", "rules") for path in sorted((package / folder).rglob("*.py"))
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if re.match(r"\s*@(dataclasses\.)?dataclass\b", line)]
    assert plain == [], "use @lean_dataclass (lint/lean_dataclass.py): " + ", ".join(plain)


@lean_dataclass(frozen=True, many=True)
class Reading:
    value: int
    key: str = "k"
    notes: tuple = field(default_factory=tuple, compare=False)


def test_a_class_made_by_the_many_is_frozen_the_same_way_without_the_guard_in_init(monkeypatch):

    a = Reading(1)
    assert a == Reading(1, "k", ("x",)) and hash(a) == hash(Reading(1)) and a != Reading(2)
    assert repr(a) == "Reading(value=1, key='k', notes=())"
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.value = 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        del a.key
    assert dataclasses.replace(a, key="j") == Reading(1, "j") and pickle.loads(pickle.dumps(a)) == a
    # Neither its compiled __init__ nor the shared one of a plain frozen class calls the guard.
    calls = []
    monkeypatch.setattr(Reading, "__setattr__", lambda self, name, value: calls.append(name))
    monkeypatch.setattr(Point, "__setattr__", lambda self, name, value: calls.append(name))
    Reading(3)
    Point(3)
    assert calls == []


@lean_dataclass
class Later:
    first: int
    made: list = field(default_factory=list, init=False)
    unset: int = field(init=False)
    second: str = "s"

    def __post_init__(self):
        self.made.append(self.first)


def test_the_shared_init_takes_arguments_as_the_dataclass_one():
    """Only a class made by the many compiles its own `__init__` (`many=True`); the others share one."""
    assert Point(1, 2, "a") == Point(x=1, y=2, label="a") == Point(1, label="a", y=2)
    assert Point(1).y == 0 and Box().items == [] and Box().items is not Box().items
    later = Later(3, second="t")
    assert (later.first, later.made, later.second) == (3, [3], "t") and not hasattr(later, "unset")
    assert [f.name for f in dataclasses.fields(later)] == ["first", "made", "unset", "second"]
    for call, said in [(lambda: Point(), "missing 1 required positional argument: 'x'"),
                       (lambda: Point(1, 2, "a", 4), "takes 4 positional arguments but 5 were given"),
                       (lambda: Point(1, x=2), "got multiple values for argument 'x'"),
                       (lambda: Point(1, z=2), "got an unexpected keyword argument 'z'"),
                       (lambda: Later(1, made=[]), "got an unexpected keyword argument 'made'")]:
        with pytest.raises(TypeError, match=re.escape(said)):
            call()
