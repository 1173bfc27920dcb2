"""The command line: `batchlint [check] PATHS`, `batchlint rule CODE`.

Exit codes: 0 clean, 1 findings, 2 usage, config or I/O error.
"""

from __future__ import annotations

import functools
import os
import sys
from typing import NoReturn

import click

from . import __version__
from .report import FORMATS


class _DefaultToCheck(click.Group):
    """`batchlint configs/` means `batchlint check configs/`, as with ruff."""

    def parse_args(self, ctx, args):
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h", "--version")):
            args = ["check"] + list(args)
        return super().parse_args(ctx, args)

    def invoke(self, ctx):
        """A defect of ours is exit 2 with one line (the traceback with -v), never exit 1,
        which CI reads as "findings"."""
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except Exception as exc:  # noqa: BLE001
            import traceback

            if "-v" in sys.argv or "--verbose" in sys.argv:
                click.echo(traceback.format_exc(), err=True, nl=False)
            click.echo(f"batchlint: error: internal error: {type(exc).__name__}: {exc}", err=True)
            sys.exit(2)


@click.group(cls=_DefaultToCheck, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="batchlint", message="%(prog)s %(version)s")
def main():
    """Static checks for the batch arithmetic of distributed-training configs.

    Run `batchlint PATHS` (same as `batchlint check PATHS`) to lint files and
    folders, `batchlint rule CODE` to read what a rule checks.
    """


_TEXT = ("text", "concise", "full")


class _Formats(click.ParamType):
    """`FORMAT`, or pylint's `FORMAT,FORMAT:FILE,...`: the first without a file is printed, each other is
    written to its file, all from one run. The value is the printed format; the files ride on `.also`."""

    name = "format"

    def convert(self, value, param, ctx):
        if not isinstance(value, str):
            return value
        printed, also = None, []
        for part in (p.strip() for p in value.split(",")):
            fmt, colon, path = part.partition(":")
            if fmt not in FORMATS:
                self.fail(f"{fmt!r} is not one of {', '.join(map(repr, FORMATS))}", param, ctx)
            if colon and not path:
                self.fail(f"{part!r} names no file after ':'", param, ctx)
            if colon:
                also.append((fmt, path))
            elif printed is None:
                printed = fmt
            else:
                self.fail(f"{value!r} prints two formats: write the others to files (`sarif:out.sarif`)", param, ctx)
        return _Printed(printed or "text", tuple(also))


class _Printed(str):
    """The printed format, with the (format, file) pairs also written from the run."""

    also: tuple

    def __new__(cls, value: str, also: tuple = ()):
        made = super().__new__(cls, value)
        made.also = also
        return made


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("-w", "--world-size", type=click.IntRange(min=1), help="GPUs of the job (W), for checks that need it.")
@click.option("--global-batch", type=click.IntRange(min=1), help="The global batch (sequences per optimizer step) you mean to train with.")
@click.option("--output-format", "--format", "fmt", type=_Formats(), default="text", show_default=True,
              envvar="BATCHLINT_OUTPUT_FORMAT",
              help="How to print findings (env BATCHLINT_OUTPUT_FORMAT), with ruff's names: `concise` is `text`; "
                   "`full` adds each finding's line; `grouped` lists them under each file; github, gitlab (Code "
                   "Quality), azure, junit, pylint, rdjson (reviewdog), json, json-lines and sarif are for CI tools "
                   "(docs/output-formats.md). As pylint takes it, `github,sarif:out.sarif` also writes SARIF to a "
                   "file from the same run. `--format` is the older spelling.")
@click.option("-o", "--output-file", "--output", "output", type=click.Path(dir_okay=False, path_type=str),
              help="Write the report to this file instead of standard output.")
@click.option("--select", multiple=True, help="Only these codes or prefixes (comma-separated; replaces the config's).")
@click.option("--extend-select", multiple=True, help="These codes or prefixes too (comma-separated; adds to the config's select).")
@click.option("--ignore", multiple=True, help="Skip these codes or prefixes (comma-separated; adds to the config's).")
@click.option("--exclude", multiple=True,
              help="Skip files and folders matching these globs (comma-separated; replaces the config's exclude; "
                   "relative to the working directory, a name without `/` matching anywhere).")
@click.option("--extend-exclude", multiple=True, help="Like --exclude, but adds to the config's exclude.")
@click.option("--config", "config_path", multiple=True, metavar="FILE | KEY = VALUE",
              help="Project config for every file, instead of the nearest pyproject.toml/batchlint.toml of each; "
                   "or a TOML `key = value` of [tool.batchlint] set over each file's config (repeatable).")
@click.option("--force-exclude", is_flag=True, help="Apply the config's exclude to files named on the command line too (for pre-commit).")
@click.option("--respect-gitignore/--no-respect-gitignore", default=True, show_default=True,
              help="Skip files that .gitignore and .git/info/exclude ignore.")
