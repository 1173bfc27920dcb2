"""Source readers: file text in, Document out. Nothing here is ever executed."""

from __future__ import annotations

import bisect
import gc
import os
import re
from collections.abc import Callable

from ..document import Document, LimitExceeded, ParseError, line_starts
from ..limits import MAX_NUMBER_DIGITS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional


class TemplateError(ParseError):
    """A template whose shape depends on what its Jinja statements produce:
    not a syntax error of the file, and nothing batchlint can check (lint/sources/template.py).
    Here, not there: every lint imports this class, few read a template."""

# Suffix -> format name; the reader module is imported only when a file of its
# format is actually read, which keeps the pre-commit path lean.
FORMATS = {
    ".py": "python",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".json": "json",
    ".sh": "shell",
    ".bash": "shell",
    ".slurm": "shell",  # Slurm batch scripts
    ".sbatch": "shell",
}


# -- checks every reader applies to the values it keeps ---------------------------

_INT_LIMIT = 10**MAX_NUMBER_DIGITS


def digits_why(count: int) -> str:
    return f"a number with {count:,} digits"


def long_int(value: int) -> Optional[str]:
    """Why an integer is too long to keep as a value, or None when it is fine."""
    if -_INT_LIMIT < value < _INT_LIMIT:
        return None
    bits = value.bit_length()
    # str() itself refuses past 4,300 digits and is quadratic: estimate beyond a few hundred.
    return digits_why(len(str(abs(value))) if bits < 1000 else int(bits * 0.30103) + 1)


def surrogate_at(text: str) -> Optional[int]:
    """Offset of the first lone surrogate in `text` (only a caller that did not
    decode the file from UTF-8 can pass one), or None."""
    if text.isascii():
        return None
    try:  # a surrogate is the one thing UTF-8 cannot encode: six times faster than a regex search
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def is_shell_script(path: str, head: bytes) -> bool:
    """A `.sh` file, or a file without a suffix that starts with a shell shebang. (Here, not in
    the shell reader, so telling a script needs no import of the reader.)"""
    if format_of(path) == "shell":
        return True
    first = head.split(b"\n", 1)[0]
    return first.startswith(b"#!") and (b"bash" in first or first.rstrip().endswith((b"/sh", b" sh")))


def stdin_name(raw: bytes) -> str:
    """A name for standard input read without `--stdin-filename` (`batchlint check -`), whose suffix
    says how its content reads: a JSON object, a shell script, a TOML table, Python, else YAML."""
    head = raw.lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith((b"{", b"[{", b"[\n")) or head.startswith(b"[") and head[1:2] in (b"]", b'"', b"0"):
        return "stdin.json"
    if is_shell_script("stdin", head[:128]) or re.search(rb"(?m)^\s*(torchrun|deepspeed|accelerate|srun|python3?)\s", head):
        return "stdin.sh"
    if re.search(rb"(?m)^\[[A-Za-z_][\w.-]*\]\s*$", head) and not re.search(rb"(?m)^\w+:\s", head):
        return "stdin.toml"
    if re.search(rb"(?m)^(from \w|import \w|\w+\s*=\s*dict\()", head):
        return "stdin.py"
    return "stdin.yaml"


def format_of(path: str) -> str | None:
    return FORMATS.get(os.path.splitext(path)[1].lower())


def read(path: str, text: str, fmt: str, *, from_utf8: bool = False, **options) -> Document:
    """Parse `text` as `fmt` (`options`: the reader's own, such as the shell's `sourcer`); raises
    ParseError for a file that is not valid and LimitExceeded for one past a bound of lint/limits.py,
    nothing else. `from_utf8`: `text` is bytes decoded as strict UTF-8, which cannot hold a lone
    surrogate, so none is looked for (encoding a non-ASCII text again to find one costs as much)."""
    bad = None if from_utf8 else surrogate_at(text)
    if bad is not None:  # not from a UTF-8 file: every reader would stumble on it differently
        starts = line_starts(text, fmt)
        line = bisect.bisect_right(starts, bad)
        raise ParseError(f"the text holds a lone surrogate U+{ord(text[bad]):04X}", line, bad - starts[line - 1] + 1)
    reader: Callable[..., Document]  # each reader takes (path, text) and its own options
    if fmt == "python":
        from .python import read_python as reader
    elif fmt == "yaml":
        from .yaml import read_yaml as reader
    elif fmt == "toml":
        from .toml import read_toml as reader
    elif fmt == "json":
        from .json import read_json as reader
    elif fmt == "shell":
        from .shell import read_shell as reader
    else:  # pragma: no cover - FORMATS and this table change together
        raise ValueError(fmt)
    collecting = gc.isenabled()
    # A reader allocates a great many objects and keeps them all: the cyclic
    # collector would rescan them again and again (half the time of a large file).
    gc.disable()
    try:
        try:
            return reader(path, text, **options)
        except LimitExceeded:
            raise
        except ParseError as error:
            if fmt == "python":
                from .template import jinja_source

                if jinja_source(path, text):  # a cookiecutter or Jinja template of a program: not Python yet
                    raise TemplateError("a Jinja template of a program, not Python until rendered") from None
            if fmt not in ("json", "yaml", "toml"):
                raise
            from .template import json_lines, read_template  # a file that does not parse may be a template

            if fmt == "json" and json_lines(text):
                raise TemplateError("JSON Lines data (one record per line), not a config") from None
            return read_template(path, text, fmt, reader, error)
    except RecursionError:  # a last resort: every reader bounds its nesting by MAX_DEPTH
        raise LimitExceeded("the file is nested too deeply to read") from None
    finally:
        if collecting:
            gc.enable()


__all__ = ["FORMATS", "format_of", "read", "ParseError", "LimitExceeded"]
