"""`lean_dataclass` behaves as `dataclasses.dataclass` where batchlint relies on it (equality,
hashing, repr, frozenness, `replace`/`asdict`/`fields`, pickling for workers), and every class
of the package uses it: a plain `@dataclass` compiles up to six methods at import, and the
`dataclasses` module brings `inspect` with it, a cost each one-file lint pays (README, Performance)."""

import pathlib
import pickle
import re
import subprocess
import sys
from typing import ClassVar, Optional

import pytest

from batchlint.lean_dataclass import (
    FrozenInstanceError,
    asdict,
    field,
    fields,
    is_lean_dataclass,
    lean_dataclass,
    replace,
)


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
    with pytest.raises(FrozenInstanceError):
        point.x = 3
    with pytest.raises(FrozenInstanceError):
        del point.y
    assert point.x == 1
    box = Box()
    box.name = "changed"  # not frozen: assignable
    assert box.name == "changed"


def test_dataclass_functions_and_pickling_work():
    point = Labelled(1, 2, "a", "u")
    assert [f.name for f in fields(point)] == ["x", "y", "label", "tag"]
    assert replace(point, x=5) == Labelled(5, 2, "a", "u")
    assert asdict(point) == {"x": 1, "y": 2, "label": "a", "tag": "u"}
    copy = pickle.loads(pickle.dumps(point))
    assert copy == point and copy.label == "a"
    with pytest.raises(FrozenInstanceError):
        copy.x = 0


def test_every_class_of_the_package_is_lean():
    package = pathlib.Path(__file__).resolve().parent.parent
    plain = [f"{path.relative_to(package)}:{number}"
             for folder in ("lint", "rules") for path in sorted((package / folder).rglob("*.py"))
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if re.match(r"\s*@(dataclasses\.)?dataclass\b", line)]
    assert plain == [], "use @lean_dataclass (lint/lean_dataclass.py): " + ", ".join(plain)


@lean_dataclass(frozen=True)
class Reading:
    value: int
    key: str = "k"
    notes: tuple = field(default_factory=tuple, compare=False)


def test_a_class_made_often_gets_a_compiled_init_that_behaves_the_same(monkeypatch):
    from batchlint import lean_dataclass as module

    shared = Reading.__init__
    made = [Reading(n, notes=("x",)) for n in range(module.COMPILE_AFTER + 2)]
    assert Reading.__init__ is not shared  # compiled for it once made often: the shared one is slower
    assert [r.value for r in made] == list(range(module.COMPILE_AFTER + 2)) and made[-1].notes == ("x",)
    for before_and_after in (shared, Reading.__init__):
        monkeypatch.setattr(Reading, "__init__", before_and_after)
        a = Reading(1)
        assert a == Reading(1, "k", ("x",)) and hash(a) == hash(Reading(1)) and a != Reading(2)
        assert repr(a) == "Reading(value=1, key='k', notes=())" and Reading(1).notes is not None
        assert Reading(key="j", value=2) == Reading(2, "j")
        with pytest.raises(FrozenInstanceError):
            a.value = 2
        with pytest.raises(FrozenInstanceError):
            del a.key
        assert replace(a, key="j") == Reading(1, "j") and pickle.loads(pickle.dumps(a)) == a
        with pytest.raises(TypeError, match="missing 1 required positional argument: 'value'"):
            Reading()
        with pytest.raises(TypeError, match="got an unexpected keyword argument 'other'"):
            Reading(1, other=2)
    # Neither the compiled __init__ nor the shared one calls a frozen class's guard.
    calls = []
    monkeypatch.setattr(Reading, "__setattr__", lambda self, name, value: calls.append(name))
    monkeypatch.setattr(Point, "__setattr__", lambda self, name, value: calls.append(name))
    Reading(3)
    Point(3)
    assert calls == []


def test_a_compiled_init_keeps_factories_init_false_fields_and_post_init():
    from batchlint import lean_dataclass as module

    made = [Later(n, second="t") for n in range(module.COMPILE_AFTER + 2)]
    last = made[-1]
    assert (last.first, last.made, last.second) == (module.COMPILE_AFTER + 1, [module.COMPILE_AFTER + 1], "t")
    assert not hasattr(last, "unset") and made[0].made is not last.made
    with pytest.raises(TypeError, match="unexpected keyword argument 'made'"):
        Later(1, made=[])


@lean_dataclass
class Later:
    first: int
    made: list = field(default_factory=list, init=False)
    unset: int = field(init=False)
    second: str = "s"

    def __post_init__(self):
        self.made.append(self.first)


def test_the_shared_init_takes_arguments_as_the_dataclass_one():
    """The `__init__` every class starts with, before one is compiled for it."""
    assert Point(1, 2, "a") == Point(x=1, y=2, label="a") == Point(1, label="a", y=2)
    assert Point(1).y == 0 and Box().items == [] and Box().items is not Box().items
    later = Later(3, second="t")
    assert (later.first, later.made, later.second) == (3, [3], "t") and not hasattr(later, "unset")
    assert [f.name for f in fields(later)] == ["first", "made", "unset", "second"]
    for call, said in [(lambda: Point(), "missing 1 required positional argument: 'x'"),
                       (lambda: Point(1, 2, "a", 4), "takes 4 positional arguments but 5 were given"),
                       (lambda: Point(1, x=2), "got multiple values for argument 'x'"),
                       (lambda: Point(1, z=2), "got an unexpected keyword argument 'z'"),
                       (lambda: Later(1, made=[]), "got an unexpected keyword argument 'made'")]:
        with pytest.raises(TypeError, match=re.escape(said)):
            call()


@lean_dataclass
class Counted:
    limit: ClassVar[int] = 3  # a class variable, not a field
    value: int = 0


def test_class_variables_are_no_fields_and_defaults_stay_on_the_class():
    assert [f.name for f in fields(Counted)] == ["value"] and Counted.limit == 3 and Counted.value == 0
    assert Point.label == "" and not hasattr(Box, "items")  # field(default=...) as a value; a factory: none
    assert is_lean_dataclass(Point) and is_lean_dataclass(Point(1)) and not is_lean_dataclass(object())
    with pytest.raises(TypeError):
        fields(object())


def test_what_a_dataclass_refuses_is_refused():
    with pytest.raises(ValueError, match="mutable default"):
        @lean_dataclass
        class Shared:
            items: list = []  # noqa: RUF012 - the mistake under test
    with pytest.raises(TypeError, match="non-default argument 'y' follows default argument"):
        @lean_dataclass
        class Ordered:
            x: int = 0
            y: int
    with pytest.raises(ValueError, match="both default and default_factory"):
        field(default=1, default_factory=list)
    with pytest.raises(ValueError, match="init=False"):
        replace(Later(1), made=[])


def test_a_one_file_lint_imports_neither_dataclasses_nor_inspect(tmp_path):
    # The standard library's dataclasses brings inspect, dis, tokenize and ast: ~30 M instructions of a
    # one-file lint's start-up, which a YAML or JSON lint has no use for.
    config = tmp_path / "ds.json"
    config.write_text('{"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 2}\n')
    code = ("import sys\nsys.argv = ['batchlint', 'check', sys.argv[1]]\nfrom batchlint.entry import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('dataclasses', 'inspect', 'ast', 'dis', 'tokenize') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code, str(config)], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout + done.stderr
