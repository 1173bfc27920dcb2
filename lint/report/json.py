"""A JSON list of findings, one object each (a stable contract)."""

from __future__ import annotations

import json


def as_dict(d) -> dict:
    return {
        "code": d.code,
        "name": d.name,
        "severity": d.severity,
        "message": d.message,
        "fix": d.fix,
        "path": d.path,
        "line": d.span.line,
        "column": d.span.column,
        "end_line": d.span.end_line,
        "end_column": d.span.end_column,
        "framework": d.framework,
        "related": [
            {"message": r.message, "path": r.path, "line": r.span.line, "column": r.span.column}
            for r in d.related
        ],
    }


def render(diagnostics: list, summary) -> str:
    return json.dumps([as_dict(d) for d in diagnostics], indent=2, ensure_ascii=False) + "\n"
