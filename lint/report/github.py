"""GitHub Actions workflow commands: one annotation per finding, errors first.

GitHub shows at most 10 errors and 10 warnings per step, so the full table
also goes to $GITHUB_STEP_SUMMARY when that is set.
"""

from __future__ import annotations

import html
import os

from ..diagnostic import SEVERITY_ORDER
from ..lazy_pattern import LazyPattern
from . import printable, workspace_path

_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    return printable(text, keep_lines=True).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def repo_path(path: str) -> str:
    """The path relative to the checkout ($GITHUB_WORKSPACE), where GitHub looks
    for annotated files, even when batchlint ran in a subfolder."""
    return workspace_path(path, "GITHUB_WORKSPACE")


def annotation(d) -> str:
    span = d.span
    path = repo_path(d.path)
    props = [f"file={escape_property(path)}", f"line={span.line}"]
    if span.end_line == span.line:
        props += [f"col={span.column}", f"endLine={span.end_line}", f"endColumn={span.end_column}"]
    else:
        props.append(f"endLine={span.end_line}")
    props.append(f"title={escape_property(f'{d.code} {d.name}')}")
    message = "\n".join((f"{path}:{span.line}:{span.column} {d.code} {d.message}",) + d.detail)
    return f"::{_LEVEL.get(d.severity, 'warning')} {','.join(props)}::{escape_data(message)}"


def render(diagnostics: list, summary) -> str:
    ordered = sorted(diagnostics, key=lambda d: (SEVERITY_ORDER.get(d.severity, 9),) + d.sort_key())
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    warning = ""
    if step_summary:
        try:
            with open(step_summary, "a", encoding="utf-8") as handle:
                handle.write(markdown_table(ordered, summary))
        except OSError as exc:  # the annotations matter more than the summary
            warning = f"::warning title=batchlint::{escape_data(f'cannot write the job summary: {exc.strerror or exc}')}\n"
    return warning + "".join(annotation(d) + "\n" for d in ordered)


# Markdown's inline punctuation, escaped so a config's text cannot become a
# link, an image, emphasis or a table cell in a public job summary.
_MARKDOWN = LazyPattern(r"([\\`*_{}\[\]()#+!|~])")


def markdown_text(text: str) -> str:
    """Config text as literal text in GitHub-flavoured Markdown (HTML escaped too)."""
    return _MARKDOWN.sub(r"\\\1", html.escape(printable(text), quote=True))


def markdown_table(diagnostics: list, summary) -> str:
    head = (
        f"### batchlint: {len(diagnostics)} finding{'s' if len(diagnostics) != 1 else ''} "
        f"in {summary.configs} training config{'s' if summary.configs != 1 else ''}\n\n"
    )
    if not diagnostics:
        return head
    rows = ["| Severity | Code | Location | Message |", "| --- | --- | --- | --- |"]
    for d in diagnostics:
        where = markdown_text(f"{repo_path(d.path)}:{d.span.line}:{d.span.column}")
        rows.append(f"| {d.severity} | {d.code} {d.name} | <code>{where}</code> | {markdown_text(d.text)} |")
    return head + "\n".join(rows) + "\n\n"


def statistics_notices(rows: list, total: int) -> str:
    """`--statistics` as workflow notices: one per rule, most findings first, then the total."""
    lines = []
    for row in rows:
        text = f"{row['count']} x {row['code']} {row['name']}" + (" (fixable)" if row["fixable"] else "")
        lines.append(f"::notice title={escape_property('batchlint ' + row['code'])}::{escape_data(text)}")
    lines.append(f"::notice title=batchlint::{total} finding{'s' if total != 1 else ''} in total")
    return "".join(line + "\n" for line in lines)
