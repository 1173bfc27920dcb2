"""reviewdog's Diagnostic Format (rdjson, its `DiagnosticResult`): for `reviewdog -f=rdjson`.

`source` names batchlint (and its page when pyproject's [project.urls] declares one); each
diagnostic has the message and the fix as `message`, `severity` (ERROR, WARNING or INFO),
`code.value` (and `code.url`, the rule's page, when declared) and `location`: `path` and `range`,
`start` to `end` (exclusive). reviewdog counts columns in UTF-8 bytes, so a column is counted
again on the text of its line. A finding whose fix `--fix` would apply (with `--unsafe-fixes`, an
unsafe one too) carries its edits as `suggestions`, which reviewdog posts as suggested changes;
a fix that edits another file than the finding's is left out (a suggestion applies to its file).
"""

from __future__ import annotations

import json

from . import fixable, home_url, rule_url

SEVERITY = {"error": "ERROR", "warning": "WARNING", "info": "INFO"}


def byte_column(line: str, column: int) -> int:
    """A 1-based column in characters as a 1-based column in UTF-8 bytes (past the line's end:
    one byte per column, as the line break and what a span may reach beyond it are)."""
    before = line[: column - 1]
    return len(before.encode("utf-8", "surrogatepass")) + (column - 1 - len(before)) + 1


def _position(lines, path: str, line: int, column: int) -> dict:
    return {"line": line, "column": byte_column(lines.line(path, line), column)}


def _range(lines, path: str, span) -> dict:
    return {"start": _position(lines, path, span.line, span.column),
            "end": _position(lines, path, span.end_line, span.end_column)}


def diagnostic(d, lines, unsafe: bool = False) -> dict:
    url = rule_url(d.code)
    found = {
        "message": d.text,
        "location": {"path": d.path, "range": _range(lines, d.path, d.span)},
        "severity": SEVERITY.get(d.severity, "WARNING"),
        "code": {"value": d.code, **({"url": url} if url else {})},
    }
    if fixable(d, unsafe) and all((e.path or d.path) == d.path for e in d.edits):
        found["suggestions"] = [{"range": _range(lines, d.path, e.span), "text": e.replacement} for e in d.edits]
    return found


def render(diagnostics: list, summary) -> str:
    from ..fingerprint import SourceLines

    lines = SourceLines()
    home = home_url()
    result = {
        "source": {"name": "batchlint", **({"url": home} if home else {})},
        "diagnostics": [diagnostic(d, lines, summary.unsafe_fixes) for d in diagnostics],
    }
    return json.dumps(result, indent=2, ensure_ascii=False) + "\n"
