"""GitLab Code Quality: a JSON list of issues, one per finding, for `artifacts: reports: codequality:`.

Each issue has GitLab's fields: `description` (the code, then the message and the fix: GitLab's
merge request widget does not show `check_name`), `check_name` (the code), `fingerprint` (stable
and unique: lint/fingerprint.py's key, which survives edits elsewhere in the file, told apart by
occurrence), `severity` (GitLab's set, as ruff maps it: info -> info, warning -> minor, error ->
major) and `location`: `path` relative to $CI_PROJECT_DIR when set, and `lines.begin`/`lines.end`,
the form every GitLab release reads.
"""

from __future__ import annotations

import hashlib
import json

from . import fingerprints, workspace_path

SEVERITY = {"info": "info", "warning": "minor", "error": "major"}


def issue_fingerprint(key: str, occurrence: int) -> str:
    """The key itself for its first finding; a hash of key and occurrence for the next ones."""
    if occurrence == 1:
        return key
    return hashlib.sha256(f"{key}:{occurrence}".encode()).hexdigest()[:32]


def last_line(span) -> int:
    """The last line the span covers: an end at column 1 of a line (exclusive) stops before it."""
    end = span.end_line - 1 if span.end_column == 1 and span.end_line > span.line else span.end_line
    return max(end, span.line)


def render(diagnostics: list, summary) -> str:
    issues = []
    for d, (key, occurrence) in zip(diagnostics, fingerprints(diagnostics)):
        issues.append({
            "description": f"{d.code}: {d.text}",
            "check_name": d.code,
            "fingerprint": issue_fingerprint(key, occurrence),
            "severity": SEVERITY.get(d.severity, "minor"),
            "location": {
                "path": workspace_path(d.path, "CI_PROJECT_DIR"),
                "lines": {"begin": d.span.line, "end": last_line(d.span)},
            },
        })
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"
