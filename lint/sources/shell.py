"""Read a launch script: the commands it runs, with every word's position.

A small reader for the part of bash that launch scripts use: variables
(`X=1`, `export X=1`, `${X:-8}`, `$((X * 2))`), env prefixes (`A=1 cmd`),
arrays (`args=(a b)`, `"${args[@]}"`), quotes, line continuations and
comments (`#` starts one only at the start of a word). Nothing is executed:
`$(...)`, backquotes, brace expansion, globbing and unknown variables leave a
word unknown, except substitutions whose text says their value (the script's own
folder, `$(pwd)` as the `cd`s before it leave it, `$(cat <<EOF ... EOF)`). An if/elif/else or case whose test known values decide runs
only the branch taken (shellflow.py reads the tests); an undecided one runs
each branch apart and keeps what all of them leave alike (a variable they set
differently is unknown afterwards, as is one set inside a loop or function).
`exit` ends the script; `cd DIR` moves later commands to DIR (`Command.directory`).

The reader works in time linear in the script (every scan is a regular
expression or a find from the current offset) and bounds what expansion
makes: a value longer than MAX_LENGTH characters is unknown, and a script
whose expansions produce more than MAX_SHELL_OUTPUT characters in all is past
its bound (a few lines that double a variable would otherwise reach gigabytes).

It also records the continuations that do not continue: a `\\` followed by
spaces or a comment escapes a space, not the newline, so the command ends
there and the lines after it run as separate commands.

Lines end at "\\n" only, as bash reads them: a "\\r" before it is part of the
line (and of the last word on it); columns count characters.
"""

from __future__ import annotations

import bisect
import math
import operator
import os
import posixpath
import re
from collections.abc import Callable

from ..document import Document, LimitExceeded, Mapping, ParseError, Span, line_starts
from ..lazy_pattern import LazyPattern
from ..lean_dataclass import field, lean_dataclass, replace
from ..limits import MAX_LENGTH, MAX_NODES, MAX_NUMBER_DIGITS, MAX_SHELL_BRANCHES, MAX_SHELL_NESTING, MAX_SHELL_OUTPUT
from .shellflow import (
    ABSENT,
    ASSIGNMENT as _ASSIGNMENT,
    CASE_ENDS,
    COMMAND_PREFIX,
    NAME as _NAME,
    Case,
    Group,
    If,
    Loop,
    Simple,
    Store,
    _Raw,
    glob_match,
    integer_test,
    parse,
    test_result,
)
from .shellstop import Stop, assigned_by, given, names_set, nounset_change, plain_assignments

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

_POSITIONAL = LazyPattern(r"[0-9]|@|#")  # ${1}, ${1:-8}, ${@}, ${#}
_ASSIGNING = LazyPattern(r"([A-Za-z_][A-Za-z0-9_]*):?=")  # `${x:=8}`, `${x=8}`: x is set if it was not
_INDEXED_ASSIGNMENT = LazyPattern(r"([A-Za-z_][A-Za-z0-9_]*)\[[^\]]*\]\+?=")
_OPENERS = {"if", "for", "while", "until", "case", "select"}
_CLOSERS = {"fi", "done", "esac"}
_KEYWORDS = {"then", "else", "elif", "do", "!", "{", "}", "time", "nohup", "exec", "command", "eval"}
_LEADING_WORDS = _KEYWORDS | _OPENERS | _CLOSERS
_PASSING = frozenset({"nohup", "exec", "command"})  # run the next word with the environment they are given
_DECLARATIONS = ("export", "declare", "local", "readonly", "typeset")
_DECLARE_FLAGS = LazyPattern(r"[-+][A-Za-z]+")

# Scanners, each matched at the current offset.
_BLANKS = LazyPattern(r"(?:[ \t]|\\\n)+")  # spaces, tabs and line continuations
_COMMENT = LazyPattern(r"#[^\n]*")
_OPERATOR = LazyPattern(r"&&|\|\||;;&|;;|;&|\|&|[;|&\n]")
_ESAC = LazyPattern(r"esac(?=[\s;&|)]|$)")
_PLAIN = LazyPattern(r"[^ \t\n;&|()\\'\"$`]+")  # unquoted text without anything special
_QUOTED_PLAIN = LazyPattern(r'[^"\\$`]+')  # the same inside double quotes
_BACKQUOTED = LazyPattern(r"[^`\\]*(?:\\.[^`\\]*)*`", re.S)
_HEREDOC_WORD = LazyPattern(r"<<(-?)[ \t]*([^ \t\n;|&<>]*)")
_PAREN = LazyPattern(r"[()]")
_BRACE = LazyPattern(r"[{}]")
# `{a,b}` and `{1..100000000}`: bash expands them into many words; not followed.
_BRACE_EXPANSION = LazyPattern(r"\{[^{}\s]*(?:,|\.\.)[^{}\s]*\}")
# Digits past this run are a number too long to keep (whatever reads the word would call int() on it).
_LONG_NUMBER = LazyPattern(r"[0-9]{%d}" % (MAX_NUMBER_DIGITS + 1))


class _Unknown:
    def __repr__(self):
        return "<unknown>"


UNKNOWN = _Unknown()


@lean_dataclass
class Word:
    """One shell word after expansion. `value` is UNKNOWN when it depends on
    something not in the script; `span` is where the value was written (the
    assignment's value for a word that is exactly `$VAR`)."""

    value: object
    span: Span
    raw: str = ""
    # For `key=$VAR`: where VAR's value was written, the place a finding on the value should point.
    value_span: Optional[Span] = None
    # A variable read from a heredoc (`read -r -d '' CMD <<EOF`): the words an unquoted `$CMD`
    # splits into, each with its place in the heredoc.
    pieces: Optional[tuple] = None
    # Set from outside the script and not given (`OUTPUT=$1`, `$NNODES`): a test of whether it is
    # empty is decided as the script's own default is (`${1:-8}` is 8): the caller left it empty.
    outside: bool = False
    # Starts with the script's own folder (`$(cd "$(dirname "$0")" && pwd)/ds.json`): a path a `cd` does not move.
    anchored: bool = False
    # Not known, but the caller's value or else this Word's (an argument loop that may set it, or not).
    fallback: Optional[Word] = None
    # A word not known that a string was split into: its text with _NOT_KNOWN where a value is not
    # known (`${SOURCE};`), as a shell that parses the string again (`eval`, `sh -c`) reads it.
    written: Optional[str] = None
    # Its value is a `$(( ... ))` whose division dropped a remainder, or a variable holding one, unchanged.
    truncation: Optional[Truncation] = None
    # The script's own default of a variable its argument loop sets from the caller's arguments, kept as
    # the loop does not run without them: a test of whether it is empty decides nothing certain.
    defaulted: bool = False
    # A path from the folder the shell is in, as `$(pwd)/conf` names it (`./conf`; not from the folder of a
    # program, as Hydra reads a relative `--config-path`): (that folder, as Command.directory holds it).
    working: Optional[tuple] = None

    @property
    def known(self) -> bool:
        return self.value is not UNKNOWN


@lean_dataclass
class Command:
    words: list  # Word, expanded, env prefixes removed
    env: dict  # prefix assignments: name -> Word
    span: Span  # the whole command
    # The folder the script has moved to with `cd`/`pushd` before the command: None when it has not
    # (relative paths are the script's as always), a path (relative: to the folder it started in), or
    # UNKNOWN (relative paths are not known).
    directory: object = None
    anchored: frozenset = frozenset()  # values of its words a `cd` does not move (Word.anchored)
    placed: bool = False  # `directory` is from the script's own folder: relative to the working folder


@lean_dataclass
class Continuation:
    """A `\\` that does not continue the command."""

    span: Span  # the backslash and what follows it on the line
    dropped: int  # how many following lines look like they belonged to the command
    comment: bool  # followed by a comment rather than only spaces
    carriage_return: bool = False  # followed by the CR of a CRLF line ending


@lean_dataclass
class ShellDocument(Document):
    commands: list = field(default_factory=list)
    variables: dict = field(default_factory=dict)  # at the end of the script: name -> Word or list of Words
    broken_continuations: list = field(default_factory=list)
    stops: list = field(default_factory=list)  # Stop: the commands bash cannot expand (shellstop.py)


def read_shell(path: str, text: str, environment: Optional[dict] = None,
               arguments: Optional[list] = None, sourcer: Optional[Callable] = None) -> ShellDocument:
    """The script's commands. `environment` (name -> Word) and `arguments` (Words: $1, $2, "$@")
    are what a caller runs it with (`NGPU=16 ./run_train.sh --steps 10`); without them the
    positional parameters are unknown. `sourcer(word)` gives the file a `source FILE` / `. FILE`
    names, as (key, path as shown, text), or None when it is not read (outside the project, not
    there): its assignments, exports and heredoc reads then enter the script's state (its own
    commands are not the script's launch lines; the file is linted on its own)."""
    # A script saved with CRLF line endings is read as its author meant it (lines and columns
    # stay the same); BL601 reports each `\` that the carriage return keeps from continuing.
    meant = text.replace("\r\n", "\n") if "\r\n" in text else text
    lexer = _Lexer(meant)
    raw_commands = lexer.commands()
    state = _Interpreter(meant, lexer.line_starts)
    state.script = path
    state.sourcer = sourcer
    slurm = _sbatch_environment(meant)
    state.variables.update(slurm)
    state.exports.update(dict.fromkeys(slurm, True))  # the job's environment: every command sees it
    for name, value in (environment or {}).items():
        if isinstance(value, Word):
            state.variables[name] = value
            state.exports[name] = True
    if arguments is not None:
        _set_arguments(state.variables, arguments, Span(1, 1, 1, 1))
    nodes = parse(raw_commands)
    state.assigned = plain_assignments(nodes)
    state.nodes(nodes)
    doc = ShellDocument(path=path, format="shell", root=Mapping(span=Span(1, 1, 1, 1)), text=text)
    doc.commands = state.output
    doc.variables = state.variables
    doc.broken_continuations = _broken_continuations(text)
    doc.stops = state.stops
    return doc


def in_directory(directory, path: str, anchored: frozenset = frozenset(), placed: bool = False) -> Optional[str]:
    """A relative path a command names, as seen from the folder the script moved to (Command.directory,
    .anchored, .placed); None when that folder is not known. A folder from the script's own (`cd
    "$(dirname "$0")"`) is one as shown, from the working folder: the path is made absolute."""
    if directory is None or path.startswith("/") or path in anchored:
        return path
    if directory is UNKNOWN:
        return None
    joined = posixpath.normpath(posixpath.join(directory, path))
    return os.path.abspath(joined) if placed else joined


# A redirection among a command's words: `> /dev/null`, `2>/dev/null`, `&>log` (the lexer keeps them as words).
_REDIRECTION = LazyPattern(r"(?:[0-9]*|&)(?:>>?|<)(.*)")


def _without_redirections(words: list) -> list:
    kept, skip = [], False
    for word in words:
        match = _REDIRECTION.fullmatch(str(word.value)) if word.known else None
        if skip:
            skip = False
        elif match:
            skip = not match.group(1)
        elif not (word.known and word.value in ("-P", "-L", "-e", "-@", "--")):
            kept.append(word)
    return kept


def _appended(before: Word, added: Word, placed: Optional[tuple]) -> Optional[tuple]:
    """The words of `CMD+=" --tp 4"`, each at its place: those `CMD` held, then those added (a single
    word is at its own place); None when a word straddles the two or either cannot be placed."""
    if not (str(before.value)[-1:].isspace() or str(added.value)[:1].isspace()):
        return None
    head = before.pieces or ((before,) if len(str(before.value).split()) == 1 else None)
    tail = placed or ((added,) if len(str(added.value).split()) == 1 else None)
    if head is None or tail is None:
        return None
    words = tuple(replace(w, value=w.value.strip()) if isinstance(w.value, str) else w for w in (*head, *tail))
    split = (str(before.value) + str(added.value)).split()
    return words if [w.value for w in words] == split else None


def _set_arguments(variables: dict, arguments: list, span: Span) -> None:
    """$@, $1..$9 and $# of a script run (or a file sourced) with `arguments`."""
    variables["@"] = list(arguments)
    variables.update({str(number): word for number, word in enumerate(arguments[:9], 1)})
    variables["#"] = Word(str(len(arguments)), span, "")


# -- lexing: text -> commands of raw words ------------------------------------

@lean_dataclass
class _RawWord:
    parts: list  # ("lit", text) | ("var", name, default, op, quoted) | ("array", name) | ("arith", expr)
    #               | ("folder", "0" or "BASH_SOURCE"): the script's own folder | ("dirname", name) | ("unknown",)
    #               | ("pwd",): the folder the command runs in (`$(pwd)`, `` `pwd` ``, `$PWD`)
    span: Span
    raw: str
    assignment_array: Optional[list] = None  # NAME=( ... ): the element words
    offset: int = 0  # where the word starts in the text
    whole_string: bool = False  # one quoted string and nothing else: "..." or '...'
    # What it expands in this shell, in order, each with where it is written: ("var", name, offset) of
    # a plain `$x`/`${x}`, ("arith", expression, offset of the expression) of `$((...))`, ("set", name,
    # offset) of `${x:=...}` (what is inside `$(...)` and backquotes runs in a subshell: not here).
    refs: tuple = ()


def _at_command(words: list) -> bool:
    """Whether the next word is a command's first (only block keywords before it)."""
    return all(word.raw in COMMAND_PREFIX for word in words)


def _header_of_case(words: list) -> bool:
    """`case WORD in` (after keywords such as `then`): its items' patterns follow."""
    index = 0
    while index < len(words) and words[index].raw in COMMAND_PREFIX:
        index += 1
    return len(words) - index == 3 and words[index].raw == "case"


