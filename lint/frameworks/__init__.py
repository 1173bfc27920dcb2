"""The framework registry: every module in this package that declares `FRAMEWORK`
(a `spec.Framework`: name, formats, markers, adapter, launchers).

Adding a framework is adding one module. Order matters only where two adapters
read the same format: the first that recognises a file takes it (`Framework.order`).

A lint imports only the adapters it tries: lint/frameworks/registry.py lists each
module's framework, formats, order, markers and launchers (tests/test_registry.py
checks the table against the modules).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterator

from ..lean_dataclass import replace
from .spec import Framework, Launcher, TaskFile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional


@functools.cache
def _framework(module_name: str) -> Optional[Framework]:
    module = importlib.import_module(f"{__name__}.{module_name}")
    framework = getattr(module, "FRAMEWORK", None)
    if not isinstance(framework, Framework):
        return None
    plan = framework.plan or module.plan  # left out of FRAMEWORK: the module's `plan` function
    if framework.interpolation:
        plan = _resolving(framework, plan)
    if plan is not framework.plan:
        framework = replace(framework, plan=plan)
    return framework


def _resolving(framework: Framework, plan: Callable) -> Callable:
    """The adapter `plan`, reading the document with its interpolations resolved (spec.OMEGACONF),
    composed first for a Hydra app (spec.HYDRA_COMPOSED)."""
    from .spec import HYDRA_COMPOSED

    # The readers are imported when a document is planned, not when the framework is: a launch line's
    # launcher is looked up in every framework that declares one, and most of them never plan.
    if framework.interpolation != HYDRA_COMPOSED:
        def resolving(doc, outside):
            from ..sources.omegaconf import resolve

            return plan(resolve(doc), outside)
        return resolving
    home, distribution, names = framework.configs, framework.distribution, framework.config_names

    def composing(doc, outside):
        from ..sources.hydra import compose
        from ..sources.omegaconf import resolve

        return plan(resolve(compose(doc, outside.view, home, distribution, names)), outside)
    return composing


@functools.cache
def _entries(fmt: Optional[str] = None) -> tuple:
    """((order, name), module, markers, whether it reads job files) of each framework reading `fmt`
    (None: all), in order, from the registry without importing."""
    from .registry import ADAPTERS

    return tuple(sorted(((order, name), module, markers, task)
                        for module, (name, formats, order, markers, task, _) in ADAPTERS.items()
                        if fmt is None or fmt in formats))


def _discover() -> tuple:
    return tuple(_framework(module) for _, module, _, _ in _entries())


@functools.lru_cache(maxsize=1)
def _launchers() -> tuple:
    """Every launcher with the framework its inline settings belong to (None: a generic launcher)."""
    from .launchers import LAUNCHERS as generic

    return tuple((launcher, None) for launcher in generic) + tuple(
        (launcher, framework.name) for framework in _discover() for launcher in framework.launchers)


@functools.lru_cache(maxsize=1)
def launcher_globs() -> tuple:
    """(module or None for a generic launcher, its index there, commands, modules, scripts, markers, the
    flags it requires, the launchers it runs under) of every launcher, in `_launchers`' order, from the
    registry without importing the frameworks. A command's launcher is imported once one of its globs
    matches and its requirements hold (`launcher_at`): a one-file lint of a DeepSpeed script imports no
    RL framework, and `deepspeed train.py` no framework whose `train.py` runs under another launcher."""
    from .launchers import LAUNCHERS as generic
    from .registry import ADAPTERS

    found = [(None, index, launcher.commands, launcher.modules, launcher.scripts, launcher.markers,
              launcher.requires, launcher.under) for index, launcher in enumerate(generic)]
    for _, module, _, _ in _entries():
        found += [(module, index, *globs) for index, globs in enumerate(ADAPTERS[module][5])]
    return tuple(found)


def launcher_at(module: Optional[str], index: int) -> tuple:
    """(Launcher, the framework it belongs to or None) at `launcher_globs`' place."""
    if module is None:
        from .launchers import LAUNCHERS as generic

        return generic[index], None
    framework = _framework(module)
    assert framework is not None  # listed by launcher_globs only when it declares one
    return framework.launchers[index], framework.name


def __getattr__(name: str):
    # Built on first use: a one-file lint needs only the adapters of its format.
    if name in ("FRAMEWORKS", "ADAPTERS"):  # ADAPTERS: the name the engine knew them by
        return _discover()
    if name == "LAUNCHERS":
        return _launchers()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def by_name(name: str) -> Optional[Framework]:
    """The framework a plan names (`plan.framework`), imported only when asked for."""
    for (_, framework_name), module, _, _ in _entries():
        if framework_name == name:
            return _framework(module)
    return None


def for_format(fmt: str) -> tuple[Framework, ...]:
    return tuple(adapters_for(fmt))


def adapters_for(fmt: str, held: Optional[bytes] = None) -> Iterator[Framework]:
    """The frameworks that read `fmt`, in order, each imported when the iteration reaches
    it: the engine stops at the first adapter that recognises a file.

    `held`: the bytes of a data file (YAML, JSON, TOML) as written, to try only the frameworks
    one of whose markers it holds. A framework recognises only configs holding one of its
    markers (`Framework.markers`), and a data file writes its keys out as text, so the others
    would say no: they are neither imported nor asked (an ms-swift YAML skips five). A Python
    config can name a key without writing it (`from xtuner import v1`): never preselected."""
    # _entries lists only modules that declare a framework: `is not None` never drops one.
    if held is None or fmt == "python":
        return (framework for _, module, _, _ in _entries(fmt) if (framework := _framework(module)) is not None)
    return (framework for _, module, markers, _ in _entries(fmt)
            if any(m in held for m in markers) and (framework := _framework(module)) is not None)


def tasks_for(fmt: str, raw: bytes) -> Iterator[TaskFile]:
    """The job files (Framework.task) in `fmt` of the frameworks whose markers `raw` holds; only
    those frameworks are imported."""
    for _, module, markers, _ in _tasks(fmt):
        if any(marker in raw for marker in markers):
            framework = _framework(module)
            if framework is not None and framework.task is not None:
                yield framework.task


def markers_for(fmt: str) -> tuple[bytes, ...]:
    return _markers(_entries(fmt))


@functools.cache
def _tasks(fmt: str) -> tuple:
    """The entries of the frameworks reading `fmt` that read job files (asked of every file: few do)."""
    return tuple(entry for entry in _entries(fmt) if entry[3])


@functools.cache
def _markers(entries: tuple) -> tuple[bytes, ...]:
    return tuple(marker for _, _, markers, _ in entries for marker in markers)  # asked for every file


__all__ = ["Framework", "Launcher", "adapters_for", "for_format", "markers_for", "tasks_for"]
