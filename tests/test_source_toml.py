"""The TOML reader: values from tomllib, positions from a line locator."""

import datetime
import textwrap

import pytest

from batchlint.document import Mapping, ParseError, Scalar, Sequence, Span
from batchlint.sources import format_of, read


def doc(text):
    return read("config.toml", textwrap.dedent(text).lstrip("\n"), "toml")


def at(d, *path):
    """The node at `path`, where an int steps into a sequence."""
    node = d.root
    for step in path:
        node = node.items[step]
    return node


def test_toml_suffix():
    assert format_of("train.toml") == "toml"


def test_values_and_positions_in_tables():
    d = doc(
        """
        title = "llama3"
        [training]
        local_batch_size = 8
        lr = 3e-4
        mixed = true
        steps = 1_000
        [parallelism]
        data_parallel_shard_degree = -1
        """
    )
    assert d.format == "toml"
    assert d.get("title").value == "llama3"
    assert d.get("title").span == Span(1, 9, 1, 17)
    training = d.get("training")
    assert isinstance(training, Mapping)
    values = {key: node.value for key, node in training.items.items()}
    assert values == {"local_batch_size": 8, "lr": 3e-4, "mixed": True, "steps": 1000}
    assert type(values["local_batch_size"]) is int and type(values["lr"]) is float
    assert training.span == Span(2, 1, 2, 11)
    assert d.root.key_spans["training"] == Span(2, 1, 2, 11)
    assert training.items["local_batch_size"].span == Span(3, 20, 3, 21)
    assert training.key_spans["local_batch_size"] == Span(3, 1, 3, 17)
    assert training.items["lr"].span == Span(4, 6, 4, 10)
    assert d.get("parallelism", "data_parallel_shard_degree").value == -1
    assert d.get("parallelism", "data_parallel_shard_degree").span == Span(8, 30, 8, 32)


def test_scalar_types():
    d = doc(
        """
        s = 'literal'
        f = 1.5
        inf = inf
        hex = 0xff
        date = 2024-01-02
        """
    )
    assert d.get("s").value == "literal"
    assert d.get("f").value == 1.5
    assert d.get("inf").value == float("inf")
    assert d.get("hex").value == 255
    assert d.get("date").value == datetime.date(2024, 1, 2)


def test_inline_comments_are_not_part_of_the_value():
    d = doc(
        """
        [training]   # the training table
        batch = 16   # per device
        name = "a # not a comment"  # a comment
        quote = 'it"s'  # a 'quoted' comment
        """
    )
    assert d.get("training").span == Span(1, 1, 1, 11)
    assert d.get("training", "batch").value == 16
    assert d.get("training", "batch").span == Span(2, 9, 2, 11)
    name = d.get("training", "name")
    assert name.value == "a # not a comment"
    assert name.span == Span(3, 8, 3, 27)
    assert d.get("training", "quote").value == 'it"s'
    assert d.get("training", "quote").span == Span(4, 9, 4, 15)


def test_dotted_keys():
    d = doc(
        """
        [model]
        attn.impl = "flash"
        "quoted.key" = 4
        site."google.com" = true
        """
    )
    impl = d.get("model", "attn", "impl")
    assert impl.value == "flash"
    assert impl.span == Span(2, 13, 2, 20)
    assert d.get("model", "attn").key_spans["impl"] == Span(2, 1, 2, 10)
    # The implicit table `attn` is located at the line that made it.
    assert d.get("model", "attn").span == Span(2, 1, 2, 10)
    assert d.get("model", "quoted.key").value == 4
    assert d.get("model", "quoted.key").span == Span(3, 16, 3, 17)
    assert d.get("model", "site", "google.com").span == Span(4, 21, 4, 25)


def test_dotted_table_headers():
    d = doc(
        """
        [a.b.c]
        x = 1
        [a]
        y = 2
        """
    )
    assert d.get("a", "b", "c", "x").span == Span(2, 5, 2, 6)
    assert d.get("a", "b", "c").span == Span(1, 1, 1, 8)
    assert d.get("a", "y").span == Span(4, 5, 4, 6)
    assert d.get("a").span == Span(3, 1, 3, 4)  # the explicit header wins


def test_arrays_of_tables():
    d = doc(
        """
        [[datasets]]
        path = "a.jsonl"
        weight = 0.7

        [[datasets]]
        path = "b.jsonl"
        """
    )
    datasets = d.get("datasets")
    assert isinstance(datasets, Sequence)
    assert [item.get("path").value for item in datasets.items] == ["a.jsonl", "b.jsonl"]
    assert datasets.span == Span(1, 1, 1, 13)
    assert d.root.key_spans["datasets"] == Span(1, 1, 1, 13)
    assert datasets.items[0].span == Span(1, 1, 1, 13)
    assert datasets.items[1].span == Span(5, 1, 5, 13)
    assert datasets.items[0].get("weight").span == Span(3, 10, 3, 13)
    assert datasets.items[1].get("path").span == Span(6, 8, 6, 17)
    assert datasets.items[1].key_spans["path"] == Span(6, 1, 6, 5)


