"""Hydra composition, read statically: a YAML config built from the configs its `defaults:` list
names, as Hydra 1.3 builds it before the program sees it (hydra/_internal/defaults_list.py,
config_repository.py, config_loader_impl.py; hydra/core/default_element.py).

- The defaults list: `- name` (a config; `dir/name` in a folder), `- group: option` and
  `- group@package: option` (the option of a config group placed at a package), `- optional
  group: option` (skipped when the file is missing), `- group: null` (nothing), `- group: [a, b]`
  (each), `- override group@package: option` (changes the option a defaults list chose, at any
  depth: the launch line's `group=option` first, then the outermost config's), `/group`
  (absolute), `..` in a group path, `_here_`, a `# @package` header (absolute) when the entry
  names no package; every option's own defaults list is composed in turn, its group path the base
  of its entries' groups (`- base` inside model/large.yaml is model/base.yaml).
- `_self_` places the config's own values: where it stands, or last when the list leaves it out
  (so a config's own values win over its defaults, unless `_self_` comes first).
- Each config is placed at its package and merged into what came before: mappings key by key, any
  other value (a list too) replacing; the `defaults` lists and the `hydra` node are not the
  program's config.
- The config search path: the primary config's folder (a launch line's `--config-path`, else the
  program's `@hydra.main(config_path=...)`), then the primary config's `hydra.searchpath`
  (`file://dir`, relative to the folder the job runs in: the config's folder or one above it
  inside the project; `pkg://a.b`: the folder a/b inside the project), then the framework's own
  config folder in the copy of it the project holds (spec.Framework.configs: a config naming the
  trainer's config is composed over it).
- A launch line's overrides come last: `group=option` picks options, `key=value` and
  `+key=value` set values over the composed config.

Every value keeps the file and line it is written at (Span.path: the config's path, None for the
composing file's own). Anything Hydra would refuse, or that is not known here (an interpolation
in the defaults list, `???`, a legacy `_group_`/`_name_` package, a config outside the project,
missing, unreadable or past the bounds of lint/limits.py, a cycle) leaves the config as it reads
alone, with a notice: its keys the composition would set stay unknown.
"""

from __future__ import annotations

import os

from .. import reads
from ..discover import display_path
from ..document import Document, LaunchDocument, LimitExceeded, Mapping, ParseError, Scalar, Sequence, Span
from ..lazy_pattern import LazyPattern
from ..lean_dataclass import lean_dataclass, replace
from ..limits import MAX_COMPOSE_DEPTH, MAX_COMPOSED_CONFIGS
from ..project import ProjectView, upward

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

_SELF = "_self_"
_HEADER = LazyPattern(r"#\s*@(\S+)\s+(.*?)\s*$")
_UPWARD = 12  # folders above a config searched for the folder a relative searchpath is seen from


@lean_dataclass(frozen=True)
class Composition:
    """How a document was composed: the configs merged, in order (display paths; "" for the
    composing file itself), those read from the framework's own config folder, and where the
    composing file names its defaults (for the note a finding at a composed value takes)."""

    configs: tuple
    framework: frozenset
    named_at: Optional[Span]
    launched: bool = False  # composed for a launch line (named_at: the line)


class _NotComposed(Exception):
    def __init__(self, why: str, missing: Optional[str] = None):
        super().__init__(why)
        self.why = why
        # A config named by a defaults list and not found: nothing is said when it is one of the
        # framework's own (`ppo_trainer`) and the project holds no copy of the framework (Hydra finds it
        # in the installed package, out of view).
        self.missing = missing


