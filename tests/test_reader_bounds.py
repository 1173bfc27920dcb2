"""Hostile input for every reader: each one returns a Document or raises
ParseError/LimitExceeded, within 2 s, and the memory bombs stay far below
500 MB. Each bomb is generated here; where the outcome matters (an Unknown,
the bound a LimitExceeded names) it is checked too. The bounds are those of
lint/limits.py."""

import time
import tracemalloc

import pytest
import yaml

from batchlint import limits
from batchlint.document import Document, LimitExceeded, ParseError, Sequence, Span, Unknown
from batchlint.sources import read
from batchlint.sources.shell import UNKNOWN

SECONDS = 2.0
MEGABYTES = 500


def outcome(fmt, text, memory=False):
    """The Document or the ParseError `read` gives, checked for time; for a
    memory bomb, read again under tracemalloc (which slows reading several
    times over) and checked for memory."""
    start = time.perf_counter()
    result = _read(fmt, text)
    elapsed = time.perf_counter() - start
    assert elapsed < SECONDS, f"{elapsed:.2f} s"
    if memory:
        tracemalloc.start()
        try:
            _read(fmt, text)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < MEGABYTES << 20, f"{peak >> 20} MB"
    return result


def _read(fmt, text):
    try:
        result = read(f"hostile.{fmt}", text, fmt)
    except ParseError as exc:  # LimitExceeded is one
        return exc
    assert isinstance(result, Document)
    return result


def limit(fmt, text, memory=False):
    result = outcome(fmt, text, memory)
    assert isinstance(result, LimitExceeded), result
    return result


def document(fmt, text, memory=False):
    result = outcome(fmt, text, memory)
    assert isinstance(result, Document), result
    return result


def words(doc):
    return [[w.value for w in command.words] for command in doc.commands]


# -- every format ------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["python", "yaml", "toml", "json", "shell"])
def test_a_lone_surrogate_in_the_text_is_a_parse_error(fmt):
    result = outcome(fmt, "a = 1\nb: '\ud800'\n")
    assert type(result) is ParseError and result.line == 2 and "surrogate" in result.message


@pytest.mark.parametrize("name, text", [
    ("cfg.py", "train_dataloader = dict(batch_size=1)\nb = '\ud800'\n"),
    ("cfg.yaml", "per_device_train_batch_size: 1\nb: '\ud800'\n"),
    ("cfg.toml", "[training]\nb = '\ud800'\n"),
    ("cfg.json", '{"train_batch_size": 1,\n "b": "\ud800"}\n'),
    ("run.sh", "torchrun --nproc_per_node 8 train.py\necho '\ud800'\n"),
])
def test_a_buffer_holding_a_lone_surrogate_is_not_utf8(name, text, tmp_path):
    """The engine skips the surrogate search (`from_utf8`): an editor's text holding one reaches it
    as bytes that strict UTF-8 refuses, a BL001 at its line, never a reader's stumble."""
    from batchlint.config import Settings
    from batchlint.engine import Options, lint_file
    from batchlint.rules import RULES

    raw = text.encode("utf-8", "surrogatepass")
    result = lint_file(str(tmp_path / name), Settings(), Options(), RULES, raw=raw)
    assert result.error is None
    assert [(d.code, d.span.line) for d in result.diagnostics] == [("BL001", 2)]
    assert "not valid UTF-8" in result.diagnostics[0].message


@pytest.mark.parametrize(
    "fmt, text",
    [
        ("json", "[" * 100_000 + "]" * 100_000),
        ("yaml", "x: " + "[" * 100_000 + "]" * 100_000 + "\n"),
        ("yaml", "- " * 100_000 + "x\n"),
        ("toml", "x = " + "[" * 100_000 + "]" * 100_000 + "\n"),
        ("toml", "x = " + "{a=" * 10_000 + "1" + "}" * 10_000 + "\n"),
        ("python", "x = " + "(" * 100_000 + "1" + ")" * 100_000 + "\n"),
        ("python", "x = " + "-" * 50_000 + "1\n"),
        ("python", "x = " + "[" * 5000 + "]" * 5000 + "\n"),
    ],
    ids=["json", "yaml-flow", "yaml-block", "toml-arrays", "toml-inline", "python-parens", "python-unary",
         "python-lists"],
)
def test_deep_nesting_is_refused_without_a_crash(fmt, text):
    result = outcome(fmt, text)
    assert isinstance(result, ParseError) and result.line == 1  # Python's own parser may refuse it first


