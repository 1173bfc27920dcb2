"""What every table generator in tools/ shares: reading each named release of a
framework from a clone of its repository (`git show TAG:path`, nothing checked
out, nothing run), rendering the releases x keys table lint/keysets.py reads, and
last, writing the module, or with --check saying whether the committed one is
exactly what the generator makes."""

from __future__ import annotations

import argparse
import subprocess
from collections.abc import Callable
from typing import Optional

from batchlint.keysets import spans


def git_reader(repository: str, tag: str) -> Callable[[str], Optional[str]]:
    """`read(relative path)` of the tree at `tag` of the git repository at `repository`
    (a clone, or its .git folder); None for a path the tree lacks."""

    def read(path: str) -> Optional[str]:
        done = subprocess.run(["git", f"--git-dir={repository}", "show", f"{tag}:{path}"],
                              capture_output=True, check=False)
        return done.stdout.decode("utf-8") if done.returncode == 0 else None

    return read


def render_table(header: str, releases: tuple, per_release: dict, order: list) -> str:
    """The module text: RELEASES ((release, what it was read from), oldest first) and
    TABLE (key -> the releases that have it), keys in `order`."""
    names = tuple(name for name, _ in releases)
    lines = [header, "RELEASES = ("]
    lines += [f'    ("{name}", "{source}"),' for name, source in releases]
    lines += [")", "", "TABLE = {"]
    for key in order:
        present = [name for name in names if key in per_release[name]]
        lines.append(f'    "{key}": "{spans(present, names)}",')
    lines += ["}", ""]
    return "\n".join(lines)


def arguments(argv: list, doc: str, framework: str) -> argparse.Namespace:
    """The command line every generator takes: the framework's repository, and --check."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("repository", help=f"a clone of {framework} (its .git folder, or a bare clone)")
    parser.add_argument("--check", action="store_true", help="exit 1 if the module differs instead of writing it")
    return parser.parse_args(argv)


def write_or_check(target: str, text: str, check: bool) -> int:
    """0 when written, or when checking and the module equals `text`; 1 when it differs."""
    if check:
        with open(target, encoding="utf-8") as handle:
            return 0 if handle.read() == text else 1
    with open(target, "w", encoding="utf-8") as handle:
        handle.write(text)
    return 0