class _Lexer:
    def __init__(self, text: str, start: int = 0, end: Optional[int] = None, starts: Optional[list] = None,
                 path: Optional[str] = None):
        """Lexes text[start:end] where it stands (positions are the whole text's; `path`: the file they
        are in, for a file another sources)."""
        self.text = text
        self.path = path
        self.i = start
        self.end = len(text) if end is None else end
        self.line_starts = starts if starts is not None else line_starts(text, "shell")
        self.blocks: list = []  # the blocks open ("case" or "other"): a case's `;;` and patterns
        self.patterns = False  # a case item's patterns come next
        self.subshell = 0  # `( ... )` open around the command being read
        self.parentheses = 0  # other `(` open: `name()`, `<(cmd)`
        self.words = 0
        self.heredocs: list = []  # (body start, body end, delimiter quoted) of the command being read
        self.refs: list = []  # _RawWord.refs of the word being read

    def position(self, offset: int) -> tuple[int, int]:
        index = bisect.bisect_right(self.line_starts, offset) - 1
        return index + 1, offset - self.line_starts[index] + 1

    def span(self, start: int, end: int) -> Span:
        return Span(*self.position(start), *self.position(end), self.path)

    def commands(self) -> list:
        """A _Raw for every simple command, in order, with the operator that ends it; a case
        statement's patterns and item terminators (`;;`, `;&`, `;;&`) are _Raws of their own."""
        text, end = self.text, self.end
        found: list = []
        words: list = []
        start = 0
        test = False  # inside `[[ ... ]]`: && || ( ) are words of the test
        while self.i < end:
            ch = text[self.i]
            if ch in " \t" or text.startswith("\\\n", self.i, self.end):
                self.i = _BLANKS.match(text, self.i, self.end).end()
            elif ch == "#":
                self.i = _COMMENT.match(text, self.i, self.end).end()
            elif self.patterns and ch != "\n" and not words:
                self._pattern(found)
            elif test and (text.startswith(("&&", "||"), self.i) or ch in "()"):
                size = 1 if ch in "()" else 2
                words.append(_RawWord([("lit", text[self.i:self.i + size])], self.span(self.i, self.i + size),
                                      text[self.i:self.i + size], offset=self.i))
                self.i += size
            elif ch in ";|&\n":
                operator = _OPERATOR.match(text, self.i, self.end).group()
                self.i += len(operator)
                test = False
                if words:
                    found.append(self._finish(words, start, operator))
                    words = []
                if operator in CASE_ENDS and self.blocks and self.blocks[-1] == "case":
                    found.append(_Raw([], self.span(self.i - len(operator), self.i), kind=operator))
                    self.patterns = True
            elif text.startswith("((", self.i) and _at_command(words):
                if not words:
                    start = self.i
                at = self.i
                body = self._balanced(_PAREN, "(")  # `(( N > 8 ))`: an arithmetic command
                inner = body[1:-1] if body and body.startswith("(") and body.endswith(")") else None
                parts = [("arith", inner)] if inner is not None else [("unknown",)]
                words.append(_RawWord(parts, self.span(at, self.i), text[at:self.i], offset=at))
            elif ch == "(":
                self.i += 1
                if _at_command(words):
                    self.subshell += 1  # `( cd x && make )`: what it changes ends with it
                else:
                    self.parentheses += 1  # `name()` of a function, `<(cmd)`
            elif ch == ")":
                self.i += 1
                if self.parentheses:
                    self.parentheses -= 1
                elif self.subshell:
                    if words:
                        found.append(self._finish(words, start, ")"))
                        words = []
                    self.subshell -= 1
            elif text.startswith("<<<", self.i):
                self.i += 3  # a here-string: the word after it is read as any other
            elif text.startswith("<<", self.i):
                self.heredocs.append(self._heredoc())
            else:
                if not words:
                    start = self.i
                command = _at_command(words)
                word = self._word()
                if word is not None:
                    words.append(word)
                    test = test or (command and word.raw == "[[")
                    test = test and word.raw != "]]"
                    if word.raw == "in" and _header_of_case(words):
                        found.append(self._finish(words, start, ""))  # `case $X in a) ...`: patterns follow
                        words = []
        if words:
            found.append(self._finish(words, start, ""))
        return found

    def _pattern(self, found: list) -> None:
        """A case item's patterns, `(a|"b"|c*)`, up to its `)`; `esac` ends the case instead."""
        text = self.text
        self.patterns = False
        if _ESAC.match(text, self.i, self.end):
            return  # read as the command `esac`
        start = self.i
        if text[self.i] == "(":
            self.i += 1
        alternatives = []
        while self.i < self.end:
            ch = text[self.i]
            if ch == ")":
                self.i += 1
                break
            if ch == "\n":
                break  # not a pattern bash would read: its words are a command
            if ch in " \t|" or text.startswith("\\\n", self.i, self.end):
                self.i += 2 if ch == "\\" else 1
                continue
            word = self._word()
            if word is None:
                self.i += 1  # a character no word takes (`;`, `&`, `(`): past it
            else:
                alternatives.append(word)
        found.append(_Raw(alternatives, self.span(start, self.i), kind="pattern"))

    def _finish(self, words: list, start: int, operator: str) -> _Raw:
        """A command, with the operator after it; the blocks it opens and closes are noted (a case's
        items are read as patterns)."""
        end = words[-1].span
        for word in words:
            if word.raw in ("fi", "done", "esac", "}"):
                if self.blocks:
                    self.blocks.pop()
                break
            if word.raw in ("if", "while", "until", "for", "select", "case", "{"):
                self.blocks.append("case" if word.raw == "case" else "other")
                if word.raw == "case":
                    self.patterns = words[-1].raw == "in"
                if len(self.blocks) > MAX_SHELL_NESTING:
                    raise LimitExceeded(f"launch script nests blocks deeper than {MAX_SHELL_NESTING}",
                                        *self.position(start))
                break
            if word.raw not in COMMAND_PREFIX:
                if words[-1].raw == "{":  # `name() {`, `function name {`: a function's body
                    self.blocks.append("other")
                break
        line, column = self.position(start)
        heredocs, self.heredocs = self.heredocs, []
        return _Raw(words, Span(line, column, end.end_line, end.end_column, self.path), heredocs, operator,
                    subshell=self.subshell)

    def _heredoc(self) -> tuple:
        """Skip `<<EOF` to the end of its line, then the lines up to the delimiter:
        (body start, body end, whether the delimiter is quoted); an unterminated body ends at -1."""
        text = self.text
        written = _HEREDOC_WORD.match(text, self.i, self.end).group(2)
        delimiter = written.strip("'\"")
        line_end = text.find("\n", self.i, self.end)
        position = body = self.end if line_end < 0 else line_end + 1
        while position < self.end:
            end = text.find("\n", position, self.end)
            end = self.end if end < 0 else end
            if text[position:end].strip() == delimiter:
                self.i = end
                return body, position, written != delimiter
            position = end + 1
        self.i = self.end
        return body, -1, written != delimiter

    def _word(self, in_array: bool = False) -> Optional[_RawWord]:
        text, end = self.text, self.end
        start = self.i
        parts: list = []
        literal: list = []

        def flush():
            if literal:
                parts.append(("lit", "".join(literal)))
                literal.clear()

        first_string = None  # where a quoted string the word starts with ends
        self.refs = []
        while self.i < end:
            ch = text[self.i]
            if ch in " \t\n;&|()":
                break
            if self.i == start and ch in "'\"":
                first_string = -1
            if ch == "\\":
                if text.startswith("\\\n", self.i, self.end):
                    self.i += 2
                    continue
                literal.append(text[self.i + 1:self.i + 2])
                self.i = min(self.i + 2, end)
            elif ch == "'":
                close = text.find("'", self.i + 1, self.end)
                if close < 0:
                    raise ParseError("unterminated single quote", *self.position(start))
                literal.append(text[self.i + 1:close])
                self.i = close + 1
                first_string = self.i if first_string == -1 else first_string
            elif ch == '"':
                flush()
                self._double_quoted(parts)
                first_string = self.i if first_string == -1 else first_string
            elif ch == "$":
                flush()
                parts.append(self._dollar())
            elif ch == "`":
                flush()
                parts.append(self._backquoted())
            else:
                plain = _PLAIN.match(text, self.i, self.end)
                if _BRACE_EXPANSION.search(plain.group()):
                    flush()
                    parts.append(("unknown",))
                literal.append(plain.group())
                self.i = plain.end()
        flush()
        raw = text[start:self.i]
        word = _RawWord(parts, self.span(start, self.i), raw, offset=start, whole_string=first_string == self.i,
                        refs=tuple(self.refs))
        if not in_array and self.i < end and text[self.i] == "(" and raw.endswith("=") and _ASSIGNMENT.fullmatch(raw):
            word.assignment_array = self._array_elements()  # NAME=( a b c )
            word.raw, word.span = text[start:self.i], self.span(start, self.i)
        if not raw and word.assignment_array is None:
            return None
        self.words += 1
        if self.words > MAX_NODES:
            raise LimitExceeded(f"launch script has too many words (more than {MAX_NODES:,})", *self.position(start))
        return word

    def _array_elements(self) -> list:
        text, end = self.text, self.end
        self.i += 1  # (
        elements = []
        while self.i < end and text[self.i] != ")":
            ch = text[self.i]
            if ch in " \t\n" or text.startswith("\\\n", self.i, self.end):
                self.i = _BLANKS.match(text, self.i, self.end).end() if ch != "\n" else self.i + 1
            elif ch == "#":
                self.i = _COMMENT.match(text, self.i, self.end).end()
            else:
                element = self._word(in_array=True)  # arrays do not nest
                if element is None or not element.raw:
                    self.i += 1
                else:
                    elements.append(element)
        if self.i < end:
            self.i += 1  # )
        return elements

    def _double_quoted(self, parts: list) -> None:
        text, end = self.text, self.end
        self.i += 1  # "
        literal: list = []
        while self.i < end:
            plain = _QUOTED_PLAIN.match(text, self.i, self.end)
            if plain:
                literal.append(plain.group())
                self.i = plain.end()
                continue
            ch = text[self.i]
            if ch == '"':
                self.i += 1
                break
            if ch == "\\":
                following = text[self.i + 1:self.i + 2]
                if following in ("\n", ""):  # a continuation, or a backslash at the end of the file
                    self.i = min(self.i + 2, end)
                elif following and following in '"\\$`':
                    literal.append(following)
                    self.i += 2
                else:
                    literal.append("\\")
                    self.i += 1
                continue
            if literal:
                parts.append(("lit", "".join(literal)))
                literal = []
            parts.append(self._dollar(quoted=True) if ch == "$" else self._backquoted())
        if literal:
            parts.append(("lit", "".join(literal)))

    def _dollar(self, quoted: bool = False) -> tuple:
        text = self.text
        at = self.i
        self.i += 1  # $
        if text.startswith("((", self.i):
            body = self._balanced(_PAREN, "(")  # `(1 + 2)`: the arithmetic in its inner parentheses
            if body and body.startswith("(") and body.endswith(")"):
                self.refs.append(("arith", body[1:-1], at + 3))
                return ("arith", body[1:-1])
            return ("unknown",)
        if text.startswith("(", self.i):
            body = self._balanced(_PAREN, "(")
            expr = _EXPR.fullmatch(body or "")
            # `$(expr 16 / $N)`: expr's integer arithmetic, as $(( )) computes it; any other command is never run.
            if expr:
                return ("arith", expr.group(1).replace("\\*", "*").replace("'*'", "*"))
            cat = _CAT_HEREDOC.match(body or "")
            if cat:  # `$(cat <<EOF ... EOF)`: the body's text, expanded (an unquoted delimiter)
                return _cat_heredoc(body, cat, at + 2)
            return _own_folder(body)
        if text.startswith("{", self.i):
            body = self._balanced(_BRACE, "{")
            if body is None:
                return ("unknown",)
            part = _parameter(body) + (quoted,)
            assigning = _ASSIGNING.match(body)
            if assigning:
                self.refs.append(("set", assigning.group(1), at))
            elif part[0] == "var" and part[3] is None and _NAME.fullmatch(part[1]):
                self.refs.append(("var", part[1], at))
            return part
        match = _NAME.match(text, self.i, self.end)
        if match:
            self.i = match.end()
            self.refs.append(("var", match.group(), at))
            return ("var", match.group(), None, None, quoted)
        ch = text[self.i:self.i + 1]
        if ch and (ch.isdigit() or ch in "@#"):
            self.i += 1  # $1 and "$@": known when a caller's line gives them (read_shell's arguments)
            return ("array", "@") if ch == "@" else ("var", ch, None, None, quoted)
        if ch and ch in "*?$!-":
            self.i += 1
            return ("unknown",)
        return ("lit", "$")

    def _balanced(self, pattern, opener: str) -> Optional[str]:
        """The text inside the bracket at the current offset, up to the bracket
        that closes it (quotes inside are not looked at); None when the file ends first."""
        start = self.i + 1
        depth = 0
        for bracket in pattern.finditer(self.text, self.i, self.end):
            depth += 1 if bracket.group() == opener else -1
            if depth == 0:
                self.i = bracket.end()
                return self.text[start:bracket.start()]
        self.i = self.end
        return None

    def _backquoted(self) -> tuple:
        """`command`: never run, so unknown (but `dirname $0`: the script's folder)."""
        closing = _BACKQUOTED.match(self.text, self.i + 1, self.end)
        body = self.text[self.i + 1:closing.end() - 1] if closing else None
        self.i = closing.end() if closing else self.end
        return _own_folder(body)


