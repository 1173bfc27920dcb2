"""Lint one file: read, recognise, plan, run the rules, apply directives.

The engine knows no framework: it asks the adapters registered for the file's
format, and runs every rule whose framework matches the plan.
"""

from __future__ import annotations

import functools
import gc
import os

from . import directives as directive_parser, project, reads, versions
from .config import Settings
from .diagnostic import Diagnostic, clean_text
from .discover import display_path, is_run_artifact, is_vocabulary
from .document import LaunchDocument, LimitExceeded, ParseError, Span, TooManyValues
from .frameworks import adapters_for, by_name, markers_for, tasks_for
from .frameworks.facts import Outside
from .launching.callers import running, written_by
from .launching.jobs import ProjectJobs, Resolver, Source, launch_reader, launched_from
from .lean_dataclass import field, lean_dataclass, replace
from .plan import Fact, Origin
from .rule import LAUNCH_NOTE, Edit, Related
from .sources import TemplateError, format_of, is_shell_script, read

TYPE_CHECKING = False

try:  # the C module `signal` wraps: the wrapper turns the handler it returns into an enum, and ours, which
    # is no member, by raising and catching ValueError (3% of a tree's lint, set twice a file); and importing
    # the wrapper builds its enums, which a one-file lint pays for nothing
    import _signal as _signals  # type: ignore[import-not-found]  # no stub: typeshed has none
except ImportError:  # pragma: no cover - an interpreter without CPython's _signal
    import signal as _signals
_set_handler = _signals.signal

if TYPE_CHECKING:
    import signal
    from collections.abc import Callable
    from types import FrameType
    from typing import Any, Optional, Union, overload

    from batchlint.rules import Lazy

    _Handler = Union[Callable[[int, Optional[FrameType]], Any], int, signal.Handlers, None]  # signal.signal's
else:
    from .annotations import overload

PARSE_ERROR = ("BL001", "parse-error")
BAD_DIRECTIVE = ("BL002", "invalid-directive")
PAST_LIMIT = ("BL003", "past-reading-limit")
STALE_DIRECTIVE = ("BL004", "directive-overridden-by-launch")
UNUSED_DIRECTIVE = ("BL005", "unused-suppression")

# A safety net behind the readers' own bounds: a file that still takes this long
# is reported as an internal error instead of holding up the run.
FILE_SECONDS = 20


@lean_dataclass
class Options:
    """Facts the command line gives, which an in-file directive may override."""

    world_size: Optional[int] = None
    global_batch: Optional[int] = None
    # `explain -w 8 -w 16` asks "what if": the given W beats the launch line's.
    world_size_wins: bool = False
    # Where references may resolve (lint/project.py); None: found from each file linted.
    project: Optional[project.Project] = None
    # FileResult.reads with the sha256 of each file read, which the cache and --fix compare;
    # a plain lint goes without (hashlib's import is a tenth of a one-file lint's own time).
    digests: bool = True
    # The run lints every file of the project (`batchlint .` at its top): each job's script is linted as a
    # file of the run, so a config's lint need not lint its jobs again for their findings in it.
    whole_project: bool = False
    # `check --since REV`: each job the change touches is planned again as it was at REV (lint/change.py).
    since: Optional[Any] = None
    # The run's jobs (lint/launching/jobs.py ProjectJobs): what launch lines run each file; None: a lint of its own.
    jobs: Optional[Any] = None


@lean_dataclass
class FileResult:
    """What linting one file gave: its findings, or why it could not be linted."""

    path: str
    diagnostics: list = field(default_factory=list)
    framework: Optional[str] = None  # None: not a training config
    error: Optional[str] = None  # not linted (unreadable, or an internal error): the CLI exits 2
    notices: list = field(default_factory=list)  # skipped or not followed, for stderr
    bases: tuple = ()  # what a framework label of its launch lines rests on (TrainingPlan.basis), for --show-files
    # Of `reads`, the files only searched as text (reads.Touched.searched): no directive of theirs was judged.
    searched: tuple = ()
    reads: dict = field(default_factory=dict)  # every file read: absolute path -> sha256 (lint/reads.py)
    searches: dict = field(default_factory=dict)  # searches through many files: "kind:folder" -> sha256 (reads.search)
    traceback: Optional[str] = None  # of an internal error, shown with --verbose




