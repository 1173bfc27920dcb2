"""SARIF 2.1.0, for GitHub code scanning (`github/codeql-action/upload-sarif`).

Every rule is described in the driver (id, name, short and full description,
help, default level); every finding is a result with a repo-relative location
and a `primaryLocationLineHash` computed from the code and the text of its
line, so a finding keeps its identity when lines above it move.
"""

from __future__ import annotations

import json
import re

from .. import __version__
from ..discover import display_path
from ..fingerprint import SourceLines, fingerprint

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def render(diagnostics: list, summary) -> str:
    from batchlint.rules import all_rules

    rules = all_rules()
    index = {rule.code: i for i, rule in enumerate(rules)}
    lines = SourceLines()
    results = [_result(d, index, lines) for d in diagnostics]
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "batchlint",
                        "version": __version__,
                        "informationUri": "https://pypi.org/project/batchlint/",
                        "rules": [_descriptor(rule) for rule in rules],
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def _descriptor(rule) -> dict:
    from ..applies import frameworks_for  # imports the engine: only when SARIF is written
    doc = rule.documentation
    return {
        "id": rule.code,
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


def _result(d, index: dict, lines: SourceLines) -> dict:
    result = {
        "ruleId": d.code,
        "level": _LEVEL.get(d.severity, "warning"),
        "message": {"text": d.text},
        "locations": [_location(d.path, d.span)],
        "partialFingerprints": {"primaryLocationLineHash": f"{fingerprint(d, lines)}:1"},
    }
    if d.code in index:
        result["ruleIndex"] = index[d.code]
    if d.related:
        result["relatedLocations"] = [
            dict(_location(r.path, r.span), id=i, message={"text": r.message}) for i, r in enumerate(d.related)
        ]
    return result


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
