"""The rule registry: every module in this package that defines `RULE`.

Adding a rule is adding one module; `tests/test_registry.py` keeps codes and
names unique and the documentation complete. Engine codes (BL001
parse-error, BL002 invalid-directive, BL003 past-reading-limit, BL004 directive-overridden-by-launch,
BL005 unused-suppression)
live in the engine; `ENGINE_RULES`
documents them alongside. A retired code is never reused: `RETIRED` (in
batchlint.codes, which imports no rule) redirects it to its successor.
"""

import functools
import importlib
import os
from typing import Optional

from batchlint.codes import RETIRED, canonical  # noqa: F401 (re-exported: the redirect table)
from batchlint.rule import Rule


@functools.lru_cache(maxsize=1)
def _files() -> dict:
    """Every rule module's name -> its size in bytes (one directory scan: cheaper than
    pkgutil, and it imports nothing)."""
    with os.scandir(__path__[0]) as entries:
        return {entry.name[:-3]: entry.stat().st_size for entry in entries
                if entry.name.endswith(".py") and not entry.name.startswith("_")}


def _modules() -> tuple:
    return tuple(sorted(_files()))


def _load(names) -> tuple:
    modules = (importlib.import_module(f"{__name__}.{name}") for name in names)
    return tuple(sorted((m.RULE for m in modules), key=lambda rule: rule.code))


RULES: tuple  # every rule, by code: bound by __getattr__ on first use


def __getattr__(name: str):
    # RULES is built on first use: a one-file lint imports only the rules its framework can run.
    if name == "RULES":
        global RULES
        RULES = _load(_modules())
        return RULES
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _stored_index() -> dict:
    """lint/frameworks/_index.py, which `python docs/generate.py` writes: module -> (code, the
    frameworks it names or None, the facts it needs: what `Rule.runs_on` reads; the
    module's size, which tells an edit since)."""
    try:
        from batchlint.frameworks._index import INDEX
    except ImportError:  # pragma: no cover - no generated file: every rule is imported
        return {}
    return INDEX


@functools.cache
def _candidates(framework: str) -> tuple:
    """(module, needs) of each rule that may run on a plan of `framework`, in code order.
    A module the index does not list, or lists at another size (the index is stale), is
    always a candidate, its needs left for `Rule.runs_on` to check: a stale index costs
    time, and never silently skips a rule."""
    index = _stored_index()
    found = []
    for name, size in sorted(_files().items()):
        code, frameworks, needs, indexed_size = index.get(name, ("", None, (), None))
        if indexed_size != size:  # edited since the index was written: let runs_on decide
            frameworks, needs = None, ()
        if frameworks is None or framework in frameworks:
            found.append((code, name, needs))
    return tuple((name, needs) for _, name, needs in sorted(found))


@functools.cache
def _rule(module: str) -> Rule:
    return importlib.import_module(f"{__name__}.{module}").RULE


def for_plan(plan) -> tuple:
    """The rules that run on `plan` (exactly those whose `Rule.runs_on` holds), importing only them."""
    framework = plan.framework
    checks, needed, picks = _checks(framework)
    present = frozenset(plan.present(needed))  # each distinct fact asked once per plan
    found = picks.get((framework, present))
    if found is None:
        found = _pick(checks, framework, present)
        if found is None:  # a rule whose needs are not the index's: runs_on decides, plan by plan
            return _pick(checks, framework, present, plan) or ()
        if len(picks) < _MAX_PICKS:
            picks[(framework, present)] = found
    return found


_MAX_PICKS = 1024  # sets of facts remembered per framework


def _pick(checks: tuple, framework: str, present: frozenset, plan=None) -> Optional[tuple]:
    """The rules of `checks` that run on a plan of `framework` holding the facts `present` (of
    those any of them needs): the same for every such plan while each rule's needs are the
    index's. A rule whose needs are not (a stale index) is asked `Rule.runs_on(plan)`; without
    `plan`, the answer is None."""
    found = []
    for name, needs, indexed in checks:
        if needs <= present:
            rule = _rule(name)
            if rule.needs == indexed:  # the needs just checked are the rule's own: only its frameworks are left
                if rule.applies_to(framework):
                    found.append(rule)
            elif plan is None:
                return None
            elif rule.runs_on(plan):
                found.append(rule)
    return tuple(found)


