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

from .document import Span

# The body ends at a second `#`, which starts the reason: `disable=BL101  # why`.
_COMMENT = re.compile(r"(?:^|(?<=\s))#\s*batchlint:\s*(?P<body>[^#]*)")
# A value is a comma-separated list, with or without spaces after the commas.
_ITEM = re.compile(r"(?P<key>[A-Za-z][\w-]*)(?:\s*=\s*(?P<value>[^\s;,]*(?:\s*,\s*[^\s;,]+)*))?")
CODES = re.compile(r"^(BL\d{0,3}|ALL)$", re.IGNORECASE)


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
    """Whether a code is named by any selector: itself, a prefix of it, or ALL."""
    return any(s == "ALL" or code.startswith(s) for s in selectors)


def parse(text: str) -> Directives:
    found = Directives()
    if "batchlint:" not in text:
        return found
    lines = text.splitlines()
    for index, line in enumerate(lines):
        match = _COMMENT.search(line)
        if not match:
            continue
        number = index + 1
        standalone = not line[: match.start()].strip()
        target = _next_code_line(lines, index) if standalone else number
        body_start = match.start("body")
        for item in _ITEM.finditer(match.group("body")):
            span = Span(number, body_start + item.start() + 1, number, body_start + item.end() + 1)
            _apply(found, item.group("key").lower(), item.group("value"), span, target)
    return found


def _next_code_line(lines: list, index: int) -> int:
    for later in range(index + 1, len(lines)):
        stripped = lines[later].strip()
        if stripped and not stripped.startswith("#"):
            return later + 1
    return index + 1


def _apply(found: Directives, key: str, value: Optional[str], span: Span, target: int) -> None:
    if key in ("disable", "disable-file"):
        if value == "":
            found.problems.append((span, f"'{key}=' needs codes, as in '{key}=BL101' (or '{key}' alone for every code)"))
            return
        codes = {c.strip().upper() for c in (value or "ALL").split(",") if c.strip()}
        bad = sorted(c for c in codes if not CODES.match(c))
        if bad:
            found.problems.append((span, f"'{', '.join(bad)}' is not a rule code or prefix (like BL101 or BL1)"))
            codes -= set(bad)
        if key == "disable-file":
            found.file_disabled |= codes
        else:
            found.line_disabled.setdefault(target, set()).update(codes)
    elif key in ("world-size", "global-batch"):
        if value is None or not value.isdigit() or int(value) < 1:
            found.problems.append((span, f"{key} needs a positive whole number, as in '{key}=8'"))
        elif key == "world-size":
            found.world_size = (int(value), span)
        else:
            found.global_batch = (int(value), span)
    else:
        found.problems.append(
            (span, f"unknown directive '{key}' (known: disable, disable-file, world-size, global-batch)")
        )