def compose(doc: Document, view: ProjectView, home: tuple = (), distribution=None, own: tuple = ()) -> Document:
    """`doc` composed with the configs its `defaults:` list names (a launch line's settings: over
    the config it names, its overrides last); `doc` itself when it names none or they are not
    followed. `home`: the framework's own config folders, relative to the folder holding a copy
    of it (`distribution`: how lint/versions.py finds that copy); `own`: the names of the configs
    those folders hold, out of view when the project has no copy (spec.Framework.config_names). Every
    config composed in is read through `view`, the project as the lint reads it."""
    if doc.format != "yaml" or doc.composed is not None:
        return doc
    launched = doc if isinstance(doc, LaunchDocument) else None
    if launched is None and not isinstance(doc.root.items.get("defaults"), Sequence):
        return doc
    try:
        if launched is not None:
            return _launched(launched, view, home, distribution)
        return _file(doc, view, home, distribution)
    except _NotComposed as exc:
        if exc.missing is None or exc.missing not in own or _homes(doc.path, home, distribution, view):
            reads.notice(f"{doc.path}: {exc.why}; its `defaults:` list is not composed")
        return doc
    except RecursionError:  # values nested near MAX_DEPTH in a deep composition
        reads.notice(f"{doc.path}: its composed configs nest too deeply to follow")
        return doc


def framework_default(doc: Document, span: Optional[Span]) -> bool:
    """Whether the value at `span` was read from the framework's own config folder (its default,
    which a launch line usually overrides), not from the project's configs."""
    composed = doc.composed
    return composed is not None and span is not None and span.path in composed.framework


def note(doc: Document, span: Optional[Span]) -> tuple:
    """((message, Span),) for a finding at a value a composed config wrote: the composing file's
    `defaults:` list (a launch line's settings: the line) that brought it in; () otherwise."""
    composed = doc.composed
    if composed is None or span is None or span.path is None or span.path not in composed.configs:
        return ()
    if composed.named_at is None:
        return ()
    how = "by this launch line" if composed.launched else f"by the `defaults:` list of {os.path.basename(doc.path)}"
    return ((f"`{span.path}` is composed in {how}", composed.named_at),)


# -- the primary config ------------------------------------------------------------------------


def _file(doc: Document, view: ProjectView, home: tuple, distribution) -> Document:
    """A config file with a `defaults:` list, read as the primary config: its folder first on the
    search path."""
    folder = os.path.dirname(os.path.abspath(doc.path))
    search = _Search(folder, _homes(doc.path, home, distribution, view), view)
    search.add_searchpath(doc.root, [folder])
    composer = _Composer(search, {})
    merged = composer.primary(doc.root, _header(doc.text), None)
    return _composed(doc, merged, composer, doc.root.key_spans.get("defaults"))


def _launched(doc: LaunchDocument, view: ProjectView, home: tuple, distribution) -> Document:
    """A launch line's settings: the config it names (`--config-name`, else the program's
    `@hydra.main`), found in its config folder, with the line's overrides applied last."""
    from ..own_trainer import hydra_main

    main = hydra_main(doc.path, doc.entry, view)
    if main is None:
        return doc  # the installed program's configs: not ours to read
    copy, folder, name = main
    given = getattr(doc, "config_path", None)
    if given is not None:
        if not given.known:
            return doc
        written = str(given.value)
        if written.startswith("pkg://"):
            return doc
        folder = written if os.path.isabs(written) else os.path.normpath(os.path.join(os.path.dirname(copy), written))
    named = getattr(doc, "config_name", None)
    if named is not None:
        if not named.known:
            return doc  # `--config-name "$NAME"`: which config is not known here
        name = str(named.value)
    if not name:
        return doc
    name = name[:-5] if name.endswith(".yaml") else name
    search = _Search(folder, _homes(doc.path, home, distribution, view), view)
    choices, settings = _overrides(doc, search)
    composer = _Composer(search, choices)
    found = search.find(name)
    if found is None:
        raise _NotComposed(f"the config `{name}` it names is not found in {display_path(folder)}")
    path, shown = found
    root, text = composer.load(path, shown, name)
    search.add_searchpath(root, _upward(path, view))
    merged = composer.primary(root, _header(text), shown)
    from ..launching.lines import apply_overrides  # the launch reader, only when a line composes

    carrier = replace(doc, root=merged)
    apply_overrides(carrier, settings, script=None)
    return _composed(doc, carrier.root, composer, doc.root.span, launched=True)