# `$(dirname "$0")`, `$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" &> /dev/null && pwd -P)`,
# `$(dirname "$(realpath "$0")")`, `$(realpath "$(dirname "$0")")`: the folder of the script itself,
# which scripts use to name the files beside them. Nothing is run: the script's path is known here.
_SCRIPT_PATH = r"""["']?(?:\$0|\$\{0\}|\$\{BASH_SOURCE(?:\[0\])?\}|\$BASH_SOURCE)["']?"""
_RESOLVED = rf"""(?:{_SCRIPT_PATH}|["']?\$\(\s*(?:realpath|readlink\s+-[fem])\s+(?:--\s+)?{_SCRIPT_PATH}\s*\)["']?)"""
_DIRNAME = rf"""dirname\s+(?:--\s+)?{_RESOLVED}"""
_IN_DIRNAME = rf"""["']?\$\(\s*{_DIRNAME}\s*\)["']?"""
_OWN_FOLDER = LazyPattern(
    rf"""\s*(?:{_DIRNAME}|(?:realpath|readlink\s+-[fem])\s+(?:--\s+)?{_IN_DIRNAME}"""
    rf"""|cd\s+(?:-P\s+)?(?:--\s+)?{_IN_DIRNAME}\s*(?:(?:&>|>|2>|1>)\s*/dev/null\s*(?:2>&1\s*)?)?(?:&&|;)\s*pwd(?:\s+-[PL])?)\s*""")


# `$(cat <<EOF`, `$(cat << 'EOF'`, `$(cat <<-EOF`: a heredoc read back, to the end of the line.
_CAT_HEREDOC = LazyPattern(r"""\s*cat\s+<<(-?)[ \t]*(['"]?)([A-Za-z_][A-Za-z0-9_]*)\2[ \t]*\n""")


def _cat_heredoc(body: str, cat: re.Match, offset: int) -> tuple:
    """("heredoc", start, end) of the text of `$(cat <<EOF ...)` (offsets in the script: `offset` is the
    body's), or unknown for a quoted delimiter (the text is not expanded, then parsed as an `eval` does) or
    anything after the delimiter's line."""
    if cat.group(2):
        return ("unknown",)
    lines = body[cat.end():].split("\n")
    for number, line in enumerate(lines):
        if (line.lstrip("\t") if cat.group(1) else line) == cat.group(3):
            if any(rest.strip() for rest in lines[number + 1:]):
                return ("unknown",)
            start = offset + cat.end()
            return ("heredoc", start, start + sum(len(text) + 1 for text in lines[:number]))
    return ("unknown",)


# `$(dirname $EXAMPLE_PATH)`: the folder above a path a variable holds (a string operation, nothing run).
_DIRNAME_OF = LazyPattern(r"""\s*dirname\s+(?:--\s+)?(["']?)\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?\1\s*""")


# `scontrol show hostnames "$SLURM_JOB_NODELIST" | wc -l`: the job's nodes counted, as SLURM_NNODES holds them.
_NODE_COUNT = LazyPattern(
    r"""\s*scontrol\s+show\s+hostnames?\s+(["']?)\$\{?(?:SLURM_JOB_NODELIST|SLURM_NODELIST)\}?\1\s*\|\s*wc\s+-l\s*""")


# `$(pwd)`, `$(pwd -P)`: the folder the shell is in, which the script's `cd`s decide (nothing is run);
# _PWD_TEXT: where such a part is written in a string.
_PWD = LazyPattern(r"\s*pwd(?:\s+-[PL])?\s*")
_PWD_TEXT = LazyPattern(r"`\s*pwd[^`]*`|\$\(\s*pwd[^)]*\)")


def _own_folder(body: Optional[str]) -> tuple:
    """("folder", which) for a command substitution that names the script's own folder, ("dirname",
    variable) for the folder of a variable's path, ("pwd",) for the folder the shell is in, SLURM_NNODES
    for the job's nodes counted (never run: each is what the text says), else unknown."""
    if body is None or len(body) > 400:
        return ("unknown",)
    if _PWD.fullmatch(body):
        return ("pwd",)
    if _NODE_COUNT.fullmatch(body):
        return ("var", "SLURM_NNODES", None, None, False)
    if _OWN_FOLDER.fullmatch(body):
        return ("folder", "BASH_SOURCE" if "BASH_SOURCE" in body else "0")
    of = _DIRNAME_OF.fullmatch(body)
    return ("dirname", of.group(2)) if of else ("unknown",)


def _parameter(body: str) -> tuple:
    """${NAME}, ${NAME:-default}, ${NAME-default}, ${NAME:=default}, ${NAME[@]}."""
    match = _NAME.match(body) or _POSITIONAL.match(body)
    if not match:
        return ("unknown",)
    name, rest = match.group(), body[match.end():]
    if name == "@":
        return ("array", "@") if not rest else ("unknown",)
    if rest in ("[@]", "[*]"):
        return ("array", name)
    if not rest:
        return ("var", name, None, None)
    for op in (":-", ":=", "-", "="):
        if rest.startswith(op):
            default = rest[len(op):]
            if "$" in default or "`" in default:  # a default that itself expands: not followed
                return ("unknown",)
            return ("var", name, default.strip("\"'"), op)
    return ("unknown",)


# -- interpreting: raw words -> expanded commands, variable state -----------------

_SHELLS = LazyPattern(r"(.*/)?(ba|da|z)?sh")
_COMMAND_STRING = LazyPattern(r"-[a-z]*c[a-z]*")  # -c, -lc, -xc
_SOURCE = {"source", "."}
_POSITIONAL_NAMES = ("@", "#") + tuple(str(number) for number in range(1, 10))
MAX_SOURCE_DEPTH = 4  # files sourced within files sourced
_READ_VALUED = {"-a", "-d", "-i", "-n", "-N", "-p", "-t", "-u"}  # read's options that take a value


MAX_EVAL_DEPTH = 4  # texts parsed again (`eval "$CMD"` whose CMD runs `eval` ...) within one another
_EVALUATED = "\x00evaluated"  # the path of the places in a text parsed again, before they are mapped back


class _Placer:
    """Maps the places in a text parsed again (`_Interpreter._evaluated`) back to where its
    characters are written; a word holding a part not known (_NOT_KNOWN) becomes one not known."""

    def __init__(self, path: str, starts: list, sources: list, interpreter: _Interpreter, fallback: Span):
        self.path, self.starts, self.sources = path, starts, sources
        self.interpreter, self.fallback = interpreter, fallback

    def span(self, span: Span, whole: bool = False) -> Span:
        """Where the text at `span` is written: a word's as _origin places it; with `whole` (a command)
        from the first to the last of its characters written in the text itself."""
        if span.path != self.path:
            return span  # written elsewhere: a variable's value, a sourced file
        first = self.starts[span.line - 1] + span.column - 1
        last = self.starts[span.end_line - 1] + span.end_column - 1
        origin = [o for o in self.sources[first:max(last, first + 1)] if o is not None]
        if whole and any(isinstance(o, int) for o in origin):
            origin = [o for o in origin if isinstance(o, int)]
            origin = [origin[0], origin[-1]]
        return self.interpreter._origin(origin) if origin else self.fallback

    def word(self, word):
        if not isinstance(word, Word):
            return word
        value: object = word.value
        written: Optional[str] = word.written
        if word.known and isinstance(value, str) and _NOT_KNOWN in value:
            written = value
            value = UNKNOWN
        pieces = tuple(self.word(piece) for piece in word.pieces) if word.pieces is not None else None
        return replace(word, value=value, span=self.span(word.span), raw=word.raw.replace(_NOT_KNOWN, "$"),
                       value_span=self.span(word.value_span) if word.value_span is not None else None,
                       pieces=pieces, written=written, fallback=self.word(word.fallback))

    def command(self, command: Command) -> Command:
        return replace(command, words=[self.word(w) for w in command.words],
                       env={name: self.word(w) for name, w in command.env.items()},
                       span=self.span(command.span, whole=True))


