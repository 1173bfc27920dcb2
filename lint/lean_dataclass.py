"""`@lean_dataclass`: a dataclass whose comparison, hashing, repr and frozenness are shared functions,
made without the standard library's `dataclasses`.

`dataclasses.dataclass` writes and compiles up to six methods for every class when the module is
imported, and `import dataclasses` brings `inspect`, `dis`, `tokenize`, `ast` and `copy` with it:
batchlint defines some 170 such classes and a pre-commit run imports ~70 of them to lint one file,
which cost ~60 M instructions of a one-file lint's start-up. A lean dataclass keeps what batchlint
uses of a dataclass: its fields in order (inherited ones first), defaults and factories, `init=False`,
`__post_init__`, `fields`, `replace` and `asdict` (this module's), and type checkers see a dataclass
(`dataclass_transform`). Nothing is compiled at import: every class starts with an `__init__` shared by
all, which reads the fields, and a class made often (COMPILE_AFTER instances: a Fact, a document's
Scalar) then gets one compiled for it, five times faster. `__eq__`, `__hash__`, `__repr__` and the
frozen guard are the functions below, which read the class's fields once, when it is decorated.

Semantics are the dataclass's: equality compares the `compare` fields of two instances of
the same class; a frozen class with `eq` hashes them, a mutable one with `eq` is unhashable;
`eq=False` keeps identity; a mutable default (a list, a dict, a set) is refused, and so is a field
without a default after one with a default. Differences: a frozen lean dataclass refuses to re-assign
or delete an attribute once set, not to set a new one (its `__init__` sets every field); `asdict`
copies lists, tuples and dicts but shares every other value; `dataclasses.fields` does not know
these classes (use this module's `fields`).
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable
from operator import attrgetter

TYPE_CHECKING = False
if TYPE_CHECKING:  # tells type checkers the classes are dataclasses; nothing to do at run time
    from typing import Any

    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_: Any) -> Callable:
        return lambda decorated: decorated


class _Missing:
    """No default given (as `dataclasses.MISSING`)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class FrozenInstanceError(AttributeError):
    """An assignment to, or deletion of, a field of a frozen lean dataclass."""


class Field:
    """One field of a lean dataclass: `field()`'s options, and its name and annotation once decorated."""

    __slots__ = ("name", "type", "default", "default_factory", "init", "repr", "hash", "compare", "metadata")

    def __init__(self, default: Any = MISSING, default_factory: Any = MISSING, init: bool = True,
                 repr: bool = True, hash: Any = None, compare: bool = True, metadata: Any = None):
        self.name: str = ""
        self.type: Any = None
        self.default, self.default_factory = default, default_factory
        self.init, self.repr, self.hash, self.compare = init, repr, hash, compare
        self.metadata = {} if metadata is None else metadata

    def __repr__(self) -> str:
        return (f"Field(name={self.name!r}, type={self.type!r}, default={self.default!r}, "
                f"default_factory={self.default_factory!r}, init={self.init}, repr={self.repr}, "
                f"hash={self.hash}, compare={self.compare})")


def field(*, default: Any = MISSING, default_factory: Any = MISSING, init: bool = True, repr: bool = True,
          hash: Any = None, compare: bool = True, metadata: Any = None) -> Any:
    """A field's options, as `dataclasses.field`."""
    if default is not MISSING and default_factory is not MISSING:
        raise ValueError("cannot specify both default and default_factory")
    return Field(default, default_factory, init, repr, hash, compare, metadata)


def fields(class_or_instance: Any) -> tuple[Field, ...]:
    """The fields of a lean dataclass (or of an instance), in order."""
    try:
        return class_or_instance.__lean_fields__
    except AttributeError:
        raise TypeError("must be called with a lean dataclass type or instance") from None


def is_lean_dataclass(obj: Any) -> bool:
    """Whether `obj` is a lean dataclass or an instance of one."""
    return hasattr(obj, "__lean_fields__")


