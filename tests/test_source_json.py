"""The JSON reader: a small parser that keeps the position of every key and value."""

import json
import textwrap
import time

import pytest

from batchlint.document import Mapping, ParseError, Scalar, Sequence, Span, Unknown
from batchlint.sources import format_of, read


def doc(text):
    return read("ds_config.json", textwrap.dedent(text).lstrip("\n"), "json")


def plain(node):
    if isinstance(node, Scalar):
        return node.value
    if isinstance(node, Mapping):
        return {key: plain(item) for key, item in node.items.items()}
    return [plain(item) for item in node.items]


DEEPSPEED = """
{
  "train_batch_size": 256,
  "train_micro_batch_size_per_gpu": 4,
  "gradient_accumulation_steps": "auto",
  "bf16": {"enabled": true},
  "optimizer": {
    "type": "AdamW",
    "params": {"lr": 2e-5, "betas": [0.9, 0.999], "eps": 1e-8, "weight_decay": 0.0}
  },
  "zero_optimization": {"stage": 2, "offload": null},
  "steps": [1, [2, 3], {"four": 4}, [], {}]
}
"""


def test_json_suffix():
    assert format_of("ds.json") == "json"
    assert format_of("ds.JSON") == "json"


def test_values_match_the_standard_json_module():
    d = doc(DEEPSPEED)
    assert d.format == "json"
    assert plain(d.root) == json.loads(DEEPSPEED)


def test_numbers_int_and_float():
    d = doc('{"i": 4, "neg": -12, "zero": 0, "f": 0.5, "e": 2e-5, "E": 1E+2, "fe": -1.5e-3, "big": 1e999}')
    types = {key: type(node.value) for key, node in d.root.items.items()}
    assert types == {"i": int, "neg": int, "zero": int, "f": float, "e": float, "E": float, "fe": float, "big": float}
    assert d.get("neg").value == -12
    assert d.get("E").value == 100.0
    assert d.get("fe").value == -0.0015
    assert d.get("big").value == float("inf")
    assert d.get("i").quoted is False


def test_strings_are_quoted_and_decoded():
    d = doc(r'{"auto": "auto", "esc": "a\"b\\c\u00e9\n", "num": "4"}')
    assert d.get("auto").value == "auto" and d.get("auto").quoted
    assert d.get("esc").value == 'a"b\\cé\n'
    assert d.get("num").value == "4" and isinstance(d.get("num").value, str)


def test_literals():
    d = doc('{"t": true, "f": false, "n": null}')
    assert d.get("t").value is True
    assert d.get("f").value is False
    assert d.get("n").value is None


def test_positions_of_values_and_keys():
    d = doc(DEEPSPEED)
    assert d.get("train_batch_size").span == Span(2, 23, 2, 26)
    assert d.root.key_spans["train_batch_size"] == Span(2, 3, 2, 21)  # with its quotes
    assert d.get("gradient_accumulation_steps").span == Span(4, 34, 4, 40)
    assert d.get("bf16", "enabled").span == Span(5, 23, 5, 27)
    assert d.get("bf16").key_spans["enabled"] == Span(5, 12, 5, 21)
    assert d.get("bf16").span == Span(5, 11, 5, 28)
    params = d.get("optimizer", "params")
    assert params.get("lr").span == Span(8, 22, 8, 26)
    assert params.get("betas").span == Span(8, 37, 8, 49)
    assert params.get("betas").items[1].span == Span(8, 43, 8, 48)
    assert d.get("optimizer").span == Span(6, 16, 9, 4)
    assert d.get("zero_optimization", "offload").span == Span(10, 48, 10, 52)
    assert d.root.span == Span(1, 1, 12, 2)


def test_nested_objects_and_arrays():
    d = doc(DEEPSPEED)
    steps = d.get("steps")
    assert isinstance(steps, Sequence)
    assert isinstance(steps.items[1], Sequence)
    assert [i.value for i in steps.items[1].items] == [2, 3]
    assert isinstance(steps.items[2], Mapping)
    assert steps.items[2].get("four").value == 4
    assert steps.items[3].items == [] and steps.items[3].span == Span(11, 37, 11, 39)
    assert steps.items[4].items == {} and steps.items[4].span == Span(11, 41, 11, 43)


