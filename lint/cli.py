"""The command line: `batchlint [check] PATHS`, `batchlint rule CODE`.

Exit codes: 0 clean, 1 findings, 2 usage, config or I/O error.
"""

from __future__ import annotations

import os
import sys

import click

from . import __version__


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


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("-w", "--world-size", type=click.IntRange(min=1), help="GPUs of the job (W), for checks that need it.")
@click.option("--global-batch", type=click.IntRange(min=1), help="The global batch (sequences per optimizer step) you mean to train with.")
@click.option("--format", "fmt", type=click.Choice(["text", "github", "json", "sarif"]), default="text", show_default=True)
@click.option("--output", "output", type=click.Path(dir_okay=False, path_type=str),
              help="Write the report to this file instead of standard output.")
@click.option("--select", multiple=True, help="Only these codes or prefixes (comma-separated; replaces the config's).")
@click.option("--ignore", multiple=True, help="Skip these codes or prefixes (comma-separated; adds to the config's).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=str), help="Project config to use instead of the nearest pyproject.toml/batchlint.toml.")
@click.option("--force-exclude", is_flag=True, help="Apply the config's exclude to files named on the command line too (for pre-commit).")
@click.option("--respect-gitignore/--no-respect-gitignore", default=True, show_default=True,
              help="Skip files that .gitignore and .git/info/exclude ignore.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--statistics", is_flag=True, help="Print how many findings each rule has, instead of the findings.")
@click.option("--show-source", is_flag=True, help="Show the line of each finding under it (text output).")
@click.option("--stdin-filename", type=str, help="Lint standard input as if it were this file (for editors).")
@click.option("--baseline", type=click.Path(dir_okay=False, path_type=str), help="Report only findings this baseline file does not record.")
@click.option("--write-baseline", type=click.Path(dir_okay=False, path_type=str), help="Record today's findings in this file and exit 0.")
@click.option("--fix", "apply_fixes", is_flag=True, help="Apply the fixes findings offer, then report what is left.")
@click.option("--diff", "show_diff", is_flag=True, help="Print the fixes as a unified diff; write nothing (also with --fix).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), help="Worker processes (default: one per core for large trees).")
@click.option("--cache-dir", envvar="BATCHLINT_CACHE_DIR", type=click.Path(file_okay=False, path_type=str),
              help="Keep results here and reuse them while files are unchanged (opt-in; env BATCHLINT_CACHE_DIR).")
@click.option("-v", "--verbose", is_flag=True, help="Show the traceback of an internal error.")
def check(paths, world_size, global_batch, fmt, output, select, ignore, config_path, force_exclude, respect_gitignore,
          exit_zero, statistics, show_source, stdin_filename, baseline, write_baseline, apply_fixes, show_diff, jobs,
          cache_dir, verbose):
    """Lint the training configs under PATHS (default: the current folder)."""
    from . import run as runs
    from .config import ConfigError
    from .engine import Options
    from .report import Summary, render, statistics_table

    if baseline or write_baseline:  # json and hashlib: not for a plain lint
        from . import baseline as baselines
    try:
        settings = runs.settings_for(config_path, select, ignore)
        known = baselines.load(baseline) if baseline else None
    except ConfigError as exc:
        _fail(str(exc))
    stdin_text = sys.stdin.buffer.read() if stdin_filename else None
    # Digests of the files read only for what compares them: the cache and the fixes.
    options = Options(world_size=world_size, global_batch=global_batch,
                      digests=bool(apply_fixes or show_diff or cache_dir))
    request = runs.Request(tuple(paths), settings, options,
                           force_exclude=force_exclude, respect_gitignore=respect_gitignore, jobs=jobs or 0,
                           cache_dir=cache_dir or "", stdin=(stdin_filename, stdin_text) if stdin_filename else None)
    run = runs.lint(request)
    if (apply_fixes or show_diff) and stdin_text is None:
        request = request.with_project()
        changed, failed = _print_fixes(runs.fix(request, run, write=apply_fixes and not show_diff))
        if show_diff:
            _report_problems(run, verbose)
            sys.exit(2 if run.errors or failed else 1 if changed else 0)  # like ruff --diff: 1 while fixes are pending
        if changed:
            run = runs.lint(request)  # what is left
        if failed:
            run.errors.append("a fix could not be written (see above)")
    _report_problems(run, verbose)
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
        click.echo(f"batchlint: recorded {len(diagnostics)} findings in {write_baseline}", err=True)
        sys.exit(2 if run.errors else 0)
    if known is not None:
        diagnostics = baselines.new_findings(diagnostics, known, lines)
    summary = Summary(files=len(run.files), configs=run.configs, unreadable=len(run.errors))
    if not run.files and not run.errors:  # on stderr, so it never mixes into json or github output
        click.echo("batchlint: warning: no Python, YAML, TOML, JSON or shell files found", err=True)
    color = fmt == "text" and not output and sys.stdout.isatty() and "NO_COLOR" not in os.environ
    if statistics:
        report = statistics_table(diagnostics, color=color)
    else:
        report = render(fmt, diagnostics, summary, color=color, source=lines if show_source else None)
    _write(report, output)
    sys.exit(runs.exit_code(run, diagnostics, exit_zero))


def _report_problems(run, verbose: bool) -> None:
    """Notices and errors on stderr: one line each, after linting everything that could be."""
    from .report import printable

    for notice in run.notices:
        click.echo(printable(f"batchlint: notice: {notice}"), err=True)
    for error in run.errors:
        hint = " (run with --verbose for the traceback)" if "internal error" in error and not verbose else ""
        click.echo(printable(f"batchlint: error: {error}{hint}"), err=True)
    if verbose:
        for trace in run.tracebacks:
            click.echo(trace, err=True)


def _print_fixes(fixes: list) -> tuple:
    """Each fix as a line (written) or a diff (not written); returns (files changed, whether a write failed)."""
    changed, failed = 0, False
    for result in fixes:
        if result.refused:
            failed = failed or result.error
            click.echo(f"batchlint: not fixing {result.path}: {result.refused}", err=True)
        elif result.changed:
            changed += 1
            if result.written:
                fixed = ", ".join(f"{code} x{n}" if n > 1 else code for code, n in sorted(result.codes.items()))
                click.echo(f"batchlint: fixed {result.path} ({fixed})", err=True)
            else:
                click.echo(result.diff(), nl=False)
    return changed, failed


def _write(report: str, output):
    from .report import without_surrogates

    report = without_surrogates(report)  # fields were made printable by each reporter
    if not output:
        click.echo(report, nl=False)
        return
    from .atomic import write_atomic

    try:
        write_atomic(output, report)
    except OSError as exc:
        _fail(f"cannot write {output}: {exc.strerror or exc}")


@main.command()
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=str))
@click.option("-w", "--world-size", "world_sizes", type=click.IntRange(min=1), multiple=True,
              help="GPUs of the job (W); give several to compare: -w 8 -w 16 -w 32.")
