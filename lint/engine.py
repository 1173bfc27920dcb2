"""Lint one file: read, recognise, plan, run the rules, apply directives.

The engine knows no framework: it asks the adapters registered for the file's
format, and runs every rule whose framework matches the plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from . import directives as directive_parser
from .config import Settings
from .diagnostic import Diagnostic
from .discover import display_path
from .document import ParseError, Span
from .frameworks import for_format, markers_for
from .frameworks.facts import Outside
from .plan import Fact
from .rule import Related
from .sources import format_of, read

PARSE_ERROR = ("BL001", "parse-error")
BAD_DIRECTIVE = ("BL002", "invalid-directive")


@dataclass
class Options:
    """Facts the command line gives, which an in-file directive may override."""

    world_size: Optional[int] = None
    global_batch: Optional[int] = None


@dataclass
class FileResult:
    path: str
    diagnostics: list = field(default_factory=list)
    framework: Optional[str] = None  # None: not a training config
    error: Optional[str] = None  # unreadable: the CLI exits 2


def lint_file(path: str, settings: Settings, options: Options, rules: tuple) -> FileResult:
    shown = display_path(path)
    result = FileResult(shown)
    fmt = format_of(path)
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as exc:
        result.error = f"cannot read {shown}: {exc.strerror or exc}"
        return result
    if fmt is None or not any(marker in raw for marker in markers_for(fmt)):
        return result  # no adapter could recognise it: not a training config
    relpath = settings.relative(path)

    def emit(code, name, severity, message, span, framework=None, fix=None, related=()):
        if settings.enabled(code, relpath):
            result.diagnostics.append(Diagnostic(code, name, severity, message, shown, span, framework, fix, related))

    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        emit(*PARSE_ERROR, "error", f"the file is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})",
             Span.point(line), fix="save the file as UTF-8")
        return result
    found = directive_parser.parse(text) if fmt != "json" else directive_parser.Directives()
    for span, problem in found.problems:
        emit(*BAD_DIRECTIVE, "warning", f"batchlint directive ignored: {problem}", span,
             fix="write it as '# batchlint: disable=BL101' or '# batchlint: world-size=8'")
    try:
        document = read(shown, text, fmt)
    except ParseError as exc:
        emit(*PARSE_ERROR, "error", exc.message, Span.point(exc.line, exc.column), fix="correct the syntax")
        return _filtered(result, found)
    outside = _outside(found, options, settings)
    plan = None
    for adapter in for_format(fmt):
        plan = adapter.plan(document, outside)
        if plan is not None:
            break
    if plan is None:
        return _filtered(result, found)
    result.framework = plan.framework
    for rule in rules:
        if not rule.applies_to(plan.framework) or not settings.enabled(rule.code, relpath):
            continue
        for finding in rule.check(plan):
            related = tuple(Related(r.message, r.span, r.path or shown) for r in finding.related)
            emit(rule.code, rule.name, finding.severity or rule.severity, finding.message, finding.span,
                 plan.framework, finding.fix, related)
    return _filtered(result, found)


def _filtered(result: FileResult, found) -> FileResult:
    result.diagnostics = [
        d for d in result.diagnostics if d.code == BAD_DIRECTIVE[0] or not found.suppresses(d.code, d.span.line)
    ]
    result.diagnostics.sort(key=Diagnostic.sort_key)
    return result


def _outside(found, options: Options, settings: Settings) -> Outside:
    """World size and target: the in-file directive, then the CLI, then the project config."""
    return Outside(
        world_size=_nearest("world size", found.world_size, options.world_size, settings.world_size),
        target_global_batch=_nearest("global batch", found.global_batch, options.global_batch, settings.global_batch),
    )


def _nearest(label: str, directive, cli, project) -> Optional[Fact]:
    if directive is not None:
        value, span = directive
        return Fact(value, label, span, "from the batchlint directive")
    if cli is not None:
        flag = "--world-size" if label == "world size" else "--global-batch"
        return Fact(cli, label, None, f"from {flag}")
    if project is not None:
        return Fact(project, label, None, "from the project config")
    return None