def test_columns_count_characters_after_non_ascii_text():
    d = doc('{"名前": "ünï", "batch": 8}\n')
    assert d.root.key_spans["名前"] == Span(1, 2, 1, 6)
    assert d.get("名前").span == Span(1, 8, 1, 13)
    assert d.get("batch").span == Span(1, 24, 1, 25)


def test_crlf_line_endings():
    d = read("c.json", '{\r\n  "a": 1,\r\n  "b": [\r\n    2\r\n  ]\r\n}\r\n', "json")
    assert d.get("a").span == Span(2, 8, 2, 9)
    assert d.get("b").items[0].span == Span(4, 5, 4, 6)
    assert d.get("b").span == Span(3, 8, 5, 4)


def test_duplicate_keys_are_recorded_and_the_last_wins():
    d = doc(
        """
        {
          "train_batch_size": 8,
          "zero_optimization": {"stage": 1, "stage": 3},
          "train_batch_size": 16
        }
        """
    )
    assert d.get("train_batch_size").value == 16  # as json.loads
    assert d.root.duplicates == [("train_batch_size", Span(4, 3, 4, 21))]
    assert d.root.key_spans["train_batch_size"] == Span(4, 3, 4, 21)
    zero = d.get("zero_optimization")
    assert zero.get("stage").value == 3
    assert zero.duplicates == [("stage", Span(3, 37, 3, 44))]
    assert doc('{"a": 1, "b": {"a": 2}}').root.duplicates == []


@pytest.mark.parametrize("text", ["[1, 2]", '"text"', "4", "null"])
def test_a_top_level_value_that_is_not_an_object_gives_an_empty_root(text):
    d = read("c.json", text, "json")
    assert isinstance(d.root, Mapping)
    assert d.root.items == {}
    assert d.root.span.line == 1


@pytest.mark.parametrize(
    "text, line, column",
    [
        ('{"a": 1,}', 1, 9),
        ('{"a": 1 "b": 2}', 1, 9),
        ('{\n  "a": 1,\n  "b" 2\n}', 3, 7),
        ("{'a': 1}", 1, 2),
        ('{"a": tru}', 1, 7),
        ('{"a": 01}', 1, 8),
        ('{"a": [1, 2}', 1, 12),
        ('{"a": 1} {}', 1, 10),
        ('{"a": "x\ny"}', 1, 9),
        ('{"a": "unterminated', 1, 7),
        ('{\n  "a": NaN\n}', 2, 8),
        ('{"a": -}', 1, 7),
        ('{"é": ü}', 1, 7),
        ("", 1, 1),
        ("{", 1, 2),
    ],
)
def test_syntax_errors_have_line_and_column(text, line, column):
    with pytest.raises(ParseError) as caught:
        read("bad.json", text, "json")
    assert (caught.value.line, caught.value.column) == (line, column)
    assert caught.value.message.startswith("JSON syntax error: ")


@pytest.mark.parametrize("digits", [31, 5000])
def test_an_integer_with_too_many_digits_is_unknown_where_it_is(digits):
    d = read("big.json", '{\n "a": -' + "1" * digits + ', "b": 2}', "json")
    assert isinstance(d.get("a"), Unknown)
    assert d.get("a").why == f"a number with {digits:,} digits"
    assert d.get("a").span == Span(2, 7, 2, 8 + digits)
    assert d.get("b").value == 2
    assert read("ok.json", '{"a": ' + "9" * 30 + "}", "json").get("a").value == int("9" * 30)


def test_reasonable_nesting_reads():
    depth = 150
    d = read("deep.json", '{"a": ' * depth + "1" + "}" * depth, "json")
    node = d.root
    for _ in range(depth):
        node = node.items["a"]
    assert node.value == 1


@pytest.mark.parametrize("opener, closer", [("[", "]"), ('{"a":', "}")])
def test_absurd_nesting_is_a_parse_error_at_the_fault(opener, closer):
    depth = 100_000
    start = time.perf_counter()
    with pytest.raises(ParseError) as caught:
        read("deep.json", opener * depth + "1" + closer * depth, "json")
    assert time.perf_counter() - start < 2
    assert "nesting is too deep" in caught.value.message
    assert caught.value.line == 1
    assert caught.value.column > 100  # where the nesting went too deep, not the top of the file
