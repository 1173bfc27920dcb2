"""Retired rule codes and where they went.

A code is never reused: when a rule is replaced (three copies of one check
merged into one generic rule, say), its old code redirects to the new one, so
`--select`, `--ignore`, per-file ignores, `# batchlint: disable=` comments and
baseline entries written with the old code keep acting on the same check. This
module is separate from the rule registry so that reading settings, directives
and baselines imports no rule.
"""

from __future__ import annotations

# Retired code -> the code of the rule that does its check now.
RETIRED: dict[str, str] = {
    # One generic generation-batch rule (BL170 rl-generation-batch) replaced three
    # framework copies; each adapter now says which checks its framework makes.
    "BL121": "BL170",  # trl-generation-batch-indivisible
    "BL152": "BL170",  # axolotl-grpo-generation-batch
    "BL153": "BL170",  # swift-megatron-grpo-generation-batch
}


def canonical(code: str) -> str:
    """The code that is reported for `code`: its successor if it is retired
    (following a chain of retirements), else itself. Prefixes (BL1) and ALL
    are not codes and pass through."""
    seen = set()
    while code in RETIRED and code not in seen:
        seen.add(code)
        code = RETIRED[code]
    return code


def canonical_all(selectors) -> set:
    """Selectors with every retired code replaced by its successor."""
    return {canonical(s) for s in selectors}