def _overrides(doc: LaunchDocument, search: _Search) -> tuple:
    """({override key: option} of the line's `group=option` overrides, the other overrides)."""
    choices: dict = {}
    settings = []
    for keys, value, key_word in getattr(doc, "overrides", ()):
        written = str(key_word.value).partition("=")[0].lstrip("+~") if key_word.known else ""
        group = written.partition("@")[0]
        if written and ("@" in written or len(keys) == 1) and search.group_exists(group):
            if not value.known or str(written).startswith(("~", "+")) or str(key_word.value).startswith(("~", "+")):
                raise _NotComposed(f"`{key_word.raw}` changes the configs composed in a way not followed")
            choices[written] = str(value.value)
        else:
            settings.append((keys, value, key_word))
    return choices, settings


def _composed(doc: Document, merged: Mapping, composer: _Composer, named_at: Optional[Span],
              launched: bool = False) -> Document:
    merged.items.pop("hydra", None)  # Hydra's own node: the program's config does not hold it
    merged.key_spans.pop("hydra", None)
    composition = Composition(tuple(composer.order), frozenset(composer.framework), named_at, launched)
    return replace(doc, root=merged, composed=composition)


# -- where configs are found --------------------------------------------------------------------


def _homes(path: str, home: tuple, distribution, view: ProjectView) -> list:
    """The framework's own config folders in the copy of it the project holds."""
    if not home or distribution is None:
        return []
    from .. import versions

    found = versions.release(distribution, path, view=view)
    if found is None or found.copy is None:
        return []
    return [os.path.join(found.copy, relative) for relative in home]


def _upward(path: str, view: ProjectView) -> list:
    """The folders a job reading the config at `path` may run in: its folder and those above it
    inside the project, nearest first."""
    found = []
    for folder in upward(os.path.dirname(os.path.abspath(path)), _UPWARD):
        if not view.may_read(folder):
            break
        found.append(folder)
    return found


class _Search:
    """The config search path: folders, first match wins."""

    def __init__(self, primary: str, homes: list, view: ProjectView):
        self.view = view
        self.folders = [primary]
        self.homes = homes
        self.framework_folders = [os.path.realpath(h) for h in homes]

    def add_searchpath(self, root: Mapping, bases: list) -> None:
        """The primary config's `hydra.searchpath` entries."""
        written = root.get("hydra", "searchpath")
        if written is None:
            return
        if not isinstance(written, Sequence) or not all(isinstance(v, Scalar) and isinstance(v.value, str)
                                                        for v in written.items):
            raise _NotComposed("its `hydra.searchpath` is not a list of paths")
        for entry in written.items:
            text = entry.value
            if text.startswith("pkg://"):
                module = text[len("pkg://"):].replace(".", "/")
                candidates = [os.path.join(base, module) for base in bases]
            else:
                text = text[len("file://"):] if text.startswith("file://") else text
                candidates = [text] if os.path.isabs(text) else [os.path.normpath(os.path.join(b, text)) for b in bases]
            found = next((c for c in candidates if self.view.may_read(c) and self.view.is_dir(c)), None)
            if found is not None:
                self.folders.append(found)
            # Not found here: a folder of the machine that runs the job; its configs are looked for
            # in the framework's own folder below, else the composition stops where one is missing.

    def all(self) -> list:
        return self.folders + [h for h in self.homes if h not in self.folders]

    def find(self, config_path: str) -> Optional[tuple]:
        """(real path, display path) of the config at `config_path` (`group/name`), first match."""
        for folder in self.all():
            candidate = os.path.normpath(os.path.join(folder, config_path + ".yaml"))
            if not self.view.may_read(candidate):
                raise _NotComposed(f"config `{config_path}` resolves outside the project; not read "
                                   "(widen it with `reference-paths` in the project config)")
            if self.view.is_file(candidate):
                return candidate, display_path(candidate)
            reads.record(candidate)  # missing: creating it changes the result
        return None

    def group_exists(self, group: str) -> bool:
        view = self.view
        return bool(group) and any(view.is_dir(os.path.join(f, group)) and view.may_read(os.path.join(f, group))
                                   for f in self.all())

    def is_framework(self, path: str) -> bool:
        real = os.path.realpath(path)
        return any(real.startswith(folder + os.sep) for folder in self.framework_folders)


# -- the defaults tree ---------------------------------------------------------------------------


