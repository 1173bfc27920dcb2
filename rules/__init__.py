"""The rules: rules/registry.py maps each code to its module (rules/<group>/<name>.py, which
defines `RULE`); this module loads them, lazily, and picks those that run on a plan.

Engine codes (BL001 parse-error, BL002 invalid-directive, BL003 past-reading-limit,
BL004 directive-overridden-by-launch, BL005 unused-suppression) live in the engine;
`ENGINE_RULES` documents them alongside. A retired code is never reused: `RETIRED` (in
batchlint.codes, which imports no rule) redirects it to its successor.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Iterable, Iterator

from batchlint.codes import RETIRED, canonical  # noqa: F401 (re-exported: the redirect table)
from batchlint.plan import TrainingPlan
from batchlint.rule import Finding, Rule

from .registry import REGISTRY

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional


def module_of(code: str) -> str:
    """The module of the rule `code`, below batchlint.rules ("verl.verl_train_batch_indivisible")."""
    return REGISTRY[code][0]


def _load(codes: Iterable[str]) -> tuple[Rule, ...]:
    return tuple(sorted((_rule(module_of(code)) for code in codes), key=lambda rule: rule.code))


RULES: tuple[Rule, ...]  # every rule, by code: bound by __getattr__ on first use


def __getattr__(name: str) -> tuple[Rule, ...]:
    # RULES is built on first use: a one-file lint imports only the rules its framework can run.
    if name == "RULES":
        global RULES
        RULES = _load(REGISTRY)
        return RULES
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def _rule(module: str) -> Rule:
    rule: Rule = importlib.import_module(f"{__name__}.{module}").RULE
    return rule


def for_plan(plan: TrainingPlan) -> tuple[Rule, ...]:
    """The rules that run on `plan` (exactly those whose `Rule.runs_on` holds), importing only those
    the registry says judge its framework and whose needs the plan holds."""
    framework = plan.framework
    checks, needed, picks = _checks(framework)
    present = frozenset(plan.present(needed))  # each distinct fact asked once per plan
    cached = picks.get(present)
    if cached is not None:
        return cached
    found, exact = [], True
    for module, needs in checks:
        if needs <= present:
            rule = _rule(module)
            if frozenset(rule.needs) != needs:  # a stale row (tests/test_registry.py): runs_on decides
                exact = False
                if rule.runs_on(plan):
                    found.append(rule)
            elif rule.applies_to(framework):
                found.append(rule)
    if exact and len(picks) < _MAX_PICKS:
        picks[present] = tuple(found)
    return tuple(found)


_MAX_PICKS = 1024  # sets of facts remembered per framework


_Checks = tuple[tuple[tuple[str, frozenset[str]], ...], frozenset[str], dict[frozenset[str], tuple[Rule, ...]]]


@functools.cache
def _checks(framework: str) -> _Checks:
    """The rules the registry says may judge a plan of `framework`, as (module, needs), in code
    order; the union of their needs; and for_plan's picks by the facts present."""
    checks = tuple((module, frozenset(needs)) for _, (module, frameworks, needs) in sorted(REGISTRY.items())
                   if frameworks is None or framework in frameworks)
    return checks, frozenset[str]().union(*(needs for _, needs in checks)), {}


class Lazy:
    """What the engine takes instead of a tuple of rules: every code (for directives)
    without importing a rule, and the rules that run on a plan, imported when first needed."""

    @property
    def codes(self) -> frozenset[str]:
        return frozenset(REGISTRY)

    def for_plan(self, plan: TrainingPlan) -> tuple[Rule, ...]:
        return for_plan(plan)

    def __iter__(self) -> Iterator[Rule]:
        return iter(_load(REGISTRY))


LAZY = Lazy()


# What the engine reports is about batchlint reading the file, not about a framework's release.
_ENGINE = "batchlint's own reading of the file, the same whatever release of a framework runs it"


def _no_check(plan: TrainingPlan) -> Iterator[Finding]:
    return iter(())


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


def all_rules() -> tuple[Rule, ...]:
    return ENGINE_RULES + _load(REGISTRY)


def known_codes() -> set[str]:
    """Every code `--select`, `--ignore` and directives may name: the rules'
    and the retired ones (which act on their successors). Read from the index:
    importing every rule would double the start-up of a one-file lint."""
    return {rule.code for rule in ENGINE_RULES} | set(REGISTRY) | set(RETIRED)


def find(code: str) -> Optional[Rule]:
    """A rule by code or name; a retired code finds its successor."""
    code = canonical(code.upper())
    return next((rule for rule in all_rules() if rule.code == code or rule.name == code.lower()), None)
