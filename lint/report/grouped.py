"""ruff's `grouped` format: the findings of each file under its path, then text's summary.

    configs/sft.yaml:
      3:18 BL301 [*] [warning] group_by_length groups samples by length, ...
        configs/sft.yaml:2:10: note: packing enabled here

Line and column are padded to line up within a file; a blank line ends each file's group. The
source line (`full` / `--show-source`) and the edits (`--show-fixes`) go under a finding, as in
text output.
"""

from __future__ import annotations

from . import fixable, printable
from .text import _edits, _snippet, _summary, below, fix_summary


def render(diagnostics: list, summary, source=None) -> str:
    files: dict = {}
    for d in diagnostics:
        files.setdefault(d.path, []).append(d)
    lines = []
    for path, found in files.items():
        row_width = max(len(str(d.span.line)) for d in found)
        column_width = max(len(str(d.span.column)) for d in found)
        lines.append(printable(f"{path}:"))
        for d in found:
            where = f"{d.span.line:>{row_width}}:{d.span.column:<{column_width}}"
            mark = " [*]" if fixable(d, summary.unsafe_fixes) else ""
            lines.append(f"  {where} {d.code}{mark} [{d.severity}] {printable(d.message)}")
            under = (_snippet(d, source) if source is not None else []) + (_edits(d) if summary.show_fixes else [])
            under += below(d)
            lines.extend("  " + line for line in under)
        lines.append("")
    if not summary.quiet:
        lines.append(_summary(diagnostics, summary))
        lines.extend(fix_summary(diagnostics, summary.unsafe_fixes))
    return "\n".join(lines) + "\n" if lines else ""