@functools.cache
def _checks(framework: str) -> tuple:
    """The candidates of `framework` as (module, needs as a set, needs as indexed: None when stale
    and `Rule.runs_on` decides), the union of their needs, and for_plan's picks by (framework,
    facts present). Cached by the framework's name: a key of every candidate would be hashed
    again for every plan."""
    index, files = _stored_index(), _files()
    checks = tuple((name, frozenset(needs), needs if index.get(name, (None,) * 4)[3] == files[name] else None)
                   for name, needs in _candidates(framework))
    return checks, frozenset().union(*(needs for _, needs, _ in checks)), {}


@functools.lru_cache(maxsize=1)
def _codes() -> frozenset:
    """Every rule's code, from the index; a module the index does not list is imported."""
    index = _stored_index()
    fresh = {name for name, size in _files().items() if name in index and index[name][3] == size}
    return frozenset(index[name][0] for name in fresh) | {rule.code for rule in _load(set(_files()) - fresh)}


class Lazy:
    """What the engine takes instead of a tuple of rules: every code (for directives)
    without importing a rule, and the rules that run on a plan, imported when first needed."""

    @property
    def codes(self) -> frozenset:
        return _codes()

    def for_plan(self, plan) -> tuple:
        return for_plan(plan)

    def __iter__(self):
        from batchlint import rules

        return iter(rules.RULES)


LAZY = Lazy()


# What the engine reports is about batchlint reading the file, not about a framework's release.
_ENGINE = "batchlint's own reading of the file, the same whatever release of a framework runs it"


def _no_check(plan):
    return ()