class TimeLimit(Exception):
    pass


def lint_file(path: str, settings: Settings, options: Options, rules: tuple | Lazy, raw: Optional[bytes] = None) -> FileResult:
    """Lint the file at `path` (or `raw`, its content given another way: an editor's buffer).
    Never raises: whatever goes wrong is this file's result, so no other file's findings are lost."""
    shown = display_path(path)
    result = FileResult(shown)
    boundary = options.project or project.find_project([path], settings)
    with reads.tracking(options.digests) as touched, project.using(boundary), \
            versions.configured(settings.versions, settings.source):
        try:
            with _time_limit(FILE_SECONDS):
                checker = check_file(path, settings, options, rules, raw, shown)
            result.framework = checker.framework
            result.bases = tuple(dict.fromkeys(f"{plan.framework}: {plan.basis}" for _, plan in checker.plans
                                               if plan.basis))
            result.diagnostics = sorted(set(checker.diagnostics), key=Diagnostic.sort_key)
        except project.NotRegular as exc:
            reads.notice(f"skipped {shown}: {exc}")
        except OSError as exc:
            result.error = f"cannot read {shown}: {exc.strerror or exc}"
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: B036 - a defect of ours must not end the run
            why = "took longer than the per-file limit" if isinstance(exc, TimeLimit) else f"{type(exc).__name__}: {exc}"
            result.error = f"internal error while linting {shown}: {_short(why)}"
            import traceback  # here: only a defect of ours needs it

            result.traceback = traceback.format_exc()
            result.diagnostics = []
    result.notices = list(touched.notices)
    result.reads = dict(touched.paths)
    result.searches = dict(touched.searches)
    result.searched = tuple(sorted(touched.searched - touched.read))
    return result


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


class _time_limit:
    """Raise TimeLimit in this thread after `seconds` (main thread of a process only,
    where signals arrive; elsewhere, and when a limit is already running, no limit).
    A class, not a generator: it is entered once for every file linted."""

    __slots__ = ("seconds", "armed", "previous")
    previous: _Handler  # the SIGALRM handler to restore, once armed

    def __init__(self, seconds: int):
        self.seconds = seconds
        self.armed = False  # no timer set: nothing to restore

    def __enter__(self) -> None:
        if hasattr(_signals, "setitimer") and _signals.getitimer(_signals.ITIMER_REAL)[0] <= 0:
            try:
                self.previous = _set_handler(_signals.SIGALRM, _expire)
            except ValueError:  # not the main thread, where alone signals arrive (no `threading` to ask)
                return
            self.armed = True
            _signals.setitimer(_signals.ITIMER_REAL, self.seconds)

    def __exit__(self, *exc) -> None:
        if self.armed:
            _signals.setitimer(_signals.ITIMER_REAL, 0)
            _set_handler(_signals.SIGALRM, self.previous)


def _expire(signum, frame):
    raise TimeLimit()


