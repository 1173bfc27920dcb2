"""Read a launch script: the commands it runs, with every word's position.

A small reader for the part of bash that launch scripts use: variables
(`X=1`, `export X=1`, `${X:-8}`, `$((X * 2))`), env prefixes (`A=1 cmd`),
arrays (`args=(a b)`, `"${args[@]}"`), quotes, line continuations and
comments (`#` starts one only at the start of a word). Nothing is executed:
`$(...)`, globbing and unknown variables leave a word unknown. Variables
assigned inside if/for/while/case blocks are unknown afterwards, since the
branch taken cannot be known.

It also records the continuations that do not continue: a `\\` followed by
spaces or a comment escapes a space, not the newline, so the command ends
there and the lines after it run as separate commands.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Optional

from ..document import Document, Mapping, ParseError, Span

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=")
_OPENERS = {"if", "for", "while", "until", "case", "select"}
_CLOSERS = {"fi", "done", "esac"}
_KEYWORDS = {"then", "else", "elif", "do", "!", "{", "}", "time", "nohup", "exec", "command"}
_OPERATORS = ("&&", "||", ";;", "|&", ";", "|", "&", "\n")


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


@dataclass
class ShellDocument(Document):
    commands: list = field(default_factory=list)
    variables: dict = field(default_factory=dict)  # at the end of the script: name -> Word or list of Words
    broken_continuations: list = field(default_factory=list)


def is_shell_script(path: str, head: bytes) -> bool:
    """A `.sh` file, or a file without a suffix that starts with a shell shebang."""
    if path.endswith((".sh", ".bash")):
        return True
    first = head.split(b"\n", 1)[0]
    return first.startswith(b"#!") and (b"bash" in first or first.rstrip().endswith((b"/sh", b" sh")))


def read_shell(path: str, text: str) -> ShellDocument:
    lexer = _Lexer(text)
    raw_commands = lexer.commands()
    state = _Interpreter()
    commands = []
    for raw in raw_commands:
        command = state.run(raw)
        if command is not None:
            commands.append(command)
    doc = ShellDocument(path=path, format="shell", root=Mapping(span=Span(1, 1, 1, 1)), text=text)
    doc.commands = commands
    doc.variables = state.variables
    doc.broken_continuations = _broken_continuations(text)
    return doc


# -- lexing: text -> commands of raw words ------------------------------------

@dataclass
class _RawWord:
    parts: list  # ("lit", text) | ("var", name, default, op) | ("array", name) | ("arith", expr) | ("unknown",)
    span: Span
    raw: str
    assignment_array: Optional[list] = None  # NAME=( ... ): the element words


class _Lexer:
    def __init__(self, text: str):
        self.text = text
        self.i = 0
        self.line = 1
        self.col = 1
        self.depth = 0  # if/for/while/case nesting of the command being read

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.text[j] if j < len(self.text) else ""

    def advance(self, n: int = 1) -> str:
        taken = self.text[self.i:self.i + n]
        for ch in taken:
            if ch == "\n":
                self.line += 1
                self.col = 1
            else:
                self.col += 1
        self.i += n
        return taken

    def commands(self) -> list:
        """[(words, depth, span)] for every simple command."""
        found = []
        words: list = []
        start = (self.line, self.col)
        while self.i < len(self.text):
            ch = self.peek()
            if ch in " \t":
                self.advance()
            elif ch == "\\" and self.peek(1) == "\n":
                self.advance(2)
            elif ch == "#" :
                while self.i < len(self.text) and self.peek() != "\n":
                    self.advance()
            elif any(self.text.startswith(op, self.i) for op in _OPERATORS):
                op = next(op for op in _OPERATORS if self.text.startswith(op, self.i))
                self.advance(len(op))
                if words:
                    found.append(self._finish(words, start))
                    words = []
                start = (self.line, self.col)
            elif ch in "()":
                self.advance()  # subshells and `name()` of functions: their commands are read as any other
            elif ch == "<" and self.text.startswith("<<", self.i):
                self._heredoc()
            else:
                if not words:
                    start = (self.line, self.col)
                word = self._word()
                if word is not None:
                    words.append(word)
        if words:
            found.append(self._finish(words, start))
        return found

    def _finish(self, words: list, start: tuple):
        """A command with the block depth it runs at (if/for/while/case/{ bodies are deeper)."""
        end = words[-1].span
        first = words[0].raw
        if first in _CLOSERS or first == "}":
            self.depth = max(0, self.depth - 1)
        depth = self.depth
        if first in _OPENERS or any(w.raw == "{" for w in words):
            self.depth += 1
        return words, depth, Span(start[0], start[1], end.end_line, end.end_column)

    def _heredoc(self) -> None:
        self.advance(2)
        if self.peek() == "-":
            self.advance()
        while self.peek() in " \t":
            self.advance()
        delimiter = ""
        while self.i < len(self.text) and self.peek() not in " \t\n;|&":
            delimiter += self.advance()
        delimiter = delimiter.strip("'\"")
        while self.i < len(self.text) and self.peek() != "\n":
            self.advance()
        while self.i < len(self.text):
            self.advance()  # the newline
            line_end = self.text.find("\n", self.i)
            line = self.text[self.i: line_end if line_end >= 0 else len(self.text)]
            if line.strip() == delimiter:
                self.advance(len(line))
                return
            self.advance(len(line))

    def _word(self) -> Optional[_RawWord]:
        start_line, start_col, start_i = self.line, self.col, self.i
        parts: list = []
        literal = ""

        def flush():
            nonlocal literal
            if literal:
                parts.append(("lit", literal))
                literal = ""

        while self.i < len(self.text):
            ch = self.peek()
            if ch in " \t\n;&|()":
                break
            if ch == "\\":
                if self.peek(1) == "\n":
                    self.advance(2)
                    continue
                self.advance()
                literal += self.advance() if self.i < len(self.text) else ""
            elif ch == "'":
                self.advance()
                end = self.text.find("'", self.i)
                if end < 0:
                    raise ParseError("unterminated single quote", start_line, start_col)
                literal += self.advance(end - self.i)
                self.advance()
            elif ch == '"':
                self.advance()
                flush()
                self._double_quoted(parts)
            elif ch == "$":
                flush()
                parts.append(self._dollar())
            else:
                literal += self.advance()
        flush()
        raw = self.text[start_i:self.i]
        span = Span(start_line, start_col, self.line, self.col)
        word = _RawWord(parts, span, raw)
        # NAME=( a b c ): an array assignment
        if self.peek() == "(" and raw.endswith("=") and _ASSIGNMENT.fullmatch(raw):
            self.advance()
            elements = []
            while self.i < len(self.text) and self.peek() != ")":
                ch = self.peek()
                if ch in " \t\n":
                    self.advance()
                elif ch == "\\" and self.peek(1) == "\n":
                    self.advance(2)
                elif ch == "#":
                    while self.i < len(self.text) and self.peek() != "\n":
                        self.advance()
                else:
                    element = self._word()
                    if element is None or not element.raw:
                        self.advance()
                    else:
                        elements.append(element)
            if self.peek() == ")":
                self.advance()
            word.assignment_array = elements
            word.raw = self.text[start_i:self.i]
        return word if raw or word.assignment_array is not None else None

    def _double_quoted(self, parts: list) -> None:
        literal = ""
        while self.i < len(self.text) and self.peek() != '"':
            ch = self.peek()
            if ch == "\\" and self.peek(1) in '"\\$`\n':
                self.advance()
                if self.peek() == "\n":
                    self.advance()
                    continue
                literal += self.advance()
            elif ch == "$":
                if literal:
                    parts.append(("lit", literal))
                    literal = ""
                parts.append(self._dollar(quoted=True))
            else:
                literal += self.advance()
        if literal:
            parts.append(("lit", literal))
        if self.peek() == '"':
            self.advance()

    def _dollar(self, quoted: bool = False) -> tuple:
        self.advance()  # $
        ch = self.peek()
        if self.text.startswith("((", self.i):
            expr = self._balanced("((", "))")
            return ("arith", expr)
        if ch == "(":
            self._balanced("(", ")")
            return ("unknown",)
        if ch == "{":
            body = self._balanced("{", "}")
            return _parameter(body) + (quoted,)
        match = _NAME.match(self.text, self.i)
        if match:
            self.advance(match.end() - self.i)
            return ("var", match.group(), None, None, quoted)
        if ch and (ch.isdigit() or ch in "@*#?$!-"):
            self.advance()
            return ("unknown",)
        return ("lit", "$")

    def _balanced(self, opener: str, closer: str) -> str:
        self.advance(len(opener))
        depth = 1
        start = self.i
        while self.i < len(self.text):
            if self.text.startswith(closer, self.i):
                depth -= 1
                if depth == 0:
                    body = self.text[start:self.i]
                    self.advance(len(closer))
                    return body
                self.advance(len(closer))
            elif self.text.startswith(opener, self.i):
                depth += 1
                self.advance(len(opener))
            else:
                self.advance()
        return self.text[start:self.i]


def _parameter(body: str) -> tuple:
    """${NAME}, ${NAME:-default}, ${NAME-default}, ${NAME:=default}, ${NAME[@]}."""
    match = _NAME.match(body)
    if not match:
        return ("unknown",)
    name, rest = match.group(), body[match.end():]
    if rest in ("[@]", "[*]"):
        return ("array", name)
    if not rest:
        return ("var", name, None, None)
    for op in (":-", ":=", "-", "="):
        if rest.startswith(op):
            return ("var", name, rest[len(op):].strip("\"'"), op)
    return ("unknown",)


# -- interpreting: raw words -> expanded commands, variable state -----------------

class _Interpreter:
    def __init__(self):
        self.variables: dict = {}  # name -> Word | list[Word] (arrays)

    def run(self, raw) -> Optional[Command]:
        raw_words, depth, span = raw
        if raw_words and raw_words[0].raw in ("for", "select", "case"):
            if len(raw_words) > 1 and raw_words[0].raw != "case":  # the loop variable
                self.variables[raw_words[1].raw] = Word(UNKNOWN, raw_words[1].span, raw_words[1].raw)
            return None
        while raw_words and raw_words[0].raw in _KEYWORDS | _OPENERS | _CLOSERS:
            raw_words = raw_words[1:]
        env: dict = {}
        index = 0
        while index < len(raw_words):
            match = _ASSIGNMENT.match(raw_words[index].raw)
            if not match or raw_words[index].raw.startswith(("'", '"')):
                break
            env[match.group(1)] = self._assigned(raw_words[index], match, depth)
            index += 1
        words = raw_words[index:]
        if not words:
            self._set_all(env, depth)  # a plain assignment
            return None
        if words[0].raw in ("export", "declare", "local", "readonly", "typeset"):
            for word in words[1:]:
                match = _ASSIGNMENT.match(word.raw)
                if match:
                    self._set_all({match.group(1): self._assigned(word, match, depth)}, depth)
            return None
        expanded: list = []
        for word in words:
            expanded.extend(self.expand(word))
        return Command(expanded, env, span)

    def _set_all(self, assignments: dict, depth: int) -> None:
        for name, value in assignments.items():
            if depth > 0 and not _same(self.variables.get(name), value):
                # Set inside a branch or loop: whether it ran cannot be known.
                value = Word(UNKNOWN, value.span if isinstance(value, Word) else value[0].span if value else Span(1, 1, 1, 1))
            self.variables[name] = value

    def _assigned(self, word: _RawWord, match, depth: int):
        if word.assignment_array is not None:
            values = []
            for element in word.assignment_array:
                values.extend(self.expand(element))
            if match.group(2) == "+" and isinstance(self.variables.get(match.group(1)), list):
                values = self.variables[match.group(1)] + values
            return values
        prefix = len(match.group())
        value_word = _RawWord(_strip_prefix(word.parts, prefix), word.span, word.raw[prefix:])
        value_span = Span(word.span.line, word.span.column + prefix, word.span.end_line, word.span.end_column)
        [expanded] = self.expand(value_word, join=True) or [Word("", value_span, "")]
        if expanded.span == word.span:
            expanded.span = value_span
        if match.group(2) == "+":
            before = self.variables.get(match.group(1))
            if isinstance(before, Word) and before.known and expanded.known:
                expanded = Word(before.value + expanded.value, value_span, word.raw)
            else:
                expanded = Word(UNKNOWN, value_span, word.raw)
        return expanded

    def expand(self, word: _RawWord, join: bool = False) -> list:
        """A raw word's expansions: several words for `${array[@]}`, one otherwise."""
        if len(word.parts) == 1 and word.parts[0][0] == "array" and not join:
            value = self.variables.get(word.parts[0][1])
            if isinstance(value, list):
                return list(value)
            return [Word(UNKNOWN, word.span, word.raw)]
        if len(word.parts) == 1 and word.parts[0][0] == "var" and not word.parts[0][-1] and not join:
            # An unquoted $VAR is split into words, as bash does: GPT_ARGS="--a 1 --b 2".
            value, where = self._variable(word.parts[0], word.span)
            if value is not None and len(value.split()) > 1:
                return [Word(piece, where or word.span, word.raw) for piece in value.split()]
        text = ""
        origin = tail = None
        for part in word.parts:
            kind = part[0]
            if kind == "lit":
                text += part[1]
                continue
            if kind == "var":
                value, where = self._variable(part, word.span)
                if value is None:
                    return [Word(UNKNOWN, word.span, word.raw)]
                text += value
                if len(word.parts) == 1:
                    origin = where
                tail = where
            elif kind == "arith":
                value = self._arithmetic(part[1])
                if value is None:
                    return [Word(UNKNOWN, word.span, word.raw)]
                text += str(value)
            else:
                return [Word(UNKNOWN, word.span, word.raw)]
        last = word.parts[-1] if word.parts else None
        trailing = tail if last is not None and last[0] == "var" and "=" in text else None
        return [Word(text, origin or word.span, word.raw, value_span=trailing)]

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

    def _arithmetic(self, expr: str):
        """$(( ... )) over integers and known variables, evaluated on its syntax tree."""

        def replace(match):
            value = self.variables.get(match.group(1))
            if isinstance(value, Word) and value.known and str(value.value).lstrip("-").isdigit():
                return str(value.value)
            raise LookupError(match.group(1))

        try:
            text = re.sub(r"\$?\{?([A-Za-z_][A-Za-z0-9_]*)\}?", replace, expr)
            return _integer(ast.parse(text.strip(), mode="eval").body)
        except (LookupError, SyntaxError, ValueError, ZeroDivisionError):
            return None


_ARITHMETIC = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
               ast.FloorDiv: lambda a, b: a // b, ast.Div: lambda a, b: a // b, ast.Mod: lambda a, b: a % b}


def _integer(node) -> int:
    """Integer arithmetic as bash does it; anything else raises ValueError."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_integer(node.operand)
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        value = _ARITHMETIC[type(node.op)](_integer(node.left), _integer(node.right))
        if abs(value) < 1 << 62:
            return value
    raise ValueError("not integer arithmetic")


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

_BROKEN = re.compile(r"(?<!\\)\\([ \t]+)(#.*)?$")
_LOOKS_LIKE_ARGUMENT = re.compile(r"^\s+(-{1,2}[A-Za-z]|[A-Za-z_+~][\w.+~\-\[\]]*=|\$\{?\w)")


def _broken_continuations(text: str) -> list:
    lines = text.split("\n")
    found = []
    for index, line in enumerate(lines):
        match = _BROKEN.search(line)
        if not match or _in_quotes(line[: match.start()]) or line.lstrip().startswith("#"):
            continue
        dropped = 0
        for later in lines[index + 1:]:
            if not _LOOKS_LIKE_ARGUMENT.match(later):
                break
            dropped += 1
        if dropped == 0:
            continue
        span = Span(index + 1, match.start() + 1, index + 1, len(line) + 1)
        found.append(Continuation(span, dropped, comment=bool(match.group(2))))
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
