"""Azure Pipelines logging commands, one per finding (ruff's `azure` format):
`##vso[task.logissue type=error;sourcepath=PATH;linenumber=L;columnnumber=C;code=CODE;]message`.

Azure knows two types: an error is `error`, a warning or an info `warning` (ruff, which has no
severities, writes `error` for all). A property value is escaped as the agent unescapes it
(`;` %3B, `]` %5D, CR %0D, LF %0A); the message is one printable line.
"""

from __future__ import annotations

from . import printable

_ESCAPES = {";": "%3B", "]": "%5D", "\r": "%0D", "\n": "%0A"}


def escape_property(text: str) -> str:
    return "".join(_ESCAPES.get(c, c) for c in printable(text, keep_lines=True))


def command(d) -> str:
    kind = "error" if d.severity == "error" else "warning"
    return (f"##vso[task.logissue type={kind};sourcepath={escape_property(d.path)};linenumber={d.span.line};"
            f"columnnumber={d.span.column};code={escape_property(d.code)};]{printable(d.text)}")


def render(diagnostics: list, summary) -> str:
    return "".join(command(d) + "\n" for d in diagnostics)
