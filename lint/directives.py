"""In-file directives: `# batchlint: ...` comments.

    # batchlint: disable=BL101,BL3      that line (trailing) or the next line (alone)
    # batchlint: disable=BL101  # why   text after a second `#` is a reason, not a directive
    # batchlint: disable=BL101 -- why   so is text after ` -- ` (kept with the directive)
    # batchlint: disable                every code, same placement
    # batchlint: disable-file=BL301     the whole file
    # batchlint: world-size=8           facts for this file
    # batchlint: global-batch=512
    x = 16  # noqa: BL101               ruff's form: that line's codes (other tools' codes are theirs)

`#` starts a comment in Python, YAML, TOML and shell alike; JSON has none.

Each `disable` item is a `Suppression` that records which of its codes
suppressed a finding, so the engine can report the ones that suppress nothing
(BL005) with the edit that removes them.
"""

from __future__ import annotations

import re

from .codes import canonical, canonical_all
from .document import Span, breaks_other_than_newline
from .lazy_pattern import LazyPattern
from .lean_dataclass import field, lean_dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

# The body ends at a second `#`, which starts the reason: `disable=BL101  # why`.
_COMMENT = LazyPattern(r"(?:^|(?<=\s))#\s*batchlint:\s*(?P<body>[^#]*)")
# A reason after ` -- `, inside the directive: `disable=BL101 -- explicit literal, reviewed`.
_REASON = LazyPattern(r"(?:^|\s)--(?:\s|$)")
# A value is a comma-separated list, with or without spaces after the commas.
_ITEM = LazyPattern(r"(?P<key>[A-Za-z][\w-]*)(?:\s*=\s*(?P<value>[^\s;,]*(?:\s*,\s*[^\s;,]+)*))?")
CODES = LazyPattern(r"^(BL\d{0,3}|ALL)$", re.IGNORECASE)
# ASCII digits only (`"²".isdigit()` is true), and few enough to stay a count of GPUs.
_WHOLE = LazyPattern(r"[0-9]{1,9}")


@lean_dataclass
class Suppression:
    """One `disable` or `disable-file` item of a comment, and which of its codes suppressed a finding."""

    line: int  # the comment's line
    target: Optional[int]  # the line it applies to; None: the whole file
    codes: tuple  # upper-cased, as written ("ALL" for a bare `disable`)
    span: Span  # the item: `disable=BL101,BL102`
    key: str  # `disable` or `disable-file`, as written
    reason: str = ""  # after ` -- ` or a second `#`
    removal: Optional[Span] = None  # what removes the whole comment, when it holds nothing else (None: no edit)
    used: set = field(default_factory=set)  # codes of `codes` that suppressed a finding

    def matches(self, code: str, line: int) -> bool:
        """Whether it suppresses `code` on `line`, recording the codes that do."""
        if self.target is not None and self.target != line:
            return False
        hit = [c for c in self.codes if code_matches(code, (c,))]
        self.used.update(hit)
        return bool(hit)


@lean_dataclass
class Directives:
    file_disabled: set = field(default_factory=set)  # codes or prefixes
    line_disabled: dict = field(default_factory=dict)  # line -> set of codes ("ALL" for all)
    world_size: Optional[tuple] = None  # (value, span)
    global_batch: Optional[tuple] = None
    problems: list = field(default_factory=list)  # [(span, message)]
    suppressions: list = field(default_factory=list)  # Suppression, in the order written

    def suppresses(self, code: str, line: int) -> bool:
        """Whether a directive suppresses `code` on `line`; every directive that does records it."""
        hit = False
        for suppression in self.suppressions:
            hit = suppression.matches(code, line) or hit
        return hit


def code_matches(code: str, selectors) -> bool:
    """Whether a code is named by any selector: itself, a prefix of it, ALL, or
    a retired code it succeeds."""
    return any(s == "ALL" or code.startswith(s) for s in canonical_all(selectors))