def check_file(path: str, settings: Settings, options: Options, rules: tuple | Lazy, raw: Optional[bytes] = None,
               shown: Optional[str] = None) -> _Checker:
    """Lint one file; the checker holds its diagnostics and the plans it made. Raises OSError.
    (`shown`: display_path(path), when the caller has it.)

    Without the cyclic garbage collector: a file's lint allocates a great many objects
    that all live until it ends (its document, its plans), which the collector would scan
    again and again for nothing; they go by reference counting when the file is done, and
    the collector, back on, takes whatever cycle is left."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _check_file(path, settings, options, rules, raw, shown or display_path(path))
    finally:
        if collecting:
            gc.enable()


def plan_file(path: str, settings: Settings, options: Options) -> list:
    """(launch note or None, plan) of each job of the file at `path`: planned, not judged (no rule runs,
    no finding is made). Raises OSError."""
    return check_file(path, settings, options, rules=()).plans


def _check_file(path: str, settings: Settings, options: Options, rules: tuple | Lazy, raw: Optional[bytes],
                shown: str) -> _Checker:
    checker = _Checker(settings, options, rules)
    checker.top = path
    if is_run_artifact(path, shown):
        reads.notice(f"skipped {shown}: written by a training run, not a config")
        return checker
    if raw is None:
        try:
            raw = project.read_bytes(path)
        except project.TooLarge as exc:
            checker.emit(shown, *PAST_LIMIT, "warning", f"not checked: the file has {exc}",
                         Span.point(1), fix="lint the config, not a data file; or split it")
            return checker
    fmt = format_of(path) or ("shell" if is_shell_script(path, raw[:128]) else None)
    if fmt is None:
        return checker  # no format batchlint reads
    markers = launch_reader().markers() if fmt == "shell" else markers_for(fmt)
    for marker in markers:  # a loop, not any(): asked of every file
        if marker in raw:
            break
    else:
        return checker  # no adapter could recognise it: not a training config
    if fmt == "json" and is_vocabulary(path, raw[:256]):  # its 50,000 tokens hold markers: not a config
        reads.notice(f"skipped {shown}: a tokenizer's vocabulary, not a config")
        return checker
    source = checker.load(path, raw, fmt, shown)
    if source is not None:
        task = None if fmt == "shell" else next(
            (task for task in tasks_for(fmt, raw) if task.matches(source.document.root)), None)
        if fmt == "shell" or task is not None:
            if fmt == "shell":
                checker.script(source)
            else:
                checker.task(source, task)
        else:
            found = len(checker.diagnostics)
            checker.config(source, checker.standalone(path, checker.outside(source.directives)), held=raw)
            if not options.whole_project and rules != ():  # a plan alone (plan_file) wants no findings
                checker.findings_of_jobs(path, shown)
            # Asked only of a config with findings: it takes a look through the scripts in view.
            if len(checker.diagnostics) > found and (writer := written_by(path)) is not None:
                del checker.diagnostics[found:]  # made again by a script before the job reads it
                reads.notice(f"skipped {shown}: {writer} writes it before it is used; the committed file is not what runs")
        if options.whole_project and (options.world_size or settings.world_size):
            # What it launches (a config: nothing): a config's lint under the guessed W need not lint it again.
            checker.project_jobs.record(path, settings, options, launched_from(checker.plans), *reads.snapshot())
    checker.unused_suppressions()
    return checker


class _Checker:
    """Collects the diagnostics of one file linted, and of the configs its launch lines name."""

    def __init__(self, settings: Settings, options: Options, rules: tuple | Lazy):
        self.settings, self.options, self.rules = settings, options, rules
        # `rules`: a tuple, or batchlint.rules.LAZY, which imports only the rules a plan's framework can run.
        codes = getattr(rules, "codes", None)
        self.known = _with_engine_codes(frozenset(r.code for r in rules) if codes is None else codes)
        self.diagnostics: list = []
        self.plans: list = []  # (the launch that applied, if any; TrainingPlan), for `explain`
        self.framework: Optional[str] = None
        self.directives: dict = {}  # shown path -> Directives, for suppression
        self.planned: set = set()  # shown paths whose rules ran: only their directives can be judged unused
        self.mounts: dict = {}  # path on the machine that runs a job file's script -> local path (TaskFile.mounts)
        self.top = ""  # the file linted
        self.project_jobs = options.jobs if options.jobs is not None else ProjectJobs()  # other files' jobs

    @property
    def resolver(self) -> Resolver:
        """Its launch scripts' lines, as jobs. Made when asked, not kept: a resolver holds its checker,
        and that cycle would leave each file's documents and plans to the cyclic collector (most of its
        work on a tree), where reference counting frees them as the file's lint ends."""
        return Resolver(self)

    def emit(self, path, code, name, severity, message, span, framework=None, fix=None, related=(), edits=(),
             unsafe_fix=False, suppressible=True, notes=()):
        where = span.path or path
        if not self.settings.enabled(code, self.settings.relative(where)):
            return
        found = self.directives.get(where)
        if suppressible and found is not None and code != BAD_DIRECTIVE[0] and found.suppresses(code, span.line):
            return
        own = self.directives.get(path) if where != path else None
        if suppressible and own is not None and any([s.matches(code, span.line) for s in own.suppressions
                                                     if s.target is None]):
            return  # found checking `path` (in a base it inherits from, say): its disable-file holds
        related = tuple(r if r.message == clean_text(r.message) else Related(clean_text(r.message), r.span, r.path)
                        for r in related)
        self.diagnostics.append(Diagnostic(code, name, severity, clean_text(message), where, span._replace(path=None),
                                           framework, clean_text(fix) if fix else fix, related, edits,
                                           unsafe_fix and bool(edits), tuple(clean_text(n) for n in notes)))

    def unused_suppressions(self) -> None:
        """BL005 for each code of a `disable` that suppressed no finding, in a file whose rules ran
        (a file that did not parse, or is no training config, says nothing about its directives),
        for a code every rule of which this run checks there. The run keeps one only when every
        lint that read the file found it unused (run.collect)."""
        for path in sorted(self.planned):
            found = self.directives.get(path)
            if found is None or not found.suppressions:
                continue  # the common case, told before the path is made relative
            relpath = self.settings.relative(path)
            if not self.settings.enabled(UNUSED_DIRECTIVE[0], relpath):
                continue
            candidates = [(s, [c for c in s.codes if c not in s.used and self._all_checked(c, relpath)])
                          for s in found.suppressions]
            for suppression, unused in candidates:
                # Only `disable-file` silences BL005: a line's own directive is what is judged.
                if unused and not any(s.target is None and s.matches(UNUSED_DIRECTIVE[0], 0) for s in found.suppressions):
                    self._unused(path, found, suppression, unused)

    def _all_checked(self, selector: str, relpath: str) -> bool:
        named = [c for c in self.known if selector == "ALL" or c.startswith(directive_parser.canonical(selector))]
        return bool(named) and all(self.settings.enabled(c, relpath) for c in named)

    def _unused(self, path: str, found, suppression, unused: list) -> None:
        written = ",".join(suppression.codes)
        where = "in this file" if suppression.target is None else f"on line {suppression.target}"
        what = "" if unused == ["ALL"] else " or ".join(unused) + " "
        why = f" (reason given: {suppression.reason})" if suppression.reason else ""
        kept = [c for c in suppression.codes if c not in unused]
        everything_unused = all(c not in s.used for s in found.suppressions if s.line == suppression.line
                                for c in s.codes)
        edits: tuple[Edit, ...]
        noqa = suppression.key == "noqa"  # its span holds other tools' codes too: no edit that keeps some
        if kept:
            edits = () if noqa else (Edit(suppression.span, f"{suppression.key}={','.join(kept)}"),)
            fix = f"remove {', '.join(unused)} from it"
        else:
            whole = suppression.removal if everything_unused else None
            edits = (Edit(whole, ""),) if whole is not None else ()
            fix = "remove the directive"
        shown = f"# noqa: {written}" if noqa else f"# batchlint: {suppression.key}" + ("" if written == "ALL" else f"={written}")
        self.emit(path, *UNUSED_DIRECTIVE, "warning",
                  f"`{shown}` suppresses nothing: no {what}finding {where}{why}",
                  suppression.span, fix=fix, edits=edits, suppressible=False)

    def load(self, path: str, raw: bytes, fmt: str, shown: Optional[str] = None) -> Optional[Source]:
        """Decode and parse; a file that fails becomes a BL001 diagnostic (`shown`: the path as
        display_path shows it, when the caller has it)."""
        shown = shown or display_path(path)
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line = raw[: exc.start].count(b"\n") + 1
            self.emit(shown, *PARSE_ERROR, "error",
                      f"the file is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})",
                      Span.point(line), fix="save the file as UTF-8")
            return None
        found = self.directives.get(shown)  # read again by another launch line: one record of what it suppressed
        if found is None:
            found = directive_parser.parse(text, self.known) if fmt != "json" else directive_parser.Directives()
            self.directives[shown] = found
        for span, problem in found.problems:
            self.emit(shown, *BAD_DIRECTIVE, "warning", f"batchlint directive ignored: {problem}", span,
                      fix="write it as '# batchlint: disable=BL101' or '# batchlint: world-size=8'")
        options = {"sourcer": self.resolver.sourcer(path, shown)} if fmt == "shell" else {}
        try:
            document = read(shown, text, fmt, from_utf8=True, **options)
        except TooManyValues as exc:  # no training config holds that many: data under a config's name
            reads.notice(f"skipped {shown}: {exc.message}: data, not a training config")
            return None
        except LimitExceeded as exc:
            self.emit(shown, *PAST_LIMIT, "warning", f"not checked: {exc.message}", Span.point(exc.line, exc.column),
                      fix="simplify the file, or exclude it if it is not a training config")
            return None
        except TemplateError as exc:  # not broken: not a config until its placeholders are filled
            reads.notice(f"skipped {shown}: {exc.message}")
            return None
        except ParseError as exc:
            self.emit(shown, *PARSE_ERROR, "error", exc.message, Span.point(exc.line, exc.column), fix="correct the syntax")
            return None
        return Source(shown, document, found)

    def outside(self, found, launched: Optional[Fact] = None, script: Optional[Source] = None,
                given: bool = False, path: Optional[str] = None) -> Outside:
        """World size and target. W, nearest first: the launch line when it writes every factor
        of W (`given`: what runs is a fact about the job; a directive that disagrees is reported
        at `path`, the file it is in), the config's directive, the launch script's directive, a
        launch line with an assumed factor, the CLI, the project config. `explain -w` asks
        "what if" and beats them all, saying what it overrides."""

        def directive(name):
            value = getattr(found, name)
            if value is None and script is not None and getattr(script.directives, name) is not None:
                number, span = getattr(script.directives, name)
                value = (number, span.elsewhere(script.path))
            return value

        written = directive("world_size")
        world = _nearest("world size", written, self.options.world_size, self.settings.world_size)
        if self.options.world_size_wins and self.options.world_size:
            world = _nearest("world size", None, self.options.world_size, None)
            if launched is not None and launched.value != world.value:
                world = replace(world, detail=f"--world-size, instead of W={launched.value} {launched.provenance}")
        elif launched is not None and given:
            if written is not None and written[0] != launched.value:
                self.stale_directive(written, launched, path)
            world = launched
        elif launched is not None and written is None:
            world = launched
        return Outside(
            world_size=world,
            target_global_batch=_nearest("global batch", directive("global_batch"), self.options.global_batch,
                                         self.settings.global_batch),
        )

    def stale_directive(self, written: tuple, launched: Fact, path: Optional[str]) -> None:
        value, span = written
        self.emit(path or span.path, *STALE_DIRECTIVE, "warning",
                  f"`# batchlint: world-size={value}` disagrees with the launch line that runs this config: "
                  f"W={launched.value} ({launched.provenance}); the launch line is what runs, so the directive "
                  f"is not used for this launch",
                  span, fix=f"write world-size={launched.value}, or remove the directive (the launch line gives W)",
                  related=(Related(f"{LAUNCH_NOTE} with W={launched.value}", launched.span, launched.span.path),)
                  if launched.span else ())

    def config(self, source: Source, outside: Outside, note: tuple = (), held: Optional[bytes] = None,
               alone=None) -> None:
        """Recognise the document, plan it, run the rules that apply. `held`: the file's bytes,
        when the document is the file as written (no launch line's overrides applied); `alone`: W of
        a plain interpreter's line for a runtime that finds one process there (one_process.judge)."""
        plan = None
        if outside.project is None:  # the project as this lint reads it, passed to the adapter
            outside = replace(outside, project=project.ProjectView.now())
        owner = source.document.launched_by if isinstance(source.document, LaunchDocument) else None
        # A launch line's own settings belong to the framework whose entry point it runs: only its adapter
        # is asked (and imported); else each adapter of the format, imported only when tried.
        adapters = adapters_for(source.document.format, held) if owner is None else \
            [a for a in (by_name(owner),) if a is not None and source.document.format in a.formats]
        for adapter in adapters:
            adapt = adapter.plan
            if adapt is None:  # not so: the registry gives each framework its module's `plan`
                continue
            plan = adapt(source.document, outside)
            if plan is not None:
                break
        else:
            return
        if not plan:
            return
        world = alone(adapter.one_process) if alone and adapter.one_process and self.guessed(outside.world_size) else None
        if world is not None:  # W = 1 of a plain `python` line, for this runtime: planned again under it
            plan = adapt(source.document, replace(outside, world_size=world))
            note = tuple(r for n in note[:1] for r in (replace(n, message=f"{n.message} with W=1"),
                                                       replace(n, message=f"W = 1: {world.detail}"))) + note[1:] \
                if note else (Related(f"W = 1: {world.detail}", world.span, world.span.path),)  # the line's own settings
        self.planned.add(source.path)
        # A module of several named configs (a config registry) gives one plan per config.
        for one in plan if isinstance(plan, list) else (plan,):
            one.project = outside.project  # what the rules read the project through: the adapter's view
            document = source.document
            if isinstance(document, LaunchDocument) and document.handed_over and not one.basis:
                # the project's own program runs the entry point's main as it is
                one.basis = f"{document.handed_over} calls {document.entry}.main() as it is"
            self.framework = self.framework or one.framework
            self.plans.append((note[0] if note else None, one))
            if self.options.since is not None:
                one.change = self.change(one, note[0] if note else None)
            self.run_rules(one, source.path, note)

    def change(self, plan, note):
        """The job `plan` before the change under review (lint/change.py), or None."""
        from .change import job

        since = self.options.since
        assert since is not None  # asked only under --since
        base = job(plan, note)
        ordinal = sum(1 for n, p in self.plans[:-1] if job(p, n) == base)
        return since.of(plan, note, ordinal, self.top, self.settings, self.options)

    def standalone(self, path: str, outside: Outside) -> Outside:
        """W for the config at `path` linted on its own: a guessed W (`-w`, the project config) is for the
        configs no launch line in view runs. The lint of a script in view whose launch line runs it judges
        it, under that line's W (or the guess, where the line's is not known)."""
        guess = outside.world_size
        if guess is None or not self.guessed(guess):
            return outside
        launches = self.launches_in_view(path)
        if not launches:
            return outside
        where = ", ".join(launches[:3]) + (f" and {len(launches) - 3} more" if len(launches) > 3 else "")
        reads.notice(f"{display_path(path)}: W {guess.value} ({guess.provenance}) is not used: the launch lines that "
                     f"run it give W ({where})")
        return replace(outside, world_size=None)

    def launches_in_view(self, path: str) -> list:
        """The launch lines in view that run the file at `path`, as `script:line (W=8)`."""
        if self.options.whole_project:  # every launcher is read once, and the answer inverted
            found = []
            for lines, seen, searches in self.project_jobs.launching(path, self.settings, self.options) or ():
                _replay(seen, searches)
                found += lines
            return found
        real = project.real_path(path)
        found = []
        for caller in running(path) or ():
            known = self.project_jobs.launches(caller, self.settings, self.options)
            if known is not None:
                _replay(known[1], known[2])
                found += known[0].get(real, ())
        return found

    def jobs(self, path: str) -> list:
        """({the real path each of its launch lines runs: those lines, as `script:line (W=8)`}, its findings)
        of each file in view that names the file at `path` (lint/launching/jobs.py ProjectJobs)."""
        found = []
        for caller in running(path) or ():
            job = self.project_jobs.linted(caller, self.settings, self.options)
            if job is not None:
                _replay(job[2], job[3])
                found.append(job[:2])
        return found

    def findings_of_jobs(self, path: str, shown: str) -> None:
        """The findings that the lint of a job running the config at `path` makes in it: a file linted alone
        (pre-commit's, the editor's) gets what the run over the whole project gives it."""
        real = project.real_path(path)
        for launched, diagnostics in self.jobs(path):
            if real in launched:
                self.diagnostics.extend(d for d in diagnostics if d.path == shown)

    def guessed(self, world: Optional[Fact]) -> bool:
        """Whether W is unknown or only the user's guess for configs no launch line runs (`-w`, the project
        config), which a launch line that runs one process overrides as any launch line's W does;
        `explain -w`'s "what if" still wins."""
        return world is None or (world.origin in (Origin.COMMAND_LINE, Origin.PROJECT)
                                 and not self.options.world_size_wins)

    def run_rules(self, plan, path: str, note: tuple = ()) -> None:
        pick = getattr(self.rules, "for_plan", None)  # picks exactly the rules that run on the plan
        routes = _routes(plan)
        for rule in pick(plan) if pick else self.rules:
            if not pick and not rule.runs_on(plan):
                continue
            if rule.judges_keys and _read_by_own_loader(plan):
                continue
            for finding in rule.findings(plan):
                severity, notes = finding.severity or rule.severity, finding.notes
                if rule.premises:  # an info too: what no release in force does is not said at all
                    gated = _gate(rule, finding, plan)
                    if gated is None:
                        continue
                    severity = "info" if severity == "info" else gated[0]
                    notes += gated[1:]
                found = finding.related
                if routes:  # values read through interpolations: a note at each, and what was assumed
                    spans = (finding.span,) + tuple(r.span for r in found) + (None,)
                    found += tuple(dict.fromkeys(Related(message, span) for at in spans
                                                 for message, span in routes.get(at, ())
                                                 if Related(message, span) not in found))
                if plan.document.composed is not None:  # a value a config composed in wrote: where it was
                    found += tuple(Related(message, span) for message, span in _composed_note(plan.document, finding.span))
                related = tuple(Related(r.message, r.span._replace(path=None), r.path or r.span.path or path)
                                for r in found if r.span is not None) + note
                at = finding.span.path if finding.span is not None else None
                edits = tuple(Edit(e.span._replace(path=None), e.replacement, e.path or e.span.path or at or path)
                              for e in finding.edits)
                self.emit(path, rule.code, rule.name, severity, finding.message,
                          finding.span, plan.framework, finding.fix, related, edits, rule.unsafe_fix, notes=notes)

    def script(self, source: Source, base: Optional[str] = None) -> None:
        """A launch script: its own rules, then each launch line's config under that launch (`base`:
        the folder it runs in, when not its own)."""
        from .plan import TrainingPlan

        self.framework = "launch"
        self.planned.add(source.path)
        self.run_rules(TrainingPlan(framework="launch", document=source.document), source.path)
        for job in self.resolver.jobs(source, base):
            self.config(job.config, job.outside, job.note, alone=job.alone)

    def task(self, source: Source, task) -> None:
        """A job file (spec.TaskFile): its script read where it stands in the file, with the variables
        the file sets, as a launch script running in the folder the file names."""
        from .sources.shell import read_shell
        from .sources.yaml import string_in_place

        self.framework = "launch"
        document = source.document
        root = document.root
        text = string_in_place(document.text, root.items.get(task.script))
        if text is None:
            reads.notice(f"{source.path}: `{task.script}` is not a literal block (`{task.script}: |`); "
                         "its launch lines are not read")
            return
        try:
            script = read_shell(document.path, text, task.environment(root), None, self.resolver.sourcer(document.path, source.path))
        except (ParseError, LimitExceeded) as exc:
            reads.notice(f"{source.path}:{exc.line}: `{task.script}` is not read as a shell script: {exc.message}")
            return
        script.text = document.text
        here = os.path.dirname(os.path.abspath(document.path))
        written = task.folder(root) if task.folder else None
        folder = os.path.normpath(os.path.join(here, written)) if written else here
        base = folder if project.is_dir(folder) and project.may_read(folder) else here
        self.mounts = {remote.rstrip("/") or "/": os.path.normpath(os.path.join(here, local))
                       for remote, local in (task.mounts(root) if task.mounts else {}).items()}
        self.script(Source(source.path, script, source.directives), base)



