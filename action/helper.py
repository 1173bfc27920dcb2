"""Two jobs of the Action's lint steps (action/run.sh) that bash cannot do safely.

    helper.py split-args              $BATCHLINT_ARGS as words, each ended by NUL
    helper.py cap-summary FULL DEST   append FULL to DEST, cut to GitHub's limit for a step summary
"""

from __future__ import annotations

import os
import shlex
import sys

# GitHub refuses a step summary over 1024 KiB, and then shows none of it
# ("$GITHUB_STEP_SUMMARY upload aborted, supports content up to a size of 1024k").
SUMMARY_LIMIT = 1024 * 1024


def split_args(text: str) -> list:
    """Each line split as a shell splits words (quotes group, a backslash escapes), with nothing
    expanded: no variables, no globs, no command substitution. A line starting with `#` is a comment."""
    words = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip().startswith("#"):
            continue
        try:
            words += shlex.split(line)
        except ValueError as exc:  # an unclosed quote
            raise ValueError(f"args, line {number}: {exc}: {line.strip()}") from None
    return words


def cap_summary(full: str, dest: str, limit: int = SUMMARY_LIMIT) -> bool:
    """Append the text of `full` to `dest` within `limit` bytes in all; whole lines only, then a
    note saying where the rest is. True when it was cut."""
    with open(full, "rb") as handle:
        data = handle.read()
    room = limit - (os.path.getsize(dest) if os.path.exists(dest) else 0)
    if len(data) <= room:
        kept = data
    else:
        note = (f"\n**batchlint: the job summary stops here.** It is {len(data):,} bytes and GitHub accepts at most "
                f"{limit:,} in one step's summary. This step's log holds every finding, as annotations, and the "
                f"batch table; the `sarif` input writes the findings to a file.\n").encode()
        keep = max(room - len(note), 0)
        kept = data[: data.rfind(b"\n", 0, keep) + 1] + note if room >= len(note) else b""
        print(f"::warning title=batchlint::the job summary was cut to GitHub's limit of {limit:,} bytes; "
              "this step's log has every finding")
    with open(dest, "ab") as handle:
        handle.write(kept)
    return len(kept) < len(data)


def main(argv: list) -> int:
    if argv[:1] == ["split-args"]:
        try:
            words = split_args(os.environ.get("BATCHLINT_ARGS", ""))
        except ValueError as exc:
            print(f"::error title=batchlint action::{exc}", file=sys.stderr)
            return 2
        sys.stdout.buffer.write(b"".join(word.encode("utf-8", "surrogateescape") + b"\0" for word in words))
        return 0
    if argv[:1] == ["cap-summary"] and len(argv) == 3:
        cap_summary(argv[1], argv[2])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
