"""Read a launch script: the commands it runs, with every word's position.

A small reader for the part of bash that launch scripts use: variables
(`X=1`, `export X=1`, `${X:-8}`, `$((X * 2))`), env prefixes (`A=1 cmd`),
arrays (`args=(a b)`, `"${args[@]}"`), quotes, line continuations and
comments (`#` starts one only at the start of a word). Nothing is executed:
`$(...)`, backquotes, brace expansion, globbing and unknown variables leave a
word unknown. Variables assigned inside if/for/while/case blocks are unknown
afterwards, since the branch taken cannot be known.

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
import operator
import os
import re
from dataclasses import dataclass, field
from typing import Callable, Optional

from ..document import Document, LimitExceeded, Mapping, ParseError, Span, line_starts
from ..limits import MAX_LENGTH, MAX_NODES, MAX_NUMBER_DIGITS, MAX_SHELL_OUTPUT

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_POSITIONAL = re.compile(r"[0-9]|@|#")  # ${1}, ${1:-8}, ${@}, ${#}
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=")
_INDEXED_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\[[^\]]*\]\+?=")
_OPENERS = {"if", "for", "while", "until", "case", "select"}
_CLOSERS = {"fi", "done", "esac"}
_KEYWORDS = {"then", "else", "elif", "do", "!", "{", "}", "time", "nohup", "exec", "command", "eval"}
_LEADING_WORDS = _KEYWORDS | _OPENERS | _CLOSERS
_DECLARATIONS = ("export", "declare", "local", "readonly", "typeset")
_DECLARE_FLAGS = re.compile(r"[-+][A-Za-z]+")

# Scanners, each matched at the current offset.
_BLANKS = re.compile(r"(?:[ \t]|\\\n)+")  # spaces, tabs and line continuations
_COMMENT = re.compile(r"#[^\n]*")
_OPERATOR = re.compile(r"&&|\|\||;;|\|&|[;|&\n]")
_PLAIN = re.compile(r"[^ \t\n;&|()\\'\"$`]+")  # unquoted text without anything special
_QUOTED_PLAIN = re.compile(r'[^"\\$`]+')  # the same inside double quotes
_BACKQUOTED = re.compile(r"[^`\\]*(?:\\.[^`\\]*)*`", re.S)
_HEREDOC_WORD = re.compile(r"<<(-?)[ \t]*([^ \t\n;|&<>]*)")
_PAREN = re.compile(r"[()]")
_BRACE = re.compile(r"[{}]")
# `{a,b}` and `{1..100000000}`: bash expands them into many words; not followed.
_BRACE_EXPANSION = re.compile(r"\{[^{}\s]*(?:,|\.\.)[^{}\s]*\}")
# Digits past this run are a number too long to keep (whatever reads the word would call int() on it).
_LONG_NUMBER = re.compile(r"[0-9]{%d}" % (MAX_NUMBER_DIGITS + 1))


class _Unknown:
    def __repr__(self):
        return "<unknown>"


UNKNOWN = _Unknown()


@dataclass
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
    # A word not known that a string was split into: its text with _NOT_KNOWN where a value is not
    # known (`${SOURCE};`), as a shell that parses the string again (`eval`, `sh -c`) reads it.
    written: Optional[str] = None

    @property
    def known(self) -> bool:
        return self.value is not UNKNOWN


@dataclass
class Command:
    words: list  # Word, expanded, env prefixes removed
    env: dict  # prefix assignments: name -> Word
    span: Span  # the whole command


@dataclass
class Continuation:
    """A `\\` that does not continue the command."""

    span: Span  # the backslash and what follows it on the line
    dropped: int  # how many following lines look like they belonged to the command
    comment: bool  # followed by a comment rather than only spaces
    carriage_return: bool = False  # followed by the CR of a CRLF line ending


@dataclass
class ShellDocument(Document):
    commands: list = field(default_factory=list)
    variables: dict = field(default_factory=dict)  # at the end of the script: name -> Word or list of Words
    broken_continuations: list = field(default_factory=list)


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
    state.exported.update(slurm)  # the job's environment: every command sees it
    for name, value in (environment or {}).items():
        if isinstance(value, Word):
            state.variables[name] = value
            state.exported.add(name)
    if arguments is not None:
        _set_arguments(state.variables, arguments, Span(1, 1, 1, 1))
    commands = []
    for raw in raw_commands:
        commands.extend(state.run_all(raw))
    doc = ShellDocument(path=path, format="shell", root=Mapping(span=Span(1, 1, 1, 1)), text=text)
    doc.commands = commands
    doc.variables = state.variables
    doc.broken_continuations = _broken_continuations(text)
    return doc


def _set_arguments(variables: dict, arguments: list, span: Span) -> None:
    """$@, $1..$9 and $# of a script run (or a file sourced) with `arguments`."""
    variables["@"] = list(arguments)
    variables.update({str(number): word for number, word in enumerate(arguments[:9], 1)})
    variables["#"] = Word(str(len(arguments)), span, "")


