"""`--fix` and `--diff`: apply the edits that findings offer.

An edit is text under a span; applying it touches nothing else, so the
user's formatting, comments, line endings and byte-order mark survive. Spans
count lines the way the file's own reader does (JSON, TOML and shell break
lines at "\\n" only; Python also at a lone "\\r"; YAML also at U+0085, U+2028
and U+2029) and columns in characters, 1-based.

`fix_until_stable` lints, applies every edit that does not overlap another,
lints the edited text again (not yet written: it is given to the readers
through `project.overlaid`) and repeats until no finding offers an edit, so a
fix that enables another is applied in the same run. Each changed file is then
parsed again (Python also through libcst, which must reproduce it byte for
byte) and must leave fewer findings of the codes it fixed; only then, and only
when asked, is it written (`write`): never outside the project, never a file
that changed since it was linted, never a read-only one, keeping its hard
links, mode and owner.
"""

from __future__ import annotations

import difflib
import os
import re
import stat
from collections import Counter
from collections.abc import Callable

from . import project as projects
from .atomic import rewrite_in_place, write_atomic
from .document import LINE_BREAKS, ParseError, line_starts
from .lean_dataclass import field, lean_dataclass
from .reads import digest
from .sources import format_of, is_shell_script, read

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

_BOM = b"\xef\xbb\xbf"

class Refused(Exception):
    """A fix that is not written, and why (one clause, for `not fixing PATH: WHY`)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@lean_dataclass
class FileFix:
    path: str  # as shown
    before: str  # the text the edits were applied to (without a byte-order mark)
    after: str
    codes: Counter = field(default_factory=Counter)  # what the edits fix, per code
    refused: str = ""  # why it is not written, if it is not
    real: str = ""  # the real path of the file the edits apply to
    digest: str = ""  # sha256 of the bytes `before` was decoded from
    bom: bool = False  # the file starts with a UTF-8 byte-order mark, which is kept
    error: bool = False  # refused because writing failed (an I/O error: the CLI exits 2)
    written: bool = False
    writable: bool = False  # computed with write=True; a --diff result can never be written

    @property
    def changed(self) -> bool:
        """Not refused, and the text differs."""
        return not self.refused and self.after != self.before

    @property
    def data(self) -> bytes:
        """The bytes to write."""
        return (_BOM if self.bom else b"") + self.after.encode("utf-8")

    def diff(self) -> str:
        lines = difflib.unified_diff(_diff_lines(self.before), _diff_lines(self.after),
                                     f"a/{self.path}", f"b/{self.path}")
        return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def _diff_lines(text: str) -> list:
    return re.findall(r"[^\n]*\n|[^\n]+", text)


# -- positions ----------------------------------------------------------------

def _offset(starts: list, length: int, line: int, column: int) -> int:
    if line < 1:
        return 0
    if line > len(starts):
        return length
    return min(starts[line - 1] + max(column, 1) - 1, length)


def _newline_of(text: str, fmt: Optional[str]) -> str:
    """The file's line ending, for the line breaks a replacement brings."""
    found = re.search(r"\r\n|\r|\n" if fmt in LINE_BREAKS else r"\r?\n", text)
    return found.group() if found else "\n"


def _overlaps(a: tuple, b: tuple) -> bool:
    """Two (start, end) ranges that cannot both be applied unambiguously: they share a
    character, or one is an insertion at or inside the other."""
    if a[0] == a[1] or b[0] == b[1]:
        return max(a[0], b[0]) <= min(a[1], b[1])
    return max(a[0], b[0]) < min(a[1], b[1])


def _resolve(text: str, starts: list, edit) -> Optional[tuple]:
    start = _offset(starts, len(text), edit.span.line, edit.span.column)
    end = _offset(starts, len(text), edit.span.end_line, edit.span.end_column)
    return (start, end) if start <= end else None


