"""Source readers: file text in, Document out. Nothing here is ever executed."""

from __future__ import annotations

import os

from ..document import Document, ParseError

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
}


def format_of(path: str) -> str | None:
    return FORMATS.get(os.path.splitext(path)[1].lower())


def read(path: str, text: str, fmt: str) -> Document:
    """Parse `text` as `fmt`; raises ParseError for a file that is not valid."""
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
    try:
        return reader(path, text)
    except RecursionError:
        raise ParseError("the file is nested too deeply to read") from None


__all__ = ["FORMATS", "format_of", "read", "ParseError"]