class _Interpreter:
    def __init__(self, text: str, starts: list):
        self.text = text
        self.starts = starts
        self.variables: Store = Store()  # name -> Word | list[Word] (arrays)
        self.produced = 0  # characters all expansions made so far
        self.words = 0  # and words
        # name -> True: `export`ed, every later command gets it in its environment; False: exported in a
        # loop or function, or in a branch not known to run (in the environment or not).
        self.exports: Store = Store()
        self.path: Optional[str] = None  # the file being read, when it is one the script sources
        self.script: Optional[str] = None  # the script itself, as its path is shown ($0)
        self.sourcer: Optional[Callable] = None  # read_shell's
        self.sourcing: tuple = ()  # the keys of the files being sourced, outermost first
        self.output: list = []  # the script's commands, as run
        self.uncertain = 0  # inside loops and function bodies: what they set may or may not be so
        self.inner = 0  # inside a `bash -c` string or a sourced file: its `exit` is not the script's
        self.dead = False  # the script has exited here
        self.branches = 0  # branches run apart so far (MAX_SHELL_BRANCHES)
        self.outside_empty = False  # while a test is read as the caller leaving outside variables empty
        # Where commands run: (directory, pushd stack, subshells' saved places as (level, place)).
        self.directory: object = None
        self.pushed: tuple = ()
        self.subshells: tuple = ()
        self.placed = False  # the directory is the script's own folder or one from it (a path as shown)
        self.level = 0  # subshells around the file or string being read (its commands count from it)
        self.current = 0  # subshells around the command being run
        self.evaluating = 0  # texts parsed again (`eval`, `sh -c`) within one another
        # Where bash exits on a variable read before the script sets it (shellstop.py).
        self.maybe = 0  # inside a branch not known to run
        self.aside = 0  # in a pipeline or the background: a child process expands it
        self.nounset: Optional[Span] = None  # the `set -u` certainly in force
        self.unfollowed = False  # a file not read or a text not known (`eval "$X"`) may have set any variable
        self.also_set: set = set()  # names set in ways the variables do not follow (`read X`, `${X:=1}`)
        self.assigned: dict = {}  # the script's plain assignments (shellstop.plain_assignments)
        self.stops: list = []  # Stop, in order; after one that exits the script, no more

    # -- control flow --------------------------------------------------------------------

    def nodes(self, nodes: list) -> tuple:
        """Run nodes in order; (status, assumed) of the last: True/False when known, else None;
        assumed: known only by taking the caller to leave an outside variable empty."""
        status: tuple = (True, False)
        index = 0
        previous = ""
        while index < len(nodes) and not self.dead:
            chain = [nodes[index]]
            while nodes[index].joined in ("&&", "||") and index + 1 < len(nodes):
                index += 1
                chain.append(nodes[index])
            index += 1
            aside = previous in ("|", "|&") or chain[-1].joined in ("|", "|&", "&")  # run by a child process
            previous = chain[-1].joined
            self.aside += aside
            try:
                status = self._chain(chain)
            finally:
                self.aside -= aside
        return status

    def _chain(self, chain: list) -> tuple:
        """`a && b || c`: each after the first runs by the status before it (apart when not known)."""
        status, assumed = self._node(chain[0])
        for before, node in zip(chain, chain[1:]):
            if self.dead:
                break
            run = status if before.joined == "&&" else None if status is None else not status
            if run is not None and not assumed:
                if run:
                    status, assumed = self._node(node)
                continue
            ran = self._choose([((lambda run=run, assumed=assumed: (run, assumed)), [node])])
            if before.joined == "&&":
                status = False if ran is False else None
            else:
                status = True if ran is True else None
            # a status that rests on a decision taken only as the caller leaving a value empty stays assumed
            assumed = assumed and status is not None
        return status, assumed

    def _node(self, node) -> tuple:
        self._enter(node.raw.subshell if isinstance(node, Simple) else node.subshell)
        if isinstance(node, Simple):
            return self._simple(node.raw)
        if isinstance(node, If):
            clauses = [((lambda condition=condition: self.nodes(condition)), body) for condition, body in node.clauses]
            self._choose(clauses + [(None, node.otherwise or [])])
        elif isinstance(node, Case):
            self._case(node)
        elif isinstance(node, Loop):
            if node.variable is not None:
                self.variables[node.variable.raw] = Word(UNKNOWN, node.variable.span, node.variable.raw)
            if not node.condition:
                self._node(Group(node.body, True, subshell=node.subshell))
            else:  # a while/until loop whose first test fails runs nothing (`while [[ $# -gt 0 ]]` of no arguments)
                self._choose([((lambda: self._loop_test(node)), [Group(node.body, True, subshell=node.subshell)])])
        elif isinstance(node, Group):
            self.uncertain += node.function
            try:
                self.nodes(node.body)
            finally:
                self.uncertain -= node.function
        return None, False

    def _loop_test(self, node: Loop) -> tuple:
        """A while/until loop's first test: whether its body runs at all (then how often is not known:
        it runs as a function's body would)."""
        status, assumed = self.nodes(node.condition)
        return (status if status is None or not node.until else not status), assumed

    def _choose(self, alternatives: list) -> Optional[bool]:
        """Run the first alternative whose guard holds: [(guard, body)], a guard None for `else`. A guard
        runs its condition (commands of the script) and gives (status, assumed). An alternative not
        decided runs apart from the rest (a fork); the state after is what all that may have run leave.
        A decision that holds only if the caller leaves an outside variable empty is not taken as
        certain: the path it picks is preferred for what the other paths leave to the caller (as
        `${X:-8}` is 8). Returns the status of the last body run."""
        self.variables.begin()
        self.exports.begin()
        forks: list = []
        preferred: object = None  # the path the caller's empty variables pick: a fork's index, or "main"
        determined = True  # no test before it that nothing decides
        status = None
        for guard, body in alternatives:
            self.maybe += not determined  # a test after one not decided: it may not run
            try:
                decision, assumed = (True, False) if guard is None else guard()
            finally:
                self.maybe -= not determined
            if self.dead:
                break
            if decision is not None and not assumed:
                if decision:
                    status = self.nodes(body)[0]
                    preferred = "main" if determined and preferred is None else preferred
                    break
                continue
            forks.append(self._fork(body))
            status = forks[-1][4]
            if decision and determined and preferred is None:
                preferred = len(forks) - 1
            determined = determined and decision is not None
        else:
            preferred = "main" if determined and preferred is None else preferred
        self._merge(forks, preferred)
        return status

    def _case(self, node: Case) -> None:
        subject = self._joined(node.subject) if node.subject is not None else None
        falls = any(terminator in (";&", ";;&") for _, _, terminator in node.items)

        def guard(patterns):
            if subject is None or falls:
                return None, False
            found: Optional[bool] = False
            for pattern in patterns:
                matched: Optional[bool] = True if pattern.raw == "*" else self._matches(subject, pattern)
                if matched:
                    return True, False
                found = found if matched is False else None
            return found, False

        self._choose([((lambda patterns=patterns: guard(patterns)), body) for patterns, body, _ in node.items])

    def _fork(self, nodes: list) -> tuple:
        """Run nodes apart: (the variables and exports they leave changed since the statement began,
        place, exited, status); the state is put back as it was."""
        self.branches += 1
        if self.branches > MAX_SHELL_BRANCHES:
            raise LimitExceeded(f"launch script has more than {MAX_SHELL_BRANCHES:,} branches", 1, 1)
        so_far = {name: self.variables.get(name, ABSENT) for name in self.variables.logs[-1]}
        exported_so_far = {name: self.exports.get(name, ABSENT) for name in self.exports.logs[-1]}
        place, dead = self._place(), self.dead
        self.variables.begin()
        self.exports.begin()
        self.maybe += 1
        try:
            status = self.nodes(nodes)[0]
        finally:
            self.maybe -= 1
        changed = self.variables.end(undo=True)
        exported = self.exports.end(undo=True)
        outcome = (so_far | changed, exported_so_far | exported, self._place(), self.dead, status)
        self._restore(place)
        self.dead = dead
        return outcome

    def _merge(self, forks: list, preferred: object = None) -> None:
        """End a statement begun with begin(): each variable and export as all paths that did not
        exit leave it (the main path's as it stands; a fork's as it left it, else as at the start);
        a variable only the `preferred` path sets, the others leaving it to the caller, as it sets it."""
        alive = [fork for fork in forks if not fork[3]]
        main = not self.dead
        paths = [index for index, fork in enumerate(forks) if not fork[3]] + (["main"] if main else [])
        chosen = paths.index(preferred) if preferred in paths and len(paths) > 1 else None
        for store, index, merged in ((self.variables, 0, _merged_value), (self.exports, 1, _merged_export)):
            start = store.logs[-1]
            names = set(start).union(*(fork[index] for fork in alive))
            for name in sorted(names):
                before = start.get(name, store.get(name, ABSENT))
                values = [fork[index].get(name, before) for fork in alive]
                if main:
                    values.append(store.get(name, ABSENT))
                if not values:
                    continue
                value = merged(values)
                if index == 0 and chosen is not None:
                    value = _defaulted(values, chosen, value)
                if value is ABSENT:
                    store.pop(name, None)
                elif store.get(name, ABSENT) is not value:
                    store[name] = value
            store.end(undo=False)
        places = [fork[2] for fork in alive] + ([self._place()] if main else [])
        if places and any(place != places[0] for place in places):
            subshells = places[-1][2]
            if self.current and not (subshells and subshells[-1][0] == self.current):
                subshells += ((self.current, places[-1][:2] + places[-1][3:]),)  # put back when the subshell ends
            self._restore((UNKNOWN, (), subshells, False))
        elif places:
            self._restore(places[0])
        self.dead = not places

    # -- where commands run: cd, pushd, popd, subshells -----------------------------------------

    def _place(self) -> tuple:
        return self.directory, self.pushed, self.subshells, self.placed

    def _restore(self, place: tuple) -> None:
        self.directory, self.pushed, self.subshells, self.placed = place

    def _enter(self, subshell: int) -> None:
        """A command at `subshell` levels: the folder a subshell it is no longer in moved to is left."""
        level = self.level + subshell
        while self.subshells and self.subshells[-1][0] > level:
            self.directory, self.pushed, self.placed = self.subshells[-1][1]
            self.subshells = self.subshells[:-1]
        self.current = level

    def _move(self, words: list) -> None:
        """`cd DIR`, `pushd DIR`, `popd`: the folder later commands run in."""
        name = words[0].value
        if self.current and not (self.subshells and self.subshells[-1][0] == self.current):
            saved = (self.directory, self.pushed, self.placed)
            self.subshells += ((self.current, saved),)  # put back when the subshell ends
        arguments = _without_redirections(words[1:])
        pushed = self.pushed
        if name == "popd":
            (target, placed) = pushed[-1] if pushed and not arguments else (UNKNOWN, False)
            pushed = pushed[:-1]
        else:
            target, placed = self._target(arguments)
            if name == "pushd":
                pushed = pushed + ((self.directory, self.placed),)
        if self.uncertain and (target, placed) != (self.directory, self.placed):
            target, placed = UNKNOWN, False  # moved in a loop or function: where it stands afterwards is not known
        self.directory, self.pushed, self.placed = target, pushed, placed

    def _target(self, arguments: list) -> tuple:
        """(the folder `cd ARGUMENTS` moves to, whether it is the script's own folder or one from it)."""
        if len(arguments) != 1 or not arguments[0].known:
            return UNKNOWN, False
        target = str(arguments[0].value)
        if not target or target == "-" or target.startswith("~") or _NOT_KNOWN in target:
            return UNKNOWN, False  # the home folder, the one before, a text parsed again with a part not known
        if target.startswith("/") or self.directory is None or arguments[0].anchored:
            return posixpath.normpath(target), arguments[0].anchored and not target.startswith("/")
        if self.directory is UNKNOWN:
            return UNKNOWN, False
        return posixpath.normpath(posixpath.join(self.directory, target)), self.placed

    # -- tests ----------------------------------------------------------------------------

    def _status(self, words: list) -> tuple:
        """(status, assumed) of a command bash runs as a test; None when not known here."""
        negate = False
        while words and words[0].raw == "!":
            negate, words = not negate, words[1:]
        if not words:
            return None, False
        first = words[0].raw
        status, assumed = None, False
        if first == "[" and words[-1].raw == "]":
            status, assumed = self._bracket(words[1:-1])
        elif first == "test":
            status, assumed = self._bracket(words[1:])
        elif first == "[[" and words[-1].raw == "]]":
            status, assumed = _DoubleBracket(self, words[1:-1]).result()
        elif len(words) == 1 and first.startswith("((") and words[0].parts[0][0] == "arith":
            number = _arithmetic(words[0].parts[0][1], self.variables)
            status = None if number is None else number != 0
        elif first in ("true", ":"):
            status = True
        elif first == "false":
            status = False
        elif all(_ASSIGNMENT.match(w.raw) and not any(p[0] == "unknown" for p in w.parts) for w in words):
            status = True  # assignments alone succeed
        return (None if status is None else status != negate), assumed

    def _bracket(self, words: list) -> tuple:
        """`[ ARGS ]`, `test ARGS`: over known values; a test of whether an outside variable is empty
        (`[ -z "$X" ]`, `[ "$X" == "" ]`) as the caller leaving it empty."""
        arguments = self._arguments(words)
        if arguments is not None:
            # `[ -z "$OUT" ]` of a default the caller's arguments replace: not certain (a usage check).
            return test_result(arguments), _asks_empty(arguments) and self._reads_defaulted(words)
        self.outside_empty = True
        try:
            arguments = self._arguments(words)
        finally:
            self.outside_empty = False
        if arguments is None or not (_asks_empty(arguments) and sum("$" in w.raw or "`" in w.raw for w in words) <= 1
                                     or _only_argument_count(words)):
            return None, False
        return test_result(arguments), True

    def _reads_defaulted(self, words: list) -> bool:
        """Whether the words read a variable that holds the script's default in place of the caller's
        argument (Word.defaulted)."""
        return any(part[0] == "var" and getattr(self.variables.get(part[1]), "defaulted", False)
                   for word in words for part in word.parts)

    def _arguments(self, words: list) -> Optional[list]:
        values = [word for raw in words for word in self.expand(raw)]
        return [str(word.value) for word in values] if all(word.known for word in values) else None

    def _joined(self, raw: _RawWord, assume: bool = False) -> Word:
        """A word as `[[ ]]` and `case` expand it (no splitting); `assume`: outside variables empty."""
        self.outside_empty = assume
        try:
            return self.expand(raw, join=True)[0] if raw.parts else Word("", raw.span, raw.raw)
        finally:
            self.outside_empty = False

    def _matches(self, subject: Word, pattern: _RawWord) -> Optional[bool]:
        """Whether a known string matches a case or `[[ == ]]` pattern (quoted text is literal)."""
        value = self._joined(pattern)
        if not subject.known or not value.known:
            return None
        text, written = str(subject.value), str(value.value)
        if pattern.whole_string or not any(ch in written for ch in "*?["):
            return text == written
        if any(ch in pattern.raw for ch in "'\"\\"):
            return None  # part quoted, part a pattern: not followed
        return glob_match(text, written)

    # -- commands ----------------------------------------------------------------------------

    def _simple(self, raw: _Raw) -> tuple:
        """Run one command (its commands go to the output); its status as a test."""
        if not raw.words:
            return True, False
        self._watch(raw)
        if raw.words[0].raw in (":", "true"):
            self._assign_defaults(raw)
        status = self._status(raw.words)
        self.run_all(raw)
        if raw.words[0].raw == "exit" and not (self.uncertain or self.inner or self.current):
            self.dead = True  # the script ends here: nothing after it runs
        return status

    def _assign_defaults(self, raw: _Raw) -> None:
        """`: ${NGPUS:=8}` (and `: "${NGPUS=8}"`): the idiom that sets a variable the caller did not, as
        `NGPUS=${NGPUS:-8}` does (`=`: only when it is unset). Followed for the no-op commands the idiom
        uses, whose expansions run in this shell; a default that itself expands is not followed."""
        for word in raw.words[1:]:
            for part in word.parts:
                if part[0] == "var" and part[3] in (":=", "=") and part[2] is not None and _NAME.fullmatch(part[1]):
                    value, span = self._variable(part, word.span)
                    if value is not None:
                        self._set_all({part[1]: Word(value, span, word.raw)})

    # -- where bash stops: a variable read before the script sets it (shellstop.py) ------------

    def _watch(self, raw: _Raw) -> None:
        """Before a command runs: whether bash cannot expand it (a Stop; after one that exits the
        script, none is looked for), then what it sets that the variables do not follow, and `set -u`."""
        words = [w for word in raw.words for w in (word, *(word.assignment_array or ()))]
        if not (self.stops and self.stops[-1].exits) and self._certain() and not raw.words[0].raw.startswith("(("):
            stop = self._stop(words)
            if stop is not None:
                self.stops.append(replace(stop, command=raw.span, assigns=assigned_by(raw.words)))
        named = names_set(words)
        if named is None:
            self.unfollowed = True
        else:
            self.also_set |= named
        change = nounset_change([word.raw for word in raw.words])
        if change is False:
            self.nounset = None
        elif change and self._certain() and self.nounset is None:
            self.nounset = raw.span

    def _certain(self) -> bool:
        """Whether the command being run runs whenever the script gets to it, in the script's own
        shell: not in a function, loop, branch not decided, sourced file, string run again, pipeline,
        background job or subshell."""
        return not (self.uncertain or self.inner or self.evaluating or self.current or self.maybe or self.aside
                    or self.path is not None)

    def _stop(self, words: list) -> Optional[Stop]:
        """The first variable at which bash certainly stops expanding these words: an unset one a
        divisor of `$((...))` reads (as 0), or under `set -u` any unset `$x` or name in `$((...))`."""
        start, end = words[0].offset, words[-1].offset + len(words[-1].raw)
        if re.search(r"[<>]\(", self.text[start:end]):
            return None  # a process substitution `<(...)` runs in a child process
        here = {match.group(1) for word in words if (match := _ASSIGNMENT.match(word.raw))}
        for word in words:
            for kind, text, offset in word.refs:
                if kind == "var" and self.nounset is not None and text not in here:
                    stop = self._stopped(text, offset, offset, "", "unbound")
                    if stop is not None:
                        return stop
                if kind == "arith":
                    found = _unset_read(text, lambda name, at=offset: name not in here and self._later(name, at) is not None,
                                        self.variables, self.nounset is not None)
                    if found is not None:
                        return self._stopped(found[0], offset, offset + found[1], text, found[2])
        return None

    def _later(self, name: str, offset: int) -> Optional[_RawWord]:
        """The script's plain assignment of `name` after `offset` when nothing before has set it
        (nor may have) and the environment is not where it comes from; else None."""
        if name in self.variables or name in self.also_set or self.unfollowed or given(name):
            return None
        return next((word for at, word in self.assigned.get(name, ()) if at > offset), None)

    def _stopped(self, name: str, read: int, offset: int, expression: str, why: str) -> Optional[Stop]:
        """The Stop at the variable written at `offset` (in the word read at `read`), if the script sets it later."""
        assignment = self._later(name, read)
        if assignment is None:
            return None
        line, column = self._position(offset)
        return Stop(Span(line, column, line, column + len(name)), name, assignment.span, assignment.raw,
                    f"$(({expression}))" if expression else "", why, self.nounset)

    def run_all(self, raw: _Raw) -> None:
        """The command, then those of a `bash -c "..."` string among its words (`srun ... bash -c "cd x;
        torchrun ..."`), read where they stand in the string; heredoc bodies assigned by `read`."""
        raw_words = raw.words
        if raw_words and raw_words[0].raw == "read" and raw.heredocs:
            self._read_heredoc(raw_words, raw.heredocs[-1])
            return
        # `eval ...`, `time eval ...`: the words after eval are parsed again.
        at = next((i for i, w in enumerate(raw_words) if w.raw not in _LEADING_WORDS or w.raw == "eval"), 0)
        if at + 1 < len(raw_words) and raw_words[at].raw == "eval":
            if self._evaluated(raw_words[at + 1:], raw.span, keep=True):
                return
            if len(raw_words) == at + 2 and raw_words[at + 1].whole_string:
                self._string(raw_words[at + 1])  # `eval "$CMD"`: the string is read as commands
                return
        if len(raw_words) == 1 and raw_words[0].raw.startswith("((") and raw_words[0].parts[0][0] == "arith":
            return  # `(( N > 8 ))`: a test, no command
        command = self.run(raw_words, raw.span)
        if command is not None:
            self.output.append(command)
        for index, word in enumerate(raw_words[:-2]):
            if _SHELLS.fullmatch(word.raw) and _COMMAND_STRING.fullmatch(raw_words[index + 1].raw) \
                    and raw_words[index + 2].whole_string:
                if not self._evaluated(raw_words[index + 2:index + 3], raw.span, keep=False):
                    self._string(raw_words[index + 2])
                break

    def _evaluated(self, raw_words: list, span: Span, keep: bool) -> bool:
        """Run the text a shell parses again: `eval ARGS` (the arguments expanded, joined by spaces;
        `keep`: run in this shell, its assignments, exports, folder and exit stay) or `sh -c "STRING"`
        (STRING expanded, then run by a child shell with the exported variables only). As bash does it,
        quotes in a variable's value then count and `;`, `&&`, `|`, newlines, if/case in it are read,
        where running `$CMD` alone only splits it at blanks. Each command's words point where their text
        is written (the assignment holding it). False when the text has nothing known or is too deep in
        such texts (nothing was run)."""
        if self.evaluating >= MAX_EVAL_DEPTH or self.starts is None:
            return False
        chunks: list = []
        sources: list = []
        for word in raw_words:
            if chunks:
                chunks.append(" ")
                sources.append(None)
            part = word.parts[0] if len(word.parts) == 1 else None
            # An unquoted `$CMD` is split into words first (a newline in it is a blank); any other word is
            # one word, placed character by character where it can be.
            found = None if part is not None and part[0] == "var" and not part[-1] else \
                self._sources(word.parts, word.offset, word.offset + len(word.raw), word.span, whole=True)
            if found is None:
                expanded = [(w.value if w.known else _written(w), w.span) for w in self.expand(word)]
                found = (" ".join(piece for piece, _ in expanded),
                         [source for index, (piece, place) in enumerate(expanded)
                          for source in ([None] if index else []) + [place] * len(piece)])
            chunks.append(found[0])
            sources.extend(found[1])
        text = "".join(chunks)
        if not text.replace(_NOT_KNOWN, "").strip() or len(text) > MAX_LENGTH:
            return False
        self._produce(len(text), 0, span)
        path = f"{_EVALUATED}{self.evaluating + 1}"  # marks the places in the text, mapped back below
        lexer = _Lexer(text, path=path)
        try:
            nodes = parse(lexer.commands())
        except ParseError:  # an unterminated quote: the shell refuses the text and runs nothing
            return True
        saved = (self.text, self.starts, self.path, self.level, self.variables, self.exports)
        place, dead, start = self._place(), self.dead, len(self.output)
        if keep:
            self.variables.begin()
        else:  # a child shell: it sees the exported variables only (one exported in a branch: not known)
            self.variables = Store(self._environment())
            self.exports = Store(dict.fromkeys(self.variables, True))
            self.inner += 1
        self.level = self.current + (not keep)
        self.text, self.starts, self.path = text, lexer.line_starts, path
        self.evaluating += 1
        try:
            self.nodes(nodes)
        except LimitExceeded as error:  # reported at the command that parses the text again
            raise LimitExceeded(error.message, span.line, span.column) from None
        finally:
            self.text, self.starts, self.path, self.level, self.variables, self.exports = saved
            self.evaluating -= 1
            changed = self.variables.end(undo=False) if keep else {}
            if not keep:  # the child's assignments, exports, folder and exit do not come back
                self.inner -= 1
                self._restore(place)
                self.dead = dead
        placer = _Placer(path, lexer.line_starts, sources, self, span)
        for name, value in changed.items():
            if value is not ABSENT:
                self.variables[name] = [placer.word(w) for w in value] if isinstance(value, list) else placer.word(value)
        self.output[start:] = [placer.command(command) for command in self.output[start:]]
        return True

    def _string(self, string: _RawWord) -> None:
        """The commands of a quoted string run by a shell (`bash -c "..."`, `eval "..."`), lexed where
        they stand; the inner shell's assignments, exports and folder do not come back."""
        raws = self._lex(string.offset + 1, string.offset + len(string.raw) - 1, string.span)
        place, dead, level = self._place(), self.dead, self.level
        self.variables.begin()
        self.exports.begin()
        self.inner += 1
        self.level = self.current + 1
        try:
            self.nodes(parse(raws))
        finally:
            self.variables.end(undo=True)
            self.exports.end(undo=True)
            self.inner -= 1
            self._restore(place)
            self.dead, self.level = dead, level

    def _lex(self, start: int, end: int, span: Span) -> list:
        """The raw commands of text[start:end], lexed where they stand; none when it is not valid shell."""
        self._produce(end - start, 0, span)
        try:
            return _Lexer(self.text, start, end, self.starts, self.path).commands()
        except ParseError:
            return []

    def _heredoc_text(self, part: tuple, word: _RawWord) -> Word:
        """The text of `$(cat <<EOF ... EOF)`, its words each where the heredoc writes it (as `read` gives it)."""
        pieces = [piece for raw in self._lex(part[1], part[2], word.span) for raw_word in raw.words
                  for piece in self.expand(raw_word)]
        text = " ".join(str(w.value) for w in pieces if w.known)
        if pieces and all(w.known for w in pieces) and len(text) <= MAX_LENGTH:
            return Word(text, pieces[0].span, word.raw, pieces=tuple(pieces))
        return Word(UNKNOWN, word.span, word.raw)

    def _read_heredoc(self, raw_words: list, heredoc: tuple) -> None:
        """`read -r -d '' NAME <<EOF ... EOF`: NAME holds the body's words (read reads up to a NUL, so
        the whole body), each where it is written. Any other `read` leaves the variable unknown."""
        names, index = [], 1
        delimiter = None
        while index < len(raw_words):
            word = raw_words[index].raw
            if word in _READ_VALUED:
                if word == "-d" and index + 1 < len(raw_words):
                    delimiter = raw_words[index + 1].raw
                index += 2
                continue
            if not word.startswith("-"):
                names.append(raw_words[index])
            index += 1
        if not names:
            return
        start, end, quoted = heredoc
        name = names[-1]
        value = Word(UNKNOWN, name.span, name.raw)
        if len(names) == 1 and delimiter in ("''", '""') and end >= 0 and not quoted:
            pieces = []
            for raw in self._lex(start, end, name.span):
                for word in raw.words:
                    pieces.extend(self.expand(word))
            text = " ".join(str(w.value) for w in pieces if w.known)
            if pieces and all(w.known for w in pieces) and len(text) <= MAX_LENGTH:
                value = Word(text, pieces[0].span, name.raw, pieces=tuple(pieces))
        self._set_all({n.raw: Word(UNKNOWN, n.span, n.raw) for n in names[:-1]} | {name.raw: value})

    def run(self, raw_words: list, span: Span) -> Optional[Command]:
        index = 0
        while index < len(raw_words) and raw_words[index].raw in _LEADING_WORDS:
            index += 1
        env: dict = {}
        arrays: dict = {}  # name -> the word of an array assignment among the prefixes
        while index < len(raw_words):
            word = raw_words[index]
            if word.raw.startswith(("'", '"')):
                break
            indexed = _INDEXED_ASSIGNMENT.match(word.raw)
            match = _ASSIGNMENT.match(word.raw)
            if indexed:  # a[1]=x: the array changes in a way not followed
                env[indexed.group(1)] = Word(UNKNOWN, word.span, word.raw)
            elif match:
                env[match.group(1)] = self._assigned(word, match)
                if word.assignment_array is not None:
                    arrays[match.group(1)] = word
            else:
                break
            index += 1
        if env:  # `NPROC_PER_NODE=8 nohup swift sft ...`: the environment passes through the command it runs
            while index < len(raw_words) and raw_words[index].raw in _PASSING:
                index += 1
        words = raw_words[index:]
        if not words:
            self._set_all(env)  # a plain assignment
            return None
        if words[0].raw in _DECLARATIONS:
            self._declare(words[1:], exporting=words[0].raw == "export")
            return None
        if words[0].raw in _SOURCE and len(words) > 1 and self.sourcer is not None:
            if not self._source(self.sourcer, words[1:], span):
                self.unfollowed = True  # a file not read may set any variable
            return None
        if words[0].raw in _SOURCE:
            self.unfollowed = True
        # `arr=(a b) cmd`: an array cannot be passed in the environment (bash refuses it).
        for name, word in arrays.items():
            env[name] = Word(UNKNOWN, word.span, word.raw)
        env = self._environment() | env
        expanded: list = []
        for word in words:
            expanded.extend(self.expand(word))
        anchored = frozenset(value for w in expanded if w.anchored and w.known
                             for value in (str(w.value), str(w.value).partition("=")[2]) if value)
        command = Command(expanded, env, span, self.directory, anchored, self.placed)
        if expanded and expanded[0].known and expanded[0].value in ("cd", "pushd", "popd"):
            self._move(expanded)
        return command

    def _declare(self, words: list, exporting: bool = False) -> None:
        """`export A=1`, `declare -a A=(1 2)`; an integer, associative or name-reference
        declaration (`-i`, `-A`, `-n`) gives values not followed. `export A`, `declare -x A=1`:
        A is in the environment of the commands after it (`export -n A` takes it out)."""
        flags = "".join(word.raw for word in words if _DECLARE_FLAGS.fullmatch(word.raw))
        followed = not set(flags) & set("Ain")
        exporting = (exporting or "-" in flags and "x" in flags) and "n" not in flags and "+" not in flags
        for word in words:
            match = _ASSIGNMENT.match(word.raw)
            if match:
                value = self._assigned(word, match) if followed else Word(UNKNOWN, word.span, word.raw)
                self._set_all({match.group(1): value})
            name = match.group(1) if match else word.raw if _NAME.fullmatch(word.raw) else None
            if exporting and name and not self.exports.get(name):
                self.exports[name] = not self.uncertain

    def _source(self, sourcer: Callable, words: list, span: Span) -> bool:
        """`source FILE [ARGS]`, `. FILE`: the file's commands run in this shell (variables, exports,
        heredoc reads), with ARGS as its positional parameters while it runs. At most
        MAX_SOURCE_DEPTH files deep, none twice in a chain; a file not read or not valid shell is skipped
        (False)."""
        expanded = [piece for word in words for piece in self.expand(word)]
        if not expanded[0].known or len(self.sourcing) >= MAX_SOURCE_DEPTH:
            return False
        named = expanded[0]
        path = in_directory(self.directory, str(named.value), frozenset({str(named.value)} if named.anchored else ()),
                            self.placed)
        if path is None:
            return False  # after a `cd` to a folder not known
        found = sourcer(named if path == named.value else Word(path, named.span, named.raw))
        if found is None or found[0] in self.sourcing:
            return False
        key, path, text = found
        text = text.replace("\r\n", "\n")
        self._produce(len(text), 0, span)
        lexer = _Lexer(text, path=path)
        try:
            raw_commands = lexer.commands()
            nodes = parse(raw_commands)
        except ParseError:  # LimitExceeded too: the file is reported when it is linted itself
            return False
        saved = (self.text, self.starts, self.path, self.output, self.level, self.dead)
        positional = {name: self.variables.get(name) for name in _POSITIONAL_NAMES} if len(expanded) > 1 else {}
        if positional:
            for name in _POSITIONAL_NAMES:
                self.variables.pop(name, None)
            _set_arguments(self.variables, expanded[1:], span)
        self.text, self.starts, self.path = text, lexer.line_starts, path
        self.output, self.level = [], self.current  # its own commands are not the script's launch lines
        self.sourcing += (key,)
        self.inner += 1
        try:
            self.nodes(nodes)
        finally:
            self.text, self.starts, self.path, self.output, self.level, self.dead = saved
            self.sourcing = self.sourcing[:-1]
            self.inner -= 1
            for name, value in positional.items():
                if value is None:
                    self.variables.pop(name, None)
                else:
                    self.variables[name] = value
        return True

    def _environment(self) -> dict:
        """The exported variables a command runs with (one exported in a branch: unknown)."""
        env = {}
        for name in sorted(self.exports):
            value = self.variables.get(name)
            if isinstance(value, Word):
                env[name] = value if self.exports[name] else Word(UNKNOWN, value.span, value.raw)
        return env

    def _set_all(self, assignments: dict) -> None:
        for name, value in assignments.items():
            if self.uncertain and not _same(self.variables.get(name), value):
                # Set inside a loop or function: whether it ran, and how often, is not known.
                outside = isinstance(value, Word) and value.outside  # `N="$2"` in an argument loop: the caller's
                value = Word(UNKNOWN, value.span if isinstance(value, Word) else value[0].span if value else Span(1, 1, 1, 1),
                             outside=outside, fallback=value.fallback if isinstance(value, Word) else None)
            self.variables[name] = value

    def _assigned(self, word: _RawWord, match):
        name, append = match.group(1), match.group(2) == "+"
        if word.assignment_array is not None:
            values = []
            for element in word.assignment_array:
                values.extend(self.expand(element))
            before = self.variables.get(name)
            if append and isinstance(before, list):
                if len(before) + len(values) > MAX_LENGTH:
                    return Word(UNKNOWN, word.span, word.raw)
                values = before + values
            return values
        prefix = len(match.group())
        value_word = _RawWord(_strip_prefix(word.parts, prefix), word.span, word.raw[prefix:])
        value_span = word.span._replace(column=word.span.column + prefix)
        [expanded] = self.expand(value_word, join=True) or [Word("", value_span, "")]
        if expanded.span == word.span:
            expanded.span = value_span
        if expanded.truncation is not None and not expanded.truncation.name:
            expanded.truncation = replace(expanded.truncation, name=name)  # `GRADIENT_ACC=$((...))`
        parts = value_word.parts
        if not expanded.known and len(parts) == 1 and parts[0][0] == "var" and parts[0][2] is None:
            read = self.variables.get(parts[0][1])
            expanded.outside = read is None or isinstance(read, Word) and read.outside  # `OUTPUT=$1`
        if append:
            before = self.variables.get(name)
            if isinstance(before, Word) and before.known and expanded.known \
                    and len(before.value) + len(expanded.value) <= MAX_LENGTH:
                self._produce(len(before.value) + len(expanded.value), 1, value_span)
                added = self._placed(value_word.parts, expanded.value, word.offset + prefix,
                                     word.offset + len(word.raw), value_span)
                expanded = Word(before.value + expanded.value, value_span, word.raw,
                                pieces=_appended(before, expanded, added))
            else:
                expanded = Word(UNKNOWN, value_span, word.raw)
        elif expanded.pieces is None:  # a value not known still has the words it was written with (`ARGS="--mbs 4 --data $1"`)
            expanded.pieces = self._placed(value_word.parts, expanded.value if expanded.known else None,
                                           word.offset + prefix, word.offset + len(word.raw), value_span)
        return expanded

    def _placed(self, parts: list, value: Optional[str], start: int, end: int, fallback: Span) -> Optional[tuple]:
        """The words `value` splits into, each a Word at its place: a word written in text[start:end]
        points there (`GPT_ARGS="--micro-batch-size 4 ..."`), one a variable gave points at that
        variable's value (`--micro-batch-size ${MBZ}` -> `MBZ=1`); None for a single word, or when
        the parts cannot be placed (then the whole assignment is the place). `value` None: some
        variable is not known; each word it touches is one word not known (`--data-path $1`: the
        usual place of such a variable), the others as written."""
        if self.starts is None or (value is not None and len(value.split(None, 1)) < 2):
            return None
        found = self._sources(parts, start, end, fallback)
        if found is None:
            return None
        text, sources = found
        if value is None:
            if _NOT_KNOWN not in text:
                return None
            value = text
        if len(value.split(None, 1)) < 2 or len(sources) != len(value):
            return None
        placed = []
        cuts = self._cuts(parts)
        for run in re.finditer(r"\S+", value):
            span = self._origin(sources[run.start():run.end()])
            text = run.group()
            placed.append(Word(UNKNOWN, span, text.replace(_NOT_KNOWN, "$"), written=text) if _NOT_KNOWN in text
                          else Word(text, span, text, truncation=cuts.get((span, text))))
        if not any(w.known for w in placed):
            return None  # nothing known to keep: the value is one word not known
        return tuple(placed)

    def _cuts(self, parts: list) -> dict:
        """{(place, value): Truncation} of the variables `parts` read whose value a division dropped a
        remainder from: a word of a string placed there with that value is it (`ARGS="--ga $GA"`)."""
        read = (self.variables.get(part[1]) for part in parts if part[0] == "var")
        return {(word.span, word.value): word.truncation for word in read
                if isinstance(word, Word) and word.truncation is not None and word.known}

    def _sources(self, parts: list, start: int, end: int, fallback: Span, whole: bool = False) -> Optional[tuple]:
        """(text, sources): what `parts`, written in self.text[start:end], expand to (a variable not
        known: _NOT_KNOWN), and per character of it where it is written: an offset in the text, a Span
        (a variable's value, or the place of each of its placed words), or None (a blank). Parts other
        than text and variables: None, or with `whole` each one's expansion at the word's place."""
        chunks: list = []
        sources: list = []
        position = start
        for part in parts:
            if part[0] == "lit":
                for run in re.finditer(r"\S+|\s+", part[1]):
                    chunk = run.group()
                    chunks.append(chunk)
                    if chunk.isspace():
                        sources.extend([None] * len(chunk))
                        continue
                    at = self.text.find(chunk, position, end)  # written as is: escapes and `\`+newline are between words
                    if at >= 0:
                        sources.extend(range(at, at + len(chunk)))
                        position = at + len(chunk)
                        continue
                    for character in chunk:  # an escape inside the word (`\"`): each character where it is written
                        at = self.text.find(character, position, end)
                        if at < 0:
                            return None
                        sources.append(at)
                        position = at + 1
            elif part[0] == "var":
                piece, where = self._spliced(part, fallback)
                if piece is None:
                    piece = _NOT_KNOWN
                read = self.variables.get(part[1])
                runs = list(re.finditer(r"\S+", piece))
                if isinstance(read, Word) and read.pieces is not None and len(runs) == len(read.pieces):
                    spans: list = [None] * len(piece)  # a variable of placed words: each keeps its place
                    for run, placed_word in zip(runs, read.pieces):
                        spans[run.start():run.end()] = [placed_word.span] * (run.end() - run.start())
                    sources.extend(spans)
                else:
                    sources.extend([where or fallback] * len(piece))
                chunks.append(piece)
                reference = _REFERENCE.search(self.text, position, end)  # `${MBZ}` / `$MBZ`: past it
                position = reference.end() if reference else position
            elif part[0] == "pwd":  # `$(pwd)/train.py` in a command string: the folder, where it is written
                piece = self._pwd()
                chunks.append(piece)
                found = _PWD_TEXT.search(self.text, position, end)
                sources.extend([found.start() if found else fallback] * len(piece))
                position = found.end() if found else position
            elif whole:  # `$(...)`, `$((...))`, `$*`: its value, or one word not known, at its `$`
                [expanded] = self.expand(_RawWord([part], fallback, ""), join=True)
                piece = expanded.value if expanded.known else _NOT_KNOWN
                chunks.append(piece)
                reference = _REFERENCE.search(self.text, position, end)
                sources.extend([reference.start() if reference else fallback] * len(piece))
                position = reference.end() if reference else position
            else:
                return None
        return "".join(chunks), sources

    def _origin(self, sources: list) -> Span:
        """The place of a word from the sources of its characters (_sources): the first Span among
        them, else the text from its first character to its last."""
        spans = [o for o in sources if isinstance(o, Span)]
        if spans:
            return spans[0]
        offsets = [o for o in sources if o is not None]
        return Span(*self._position(offsets[0]), *self._position(offsets[-1] + 1), self.path)

    def _spliced(self, part: tuple, fallback: Span):
        """A variable's text inside a string being split: its value, or for a string of words some not
        known (`$ACTOR_FSDP_CONFIG` inside `ACTOR_CONFIG="..."`) its words, each not known one marked."""
        piece, where = self._variable(part, fallback)
        read = self.variables.get(part[1])
        if piece is None and isinstance(read, Word) and read.pieces is not None:
            piece = " ".join(w.value if w.known else _written(w) for w in read.pieces)
        return piece, where

    def _position(self, offset: int) -> tuple[int, int]:
        index = bisect.bisect_right(self.starts, offset) - 1
        return index + 1, offset - self.starts[index] + 1

    def _produce(self, characters: int, words: int, span: Span) -> None:
        """Count what an expansion makes, before it is made: its characters and
        its words (each a node of the document)."""
        self.produced += characters
        self.words += words
        if self.produced > MAX_SHELL_OUTPUT:
            raise LimitExceeded(f"launch script expands to more than {MAX_SHELL_OUTPUT:,} characters",
                                span.line, span.column)
        if self.words > MAX_NODES:
            raise LimitExceeded(f"launch script expands to more than {MAX_NODES:,} words", span.line, span.column)

    def expand(self, word: _RawWord, join: bool = False) -> list:
        """A raw word's expansions: several words for `${array[@]}`, one otherwise."""
        if len(word.parts) == 1 and word.parts[0][0] == "array" and not join:
            value = self.variables.get(word.parts[0][1])
            if isinstance(value, list):
                self._produce(sum(len(w.value) for w in value if w.known), len(value), word.span)
                return list(value)
            return [Word(UNKNOWN, word.span, word.raw)]
        if len(word.parts) == 1 and word.parts[0][0] == "heredoc":
            return [self._heredoc_text(word.parts[0], word)]
        if len(word.parts) == 1 and word.parts[0][0] == "var" and not word.parts[0][-1] and not join:
            # An unquoted $VAR is split into words, as bash does: GPT_ARGS="--a 1 --b 2".
            read = self.variables.get(word.parts[0][1])
            if isinstance(read, Word) and read.pieces is not None:
                self._produce(sum(len(w.value) for w in read.pieces if w.known), len(read.pieces), word.span)
                return list(read.pieces)
            value, where = self._variable(word.parts[0], word.span)
            if value is not None and not value.split():
                return []  # `$SRUN_ARGS` set to "": an unquoted empty expansion is no word at all
            if value is not None and len(value.split(None, 1)) > 1:
                pieces = value.split()
                self._produce(len(value), len(pieces), word.span)
                return [_checked(Word(piece, where or word.span, word.raw)) for piece in pieces]
        pieces = []
        length = 0
        origin = tail = cut = None
        for part in word.parts:
            kind = part[0]
            if kind == "lit":
                piece = part[1]
            elif kind == "var":
                piece, where = self._variable(part, word.span)
                if piece is None and part[1] == "PWD" and "PWD" not in self.variables:
                    piece, where = self._pwd(), None
                held = getattr(self.variables.get(part[1]), "working", None)
                if piece is None or held is not None and held != (self.directory,):
                    return [Word(UNKNOWN, word.span, word.raw)]  # `D=$(pwd); cd x; cmd $D`: from a folder left
                if len(word.parts) == 1:
                    origin = where
                tail = where
                cut = self._carried(part, piece)
            elif kind == "folder":
                # $0 is the script run; BASH_SOURCE the file being read (a sourced one has its own folder).
                script = self.path if part[1] == "BASH_SOURCE" and self.path else self.script
                piece = (os.path.dirname(script) or ".") if script else None
                if piece is None:
                    return [Word(UNKNOWN, word.span, word.raw)]
            elif kind == "pwd":
                piece = self._pwd()
            elif kind == "dirname":
                value = self.variables.get(part[1])
                if not (isinstance(value, Word) and value.known and isinstance(value.value, str) and value.value):
                    return [Word(UNKNOWN, word.span, word.raw)]
                piece = os.path.dirname(value.value.rstrip("/")) or "."
            elif kind == "arith":
                number = _arithmetic(part[1], self.variables)
                if number is None:
                    return [Word(UNKNOWN, word.span, word.raw)]
                piece = str(number)
                cut = truncation(part[1], self.variables) if len(word.parts) == 1 else cut
            else:
                return [Word(UNKNOWN, word.span, word.raw)]
            length += len(piece)
            if length > MAX_LENGTH:  # before joining: `a=$a$a` forty times would be gigabytes
                return [Word(UNKNOWN, word.span, word.raw)]
            pieces.append(piece)
        self._produce(length, 1, word.span)
        text = "".join(pieces)
        last = word.parts[-1] if word.parts else None
        trailing = tail if last is not None and last[0] == "var" and "=" in text else None
        first: tuple = word.parts[0] if word.parts else ("lit",)
        anchored = first[0] in ("folder", "dirname") or first[0] == "var" and getattr(
            self.variables.get(first[1]), "anchored", False)
        # The path (or the value of `--key=PATH`) starts with the folder the shell is in.
        at = next((i for i, part in enumerate(word.parts) if self._working(part)), None)
        working = (self.directory,) if at is not None and not pieces[at].startswith("/") and (
            not at or "".join(pieces[:at]).endswith("=")) else None
        # The value, or for `key=$VAR` the text after `=`, is exactly what the division computed.
        whole = len(word.parts) == 1 or trailing is not None and text.endswith("=" + pieces[-1])
        return [_checked(Word(text, origin or word.span, word.raw, value_span=trailing, anchored=anchored,
                              truncation=cut if whole else None, working=working))]

    def _working(self, part: tuple) -> bool:
        """Whether a part expands to the folder the shell is in, or a path from it."""
        if part[0] == "pwd":
            return True
        if part[0] != "var":
            return False
        value = self.variables.get(part[1])
        return getattr(value, "working", None) is not None or part[1] == "PWD" and value is None

    def _pwd(self) -> str:
        """The folder the shell is in (`$(pwd)`, `$PWD`): the one an absolute `cd` moved to, else `.`, a
        path relative to where the command runs, which a `cd` before it moves as any other."""
        directory = self.directory
        return directory if isinstance(directory, str) and directory.startswith("/") else "."

    def _carried(self, part: tuple, piece: str) -> Optional[Truncation]:
        """The truncation of the variable `part` reads, when its value is the text read (not a default)."""
        read = self.variables.get(part[1])
        return read.truncation if isinstance(read, Word) and read.known and read.value == piece else None

    def _variable(self, part: tuple, span: Span):
        _, name, default, op = part[:4]
        value = self.variables.get(name)
        if isinstance(value, list):
            value = value[0] if value else None
        if value is not None and value.known and not (op in (":-", ":=") and value.value == ""):
            return value.value, value.span
        if value is not None and not value.known:
            return ("", span) if self.outside_empty and value.outside else (None, None)
        if default is not None:
            return default, span
        if self.outside_empty and name == "#":
            return "0", span  # no arguments given
        return ("", span) if self.outside_empty else (None, None)  # from the environment: not known here