# -- lexing: text -> commands of raw words ------------------------------------

@dataclass
class _RawWord:
    parts: list  # ("lit", text) | ("var", name, default, op, quoted) | ("array", name) | ("arith", expr)
    #               | ("folder", "0" or "BASH_SOURCE"): the script's own folder | ("dirname", name) | ("unknown",)
    span: Span
    raw: str
    assignment_array: Optional[list] = None  # NAME=( ... ): the element words
    offset: int = 0  # where the word starts in the text
    whole_string: bool = False  # one quoted string and nothing else: "..." or '...'


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
        self.depth = 0  # if/for/while/case nesting of the command being read
        self.words = 0
        self.heredocs: list = []  # (body start, body end, delimiter quoted) of the command being read

    def position(self, offset: int) -> tuple:
        index = bisect.bisect_right(self.line_starts, offset) - 1
        return index + 1, offset - self.line_starts[index] + 1

    def span(self, start: int, end: int) -> Span:
        return Span(*self.position(start), *self.position(end), self.path)

    def commands(self) -> list:
        """[(words, depth, span)] for every simple command."""
        text, end = self.text, self.end
        found = []
        words: list = []
        start = 0
        while self.i < end:
            ch = text[self.i]
            if ch in " \t" or text.startswith("\\\n", self.i, self.end):
                self.i = _BLANKS.match(text, self.i, self.end).end()
            elif ch == "#":
                self.i = _COMMENT.match(text, self.i, self.end).end()
            elif ch in ";|&\n":
                self.i = _OPERATOR.match(text, self.i, self.end).end()
                if words:
                    found.append(self._finish(words, start))
                    words = []
            elif ch in "()":
                self.i += 1  # subshells and `name()` of functions: their commands are read as any other
            elif text.startswith("<<<", self.i):
                self.i += 3  # a here-string: the word after it is read as any other
            elif text.startswith("<<", self.i):
                self.heredocs.append(self._heredoc())
            else:
                if not words:
                    start = self.i
                word = self._word()
                if word is not None:
                    words.append(word)
        if words:
            found.append(self._finish(words, start))
        return found

    def _finish(self, words: list, start: int):
        """A command with the block depth it runs at (if/for/while/case/{ bodies are deeper)."""
        end = words[-1].span
        first = words[0].raw
        if first in _CLOSERS or first == "}":
            self.depth = max(0, self.depth - 1)
        depth = self.depth
        if first in _OPENERS or any(w.raw == "{" for w in words):
            self.depth += 1
        line, column = self.position(start)
        heredocs, self.heredocs = self.heredocs, []
        return words, depth, Span(line, column, end.end_line, end.end_column, self.path), heredocs

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
        word = _RawWord(parts, self.span(start, self.i), raw, offset=start, whole_string=first_string == self.i)
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
        self.i += 1  # $
        if text.startswith("((", self.i):
            body = self._balanced(_PAREN, "(")  # `(1 + 2)`: the arithmetic in its inner parentheses
            return ("arith", body[1:-1]) if body and body.startswith("(") and body.endswith(")") else ("unknown",)
        if text.startswith("(", self.i):
            body = self._balanced(_PAREN, "(")
            expr = _EXPR.fullmatch(body or "")
            # `$(expr 16 / $N)`: expr's integer arithmetic, as $(( )) computes it; any other command is never run.
            if expr:
                return ("arith", expr.group(1).replace("\\*", "*").replace("'*'", "*"))
            return _own_folder(body)
        if text.startswith("{", self.i):
            body = self._balanced(_BRACE, "{")
            return _parameter(body) + (quoted,) if body is not None else ("unknown",)
        match = _NAME.match(text, self.i, self.end)
        if match:
            self.i = match.end()
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
_OWN_FOLDER = re.compile(
    rf"""\s*(?:{_DIRNAME}|(?:realpath|readlink\s+-[fem])\s+(?:--\s+)?{_IN_DIRNAME}"""
    rf"""|cd\s+(?:-P\s+)?(?:--\s+)?{_IN_DIRNAME}\s*(?:(?:&>|>|2>|1>)\s*/dev/null\s*(?:2>&1\s*)?)?(?:&&|;)\s*pwd(?:\s+-[PL])?)\s*""")