def _replay(paths: tuple, searches: tuple) -> None:
    """What a lint whose result is used read, as the reads of the lint that uses it (searched only)."""
    with reads.searching():
        for seen, digest in paths:
            reads.replay(seen, digest)
    for search, digest in searches:
        reads.replay_search(search, digest)


@functools.lru_cache(maxsize=8)
def _with_engine_codes(codes: frozenset) -> frozenset:
    """`codes` and the engine's own: one set for every file linted with the same rules."""
    return codes | {PARSE_ERROR[0], BAD_DIRECTIVE[0], PAST_LIMIT[0], STALE_DIRECTIVE[0], UNUSED_DIRECTIVE[0]}


@overload
def _nearest(label: str, directive: Optional[tuple], cli: int, project: Optional[int]) -> Fact: ...  # a CLI value
@overload
def _nearest(label: str, directive: Optional[tuple], cli: Optional[int], project: Optional[int]) -> Optional[Fact]: ...
def _nearest(label: str, directive: Optional[tuple], cli: Optional[int], project: Optional[int]) -> Optional[Fact]:
    if directive is not None:
        value, span = directive
        return Fact(value, label, span, Origin.DIRECTIVE)
    if cli is not None:
        flag = "--world-size" if label == "world size" else "--global-batch"
        return Fact(cli, label, None, Origin.COMMAND_LINE, detail=flag)
    if project is not None:
        return Fact(project, label, None, Origin.PROJECT)
    return None


