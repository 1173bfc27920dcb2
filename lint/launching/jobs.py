"""Launch resolution: a launch script's lines become jobs, each a config as one line runs it.

A line is read by the launch reader (lint/launching/lines.py: the launcher, its W, the configs and settings it
names); resolving finds those files in the project (from the script's folder, the working folder, the
repository's top, the folder a `cd` moved to, a job file's mounts), follows the project's scripts a
script runs with their arguments, and reads W from a launcher's config or hostfile. What comes out
is a list of immutable `Job`s; the engine plans and judges each (lint/engine.py `_Checker.script`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable

from .. import directives as directive_parser, project, reads, versions
from ..discover import display_path, is_vocabulary
from ..document import Document, LimitExceeded, Mapping, ParseError, Scalar
from ..frameworks import adapters_for
from ..frameworks.facts import Outside
from ..lean_dataclass import lean_dataclass, replace
from ..own_trainer import handed_over
from ..plan import Fact, Origin
from ..rule import LAUNCH_NOTE, Related
from ..sources import format_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

    from ..engine import _Checker


@lean_dataclass
class Source:
    """A file read for linting: its document and its own directives."""

    path: str  # as shown to the user
    document: Document
    directives: directive_parser.Directives


@lean_dataclass(frozen=True)
class Job:
    """One config as one launch line runs it: what the engine plans and judges."""

    config: Source
    outside: Outside  # W and the target as the line and the directives give them, and what the launcher hands
    note: tuple = ()  # the launch line's note, then the lines of the scripts that ran the script
    # For a plain interpreter's line: W = 1 where the config's runtime finds one process (one_process.judge).
    alone: Optional[Callable] = None


class ProjectJobs:
    """The project's jobs for one run: which launch lines run each file, and what the lint of the file
    holding them found. The run fills it before and while it lints: the callers of the files it was given
    (pre-commit's, the editor's) are linted first (`prepare`), and each script of a run over the whole
    project, linted before the configs, records what it launches (`record`). A config's lint looks them
    up; it never lints another file. What it must know of a script no one recorded (a script whose lint
    came from the cache, a run at another revision) it plans: the script's launch lines, no rule run.
    One per run, passed in `Options.jobs`: a new run starts from nothing, as the files may have changed."""

    def __init__(self) -> None:
        self._launched: dict = {}  # caller's key -> (launched, reads, searches): the run's own lint or plan of it
        self._linted: dict = {}  # caller's key, target, --since -> (launched, findings, reads, searches) or the error
        self._launching: dict = {}  # folder in view, settings -> {real path: [(launched lines, reads, searches)]}

    def __repr__(self) -> str:  # in the cache's salt: what a run found is not a setting
        return "ProjectJobs()"

    def record(self, caller: str, settings, options, launched: dict, read: tuple, searches: tuple) -> None:
        """What the run's own lint of the script at `caller` launches, and what that lint read."""
        key = _caller_key(caller, options, settings)
        if key is not None:
            self._launched[key] = (launched, read, searches)

    def launches(self, caller: str, settings, options) -> Optional[tuple]:
        """(launched, reads, searches) of the file at `caller`: as the run's lint of it recorded or its
        prepared lint found, else as its plan finds (what it launches does not depend on the rules)."""
        key = _caller_key(caller, options, settings)
        if key is None:
            return None
        known = self._launched.get(key)
        if known is None and not _may_launch(caller):
            known = self._launched[key] = ({}, ((os.path.abspath(caller), ""),), ())
        if known is None:
            prepared = self._linted.get(_lint_key(key, options))
            if isinstance(prepared, tuple):
                return prepared[0], prepared[2], prepared[3]
            known = self._launched[key] = self._planned(caller, settings, options)
        return known

    def launching(self, path: str, settings, options) -> Optional[list]:
        """[(the launch lines, as `script:line (W=8)`, reads, searches)] of each file in view that runs the
        file at `path`: in a run over the whole project, every file in view that may launch is read once
        (its scripts were linted first) and inverted, so no config searches for the files naming it."""
        from .callers import in_view

        real = project.real_path(path)
        view = in_view(real)
        if view is None:
            return None
        key = (view[0], options.project, settings.source)
        inverse = self._launching.get(key)
        if inverse is None:
            inverse = self._launching[key] = {}
            for caller in view[1]:
                known = self.launches(caller, settings, options) if _may_launch(caller) else None
                if known is None:
                    continue
                for launched, lines in known[0].items():
                    inverse.setdefault(launched, []).append((lines, known[1], known[2]))
        return inverse.get(real, [])

    def linted(self, caller: str, settings, options) -> Optional[tuple]:
        """(launched, findings, reads, searches) of the lint of the file at `caller` as a file of a run over
        the whole project, as `prepare` made it; None where it was not prepared. An error its lint met is
        raised again here, in the lint that needs it."""
        key = _caller_key(caller, options, settings)
        job = self._linted.get(_lint_key(key, options)) if key is not None else None
        if isinstance(job, Exception):
            raise job
        return job

    def prepare(self, paths: list, settings_for: Callable, options, rules) -> None:
        """Lint the files in view that name each of `paths`, before `paths` are linted, as files of a run
        over the whole project (their launch lines' W, never a guessed one): the lints of `paths` read
        what these found (`linted`), and no lint is made from inside another."""
        from ..engine import check_file
        from .callers import running

        for path in paths:
            settings = settings_for(path)
            for caller in running(path) or ():
                key = _caller_key(caller, options, settings)
                if key is None or _lint_key(key, options) in self._linted:
                    continue
                quiet = self._whole_project(options, since=options.since)
                try:
                    with versions.configured(settings.versions, settings.source), \
                            reads.tracking(options.digests) as touched:  # its notices are its own lint's
                        checker = check_file(caller, settings, quiet, rules)
                    job: object = (launched_from(checker.plans), tuple(checker.diagnostics),
                                   tuple(touched.paths.items()), tuple(touched.searches.items()))
                except Exception as exc:  # noqa: BLE001 - raised again in the lint that reads it (`linted`)
                    job = exc
                self._linted[_lint_key(key, options)] = job

    def _planned(self, caller: str, settings, options) -> tuple:
        """(launched, reads, searches) of the file at `caller`, planned as a file of a run over the whole project."""
        from ..engine import plan_file

        quiet = self._whole_project(options)
        with reads.tracking(options.digests) as touched:
            plans = plan_file(caller, settings, quiet)
        return launched_from(plans), tuple(touched.paths.items()), tuple(touched.searches.items())

    def _whole_project(self, options, since=None):
        """The options a caller is linted or planned with: as a file of a run over the whole project, whose own
        configs' jobs are not looked for again (a chain of configs naming configs would go on and on)."""
        from ..engine import Options

        return Options(global_batch=options.global_batch, project=options.project, digests=options.digests,
                       since=since, whole_project=True, jobs=self)


