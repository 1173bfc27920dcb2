"""Reporters turn diagnostics into text; they never decide anything."""

from __future__ import annotations

import functools

from ..document import without_surrogates
from ..lazy_pattern import LazyPattern

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

# `concise` (one line a finding) and `full` (text with each finding's source line) are ruff's names; the
# others are ruff's names for the formats CI tools read (docs/output-formats.md).
FORMATS = ("text", "concise", "full", "grouped", "github", "gitlab", "azure", "junit", "pylint", "rdjson",
           "json", "json-lines", "sarif")

# The module and function that write each machine format (text and grouped take more arguments).
_RENDERERS = {
    "json": ("json", "render"), "json-lines": ("json", "render_lines"), "github": ("github", "render"),
    "sarif": ("sarif", "render"), "gitlab": ("gitlab", "render"), "azure": ("azure", "render"),
    "junit": ("junit", "render"), "pylint": ("pylint", "render"), "rdjson": ("rdjson", "render"),
}


def render(fmt: str, diagnostics: list, summary: Summary, color: bool = False, source=None) -> str:
    """`source` (SourceLines): show each finding's line under it, in text and grouped output."""
    import importlib

    if fmt == "grouped":
        from .grouped import render as grouped

        return grouped(diagnostics, summary, source=source)
    if fmt not in _RENDERERS:
        from .text import render as text

        return text(diagnostics, summary, color=color, source=source, concise=fmt == "concise")
    module, function = _RENDERERS[fmt]
    return getattr(importlib.import_module(f".{module}", __name__), function)(diagnostics, summary)


def fixable(d, unsafe: bool = False) -> bool:
    """Whether `--fix` applies the finding's edits (an unsafe fix's only with `--unsafe-fixes`)."""
    return bool(d.edits) and (unsafe or not d.unsafe_fix)


def statistics(diagnostics: list, unsafe: bool = False) -> list:
    """How many findings each rule has, most first: {code, name, count, fixable, fixable_count} (ruff's)."""
    rows: dict = {}
    for d in diagnostics:
        row = rows.setdefault(d.code, {"code": d.code, "name": d.name, "count": 0, "fixable": False, "fixable_count": 0})
        row["count"] += 1
        if fixable(d, unsafe):
            row["fixable"] = True
            row["fixable_count"] += 1
    return sorted(rows.values(), key=lambda row: (-row["count"], row["code"]))


def statistics_report(fmt: str, diagnostics: list, summary: Summary) -> str:
    """`--statistics` in the output format asked for."""
    rows = statistics(diagnostics, summary.unsafe_fixes)
    if fmt in ("json", "json-lines"):
        return dump(rows, fmt)
    if fmt == "sarif":
        from .sarif import render

        return render(diagnostics, summary, statistics=rows)
    if fmt == "github":
        from .github import statistics_notices

        return statistics_notices(rows, len(diagnostics))
    lines = [f"{row['count']:>5}  {row['code']}  {'[*]' if row['fixable'] else '[ ]'} {row['name']}" for row in rows]
    return "\n".join(lines + [f"{len(diagnostics):>5}  total"]) + "\n"


def dump(rows: list, fmt: str) -> str:
    """Rows as one JSON list (`json`), or one object a line (`json-lines`)."""
    import json

    if fmt == "json-lines":
        return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    return json.dumps(rows, indent=2, ensure_ascii=False) + "\n"


@functools.lru_cache(maxsize=1)
def project_urls() -> dict:
    """pyproject's [project.urls] as installed, {lowercase label: URL}, https URLs only; empty when
    the project declares none (no link is made up)."""
    try:
        from importlib.metadata import PackageNotFoundError, metadata
    except ImportError:  # pragma: no cover
        return {}
    try:
        entries = metadata("batchlint").get_all("Project-URL") or []
    except PackageNotFoundError:
        return {}
    urls: dict = {}
    for entry in entries:
        label, _, url = entry.partition(",")
        if url.strip().startswith("https://"):
            urls.setdefault(label.strip().lower(), url.strip().rstrip("/"))
    return urls


def docs_base() -> Optional[str]:
    """Where the repository's docs/ folder is published: the `Documentation` entry of [project.urls]."""
    return project_urls().get("documentation")


def home_url() -> Optional[str]:
    """The project's own page, for a report's tool URL: the first of [project.urls]' `Homepage`,
    `Repository`, `Source` and `Documentation` entries that is declared; None when none is."""
    urls = project_urls()
    return next((urls[label] for label in ("homepage", "repository", "source", "documentation") if label in urls), None)


def rule_page(code: str) -> str:
    """The rule's page, as a path in the repository (docs/generate.py writes it)."""
    return f"docs/rules/{code}.md"


def rule_url(code: str) -> Optional[str]:
    """The rule's page as a URL (its `rule_page` under `docs_base`), or None."""
    base = docs_base()
    return f"{base}/rules/{code}.md" if base else None


class Summary:
    """Counts the reporters print after the findings, and how they print them."""

    def __init__(self, files: int, configs: int, unreadable: int = 0, unsafe_fixes: bool = False,
                 quiet: bool = False, fixed: int = 0, show_fixes: bool = False):
        self.files = files
        self.configs = configs
        self.unreadable = unreadable
        self.unsafe_fixes = unsafe_fixes  # `--unsafe-fixes`: unsafe fixes count as fixable
        self.quiet = quiet  # `-q`: findings only, no summary line
        self.fixed = fixed  # findings `--fix` fixed in this run
        self.show_fixes = show_fixes  # `--show-fixes` without `--fix`: each fix's edits under its finding


# C0 and C1 controls, DEL, and the bidirectional overrides and isolates that can
# make a terminal show other text than the file holds ("Trojan source").
_CONTROLS = LazyPattern("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str, keep_lines: bool = False) -> str:
    """`text` safe to print: control characters out (tabs and, with `keep_lines`,
    line ends kept; else a line end becomes a space), lone surrogates (from
    undecodable file names) shown as U+FFFD."""
    if not keep_lines:
        text = text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
        if text.isascii() and text.isprintable():
            return text  # no control character to take out: most messages, without the pattern
    text = without_surrogates(text)
    return _CONTROLS.sub("", text) if keep_lines else _CONTROLS.sub("", text.replace("\t", " "))


def fingerprints(diagnostics: list, lines=None) -> list:
    """(fingerprint, occurrence) of each finding: lint/fingerprint.py's key (code, path, text of the
    line: it survives edits elsewhere in the file) and how many findings before it, plus one, had
    that key, so that two findings on lines of the same text stay apart, as GitHub numbers them."""
    from ..fingerprint import SourceLines, fingerprint

    lines = lines if lines is not None else SourceLines()
    seen: dict = {}
    keyed = []
    for d in diagnostics:
        key = fingerprint(d, lines)
        seen[key] = seen.get(key, 0) + 1
        keyed.append((key, seen[key]))
    return keyed


def workspace_path(path: str, variable: str) -> str:
    """`path` relative to the checkout a CI system names in environment variable `variable`
    ($GITHUB_WORKSPACE, $CI_PROJECT_DIR), where it looks for the files reported, even when
    batchlint ran in a subfolder; as given when the variable is not set."""
    import os

    from ..discover import display_path

    workspace = os.environ.get(variable)
    return display_path(path, workspace) if workspace else path
