"""The `batchlint` command's entry point: a plain lint runs without click.

Importing click costs a one-file lint more than linting the file does (~55 M instructions of ~190 M
over bare Python), and pre-commit and the editor pay start-up on every run. So a command line that
only names paths and the options of a plain lint (what the hook and CI give) is parsed here and handed
to `checking.check`, the function the click command calls; anything else (another command, `--help`,
an option not below, a value to check) goes to click, which parses and reports it as always.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

# Options taken here: (the `check` parameter, whether it takes a value).
_OPTIONS = {
    "--force-exclude": ("force_exclude", False),
    "-e": ("exit_zero", False), "--exit-zero": ("exit_zero", False),
    "-n": ("no_cache", False), "--no-cache": ("no_cache", False),
    "-q": ("quiet", False), "--quiet": ("quiet", False),
    "-s": ("silent", False), "--silent": ("silent", False),
    "-v": ("verbose", False), "--verbose": ("verbose", False),
    "--show-source": ("show_source", False),
    "--statistics": ("statistics", False),
    "--since": ("since", True),
    "-w": ("world_size", True), "--world-size": ("world_size", True),
    "--global-batch": ("global_batch", True),
    "--output-format": ("fmt", True), "--format": ("fmt", True),
    "-j": ("jobs", True), "--jobs": ("jobs", True),
    "--cache-dir": ("cache_dir", True),
}
_COUNTS = ("world_size", "global_batch", "jobs")  # click.IntRange(min=1)
# Options click also reads from the environment: with one set, click parses the line.
_ENVIRONMENT = ("BATCHLINT_OUTPUT_FORMAT", "BATCHLINT_CACHE_DIR")


def run() -> None:
    """The console script: `main`, then the process ends at once (as mypy's does). Tearing the interpreter
    down object by object cost a one-file lint a quarter of its time over bare Python, and nothing is left
    to do by then: every file written is closed, every worker joined, and no exit hook is batchlint's."""
    said: object = 0
    try:
        main()
    except SystemExit as exc:
        said = exc.code
    if said is None or isinstance(said, int):
        code = said or 0
    else:  # sys.exit("message"), as the interpreter shows it
        print(said, file=sys.stderr)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a closed pipe: the interpreter says so and exits, as before
            sys.exit(code)
    os._exit(code & 0xFF)


def main() -> None:
    options = plain_lint(sys.argv[1:])
    if options is None:
        from .cli import main as parsed_by_click

        parsed_by_click()
        return
    from .checking import check, guarded

    guarded(check, **options)


def plain_lint(args: list) -> Optional[dict]:
    """The `check` options of a plain lint's command line, every one not given at its default; None
    when click must parse it."""
    if any(os.environ.get(name) for name in _ENVIRONMENT):
        return None
    if args and args[0] == "check":
        args = args[1:]
    from .checking import DEFAULTS, Printed

    options = dict(DEFAULTS, fmt=Printed("text"))
    paths: list = []
    at = 0
    while at < len(args):
        word = args[at]
        at += 1
        if word == "--":
            paths.extend(args[at:])
            break
        if not word.startswith("-") or word == "-":
            if not paths and word in _COMMANDS:
                return None  # `batchlint explain ...`
            paths.append(word)
            continue
        name, equals, value = word.partition("=") if word.startswith("--") else (word, "", "")
        known = _OPTIONS.get(name)
        if known is None:
            return None
        key, valued = known
        if not valued:
            if equals:
                return None
            options[key] = True
            continue
        if not equals:
            if at >= len(args):
                return None
            value = args[at]
            at += 1
        taken = _value(key, value)
        if taken is None:
            return None
        options[key] = taken
    options["paths"] = tuple(paths)
    return options


def _value(key: str, value: str):
    """The option's value as click's type gives it; None for one click must judge."""
    if key in _COUNTS:
        return int(value) if value.isascii() and value.isdigit() and int(value) >= 1 else None
    if key == "fmt":
        from .checking import Printed
        from .report import FORMATS

        return Printed(value) if value in FORMATS else None
    if key == "cache_dir" and os.path.exists(value) and not (os.path.isdir(value) and os.access(value, os.R_OK)):
        return None  # click.Path(file_okay=False) judges a file or an unreadable folder
    return value if value and not value.startswith("-") else None


# The commands of the click group besides `check` (tests/test_cli_fast_path.py holds them to the group's).
_COMMANDS = frozenset({"explain", "rule", "server", "version"})