# `$(dirname $EXAMPLE_PATH)`: the folder above a path a variable holds (a string operation, nothing run).
_DIRNAME_OF = re.compile(r"""\s*dirname\s+(?:--\s+)?(["']?)\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?\1\s*""")


def _own_folder(body: Optional[str]) -> tuple:
    """("folder", which) for a command substitution that names the script's own folder, ("dirname",
    variable) for the folder of a variable's path, else unknown."""
    if body is None or len(body) > 400:
        return ("unknown",)
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

_SHELLS = re.compile(r"(.*/)?(ba|da|z)?sh")
_COMMAND_STRING = re.compile(r"-[a-z]*c[a-z]*")  # -c, -lc, -xc
_SOURCE = {"source", "."}
_POSITIONAL_NAMES = ("@", "#") + tuple(str(number) for number in range(1, 10))
MAX_SOURCE_DEPTH = 4  # files sourced within files sourced
_READ_VALUED = {"-a", "-d", "-i", "-n", "-N", "-p", "-t", "-u"}  # read's options that take a value


MAX_EVAL_DEPTH = 4  # texts parsed again (`eval "$CMD"` whose CMD runs `eval` ...) within one another
_EVALUATED = "\x00evaluated"  # the path of the places in a text parsed again, before they are mapped back


class _Placer:
    """Maps the places in a text parsed again (`_Interpreter._evaluated`) back to where its
    characters are written; a word holding a part not known (_NOT_KNOWN) becomes one not known."""

    def __init__(self, path: str, starts: list, sources: list, interpreter: "_Interpreter", fallback: Span):
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
        value, written = word.value, word.written
        if word.known and isinstance(value, str) and _NOT_KNOWN in value:
            value, written = UNKNOWN, value
        pieces = tuple(self.word(piece) for piece in word.pieces) if word.pieces is not None else None
        return Word(value, self.span(word.span), word.raw.replace(_NOT_KNOWN, "$"),
                    self.span(word.value_span) if word.value_span is not None else None, pieces, written)