@click.option("-e", "--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]),
              help="The least severity that fails the run (exit 1); findings below it are shown and pass "
                   "[default: the project config's fail-on, else warning].")
@click.option("--since", metavar="REV",
              help="Read the change since git revision REV as evidence too: a change to the parallel layout alone that "
                   "moves a job's global batch is reported (BL106). The pre-commit hook gives HEAD: the staged files.")
@click.option("--statistics", is_flag=True, help="Print how many findings each rule has, instead of the findings (in any format).")
@click.option("--show-source", is_flag=True, help="Show the line of each finding under it (text output; same as --output-format full).")
@click.option("--show-files", is_flag=True, help="List each file with the framework it was read as, or why it was skipped.")
@click.option("--show-settings", is_flag=True, help="Print the settings the file given is linted with, and exit.")
@click.option("--show-fixes", is_flag=True, help="With --fix, list what was fixed; without, show each fix's edits under its finding.")
@click.option("--stdin-filename", type=str, help="Lint standard input as if it were this file (for editors); `-` as the path reads it too.")
@click.option("--baseline", type=click.Path(dir_okay=False, path_type=str), help="Report only findings this baseline file does not record.")
@click.option("--write-baseline", type=click.Path(dir_okay=False, path_type=str), help="Record today's findings in this file and exit 0.")
@click.option("--fix", "apply_fixes", is_flag=True,
              help="Apply the fixes findings offer, then report what is left (on standard input: print the fixed buffer).")
@click.option("--unsafe-fixes", is_flag=True, help="Count and apply fixes that may change what a working config trains too.")
@click.option("--diff", "show_diff", is_flag=True, help="Print the fixes as a unified diff; write nothing (also with --fix).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), help="Worker processes (default: one per core for large trees).")
@click.option("--cache-dir", envvar="BATCHLINT_CACHE_DIR", type=click.Path(file_okay=False, path_type=str),
              help="Keep results here and reuse them while files are unchanged (opt-in; env BATCHLINT_CACHE_DIR).")
@click.option("-n", "--no-cache", is_flag=True, help="Read no cache and write none, whatever --cache-dir or the env says.")
@click.option("--exit-non-zero-on-fix", is_flag=True,
              help="With --fix: exit 1 when a fix was made, even if nothing is left (ruff's).")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
              help="Colour text output: auto is a terminal unless NO_COLOR is set (FORCE_COLOR forces it).")
