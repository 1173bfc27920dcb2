"""`batchlint server`: a Language Server on standard input and output, an optional extra
(`pip install 'batchlint[server]'`: pygls and lsprotocol). Imported only by that command,
so a lint never loads it."""

from __future__ import annotations

import sys


def main() -> int:
    """Serve until the client says exit; 2 when the extra is not installed."""
    try:
        import lsprotocol  # noqa: F401
        import pygls  # noqa: F401
    except ImportError as exc:
        print(f"batchlint: error: `batchlint server` needs pygls and lsprotocol ({exc}): "
              "install batchlint[server] (pip install 'batchlint[server]')", file=sys.stderr)
        return 2
    from .protocol import serve

    serve()
    return 0
