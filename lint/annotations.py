"""The run-time stand-ins of the two `typing` names batchlint's code calls outside its annotations.

A lint imports no `typing` (16 M instructions, a sixth of a one-file lint's start-up in a clean
environment): every module imports it under `if TYPE_CHECKING:`, which type checkers read and nothing
runs (`TYPE_CHECKING = False` in the module; mypy knows the name). `tests/test_speed.py` holds a lint of
each format to it. The type checker takes `typing`'s own `overload` and `cast`; these do at run time what
those do."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    F = TypeVar("F", bound=Callable[..., Any])
    T = TypeVar("T")


def overload(function: F) -> F:
    """An `@overload` variant: the implementation defined after it takes its name."""
    return function


def cast(kind: object, value: T) -> T:
    """`typing.cast`: `value` as it is."""
    return value