def launched_from(plans: list) -> dict:
    """{the real path of each config a launch line among `plans` runs: those lines (`launch_label`)}."""
    launched: dict = {}
    for note, plan in plans:
        if note is None:
            continue
        line = launch_label(note, plan)
        lines = launched.setdefault(project.real_path(plan.document.path), [])
        if line not in lines:
            lines.append(line)
    return launched


def launch_label(note, plan) -> str:
    """A launch line that runs a config, as messages and `--show-settings` name it: `script:line (W=8)`,
    W shown where the line (or a directive) gives it, `?` where only a guess would."""
    world = plan.world_size
    given = world is not None and world.known and world.origin not in (Origin.COMMAND_LINE, Origin.PROJECT)
    return f"{note.path}:{note.span.line} (W={world.value if given else '?'})"


def _may_launch(path: str) -> bool:
    """Whether the file at `path` may hold launch lines: a shell script, or a job file of a framework
    that reads them (a SkyPilot task); a config (YAML, JSON, TOML, Python) launches nothing."""
    from ..frameworks import tasks_for
    from ..sources import is_shell_script

    try:
        raw = project.read_bytes(path)
    except OSError:
        return False
    fmt = format_of(path) or ("shell" if is_shell_script(path, raw[:128]) else None)
    return fmt == "shell" or (fmt is not None and any(task.may_be(raw) for task in tasks_for(fmt, raw)))


def _lint_key(key: tuple, options) -> tuple:
    """A prepared lint's key: the caller's, with what its findings depend on beside the file."""
    return key + (options.global_batch, id(options.since))


def _caller_key(caller: str, options, settings) -> Optional[tuple]:
    try:
        info = os.stat(caller)
    except OSError:
        return None
    return project.real_path(caller), info.st_mtime_ns, info.st_size, options.project, settings.source