# Stands for a variable's value not known while a string is split into words.
_NOT_KNOWN = "\x00"
# The `key=` a word not known starts with as written (`trainer.nnodes=$NNODES`, `--master_port=${PORT}`).
WRITTEN_KEY = LazyPattern(r"(--|[+~])?[A-Za-z_][\w.\-]*=")

_REFERENCE = LazyPattern(r"\$(\{[^}]*\}|[A-Za-z_][A-Za-z_0-9]*|.)")


def _written(word: Word) -> str:
    """A word not known as a text parsed again reads it: as a string split into words wrote it, else
    its written `key=`, if any, then _NOT_KNOWN (`--master_port=${PORT}` stays an option)."""
    if word.written is not None:
        return word.written
    key = WRITTEN_KEY.match(word.raw.strip("'\""))
    return (key.group() if key else "") + _NOT_KNOWN


def _checked(word: Word) -> Word:
    """A word holding a number too long to keep is unknown (a reader of the
    launch line would call int() on it)."""
    if word.known and _LONG_NUMBER.search(word.value):
        return Word(UNKNOWN, word.span, word.raw, word.value_span)
    return word


# `expr A OP B ...` with numbers, variables and + - * / % (`*` escaped or quoted, as a shell needs it).
_EXPR = LazyPattern(r"\s*expr((?:\s+(?:[0-9]+|\$[A-Za-z_][A-Za-z0-9_]*|\$\{[A-Za-z_][A-Za-z0-9_]*\}|[-+/%]|\\\*|'\*'))+)\s*")

