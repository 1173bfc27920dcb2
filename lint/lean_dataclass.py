"""`@lean_dataclass`: a dataclass whose comparison, hashing, repr and frozenness are shared functions.

`dataclasses.dataclass` writes and compiles up to six methods for every class when the
module is imported (Python 3.10-3.12 compile each one apart). batchlint defines over a
hundred such classes and a pre-commit run imports ~60 of them to lint one file: that cost
~140 M instructions, a third of a one-file lint's start-up. A lean dataclass is the same dataclass
(`dataclasses.fields`, `replace` and `asdict` work, type checkers see a dataclass) with
only `__init__` generated; `__eq__`, `__hash__`, `__repr__` and the frozen guard are the
functions below, which read the class's fields once, when it is decorated.

Semantics are the dataclass's: equality compares the `compare` fields of two instances of
the same class; a frozen class with `eq` hashes them, a mutable one with `eq` is unhashable;
`eq=False` keeps identity. One difference: a frozen lean dataclass refuses to re-assign or delete
an attribute once set, not to set a new one (its `__init__` sets every field).
"""

from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # tells type checkers the classes are dataclasses; nothing to do at run time
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_: Any) -> Callable:
        return lambda decorated: decorated


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def lean_dataclass(cls: Any = None, /, *, frozen: bool = False, eq: bool = True, many: bool = False) -> Any:
    """`@lean_dataclass`, `(frozen=True)`, `(eq=False)`: as `@dataclass(...)`. `many`: a class made by the
    ten thousand (a Fact, a document's Scalar), which gets dataclass's compiled `__init__` (a frozen one
    sets each field with object.__setattr__, not through the guard below): ~0.3 ms more at import, and
    5x faster to call than the `__init__` the other classes share (`_init_of`)."""

    def wrap(klass: Any) -> Any:
        own = klass.__dict__
        if not own.get("__doc__"):  # else dataclass writes one from inspect.signature: ~1 ms a class
            klass.__doc__ = f"{klass.__name__}({', '.join(own.get('__annotations__', ()))})"
        # Only a class made by the thousand gets dataclass's compiled `__init__`; the others share one
        # that reads the fields (compiling an `__init__` is half of what dataclass costs at import).
        made: Any = dataclasses.dataclass(klass, init=many, repr=False, eq=False, frozen=frozen and many)
        fields = dataclasses.fields(made)
        if not many and "__init__" not in own:
            made.__init__ = _init_of(made, fields)
        shown = tuple(f.name for f in fields if f.repr)
        made.__repr__ = _repr_of(shown)
        if eq and "__eq__" not in own:
            compared = tuple(f.name for f in fields if f.compare)
            key = _key_of(compared)
            made.__eq__ = _eq_of(key)
            if "__hash__" not in own:
                hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
                made.__hash__ = _hash_of(_key_of(hashed)) if frozen else None
        if frozen:
            made.__setattr__ = _set_once
            made.__delattr__ = _never_delete
        return made

    return wrap if cls is None else wrap(cls)


def _init_of(klass: Any, fields: tuple) -> Callable[..., None]:
    """An `__init__` taking the class's `init` fields in order, by position or name, as dataclass's would:
    a missing one takes its default or its factory's value; then `__post_init__`, if the class has one."""
    taken = tuple(f for f in fields if f.init)
    names = tuple(f.name for f in taken)
    index = {name: at for at, name in enumerate(names)}
    missing = dataclasses.MISSING
    # (name, default, factory, init) of every field, in order: an `init=False` one takes its default.
    plan = tuple((f.name, f.default, f.default_factory, f.init) for f in fields)
    post_init = getattr(klass, "__post_init__", None) is not None
    set_field = object.__setattr__
    qualname = klass.__qualname__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(names):
            raise TypeError(f"{qualname}.__init__() takes {len(names) + 1} positional arguments "
                            f"but {len(args) + 1} were given")
        for key in kwargs:
            at = index.get(key)
            if at is None:
                raise TypeError(f"{qualname}.__init__() got an unexpected keyword argument {key!r}")
            if at < len(args):
                raise TypeError(f"{qualname}.__init__() got multiple values for argument {key!r}")
        for name, default, factory, init in plan:
            at = index[name] if init else len(args)
            if at < len(args):
                value = args[at]
            elif init and name in kwargs:
                value = kwargs[name]
            elif default is not missing:
                value = default
            elif factory is not missing:
                value = factory()
            elif init:
                raise TypeError(f"{qualname}.__init__() missing 1 required positional argument: {name!r}")
            else:
                continue  # an `init=False` field without a default: dataclass leaves it unset too
            set_field(self, name, value)
        if post_init:
            self.__post_init__()

    __init__.__qualname__ = f"{qualname}.__init__"
    return __init__


def _key_of(names: tuple) -> Callable[[Any], tuple]:
    if not names:
        return lambda _: ()
    if len(names) == 1:
        get = attrgetter(names[0])
        return lambda instance: (get(instance),)
    return attrgetter(*names)


def _eq_of(key: Callable[[Any], tuple]) -> Callable[[Any, Any], Any]:
    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return key(self) == key(other)

    return __eq__


def _hash_of(key: Callable[[Any], tuple]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        return hash(key(self))

    return __hash__


def _repr_of(names: tuple) -> Callable[[Any], str]:
    @reprlib.recursive_repr()
    def __repr__(self: Any) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{self.__class__.__qualname__}({shown})"

    return __repr__


def _set_once(self: Any, name: str, value: Any) -> None:
    if name in self.__dict__:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
    object.__setattr__(self, name, value)


def _never_delete(self: Any, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