class Resolver:
    """Resolves the launch lines of the scripts one lint reads, reading their files as that lint does
    (its parsed files and directives, its job file's mounts)."""

    def __init__(self, checker: _Checker):
        self.checker = checker

    def jobs(self, source: Source, base: Optional[str] = None) -> list:
        """Every job of a launch script (`base`: the folder it runs in, when not its own)."""
        found: list = []
        self.launch_lines(source, (), (os.path.abspath(source.document.path),), base, jobs=found)
        return found

    def launch_lines(self, source: Source, called: tuple, stack: tuple, base: Optional[str] = None,
                     jobs: Optional[list] = None) -> int:
        """Each launch line of a script with its configs, and those of the project's scripts it
        runs (`NGPU=16 ./run_train.sh`, `bash scripts/train.sh 8 cfg.yaml`): read with the caller's
        environment and arguments, `called` noting the callers' lines, `stack` their files; the jobs
        they give added to `jobs`. Returns how many launch lines were read."""
        from ..sources.shell import ShellDocument  # imported already: the script was read

        launch = launch_reader()
        document = source.document
        if not isinstance(document, ShellDocument):
            return 0  # not so: a script's source
        base = base or os.path.dirname(os.path.abspath(document.path))
        handover = functools.partial(handed_over, document.path, view=project.ProjectView.now())
        count = 0
        for command in document.commands:
            callee = self.called_script(command, base, source.path, stack)
            if callee is not None:
                note = Related(f"runs {callee.path}", command.span, source.path)
                inner = self.launch_lines(callee, called + (note,), stack + (os.path.abspath(callee.document.path),),
                                          jobs=jobs)
                if inner:
                    count += inner
                    continue  # else the command itself may be a launcher's (a spec of the script's name)
            line = launch.launch_of(command, source.document.path, handover)
            if line is not None:
                found = self.launch_line(line, source, base, called, command)
                if jobs is not None:
                    jobs.extend(found)
                count += 1
        return count

    def called_script(self, command, base: str, script_path: str, stack: tuple) -> Optional[Source]:
        """The project's shell script a command runs (`./run_train.sh`, `bash -x scripts/train.sh 8`), read
        with the command's environment and arguments; None when it runs none, one outside the project,
        one past the depth bound or one already running (a cycle)."""
        words = command.words
        index = 0
        if words and words[0].known and os.path.basename(str(words[0].value)) in _SHELLS:
            index = 1
            while index < len(words) and words[index].known and str(words[index].value).startswith("-"):
                if words[index].value in ("-c", "-lc"):
                    return None  # a command string: read where it stands by the shell reader
                index += 1
        if index >= len(words) or not words[index].known or not str(words[index].value).endswith(_SCRIPT_SUFFIXES) \
                or len(stack) > _MAX_CALL_DEPTH:
            return None
        path = self.located(words[index], base, script_path, needs_format=False, command=command)
        if path is None or os.path.abspath(path) in stack:
            return None
        try:
            raw = project.read_bytes(path)
        except OSError:
            return None
        if not any(marker in raw for marker in launch_reader().markers()):
            return None
        from ..sources.shell import read_shell

        shown = display_path(path)
        env = {name: _in_file(word, script_path) for name, word in command.env.items()}
        arguments = [_in_file(word, script_path) for word in words[index + 1:]]
        try:
            document = read_shell(shown, raw.decode("utf-8-sig", "replace"), env, arguments, self.sourcer(path, shown))
        except (ParseError, LimitExceeded):
            return None  # reported when the script itself is linted
        found = self.checker.directives.get(shown) or directive_parser.parse(document.text, self.checker.known)
        self.checker.directives.setdefault(shown, found)
        return Source(shown, document, found)

    def sourcer(self, script: str, shown: str):
        """What a script's `source FILE` / `. FILE` reads (shell.read_shell's `sourcer`): a shell file of
        the project, found as a script it runs is; never the script itself."""
        base = os.path.dirname(os.path.abspath(script))
        itself = os.path.abspath(script)

        def source(word) -> Optional[tuple]:
            if not str(word.value).endswith(_SOURCED_SUFFIXES):
                return None
            path = self.located(word, base, shown, needs_format=False)
            if path is None or os.path.abspath(path) == itself:
                return None
            try:
                raw = project.read_bytes(path)
            except OSError:
                return None
            return os.path.abspath(path), display_path(path), raw.decode("utf-8-sig", "replace")

        return source

    def launch_line(self, line, source: Source, base: str, called: tuple = (), command=None) -> list:
        """One launch line's jobs: its W, then the configs it names and its own settings, each under it
        (`command`: the script's command, whose folder relative paths are seen from)."""
        launch = launch_reader()
        checker = self.checker
        jobs = []
        if line.world_size is None and line.world_size_file is not None:
            word, key = line.world_size_file
            line.world_size = self.world_size_in_file(word, key, base, source.path, command)
            line.world_size_given = line.world_size is not None
        if line.world_size is None and line.hosts is not None:
            line.world_size = self.world_size_on_hosts(line.hosts, base, source.path, command)
            line.world_size_given = line.world_size is not None
        handed = self.handed(line, base, source.path, command)
        outside = replace(checker.outside(source.directives, line.world_size, given=line.world_size_given,
                                       path=source.path), **handed)
        where = line.command.span
        with_w = f" with W={line.world_size.value}" if line.world_size else ""
        note = (Related(f"{LAUNCH_NOTE} by {line.launcher}{with_w}", where, source.path),) + called
        for word in line.configs:
            said = not any(word is guess for guess in line.guessed)
            config = self.linked_config(word, base, source.path, command, said=said)
            if config is not None:
                config.document.launched_by = line.framework
                launch.apply_overrides(config.document, line.overrides, source.path)
                jobs.append(Job(config, replace(checker.outside(config.directives, line.world_size, source,
                                                                line.world_size_given, config.path), **handed), note))
        alone = _one_process().judge(line, source.document.path, source.document.text,
                                     tuple(r.path for r in called)) if line.alone else None
        for word in line.linked:  # a file the program reads as it is written (`--deepspeed ds.json`)
            said = not any(word is guess for guess in line.guessed)
            config = self.linked_config(word, base, source.path, command, said=said)
            if config is not None:
                jobs.append(Job(config, checker.outside(config.directives, line.world_size, source,
                                                        line.world_size_given, config.path), note, alone))
        if line.selected is not None:  # a config picked by name from a module (`--module m --config name`)
            config = self.selected_config(line.selected, base, source.path, command)
            if config is not None:
                launch.apply_overrides(config.document, line.overrides, source.path)
                jobs.append(Job(config, checker.outside(config.directives, line.world_size, source,
                                                        line.world_size_given, config.path), note))
            return jobs
        if line.framework and not line.configs:
            inline = launch.inline_document(line, source.path, source.document.text)
            jobs.append(Job(Source(source.path, inline, source.directives), outside, note if called else (), alone))
        return jobs

    def selected_config(self, selection, base: str, script_path: str, command=None) -> Optional[Source]:
        """The one config a launch line picks by name from a module of the project (spec.Select),
        as a document of its own; None, with a notice when the line names them, when not found."""
        module, name = selection.module, selection.name
        if not (module.known and name.known):
            return None
        where = f"{script_path}:{module.span.line}"
        for relative in selection.select.files(str(module.value)):
            source = self.linked_config(replace(module, value=relative), base, script_path, command)
            if source is None:
                continue
            document = selection.select.read(source.document, str(name.value), project.ProjectView.now())
            if document is None:
                reads.notice(f"{where}: {source.path} has no config `{name.value}`")
                return None
            document.launched_by = selection.owner
            return Source(source.path, document, source.directives)
        if selection.given:
            reads.notice(f"{where}: module `{module.value}` is not in the project; config `{name.value}` not read")
        return None

    def handed(self, line, base: str, script_path: str, command=None) -> dict:
        """What the launcher's own config file (`accelerate launch --config_file cfg.yaml`) hands the
        program, as the framework that reads the file says (Framework.hands): Outside fields."""
        source = self.linked_config(line.launcher_config, base, script_path, command) if line.launcher_config else None
        if source is None:
            return {}
        held = source.document.text.encode("utf-8", "replace")
        for adapter in adapters_for(source.document.format, held):
            adapt = adapter.plan
            if adapter.hands is None or adapt is None:  # (the registry gives each framework its `plan`)
                continue
            plan = adapt(source.document, Outside(project=project.ProjectView.now()))
            if plan is not None:
                return adapter.hands(plan, line.launcher_options)
        return {}

    def world_size_in_file(self, word, key: str, base: str, script_path: str, command=None) -> Optional[Fact]:
        """W from a file a launch line names (`accelerate launch --config_file cfg.yaml`: its
        `num_processes`), read within the project; None when it is not there or not a count."""
        source = self.linked_config(word, base, script_path, command)
        if source is None:
            return None
        root = source.document.root
        node = root.get(key) if isinstance(root, Mapping) else None
        if not isinstance(node, Scalar) or type(node.value) is not int or node.value < 1:
            return None
        value = node.value
        return Fact(value, "world size", node.span._replace(path=source.path), Origin.LAUNCH,
                    detail=f"{key} {value} in {source.path}")

    def world_size_on_hosts(self, hosts, base: str, script_path: str, command=None) -> Optional[Fact]:
        """W from the hostfile a launch line names (spec.Hosts), read within the project; None, with
        a notice, when it is not there or the launcher would not run on it."""
        found = self.located(hosts.file, base, script_path, needs_format=False, command=command)
        counted = None
        if found is not None:
            try:
                counted = hosts.count(project.read_bytes(found).decode("utf-8", "replace"))
            except OSError:
                pass
        where = f"{script_path}:{hosts.file.span.line}"
        if found is None:
            reads.notice(f"{where}: hostfile `{hosts.file.value}` is not in the project; the world size is unknown")
            return None
        if counted is None:
            reads.notice(f"{where}: the hosts of `{hosts.file.value}` and the launch options select no known "
                         "number of processes; the world size is unknown")
            return None
        value, span, detail = counted
        return Fact(value, "world size", span._replace(path=display_path(found)), Origin.LAUNCH, detail=detail)

    def located(self, word, base: str, script_path: str, needs_format: bool = True, command=None,
                said: bool = False) -> Optional[str]:
        """The file a launch line names (a config needs a format batchlint reads), found from the
        script's folder, the working folder or the project root, within the project; a relative
        path after a `cd` from the folder it moved to (`command`: the script's command naming it).
        With `said`, a path not found is a notice: the run passes, and the user should know
        the config was not checked."""
        if not word.known:
            return None
        value = str(word.value)
        if command is not None:
            from ..sources.shell import in_directory

            moved = in_directory(command.directory, value, command.anchored, command.placed)
            if moved is None:
                return None  # after a `cd` to a folder not known
            value = moved
        for remote, local in self.checker.mounts.items():
            if value.startswith(remote + "/"):  # a path the job file mounts from the project
                value = os.path.join(local, value[len(remote) + 1:])
                break
        # Scripts are run from their folder, the working folder, or the repository's top (where real
        # scripts' `./examples/x/cfg.json` start): the same files whatever folder batchlint runs from;
        # last, from a folder between the script's and the top, nearest first (`cd internvl_chat &&
        # sh shell/x/train.sh` naming `zero_stage1_config.json` of internvl_chat/).
        repository = project.git_root(script_path)
        top = os.path.abspath(repository or self.checker.settings.root)
        between = [f for f in project.upward(os.path.dirname(os.path.abspath(base)), _MAX_FOLDERS_UP)
                   if f.startswith(top + os.sep)]
        for folder in (base, os.getcwd(), self.checker.settings.root, repository or base, *between):
            candidate = os.path.normpath(os.path.join(folder, value))
            reads.record(candidate)  # even when missing: creating it changes the result
            if (format_of(candidate) or not needs_format) and project.is_file(candidate):
                if not project.may_read(candidate):
                    reads.notice(f"{script_path}:{word.span.line}: `{word.value}` resolves outside "
                                 "the project; not read (widen it with `reference-paths` in the project config)")
                    return None
                return candidate
        if said and format_of(value) in ("yaml", "json", "toml"):  # a missing .py is more often a program
            reads.notice(f"{script_path}:{word.span.line}: `{word.value}`, the config the launch line names, "
                         "is not found in the project; its settings are not checked")
        return None

    def linked_config(self, word, base: str, script_path: str, command=None, said: bool = False) -> Optional[Source]:
        """The config file a launch line names, if it can be found and read (`said`: see `located`)."""
        candidate = self.located(word, base, script_path, command=command, said=said)
        if candidate is None:
            return None
        fmt = format_of(candidate)
        if fmt is None:
            return None  # not so: `located` found a file of a format batchlint reads
        try:
            raw = project.read_bytes(candidate)
        except OSError:
            return None
        if fmt == "json" and is_vocabulary(candidate, raw[:256]):
            return None  # `--vocab-file gpt2-vocab.json`, taken for a config under any flag: data
        return self.checker.load(candidate, raw, fmt)


def _in_file(word, path: str):
    """A word of a calling script, marked as written there (its positions are that file's)."""
    if not hasattr(word, "span"):
        return word  # an array: no environment value
    spans = {"span": word.span.elsewhere(path)}
    if word.value_span is not None:
        spans["value_span"] = word.value_span.elsewhere(path)
    return replace(word, **spans)


# A script another runs: `./x.sh`, `bash x.sh`; followed this many calls deep.
_SHELLS = {"bash", "sh", "zsh", "dash"}
_SCRIPT_SUFFIXES = (".sh", ".bash")
_SOURCED_SUFFIXES = _SCRIPT_SUFFIXES + (".env",)  # `source ./common.sh`, `. ./env.sh`, `source .env`
_MAX_CALL_DEPTH = 4
_MAX_FOLDERS_UP = 8  # folders above a script where a path it names is looked for


def _one_process():
    from .. import one_process

    return one_process


def launch_reader():
    """The launch-line reader, imported only when a shell script is linted (a config lint,
    the pre-commit case, does without it and the shell reader)."""
    from . import lines as launch

    return launch
