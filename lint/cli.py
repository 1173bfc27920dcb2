"""The command line: `batchlint [check] PATHS`, `batchlint rule CODE`.

Exit codes: 0 clean, 1 findings, 2 usage, config or I/O error.
"""

from __future__ import annotations

import os
import sys

import click

from . import __version__, checking
from .checking import Printed, fail, guarded
from .report import FORMATS


class _DefaultToCheck(click.Group):
    """`batchlint configs/` means `batchlint check configs/`, as with ruff."""

    def parse_args(self, ctx, args):
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h", "--version")):
            args = ["check"] + list(args)
        return super().parse_args(ctx, args)

    def invoke(self, ctx):
        """A defect of ours is exit 2 with one line (checking.guarded)."""
        return guarded(super().invoke, ctx)


@click.group(cls=_DefaultToCheck, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="batchlint", message="%(prog)s %(version)s")
def main():
    """Static checks for the batch arithmetic of distributed-training configs.

    Run `batchlint PATHS` (same as `batchlint check PATHS`) to lint files and
    folders, `batchlint rule CODE` to read what a rule checks.
    """




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
        return Printed(printed or "text", tuple(also))



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
def check(**options):
    """Lint the training configs under PATHS (default: the current folder; `-`: standard input)."""
    checking.check(**options)


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
        fail("markdown output is for --compare REV")
    paths = paths or (".",)
    for path in paths:
        if not os.path.exists(path):
            fail(f"no such file or directory: {path}")
    try:
        settings = running.settings_for(config_path)
        files = _explained_files(paths, settings)
    except ConfigError as exc:
        fail(str(exc))
    notices: list = []
    explanations: list = []
    seen: set = set()  # a folder's config and the script that runs it explain one job: once
    for path in files:
        try:
            found = running.explain(path, settings.for_path(path), tuple(world_sizes), global_batch, notices)
        except OSError as exc:
            fail(f"cannot read {path}: {exc.strerror or exc}")
        except ConfigError as exc:
            fail(str(exc))
        except Exception as exc:  # noqa: BLE001 - a defect of ours is exit 2 with one line, not a traceback
            fail(f"internal error while explaining {path}: {type(exc).__name__}: {exc}")
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
        fail("--compare takes at most one --world-size")
    try:
        commit, changes = compare.compare(rev, tuple(paths), running.settings_for(config_path), tuple(world_sizes),
                                          global_batch)
    except (compare.CompareError, ConfigError) as exc:
        fail(str(exc))
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
        fail(f"unknown rule {code!r}; `batchlint rule --all` lists them")
    if fmt == "json":
        click.echo(json.dumps(pages.as_dict(found, describe(found)), indent=2, ensure_ascii=False))
    else:
        click.echo(pages.page(found, describe(found)), nl=False)