class _Interpreter:
    def __init__(self, text: str = "", starts: Optional[list] = None):
        self.text = text
        self.starts = starts
        self.variables: dict = {}  # name -> Word | list[Word] (arrays)
        self.produced = 0  # characters all expansions made so far
        self.words = 0  # and words
        self.exported: set = set()  # names `export`ed: every later command gets them in its environment
        self.maybe_exported: set = set()  # exported inside a branch or loop: in the environment or not
        self.path: Optional[str] = None  # the file being read, when it is one the script sources
        self.script: Optional[str] = None  # the script itself, as its path is shown ($0)
        self.sourcer: Optional[Callable] = None  # read_shell's
        self.sourcing: tuple = ()  # the keys of the files being sourced, outermost first
        self.evaluating = 0  # texts parsed again (`eval`, `sh -c`) within one another

    def run_all(self, raw) -> list:
        """The command, then those of a `bash -c "..."` string among its words (`srun ... bash -c "cd x;
        torchrun ..."`), read where they stand in the string; heredoc bodies assigned by `read`."""
        raw_words, depth, span, heredocs = raw
        if raw_words and raw_words[0].raw == "read" and heredocs:
            self._read_heredoc(raw_words, depth, heredocs[-1])
            return []
        # `eval ...`, `then eval ...`, `time eval ...`: the words after eval are parsed again.
        at = next((i for i, w in enumerate(raw_words) if w.raw not in _LEADING_WORDS or w.raw == "eval"), 0)
        if at + 1 < len(raw_words) and raw_words[at].raw == "eval":
            evaluated = self._evaluated(raw_words[at + 1:], depth, span, keep=True)
            if evaluated is not None:
                return evaluated
            if len(raw_words) == at + 2 and raw_words[at + 1].whole_string:
                return self._string(raw_words[at + 1], depth)  # `eval "$CMD"`: the string is read as commands
        command = self.run((raw_words, depth, span))
        found = [command] if command is not None else []
        for index, word in enumerate(raw_words[:-2]):
            if _SHELLS.fullmatch(word.raw) and _COMMAND_STRING.fullmatch(raw_words[index + 1].raw) \
                    and raw_words[index + 2].whole_string:
                evaluated = self._evaluated(raw_words[index + 2:index + 3], depth, span, keep=False)
                found.extend(self._string(raw_words[index + 2], depth) if evaluated is None else evaluated)
                break
        return found

    def _evaluated(self, raw_words: list, depth: int, span: Span, keep: bool) -> Optional[list]:
        """The commands of the text a shell parses again: `eval ARGS` (the arguments expanded, joined
        by spaces; `keep`: its assignments stay) or `sh -c "STRING"` (STRING expanded, then run by a child
        shell with the exported variables). As bash does it,
        quotes in a variable's value then count and `;`, `&&`, `|` and newlines in it separate commands,
        where running `$CMD` alone only splits it at blanks. Each word points where its text is written
        (the assignment holding it); None when the text has nothing known or is too deep in such texts."""
        if self.evaluating >= MAX_EVAL_DEPTH or self.starts is None:
            return None
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
            return None
        self._produce(len(text), 0, span)
        self.evaluating += 1
        path = f"{_EVALUATED}{self.evaluating}"  # marks the places in the text, mapped back below
        lexer = _Lexer(text, path=path)
        try:
            raw_commands = lexer.commands()
        except ParseError:  # an unterminated quote: the shell would refuse the text
            self.evaluating -= 1
            return []
        saved = (self.text, self.starts, self.path)
        before = dict(self.variables)
        if not keep:  # a child shell sees the exported variables only (one exported in a branch: not known)
            self.variables = self._environment()
        self.text, self.starts, self.path = text, lexer.line_starts, path
        found_commands = []
        try:
            for raw_words_inner, inner_depth, inner_span, heredocs in raw_commands:
                found_commands.extend(self.run_all((raw_words_inner, depth + inner_depth, inner_span, heredocs)))
        except LimitExceeded as error:  # reported at the command that parses the text again
            raise LimitExceeded(error.message, span.line, span.column) from None
        finally:
            self.text, self.starts, self.path = saved
            self.evaluating -= 1
        place = _Placer(path, lexer.line_starts, sources, self, span)
        if not keep:
            self.variables = before  # the inner shell's assignments do not come back
        else:
            for name, value in self.variables.items():
                if value is not before.get(name):
                    self.variables[name] = [place.word(w) for w in value] if isinstance(value, list) else place.word(value)
        return [Command([place.word(w) for w in command.words],
                        {name: place.word(w) if isinstance(w, Word) else w for name, w in command.env.items()},
                        place.span(command.span, whole=True)) for command in found_commands]

    def _string(self, string: _RawWord, depth: int) -> list:
        """The commands of a quoted string run by a shell (`bash -c "..."`, `eval "..."`), lexed where
        they stand; the inner shell's assignments do not come back."""
        found = []
        saved = dict(self.variables)
        for inner in self._lex(string.offset + 1, string.offset + len(string.raw) - 1, string.span):
            words, inner_depth, inner_span, _ = inner
            nested = self.run((words, depth + inner_depth, inner_span))
            if nested is not None:
                found.append(nested)
        self.variables = saved
        return found

    def _lex(self, start: int, end: int, span: Span) -> list:
        """The raw commands of text[start:end], lexed where they stand; none when it is not valid shell."""
        self._produce(end - start, 0, span)
        try:
            return _Lexer(self.text, start, end, self.starts, self.path).commands()
        except ParseError:
            return []

    def _read_heredoc(self, raw_words: list, depth: int, heredoc: tuple) -> None:
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
            for words, _, _, _ in self._lex(start, end, name.span):
                for word in words:
                    pieces.extend(self.expand(word))
            text = " ".join(str(w.value) for w in pieces if w.known)
            if pieces and all(w.known for w in pieces) and len(text) <= MAX_LENGTH:
                value = Word(text, pieces[0].span, name.raw, pieces=tuple(pieces))
        self._set_all({n.raw: Word(UNKNOWN, n.span, n.raw) for n in names[:-1]} | {name.raw: value}, depth)

    def run(self, raw) -> Optional[Command]:
        raw_words, depth, span = raw
        if raw_words and raw_words[0].raw in ("for", "select", "case"):
            if len(raw_words) > 1 and raw_words[0].raw != "case":  # the loop variable
                self.variables[raw_words[1].raw] = Word(UNKNOWN, raw_words[1].span, raw_words[1].raw)
            return None
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
                env[match.group(1)] = self._assigned(word, match, depth)
                if word.assignment_array is not None:
                    arrays[match.group(1)] = word
            else:
                break
            index += 1
        words = raw_words[index:]
        if not words:
            self._set_all(env, depth)  # a plain assignment
            return None
        if words[0].raw in _DECLARATIONS:
            self._declare(words[1:], depth, exporting=words[0].raw == "export")
            return None
        if words[0].raw in _SOURCE and len(words) > 1 and self.sourcer is not None:
            self._source(words[1:], depth, span)
            return None
        # `arr=(a b) cmd`: an array cannot be passed in the environment (bash refuses it).
        for name, word in arrays.items():
            env[name] = Word(UNKNOWN, word.span, word.raw)
        env = self._environment() | env
        expanded: list = []
        for word in words:
            expanded.extend(self.expand(word))
        return Command(expanded, env, span)

    def _declare(self, words: list, depth: int, exporting: bool = False) -> None:
        """`export A=1`, `declare -a A=(1 2)`; an integer, associative or name-reference
        declaration (`-i`, `-A`, `-n`) gives values not followed. `export A`, `declare -x A=1`:
        A is in the environment of the commands after it (`export -n A` takes it out)."""
        flags = "".join(word.raw for word in words if _DECLARE_FLAGS.fullmatch(word.raw))
        followed = not set(flags) & set("Ain")
        exporting = (exporting or "-" in flags and "x" in flags) and "n" not in flags and "+" not in flags
        for word in words:
            match = _ASSIGNMENT.match(word.raw)
            if match:
                value = self._assigned(word, match, depth) if followed else Word(UNKNOWN, word.span, word.raw)
                self._set_all({match.group(1): value}, depth)
            name = match.group(1) if match else word.raw if _NAME.fullmatch(word.raw) else None
            if exporting and name:
                (self.exported if depth == 0 else self.maybe_exported).add(name)

    def _source(self, words: list, depth: int, span: Span) -> None:
        """`source FILE [ARGS]`, `. FILE`: the file's commands run in this shell (variables, exports,
        heredoc reads), with ARGS as its positional parameters while it runs. At most
        MAX_SOURCE_DEPTH files deep, none twice in a chain; a file not read or not valid shell is skipped."""
        expanded = [piece for word in words for piece in self.expand(word)]
        if not expanded[0].known or len(self.sourcing) >= MAX_SOURCE_DEPTH:
            return
        found = self.sourcer(expanded[0])
        if found is None or found[0] in self.sourcing:
            return
        key, path, text = found
        text = text.replace("\r\n", "\n")
        self._produce(len(text), 0, span)
        lexer = _Lexer(text, path=path)
        try:
            raw_commands = lexer.commands()
        except ParseError:  # LimitExceeded too: the file is reported when it is linted itself
            return
        saved = (self.text, self.starts, self.path)
        positional = {name: self.variables.get(name) for name in _POSITIONAL_NAMES} if len(expanded) > 1 else {}
        if positional:
            for name in _POSITIONAL_NAMES:
                self.variables.pop(name, None)
            _set_arguments(self.variables, expanded[1:], span)
        self.text, self.starts, self.path = text, lexer.line_starts, path
        self.sourcing += (key,)
        try:
            for raw_words, inner_depth, inner_span, heredocs in raw_commands:
                self.run_all((raw_words, depth + inner_depth, inner_span, heredocs))
        finally:
            self.text, self.starts, self.path = saved
            self.sourcing = self.sourcing[:-1]
            for name, value in positional.items():
                if value is None:
                    self.variables.pop(name, None)
                else:
                    self.variables[name] = value

    def _environment(self) -> dict:
        """The exported variables a command runs with (one exported in a branch: unknown)."""
        env = {}
        for name in sorted(self.exported | self.maybe_exported):
            value = self.variables.get(name)
            if isinstance(value, Word):
                env[name] = value if name in self.exported else Word(UNKNOWN, value.span, value.raw)
        return env

    def _set_all(self, assignments: dict, depth: int) -> None:
        for name, value in assignments.items():
            if depth > 0 and not _same(self.variables.get(name), value):
                # Set inside a branch or loop: whether it ran cannot be known.
                value = Word(UNKNOWN, value.span if isinstance(value, Word) else value[0].span if value else Span(1, 1, 1, 1))
            self.variables[name] = value

    def _assigned(self, word: _RawWord, match, depth: int):
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
        if append:
            before = self.variables.get(name)
            if isinstance(before, Word) and before.known and expanded.known \
                    and len(before.value) + len(expanded.value) <= MAX_LENGTH:
                self._produce(len(before.value) + len(expanded.value), 1, value_span)
                expanded = Word(before.value + expanded.value, value_span, word.raw)
            else:
                expanded = Word(UNKNOWN, value_span, word.raw)
        else:  # a value not known still has the words it was written with (`ARGS="--mbs 4 --data $1"`)
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
        for run in re.finditer(r"\S+", value):
            span = self._origin(sources[run.start():run.end()])
            text = run.group()
            placed.append(Word(UNKNOWN, span, text.replace(_NOT_KNOWN, "$"), written=text) if _NOT_KNOWN in text
                          else Word(text, span, text))
        if not any(w.known for w in placed):
            return None  # nothing known to keep: the value is one word not known
        return tuple(placed)

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

    def _position(self, offset: int) -> tuple:
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
        origin = tail = None
        for part in word.parts:
            kind = part[0]
            if kind == "lit":
                piece = part[1]
            elif kind == "var":
                piece, where = self._variable(part, word.span)
                if piece is None:
                    return [Word(UNKNOWN, word.span, word.raw)]
                if len(word.parts) == 1:
                    origin = where
                tail = where
            elif kind == "folder":
                # $0 is the script run; BASH_SOURCE the file being read (a sourced one has its own folder).
                script = self.path if part[1] == "BASH_SOURCE" and self.path else self.script
                piece = (os.path.dirname(script) or ".") if script else None
                if piece is None:
                    return [Word(UNKNOWN, word.span, word.raw)]
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
        return [_checked(Word(text, origin or word.span, word.raw, value_span=trailing))]

    def _variable(self, part: tuple, span: Span):
        _, name, default, op = part[:4]
        value = self.variables.get(name)
        if isinstance(value, list):
            value = value[0] if value else None
        if value is not None and value.known and not (op in (":-", ":=") and value.value == ""):
            return value.value, value.span
        if value is not None and not value.known:
            return None, None
        if default is not None:
            return default, span
        return None, None  # from the environment: not known here


