"""The control flow of a launch script: its if/case/loop blocks, and the tests a known value decides.

shell.py's lexer gives a flat list of commands (`_Raw`); `parse` nests them into the blocks bash
runs them in (tolerant: a block the text never closes ends with the text, a stray keyword is
skipped). `test_result` and `glob_match` decide `[ ... ]`, `test ...`, `[[ ... ]]` and case patterns
over known strings, as bash does, or give None when bash's answer is not certain here (a file
test, an unknown value, a regular expression, a locale's collation). Everything is linear in the
script: each command is looked at once, each pattern match is bounded.
"""

from __future__ import annotations

import re

from ..document import LimitExceeded, Span
from ..lazy_pattern import LazyPattern
from ..lean_dataclass import field, lean_dataclass, replace
from ..limits import MAX_SHELL_NESTING

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

# The keywords a command may start with before the command itself (`then A=1`, `else if [ x ]`).
COMMAND_PREFIX = frozenset({"if", "elif", "while", "until", "then", "else", "do", "!", "{", "time"})
CLOSERS = frozenset({"fi", "done", "esac", "}"})
CASE_ENDS = (";;", ";&", ";;&")
NAME = LazyPattern(r"[A-Za-z_][A-Za-z0-9_]*")
ASSIGNMENT = LazyPattern(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=")  # `X=`, `X+=`: the name, whether it appends


@lean_dataclass
class _Raw:
    """One command as lexed: its words (not expanded), where it stands, and what follows it."""

    words: list
    span: Span
    heredocs: list = field(default_factory=list)
    joined: str = ""  # the operator after it: && || | ; & newline, ")" (a subshell's end), "" (the text's end)
    kind: str = ""  # "" a command; "pattern": a case item's patterns; ";;", ";&", ";;&": the item's end
    subshell: int = 0  # how many `( ... )` subshells it runs in


@lean_dataclass
class Simple:
    raw: _Raw  # the command, without the keywords before it

    @property
    def joined(self) -> str:
        return self.raw.joined


@lean_dataclass
class If:
    clauses: list  # [(condition nodes, body nodes)]: `if` and each `elif`
    otherwise: Optional[list]  # the `else` body
    joined: str = ""
    subshell: int = 0


@lean_dataclass
class Case:
    subject: Optional[object]  # the _RawWord after `case`
    items: list  # [(pattern words, body nodes, terminator)]
    joined: str = ""
    subshell: int = 0


@lean_dataclass
class Loop:
    condition: list  # a while/until loop's condition
    variable: Optional[object]  # a for/select loop's variable (a _RawWord)
    body: list
    joined: str = ""
    subshell: int = 0
    until: bool = False  # an until loop: its body runs while the condition fails


@lean_dataclass
class Group:
    body: list
    function: bool  # a function's body: run when called, not where it stands
    joined: str = ""
    subshell: int = 0


def parse(raws: list) -> list:
    """The nodes of a script's commands (blocks nest at most as deep as the lexer allowed)."""
    return _Parser(_tokens(raws)).sequence(frozenset())[0]


def _tokens(raws: list) -> list:
    """(keyword, raw) for each block keyword, ("cmd", raw) for each command without its keywords,
    ("pattern", raw) and (";;", raw) for a case's items."""
    tokens = []
    for raw in raws:
        if raw.kind:
            tokens.append((raw.kind, raw))
            continue
        words = raw.words
        index = 0
        while index < len(words):
            word = words[index].raw
            if word in CLOSERS:
                tokens.append((word, raw))  # what follows a closer is a redirection: `done < list`
                break
            if word in ("for", "select", "case"):
                tokens.append((word, replace(raw, words=words[index + 1:])))
                break
            if word in COMMAND_PREFIX and word != "!":
                tokens.append((word, raw))
                index += 1
                continue
            rest = words[index:]
            brace = 2 if rest[0].raw == "function" else 1
            if rest[-1].raw == "{" and (len(rest) == 2 or rest[0].raw == "function"):
                tokens.append(("function", raw))  # `name() {`, `function name {`
            elif len(rest) > brace + 1 and rest[brace].raw == "{":  # `name() { cmd; }` on one line: its body
                tokens.append(("function", replace(raw, words=rest[:brace + 1])))
                tokens.append(("cmd", replace(raw, words=rest[brace + 1:])))
            else:
                tokens.append(("cmd", replace(raw, words=rest)))
            break
    return tokens


class _Parser:
    def __init__(self, tokens: list):
        self.tokens = tokens
        self.i = 0
        self.open: list = []  # the keywords that end each block being read

    def sequence(self, stops: frozenset) -> tuple:
        """Nodes up to a keyword of `stops` (left unread) or the end: (nodes, that keyword or None). A
        keyword that ends an enclosing block ends this one too (a block the text does not close)."""
        if len(self.open) > MAX_SHELL_NESTING:
            span = self.tokens[min(self.i, len(self.tokens) - 1)][1].span
            raise LimitExceeded(f"launch script nests blocks deeper than {MAX_SHELL_NESTING}", span.line, span.column)
        self.open.append(stops)
        try:
            return self._sequence(stops)
        finally:
            self.open.pop()

    def _sequence(self, stops: frozenset) -> tuple:
        nodes: list = []
        while self.i < len(self.tokens):
            kind, raw = self.tokens[self.i]
            if kind in stops:
                return nodes, kind
            if kind in CLOSERS and any(kind in enclosing for enclosing in self.open):
                return nodes, None
            self.i += 1
            if kind == "cmd":
                nodes.append(Simple(raw))
            elif kind == "if":
                nodes.append(self._if(raw))
            elif kind in ("while", "until"):
                condition, _ = self.sequence(frozenset({"do"}))
                nodes.append(self._loop(condition, raw, None))
                nodes[-1].until = kind == "until"
            elif kind in ("for", "select"):
                nodes.append(self._loop([], raw, raw.words[0] if raw.words else None))
            elif kind == "case":
                nodes.append(self._case(raw))
            elif kind in ("{", "function"):
                body, stop = self.sequence(frozenset({"}"}))
                nodes.append(Group(body, kind == "function", self._close(stop), raw.subshell))
            # any other keyword here is one bash would refuse: skipped
        return nodes, None

    def _close(self, stop: Optional[str]) -> str:
        """Read the closing keyword (when there is one): the operator after it."""
        if stop is None:
            return ""
        raw = self.tokens[self.i][1]
        self.i += 1
        return raw.joined

    def _if(self, raw: _Raw) -> If:
        clauses = []
        otherwise = None
        stop = "elif"
        while stop == "elif":
            condition, stop = self.sequence(frozenset({"then"}))
            if stop is not None:
                self.i += 1
            body, stop = self.sequence(frozenset({"elif", "else", "fi"}))
            clauses.append((condition, body))
            if stop == "elif":
                self.i += 1
        if stop == "else":
            self.i += 1
            otherwise, stop = self.sequence(frozenset({"fi"}))
        return If(clauses, otherwise, self._close(stop), raw.subshell)

    def _loop(self, condition: list, raw: _Raw, variable) -> Loop:
        if self.i < len(self.tokens) and self.tokens[self.i][0] == "do":
            self.i += 1
        body, stop = self.sequence(frozenset({"done"}))
        return Loop(condition, variable, body, self._close(stop), raw.subshell)

    def _case(self, raw: _Raw) -> Case:
        subject = raw.words[0] if raw.words else None
        items = []
        ends = frozenset({"pattern", "esac"} | set(CASE_ENDS))
        while self.i < len(self.tokens):
            kind, item = self.tokens[self.i]
            if kind == "esac":
                break
            self.i += 1
            if kind != "pattern":  # not read as items: one body, not decided
                self.i -= 1
                body, stop = self.sequence(frozenset({"esac"}))
                return Case(None, [([], body, "")], self._close(stop), raw.subshell)
            body, stop = self.sequence(ends)
            terminator = ""
            if stop in CASE_ENDS:
                terminator = stop
                self.i += 1
            items.append((item.words, body, terminator))
        stop = "esac" if self.i < len(self.tokens) else None
        return Case(subject, items, self._close(stop), raw.subshell)


def exits(nodes: list) -> bool:
    """Whether a body ends the script whatever it meets (an `exit` among its own commands)."""
    return any(isinstance(node, Simple) and node.raw.words and node.raw.words[0].raw == "exit"
               or isinstance(node, Group) and not node.function and exits(node.body) for node in nodes)


# -- tests over known strings ------------------------------------------------------------

_INTEGER = LazyPattern(r"\s*[-+]?[0-9]{1,18}\s*")
_INTEGER_TESTS = {"-eq": lambda a, b: a == b, "-ne": lambda a, b: a != b, "-lt": lambda a, b: a < b,
                  "-le": lambda a, b: a <= b, "-gt": lambda a, b: a > b, "-ge": lambda a, b: a >= b}


def integer_test(op: str, left: str, right: str) -> Optional[bool]:
    """`-gt` and the like over two integers; None when either is not one (bash: an error)."""
    if not (_INTEGER.fullmatch(left) and _INTEGER.fullmatch(right)):
        return None
    return _INTEGER_TESTS[op](int(left), int(right))


def binary_test(op: str, left: str, right: str) -> Optional[bool]:
    """`[ a OP b ]` as test(1) reads it: string (in)equality, integer comparison, -a, -o."""
    if op in ("=", "=="):
        return left == right
    if op == "!=":
        return left != right
    if op in _INTEGER_TESTS:
        return integer_test(op, left, right)
    if op == "-a":
        return left != "" and right != ""
    if op == "-o":
        return left != "" or right != ""
    return None  # `<` `>` (redirections in `[`), file comparisons


def test_result(args: list) -> Optional[bool]:
    """`test ARGS` / `[ ARGS ]` over known strings, by the number of arguments as POSIX specifies;
    None for a file test or what bash would report as an error."""
    count = len(args)
    if count == 0:
        return False
    if count == 1:
        return args[0] != ""
    if count == 2:
        op, value = args
        if op == "!":
            return value == ""
        if op == "-z":
            return value == ""
        if op == "-n":
            return value != ""
        return None
    if count == 3:
        if args[1] in ("=", "==", "!=", "-a", "-o") or args[1] in _INTEGER_TESTS:
            return binary_test(args[1], args[0], args[2])
        if args[0] == "!":
            inner = test_result(args[1:])
            return None if inner is None else not inner
        if args[0] == "(" and args[2] == ")":
            return args[1] != ""
        return None
    if count == 4 and args[0] == "!":
        inner = test_result(args[1:])
        return None if inner is None else not inner
    return None


# -- glob patterns: case items, [[ x == pattern ]] -----------------------------------------

MAX_GLOB_TEXT = 4096  # characters of a string matched against a pattern (the match is text x pattern)
MAX_GLOB_PATTERN = 256


def glob_match(text: str, pattern: str) -> Optional[bool]:
    """Whether `text` matches the bash pattern (`*`, `?`, `[a-z]`, `[!x]`); None for what is not
    followed here (character classes, extended globs) or past the bounds."""
    if len(text) > MAX_GLOB_TEXT or len(pattern) > MAX_GLOB_PATTERN:
        return None
    if "[:" in pattern or re.search(r"[?*+@!]\(", pattern):
        return None
    tokens = _glob_tokens(pattern)
    # Wildcard matching with one backtrack point (the last `*`): at most len(text) x len(tokens) steps.
    t = p = 0
    star = mark = -1
    while t < len(text):
        if p < len(tokens) and tokens[p] != "*" and _one(tokens[p], text[t]):
            t, p = t + 1, p + 1
        elif p < len(tokens) and tokens[p] == "*":
            star, mark, p = p, t, p + 1
        elif star >= 0:
            mark += 1
            t, p = mark, star + 1
        else:
            return False
    while p < len(tokens) and tokens[p] == "*":
        p += 1
    return p == len(tokens)


def _glob_tokens(pattern: str) -> list:
    """"*", or a set of characters as (negated, characters, ranges), or a single character."""
    tokens: list = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "*":
            if not tokens or tokens[-1] != "*":
                tokens.append("*")
        elif ch == "?":
            tokens.append((True, "", ()))  # any character: a negated empty set
        elif ch == "[":
            start = i + 1
            start += pattern[start:start + 1] in ("!", "^")
            start += pattern[start:start + 1] == "]"  # a `]` first is one of the set
            close = pattern.find("]", start)
            if close < 0:
                tokens.append(("c", ch))
            else:
                body = pattern[i + 1:close]
                negated = body[:1] in ("!", "^")
                tokens.append((negated,) + _members(body[1:] if negated else body))
                i = close
        else:
            tokens.append(("c", ch))
        i += 1
    return tokens


def _members(body: str) -> tuple:
    """The single characters and the ranges (`a-z`) of a bracket expression."""
    singles, ranges = [], []
    k = 0
    while k < len(body):
        if k + 2 < len(body) and body[k + 1] == "-":
            ranges.append((body[k], body[k + 2]))
            k += 3
        else:
            singles.append(body[k])
            k += 1
    return "".join(singles), tuple(ranges)


def _one(token, ch: str) -> bool:
    if token[0] == "c":
        return token[1] == ch
    negated, characters, ranges = token
    inside = ch in characters or any(low <= ch <= high for low, high in ranges)
    return inside != negated


# -- state a branch can run apart in -------------------------------------------------------

ABSENT = object()  # a name not in a Store


class Store(dict):
    """A dict whose changes can be taken back: begin(), run a branch, end(undo=True) gives what it
    changed and puts the dict back. A branch costs the names it changes, never the dict's size."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.logs: list = []  # per open begin(): name -> its value at begin() (ABSENT: not there)

    def _note(self, key) -> None:
        if self.logs and key not in self.logs[-1]:
            self.logs[-1][key] = dict.get(self, key, ABSENT)

    def __setitem__(self, key, value) -> None:
        self._note(key)
        super().__setitem__(key, value)

    def __delitem__(self, key) -> None:
        self._note(key)
        super().__delitem__(key)

    def pop(self, key, *default):
        if key in self:
            self._note(key)
        return super().pop(key, *default)

    def update(self, *args, **kwargs) -> None:
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def begin(self) -> None:
        self.logs.append({})

    def end(self, undo: bool) -> dict:
        """The names changed since begin() with their values now (ABSENT: removed); `undo`: the
        values of begin() are put back, else the changes stay (and are the enclosing begin()'s too)."""
        log = self.logs.pop()
        now = {key: dict.get(self, key, ABSENT) for key in log}
        if undo:
            for key, old in log.items():
                if old is ABSENT:
                    super().pop(key, None)
                else:
                    super().__setitem__(key, old)
        elif self.logs:
            for key, old in log.items():
                self.logs[-1].setdefault(key, old)
        return now
