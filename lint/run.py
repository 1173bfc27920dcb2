"""One run over many paths, shared by the command line and any other front end:
discovery, linting (in workers, through the cache), one deterministic list of
findings, and what could not be linted. Front ends only print.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable

from . import per_run
from .config import Configs, Settings
from .diagnostic import Diagnostic
from .engine import Options
from .lean_dataclass import field, lean_dataclass, replace
from .rule import LAUNCH_NOTE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional


@lean_dataclass(frozen=True)
class Request:
    """What to lint and how: everything a front end decides before linting."""

    paths: tuple
    settings: Settings | Configs  # Configs: each file's nearest project config
    options: Options
    force_exclude: bool = False
    respect_gitignore: bool = True
    jobs: int = 0
    cache_dir: str = ""
    stdin: Optional[tuple] = None  # (file name, bytes): an editor's buffer instead of `paths`

    def with_project(self) -> Request:
        """The same request with its project boundary fixed, so every round of `--fix` shares it."""
        if self.options.project is not None:
            return self
        from .project import find_project

        project = find_project(list(self.paths) or ["."], base_settings(self.settings))
        return replace(self, options=replace(self.options, project=project))


def settings_for(config_path: Optional[str] | tuple, select: Iterable[str] = (), ignore: Iterable[str] = (),
                 extend_select: Iterable[str] = (), exclude: Iterable[str] = (),
                 extend_exclude: Iterable[str] = ()) -> Settings | Configs:
    """Each file's project config, then the command line: `select` and `exclude` replace the config's,
    `extend-select`, `ignore` and `extend-exclude` add to it (exclude patterns are relative to the
    working directory). With `config_path`, that config for every file (Settings); else the nearest
    config of each file (Configs); `config_path` may be `--config`'s values, TOML `key = value`s among them
    applied over each config (ruff's `--config`). Raises ConfigError for a broken config or a code that names no rule
    (a config found later, for a file of a sub-project, raises when it is first read)."""
    from batchlint.rules import known_codes

    from .config import anchored, load_settings, overridden, parse_codes, split_config_args, unknown_codes

    path, inline = split_config_args(config_path)
    chosen, extended = parse_codes(select, "--select"), parse_codes(extend_select, "--extend-select")
    ignored = parse_codes(ignore, "--ignore")
    excluded, extra = _patterns(exclude), _patterns(extend_exclude)

    def adjust(settings: Settings) -> Settings:
        kept = settings.exclude if not excluded else anchored(excluded, settings.root)
        settings = overridden(settings, inline)
        settings = replace(settings, select=chosen or settings.select,
                                       extend_select=settings.extend_select + extended,
                                       ignore=settings.ignore + ignored,
                                       exclude=kept + anchored(extra, settings.root))
        unknown_codes(settings, known_codes())
        return settings

    return adjust(load_settings(path)) if path else Configs(adjust)


def _patterns(values: Iterable[str]) -> tuple:
    """Globs given on the command line, repeated or comma-separated."""
    return tuple(p.strip() for value in values for p in value.split(",") if p.strip())


def base_settings(settings: Settings | Configs) -> Settings:
    """The settings of the run as a whole (its project boundary): those nearest the working directory."""
    return settings.default if isinstance(settings, Configs) else settings


def lint(request: Request) -> Run:
    if request.stdin is not None:
        name = request.stdin[0]
        return lint_text(name, request.stdin[1], request.settings.for_path(name), request.options)
    return lint_paths(list(request.paths), request.settings, request.options, force_exclude=request.force_exclude,
                      respect_gitignore=request.respect_gitignore, jobs=request.jobs, cache_dir=request.cache_dir)


def applicable(diagnostics: list, unsafe: bool = False) -> list:
    """The findings with the edits `--fix` may make: an unsafe fix's only with `--unsafe-fixes`."""
    return list(diagnostics) if unsafe else [replace(d, edits=()) if d.unsafe_fix and d.edits else d
                                            for d in diagnostics]


def fix(request: Request, run: Run, write: bool, unsafe: bool = False) -> list:
    """Every fix the findings of `run` offer, applied round after round until none is left
    (written only with `write`; unsafe fixes only with `unsafe`). Returns FileFix per file touched."""
    from .fix import fix_until_stable
    from .project import overlaid

    request = replace(request.with_project(), jobs=1, cache_dir="")  # the cache knows no overlay

    def lint_round(overlay: dict) -> tuple:
        with overlaid(overlay):
            again = lint(request) if overlay else run
        digests: dict = {}
        for result in again.results:
            for path, digest in result.reads.items():
                digests[path] = digest or digests.get(path, "")  # a read beats a look that found nothing
        return applicable(again.diagnostics, unsafe), digests

    return fix_until_stable(lint_round, write=write, project=request.options.project)


@lean_dataclass
class BufferFix:
    """`--fix` on standard input: the buffer with its fixes made, for the caller to print."""

    text: str  # the fixed buffer (the buffer as given when `refused`)
    run: Run  # the lint of `text`: what is left
    fixed: int = 0  # findings fixed
    refused: str = ""  # why no fix was made, if none was


def fix_buffer(request: Request, unsafe: bool = False, max_rounds: int = 8) -> BufferFix:
    """The fixes a buffer's findings offer in the buffer itself (an edit of another file, such as a
    linked DeepSpeed JSON, is not made: an editor's fix-on-save changes the buffer only), round
    after round; kept only when the fixed buffer parses again and has fewer findings of the codes
    fixed."""
    from .fix import apply_findings, format_for, parse_problem

    assert request.stdin is not None, "fix_buffer fixes standard input"
    name, raw = request.stdin
    run = lint(request)
    try:
        original = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return BufferFix(raw.decode("utf-8", "replace"), run, refused="it is not valid UTF-8")
    fmt, text, fixed, first = format_for(name, raw), original, Counter[str](), run
    bom = "\ufeff" if raw.startswith(b"\xef\xbb\xbf") else ""
    current = run
    for _ in range(max_rounds):
        own = [d for d in applicable(current.diagnostics, unsafe)
               if d.edits and all(_same_file(e.path or d.path, name) for e in d.edits)]
        after, codes = apply_findings(text, own, fmt)
        if after == text:
            break
        text, fixed = after, fixed + codes
        current = lint(replace(request, stdin=(name, (bom + text).encode("utf-8"))))
    if text == original:
        return BufferFix(bom + original, run)
    problem = parse_problem(name, text, fmt)
    before = sum(1 for d in first.diagnostics if d.code in fixed)
    left = sum(1 for d in current.diagnostics if d.code in fixed)
    if problem or left >= before:
        return BufferFix(bom + original, run, refused=problem or f"the fix does not remove {', '.join(sorted(fixed))}")
    return BufferFix(bom + text, current, fixed=before - left)


def _same_file(a: str, b: str) -> bool:
    return os.path.abspath(a) == os.path.abspath(b)


@lean_dataclass
class Run:
    files: list = field(default_factory=list)  # what was linted, as discovered
    results: list = field(default_factory=list)  # FileResult per file
    diagnostics: list = field(default_factory=list)  # deduplicated, in a total order
    notices: list = field(default_factory=list)  # skipped files, references not followed
    errors: list = field(default_factory=list)  # paths that could not be linted: exit 2
    tracebacks: list = field(default_factory=list)  # of internal errors, for --verbose

    @property
    def configs(self) -> int:
        return sum(1 for r in self.results if r.framework)


def explain(path: str, settings: Settings, world_sizes: tuple = (), global_batch: Optional[int] = None,
            notices: Optional[list] = None, as_run: bool = True) -> list:
    """The batch arithmetic of one config or launch script (lint/explain.py), read within the
    same project boundary a lint of that path has; what a lint would say as notices (a config the
    line names that is not there) is added to `notices`."""
    from . import explain as explaining, project, reads

    per_run.forget()  # a new run: the files in view may have changed
    settings = settings.for_path(path)
    with project.using(project.find_project([path], settings)):
        if notices is None:  # a caller tracking the reads itself (compare) keeps them
            return explaining.explain(path, settings, world_sizes, global_batch, as_run)
        with reads.tracking(digests=False) as touched:
            explanations = explaining.explain(path, settings, world_sizes, global_batch, as_run)
    notices.extend(touched.notices)
    return explanations


# Scripts by their names (what launches is linted before what is launched); the order changes no finding.
SCRIPTS = (".sh", ".bash", ".zsh", ".ksh", ".slurm", ".sbatch", ".pbs", ".qsub", ".lsf", ".job")


def lint_paths(paths: list, settings: Settings | Configs, options: Options, *, force_exclude: bool = False,
               respect_gitignore: bool = True, jobs: int = 0, cache_dir: str = "") -> Run:
    """Discover and lint `paths` (default: the current folder), each file with its settings."""
    from batchlint.rules import LAZY

    from . import project
    from .discover import discover
    from .launching.jobs import ProjectJobs
    from .parallel import lint_files
    from .project import Project, find_project

    per_run.forget()  # a new run: the files in view may have changed
    paths = list(paths) or ["."]
    given = options.project
    boundary = given or find_project(paths, base_settings(settings))
    found = discover(paths, settings, force_exclude, respect_gitignore=respect_gitignore, project=boundary)
    run = Run(files=list(found.files), notices=list(found.notices), errors=list(found.problems))
    groups: dict = {}  # id of Settings -> (Settings, indices of its files)
    for index, path in enumerate(run.files):
        own = settings.for_path(path)
        groups.setdefault(id(own), (own, []))[1].append(index)
    if given is None:  # a sub-project's config may widen where references resolve
        extra = {os.path.realpath(p) for own, _ in groups.values() for p in own.reference_paths}
        boundary = Project(tuple(sorted(set(boundary.roots) | extra)))
    given_paths = [os.path.realpath(p) for p in paths]
    whole = all(any(root == p or root.startswith(p.rstrip(os.sep) + os.sep) for p in given_paths)
                for root in boundary.roots)
    known_jobs = ProjectJobs()
    options = replace(options, project=boundary, whole_project=whole, jobs=known_jobs)
    if not whole:  # the jobs of the files given are linted before them, not from inside their lints
        with project.using(boundary):
            known_jobs.prepare(run.files, settings.for_path, options, LAZY)
    run.results = [None] * len(run.files)
    for own, indices in groups.values():
        batches = [indices]
        if whole and (options.world_size or own.world_size):
            # A guessed W is for the configs no launch line runs: the scripts are linted first, here, so
            # every worker forked for the configs knows what they launch (ProjectJobs.record).
            scripts = [i for i in indices if run.files[i].endswith(SCRIPTS)]
            batches = [scripts, [i for i in indices if not run.files[i].endswith(SCRIPTS)]]
        for number, batch in enumerate(batches):
            workers = 1 if number == 0 and len(batches) > 1 else jobs
            for index, result in zip(batch, lint_files([run.files[i] for i in batch], own, options, LAZY, workers,
                                                       cache_dir)):
                run.results[index] = result
    return collect(run)


def lint_text(filename: str, raw: bytes, settings: Settings, options: Options) -> Run:
    """Lint `raw` as if it were the file `filename` (an editor's buffer on stdin)."""
    from batchlint.rules import LAZY

    from . import project
    from .engine import lint_file
    from .launching.jobs import ProjectJobs

    per_run.forget()  # a new run: the files in view may have changed
    known_jobs = ProjectJobs()
    options = replace(options, jobs=known_jobs)
    with project.using(options.project or project.find_project([filename], settings)):
        known_jobs.prepare([filename], lambda path: settings, options, LAZY)
    return collect(Run(files=[filename], results=[lint_file(filename, settings, options, LAZY, raw=raw)]))


def collect(run: Run) -> Run:
    for result in run.results:
        run.notices.extend(result.notices)
        if result.error:
            run.errors.append(result.error)
        if result.traceback:
            run.tracebacks.append(result.traceback)
    run.notices = sorted(set(run.notices))
    judged = _judged(run.results)
    run.diagnostics = unique(judged if judged is not None else (d for r in run.results for d in r.diagnostics))
    return run


def _judged(results: list) -> Optional[list]:
    """Every finding, with a BL005 (unused suppression) kept only when every lint of the run that
    read its file found the directive unused: a config's directive that the launch script linting
    it used is used. None when there is no BL005 (nothing to judge)."""
    from .engine import UNUSED_DIRECTIVE

    code = UNUSED_DIRECTIVE[0]
    if not any(d.code == code for r in results for d in r.diagnostics):
        return None
    reported = []  # per result: the BL005 it reports
    for r in results:
        reported.append({(os.path.abspath(d.path), d.span, d.message) for d in r.diagnostics if d.code == code})
    read = [(set(r.reads) - set(r.searched)) | {os.path.abspath(r.path)} for r in results]
    kept = []
    for r in results:
        for d in r.diagnostics:
            if d.code == code:
                key = (os.path.abspath(d.path), d.span, d.message)
                if not all(key in found for found, paths in zip(reported, read) if key[0] in paths):
                    continue
            kept.append(d)
    return kept


def unique(diagnostics: Iterable[Diagnostic]) -> list:
    """Every finding once, in one total order, whatever order files were linted in.

    A config linted on its own and again through the launch script that names
    it yields the same finding twice: they are one, with the notes of both
    ("launched here"). A rule's findings at one place reached through several
    jobs (the config's own lint without W, each launch line that runs it with
    its W) are one problem: reported as one job gives it (`_one_job`), with the
    other jobs' launch lines as notes. Two findings of one job at one place are
    both kept."""
    merged: dict = {}
    for d in diagnostics:
        key = (d.code, d.path, d.span, d.message, d.severity)
        kept = merged.get(key)
        if kept is None:
            merged[key] = d
        elif d.related != kept.related or d.edits != kept.edits:
            merged[key] = _merge(kept, d)
    places: dict = {}
    for d in merged.values():
        places.setdefault((d.code, d.path, d.span), []).append(d)
    found = [d for same in places.values() for d in (same if len(same) == 1 else _one_job(same))]
    return sorted(found, key=order)


_SEVERITY = {"error": 0, "warning": 1, "info": 2}


def _one_job(same: list) -> list:
    """Of one rule's findings at one place, those of one job: the most severe, then one a launch line
    reached (its W known), then the first by its launch notes; each with every other job's launch
    notes added."""
    jobs: dict = {}
    for d in same:
        jobs.setdefault(tuple(r for r in d.related if r.message.startswith(LAUNCH_NOTE)), []).append(d)
    if len(jobs) == 1:
        return same
    chosen = min(jobs, key=lambda notes: (min(_SEVERITY.get(d.severity, 3) for d in jobs[notes]), not notes,
                                          [(r.path or "", r.span, r.message) for r in notes]))
    others = tuple(dict.fromkeys(r for notes in jobs if notes != chosen for r in notes if r not in chosen))
    return [replace(d, related=d.related + tuple(r for r in others if r not in d.related))
            for d in jobs[chosen]]


def _merge(a: Diagnostic, b: Diagnostic) -> Diagnostic:
    related = tuple(sorted(set(a.related) | set(b.related), key=lambda r: (r.path or "", r.span, r.message)))
    edits = a.edits if a.edits else b.edits
    unsafe = a.unsafe_fix if a.edits else b.unsafe_fix
    return replace(a, related=related, edits=edits, fix=a.fix or b.fix, unsafe_fix=unsafe)


def order(d: Diagnostic) -> tuple:
    """A total order: place, then code, then the rest, so no tie is left to chance."""
    return (d.path, d.span.line, d.span.column, d.code, d.span.end_line, d.span.end_column, d.message,
            d.severity, d.fix or "", d.framework or "")


def exit_code(run: Run, diagnostics: Optional[list] = None, exit_zero: bool = False, fail_on: str = "warning") -> int:
    """2 when anything could not be linted (after reporting everything else), 1 for a finding at least as
    severe as `fail_on` (an info does not fail a run unless `fail_on` is "info"), else 0."""
    from .config import FAIL_ON

    if run.errors:
        return 2
    failing = FAIL_ON[:FAIL_ON.index(fail_on) + 1]
    found = run.diagnostics if diagnostics is None else diagnostics
    return 0 if exit_zero or not any(d.severity in failing for d in found) else 1


def fail_on(settings: Settings | Configs, given: Optional[str]) -> str:
    """The threshold of a run: `--fail-on`, else `fail-on` of the project config nearest the working
    directory (or the one `--config` names), else DEFAULT_FAIL_ON."""
    from .config import DEFAULT_FAIL_ON

    base = settings if isinstance(settings, Settings) else settings.default
    return given or base.fail_on or DEFAULT_FAIL_ON


def settings_data(settings: Settings, path: str) -> dict:
    """The settings `path` is linted with, as `--show-settings` prints them."""
    from batchlint.rules import all_rules

    from .discover import display_path

    relative = settings.relative(path)
    return {
        "path": display_path(path),
        "config": settings.source or None,
        "root": display_path(settings.root),
        "select": list(settings.select),
        "extend-select": list(settings.extend_select),
        "ignore": list(settings.ignore),
        "exclude": list(settings.exclude),
        "excluded": settings.excluded(relative),
        "per-file-ignores": {glob: list(codes) for glob, codes in settings.per_file_ignores.items()},
        "world-size": settings.world_size,
        # W as the jobs in view run the file: what check, explain and hover take, before any guess.
        "launched-by": _launched_by(settings, path),
        "global-batch": settings.global_batch,
        "reference-paths": [display_path(p) for p in settings.reference_paths],
        "versions": dict(settings.versions),
        "fail-on": settings.fail_on,
        "enabled": [rule.code for rule in all_rules() if settings.enabled(rule.code, relative)],
    }


def _launched_by(settings: Settings, path: str) -> list:
    """`script:line (W=8)` of each launch line in view that runs the file at `path` (none when it is not there)."""
    from . import explain, project
    from .discover import display_path
    from .launching.jobs import launch_label

    if not os.path.isfile(path):
        return []
    per_run.forget()
    try:
        with project.using(project.find_project([path], settings)):
            jobs = explain.plans_of(path, settings)
    except OSError:
        return []
    return [launch_label(note, plan) for note, plan in jobs if note is not None and note.path != display_path(path)]


def settings_report(settings: Settings, path: str, fmt: str) -> str:
    """`--show-settings`: JSON in the JSON formats, else `key = value` lines (TOML values)."""
    import json

    data = settings_data(settings, path)
    if fmt in ("json", "json-lines"):
        return json.dumps(data, indent=2 if fmt == "json" else None, ensure_ascii=False) + "\n"
    head = f"# Settings for {data.pop('path')} (config: {data.pop('config') or 'none, the defaults'})"
    return "\n".join([head] + [f"{key} = {json.dumps(value, ensure_ascii=False)}" for key, value in data.items()]) + "\n"


def files_data(run: Run) -> list:
    """`--show-files`: each file discovered with the framework it was read as (null: not a training
    config), or why it was skipped or could not be read; by path."""
    rows = [{"path": r.path, "framework": r.framework, "skipped": r.error or (None if r.framework else "not a training config"),
             **({"read_as": list(r.bases)} if r.bases else {})}
            for r in run.results]
    for notice in run.notices:
        if notice.startswith("skipped "):
            path, _, why = notice[len("skipped "):].partition(": ")
            rows.append({"path": path, "framework": None, "skipped": why})
    unique_rows = {(row["path"], row["framework"] or "", row["skipped"] or ""): row for row in rows}
    return [unique_rows[key] for key in sorted(unique_rows)]


def files_report(run: Run, fmt: str) -> str:
    from .report import dump, printable

    rows = files_data(run)
    if fmt in ("json", "json-lines"):
        return dump(rows, fmt)

    return "".join(printable(f"{row['path']}: {row['framework'] or 'skipped: ' + row['skipped']}"
                             + "".join(f" ({basis})" for basis in row.get("read_as", ()))) + "\n"
                   for row in rows)


def fixes_report(results: list, names: dict) -> str:
    """`--show-fixes` after `--fix`: what was fixed, per file and rule (ruff's enumeration)."""
    from .report import printable

    written = [r for r in results if r.written and r.codes]
    total = sum(sum(r.codes.values()) for r in written)
    if not total:
        return ""
    lines = [f"Fixed {total} problem{'s' if total != 1 else ''}:"]
    for result in written:
        lines.append(printable(f"- {result.path}:"))
        lines.extend(f"    {n} \u00d7 {code} ({names.get(code, '')})" for code, n in sorted(result.codes.items()))
    return "\n".join(lines) + "\n\n"
