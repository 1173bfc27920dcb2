"""GitHub Actions workflow commands: one annotation per finding, errors first.

GitHub shows at most 10 errors and 10 warnings per step, so the full table
also goes to $GITHUB_STEP_SUMMARY when that is set.
"""

from __future__ import annotations

import os

from ..diagnostic import SEVERITY_ORDER
from ..discover import display_path

_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def repo_path(path: str) -> str:
    """The path relative to the checkout ($GITHUB_WORKSPACE), where GitHub looks
    for annotated files, even when batchlint ran in a subfolder."""
    workspace = os.environ.get("GITHUB_WORKSPACE")
    return display_path(path, workspace) if workspace else path


def annotation(d) -> str:
    span = d.span
    path = repo_path(d.path)
    props = [f"file={escape_property(path)}", f"line={span.line}"]
    if span.end_line == span.line:
        props += [f"col={span.column}", f"endLine={span.end_line}", f"endColumn={span.end_column}"]
    else:
        props.append(f"endLine={span.end_line}")
    props.append(f"title={escape_property(f'{d.code} {d.name}')}")
    message = f"{path}:{span.line}:{span.column} {d.code} {d.text}"
    return f"::{_LEVEL.get(d.severity, 'warning')} {','.join(props)}::{escape_data(message)}"


def render(diagnostics: list, summary) -> str:
    ordered = sorted(diagnostics, key=lambda d: (SEVERITY_ORDER.get(d.severity, 9),) + d.sort_key())
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        with open(step_summary, "a", encoding="utf-8") as handle:
            handle.write(markdown_table(ordered, summary))
    return "".join(annotation(d) + "\n" for d in ordered)


def markdown_table(diagnostics: list, summary) -> str:
    head = (
        f"### batchlint: {len(diagnostics)} finding{'s' if len(diagnostics) != 1 else ''} "
        f"in {summary.configs} training config{'s' if summary.configs != 1 else ''}\n\n"
    )
    if not diagnostics:
        return head
    rows = ["| Severity | Code | Location | Message |", "| --- | --- | --- | --- |"]
    for d in diagnostics:
        text = d.text.replace("|", "\\|").replace("\n", " ")
        rows.append(f"| {d.severity} | {d.code} {d.name} | `{repo_path(d.path)}:{d.span.line}:{d.span.column}` | {text} |")
    return head + "\n".join(rows) + "\n\n"
