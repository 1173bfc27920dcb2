"""The rule registry: every module in this package that defines `RULE`.

Adding a rule is adding one module; `tests/test_registry.py` keeps codes and
names unique and the documentation complete. Engine codes (BL001
parse-error, BL002 invalid-directive, BL003 past-reading-limit) live in the engine; `ENGINE_RULES`
documents them alongside. A retired code is never reused: `RETIRED` (in
batchlint.codes, which imports no rule) redirects it to its successor.
"""

import importlib
import pkgutil

from batchlint.codes import RETIRED, canonical  # noqa: F401 (re-exported: the redirect table)
from batchlint.rule import Rule


def _discover() -> tuple:
    modules = (importlib.import_module(f"{__name__}.{m.name}") for m in pkgutil.iter_modules(__path__))
    return tuple(sorted((m.RULE for m in modules), key=lambda rule: rule.code))


RULES = _discover()


def _no_check(plan):
    return ()


ENGINE_RULES = (
    Rule(
        code="BL001",
        name="parse-error",
        severity="error",
        summary="a config file that cannot be parsed",
        check=_no_check,
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
)


def all_rules() -> tuple:
    return ENGINE_RULES + RULES


def known_codes() -> set:
    """Every code `--select`, `--ignore` and directives may name: the rules'
    and the retired ones (which act on their successors)."""
    return {rule.code for rule in all_rules()} | set(RETIRED)


def find(code: str):
    """A rule by code or name; a retired code finds its successor."""
    code = canonical(code.upper())
    return next((rule for rule in all_rules() if rule.code == code or rule.name == code.lower()), None)
