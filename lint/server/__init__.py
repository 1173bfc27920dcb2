"""`batchlint server`: a Language Server on standard input and output, an optional extra
(pygls and lsprotocol: `pip install -e '.[server]'` in a clone; batchlint is not on PyPI).
Imported only by that command, so a lint never loads it."""

from __future__ import annotations

import sys


def main() -> int:
    """Serve until the client says exit; 2 when the extra is not installed."""
    try:
        import lsprotocol  # noqa: F401
        import pygls  # noqa: F401
    except ImportError as exc:
        # batchlint is not on PyPI: the extra installs from a clone or a git URL.
        print(f"batchlint: error: `batchlint server` needs pygls and lsprotocol ({exc}): install batchlint[server]: "
              "pip install -e '.[server]' in a clone, or "
              "pip install 'batchlint[server] @ git+<your repository URL>'", file=sys.stderr)
        return 2
    from .protocol import serve

    serve()
    return 0
