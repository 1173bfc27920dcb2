"""Create a rule: its module in its group's folder, named after it, with its examples, and its row in
rules/registry.py.

    python tools/new_rule.py GROUP NAME --code BLnnn --severity error --summary TEXT
                             [--subject module:Class] [--needs FACT ...]

GROUP is a folder of rules/ (`verl`, `generic`, ...; a new one is made); NAME is the rule's name
(`verl-rollout-n-too-small`), so the module is rules/verl/verl_rollout_n_too_small.py. `--subject`
names the typed settings the rule judges (`verl:VerlSettings`, a class of lint/frameworks/, whose
FRAMEWORKS the row repeats); `--needs` the plan facts it reads (`parallel.pp`).
The module it writes runs at once and finds nothing: write the check, the documentation and the
examples (its flagged example fails tests/test_rule_examples.py until the check flags it). Nothing
existing is overwritten. `--root` writes into another checkout (the tests use it).
"""

from __future__ import annotations

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from registry_rows import add_row  # noqa: E402

MODULE = '''"""
## What it does
{summary_sentence}

## Why is this bad?
What the framework does with such a config: the error it raises at start-up, or what it trains instead.

## Example
```yaml
# the smallest config that shows the mistake
```

## Use instead
```yaml
# the same config, fixed
```

## Source
The framework's released source that makes the check: file:line @ the first and the last release it holds for.
"""

from collections.abc import Iterator

{subject_import}from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Rule


def check(plan: TrainingPlan{subject_parameter}) -> Iterator[Finding]:
    # Yield Finding(span=<the value at fault>, message=<one clause with the numbers>,
    #               notes=(<the arithmetic>, <where the numbers came from>), fix=<the change>).
    yield from ()


RULE = Rule(
    code="{code}",
    name="{name}",
    severity="{severity}",
    summary="{summary}",
    check=check,{subject_argument}
    needs={needs!r},
    # The releases that refuse as the rule says (lint/premise.py Premise), or why every release does.
    every_release="",
    doc=__doc__,
    examples=(
        Example("flagged.yaml", """\\
key: value
""", flagged=(1,), message="", fix=""),
        Example("clean.yaml", """\\
key: value
"""),
    ),
)
'''


def module_name(name: str) -> str:
    return name.replace("-", "_")


def write(root: str, group: str, name: str, code: str, severity: str, summary: str,
          subject: str = "", needs: tuple = (), frameworks: object = None) -> list:
    """Write the rule and its registry row under `root`; the paths written."""
    folder = os.path.join(root, "rules", group)
    path = os.path.join(folder, f"{module_name(name)}.py")
    written = []
    if not os.path.isdir(folder):
        os.makedirs(folder)
        with open(os.path.join(folder, "__init__.py"), "x", encoding="utf-8") as handle:
            handle.write(f'"""Rules about {group}."""\n')
        written.append(os.path.join("rules", group, "__init__.py"))
    subject_module, _, subject_class = subject.partition(":")
    with open(path, "x", encoding="utf-8") as handle:
        handle.write(MODULE.format(
            code=code, name=name, severity=severity, summary=summary, needs=tuple(needs),
            summary_sentence=f"Flags {summary}.",
            subject_import=f"from batchlint.frameworks.{subject_module} import {subject_class}\n" if subject else "",
            subject_parameter=f", settings: {subject_class}" if subject else "",
            subject_argument=f"\n    subject={subject_class}," if subject else ""))
    written.append(os.path.relpath(path, root))
    add_row(os.path.join(root, "rules", "registry.py"), "REGISTRY", code,
            f'    "{code}": ("{group}.{module_name(name)}", {_literal(frameworks)}, {_literal(needs)}),')
    written.append(os.path.join("rules", "registry.py"))
    return written


def _literal(names: object) -> str:
    """A tuple of strings as the registry writes it (double quotes), or None."""
    if names is None:
        return "None"
    assert isinstance(names, tuple)
    return "(" + ", ".join(f'"{name}"' for name in names) + ("," if len(names) == 1 else "") + ")"


def frameworks_of(root: str, subject: str) -> object:
    """FRAMEWORKS of the subject class `module:Class` of lint/frameworks/, as its module assigns it (read,
    not imported: the checkout written into need not be the one running)."""
    import ast

    module, _, name = subject.partition(":")
    with open(os.path.join(root, "lint", "frameworks", f"{module}.py"), encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    constants = {target.id: node.value for node in tree.body if isinstance(node, ast.Assign)
                 for target in node.targets if isinstance(target, ast.Name)}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            for item in node.body:
                targets = item.targets if isinstance(item, ast.Assign) else \
                    [item.target] if isinstance(item, ast.AnnAssign) else []
                if any(getattr(t, "id", "") == "FRAMEWORKS" for t in targets):
                    value = getattr(item, "value", None)
                    return tuple(ast.literal_eval(constants.get(e.id, e) if isinstance(e, ast.Name) else e)
                                 for e in value.elts) if isinstance(value, ast.Tuple) else None
            return None
    raise SystemExit(f"new_rule: lint/frameworks/{module}.py has no class {name}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("group")
    parser.add_argument("name")
    parser.add_argument("--code", required=True)
    parser.add_argument("--severity", choices=("error", "warning", "info"), required=True)
    parser.add_argument("--summary", required=True, help="what the rule flags, as `batchlint rule` lists it")
    parser.add_argument("--subject", default="", help="module:Class of lint/frameworks/, the settings it judges")
    parser.add_argument("--needs", nargs="*", default=(), help="the plan facts it reads (micro_batch, parallel.pp)")
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    args = parser.parse_args(argv)
    if not re.fullmatch(r"[a-z][a-z0-9_]*", args.group):
        parser.error("GROUP: a folder name of rules/ (lower-case letters, digits, underscores)")
    if not re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", args.name):
        parser.error("NAME: lower-case words joined by dashes")
    if not re.fullmatch(r"BL[1-9][0-9]{2}", args.code):
        parser.error("--code: BL followed by three digits (BL0xx are the engine's)")
    if args.subject and not re.fullmatch(r"[a-z_0-9]+:[A-Za-z_0-9]+", args.subject):
        parser.error("--subject: module:Class, a class of lint/frameworks/<module>.py")
    with open(os.path.join(args.root, "rules", "registry.py"), encoding="utf-8") as handle:
        registry = handle.read()
    if f'"{args.code}":' in registry or f'.{module_name(args.name)}"' in registry:
        print(f"new_rule: {args.code} or {args.name} is in rules/registry.py already; nothing written", file=sys.stderr)
        return 2
    target = os.path.join(args.root, "rules", args.group, f"{module_name(args.name)}.py")
    if os.path.exists(target):
        print(f"new_rule: would overwrite {os.path.relpath(target, args.root)}; nothing written", file=sys.stderr)
        return 2
    frameworks = frameworks_of(args.root, args.subject) if args.subject else None
    for path in write(args.root, args.group, args.name, args.code, args.severity, args.summary, args.subject,
                      tuple(args.needs), frameworks):
        print(f"wrote {path}")
    print(f"then: write the check and its examples, `python docs/generate.py`, and "
          f"`pytest tests/test_rule_examples.py -k {args.code} tests/test_registry.py`")
    return 0


if __name__ == "__main__":
    sys.exit(main())