def parse(text: str, known: frozenset = frozenset()) -> Directives:
    """The directives of `text`. A comment with any problem applies none of its
    items: `disable BL501` (no `=`) must not silently disable everything.
    `known`: the codes a `disable` may name (empty: any code of the right shape)."""
    found = Directives()
    # `noqa` in any case, searched in the text's ASCII (lowering every character of a text with CJK
    # comments costs more than the rest of this function): line numbers stay, and each line is matched again.
    lowered = (text if text.isascii() else text.encode("ascii", "ignore").decode("ascii")).lower()
    # Only a `noqa` with one of batchlint's codes after it on its line is read: a `noqa` of E501 on every
    # line of a config's imports is other tools' business, and needs no line of the text split.
    has_noqa = _ours_after_noqa(lowered)
    if "batchlint:" not in text and not has_noqa:
        return found
    lines = text.split("\n")  # the line numbering every reader shares for comments
    editable = not breaks_other_than_newline(text)  # else lines are numbered otherwise: no edit offered
    if has_noqa:
        _noqa(found, lines, _holding(lowered, "noqa"), editable, known)
    for index in _holding(text, "batchlint:"):
        line = lines[index]
        match = _COMMENT.search(line)
        if not match:
            continue
        number = index + 1
        standalone = not line[: match.start()].strip()
        target = _next_code_line(lines, index) if standalone else number
        body_start = match.start("body")
        body = match.group("body")
        split = _REASON.search(body)
        if split:
            reason, body = body[split.end():].strip(), body[: split.start()]
        else:
            reason = line[match.end():].lstrip("#").strip()
        comment = Directives()
        items = list(_ITEM.finditer(body))
        for item in items:
            span = Span(number, body_start + item.start() + 1, number, body_start + item.end() + 1)
            _apply(comment, item.group("key").lower(), item.group("value"), span, target, known)
        _check_codes_follow_equals(comment, body, number, body_start)
        if comment.problems:
            found.problems.extend(comment.problems)
            continue
        removal = _removal(lines, index, match, standalone, bool(split)) if editable and \
            len(items) == len(comment.suppressions) else None
        for suppression in comment.suppressions:
            suppression.line, suppression.reason, suppression.removal = number, reason, removal
        found.suppressions.extend(comment.suppressions)
        found.file_disabled |= comment.file_disabled
        for line_number, codes in comment.line_disabled.items():
            found.line_disabled.setdefault(line_number, set()).update(codes)
        found.world_size = comment.world_size or found.world_size
        found.global_batch = comment.global_batch or found.global_batch
    return found


# ruff's no-quality-assurance comment (`noqa` then a colon and codes, as BL101, E501): the codes of that line.
# Only batchlint's codes are batchlint's to read: a bare one, or one naming other tools' codes only, is theirs.
_NOQA = LazyPattern(r"(?:^|(?<=\s))#\s*noqa\s*:\s*(?P<codes>[A-Za-z]+[0-9]+(?:\s*,\s*[A-Za-z]+[0-9]+)*)", re.IGNORECASE)


def _ours_after_noqa(lowered: str) -> bool:
    """Whether a line of the lowered text holds `bl` after a `noqa`, as every `noqa` of batchlint's codes
    does (_NOQA: a code starting with BL). Each line is looked at once: a regex would scan a line again
    from each of its `noqa`s."""
    start = lowered.find("noqa")
    while start >= 0:
        end = lowered.find("\n", start)
        end = len(lowered) if end < 0 else end
        if lowered.find("bl", start + 4, end) >= 0:
            return True
        start = lowered.find("noqa", end)
    return False


def _holding(text: str, marker: str) -> list:
    """The indexes of the lines of `text` (split at "\\n") that hold `marker`, in order: found by
    searching the text, not each line (most configs hold a `noqa` or two in hundreds of lines)."""
    found: list = []
    start = text.find(marker)
    line, counted = 0, 0
    while start >= 0:
        line += text.count("\n", counted, start)
        counted = start
        if not found or found[-1] != line:
            found.append(line)
        start = text.find(marker, start + len(marker))
    return found


