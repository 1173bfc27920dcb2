"""The framework registry: every module in this package that declares `FRAMEWORK`
(a `spec.Framework`: name, formats, markers, adapter, launchers).

Adding a framework is adding one module. Order matters only where two adapters
read the same format: the first that recognises a file takes it (`Framework.order`).
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from typing import Optional

from .launchers import LAUNCHERS as _GENERIC
from .spec import Framework, Launcher


def _discover() -> tuple:
    found = []
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        framework = getattr(module, "FRAMEWORK", None)
        if isinstance(framework, Framework):
            found.append(framework if framework.plan else dataclasses.replace(framework, plan=module.plan))
    return tuple(sorted(found, key=lambda f: (f.order, f.name)))


FRAMEWORKS: tuple[Framework, ...] = _discover()
ADAPTERS = FRAMEWORKS  # the name the engine knew them by
# Every launcher with the framework its inline settings belong to (None: a generic launcher).
LAUNCHERS: tuple[tuple[Launcher, Optional[str]], ...] = tuple((launcher, None) for launcher in _GENERIC) + tuple(
    (launcher, framework.name) for framework in FRAMEWORKS for launcher in framework.launchers)


def for_format(fmt: str) -> tuple[Framework, ...]:
    return tuple(framework for framework in FRAMEWORKS if fmt in framework.formats)


def markers_for(fmt: str) -> tuple[bytes, ...]:
    return tuple(marker for framework in for_format(fmt) for marker in framework.markers)