def _splice(text: str, changes: list, newline: str) -> str:
    """Apply (start, end, replacement) changes that do not overlap, from the end."""
    for start, end, replacement in sorted(changes, key=lambda c: (c[0], c[1]), reverse=True):
        if newline != "\n":
            replacement = re.sub(r"\r?\n", newline, replacement)
        text = text[:start] + replacement + text[end:]
    return text


def apply(text: str, edits: list, fmt: Optional[str] = None) -> str:
    """Replace each edit's span; an edit that overlaps an earlier one in the list is
    left out (the next round of `fix_until_stable` applies it if it still holds)."""
    starts = line_starts(text, fmt)
    chosen: list = []
    for edit in edits:
        where = _resolve(text, starts, edit)
        if where is not None and not any(_overlaps(where, c[:2]) for c in chosen):
            chosen.append((*where, edit.replacement))
    return _splice(text, chosen, _newline_of(text, fmt))


def apply_findings(text: str, findings: list, fmt: Optional[str] = None) -> tuple:
    """Apply each finding's edits to `text`, all of a finding's or none, leaving out a finding
    whose edits overlap one taken (or each other). Returns (text, Counter of the codes applied)."""
    starts = line_starts(text, fmt)
    chosen: list = []
    codes: Counter = Counter()
    for d in findings:
        spans = [_resolve(text, starts, edit) for edit in d.edits]
        if not spans or None in spans:
            continue
        new = [(*where, edit.replacement) for where, edit in zip(spans, d.edits) if where is not None]
        if any(_overlaps(a[:2], b[:2]) for i, a in enumerate(new) for b in new[i + 1:] + chosen):
            continue
        chosen.extend(new)
        codes[d.code] += 1
    return _splice(text, chosen, _newline_of(text, fmt)), codes


def format_for(path: str, head: bytes = b"") -> Optional[str]:
    """The format the engine reads `path` as (`head`: its first bytes, for a shebang)."""
    return format_of(path) or ("shell" if is_shell_script(path, head[:128]) else None)


def parse_problem(path: str, text: str, fmt: Optional[str]) -> str:
    """Why the fixed `text` would not be read back, or ""."""
    if fmt is None:
        return ""
    try:
        read(path, text, fmt)
    except ParseError as exc:
        return f"the fixed file would not parse ({exc.message}, line {exc.line})"
    if fmt == "python":
        import libcst  # only --fix pays for it

        try:
            if libcst.parse_module(text).code != text:
                return "libcst does not reproduce the fixed file exactly"
        except libcst.ParserSyntaxError as exc:
            return f"the fixed file would not parse ({exc.message})"
        except RecursionError:
            return "the fixed file is nested too deeply for libcst"
    return ""


# -- the loop -------------------------------------------------------------------

class _File:
    """A file being fixed: its text as the rounds leave it."""

    def __init__(self, fix: FileFix, fmt: Optional[str]):
        self.fix, self.fmt = fix, fmt
        self.text = fix.before
        self.starts: Optional[list] = None

    def positions(self) -> list:
        if self.starts is None:
            self.starts = line_starts(self.text, self.fmt)
        return self.starts


