"""`batchlint check`: what the command does with its options, apart from how they are parsed.

The click command (lint/cli.py) and the fast path of a plain lint (lint/entry.py, which runs without
importing click: a pre-commit run lints a few files and pays its start-up each time) both call `check`.
"""

from __future__ import annotations

import functools
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

TEXT_FORMATS = ("text", "concise", "full")

# Every option of `check` as the command line leaves it when not given (tests/test_cli_fast_path.py holds
# them to the click command's defaults).
DEFAULTS = {
    "paths": (), "world_size": None, "global_batch": None, "output": None, "select": (), "extend_select": (),
    "ignore": (), "exclude": (), "extend_exclude": (), "config_path": (), "force_exclude": False,
    "respect_gitignore": True, "exit_zero": False, "fail_on": None, "since": None, "statistics": False,
    "show_source": False, "show_files": False, "show_settings": False, "show_fixes": False, "stdin_filename": None,
    "baseline": None, "write_baseline": None, "apply_fixes": False, "unsafe_fixes": False, "show_diff": False,
    "jobs": None, "cache_dir": None, "no_cache": False, "exit_non_zero_on_fix": False, "color": "auto",
    "quiet": False, "silent": False, "verbose": False,
}


class Printed(str):
    """The printed format, with the (format, file) pairs also written from the run."""

    also: tuple

    def __new__(cls, value: str, also: tuple = ()):
        made = super().__new__(cls, value)
        made.also = also
        return made


def check(paths, world_size, global_batch, fmt, output, select, extend_select, ignore, exclude, extend_exclude,
          config_path, force_exclude, respect_gitignore, exit_zero, fail_on, since, statistics, show_source, show_files, show_settings,
          show_fixes, stdin_filename, baseline, write_baseline, apply_fixes, unsafe_fixes, show_diff, jobs, cache_dir,
          no_cache, exit_non_zero_on_fix, color, quiet, silent, verbose):
    """Lint the training configs under PATHS (default: the current folder; `-`: standard input)."""
    from . import run as runs

    cache_dir = None if no_cache else cache_dir
    from .config import ConfigError
    from .engine import Options
    from .report import Summary, render, statistics_report

    quiet = quiet or silent
    given_paths = paths
    if "-" in paths:
        if len(paths) > 1:
            fail("`-` (standard input) cannot be linted together with other paths")
        paths = ()
    stdin_text = sys.stdin.buffer.read() if stdin_filename or "-" in given_paths else None
    if stdin_text is not None and not stdin_filename:  # its content says how to read it, as ruff's `-` does
        from .sources import stdin_name

        stdin_filename = stdin_name(stdin_text)
    if baseline or write_baseline:  # json and hashlib: not for a plain lint
        from . import baseline as baselines
    try:
        settings = runs.settings_for(config_path, select, ignore, extend_select, exclude, extend_exclude)
        if show_settings:
            target = stdin_filename or (paths[0] if len(paths) == 1 else None)
            if target is None:
                fail("--show-settings needs one file")
            write(runs.settings_report(settings.for_path(target), target, fmt), output)
            return
        known = baselines.load(baseline) if baseline else None
    except ConfigError as exc:
        fail(str(exc))
    # Digests of the files read only for what compares them: the cache and the fixes.
    options = Options(world_size=world_size, global_batch=global_batch,
                      digests=bool(apply_fixes or show_diff or cache_dir),
                      since=_since(since, stdin_filename or (paths[0] if paths else ".")) if since else None)
    request = runs.Request(tuple(paths), settings, options,
                           force_exclude=force_exclude, respect_gitignore=respect_gitignore, jobs=jobs or 0,
                           cache_dir=cache_dir or "", stdin=(stdin_filename, stdin_text) if stdin_filename else None)
    show_source = show_source or fmt == "full"
    colored = _colored(color, fmt, output)
    summary_of = functools.partial(Summary, unsafe_fixes=unsafe_fixes, quiet=quiet, show_fixes=show_fixes)
    try:
        if stdin_text is not None and (apply_fixes or show_diff):
            _fix_buffer(request, fmt, output, summary_of, unsafe_fixes, show_diff, exit_zero, silent, verbose, colored,
                        runs.fail_on(settings, fail_on))
        run = runs.lint(request)
        if show_files:
            _report_problems(run, verbose, quiet, silent)
            if not silent:
                write(runs.files_report(run, fmt), output)
            sys.exit(2 if run.errors else 0)
        fixed = 0
        if (apply_fixes or show_diff) and stdin_text is None:
            request = request.with_project()
            results = runs.fix(request, run, write=apply_fixes and not show_diff, unsafe=unsafe_fixes)
            changed, failed = _print_fixes(results, quiet, silent)
            if show_diff:
                _report_problems(run, verbose, quiet, silent)
                sys.exit(2 if run.errors or failed else 1 if changed else 0)  # like ruff --diff: 1 while fixes are pending
            names = {d.code: d.name for d in run.diagnostics}
            fixed = sum(sum(r.codes.values()) for r in results if r.written)
            if show_fixes and not silent:
                echo(runs.fixes_report(results, names), nl=False)
            if changed:
                run = runs.lint(request)  # what is left
            if failed:
                run.errors.append("a fix could not be written (see above)")
    except ConfigError as exc:  # a sub-project's config, found while linting
        fail(str(exc))
    _report_problems(run, verbose, quiet, silent)
    diagnostics = run.diagnostics
    lines = None
    if show_source or write_baseline or known is not None:
        from .fingerprint import SourceLines

        lines = SourceLines({run.files[0]: stdin_text.decode("utf-8", "replace")} if stdin_text is not None else None)
        if write_baseline:
            try:
                baselines.write(write_baseline, diagnostics, lines)
            except (ConfigError, OSError) as exc:
                fail(str(exc))
            if not quiet:
                echo(f"batchlint: recorded {len(diagnostics)} findings in {write_baseline}", err=True)
            sys.exit(2 if run.errors else 0)
        if known is not None:
            diagnostics = baselines.new_findings(diagnostics, known, lines)
    summary = summary_of(files=len(run.files), configs=run.configs, unreadable=len(run.errors), fixed=fixed)
    if not run.files and not run.errors and not quiet:  # on stderr, so it never mixes into json or github output
        echo("batchlint: warning: no Python, YAML, TOML, JSON or shell files found", err=True)
    if since and fmt == "github" and os.environ.get("GITHUB_STEP_SUMMARY"):  # the Action: one run says it all
        _summarise_change(since, paths, settings, world_size, global_batch)
    if statistics:
        report = statistics_report(fmt, diagnostics, summary)
    else:
        report = render(fmt, diagnostics, summary, color=colored, source=lines if show_source else None)
    if not silent or output:
        write(report, output)
    for also, path in getattr(fmt, "also", ()):  # pylint's `github,sarif:out.sarif`: one run, more reports
        write(render(also, diagnostics, summary, source=lines if show_source else None), path)
    code = runs.exit_code(run, diagnostics, exit_zero, runs.fail_on(settings, fail_on))
    sys.exit(1 if code == 0 and fixed and exit_non_zero_on_fix else code)


