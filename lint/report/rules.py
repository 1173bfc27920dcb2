"""A rule as its page (`batchlint rule CODE`, docs/rules/CODE.md), as JSON, and as a row of the
list (`batchlint rule --all`): one text for the command line and the generated docs."""

from __future__ import annotations

from . import rule_page, rule_url

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional


def page(rule, scope: str) -> str:
    """The rule's page in Markdown: its title, severity, scope, module and documentation."""
    fix = " Its fix is unsafe: `--fix` makes it only with `--unsafe-fixes`." if rule.unsafe_fix else ""
    where = f" Defined in `{source_file(rule.code)}`." if source_file(rule.code) else ""
    return (f"# {rule.code} {rule.name}\n\nSeverity: {rule.severity}. Applies to: {scope}.{fix}{where}\n\n"
            f"{rule.documentation}\n\n## When it holds\n{releases(rule)}")


def source_file(code: str) -> str:
    """The rule's module as the repository names it (rules/<group>/<rule_name>.py), from
    the registry; "" for the engine's codes."""
    from batchlint.rules.registry import REGISTRY

    entry = REGISTRY.get(code)
    return f"rules/{entry[0].replace('.', '/')}.py" if entry else ""


def releases(rule) -> str:
    """The releases in which the rule's verdict holds, with the sources at each boundary (lint/premise.py)."""
    if not rule.premises:
        return f"In every release: {rule.every_release or 'not declared'}\n"
    lines = []
    for premise in rule.premises:
        check = f" ({premise.name})" if premise.name else ""
        lines.append(f"- {premise.span_text}{check}; checked through {premise.distribution.shown} "
                     f"{(premise.distribution.releases or ('?',))[-1]}. Sources: {premise.source or 'not given'}.")
    return "\n".join(lines) + "\n"


def as_dict(rule, scope: str) -> dict:
    return {
        "code": rule.code,
        "name": rule.name,
        "severity": rule.severity,
        "summary": rule.summary,
        "applies_to": scope,
        "unsafe_fix": rule.unsafe_fix,
        "page": rule_page(rule.code),
        "source": source_file(rule.code),
        "url": rule_url(rule.code),
        "explanation": rule.documentation,
    }


def table(rules: list, width: Optional[int] = None) -> str:
    """One line per rule, the columns as wide as the longest name and severity."""
    names = max((len(r.name) for r in rules), default=0)
    severities = max((len(r.severity) for r in rules), default=0)
    return "".join(f"{r.code}  {r.name:<{names}}  {r.severity:<{severities}}  {r.summary}\n" for r in rules)