def _noqa(found: Directives, lines: list, indexes: list, editable: bool, known: frozenset) -> None:
    for index in indexes:
        line = lines[index]
        match = _NOQA.search(line)
        if match is None:
            continue
        written = [c.strip().upper() for c in match.group("codes").split(",")]
        ours = tuple(dict.fromkeys(c for c in written if c.startswith("BL")))
        if not ours:
            continue
        number = index + 1
        span = Span(number, match.start("codes") + 1, number, match.end("codes") + 1)
        comment = Directives()
        _apply(comment, "disable", ",".join(ours), span, number, known)
        if comment.problems:
            found.problems.extend(comment.problems)
            continue
        whole = len(ours) == len(written) and match.end() == len(line.rstrip("\r")) and line[:match.start()].strip()
        removal = Span(number, len(line[: match.start()].rstrip()) + 1, number, len(line.rstrip("\r")) + 1) \
            if editable and whole else None
        for suppression in comment.suppressions:
            suppression.key, suppression.removal = "noqa", removal
        found.suppressions.extend(comment.suppressions)
        found.line_disabled.setdefault(number, set()).update(comment.line_disabled.get(number, ()))


_BARE_CODES = LazyPattern(r"\b(disable(?:-file)?)\s+((?:BL\d*|ALL)\b(?:\s*,\s*(?:BL\d*|ALL)\b)*)", re.IGNORECASE)


def _check_codes_follow_equals(comment: Directives, body: str, number: int, body_start: int) -> None:
    """`disable BL501` reads as `disable` (every code) and an unknown directive `BL501`:
    say what was meant instead of the two confusing problems."""
    match = _BARE_CODES.search(body)
    if match:
        span = Span(number, body_start + match.start() + 1, number, body_start + match.end() + 1)
        comment.problems[:] = [(span, f"'{match.group(1)} {match.group(2)}' needs '=': write "
                                      f"'{match.group(1)}={match.group(2).replace(' ', '')}'")]


def _removal(lines: list, index: int, match, standalone: bool, reason_inside: bool) -> Span:
    """The span that removes the directive comment on `lines[index]`: the whole line when it
    stands alone; else from the end of the code before it to the end of the line, or up to a
    second `#` comment after it, which is kept."""
    number, line = index + 1, lines[index]
    if standalone:
        if index + 1 < len(lines):
            return Span(number, 1, number + 1, 1)
        return Span(number, 1, number, len(line) + 1)
    if not reason_inside and match.end() < len(line):  # `# batchlint: disable=BL101  # why`: keep `# why`
        return Span(number, match.start() + 1, number, match.end() + 1)
    return Span(number, len(line[: match.start()].rstrip()) + 1, number, len(line.rstrip("\r")) + 1)


def _next_code_line(lines: list, index: int) -> int:
    for later in range(index + 1, len(lines)):
        stripped = lines[later].strip()
        if stripped and not stripped.startswith("#"):
            return later + 1
    return index + 1


def _apply(found: Directives, key: str, value: Optional[str], span: Span, target: int, known: frozenset) -> None:
    if key in ("disable", "disable-file"):
        if value == "":
            found.problems.append((span, f"'{key}=' needs codes, as in '{key}=BL101' (or '{key}' alone for every code)"))
            return
        codes = {c.strip().upper() for c in (value or "ALL").split(",") if c.strip()}
        bad = sorted(c for c in codes if not CODES.match(c))
        if bad:
            found.problems.append((span, f"'{', '.join(bad)}' is not a rule code or prefix (like BL101 or BL1)"))
            return
        # A retired code names the rule that succeeded it.
        unknown = sorted(c for c in codes if known and c != "ALL" and not any(k.startswith(canonical(c)) for k in known))
        if unknown:
            found.problems.append((span, f"'{', '.join(unknown)}' names no rule (`batchlint rule --all` lists them)"))
            return
        written = tuple(dict.fromkeys(c.strip().upper() for c in (value or "ALL").split(",") if c.strip()))
        found.suppressions.append(Suppression(span.line, None if key == "disable-file" else target, written, span,
                                              key))
        if key == "disable-file":
            found.file_disabled |= codes
        else:
            found.line_disabled.setdefault(target, set()).update(codes)
    elif key in ("world-size", "global-batch"):
        if value is None or not _WHOLE.fullmatch(value) or int(value) < 1:
            found.problems.append((span, f"{key} needs a positive whole number, as in '{key}=8'"))
        elif key == "world-size":
            found.world_size = (int(value), span)
        else:
            found.global_batch = (int(value), span)
    else:
        found.problems.append(
            (span, f"unknown directive '{key}' (known: disable, disable-file, world-size, global-batch)")
        )