def test_tables_inside_arrays_of_tables():
    d = doc(
        """
        [[stage]]
        name = "warmup"
        [stage.optim]
        lr = 1
        [[stage.hooks]]
        kind = "a"
        [[stage.hooks]]
        kind = "b"

        [[stage]]
        name = "main"
        [stage.optim]
        lr = 2
        [[stage.hooks]]
        kind = "c"
        """
    )
    assert at(d, "stage", 0, "optim", "lr").value == 1
    assert at(d, "stage", 0, "optim", "lr").span == Span(4, 6, 4, 7)
    assert at(d, "stage", 0, "optim").span == Span(3, 1, 3, 14)
    assert at(d, "stage", 0, "hooks", 1, "kind").span == Span(8, 8, 8, 11)
    assert at(d, "stage", 1, "name").span == Span(11, 8, 11, 14)
    assert at(d, "stage", 1, "optim", "lr").span == Span(13, 6, 13, 7)
    assert at(d, "stage", 1, "hooks", 0, "kind").value == "c"
    assert at(d, "stage", 1, "hooks", 0, "kind").span == Span(15, 8, 15, 11)


def test_multi_line_arrays_do_not_confuse_the_locator():
    d = doc(
        """
        [data]
        paths = [
          "a[0].json",   # ] a bracket in a comment
          'b]',
          [1, 2],
          "x = 3",
        ]
        x = 4
        after = "done"
        """
    )
    paths = d.get("data", "paths")
    assert paths.items[0].value == "a[0].json"
    assert paths.items[1].value == "b]"
    assert [i.value for i in paths.items[2].items] == [1, 2]
    assert paths.span == Span(2, 9, 7, 2)
    assert d.get("data", "x").value == 4
    assert d.get("data", "x").span == Span(8, 5, 8, 6)
    assert d.get("data", "after").span == Span(9, 9, 9, 15)


def test_multi_line_strings_do_not_confuse_the_locator():
    d = doc(
        '''
        [prompt]
        text = """
        batch = 99
        [fake]
        """
        raw = \'\'\'
        lr = 5\'\'\'
        batch = 2
        '''
    )
    prompt = d.get("prompt")
    assert prompt.items["text"].value == "batch = 99\n[fake]\n"
    assert prompt.items["text"].span == Span(2, 8, 5, 4)
    assert prompt.items["raw"].value == "lr = 5"
    assert prompt.items["raw"].span == Span(6, 7, 7, 10)
    assert prompt.items["batch"].value == 2
    assert prompt.items["batch"].span == Span(8, 9, 8, 10)
    assert "fake" not in d.root.items


def test_a_one_line_triple_quoted_string():
    d = doc('a = """x"""\nb = 2\n')
    assert d.get("a").span == Span(1, 5, 1, 12)
    assert d.get("b").span == Span(2, 5, 2, 6)


def test_inline_tables_fall_back_to_their_parent():
    d = doc("opt = { lr = 1, betas = [0.9, 0.95] }\n")
    assert d.get("opt", "lr").value == 1
    assert [b.value for b in d.get("opt", "betas").items] == [0.9, 0.95]
    assert d.get("opt").span == Span(1, 7, 1, 38)
    assert d.get("opt", "lr").span.line == 1


def test_non_ascii_keys_and_values_count_characters():
    d = doc('["ü"]\n"名前" = "é" # é\nbatch = 8\n')
    assert d.get("ü", "名前").span == Span(2, 8, 2, 11)
    assert d.get("ü").key_spans["名前"] == Span(2, 1, 2, 5)
    assert d.get("ü", "batch").span == Span(3, 9, 3, 10)


def test_crlf_and_unusual_characters_in_comments_keep_lines():
    text = "# a \u2028 b \x85 c\r\n[t]\r\nx = 1\r\ns = \"\u2028\"\r\ny = 2\r\n"
    d = read("config.toml", text, "toml")
    assert d.get("t", "x").span == Span(3, 5, 3, 6)
    assert d.get("t", "y").span == Span(5, 5, 5, 6)


def test_indented_keys_and_headers():
    d = read("config.toml", "  [t]  # c\n    x = 1\n", "toml")
    assert d.get("t").span == Span(1, 3, 1, 6)
    assert d.get("t").key_spans["x"] == Span(2, 5, 2, 6)
    assert d.get("t", "x").span == Span(2, 9, 2, 10)


def test_empty_file():
    d = read("empty.toml", "", "toml")
    assert d.root.items == {}
    d = read("comments.toml", "# nothing\n\n", "toml")
    assert d.root.items == {}


@pytest.mark.parametrize(
    "text, line, column",
    [
        ("a = 1\nb = \n", 2, 5),
        ("a = 1\na = 2\n", 2, 6),
        ("[x]\ny = 1\n[x]\n", 3, 3),
        ('a = 1\nk = "unterminated\n', 2, 18),
        ("a = 1\nb = [1,\n\n", 2, 8),
        ("[x\n", 1, 3),
        ("a = 1 2\n", 1, 7),
        ("ü = 1\n", 1, 1),
    ],
)
def test_syntax_errors_point_at_the_line(text, line, column):
    with pytest.raises(ParseError) as caught:
        read("bad.toml", text, "toml")
    assert (caught.value.line, caught.value.column) == (line, column)
    assert caught.value.message.startswith("TOML syntax error: ")
    assert "(at line" not in caught.value.message


def test_an_integer_with_too_many_digits_is_a_parse_error():
    with pytest.raises(ParseError) as caught:
        read("big.toml", "a = " + "1" * 5000 + "\n", "toml")
    assert "digits" in caught.value.message


def test_keys_in_the_document_have_scalars():
    d = doc("[a]\nb = 1\n")
    assert isinstance(d.get("a", "b"), Scalar)
    assert d.get("a", "missing") is None
