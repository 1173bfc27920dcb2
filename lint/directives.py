"""In-file directives: `# batchlint: ...` comments.

    # batchlint: disable=BL101,BL3      that line (trailing) or the next line (alone)
    # batchlint: disable=BL101  # why   text after a second `#` is a reason, not a directive
    # batchlint: disable                every code, same placement
    # batchlint: disable-file=BL301     the whole file
    # batchlint: world-size=8           facts for this file
    # batchlint: global-batch=512

`#` starts a comment in Python, YAML, TOML and shell alike; JSON has none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from .codes import canonical, canonical_all
from .document import Span

# The body ends at a second `#`, which starts the reason: `disable=BL101  # why`.
_COMMENT = re.compile(r"(?:^|(?<=\s))#\s*batchlint:\s*(?P<body>[^#]*)")
# A value is a comma-separated list, with or without spaces after the commas.
_ITEM = re.compile(r"(?P<key>[A-Za-z][\w-]*)(?:\s*=\s*(?P<value>[^\s;,]*(?:\s*,\s*[^\s;,]+)*))?")
CODES = re.compile(r"^(BL\d{0,3}|ALL)$", re.IGNORECASE)
# ASCII digits only (`"²".isdigit()` is true), and few enough to stay a count of GPUs.
_WHOLE = re.compile(r"[0-9]{1,9}")


@dataclass
class Directives:
    file_disabled: set = field(default_factory=set)  # codes or prefixes
    line_disabled: dict = field(default_factory=dict)  # line -> set of codes ("ALL" for all)
    world_size: Optional[tuple] = None  # (value, span)
    global_batch: Optional[tuple] = None
    problems: list = field(default_factory=list)  # [(span, message)]

    def suppresses(self, code: str, line: int) -> bool:
        return code_matches(code, self.file_disabled) or code_matches(code, self.line_disabled.get(line, ()))


def code_matches(code: str, selectors) -> bool:
    """Whether a code is named by any selector: itself, a prefix of it, ALL, or
    a retired code it succeeds."""
    return any(s == "ALL" or code.startswith(s) for s in canonical_all(selectors))


def parse(text: str, known: frozenset = frozenset()) -> Directives:
    """The directives of `text`. A comment with any problem applies none of its
    items: `disable BL501` (no `=`) must not silently disable everything.
    `known`: the codes a `disable` may name (empty: any code of the right shape)."""
    found = Directives()
    if "batchlint:" not in text:
        return found
    lines = text.split("\n")  # the line numbering every reader shares for comments
    for index, line in enumerate(lines):
        match = _COMMENT.search(line)
        if not match:
            continue
        number = index + 1
        standalone = not line[: match.start()].strip()
        target = _next_code_line(lines, index) if standalone else number
        body_start = match.start("body")
        comment = Directives()
        for item in _ITEM.finditer(match.group("body")):
            span = Span(number, body_start + item.start() + 1, number, body_start + item.end() + 1)
            _apply(comment, item.group("key").lower(), item.group("value"), span, target, known)
        _check_codes_follow_equals(comment, match.group("body"), number, body_start)
        if comment.problems:
            found.problems.extend(comment.problems)
            continue
        found.file_disabled |= comment.file_disabled
        for line_number, codes in comment.line_disabled.items():
            found.line_disabled.setdefault(line_number, set()).update(codes)
        found.world_size = comment.world_size or found.world_size
        found.global_batch = comment.global_batch or found.global_batch
    return found


_BARE_CODES = re.compile(r"\b(disable(?:-file)?)\s+((?:BL\d*|ALL)\b(?:\s*,\s*(?:BL\d*|ALL)\b)*)", re.IGNORECASE)


def _check_codes_follow_equals(comment: Directives, body: str, number: int, body_start: int) -> None:
    """`disable BL501` reads as `disable` (every code) and an unknown directive `BL501`:
    say what was meant instead of the two confusing problems."""
    match = _BARE_CODES.search(body)
    if match:
        span = Span(number, body_start + match.start() + 1, number, body_start + match.end() + 1)
        comment.problems[:] = [(span, f"'{match.group(1)} {match.group(2)}' needs '=': write "
                                      f"'{match.group(1)}={match.group(2).replace(' ', '')}'")]


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