# -- a Slurm batch script's header: the environment Slurm gives the job -----------------

_SBATCH = LazyPattern(r"#SBATCH[ \t]+(--[a-z-]+|-[a-zA-Z])(?:[= \t]*([^\s#]+))?")
# sbatch(1) options -> the variables Slurm sets from them (sbatch(1), "OUTPUT ENVIRONMENT VARIABLES").
_SBATCH_VARIABLES = {
    "--nodes": ("SLURM_NNODES", "SLURM_JOB_NUM_NODES"), "-N": ("SLURM_NNODES", "SLURM_JOB_NUM_NODES"),
    "--ntasks": ("SLURM_NTASKS", "SLURM_NPROCS"), "-n": ("SLURM_NTASKS", "SLURM_NPROCS"),
    "--ntasks-per-node": ("SLURM_NTASKS_PER_NODE",),
    "--gpus-per-node": ("SLURM_GPUS_PER_NODE", "SLURM_GPUS_ON_NODE"),
    "--gpus": ("SLURM_GPUS",), "-G": ("SLURM_GPUS",), "--gpus-per-task": ("SLURM_GPUS_PER_TASK",),
    "--gres": ("SLURM_GPUS_ON_NODE",),
}


def _sbatch_environment(text: str) -> dict:
    """`#SBATCH --nodes=4` and the like, read as sbatch does (the header, up to the first
    command): the Slurm variables they set, each a Word at the directive's value. A count that
    is no plain number (`--nodes=2-4`, `--nodes=$N`) sets nothing."""
    found: dict = {}
    for number, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            break  # sbatch stops reading directives at the first command
        match = _SBATCH.match(stripped)
        if not match or match.group(1) not in _SBATCH_VARIABLES or not match.group(2):
            continue
        option, value = match.groups()
        count = value.rsplit(":", 1)[-1]  # gpu:a100:8, a100:8
        if option == "--gres" and not value.startswith("gpu"):
            continue
        if not count.isascii() or not count.isdigit() or len(count) > 6:
            continue
        column = line.index(value) + len(value) - len(count) + 1
        word = Word(str(int(count)), Span(number, column, number, column + len(count)), count)
        for name in _SBATCH_VARIABLES[option]:
            found[name] = word
    nodes, per_node = found.get("SLURM_NNODES"), found.get("SLURM_NTASKS_PER_NODE")
    if "SLURM_NTASKS" not in found and nodes is not None and per_node is not None:
        total = str(int(nodes.value) * int(per_node.value))
        found["SLURM_NTASKS"] = found["SLURM_NPROCS"] = Word(total, per_node.span, per_node.raw)
    return found


