"""`--fix` and `--diff`: apply the edits that findings offer.

An edit is text under a span; applying it touches nothing else, so the
user's formatting and comments survive. A fixed file is parsed again (Python
also through libcst, which must reproduce it byte for byte) and linted again
before it is written; a fix that would not parse, or that does not remove
what it fixed, is not written. Files are replaced atomically.
"""

from __future__ import annotations

import difflib
import os
import tempfile
from collections import Counter
from dataclasses import dataclass, field

from .document import ParseError
from .sources import format_of, read
from .sources.shell import is_shell_script


@dataclass
class FileFix:
    path: str
    before: str
    after: str
    codes: Counter = field(default_factory=Counter)  # what the edits fix, per code
    refused: str = ""  # why it is not written, if it is not

    def diff(self) -> str:
        return "".join(difflib.unified_diff(self.before.splitlines(True), self.after.splitlines(True),
                                            f"a/{self.path}", f"b/{self.path}"))


def plan_fixes(diagnostics: list) -> dict:
    """path -> [(code, Edit)], overlapping edits dropped (the first wins)."""
    by_path: dict = {}
    for d in diagnostics:
        for edit in d.edits:
            by_path.setdefault(edit.path, []).append((d.code, edit))
    return by_path


def apply(text: str, edits: list) -> str:
    """Replace each edit's span; edits are applied from the end so offsets hold."""
    starts = [0]
    for line in text.splitlines(True):
        starts.append(starts[-1] + len(line))

    def offset(line: int, column: int) -> int:
        return min(starts[min(line, len(starts)) - 1] + column - 1, len(text))

    spans = sorted(((offset(e.span.line, e.span.column), offset(e.span.end_line, e.span.end_column), e.replacement)
                    for e in edits), reverse=True)
    taken_from = len(text) + 1
    for start, end, replacement in spans:
        if end > taken_from:
            continue  # overlaps an edit already applied
        text = text[:start] + replacement + text[end:]
        taken_from = start
    return text


def fix(diagnostics: list, relint) -> list:
    """FileFix per file with edits. `relint(path, text)` -> diagnostics of the fixed text."""
    fixes = []
    for path, edits in plan_fixes(diagnostics).items():
        try:
            with open(path, encoding="utf-8", newline="") as handle:  # keep the file's line endings
                before = handle.read()
        except OSError as exc:
            fixes.append(FileFix(path, "", "", refused=f"cannot read it: {exc.strerror or exc}"))
            continue
        after = apply(before, [edit for _, edit in edits])
        result = FileFix(path, before, after, Counter(code for code, _ in edits))
        result.refused = _problem(path, before, after, result.codes, relint)
        fixes.append(result)
    return fixes


def _problem(path: str, before: str, after: str, codes: Counter, relint) -> str:
    fmt = format_of(path) or ("shell" if is_shell_script(path, after[:128].encode()) else None)
    try:
        read(path, after, fmt)
    except ParseError as exc:
        return f"the fixed file would not parse ({exc.message}, line {exc.line})"
    if fmt == "python":
        import libcst  # only --fix pays for it

        try:
            if libcst.parse_module(after).code != after:
                return "libcst does not reproduce the fixed file exactly"
        except libcst.ParserSyntaxError as exc:
            return f"the fixed file would not parse ({exc.message})"
    remaining = Counter(d.code for d in relint(path, after))
    was = Counter(d.code for d in relint(path, before))
    if "BL001" in remaining:
        return "the fixed file would not parse"
    for code, count in codes.items():
        if was[code] and remaining[code] >= was[code]:
            return f"the fix does not remove {code}"
    return ""


def write(fix_: FileFix) -> None:
    """Replace the file atomically, keeping its permissions."""
    folder = os.path.dirname(os.path.abspath(fix_.path))
    mode = os.stat(fix_.path).st_mode
    handle, temporary = tempfile.mkstemp(prefix=".batchlint-", dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(fix_.after)
        os.chmod(temporary, mode)
        os.replace(temporary, fix_.path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