ENGINE_RULES = (
    Rule(
        code="BL001",
        name="parse-error",
        severity="error",
        summary="a config file that cannot be parsed",
        check=_no_check,
        every_release=_ENGINE,
        doc="""
        ## What it does
        Reports a training config (a file one of batchlint's adapters would
        read) that is not valid Python, YAML, TOML, JSON or UTF-8, at the line
        of the error.

        ## Why is this bad?
        The framework will fail to load it too; and nothing else in it can be
        checked until it parses.

        ## Example
        ```yaml
        per_device_train_batch_size: [2
        ```

        ## Use instead
        ```yaml
        per_device_train_batch_size: 2
        ```
        """,
    ),
    Rule(
        code="BL002",
        name="invalid-directive",
        severity="warning",
        summary="a `# batchlint:` comment that batchlint cannot understand",
        check=_no_check,
        every_release=_ENGINE,
        doc="""
        ## What it does
        Reports a `# batchlint:` comment with an unknown directive or a bad
        value, which batchlint therefore ignores.

        ## Why is this bad?
        A mistyped `# batchlint: world_size=8` or `disable=BL10l` silently
        does nothing: checks you meant to configure or suppress behave as if
        the comment were not there.

        ## Example
        ```python
        # batchlint: world_size=8
        ```

        ## Use instead
        ```python
        # batchlint: world-size=8
        ```
        """,
    ),
    Rule(
        code="BL003",
        name="past-reading-limit",
        severity="warning",
        summary="a file past one of batchlint's reading bounds, so not checked",
        check=_no_check,
        every_release=_ENGINE,
        doc="""
        ## What it does
        Reports a file that batchlint stopped reading because it passed one of
        the bounds that keep every run fast and small (the README lists them):
        more than 4 MiB, too many YAML nodes or aliases, nesting deeper than
        any config needs, a TOML key with thousands of parts. The message
        names the bound.

        ## Why is this bad?
        Nothing in the file was checked. Real training configs stay far below
        every bound, so such a file is usually data or generated (exclude it),
        or built to exhaust the tools that read it.

        ## Example
        ```yaml
        a: &a [x, x, x, x, x, x, x, x, x, x]
        b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
        c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
        # ... nine more levels: a billion nodes from a few lines
        ```

        ## Use instead
        ```yaml
        per_device_train_batch_size: 2
        ```
        """,
    ),
    Rule(
        code="BL004",
        name="directive-overridden-by-launch",
        severity="warning",
        summary="a `# batchlint: world-size=N` that the launch line running the config contradicts",
        check=_no_check,
        every_release=_ENGINE,
        doc="""
        ## What it does
        Reports a `world-size` directive (in a config, or in the launch script)
        that disagrees with the world size the launch line running that config
        writes (`torchrun --nproc_per_node 8 --nnodes 2`, `deepspeed --num_gpus 8`,
        `NPROC_PER_NODE=8 NNODES=2 swift sft`). The launch line is what runs, so
        batchlint checks the config with the launch line's W and says the
        directive is not used for that launch. A launch line that assumes a
        factor (no `--nproc_per_node`: a framework default) does not beat a
        directive.

        ## Why is this bad?
        The directive was written for another job size and went stale: every
        check that needs W (global batch, divisibility, layouts) would otherwise
        be judged for the wrong job, and a reader of the config is told a world
        size the job does not have.

        ## Example
        ```python
        # batchlint: world-size=8      (train.sh runs it with torchrun --nproc_per_node 8 --nnodes 2)
        sequence_parallel_size = 4
        ```

        ## Use instead
        ```python
        # batchlint: world-size=16
        sequence_parallel_size = 4
        ```
        """,
    ),
    Rule(
        code="BL005",
        name="unused-suppression",
        severity="warning",
        summary="a `# batchlint: disable=...` that suppresses no finding (opt-in)",
        check=_no_check,
        every_release=_ENGINE,
        doc="""
        ## What it does
        Reports a `# batchlint: disable=...` (or `disable-file=...`, or a bare
        `disable`) whose codes suppress no finding, as ruff's RUF100 does for
        `# noqa`: for each code of the list that suppressed nothing, on the
        line it applies to (or in the file). A code is judged only when every
        rule it names is checked in the run (not `--select`ed away, ignored or
        per-file-ignored), only in a file whose rules ran (it parsed and is a
        training config or a launch script), and only when every lint in the
        run that read the file found it unused: a config's directive that its
        launch script's run needs (a check under the launch line's W) counts
        as used when the script is linted in the same run. A reason after
        ` -- ` is quoted in the message.

        It is opt-in, as RUF100 is outside ruff's default set: select it with
        `--extend-select BL005` (or `extend-select = ["BL005"]`, `select =
        ["BL"]`, `ALL`). Lint the launch scripts with their configs (`batchlint
        .`), not one config alone: a suppression only a launch needs looks
        unused without it. `# batchlint: disable-file=BL005` silences it in a
        file.

        ## Why is this bad?
        A suppression that outlived its finding (the value was fixed, the rule
        changed) hides the next real finding on that line, and tells readers
        of a problem that is not there.

        ## Example
        ```yaml
        packing: false
        group_by_length: true  # batchlint: disable=BL301
        ```

        ## Use instead
        ```yaml
        packing: false
        group_by_length: true
        ```

        ## Fix
        `--fix` removes the directive comment (a whole line when it stands
        alone; a second `# comment` after it is kept), or only the unused codes
        from its list. The fix is safe: a directive changes nothing a framework
        reads.
        """,
    ),
)


def all_rules() -> tuple:
    from batchlint import rules

    return ENGINE_RULES + rules.RULES


def known_codes() -> set:
    """Every code `--select`, `--ignore` and directives may name: the rules'
    and the retired ones (which act on their successors). Read from the index:
    importing every rule would double the start-up of a one-file lint."""
    return {rule.code for rule in ENGINE_RULES} | set(_codes()) | set(RETIRED)


def find(code: str):
    """A rule by code or name; a retired code finds its successor."""
    code = canonical(code.upper())
    return next((rule for rule in all_rules() if rule.code == code or rule.name == code.lower()), None)