# -- arithmetic: $(( ... )) as bash computes it, without recursion ------------------

# A number, ${name}, $name or name, an operator, or anything else (which makes the expression unknown).
_ARITH_TOKEN = LazyPattern(
    r"([0-9][0-9A-Za-z_#@]*)|\$\{([A-Za-z_]\w*)\}|\$?([A-Za-z_]\w*)"
    r"|(\*\*|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%()<>!~&|^])|(\S)"
)
# Binary operators by precedence, as in bash's manual; unary ones bind tighter still.
_BINARY = {"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "<": 7, "<=": 7, ">": 7, ">=": 7,
           "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10, "**": 11}
_UNARY = {"-": "neg", "+": "pos", "!": "not", "~": "inv"}
_UNARY_NAMES = set(_UNARY.values())
_UNARY_PRECEDENCE = 12
_INT64 = 1 << 63


def _arithmetic(expr: str, variables: dict) -> Optional[int]:
    """$(( ... )) over integers and known variables, or None: bash's 64-bit
    integers (a result outside them is not followed rather than wrapped),
    division towards zero, no assignments, no `?:`."""
    if "++" in expr or "--" in expr:  # increments change variables
        return None
    program = _postfix(expr, variables)
    return _run(program) if program else None


@lean_dataclass(frozen=True)
class Truncation:
    """A `$(( ... ))` whose division dropped a remainder: bash divides towards zero and says nothing
    (`$((128 / 4 / 24))` is 1, not 1.33)."""

    written: str  # the expression as written: `BATCH_SIZE / PER_DEVICE_BATCH_SIZE / GPUS`
    shown: str  # with the numbers it read: `128 / 4 / 24`
    value: int  # what bash computes
    exact: tuple  # (numerator, denominator) of its value without truncation, in lowest terms
    steps: tuple  # (dividend, divisor, quotient, remainder) of each division that dropped one, in bash's order
    # `A / B / C`: ((A as written, its value), ((B, value), (C, value))): a dividend and its divisors.
    chain: tuple = ()
    name: str = ""  # the variable it is assigned to, if any


_MAX_TRACED = 64  # operands and operators of an expression followed (its exact value is a fraction)
# The operations a truncation is followed through, over exact values (numerator, denominator).
_RATIONAL = {
    "+": lambda a, b: (a[0] * b[1] + b[0] * a[1], a[1] * b[1]),
    "-": lambda a, b: (a[0] * b[1] - b[0] * a[1], a[1] * b[1]),
    "*": lambda a, b: (a[0] * b[0], a[1] * b[1]),
    "/": lambda a, b: (a[0] * b[1], a[1] * b[0]),
}


def truncation(expr: str, variables: dict) -> Optional[Truncation]:
    """The divisions of $(( expr )) that drop a remainder, as bash evaluates it, when every operand
    is known and at least 0 and every divisor positive; None when none does. A division whose dividend
    adds or subtracts (`(A + B - 1) / B`, the ceiling idiom) rounds on purpose: not followed."""
    program = _postfix(expr, variables) if "/" in expr else None
    if not program or len(program) > _MAX_TRACED \
            or any(type(i) is not int and i not in _RATIONAL and i != "pos" for i in program):
        return None
    stack: list = []  # (bash's value, the exact value, whether + or - made it)
    steps = []
    for item in program:
        if type(item) is int:
            stack.append((item, (item, 1), False))
        elif item == "pos":
            continue
        else:
            (b, exact_b, additive_b), (a, exact_a, additive_a) = stack.pop(), stack.pop()
            if item == "/" and (a < 0 or b <= 0 or exact_b[0] <= 0 or a % b and additive_a):
                return None
            if item == "/" and a % b:
                steps.append((a, b, a // b, a % b))
            numerator, denominator = _RATIONAL[item](exact_a, exact_b)
            common = math.gcd(numerator, denominator)
            stack.append((a // b if item == "/" else _SIMPLE[item](a, b), (numerator // common, denominator // common),
                          additive_a or additive_b or item in "+-"))
    if not steps or len(stack) != 1:
        return None
    tokens = _ARITH_TOKEN.findall(expr)
    operands = [(t[0] or t[1] or t[2], _literal(t[0]) if t[0] else _variable_number(variables.get(t[1] or t[2])))
                for t in tokens if not t[3]]
    numbers = iter(operands)
    shown = " ".join(t[3] or str(next(numbers)[1]) for t in tokens)
    chain = (operands[0], tuple(operands[1:])) if [t[3] for t in tokens[1::2]] == ["/"] * (len(tokens) // 2) \
        and not any(t[3] for t in tokens[::2]) else ()
    return Truncation(" ".join(expr.split()), shown, stack[0][0], stack[0][1], tuple(steps), chain)


def _postfix(expr: str, variables: dict, operand_of: Optional[Callable] = None) -> Optional[list]:
    """The expression in postfix order (shunting-yard): numbers and operator names. `operand_of`
    (a token's match -> an operand, or None) replaces the value of each number and variable."""
    output: list = []
    pending: list = []
    operand = False  # whether the last token was an operand (then an operator is binary)
    for token in _ARITH_TOKEN.finditer(expr):
        number, braced, name, op, other = token.groups()
        if other:
            return None
        if not op:
            if operand_of is not None:
                value = operand_of(token)
            else:
                value = _literal(number) if number else _variable_number(variables.get(braced or name))
            if value is None or operand:
                return None
            output.append(value)
            operand = True
        elif op == "(":
            pending.append(op)
            operand = False
        elif op == ")":
            while pending and pending[-1] != "(":
                output.append(pending.pop())
            if not pending:
                return None
            pending.pop()
            operand = True
        elif not operand:
            if op not in _UNARY:
                return None
            pending.append(_UNARY[op])
        elif op not in _BINARY:
            return None  # `1 ! 2`, `1 ~ 2`: a unary operator where a binary one goes (bash: a syntax error)
        else:
            precedence = _BINARY[op]
            while pending and pending[-1] != "(" and (
                pending[-1] in _UNARY_NAMES or _BINARY[pending[-1]] > precedence
                or (_BINARY[pending[-1]] == precedence and op != "**")
            ):
                output.append(pending.pop())
            pending.append(op)
            operand = False
    while pending:
        op = pending.pop()
        if op == "(":
            return None
        output.append(op)
    return output if operand else None


def _unset_read(expr: str, unset: Callable, variables: dict, nounset: bool) -> Optional[tuple]:
    """Where bash stops evaluating `$((expr))` on a variable `unset(name)` says is certainly not set:
    (name, its offset in expr, why: "unbound", "empty" or "division"). With `nounset`, the first
    such variable it reads (each `$x` is expanded before the expression is read; a bare name is read
    unless `&&`/`||` may skip it). Else an `$x` whose empty expansion leaves no valid expression
    (`64 / $TP` is `64 / `), or the first variable of a divisor (`/`, `%`) that is 0 only as bash
    reads each unset variable: 0. None when bash does not certainly stop there."""
    tokens = list(_ARITH_TOKEN.finditer(expr))
    if any(token.group(5) for token in tokens) or "++" in expr or "--" in expr:
        return None  # not an expression read here (assignments, `?:`, `${x:-1}`)
    depth = 0
    for token in tokens:
        depth += (token.group(4) == "(") - (token.group(4) == ")")
        if depth < 0:
            return None  # `$((a) - (b))` is a command substitution of a subshell, not arithmetic
    missing = [(token.group(2) or token.group(3), token.start(2) if token.group(2) else token.start(3), token)
               for token in tokens if (token.group(2) or token.group(3)) and unset(token.group(2) or token.group(3))]
    skipping = any(token.group(4) in ("&&", "||") for token in tokens)
    expanded = [found for found in missing if found[2].group().startswith("$")]
    written = _postfix(expr, variables, lambda token: 1) is not None  # bash reads no name of an invalid one
    if nounset:
        first = expanded[0] if expanded else missing[0] if missing and written and not skipping else None
        return first[:2] + ("unbound",) if first else None
    if expanded:
        gone = {found[2].start() for found in expanded}
        left = " ".join(token.group() for token in tokens if token.start() not in gone)
        valid = not left or _postfix(left, variables, lambda token: 1) is not None
        return expanded[0][:2] + ("empty",) if written and not valid else None
    if skipping or not missing:
        return None
    zero = {at for _, at, _ in missing}

    def operand(token) -> Optional[tuple]:
        if token.group(1):
            value = _literal(token.group(1))
            return None if value is None else (value, ())
        if token.start(3) in zero:
            return 0, ((token.group(3), token.start(3)),)
        return _variable_number(variables.get(token.group(2) or token.group(3))), ()

    stack: list = []
    for item in _postfix(expr, variables, operand) or ():
        if isinstance(item, tuple):
            stack.append(item)
        elif len(stack) < (1 if item in _UNARY_NAMES else 2):
            return None
        elif item in _UNARY_NAMES:
            value, names = stack.pop()
            stack.append((None if value is None else _UNARY_OPERATIONS[item](value), names))
        else:
            (b, b_names), (a, a_names) = stack.pop(), stack.pop()
            if item in ("/", "%") and b == 0 and b_names:
                return b_names[0] + ("division",)
            result = None if a is None or b is None else _CHECKED[item](a, b) if item in _CHECKED \
                else _SIMPLE[item](a, b)
            if result is not None and not -_INT64 <= result < _INT64:
                return None  # bash would wrap it: not followed
            stack.append((result, a_names + b_names))
    return None


def _variable_number(value) -> Optional[int]:
    """A variable's value as a number in arithmetic: only a plain integer is followed
    (bash would evaluate any other text as an expression of its own)."""
    if not (isinstance(value, Word) and value.known):
        return None
    text = value.value.strip()
    negative = text.startswith("-")
    text = text[1:] if negative else text
    number = _literal(text) if text.isascii() and text.isdigit() else None
    return -number if negative and number is not None else number


def _literal(text: str) -> Optional[int]:
    """A bash integer constant: decimal, 0x hex, 0 octal, base#digits; None past 64 bits."""
    if len(text) > 70:  # no 64-bit number is written longer (base 2 with a prefix)
        return None
    try:
        if "#" in text:
            base, digits = text.split("#", 1)
            value = int(digits, int(base)) if 2 <= int(base) <= 36 else None
        elif text[:2] in ("0x", "0X"):
            value = int(text[2:], 16)
        elif text.startswith("0") and len(text) > 1:
            value = int(text, 8)
        else:
            value = int(text)
    except ValueError:
        return None
    return value if value is not None and value < _INT64 else None


def _run(program: list) -> Optional[int]:
    stack: list = []
    for item in program:
        if type(item) is int:
            stack.append(item)
        elif item in _UNARY_NAMES:
            if not stack:
                return None
            stack.append(_UNARY_OPERATIONS[item](stack.pop()))
        elif len(stack) < 2:
            return None
        else:
            b, a = stack.pop(), stack.pop()
            result = _CHECKED[item](a, b) if item in _CHECKED else _SIMPLE[item](a, b)
            if result is None or not -_INT64 <= result < _INT64:
                return None
            stack.append(result)
    return stack[0] if len(stack) == 1 else None


def _divide(a: int, b: int) -> Optional[int]:
    """Towards zero, as C and bash divide; None for a division by zero."""
    if b == 0:
        return None
    return abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)


def _remainder(a: int, b: int) -> Optional[int]:
    quotient = _divide(a, b)
    return None if quotient is None else a - b * quotient


# Operations whose cost or validity is checked first (operands are 64-bit integers).
_CHECKED: dict[str, Callable[[int, int], Optional[int]]] = {
    "/": _divide,
    "%": _remainder,
    "**": lambda a, b: None if b < 0 or (b > 64 and abs(a) > 1) else a**b,
    "<<": lambda a, b: a << b if 0 <= b < 64 else None,
    ">>": lambda a, b: a >> b if 0 <= b < 64 else None,
}
_SIMPLE: dict[str, Callable[[int, int], int]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "&": operator.and_, "|": operator.or_, "^": operator.xor,
    "<": lambda a, b: int(a < b), "<=": lambda a, b: int(a <= b), ">": lambda a, b: int(a > b),
    ">=": lambda a, b: int(a >= b), "==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b),
    "&&": lambda a, b: int(bool(a) and bool(b)), "||": lambda a, b: int(bool(a) or bool(b)),
}
_UNARY_OPERATIONS: dict[str, Callable[[int], int]] = {
    "neg": operator.neg, "pos": operator.pos, "not": lambda a: int(not a), "inv": operator.invert,
}


def _strip_prefix(parts: list, length: int) -> list:
    """Drop the first `length` characters (the `NAME=`) from a word's parts."""
    out = []
    for part in parts:
        if length <= 0:
            out.append(part)
        elif part[0] == "lit":
            if len(part[1]) > length:
                out.append(("lit", part[1][length:]))
            length -= len(part[1])
        else:
            out.append(part)
            length = 0
    return out


def _same(a, b) -> bool:
    if isinstance(a, Word) and isinstance(b, Word):
        return a.known and b.known and a.value == b.value
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return False


def _merged_value(values: list):
    """A variable as all paths that may have run leave it: their value when alike, else unknown
    (ABSENT when none sets it)."""
    first = values[0]
    if all(value is first for value in values):
        return first
    if all(_same(value, first) for value in values[1:]):
        return _agreed(first, values)
    known = [value for value in values if isinstance(value, Word) and value.known]
    if known and all(_same(value, known[0]) or _callers(value, known[0]) for value in values):
        return Word(UNKNOWN, known[0].span, known[0].raw, fallback=known[0])  # the caller's, else this
    for value in values:
        word = value[0] if isinstance(value, list) and value else value
        if isinstance(word, Word):
            return Word(UNKNOWN, word.span, word.raw)
    return Word(UNKNOWN, Span(1, 1, 1, 1), "")


def _agreed(first, values: list):
    """A value all paths leave alike (a Word, or an array): a division that dropped a remainder on one
    of them is not the script's on every path (`if ...; then GA=1; else GA=$((40 / 32)); fi`)."""
    if not isinstance(first, Word) or first.truncation is None \
            or all(value.truncation == first.truncation for value in values):
        return first
    return replace(first, truncation=None)


def _defaulted(values: list, chosen: int, merged):
    """The chosen path's known value when every other path leaves the variable to the caller."""
    value = values[chosen]
    if merged is value or not (isinstance(value, Word) and value.known):
        return merged
    others = values[:chosen] + values[chosen + 1:]
    if not all(_callers(v, value) or _same(v, value) for v in others):
        return merged
    return value if all(_same(v, value) for v in others) else replace(value, defaulted=True)


def _callers(value, default: Word) -> bool:
    """Whether a path leaves a variable to the caller (or to the caller, else `default`)."""
    return value is ABSENT or isinstance(value, Word) and (value.outside or _same(value.fallback, default))


def _merged_export(values: list):
    """Exported on every path: exported; on none: not; else maybe (False)."""
    if all(value is True for value in values):
        return True
    return ABSENT if all(value is ABSENT for value in values) else False


def _only_argument_count(words: list) -> bool:
    """Whether `$#` is the only variable a test reads (`[ "$#" -lt 2 ]`, `[[ $# -gt 0 ]]`)."""
    names = [part[1] for word in words for part in word.parts if part[0] in ("var", "array")]
    return bool(names) and all(name == "#" for name in names) and not any(
        part[0] in ("unknown", "folder", "dirname", "pwd") for word in words for part in word.parts)


def _asks_empty(arguments: list) -> bool:
    """Whether `[ ARGS ]` (read with outside variables empty) asks only whether a value is empty."""
    while arguments and arguments[0] == "!":
        arguments = arguments[1:]
    if len(arguments) == 1:
        return True
    if len(arguments) == 2:
        return arguments[0] in ("-z", "-n")
    return len(arguments) == 3 and arguments[1] in ("=", "==", "!=") and arguments[0] == arguments[2]


class _NotFollowed(Exception):
    pass


_DOUBLE_BINARY = frozenset({"==", "=", "!=", "=~", "<", ">", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt", "-ot",
                            "-ef"})
_UNARY_TEST = LazyPattern(r"-[a-hknoprstuvwxzGLNORS]")
_MAX_TEST_DEPTH = 32


class _DoubleBracket:
    """`[[ ... ]]` over known values: ! && || ( ), -z -n, == = != (a pattern unless quoted), integer
    comparisons; None for file tests, =~, < > and unknown values. A test of whether an outside
    variable is empty is read as the caller leaving it empty (`assumed`)."""

    def __init__(self, state: _Interpreter, words: list):
        self.state, self.words, self.i = state, words, 0
        self.assumed = False

    def result(self) -> tuple:
        try:
            value = self._or(0)
        except _NotFollowed:
            return None, False
        if self.i != len(self.words) or value is None:
            return None, False
        return value, self.assumed

    def _peek(self) -> Optional[str]:
        return self.words[self.i].raw if self.i < len(self.words) else None

    def _next(self) -> _RawWord:
        if self.i >= len(self.words):
            raise _NotFollowed
        self.i += 1
        return self.words[self.i - 1]

    def _or(self, depth: int) -> Optional[bool]:
        left = self._and(depth)
        while self._peek() == "||":
            self.i += 1
            right = self._and(depth)
            left = True if left or right else None if left is None or right is None else False
        return left

    def _and(self, depth: int) -> Optional[bool]:
        left = self._not(depth)
        while self._peek() == "&&":
            self.i += 1
            right = self._not(depth)
            left = False if left is False or right is False else None if left is None or right is None else True
        return left

    def _not(self, depth: int) -> Optional[bool]:
        if depth > _MAX_TEST_DEPTH:
            raise _NotFollowed
        if self._peek() == "!":
            self.i += 1
            value = self._not(depth + 1)
            return None if value is None else not value
        if self._peek() == "(":
            self.i += 1
            value = self._or(depth + 1)
            if self._peek() != ")":
                raise _NotFollowed
            self.i += 1
            return value
        word = self._next()
        operand = self._peek() not in (None, "&&", "||", ")") and self._peek() not in _DOUBLE_BINARY
        if word.raw in ("-z", "-n") and operand:
            text = self._value(self._next())
            return None if text is None else (text == "") == (word.raw == "-z")
        if _UNARY_TEST.fullmatch(word.raw) and operand:
            self._next()
            return None  # a file test and the like: not known here
        if self._peek() in _DOUBLE_BINARY:
            op = self._next().raw
            return self._binary(word, op, self._next())
        text = self._value(word)
        return None if text is None else text != ""

    def _value(self, raw: _RawWord) -> Optional[str]:
        """A word's value; an outside variable as empty (the test asks whether it is)."""
        word = self.state._joined(raw)
        if not word.known:
            word = self.state._joined(raw, assume=True)
            if not word.known:
                return None
            self.assumed = True
        elif self.state._reads_defaulted([raw]):
            self.assumed = True  # the script's default in place of the caller's argument
        return str(word.value)

    def _binary(self, left: _RawWord, op: str, right: _RawWord) -> Optional[bool]:
        state = self.state
        if op in ("==", "=", "!="):
            subject = state._joined(left)
            matched = state._matches(subject, right)
            if matched is None and not subject.known and "$" not in right.raw and "`" not in right.raw:
                # `[[ "$X" == "" ]]` of an outside X: only the question whether it is empty is answered.
                if state._matches(state._joined(left, assume=True), right):
                    matched, self.assumed = True, True
            return None if matched is None else matched == (op != "!=")
        if op in ("-eq", "-ne", "-lt", "-le", "-gt", "-ge"):
            a, b = state._joined(left), state._joined(right)
            if not (a.known and b.known) and _only_argument_count([left, right]):
                a, b = state._joined(left, assume=True), state._joined(right, assume=True)  # no arguments given
                self.assumed = True
            return integer_test(op, str(a.value), str(b.value)) if a.known and b.known else None
        return None


# -- continuations that do not continue ---------------------------------------------

_BROKEN = LazyPattern(r"(?<!\\)\\([ \t\r]+)(#.*)?$")
_LOOKS_LIKE_ARGUMENT = LazyPattern(r"^\s+(-{1,2}[A-Za-z]|[A-Za-z_+~][\w.+~\-\[\]]*=|\$\{?\w)")
_OPTION_FIRST = LazyPattern(r"^\s*-{1,2}[A-Za-z]")  # a "command" no shell runs: the orphaned rest of one


def _broken_continuations(text: str) -> list:
    lines = text.split("\n")
    # How many argument-like lines follow each line, counted once from the end (not once per `\`).
    following = [0] * (len(lines) + 1)
    for index in range(len(lines) - 1, 0, -1):
        following[index - 1] = following[index] + 1 if _LOOKS_LIKE_ARGUMENT.match(lines[index]) else 0
    found = []
    for index, line in enumerate(lines):
        if "\\" not in line:
            continue
        match = _BROKEN.search(line)
        if not match or _in_quotes(line[: match.start()]) or line.lstrip().startswith("#"):
            continue
        dropped = following[index]
        if dropped == 0 or _OPTION_FIRST.match(lines[_command_start(lines, index)]):
            continue  # nothing after it, or its command is itself lines an earlier break left behind
        span = Span(index + 1, match.start() + 1, index + 1, max(match.start() + 2, len(line.rstrip("\r")) + 1))
        found.append(Continuation(span, dropped, comment=bool(match.group(2)), carriage_return="\r" in match.group(1)))
    return found


def _command_start(lines: list, index: int) -> int:
    """The first line of the command line `index` is in: back over the lines that continue into it."""
    while index > 0 and lines[index - 1].endswith("\\") and not lines[index - 1].endswith("\\\\") \
            and not _in_quotes(lines[index - 1][:-1]):
        index -= 1
    return index


def _in_quotes(prefix: str) -> bool:
    """Whether a line prefix leaves a quote open (then the backslash is text)."""
    single = double = False
    escaped = False
    for ch in prefix:
        if escaped:
            escaped = False
        elif ch == "\\" and not single:
            escaped = True
        elif ch == "'" and not double:
            single = not single
        elif ch == '"' and not single:
            double = not double
        elif ch == "#" and not single and not double:
            return True  # inside a comment
    return single or double
