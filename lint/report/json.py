"""A JSON list of findings, one object each (a stable contract); `json-lines`: one per line.

`fix` is ruff's object: `message` (what to change), `applicability` (`safe` and
`unsafe`: `edits` that `--fix` applies, the unsafe ones only with
`--unsafe-fixes`; `display-only`: no edit, the message is the fix) and `edits`
(`path`, 1-based `line`/`column` to `end_line`/`end_column`, end exclusive,
columns in characters, and the `content` that replaces that range). `url` is
the rule's page (null when the project declares no documentation URL).
"""

from __future__ import annotations

import json

from . import rule_url


def fix_of(d) -> dict | None:
    if not d.fix and not d.edits:
        return None
    return {
        "message": d.fix,
        "applicability": ("unsafe" if d.unsafe_fix else "safe") if d.edits else "display-only",
        "edits": [
            {"path": e.path or d.path, "line": e.span.line, "column": e.span.column,
             "end_line": e.span.end_line, "end_column": e.span.end_column, "content": e.replacement}
            for e in d.edits
        ],
    }


def as_dict(d) -> dict:
    return {
        "code": d.code,
        "name": d.name,
        "severity": d.severity,
        "message": d.message,
        "fix": fix_of(d),
        "url": rule_url(d.code),
        "path": d.path,
        "line": d.span.line,
        "column": d.span.column,
        "end_line": d.span.end_line,
        "end_column": d.span.end_column,
        "framework": d.framework,
        "notes": list(d.notes),
        "related": [
            {"message": r.message, "path": r.path, "line": r.span.line, "column": r.span.column}
            for r in d.related
        ],
    }


def render(diagnostics: list, summary) -> str:
    return json.dumps([as_dict(d) for d in diagnostics], indent=2, ensure_ascii=False) + "\n"


def render_lines(diagnostics: list, summary) -> str:
    return "".join(json.dumps(as_dict(d), ensure_ascii=False) + "\n" for d in diagnostics)
