"""The language server itself (pygls): diagnostics on open, change and save, the
documents that read a changed file linted again, fixes as code actions, explain
rows on hover. Everything batchlint decides is in Session and the run layer; this
module only translates to and from LSP.
"""

from __future__ import annotations

import asyncio
import os

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from .. import __version__
from ..config import ConfigError
from ..document import Span
from ..project import overlaid
from ..report import rule_url
from ..report.json import fix_of
from .hover import hover_text
from .session import Document, Session, key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

SEVERITY = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
            "info": types.DiagnosticSeverity.Information}
# Seconds after a change before its buffer is linted: none beyond the changes already waiting to be
# read (each cancels the lint of the one before), as ruff's server lints every change. A lint of the
# largest configs takes tens of milliseconds (benchmarks/editor.py), less than the gap between keystrokes.
TYPING_PAUSE = 0.0


class BatchlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("batchlint", __version__)
        self.session = Session()
        self.published: dict = {}  # key of a file -> (uri, its diagnostics as last published)
        self.pending: dict = {}  # key of a changed buffer -> its scheduled lint
        self.texts: dict = {}  # key -> Text, while one answer is made (a file read once however many findings)

    # Linting and publishing

    def relint(self, names) -> None:
        """Lint the open documents `names` (keys) and publish what changed in every file."""
        for name in dict.fromkeys(names):
            if name in self.session.open:
                linted = self.session.lint(name)
                for message in linted.notices:
                    self.window_log_message(types.LogMessageParams(types.MessageType.Log, f"batchlint: {message}"))
        self.publish()

    def changed(self, path: str) -> None:
        """`path` changed (saved, or its buffer): lint it if open, then every open document that read it."""
        name = key(path)
        self.relint(([name] if name in self.session.open else []) + self.session.dependants(path))

    def publish(self) -> None:
        """Publish the findings of every file whose findings changed: each open document linted
        (its first lint too, clean or not), and each file an open document's lint found something in."""
        self.texts = {}
        findings = self.session.findings()
        for name in self.session.linted:
            findings.setdefault(name, [])
        now: dict = {}
        for name, items in findings.items():
            doc = self.session.open.get(name)
            uri = doc.uri if doc is not None else from_fs_path(name)
            if uri is None:
                continue
            lsp = [self.diagnostic(d) for d in items]
            linted = self.session.linted.get(name)
            if linted is not None:
                lsp += [types.Diagnostic(types.Range(types.Position(0, 0), types.Position(0, 0)),
                                         f"batchlint could not lint this file: {error}", types.DiagnosticSeverity.Error,
                                         source="batchlint") for error in linted.errors]
            now[name] = (uri, lsp, linted.version if linted is not None else None)
        for name in sorted(set(self.published) | set(now)):
            uri, lsp, version = now.get(name, (self.published.get(name, (None,))[0], [], None))
            before = self.published.get(name)
            if before is None or before[1] != lsp:
                self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, lsp, version))
            if name in now:
                self.published[name] = (uri, lsp)
            else:
                self.published.pop(name, None)

    def diagnostic(self, d) -> types.Diagnostic:
        url = rule_url(d.code)
        here = types.Location(self.uri(d.path), self.range(d.path, d.span))
        related = [types.DiagnosticRelatedInformation(
            types.Location(self.uri(r.path or d.path), self.range(r.path or d.path, r.span)), r.message)
            for r in d.related] + [types.DiagnosticRelatedInformation(here, line) for line in d.detail]
        return types.Diagnostic(
            range=here.range,
            message=d.message,
            severity=SEVERITY.get(d.severity, types.DiagnosticSeverity.Warning),
            code=d.code,
            code_description=types.CodeDescription(href=url) if url else None,
            source="batchlint",
            related_information=related or None,
        )

    def uri(self, path: str) -> str:
        doc = self.session.open.get(key(path))
        return doc.uri if doc is not None else from_fs_path(os.path.abspath(path))

    def range(self, path: str, span) -> types.Range:
        name = key(path)
        if name not in self.texts:
            self.texts[name] = self.session.text(path)
        text = self.texts[name]
        if text is None:  # the file is gone: batchlint's place, as LSP counts it from 0
            return types.Range(types.Position(span.line - 1, span.column - 1),
                               types.Position(span.end_line - 1, span.end_column - 1))
        start, end = text.offset(span.line, span.column), text.offset(span.end_line, span.end_column)
        return types.Range(types.Position(*text.position(start)), types.Position(*text.position(max(start, end))))

    # Code actions

    def actions(self, uri: str, wanted: types.Range) -> list:
        path = to_fs_path(uri)
        name = key(path) if path else None
        if name is None or self.session.fresh(name) is None:
            return []
        self.publish()  # a lint of the buffer as it is now, if it had changed
        out = []
        for d in self.session.findings().get(name, []):
            fix = fix_of(d)
            if fix is None or fix["applicability"] == "display-only":
                continue
            shown = self.diagnostic(d)
            if not _overlap(shown.range, wanted):
                continue
            changes: dict = {}
            for edit in fix["edits"]:
                where = self.range(edit["path"], Span(edit["line"], edit["column"], edit["end_line"], edit["end_column"]))
                changes.setdefault(self.uri(edit["path"]), []).append(types.TextEdit(where, edit["content"]))
            unsafe = fix["applicability"] == "unsafe"
            out.append(types.CodeAction(
                title=f"{d.code}: {fix['message']}" + (" (unsafe fix)" if unsafe else ""),
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[shown],
                is_preferred=not unsafe,
                edit=types.WorkspaceEdit(changes=changes),
            ))
        return out