# -- numbers -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "fmt, text",
    [
        ("json", '{"a": ' + "9" * 5000 + "}"),
        ("json", '{"a": -' + "9" * 31 + "}"),
        ("yaml", "a: " + "9" * 5000 + "\n"),
        ("yaml", "a: 0x" + "f" * 5000 + "\n"),
        ("yaml", "a: " + ":".join(["59"] * 3000) + "\n"),
        ("toml", "a = 0x" + "f" * 5000 + "\n"),
        ("toml", "a = " + "9" * 31 + "\n"),
        ("python", "a = 0x" + "f" * 5000 + "\n"),
        ("python", "a = " + "9" * 31 + "\n"),
        ("python", "a = int('9' * 4000)\n"),
        ("python", "a = 10 ** 29 * 10\n"),
    ],
)
def test_an_integer_past_the_digit_bound_is_unknown(fmt, text):
    node = document(fmt, text).get("a")
    assert isinstance(node, Unknown)
    assert node.why.startswith("a number with") and node.why.endswith("digits"), node.why


def test_an_integer_past_pythons_own_limit_in_toml_is_a_limit_at_its_place():
    result = limit("toml", "a = 1\nb = " + "9" * 5000 + "\n")
    assert (result.line, result.column) == (2, 5)


def test_a_shell_word_holding_a_long_number_is_unknown():
    doc = document("shell", "N=" + "9" * 5000 + "\ntorchrun --nproc_per_node $N --nnodes 2 x.py\necho $((N + 1))\n")
    assert words(doc) == [["torchrun", "--nproc_per_node", UNKNOWN, "--nnodes", "2", "x.py"], ["echo", UNKNOWN]]


def test_a_launch_override_holding_a_long_number_stays_text():
    from batchlint.sources.plain import typed_plain

    assert typed_plain("9" * 31) == "9" * 31
    assert typed_plain("9" * 30) == int("9" * 30)


def test_a_float_past_its_range_stays_a_float():
    assert document("python", "x = float('1e999')\n").get("x").value == float("inf")
    assert document("json", '{"x": 1e999}').get("x").value == float("inf")


# -- lone surrogates written as escapes ------------------------------------------------


def test_an_escaped_lone_surrogate_does_not_reach_the_document():
    d = document("json", '{"\\ud800": 1, "b": "x\\udfffy"}')
    assert list(d.root) == ["\ufffd", "b"] and d.get("b").value == "x\ufffdy"
    d = document("python", "a = '\\ud800'\nb = {'\\udfff': 1}\n")
    assert d.get("a").value == "\ufffd" and list(d.get("b").items) == ["\ufffd"]
    for fmt, text in (("yaml", 'a: "\\ud800"\n'), ("toml", 'a = "\\ud800"\n')):
        assert type(outcome(fmt, text)) is ParseError  # both refuse the escape


# -- YAML ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["!!int", "!!int ''", "!!float", "!!float abc", "!!bool x", "!!int 0x", "!!float " + ":".join(["9"] * 500) + ".5"],
)
def test_a_yaml_tag_with_a_value_not_of_its_type_is_unknown(text):
    node = document("yaml", f"a: {text}\nb: 1\n").get("a")
    assert isinstance(node, Unknown)


@pytest.mark.parametrize(
    "text", ["!!timestamp", "!!timestamp 2001-13-45", "!!binary", "!!binary '@@'", "!foo bar", "!!null x"]
)
def test_other_yaml_tags_do_not_crash(text):
    assert document("yaml", f"a: {text}\nb: 1\n").get("b").value == 1


def test_a_valid_yaml_of_half_a_million_nodes_stops_at_the_node_bound():
    result = limit("yaml", "[" + "a," * 500_000 + "a]\n", memory=True)
    assert f"too many nodes: more than {limits.MAX_NODES:,}" in result.message
    assert "alias" not in result.message
    assert (result.line, result.column) == (1, 2 * limits.MAX_NODES)  # the first node past the bound


def test_a_billion_laughs_stops_at_the_node_bound_and_says_why():
    text = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(9)
    )
    result = limit("yaml", text, memory=True)
    assert "once its aliases are expanded" in result.message


def test_a_merge_key_bomb_stops_at_the_node_bound():
    text = "a: &a {" + ", ".join(f"k{i}: 1" for i in range(2000)) + "}\nb: {<<: [" + ", ".join(["*a"] * 50_000) + "]}\n"
    assert "too many nodes" in limit("yaml", text).message