# Stands for a variable's value not known while a string is split into words.
_NOT_KNOWN = "\x00"
# The `key=` a word not known starts with as written (`trainer.nnodes=$NNODES`, `--master_port=${PORT}`).
WRITTEN_KEY = re.compile(r"(--|[+~])?[A-Za-z_][\w.\-]*=")

_REFERENCE = re.compile(r"\$(\{[^}]*\}|[A-Za-z_][A-Za-z_0-9]*|.)")


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
_EXPR = re.compile(r"\s*expr((?:\s+(?:[0-9]+|\$[A-Za-z_][A-Za-z0-9_]*|\$\{[A-Za-z_][A-Za-z0-9_]*\}|[-+/%]|\\\*|'\*'))+)\s*")

# -- a Slurm batch script's header: the environment Slurm gives the job -----------------

_SBATCH = re.compile(r"#SBATCH[ \t]+(--[a-z-]+|-[a-zA-Z])(?:[= \t]*([^\s#]+))?")
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
_ARITH_TOKEN = re.compile(
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


def _postfix(expr: str, variables: dict) -> Optional[list]:
    """The expression in postfix order (shunting-yard): numbers and operator names."""
    output: list = []
    pending: list = []
    operand = False  # whether the last token was an operand (then an operator is binary)
    for number, braced, name, op, other in _ARITH_TOKEN.findall(expr):
        if other:
            return None
        if not op:
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
_CHECKED = {
    "/": _divide,
    "%": _remainder,
    "**": lambda a, b: None if b < 0 or (b > 64 and abs(a) > 1) else a**b,
    "<<": lambda a, b: a << b if 0 <= b < 64 else None,
    ">>": lambda a, b: a >> b if 0 <= b < 64 else None,
}
_SIMPLE = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "&": operator.and_, "|": operator.or_, "^": operator.xor,
    "<": lambda a, b: int(a < b), "<=": lambda a, b: int(a <= b), ">": lambda a, b: int(a > b),
    ">=": lambda a, b: int(a >= b), "==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b),
    "&&": lambda a, b: int(bool(a) and bool(b)), "||": lambda a, b: int(bool(a) or bool(b)),
}
_UNARY_OPERATIONS = {"neg": operator.neg, "pos": operator.pos, "not": lambda a: int(not a), "inv": operator.invert}


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
    return False


# -- continuations that do not continue ---------------------------------------------

_BROKEN = re.compile(r"(?<!\\)\\([ \t\r]+)(#.*)?$")
_LOOKS_LIKE_ARGUMENT = re.compile(r"^\s+(-{1,2}[A-Za-z]|[A-Za-z_+~][\w.+~\-\[\]]*=|\$\{?\w)")


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
        if dropped == 0:
            continue
        span = Span(index + 1, match.start() + 1, index + 1, max(match.start() + 2, len(line.rstrip("\r")) + 1))
        found.append(Continuation(span, dropped, comment=bool(match.group(2)), carriage_return="\r" in match.group(1)))
    return found


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
