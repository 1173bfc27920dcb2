"""Write into a rule's flagged examples the message and help it reports now (`cargo insta accept` for
rule examples), after a change of wording you have read and meant.

    python tools/pin_examples.py BL101 [BL102 ...]

Each flagged Example's `message=` and `fix=` are replaced by those of the finding on its first flagged
line, as tests/test_rule_examples.py compares them; `fixed=` is left to you. Review the diff.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))


def reported(rule, example) -> tuple:
    """(message, fix) of the rule's first finding on the example's first flagged line."""
    from conftest import committed, lint_text, write

    with tempfile.TemporaryDirectory() as folder:
        if example.before:
            committed(folder, dict(example.files + example.before).items())
        for name, text in example.files:
            write(folder, name, text)
        result = lint_text(folder, example.filename, example.text, example.world_size, example.global_batch,
                           since="HEAD" if example.before else None)
    found = sorted((d for d in result.diagnostics if d.code == rule.code and d.span.line == example.flagged[0]),
                   key=lambda d: d.span.column)
    if not found:
        raise SystemExit(f"{rule.code} {example.filename}: nothing on line {example.flagged[0]}")
    return found[0].message, found[0].fix


def literal(text: str, indent: int) -> str:
    """`text` as a Python string literal, split over lines of at most ~110 columns."""
    width = max(40, 110 - indent)
    if len(_quoted(text)) <= width:
        return _quoted(text)
    parts, rest = [], text
    while len(rest) > width - 2:
        cut = rest.rfind(" ", 0, width - 2)
        cut = cut + 1 if cut > 0 else width - 2
        parts.append(rest[:cut])
        rest = rest[cut:]
    parts.append(rest)
    return ("\n" + " " * indent).join(_quoted(p) for p in parts)


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a Python string literal too


def pin(code: str) -> int:
    from batchlint.rules import find

    rule = find(code)
    if rule is None:
        raise SystemExit(f"no rule {code}")
    module = importlib.import_module(rule.check.__module__)
    path = inspect.getsourcefile(module)
    with open(path, encoding="utf-8") as handle:
        source = handle.read()
    calls = [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Call)
             and getattr(node.func, "id", None) == "Example"]
    flagged = [example for example in rule.examples if example.flagged]
    pinned = [call for call in calls if any(k.arg == "flagged" for k in call.keywords)]
    if len(pinned) != len(flagged):
        raise SystemExit(f"{code}: {len(pinned)} flagged Example calls in {path}, {len(flagged)} flagged examples")
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    edits = []
    for call, example in zip(pinned, flagged):
        message, fix = reported(rule, example)
        for keyword in call.keywords:
            if keyword.arg in ("message", "fix"):
                value = keyword.value
                wanted = message if keyword.arg == "message" else fix
                if isinstance(value, ast.Constant) and value.value == wanted:
                    continue  # pinned already: its layout is kept
                start = offsets[value.lineno - 1] + value.col_offset
                end = offsets[value.end_lineno - 1] + value.end_col_offset
                new = literal(wanted, value.col_offset)
                edits.append((start, end, new))
    for start, end, new in sorted(edits, reverse=True):
        source = source[:start] + new + source[end:]
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(source)
    return len(edits)


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(f"{arg}: {pin(arg)} values pinned")
