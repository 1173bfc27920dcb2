"""What every table generator in tools/ does last: write the module, or with --check
say whether the committed one is exactly what the generator makes."""

from __future__ import annotations


def write_or_check(target: str, text: str, check: bool) -> int:
    """0 when written, or when checking and the module equals `text`; 1 when it differs."""
    if check:
        with open(target, encoding="utf-8") as handle:
            return 0 if handle.read() == text else 1
    with open(target, "w", encoding="utf-8") as handle:
        handle.write(text)
    return 0