@click.option("-q", "--quiet", is_flag=True, help="Print the findings only: no summary, notices or fix lines.")
@click.option("-s", "--silent", is_flag=True, help="Print nothing; the exit code tells (0 clean, 1 findings, 2 errors).")
@click.option("-v", "--verbose", is_flag=True, help="Show the traceback of an internal error.")
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
            _fail("`-` (standard input) cannot be linted together with other paths")
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
                _fail("--show-settings needs one file")
            _write(runs.settings_report(settings.for_path(target), target, fmt), output)
            return
        known = baselines.load(baseline) if baseline else None
    except ConfigError as exc:
        _fail(str(exc))
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
                _write(runs.files_report(run, fmt), output)
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
                click.echo(runs.fixes_report(results, names), nl=False)
            if changed:
                run = runs.lint(request)  # what is left
            if failed:
                run.errors.append("a fix could not be written (see above)")
    except ConfigError as exc:  # a sub-project's config, found while linting
        _fail(str(exc))
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
                _fail(str(exc))
            if not quiet:
                click.echo(f"batchlint: recorded {len(diagnostics)} findings in {write_baseline}", err=True)
            sys.exit(2 if run.errors else 0)
        if known is not None:
            diagnostics = baselines.new_findings(diagnostics, known, lines)
    summary = summary_of(files=len(run.files), configs=run.configs, unreadable=len(run.errors), fixed=fixed)
    if not run.files and not run.errors and not quiet:  # on stderr, so it never mixes into json or github output
        click.echo("batchlint: warning: no Python, YAML, TOML, JSON or shell files found", err=True)
    if since and fmt == "github" and os.environ.get("GITHUB_STEP_SUMMARY"):  # the Action: one run says it all
        _summarise_change(since, paths, settings, world_size, global_batch)
    if statistics:
        report = statistics_report(fmt, diagnostics, summary)
    else:
        report = render(fmt, diagnostics, summary, color=colored, source=lines if show_source else None)
    if not silent or output:
        _write(report, output, colored)
    for also, path in getattr(fmt, "also", ()):  # pylint's `github,sarif:out.sarif`: one run, more reports
        _write(render(also, diagnostics, summary, source=lines if show_source else None), path)
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
        click.echo(f"::warning title=batchlint compare::{escape_data(f'could not compare with {rev}: {exc}')}")
        return
    table = compare.as_markdown(changes, commit) if changes else f"### batchlint: no batch number moved since `{rev}`\n"
    click.echo(table, nl=False, err=True)
    try:
        with open(os.environ["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as handle:
            handle.write(table + "\n")
    except OSError as exc:
        click.echo(f"::warning title=batchlint compare::cannot write the job summary: {exc.strerror or exc}")


def _since(rev: str, where: str):
    """The change since `rev` of the repository holding `where`; exit 2 when it cannot be read (HEAD of a
    repository without a commit is no change: a first commit changes nothing that was there)."""
    from .change import Since
    from .revision import CompareError, at

    try:
        found = at(rev, where, empty_head=True)
    except CompareError as exc:
        _fail(f"--since: {exc}")
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
        click.echo(f"batchlint: not fixing {name}: {fixed.refused}", err=True)
    if show_diff:
        before = request.stdin[1].decode("utf-8-sig", "replace")
        diff = FileFix(name, before, fixed.text.lstrip("\ufeff")).diff()
        if not silent:
            click.echo(diff, nl=False)
        _report_problems(run, verbose, True, silent)
        sys.exit(2 if run.errors else 1 if diff else 0)
    sys.stdout.buffer.write(fixed.text.encode("utf-8", "surrogateescape"))
    sys.stdout.flush()
    _report_problems(run, verbose, False, silent)
    summary = summary_of(files=len(run.files), configs=run.configs, unreadable=len(run.errors), fixed=fixed.fixed)
    if not silent or output:
        report = render(fmt, run.diagnostics, summary, color=colored and fmt in _TEXT)
        if output:
            _write(report, output)
        else:
            click.echo(report, nl=False, err=True, color=colored or None)
    sys.exit(runs.exit_code(run, run.diagnostics, exit_zero, fail_on))


def _colored(choice: str, fmt: str, output) -> bool:
    """Colour for text output: --color, else NO_COLOR off, FORCE_COLOR on (each when set and not
    empty), else when standard output is a terminal and no file is written."""
    if fmt not in _TEXT or choice == "never":
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
        click.echo(printable(f"batchlint: notice: {notice}"), err=True)
    for error in run.errors:
        hint = " (run with --verbose for the traceback)" if "internal error" in error and not verbose else ""
        click.echo(printable(f"batchlint: error: {error}{hint}"), err=True)
    if verbose:
        for trace in run.tracebacks:
            click.echo(trace, err=True)


def _print_fixes(fixes: list, quiet: bool = False, silent: bool = False) -> tuple:
    """Each fix as a line (written) or a diff (not written); returns (files changed, whether a write failed)."""
    changed, failed = 0, False
    for result in fixes:
        if result.refused:
            failed = failed or result.error
            if not silent:
                click.echo(f"batchlint: not fixing {result.path}: {result.refused}", err=True)
        elif result.changed:
            changed += 1
            if result.written:
                fixed = ", ".join(f"{code} x{n}" if n > 1 else code for code, n in sorted(result.codes.items()))
                if not quiet:
                    click.echo(f"batchlint: fixed {result.path} ({fixed})", err=True)
            elif not silent:
                click.echo(result.diff(), nl=False)
    return changed, failed


def _write(report: str, output, color: bool = False):
    """`color`: keep the colour codes (click strips them where it sees no terminal)."""
    from .report import without_surrogates

    report = without_surrogates(report)  # fields were made printable by each reporter
    if not output:
        click.echo(report, nl=False, color=color or None)
        return
    from .atomic import write_atomic

    try:
        write_atomic(output, report)
    except OSError as exc:
        _fail(f"cannot write {output}: {exc.strerror or exc}")


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("-w", "--world-size", "world_sizes", type=click.IntRange(min=1), multiple=True,
              help="GPUs of the job (W); give several to compare: -w 8 -w 16 -w 32.")
@click.option("--global-batch", type=click.IntRange(min=1), help="The global batch you mean to train with.")
@click.option("--output-format", "--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text",
              show_default=True, help="markdown: with --compare, a table for a job summary.")
@click.option("--config", "config_path", multiple=True, metavar="FILE | KEY = VALUE",
              help="Project config to use instead of the file's nearest, or a TOML `key = value` set over it.")
@click.option("--compare", "rev", metavar="REV",
              help="Show only the rows that moved since git revision REV, for every config and launch script under "
                   "PATHS that changed or reads a file that changed (read through git; nothing checked out).")
def explain(paths, world_sizes, global_batch, fmt, config_path, rev):
    """Show the batch arithmetic of one config or launch script, each number with its source
    (with --compare REV: what changed since REV, for the configs under PATHS)."""
    import json

    from . import run as running
    from .config import ConfigError
    from .explain import as_json, as_text

    if rev is not None:
        _explain_compare(rev, paths, world_sizes, global_batch, fmt, config_path)
        return
    if fmt == "markdown":
        _fail("markdown output is for --compare REV")
    paths = paths or (".",)
    for path in paths:
        if not os.path.exists(path):
            _fail(f"no such file or directory: {path}")
    try:
        settings = running.settings_for(config_path)
        files = _explained_files(paths, settings)
    except ConfigError as exc:
        _fail(str(exc))
    notices: list = []
    explanations: list = []
    seen: set = set()  # a folder's config and the script that runs it explain one job: once
    for path in files:
        try:
            found = running.explain(path, settings.for_path(path), tuple(world_sizes), global_batch, notices)
        except OSError as exc:
            _fail(f"cannot read {path}: {exc.strerror or exc}")
        except ConfigError as exc:
            _fail(str(exc))
        except Exception as exc:  # noqa: BLE001 - a defect of ours is exit 2 with one line, not a traceback
            _fail(f"internal error while explaining {path}: {type(exc).__name__}: {exc}")
        for explanation in found:
            if (explanation.config, explanation.title) in seen or (explanation.config, None) in seen:
                continue  # a script's job that its config's table (a column per launch line) shows
            seen.add((explanation.config, explanation.title))
            if explanation.columns:
                seen.add((explanation.config, None))
            explanations.append(explanation)
    if fmt == "json":
        click.echo(json.dumps(as_json(explanations, tuple(world_sizes)), indent=2))
    else:
        click.echo(as_text(explanations, tuple(world_sizes)), nl=False)
    from .report import printable

    for notice in notices:  # as `check` says them: on stderr, after the output
        click.echo(printable(f"batchlint: notice: {notice}"), err=True)
    if not explanations:
        sys.exit(1)


def _explained_files(paths: tuple, settings) -> list:
    """The files `explain PATHS` explains: a file named, or those a lint of a folder reads, the configs
    before the launch scripts (a config's table has a column for each line that runs it)."""
    from . import project
    from .discover import discover
    from .run import SCRIPTS, base_settings

    if len(paths) == 1 and os.path.isfile(paths[0]):
        return list(paths)
    found = discover(list(paths), settings, project=project.find_project(list(paths), base_settings(settings))).files
    return sorted(found, key=lambda path: path.endswith(SCRIPTS))


def _explain_compare(rev: str, paths: tuple, world_sizes: tuple, global_batch, fmt: str, config_path) -> None:
    """`explain --compare REV`: the rows that moved; nothing printed when none did. Exit 0, or 2."""
    import json

    from . import compare, run as running
    from .config import ConfigError

    if len(world_sizes) > 1:
        _fail("--compare takes at most one --world-size")
    try:
        commit, changes = compare.compare(rev, tuple(paths), running.settings_for(config_path), tuple(world_sizes),
                                          global_batch)
    except (compare.CompareError, ConfigError) as exc:
        _fail(str(exc))
    if fmt == "json":
        click.echo(json.dumps(compare.as_json(changes), indent=2))
    else:
        click.echo(compare.as_markdown(changes, commit) if fmt == "markdown" else compare.as_text(changes), nl=False)


@main.command()
def version():
    """Print batchlint's version (as `--version` does; ruff's `version` command)."""
    click.echo(f"batchlint {__version__}")


@main.command()
def server():
    """Run the language server on standard input and output (the `server` extra: `pip install -e '.[server]'` in a clone)."""
    from .server import main as serve

    sys.exit(serve())


@main.command()
@click.argument("code", required=False)
@click.option("--all", "show_all", is_flag=True, help="List every rule.")
@click.option("--output-format", "--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="text: the rule's page (with --all, one line per rule); json: objects.")
def rule(code, show_all, fmt):
    """Explain what rule CODE checks, why, and how to fix it."""
    import json

    from batchlint.applies import describe
    from batchlint.rules import all_rules, find

    from .report import rules as pages

    if show_all or not code:
        chosen = list(all_rules())
        if fmt == "json":
            click.echo(json.dumps([pages.as_dict(r, describe(r)) for r in chosen], indent=2, ensure_ascii=False))
        else:
            click.echo(pages.table(chosen), nl=False)
        return
    found = find(code)
    if found is None:
        _fail(f"unknown rule {code!r}; `batchlint rule --all` lists them")
    if fmt == "json":
        click.echo(json.dumps(pages.as_dict(found, describe(found)), indent=2, ensure_ascii=False))
    else:
        click.echo(pages.page(found, describe(found)), nl=False)


def _fail(message: str) -> NoReturn:
    click.echo(f"batchlint: error: {message}", err=True)
    sys.exit(2)
