"""SARIF 2.1.0, for GitHub code scanning (`github/codeql-action/upload-sarif`).

Each rule that has a result is described in the driver (id, name, short and
full description, help, default level), as GitHub's ingestion takes it, and
each result's `ruleIndex` points at its rule there; the driver's
`informationUri` is the project's page when pyproject's [project.urls] declares
one, else it is left out. Every finding is a result with a repo-relative location
and a `primaryLocationLineHash` computed from the code and the text of its
line, so a finding keeps its identity when lines above it move. A rule
links its page (`helpUri`, when the project declares where its docs are); a
finding with edits carries them as `fixes` (artifactChanges whose replacements
delete a region and insert text; an unsafe fix says so in its properties).
`--statistics` adds the count per rule as the run's `properties.statistics`.
"""

from __future__ import annotations

import json
import re

from .. import __version__
from ..discover import display_path
from . import fingerprints, home_url, rule_url

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def render(diagnostics: list, summary, statistics: list | None = None) -> str:
    from batchlint.rules import all_rules

    found = {d.code for d in diagnostics}
    rules = [rule for rule in all_rules() if rule.code in found]  # in the registry's order
    index = {rule.code: i for i, rule in enumerate(rules)}
    results = [_result(d, index, f"{key}:{n}") for d, (key, n) in zip(diagnostics, fingerprints(diagnostics))]
    home = home_url()
    log: dict[str, Any] = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "batchlint",
                        "version": __version__,
                        **({"informationUri": home} if home else {}),
                        "rules": [_descriptor(rule) for rule in rules],
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    if statistics is not None:
        log["runs"][0]["properties"] = {"statistics": statistics}
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def _descriptor(rule) -> dict:
    from ..applies import frameworks_for  # imports the engine: only when SARIF is written
    doc = rule.documentation
    url = rule_url(rule.code)
    return {
        "id": rule.code,
        **({"helpUri": url} if url else {}),
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": _section(doc, "What it does") or rule.summary},
        "help": {"text": doc or rule.summary, "markdown": doc or rule.summary},
        "defaultConfiguration": {"level": _LEVEL.get(rule.severity, "warning")},
        # Empty: every framework (a rule that needs no fact).
        "properties": {"frameworks": list(frameworks_for(rule) or ())},
    }


def _section(doc: str, title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", doc, re.S | re.M)
    return " ".join(match.group(1).split()) if match else ""


def _result(d, index: dict, line_hash: str) -> dict:
    result = {
        "ruleId": d.code,
        "level": _LEVEL.get(d.severity, "warning"),
        "message": {"text": d.message},
        "locations": [_location(d.path, d.span)],
        "partialFingerprints": {"primaryLocationLineHash": line_hash},
    }
    if d.notes or d.fix:  # the detail below the message, as fields (full text output prints them)
        result["properties"] = {"notes": list(d.notes), "help": d.fix or ""}
    if d.code in index:
        result["ruleIndex"] = index[d.code]
    if d.edits:
        result["fixes"] = [_fix(d)]
    if d.related:
        result["relatedLocations"] = [
            dict(_location(r.path, r.span), id=i, message={"text": r.message}) for i, r in enumerate(d.related)
        ]
    return result


def _fix(d) -> dict:
    changes: dict = {}  # path -> replacements, in the order of the edits
    for edit in d.edits:
        changes.setdefault(edit.path or d.path, []).append({
            "deletedRegion": {"startLine": edit.span.line, "startColumn": edit.span.column,
                              "endLine": edit.span.end_line, "endColumn": edit.span.end_column},
            "insertedContent": {"text": edit.replacement},
        })
    fix = {
        "description": {"text": d.fix or f"the fix {d.code} offers"},
        "artifactChanges": [{"artifactLocation": {"uri": display_path(path), "uriBaseId": "%SRCROOT%"},
                             "replacements": replacements} for path, replacements in changes.items()],
    }
    if d.unsafe_fix:
        fix["properties"] = {"applicability": "unsafe"}
    return fix


def _location(path: str, span) -> dict:
    region = {"startLine": span.line, "startColumn": span.column}
    if span.end_line >= span.line:
        region["endLine"] = span.end_line
        if span.end_line > span.line or span.end_column > span.column:
            region["endColumn"] = span.end_column
    return {
        "physicalLocation": {
            "artifactLocation": {"uri": display_path(path), "uriBaseId": "%SRCROOT%"},
            "region": region,
        }
    }