@lean_dataclass
class _Entry:
    """One element of a defaults list (ConfigDefault or GroupDefault)."""

    group: Optional[str]  # a GroupDefault's group, None for a config
    name: str | list[str] | None  # the option (None: nothing; a list: options) or the config path
    package: Optional[str]  # as written after `@`, None when not
    optional: bool = False
    override: bool = False

    @property
    def is_self(self) -> bool:
        return self.group is None and self.name == _SELF


def _entries(node, where: str) -> list:
    """config_repository._create_defaults_list: the entries of a `defaults:` list."""
    if node is None:
        return []
    if not isinstance(node, Sequence):
        raise _NotComposed(f"the `defaults` of {where} is not a list")
    found = []
    for item in node.items:
        if isinstance(item, Scalar) and isinstance(item.value, str):
            path, package = _split_package(item.value)
            found.append(_Entry(None, path, package))
        elif isinstance(item, Mapping) and len(item.items) == 1:
            key, value = next(iter(item.items.items()))
            words = key.split(" ")
            group, package = _split_package(words[-1])
            keywords = set(words[:-1])
            if keywords - {"optional", "override"}:
                raise _NotComposed(f"`{key}` in the defaults of {where} is not an entry Hydra reads")
            if isinstance(value, Sequence) and all(isinstance(v, Scalar) and isinstance(v.value, str) for v in value.items):
                option: str | list[str] | None = [v.value for v in value.items]
            elif isinstance(value, Scalar) and (value.value is None or isinstance(value.value, str)):
                option = value.value
            else:
                raise _NotComposed(f"`{key}` in the defaults of {where} names no option")
            found.append(_Entry(group, option, package, "optional" in keywords, "override" in keywords))
        else:
            raise _NotComposed(f"an entry of the defaults of {where} is not a name or a `group: option`")
    for entry in found:
        for text in [entry.group or "", entry.package or ""] + (entry.name if isinstance(entry.name, list) else [str(entry.name)]):
            if "${" in text:
                raise _NotComposed(f"the defaults of {where} choose by interpolation (`{text}`), which is not followed")
            if "_group_" in text or "_name_" in text:
                raise _NotComposed(f"the defaults of {where} use the legacy `_group_`/`_name_` keywords")
    return found


def _split_package(text: str) -> tuple:
    """config_repository._split_group: `group@package` (a `pkg:rename` keeps its first part)."""
    group, at, package = text.partition("@")
    if not at:
        return group, None
    return group, package.partition(":")[0]


def _join(*parts: str) -> str:
    """A group path: parts joined by "/", "." and ".." read as folders."""
    joined = "/".join(p for p in parts if p)
    normal = os.path.normpath(joined).replace(os.sep, "/") if joined else ""
    return "" if normal == "." else normal  # `../x` from the config folder: Hydra joins it as a path


def _final_package(parent: str, package: str) -> str:
    """InputDefault._get_final_package: `package` under `parent`, from the last `_global_` on."""
    if parent == "":
        full = package
    elif package == "":
        full = parent
    else:
        full = f"{parent}.{package}"
    cut = full.rfind("_global_")
    return full if cut == -1 else full[cut + len("_global_") + 1:]


def _header(text: str) -> Optional[str]:
    """The `# @package` of a config's header comments, absolute (`_global_.` before it)."""
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if not line.startswith("#"):
            break
        match = _HEADER.match(line)
        if match and match.group(1) == "package":
            package = match.group(2)
            if package in ("", "_global_") or package.startswith("_global_."):
                return package or "_global_"
            return f"_global_.{package}"
    return None