def replace(obj: Any, /, **changes: Any) -> Any:
    """A new instance of `obj`'s class with `changes` and its other `init` fields, as `dataclasses.replace`."""
    for f in fields(obj):
        if not f.init:
            if f.name in changes:
                raise ValueError(f"field {f.name} is declared with init=False, it cannot be specified with replace()")
            continue
        if f.name not in changes:
            changes[f.name] = getattr(obj, f.name)
    return obj.__class__(**changes)


def asdict(obj: Any) -> Any:
    """The fields of `obj` as a dict, lean dataclasses, lists, tuples and dicts inside it as well."""
    if is_lean_dataclass(obj) and not isinstance(obj, type):
        return {f.name: asdict(getattr(obj, f.name)) for f in fields(obj)}
    if isinstance(obj, (list, tuple)):
        return type(obj)(asdict(v) for v in obj)
    if isinstance(obj, dict):
        return {asdict(k): asdict(v) for k, v in obj.items()}
    return obj


@dataclass_transform(field_specifiers=(field, Field))
def lean_dataclass(cls: Any = None, /, *, frozen: bool = False, eq: bool = True) -> Any:
    """`@lean_dataclass`, `(frozen=True)`, `(eq=False)`: as `@dataclass(...)`."""

    def wrap(klass: Any) -> Any:
        own = klass.__dict__
        if not own.get("__doc__"):
            klass.__doc__ = f"{klass.__name__}({', '.join(own.get('__annotations__', ()))})"
        found = _fields_of(klass)
        klass.__lean_fields__ = found
        if "__init__" not in own:
            klass.__init__ = _init_of(klass, found)
        klass.__lean_shown__ = tuple(f.name for f in found if f.repr)
        klass.__repr__ = _repr
        if eq and "__eq__" not in own:
            klass.__lean_compared__ = _key_of(tuple(f.name for f in found if f.compare))
            klass.__eq__ = _eq
            if "__hash__" not in own:
                if frozen:
                    klass.__lean_hashed__ = _key_of(tuple(f.name for f in found
                                                          if (f.compare if f.hash is None else f.hash)))
                klass.__hash__ = _hash if frozen else None
        if frozen:
            klass.__setattr__ = _set_once
            klass.__delattr__ = _never_delete
        return klass

    return wrap if cls is None else wrap(cls)


def _fields_of(klass: Any) -> tuple[Field, ...]:
    """The class's fields: those of its lean dataclass bases first (a field declared again keeps its
    place), then its own annotations, ClassVars left out. Each own field's class attribute becomes its
    default, or goes when it has none (a factory, or no default)."""
    found: dict = {}
    for base in reversed(klass.__mro__[1:]):
        for inherited in base.__dict__.get("__lean_fields__", ()):
            found[inherited.name] = inherited
    for name, annotation in klass.__dict__.get("__annotations__", {}).items():
        if _is_class_variable(annotation):
            continue
        value = klass.__dict__.get(name, MISSING)
        made = value if isinstance(value, Field) else Field(default=value)
        made.name, made.type = name, annotation
        if made.default is not MISSING and made.default.__class__.__hash__ is None:
            raise ValueError(f"mutable default {type(made.default)} for field {name} is not allowed: "
                             f"use default_factory")
        if isinstance(value, Field):
            if made.default is MISSING:
                delattr(klass, name)
            else:
                setattr(klass, name, made.default)
        found[name] = made
    defaulted = False
    for f in found.values():
        if not f.init:
            continue
        if f.default is not MISSING or f.default_factory is not MISSING:
            defaulted = True
        elif defaulted:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")
    return tuple(found.values())


def _is_class_variable(annotation: Any) -> bool:
    if isinstance(annotation, str):  # `from __future__ import annotations`: as written
        return annotation.startswith(("ClassVar", "typing.ClassVar", "t.ClassVar"))
    import typing

    return annotation is typing.ClassVar or typing.get_origin(annotation) is typing.ClassVar