def _summarise_change(rev: str, paths: tuple, settings, world_size, global_batch) -> None:
    """The job summary's table of the batch numbers the change since `rev` moves (`explain --compare`),
    before the findings' table, and in the log; a change that cannot be compared is a warning, never a
    failure of the run."""
    from . import compare
    from .config import ConfigError
    from .report.github import escape_data

    try:
        commit, changes = compare.compare(rev, tuple(paths), settings, (world_size,) if world_size else (),
                                          global_batch)
    except (compare.CompareError, ConfigError, OSError) as exc:
        echo(f"::warning title=batchlint compare::{escape_data(f'could not compare with {rev}: {exc}')}")
        return
    table = compare.as_markdown(changes, commit) if changes else f"### batchlint: no batch number moved since `{rev}`\n"
    echo(table, nl=False, err=True)
    try:
        with open(os.environ["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as handle:
            handle.write(table + "\n")
    except OSError as exc:
        echo(f"::warning title=batchlint compare::cannot write the job summary: {exc.strerror or exc}")


def _since(rev: str, where: str):
    """The change since `rev` of the repository holding `where`; exit 2 when it cannot be read (HEAD of a
    repository without a commit is no change: a first commit changes nothing that was there)."""
    from .change import Since
    from .revision import CompareError, at

    try:
        found = at(rev, where, empty_head=True)
    except CompareError as exc:
        fail(f"--since: {exc}")
    return Since(found) if found is not None else None


def _fix_buffer(request, fmt: str, output, summary_of, unsafe: bool, show_diff: bool, exit_zero: bool,
                silent: bool, verbose: bool, colored: bool, fail_on: str) -> None:
    """`--fix` (or `--diff`) on standard input: the fixed buffer (or its diff) on standard output,
    what is left on standard error, as ruff does for editors' fix-on-save. Exits."""
    from . import run as runs
    from .fix import FileFix
    from .report import render

    fixed = runs.fix_buffer(request, unsafe)
    run = fixed.run
    name = request.stdin[0]
    if fixed.refused and not silent:
        echo(f"batchlint: not fixing {name}: {fixed.refused}", err=True)
    if show_diff:
        before = request.stdin[1].decode("utf-8-sig", "replace")
        diff = FileFix(name, before, fixed.text.lstrip("\ufeff")).diff()
        if not silent:
            echo(diff, nl=False)
        _report_problems(run, verbose, True, silent)
        sys.exit(2 if run.errors else 1 if diff else 0)
    sys.stdout.buffer.write(fixed.text.encode("utf-8", "surrogateescape"))
    sys.stdout.flush()
    _report_problems(run, verbose, False, silent)
    summary = summary_of(files=len(run.files), configs=run.configs, unreadable=len(run.errors), fixed=fixed.fixed)
    if not silent or output:
        report = render(fmt, run.diagnostics, summary, color=colored and fmt in TEXT_FORMATS)
        if output:
            write(report, output)
        else:
            echo(report, nl=False, err=True)
    sys.exit(runs.exit_code(run, run.diagnostics, exit_zero, fail_on))


def _colored(choice: str, fmt: str, output) -> bool:
    """Colour for text output: --color, else NO_COLOR off, FORCE_COLOR on (each when set and not
    empty), else when standard output is a terminal and no file is written."""
    if fmt not in TEXT_FORMATS or choice == "never":
        return False
    if choice == "always":
        return True
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return not output and sys.stdout.isatty()


def _report_problems(run, verbose: bool, quiet: bool = False, silent: bool = False) -> None:
    """Notices and errors on stderr: one line each, after linting everything that could be
    (no notices with --quiet, nothing with --silent)."""
    from .report import printable

    if silent:
        return
    for notice in () if quiet else run.notices:
        echo(printable(f"batchlint: notice: {notice}"), err=True)
    for error in run.errors:
        hint = " (run with --verbose for the traceback)" if "internal error" in error and not verbose else ""
        echo(printable(f"batchlint: error: {error}{hint}"), err=True)
    if verbose:
        for trace in run.tracebacks:
            echo(trace, err=True)


def _print_fixes(fixes: list, quiet: bool = False, silent: bool = False) -> tuple:
    """Each fix as a line (written) or a diff (not written); returns (files changed, whether a write failed)."""
    changed, failed = 0, False
    for result in fixes:
        if result.refused:
            failed = failed or result.error
            if not silent:
                echo(f"batchlint: not fixing {result.path}: {result.refused}", err=True)
        elif result.changed:
            changed += 1
            if result.written:
                fixed = ", ".join(f"{code} x{n}" if n > 1 else code for code, n in sorted(result.codes.items()))
                if not quiet:
                    echo(f"batchlint: fixed {result.path} ({fixed})", err=True)
            elif not silent:
                echo(result.diff(), nl=False)
    return changed, failed


def write(report: str, output) -> None:
    """The report on standard output, or into the file `output`."""
    from .document import without_surrogates

    report = without_surrogates(report)  # fields were made printable by each reporter
    if not output:
        echo(report, nl=False)
        return
    from .atomic import write_atomic

    try:
        write_atomic(output, report)
    except OSError as exc:
        fail(f"cannot write {output}: {exc.strerror or exc}")


def fail(message: str) -> NoReturn:
    """A usage, config or I/O error: one line on standard error, exit 2."""
    echo(f"batchlint: error: {message}", err=True)
    sys.exit(2)


def echo(text: str, err: bool = False, nl: bool = True) -> None:
    """Text on standard output (or error), as `click.echo` writes it: a character the stream cannot
    encode is replaced, not an exception."""
    stream = sys.stderr if err else sys.stdout
    if nl:
        text += "\n"
    try:
        stream.write(text)
    except UnicodeEncodeError:
        stream.flush()
        stream.buffer.write(text.encode(stream.encoding or "utf-8", "replace"))
    stream.flush()


def guarded(command, *args, **kwargs):
    """A defect of ours is exit 2 with one line (the traceback with -v), never exit 1, which CI reads
    as "findings"."""
    try:
        return command(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001
        if type(exc).__module__.startswith("click"):
            raise
        import traceback

        if "-v" in sys.argv or "--verbose" in sys.argv:
            echo(traceback.format_exc(), err=True, nl=False)
        echo(f"batchlint: error: internal error: {type(exc).__name__}: {exc}", err=True)
        sys.exit(2)