class _Composer:
    def __init__(self, search: _Search, choices: dict):
        self.search = search
        self.choices = dict(choices)  # override key -> option: the launch line's, then the configs'
        self.used: set = set()
        self.order: list = []  # display paths of the configs merged, in order ("": the composing file)
        self.framework: set = set()
        self.reads = 0
        self.stack: list = []
        self.texts: dict = {}  # real path -> (root, header)

    def primary(self, root: Mapping, header: Optional[str], shown: Optional[str]) -> Mapping:
        """The primary config composed; `shown`: its display path (None: the composing file)."""
        package = _final_package("", header or "")
        placed = self.tree(root, header, "", package, shown, depth=0)
        unused = set(self.choices) - self.used
        if unused:
            raise _NotComposed(f"`{min(unused)}` chooses an option no defaults list has, which Hydra refuses")
        merged = Mapping(span=root.span)
        for content, package, where in placed:
            self.order.append(where or "")
            _merge_into(merged, _placed(content, package, root.span))
        return merged

    def load(self, path: str, shown: str, config_path: str) -> tuple:
        """(root, text) of the config at `path`, read once per composition."""
        real = os.path.realpath(path)
        if real in self.texts:
            return self.texts[real]
        if self.reads >= MAX_COMPOSED_CONFIGS:
            raise _NotComposed(f"it composes more than {MAX_COMPOSED_CONFIGS} configs")
        self.reads += 1
        try:
            data = self.search.view.read_bytes(path)  # read (and recorded) each time; parsed once per content
            text = data.decode("utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise _NotComposed(f"config `{config_path}` cannot be read ({getattr(exc, 'strerror', None) or exc})") \
                from None
        root = _parsed(shown, text, config_path)
        if self.search.is_framework(path):
            self.framework.add(shown)
        self.texts[real] = (root, text)
        return root, text

    def tree(self, root: Mapping, header: Optional[str], base: str, package: str, shown: Optional[str],
             depth: int) -> list:
        """_create_defaults_tree_impl, flattened: [(the config's own values, package, display path)]
        of a config and the configs its defaults list names, in merge order."""
        if depth > MAX_COMPOSE_DEPTH:
            raise _NotComposed(f"its defaults nest more than {MAX_COMPOSE_DEPTH} deep")
        where = shown or "the config"
        entries = _entries(root.items.get("defaults"), where)
        if not any(e.is_self for e in entries):
            # _validate_self: the config's own values last (a config without a defaults list, or
            # with overrides alone, is a leaf of the tree: its own values, where it stands).
            entries.append(_Entry(None, _SELF, None))
        seen_override = False
        for entry in entries:  # _update_overrides: this config's overrides before its children
            if entry.is_self:
                continue
            if entry.override:
                if entry.group is not None and entry.group.lstrip("/").startswith("hydra/"):
                    continue  # Hydra's own config (its launcher, its logging): not the program's
                if entry.group is None:
                    raise _NotComposed(f"`override` of a config name in the defaults of {where}")
                key = self.override_key(entry, entry.group, base, package)
                self.choices.setdefault(key, entry.name)
                seen_override = True
            elif seen_override:
                raise _NotComposed(f"in the defaults of {where} an override comes before another entry, "
                                   "which Hydra refuses")
        children = []
        for entry in reversed(entries):  # Hydra expands the last first: its overrides apply to the earlier
            if entry.is_self:
                children.append([(root, package, shown)])
            elif not entry.override:
                children.append(self.child(entry, base, package, where, depth))
        return [placed for child in reversed(children) for placed in child]

    def override_key(self, entry: _Entry, group: str, base: str, package: str) -> str:
        """InputDefault.get_override_key: the group path, with `@package` when not the default one
        (`group`: the entry's, a GroupDefault's)."""
        group_path = self.group_path(entry, base)
        written = entry.package if entry.package is not None else group.lstrip("/").replace("/", ".")
        final = _final_package(package, "" if written == "_here_" else written)
        if group_path.replace("/", ".") != final:
            return f"{group_path}@{final or '_global_'}"
        return group_path

    @staticmethod
    def group_path(entry: _Entry, base: str) -> str:
        group = entry.group if entry.group is not None else os.path.dirname(str(entry.name))
        if group.startswith("/"):
            return _join(group[1:])
        return _join(base, group)

    def child(self, entry: _Entry, base: str, package: str, where: str, depth: int) -> list:
        if entry.group is not None:
            key = self.override_key(entry, entry.group, base, package)
            if key in self.choices:
                entry.name = self.choices[key]
                self.used.add(key)
            if entry.name is None:
                return []  # `group: null`: nothing chosen
            if entry.name == "???":
                raise _NotComposed(f"`{entry.group}` in the defaults of {where} is ??? (chosen on the command line)")
            names = entry.name if isinstance(entry.name, list) else [entry.name]
            group_path = self.group_path(entry, base)
            relative = entry.group.lstrip("/")
            found = []
            for name in names:
                found += self.config(_join(group_path, name), group_path, relative, entry, package, depth)
            return found
        path = str(entry.name)
        absolute = path.startswith("/")
        config_path = _join(path[1:]) if absolute else _join(base, path)
        relative = os.path.dirname(path.lstrip("/"))
        return self.config(config_path, self.group_path(entry, base), relative, entry, package, depth)

    def config(self, config_path: str, group_path: str, relative: str, entry: _Entry, parent: str,
               depth: int) -> list:
        """One config of a defaults list, with its own defaults: placed at its package."""
        found = self.search.find(config_path)
        if found is None:
            if entry.optional:
                return []
            raise _NotComposed(f"config `{config_path}` is not found on its search path",
                               missing=config_path if entry.group is None else None)
        path, shown = found
        real = os.path.realpath(path)
        if real in self.stack:
            raise _NotComposed(f"config `{config_path}` composes itself (a cycle)")
        root, text = self.load(path, shown, config_path)
        written = entry.package
        if written is None:
            written = _header(text)
        if written is None:
            if ".." in relative.split("/") or "." in relative.split("/"):
                raise _NotComposed(f"config `{config_path}` has no package to be placed at")
            written = relative.replace("/", ".")
        package = _final_package(parent, "" if written == "_here_" else written)
        self.stack.append(real)
        try:
            return self.tree(root, None, group_path, package, shown, depth + 1)
        finally:
            self.stack.pop()


_PARSED: dict = {}  # (display path, text) -> root: the trainer's configs are composed by many files
_MAX_PARSED = 256


def _parsed(shown: str, text: str, config_path: str) -> Mapping:
    """The config's values, each span marked as written in `shown`; shared between compositions,
    never changed (merging makes its own containers)."""
    key = (shown, text)
    root = _PARSED.get(key)
    if root is not None:
        return root
    from . import read
    from .inheritance import marked

    try:
        root = read(shown, text, "yaml").root
    except (ParseError, LimitExceeded) as exc:
        raise _NotComposed(f"config `{config_path}` is not read: line {exc.line}: {exc.message}") from None
    root = marked(root, shown)  # each value keeps the file it is written in
    if len(_PARSED) >= _MAX_PARSED:
        _PARSED.clear()
    _PARSED[key] = root
    return root


# -- merging -------------------------------------------------------------------------------------


def _placed(content: Mapping, package: str, span: Span) -> Mapping:
    """ConfigLoaderImpl._embed_result_config: a config's values (its defaults list left out) under
    its package."""
    items = {k: v for k, v in content.items.items() if k != "defaults"}
    spans = {k: s for k, s in content.key_spans.items() if k != "defaults"}
    node = Mapping(items=items, key_spans=spans, span=content.span, deps=content.deps, origin=content.origin)
    for key in reversed(package.split(".") if package else []):
        node = Mapping(items={key: node}, key_spans={key: node.span}, span=node.span)
    return node


def _merge_into(target: Mapping, source: Mapping, depth: int = 0) -> None:
    """OmegaConf's merge_with: `source` over `target`, mappings key by key, anything else replacing;
    `target` holds only containers made here, so it is changed in place."""
    for key, value in source.items.items():
        present = target.items.get(key)
        if isinstance(value, Mapping) and depth < 200:
            if isinstance(present, Mapping):
                _merge_into(present, value, depth + 1)
                present.span = value.span
            else:
                fresh = Mapping(span=value.span, deps=value.deps, origin=value.origin)
                _merge_into(fresh, value, depth + 1)
                target.items[key] = fresh
        elif isinstance(value, Scalar) and value.value == "???" and present is not None:
            pass  # OmegaConf keeps the value a `???` is merged over
        else:
            target.items[key] = value
        if key in source.key_spans:
            target.key_spans[key] = source.key_spans[key]