def test_a_long_yaml_line_still_reads_with_libyaml(monkeypatch):
    assert yaml.__with_libyaml__

    def refused(*args, **kwargs):
        raise AssertionError("the pure-Python YAML loader was used")

    monkeypatch.setattr(yaml.SafeLoader, "__init__", refused)
    text = "a: " + "x" * 3000 + "\nb: [" + "[" * 150 + "1" + "]" * 150 + "]\n" + "c: [1, 2]\n" * 6000
    d = document("yaml", text)
    assert len(d.get("a").value) == 3000
    assert d.get("c").items[1].value == 2


def test_yaml_nesting_reads_up_to_the_bound_and_no_further():
    depth = limits.MAX_DEPTH
    d = document("yaml", "a: " + "[" * depth + "1" + "]" * depth + "\n")
    assert isinstance(d.get("a"), Sequence)
    assert "nesting" in limit("yaml", "a: " + "[" * (depth + 1) + "1" + "]" * (depth + 1) + "\n").message


# -- TOML ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["a" + ".a" * 20_000 + " = 1\n", "[a" + ".a" * 20_000 + "]\n", 'x = 1\n"a"' + '."a"' * 5000 + " = 1\n"]
)
def test_a_toml_key_of_thousands_of_parts_is_refused_before_tomllib(text):
    result = limit("toml", text, memory=True)
    assert f"more than {limits.MAX_TOML_KEY_PARTS} dotted parts" in result.message


def test_a_toml_key_of_many_parts_inside_a_string_or_comment_is_no_key():
    d = document("toml", "a = '" + "a." * 100 + "'  # " + "b." * 100 + "\n")
    assert d.get("a").value == "a." * 100


@pytest.mark.parametrize(
    "text",
    ["a = [" + "1," * 500_000 + "]\n", "".join(f"a{i} = 1\n" for i in range(100_000)), "[[a]]\n" * 150_000,
     "".join(f"a{i}." + ".".join(["k"] * 30) + " = 1\n" for i in range(12_000))],
    ids=["array", "keys", "tables", "dotted-keys"],
)
def test_a_toml_of_too_many_values_is_refused(text):
    assert "too many values" in limit("toml", text, memory=True).message


# -- JSON ----------------------------------------------------------------------------


def test_a_json_of_too_many_values_is_refused_where_the_bound_is_passed():
    result = limit("json", "[" + "0," * 499_999 + "0]", memory=True)
    assert f"more than {limits.MAX_NODES:,}" in result.message
    assert (result.line, result.column) == (1, 2 * limits.MAX_NODES)


# -- Python --------------------------------------------------------------------------


def test_the_f_string_bomb_is_unknown_and_cheap():
    # Eight lines, each twenty times the one before: a gigabyte by the fourth if joined.
    text = "a = 'x' * 10000\n" + "".join(f"{name} = f'" + ("{" + before + "}") * 20 + "'\n"
                                         for before, name in zip("abcdefg", "bcdefgh"))
    d = document("python", text, memory=True)
    assert d.get("a").value == "x" * 10000
    for name in "bcdefgh":
        assert isinstance(d.get(name), Unknown), name
    assert "characters" in d.get("b").why


@pytest.mark.parametrize(
    "expression",
    ["round(1, -10 ** 9)", "[0] * 10 ** 8", "'a' * 10 ** 9", "10 ** 10 ** 10", "1 << 10 ** 9", "int('9' * 5000)",
     "2 ** 10 ** 6", "(-2) ** (10 ** 9)", "2.0 ** 10 ** 9", "[1, 2][0:10 ** 100]", "'%s' * 5000 % tuple(range(5000))",
     "''.join(['a'] * 10 ** 9)",
     "'{}'.format('a' * 10 ** 9)", "max(range(10 ** 12))", "len(range(10 ** 20))", "sum(range(10 ** 12))"],
)
def test_costly_python_expressions_are_unknown_at_once(expression):
    d = document("python", f"x = {expression}\ny = 1\n", memory=True)
    assert isinstance(d.get("x"), Unknown) and d.get("y").value == 1


def test_a_power_of_one_is_computed_whatever_its_exponent():
    d = document("python", "x = (-1) ** (10 ** 9)\ny = 0.5 ** 10 ** 9\n")
    assert (d.get("x").value, d.get("y").value) == (1, 0.0)


@pytest.mark.parametrize("value", ["'ab'", "[1, 2]"])
def test_doubling_a_python_value_two_hundred_times_is_bounded(value):
    d = document("python", f"x = {value}\n" + "x = x + x\n" * 200 + "y = len(x)\n", memory=True)
    assert isinstance(d.get("x"), Unknown) and isinstance(d.get("y"), Unknown)