@click.option("--global-batch", type=click.IntRange(min=1), help="The global batch you mean to train with.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=str), help="Project config to use.")
def explain(path, world_sizes, global_batch, fmt, config_path):
    """Show the batch arithmetic of one config or launch script, each number with its source."""
    import json

    from . import run as running
    from .config import ConfigError, load_settings
    from .explain import as_json, as_text

    try:
        settings = load_settings(config_path)
    except ConfigError as exc:
        _fail(str(exc))
    try:
        explanations = running.explain(path, settings, tuple(world_sizes), global_batch)
    except OSError as exc:
        _fail(f"cannot read {path}: {exc.strerror or exc}")
    except Exception as exc:  # noqa: BLE001 - a defect of ours is exit 2 with one line, not a traceback
        _fail(f"internal error while explaining {path}: {type(exc).__name__}: {exc}")
    if fmt == "json":
        click.echo(json.dumps(as_json(explanations, tuple(world_sizes)), indent=2))
    else:
        click.echo(as_text(explanations, tuple(world_sizes)), nl=False)
    if not explanations:
        sys.exit(1)


@main.command()
@click.argument("code", required=False)
@click.option("--all", "show_all", is_flag=True, help="List every rule.")
def rule(code, show_all):
    """Explain what rule CODE checks, why, and how to fix it."""
    from batchlint.applies import describe
    from batchlint.rules import all_rules, find

    if show_all or not code:
        for r in all_rules():
            click.echo(f"{r.code}  {r.name:<32} {r.severity:<8} {r.summary}")
        return
    found = find(code)
    if found is None:
        _fail(f"unknown rule {code!r}; `batchlint rule --all` lists them")
    click.echo(f"# {found.code} {found.name}\n\nSeverity: {found.severity}. Applies to: {describe(found)}.\n")
    click.echo(found.documentation)


def _fail(message: str):
    click.echo(f"batchlint: error: {message}", err=True)
    sys.exit(2)
