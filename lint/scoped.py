"""`Scoped(var, value)`: a context variable set to `value` for the block of a `with`.

A class, not a `@contextmanager` generator: the engine enters several for every file it
lints, and a generator-based one costs five times as much to enter and leave."""

from __future__ import annotations

import contextvars

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Scoped:
    """Not a `Generic` (which would import `typing` at run time, lint/annotations.py): what the block
    gets is `Any` to the type checker."""

    __slots__ = ("var", "value", "token")
    token: contextvars.Token

    def __init__(self, var: contextvars.ContextVar, value: Any):
        self.var = var
        self.value = value

    def __enter__(self) -> Any:
        self.token = self.var.set(self.value)
        return self.value

    def __exit__(self, *exc: Any) -> None:
        self.var.reset(self.token)