def test_a_value_shared_two_hundred_times_is_unknown_for_whoever_walks_it():
    d = document("python", "x = [1]\n" + "x = [x, x]\n" * 200 + "y = len(x)\nz = x == x\nw = [1, 2]\n", memory=True)
    assert isinstance(d.get("x"), Unknown) and isinstance(d.get("y"), Unknown) and isinstance(d.get("z"), Unknown)
    assert [item.value for item in d.get("w").items] == [1, 2]


def test_a_shared_part_that_grows_in_place_after_it_was_measured_is_counted_at_its_new_size():
    # The reader measures each container as it builds it; `a["k"] = big` changes one of them
    # after `b` counted it a hundred times, small: b is past MAX_NODES only by a's new size.
    big = "[" + "0, " * 1_000 + "]"
    shared = "a = dict(k=1)\nb = [" + "a, " * 100 + "]\n"
    d = document("python", shared + f"a['k'] = {big}\n")
    assert isinstance(d.get("b"), Unknown) and "past" in d.get("b").why
    d = document("python", shared + "a['k'] = [0, 0]\n")  # the same change, a small value: b stays known
    assert len(d.get("b").items) == 100 and d.get("b").items[0].get("k").items[1].value == 0


def test_a_long_chain_of_derived_values_is_read_in_linear_time():
    text = "x0 = 1\n" + "".join(f"x{i} = x{i - 1} + 1\n" for i in range(1, 15_000))
    d = document("python", text)
    assert d.get("x14999").value == 15_000
    assert len(d.get("x14999").deps) <= limits.MAX_DEPS


@pytest.mark.parametrize(
    "text",
    ["x = [" + "0," * 500_000 + "]\n", "x = {" + "0: 0," * 200_000 + "}\n", "x = 1\n" * 170_000,
     "x = (1" + " < 2" * 200_000 + ")\n"],
    ids=["list", "dict", "statements", "comparisons"],
)
def test_python_source_of_too_many_tokens_is_refused_before_parsing(text):
    assert "too many tokens" in limit("python", text, memory=text.startswith("x = [")).message


def test_an_f_string_of_too_many_fields_is_refused_before_parsing():
    result = limit("python", "a = 1\nx = f'" + "{a}" * (limits.MAX_FSTRING_FIELDS + 1) + "'\n")
    assert "f-string" in result.message and result.line == 2


def test_python_constructs_not_evaluated_are_unknown():
    text = (
        "f = lambda x: x\nif (n := 10):\n    m = 1\nmatch n:\n    case 1:\n        y = 2\n"
        "def g():\n    def h():\n        return 1\n    return h\nc = (1 < 2 < 3 < 4)\nb = b'x'\nz = 1j\n"
    )
    d = document("python", text)
    assert isinstance(d.get("f"), Unknown) and isinstance(d.get("y"), Unknown)
    assert d.get("c").value is True
    assert isinstance(d.get("b"), Unknown) and isinstance(d.get("z"), Unknown)  # no bytes or complex values


def test_python_nul_bytes_carriage_returns_and_form_feeds():
    assert isinstance(outcome("python", "x = 1\x00\n"), ParseError)
    d = document("python", "x = 1\ry = 2\r\n\x0cz = 3\n")
    assert [d.get(name).span.line for name in "xyz"] == [1, 2, 3]
    assert d.get("z").span == Span(3, 6, 3, 7)


def test_python_one_megabyte_line():
    before = "x = '" + "é" * 500_000 + "'; y = ["  # non-ASCII: ast's byte columns become character columns
    d = document("python", before + "1, " * 30_000 + "]\n")
    assert len(d.get("x").value) == 500_000
    assert d.get("y").items[-1].span.column == len(before) + 3 * 29_999 + 1


# -- shell ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["a=xx\n" + "a=$a$a\n" * 40, "a=xx\n" + 'a="$a$a"\n' * 40, "a=xx\n" + "a+=$a\n" * 40,
     "a='x x'\n" + 'a="$a $a"\n' * 40],
    ids=["unquoted", "quoted", "append", "split"],
)
def test_a_doubled_shell_variable_is_unknown(text):
    doc = document("shell", text + "torchrun --nproc_per_node $a x.py\n", memory=True)
    assert doc.variables["a"].value is UNKNOWN
    assert words(doc) == [["torchrun", "--nproc_per_node", UNKNOWN, "x.py"]]


def test_a_doubled_shell_array_stops_at_the_word_bound():
    result = limit("shell", "a=(x x)\n" + "a+=(${a[@]})\n" * 40, memory=True)
    assert f"more than {limits.MAX_NODES:,} words" in result.message