def _compiled_init(klass: Any, found: tuple) -> Callable[..., None]:
    """An `__init__` written for the class's fields, as dataclass's: defaults as parameters' defaults,
    each field set by an assignment, or in a frozen class with object.__setattr__ (its guard is not
    called). Its text is made of the class's own field names, which are identifiers."""
    names: dict = {"__setter": object.__setattr__, "__missing": MISSING}
    frozen = klass.__setattr__ is _set_once
    parameters, body = ["self"], []
    for at, f in enumerate(found):
        if f.init:
            if f.default is not MISSING:
                names[f"__default{at}"] = f.default
                parameters.append(f"{f.name}=__default{at}")
            elif f.default_factory is not MISSING:
                names[f"__factory{at}"] = f.default_factory
                parameters.append(f"{f.name}=__missing")
                body.append(f"if {f.name} is __missing: {f.name} = __factory{at}()")
            else:
                parameters.append(f.name)
            body.append(_setting(f.name, f.name, frozen))
        elif f.default is not MISSING:
            names[f"__default{at}"] = f.default
            body.append(_setting(f.name, f"__default{at}", frozen))
        elif f.default_factory is not MISSING:
            names[f"__factory{at}"] = f.default_factory
            body.append(_setting(f.name, f"__factory{at}()", frozen))
    if getattr(klass, "__post_init__", None) is not None:
        body.append("self.__post_init__()")
    source = f"def __init__({', '.join(parameters)}):\n" + "".join(f"    {line}\n" for line in body or ["pass"])
    exec(source, names)  # noqa: S102 - our own text, from the class's field names
    made = names["__init__"]
    made.__qualname__ = f"{klass.__qualname__}.__init__"
    return made


# Instances a class makes through the shared `__init__` before it gets one compiled for it: compiling costs
# what ~40 calls of the shared one do, and most classes of a one-file lint are made a few times.
COMPILE_AFTER = 48


def _setting(name: str, value: str, frozen: bool) -> str:
    # An assignment is the interpreter's fastest store; a frozen class's guard refuses it.
    return f"__setter(self, {name!r}, {value})" if frozen else f"self.{name} = {value}"


def _init_of(klass: Any, found: tuple) -> Callable[..., None]:
    """An `__init__` taking the class's `init` fields in order, by position or name, as dataclass's would:
    a missing one takes its default or its factory's value; then `__post_init__`, if the class has one.
    What it needs is worked out on its first call (most classes a one-file lint imports are never made);
    its COMPILE_AFTER-th call puts the class's compiled one (`_compiled_init`) in its place."""
    missing = MISSING
    set_field = object.__setattr__
    qualname = klass.__qualname__
    calls = 0
    names: tuple = ()
    index: dict = {}
    plan: tuple = ()
    post_init = False

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        nonlocal calls, names, index, plan, post_init
        calls += 1
        if calls == 1:
            names = tuple(f.name for f in found if f.init)
            index = {name: at for at, name in enumerate(names)}
            # (name, default, factory, init) of every field, in order: an `init=False` one takes its default.
            plan = tuple((f.name, f.default, f.default_factory, f.init) for f in found)
            post_init = getattr(klass, "__post_init__", None) is not None
        elif calls == COMPILE_AFTER and klass.__dict__.get("__init__") is __init__:
            klass.__init__ = _compiled_init(klass, found)
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


# Shared by every lean dataclass, each reading its class's fields as the decorator found them: a function
# made for each class (as dataclass's are) cost its decoration twice as much.
def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is not self.__class__:
        return NotImplemented
    key = self.__class__.__lean_compared__
    return key(self) == key(other)


def _hash(self: Any) -> int:
    return hash(self.__class__.__lean_hashed__(self))


@reprlib.recursive_repr()
def _repr(self: Any) -> str:
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__class__.__lean_shown__)
    return f"{self.__class__.__qualname__}({shown})"


def _set_once(self: Any, name: str, value: Any) -> None:
    if name in self.__dict__:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")
    object.__setattr__(self, name, value)


def _never_delete(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")