def _read_by_own_loader(plan) -> bool:
    """Whether the project reads the plan's config with a loader of its own (lint/own_loader.py)."""
    from .frameworks import by_name
    from .own_loader import own_loader

    framework = by_name(plan.framework)
    if framework is None or not framework.own_loader:
        return False
    package = framework.distribution.package if framework.distribution else ""
    return own_loader(plan.document.path, framework.own_loader, package) is not None


def _gate(rule, finding, plan) -> Optional[tuple]:
    """(severity,) of an error or warning whose premise (lint/premise.py) holds for every release the
    project may run, with the note of the releases it assumed; an info where only the newer releases
    refuse; None where no release it may run does."""
    from .premise import HOLDS, NEVER, closes, judge, premise_of

    premise = premise_of(rule.premises, finding.premise, plan.framework)
    if premise is None:
        return (finding.severity or rule.severity,)
    verdict = judge(premise, plan.document.path, plan.project)
    if verdict.outcome == HOLDS:
        return finding.severity or rule.severity, f"releases: {verdict.assumes}"
    if verdict.outcome == NEVER or closes(premise):
        return None
    return "info", f"releases: {verdict.assumes}"


def _routes(plan) -> dict:
    """{Span: [(message, Span)]}: the notes a finding at a value read through interpolations takes
    (the document's interpolations resolved by its adapter's spec)."""
    if plan.document.resolved is None:
        return {}
    from .sources.omegaconf import notes

    return notes(plan.document.resolved, plan.facts())


def _composed_note(document, span) -> tuple:
    from .sources.hydra import note

    return note(document, span)