def test_a_long_variable_used_many_times_stops_at_the_output_bound():
    text = "v=" + "x" * 60_000 + "\n" + "cmd $v $v $v $v\n" * 100
    assert "expands to more than" in limit("shell", text, memory=True).message


@pytest.mark.parametrize("run", ["eval $cmd", 'bash -c "$cmd"'])
def test_a_string_that_runs_itself_many_times_stops_at_a_bound_at_its_command(run):
    """`cmd='eval $cmd;eval $cmd;...'`: each text parsed again runs it again, within bounds."""
    text = "export cmd='" + ";".join([run] * 200) + "'\n" + run + "\n"  # exported: child shells see it
    error = limit("shell", text, memory=True)
    assert "expands to more than" in error.message and (error.line, error.column) == (2, 1)


@pytest.mark.parametrize("quote", ["", "'", '"'])
def test_a_one_megabyte_shell_word_is_read_in_linear_time(quote):
    doc = document("shell", "cmd " + quote + "x" * 1_000_000 + quote + "\n")
    assert words(doc) == [["cmd", UNKNOWN]]  # longer than MAX_LENGTH


def test_a_megabyte_of_short_shell_lines_stops_at_the_word_bound():
    result = limit("shell", "echo a\n" * 150_000)
    assert result.line == limits.MAX_NODES // 2 + 1


@pytest.mark.parametrize(
    "text, expected",
    [
        ("echo $((" + "(" * 100_000 + "7" + ")" * 100_000 + "))\n", ["echo", "7"]),
        ("echo " + "$(" * 100_000 + ")" * 100_000 + "\n", ["echo", UNKNOWN]),
        ("echo " + "${a:-" * 100_000 + "}" * 100_000 + "\n", ["echo", UNKNOWN]),
        ("echo {1..100000000} {a,b}{c,d}\n", ["echo", UNKNOWN, UNKNOWN]),
        ("x=abc\necho ${#x} ${x:0:999999999} ${x//a/b} ${x^^}\n", ["echo", UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN]),
        ("echo $((1/0)) $((1%0)) $((1<<-1)) $((2**99999999)) $((9**9**9)) $((-5/2)) $((-5%2)) $((2**62))\n",
         ["echo", UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN, "-2", "-1", str(2**62)]),
        ("echo `date` \"`id`\" $(( \n", ["echo", UNKNOWN, UNKNOWN, UNKNOWN]),
    ],
    ids=["arithmetic-parens", "substitutions", "defaults", "braces", "parameters", "arithmetic", "unterminated"],
)
def test_shell_expansions_that_are_not_followed_are_unknown(text, expected):
    assert words(document("shell", text))[-1] == expected


@pytest.mark.parametrize("text", ["echo 'abc\n", 'echo "abc\n', "echo $(abc\n", "cat <<EOF\nabc\n", "echo ${abc\n"])
def test_unterminated_shell_text_is_no_crash(text):
    outcome("shell", text)


def test_an_array_as_env_prefix_or_in_a_declaration():
    text = (
        "arr=(a b) torchrun --nproc_per_node 8 x.py\nX=(1 2) cmd\ndeclare -a A=(1 2)\nlocal B=(x y)\n"
        "declare -A M=([k]=v)\ndeclare -i n=5+3\nC=(1 2)\nC[1]=5\necho ${A[@]} $B $n ${M[k]} ${C[@]}\n"
    )
    doc = document("shell", text)
    first, second, echo = doc.commands
    assert first.env["arr"].value is UNKNOWN and first.env["arr"].span == Span(1, 1, 1, 10)
    assert words(doc)[0] == ["torchrun", "--nproc_per_node", "8", "x.py"]
    assert second.env["X"].value is UNKNOWN
    assert [w.value for w in echo.words] == ["echo", "1", "2", "x", UNKNOWN, UNKNOWN, UNKNOWN]
    assert "arr" not in doc.variables


def test_shell_crlf_nul_and_line_breaks_count_only_newlines():
    doc = document("shell", "A=1\r\nB=\x002\r\ntorchrun --nproc_per_node $A \x0cx.py\u2028y\r\n")
    [command] = doc.commands
    # CRLF is read as a line end (as the author meant it; BL601 reports a `\` it breaks), while
    # \f and U+2028 stay characters of the line.
    assert [w.value for w in command.words] == ["torchrun", "--nproc_per_node", "1", "\x0cx.py\u2028y"]
    assert command.words[3].span == Span(3, 30, 3, 37)