def fix_until_stable(lint: Callable[[dict], tuple], write: bool, max_rounds: int = 8,
                     project: Optional[projects.Project] = None) -> list:
    """Apply every fix the findings offer, round after round, and (with `write`) write the result.

    `lint(overlay)` lints the run's files with `overlay` ({absolute path: bytes}) read
    in place of those files, and returns (diagnostics, read_digests): read_digests
    maps the absolute path of every file read to the sha256 of the bytes read.
    Returns a FileFix per file some finding offered an edit for, in the order the
    findings came; `changed` ones are written when `write` (`written`, or `refused`
    with the reason), and nothing is written without it: such a FileFix cannot be
    passed to `write` either. `project`: the boundary for writes (default: the
    current one, `project.current()`).
    """
    overlay: dict = {}  # real path -> bytes of the text edited so far
    files: dict = {}  # real path -> _File, in the order of the first edit
    first_seen: dict = {}  # real path -> digest of the disk bytes the first lint that read it saw
    reals: dict = {}
    original: Optional[list] = None
    final: list = []
    still_changing: set = set()

    def real(path: str) -> str:
        if path not in reals:
            reals[path] = os.path.realpath(os.path.abspath(path))
        return reals[path]

    for round_ in range(max_rounds + 1):
        diagnostics, digests = lint(dict(overlay))
        diagnostics = list(diagnostics)
        read_now: dict = {}
        for path, value in (digests or {}).items():
            if value or real(path) not in read_now:  # "" is a file looked for, not (yet) read
                read_now[real(path)] = value
        for path, value in read_now.items():
            if path not in overlay and value:
                first_seen.setdefault(path, value)
        if original is None:
            original = diagnostics
        final = diagnostics
        changes = _choose(diagnostics, files, read_now, first_seen, real, write)
        if not changes:
            break
        if round_ == max_rounds:
            still_changing = set(changes)
            break
        progress = False
        for path, (edits, codes) in changes.items():
            state = files[path]
            text = _splice(state.text, edits, _newline_of(state.text, state.fmt))
            state.fix.codes.update(codes)
            if text != state.text:
                progress = True
                state.text, state.starts = text, None
                overlay[path] = (_BOM if state.fix.bom else b"") + text.encode("utf-8")
        if not progress:
            break  # edits that change nothing: the findings that offer them stay

    for path, state in files.items():
        state.fix.after = state.text
        if path in still_changing and state.fix.changed:
            state.fix.refused = f"the fixes do not converge in {max_rounds} rounds"
    refused_now = [p for p, s in files.items() if s.fix.refused and p in overlay]
    for path, state in files.items():
        if state.fix.changed:
            problem = parse_problem(state.fix.path, state.text, state.fmt)
            if problem:
                state.fix.refused = problem
                refused_now.append(path)
    while True:
        if refused_now:
            for path in refused_now:
                overlay.pop(path, None)
            final = list(lint(dict(overlay))[0])
        refused_now = []
        for path, state in files.items():
            if state.fix.changed and not _fewer(state, original or [], final, real):
                codes = ", ".join(sorted(state.fix.codes))
                state.fix.refused = f"the fix does not remove {codes}"
                refused_now.append(path)
        if not refused_now:
            break

    results = [state.fix for state in files.values()]
    if write:
        boundary = project or projects.current()
        for result in results:
            if not result.changed:
                continue
            try:
                _write(result, boundary)
            except Refused as exc:
                result.refused = exc.reason
            except OSError as exc:
                result.refused = f"cannot write it: {exc.strerror or exc}"
                result.error = True
    return results


def _choose(diagnostics: list, files: dict, read_now: dict, first_seen: dict, real, write: bool) -> dict:
    """This round's changes: real path -> ([(start, end, replacement)], Counter of codes).
    A finding's edits are taken all or none; one that overlaps an edit already taken
    waits for the next round. Opens (and checks) each file at its first edit."""
    taken: dict = {}
    for d in diagnostics:
        if not d.edits:
            continue
        resolved = []
        for edit in d.edits:
            shown = edit.path or d.path
            path = real(shown)
            state = files.get(path) or _open(path, shown, read_now, first_seen, files, write)
            if state.fix.refused:
                break
            where = _resolve(state.text, state.positions(), edit)
            if where is None:
                break
            resolved.append((path, (*where, edit.replacement)))
        else:
            new = [(p, c) for p, c in resolved if c not in taken.get(p, ([], None))[0]]
            if any(_overlaps(c[:2], other[:2]) for p, c in new for other in taken.get(p, ([], None))[0]):
                continue
            if any(_overlaps(a[1][:2], b[1][:2]) for i, a in enumerate(new) for b in new[i + 1:] if a[0] == b[0]):
                continue  # a finding whose own edits collide offers no usable fix
            for path, change in new:
                edits, codes = taken.setdefault(path, ([], Counter()))
                edits.append(change)
            for path in {p for p, _ in new}:
                taken[path][1][d.code] += 1
    return taken