def _overlap(a: types.Range, b: types.Range) -> bool:
    start = lambda p: (p.line, p.character)  # noqa: E731
    return start(a.start) <= start(b.end) and start(b.start) <= start(a.end)


def build() -> BatchlintServer:
    server = BatchlintServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: BatchlintServer, params: types.InitializeParams) -> None:
        # The workspace root is where the CLI would run: the project config nearest it, and relative
        # paths (a launch line's config) resolved from it.
        root = to_fs_path(params.root_uri) if params.root_uri else params.root_path
        if params.workspace_folders:
            root = to_fs_path(params.workspace_folders[0].uri) or root
        if root and os.path.isdir(root):
            os.chdir(root)

    @server.feature(types.INITIALIZED)
    def initialized(ls: BatchlintServer, params: types.InitializedParams) -> None:
        encoding = ls.workspace.position_encoding or "utf-16"
        ls.session.encoding = getattr(encoding, "value", encoding)  # the kind the client and pygls agreed on
        watch = ls.client_capabilities.workspace and ls.client_capabilities.workspace.did_change_watched_files
        if watch and watch.dynamic_registration:  # files no editor has open: a DeepSpeed JSON changed by git
            ls.client_register_capability(types.RegistrationParams([types.Registration(
                "batchlint-watch", types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                types.DidChangeWatchedFilesRegistrationOptions([types.FileSystemWatcher("**/*")]))]))

    def put(ls: BatchlintServer, uri: str) -> Optional[str]:
        path = to_fs_path(uri)
        if not path:  # an untitled buffer: no name, so no format and no project
            return None
        document = ls.workspace.get_text_document(uri)
        ls.session.put(Document(path, uri, document.source, document.version))
        return path

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: BatchlintServer, params: types.DidOpenTextDocumentParams) -> None:
        path = put(ls, params.text_document.uri)
        if path:
            ls.changed(path)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: BatchlintServer, params: types.DidChangeTextDocumentParams) -> None:
        path = put(ls, params.text_document.uri)
        if not path:
            return
        name = key(path)
        if name in ls.pending:
            ls.pending.pop(name).cancel()
        def relint() -> None:
            ls.pending.pop(name, None)
            ls.changed(path)

        ls.pending[name] = asyncio.get_running_loop().call_later(TYPING_PAUSE, relint)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls: BatchlintServer, params: types.DidSaveTextDocumentParams) -> None:
        path = put(ls, params.text_document.uri)
        if path:
            pending = ls.pending.pop(key(path), None)
            if pending is not None:
                pending.cancel()
            ls.changed(path)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: BatchlintServer, params: types.DidCloseTextDocumentParams) -> None:
        path = to_fs_path(params.text_document.uri)
        if not path:
            return
        pending = ls.pending.pop(key(path), None)
        if pending is not None:
            pending.cancel()
        dependants = ls.session.dependants(path)  # they read the buffer: now they read the file
        ls.session.close(path)
        ls.relint(dependants)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched(ls: BatchlintServer, params: types.DidChangeWatchedFilesParams) -> None:
        names: list = []
        for change in params.changes:
            path = to_fs_path(change.uri)
            if path and key(path) not in ls.session.open:  # an open file's news come from its buffer
                names += ls.session.dependants(path)
        if names:
            ls.relint(names)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
    def code_action(ls: BatchlintServer, params: types.CodeActionParams) -> list:
        only = params.context.only
        kinds = {str(getattr(k, "value", k)) for k in only or ()}
        if kinds and not kinds & {"", "quickfix"}:  # a kind asked for covers its sub-kinds
            return []  # asked for other kinds (source.organizeImports ...): batchlint's are quick fixes
        return ls.actions(params.text_document.uri, params.range)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: BatchlintServer, params: types.HoverParams) -> Optional[types.Hover]:
        path = to_fs_path(params.text_document.uri)
        text = ls.session.text(path) if path else None
        if path is None or text is None:
            return None
        line = text.line_at(params.position.line, params.position.character)
        try:
            with overlaid(ls.session.overlay()):
                shown = hover_text(path, line, ls.session.settings(path))
        except (ConfigError, OSError) as exc:  # a broken project config, a file gone: no hover, said in the log
            ls.window_log_message(types.LogMessageParams(types.MessageType.Warning, f"batchlint: no hover: {exc}"))
            return None
        if shown is None:
            return None
        return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, shown))

    return server


def serve() -> None:
    """Serve on standard input and output; whatever else writes to standard output goes to standard
    error instead, so nothing but LSP messages reaches the client."""
    import sys

    stdout, sys.stdout = sys.stdout.buffer, sys.stderr
    build().start_io(sys.stdin.buffer, stdout)
