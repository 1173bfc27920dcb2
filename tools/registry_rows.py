"""Add a row to a hand-written registry table (rules/registry.py, lint/frameworks/registry.py): the
scaffolds' one shared step, keeping the table's rows in key order."""

from __future__ import annotations

import re


def add_row(path: str, table: str, key: str, row: str) -> None:
    """Insert `row` (one or more whole lines, indented as the table's rows) into the dict literal
    `table = {...}` of the file at `path`, before the first row whose key sorts after `key`."""
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if re.match(rf"{re.escape(table)}\b.*= \{{\s*$", line))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].rstrip() == "}")
    at = end
    for i in range(start + 1, end):
        found = re.match(r'    "([^"]+)":', lines[i])
        if found and found.group(1) > key:
            at = i
            break
    lines[at:at] = [row if row.endswith("\n") else row + "\n"]
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("".join(lines))