def _open(path: str, shown: str, read_now: dict, first_seen: dict, files: dict, write: bool) -> _File:
    """Start fixing the file at real `path`: its bytes now must be the bytes the findings were computed from."""
    fix = FileFix(shown, "", "", real=path, writable=write)
    state = _File(fix, format_of(shown))
    files[path] = state
    expected = read_now.get(path)
    if not expected:  # None: never read; "": only looked for
        fix.refused = "it was not read while linting, so whether it changed since cannot be told"
        return state
    try:
        raw = _disk_bytes(path)
    except OSError as exc:
        fix.refused = f"cannot read it: {exc.strerror or exc}"
        return state
    if digest(raw) != expected or first_seen.get(path, expected) != expected:
        fix.refused = "it changed since it was linted"
        return state
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        fix.refused = "it is not valid UTF-8"
        return state
    fix.before = text
    fix.digest = expected
    fix.bom = raw.startswith(_BOM)
    state.text = text
    state.fmt = format_for(shown, raw)
    return state


def _fewer(state: _File, original: list, final: list, real) -> bool:
    """Whether the findings of the codes fixed in this file, reported on it or offering an
    edit in it, are fewer after the fixes than before."""
    codes, path = set(state.fix.codes), state.fix.real

    def count(diagnostics):
        return sum(1 for d in diagnostics if d.code in codes
                   and (real(d.path) == path or any(real(e.path or d.path) == path for e in d.edits)))

    return count(final) < count(original)


# -- writing ------------------------------------------------------------------

def _disk_bytes(path: str) -> bytes:
    """The file's bytes on disk, whatever overlay is active (a regular file only)."""
    with projects.overlaid({}):
        return projects.read_bytes(path)


def write(fix_: FileFix, project: Optional[projects.Project] = None) -> None:
    """Write one checked fix (from `fix_until_stable(..., write=True)`, which calls this).

    Raises Refused (outside the project, a symlink leading out of it, read-only, not
    a regular file, changed since it was linted) or OSError (the write failed; the
    old content is intact). Through a symlink the real file is written and the link
    kept; a file with other hard links is rewritten in place; mode and owner are kept.
    """
    if not fix_.writable:
        raise ValueError("this fix was computed without write=True (--diff) and cannot be written")
    if fix_.refused:
        raise Refused(fix_.refused)
    _write(fix_, project or projects.current())


def _write(fix_: FileFix, boundary: Optional[projects.Project]) -> None:
    if not fix_.writable:
        raise ValueError("this fix was computed without write=True (--diff) and cannot be written")
    path = os.path.abspath(fix_.path)
    try:
        link = os.lstat(path)
    except OSError as exc:
        raise Refused(f"cannot find it: {exc.strerror or exc}") from None
    target = os.path.realpath(path)
    if fix_.real and target != fix_.real:
        raise Refused("it was moved or relinked since it was linted")
    if stat.S_ISLNK(link.st_mode):
        if boundary is None:
            raise Refused(f"it is a symlink (to {target}) and no project is set to check where it leads")
        if not boundary.contains(target):
            raise Refused(f"it is a symlink to {target}, outside the project")
    elif boundary is not None and not boundary.contains(target):
        raise Refused("it is outside the project")
    try:
        info = os.stat(target)
    except OSError as exc:
        raise Refused(f"cannot find it: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise Refused(f"it is {projects.kind_of(info.st_mode)}")
    if not info.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        raise Refused("it is read-only")
    if not os.access(target, os.W_OK):
        raise Refused("you may not write it")
    try:
        current = _disk_bytes(target)
    except OSError as exc:
        raise Refused(f"cannot read it: {exc.strerror or exc}") from None
    if digest(current) != fix_.digest:
        raise Refused("it changed since it was linted")
    if info.st_nlink > 1:
        rewrite_in_place(target, fix_.data, current)  # a rename would split it from its other names
    else:
        write_atomic(target, fix_.data, mode=stat.S_IMODE(info.st_mode), owner=(info.st_uid, info.st_gid),
                     follow_symlinks=False)
    fix_.written = True
