"""The YAML reader: PyYAML's composer (never its constructor) typed the YAML 1.1 way."""

import math
import subprocess
import sys
import textwrap
import time
import tracemalloc

import pytest
import yaml

from batchlint.document import LimitExceeded, Mapping, ParseError, Scalar, Sequence, Span, Unknown
from batchlint.limits import MAX_DEPTH, MAX_NODES
from batchlint.sources import format_of, read


def doc(text):
    return read("config.yaml", textwrap.dedent(text), "yaml")


def scalar(text):
    """The node a plain `k: <text>` line gives."""
    return doc(f"k: {text}\n").get("k")


def test_yaml_suffixes():
    assert format_of("a/b.yaml") == "yaml"
    assert format_of("a/b.yml") == "yaml"
    assert format_of("a/b.YML") == "yaml"


# -- typing ------------------------------------------------------------------

# Plain scalars typed exactly as PyYAML's safe loader (YAML 1.1) types them.
SAME_AS_PYYAML = [
    "true", "True", "TRUE", "yes", "Yes", "on", "ON", "false", "no", "No", "off", "Off",
    "null", "Null", "~", "",
    "0", "1", "-1", "+7", "1_000", "0x1F", "010", "0b101", "00", "1:30", "190:20:30",
    "1.5", "-2.25", ".5", "0.", "1.0e-4", "6.02e+23", "1_0.5", ".inf", "-.inf", ".NaN",
    "08", "0o10", "1e", "e5", "+", "hello", "y", "n", "NO_WAY", "1.2.3", "0x", "bf16",
]


@pytest.mark.parametrize("text", SAME_AS_PYYAML)
def test_plain_scalars_are_typed_like_pyyaml(text):
    node = scalar(text)
    expected = yaml.safe_load(f"k: {text}\n")["k"]
    assert isinstance(node, Scalar)
    assert type(node.value) is type(expected)
    if isinstance(expected, float) and math.isnan(expected):
        assert math.isnan(node.value)
    else:
        assert node.value == expected
    assert node.quoted is False


def _plain_texts():
    """Texts shaped as every resolver's pattern and their near misses: each character of the patterns'
    alphabets at each place of short texts, and the words and numbers configs write."""
    import itertools

    alphabet = "0189_.-+:eExXbBoO aT\n"
    short = ["".join(chars) for size in range(1, 4) for chars in itertools.product(alphabet, repeat=size)]
    written = SAME_AS_PYYAML + [
        "2024-01-01", "2024-1-1 10:30:00", "2024-01-01T10:30:00.5Z", "2024-01-0", "1234-", "12345-6",
        "1.5e+3", "1.e-3", "1.5ee+3", "1.5e3", "5.0e-05", "1_000.5", "0.1_0", "-0", "+0", "-", "-abc",
        "0755", "0789", "1\u0661", "\u0661", "1_", "_1", "0b", "0b2", "0xg", "1:60", "1:5:9.5", "1.5\n",
        "on_policy", "nullable", "<<<", "==", "!x", "~~", "yes!", ".", "..", "1..2", "1.2.", ".5.",
    ]
    return short + written


def test_plain_tags_are_the_resolvers():
    # The reader types the common plain scalars without PyYAML's patterns (sources/plain.py);
    # whenever it answers, its tag is the one the resolver gives.
    from batchlint.sources.plain import plain_tag
    from batchlint.sources.yaml import _RESOLVER

    answered = 0
    for text in _plain_texts():
        tag = plain_tag(text)
        if tag is not None:
            answered += 1
            assert tag == _RESOLVER.resolve(yaml.ScalarNode, text, (True, False)), text
    assert answered > 1000  # it answers for most: the patterns are asked only for the rare shapes


def test_launch_values_are_typed_as_pyyaml_types_them_without_importing_it():
    # A launch line's `key=value` is typed by sources/plain.py; PyYAML's path (typed_by_pyyaml) is the judge.
    from batchlint.sources.plain import typed_plain
    from batchlint.sources.yaml import typed_by_pyyaml

    for text in _plain_texts() + ["9" * 18, "9" * 19, "-" + "9" * 17 + ".5", "1e-4", "5E5", "1_0e2"]:
        ours, theirs = typed_plain(text), typed_by_pyyaml(text)
        assert type(ours) is type(theirs), text
        assert ours == theirs or (ours != ours and theirs != theirs), text  # NaN is not NaN


def test_a_launch_scripts_lint_imports_no_pyyaml(tmp_path):
    # Typing its overrides needs no PyYAML: a fifth of such a lint was importing it.
    (tmp_path / "train.sh").write_text("torchrun --nproc_per_node 8 -m verl.trainer.main_ppo "
                                       "data.train_batch_size=1024 actor_rollout_ref.actor.ppo_mini_batch_size=256\n")
    code = ("import sys\nfrom batchlint.entry import main\nsys.argv = ['batchlint', 'train.sh']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\nprint('yaml' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert done.stdout.strip().splitlines()[-1] == "False", done.stdout + done.stderr


def test_plain_tags_are_the_resolvers_on_the_corpus():
    # Every plain scalar of the corpus's YAML files: the tag the reader gives is the resolver's.
    import glob

    from batchlint.sources.plain import plain_tag
    from batchlint.sources.yaml import _RESOLVER

    from conftest import CORPUS

    files = sorted(glob.glob(f"{CORPUS}/**/*.y*ml", recursive=True))
    if not files:
        pytest.skip("needs ../shared/corpus")
    seen = set()
    for path in files:
        with open(path, encoding="utf-8", errors="replace") as handle:
            try:
                events = list(yaml.parse(handle.read(), Loader=yaml.CSafeLoader))
            except yaml.YAMLError:
                continue
        seen.update(e.value for e in events if isinstance(e, yaml.ScalarEvent) and e.implicit[0])
    asked = 0
    for text in seen:
        tag = plain_tag(text)
        if tag is None:
            asked += 1
        else:
            assert tag == _RESOLVER.resolve(yaml.ScalarNode, text, (True, False)), text
    assert len(seen) > 3000 and asked < len(seen) / 50


@pytest.mark.parametrize(
    "text, expected",
    [
        ("true", True), ("yes", True), ("on", True), ("no", False), ("off", False),
        ("null", None), ("~", None), ("", None),
        ("16", 16), ("-3", -3), ("1.0e-4", 1e-4), ("2.5", 2.5), ("010", 8), ("1:30", 90),
    ],
)
def test_typing_examples(text, expected):
    node = scalar(text)
    assert node.value == expected and type(node.value) is type(expected)


@pytest.mark.parametrize(
    "text, expected",
    [("1e-4", 1e-4), ("2E5", 2e5), ("1.0e4", 1e4), ("-3e-5", -3e-5), (".5e3", 500.0), ("1_0e2", 1000.0)],
)
def test_exponent_without_a_dot_is_a_number_by_choice(text, expected):
    # PyYAML leaves these strings; the frameworks' argument parsers read them as numbers.
    assert yaml.safe_load(f"k: {text}")["k"] == text
    node = scalar(text)
    assert isinstance(node.value, float)
    assert node.value == expected


@pytest.mark.parametrize("text", ["._e3", "e3", "1e", "1e+", "1.2.3e4", "0x1e5"])
def test_text_that_only_looks_like_an_exponent(text):
    node = scalar(text)
    assert node.value == yaml.safe_load(f"k: {text}")["k"]


def test_a_date_is_kept_as_written():
    assert scalar("2024-01-01").value == "2024-01-01"


@pytest.mark.parametrize(
    "text, expected, quoted",
    [
        ('"4"', "4", True),
        ("'4'", "4", True),
        ("'true'", "true", True),
        ('"null"', "null", True),
        ('"1e-4"', "1e-4", True),
        ("!!str 4", "4", False),
        ("!!str yes", "yes", False),
        ("!!int '4'", 4, True),
        ("!!float 1", 1.0, False),
        ("!!bool yes", True, False),
        ("!!null ''", None, True),
    ],
)
def test_quotes_and_explicit_tags(text, expected, quoted):
    node = scalar(text)
    assert node.value == expected and type(node.value) is type(expected)
    assert node.quoted is quoted
    assert yaml.safe_load(f"k: {text}")["k"] == expected


def test_quoted_four_is_a_string_and_plain_four_an_int():
    d = doc('a: "4"\nb: 4\n')
    assert d.get("a").value == "4" and d.get("a").quoted
    assert d.get("b").value == 4 and not d.get("b").quoted


def test_block_scalars_are_strings():
    d = doc(
        """
        literal: |
          16
          32
        folded: >
          a
          b
        """
    )
    assert d.get("literal").value == "16\n32\n"
    assert d.get("folded").value == "a b\n"


def test_a_tag_value_that_cannot_be_its_type_is_unknown():
    d = doc("a: !!int twelve\nb: " + "1" * 5000 + "\nc: 3\n")
    assert isinstance(d.get("a"), Unknown)
    assert isinstance(d.get("b"), Unknown)  # more digits than int() converts
    assert d.get("b").span == Span(2, 4, 2, 5004)
    assert d.get("c").value == 3


# -- structure and spans -----------------------------------------------------


def test_nested_mappings_and_sequences():
    d = doc(
        """
        model:
          name: llama
          layers: [1, 2]
        datasets:
          - path: a.json
            weight: 0.5
          - b.json
        """
    )
    assert d.format == "yaml"
    model = d.get("model")
    assert isinstance(model, Mapping)
    assert model.get("name").value == "llama"
    assert [i.value for i in d.get("model", "layers").items] == [1, 2]
    datasets = d.get("datasets")
    assert isinstance(datasets, Sequence)
    assert datasets.items[0].get("weight").value == 0.5
    assert datasets.items[1].value == "b.json"


def test_spans_of_values_and_keys():
    d = doc(
        """
        micro_batch_size: 4
        model:
          name: "llama"   # comment
          dims: [1, 22]
        """
    )
    assert d.get("micro_batch_size").span == Span(2, 19, 2, 20)
    assert d.root.key_spans["micro_batch_size"] == Span(2, 1, 2, 17)
    name = d.get("model", "name")
    assert name.span == Span(4, 9, 4, 16)  # with its quotes
    assert d.get("model").key_spans["name"] == Span(4, 3, 4, 7)
    dims = d.get("model", "dims")
    assert dims.span == Span(5, 9, 5, 16)
    assert dims.items[1].span == Span(5, 13, 5, 15)
    assert d.root.key_spans["model"] == Span(3, 1, 3, 6)


def test_columns_count_characters_after_non_ascii_text():
    d = doc("名前: ünïcode   \nk: 'é'\nbatch: 8\n")
    assert d.get("名前").span == Span(1, 5, 1, 12)
    assert d.root.key_spans["名前"] == Span(1, 1, 1, 3)
    assert d.get("k").span == Span(2, 4, 2, 7)
    assert d.get("batch").span == Span(3, 8, 3, 9)


def test_merge_keys():
    d = doc(
        """
        base: &base
          lr: 1.0e-4
          batch: 2
        other: &other
          warmup: 10
          batch: 99
        exp:
          <<: [*base, *other]
          batch: 8
        single:
          <<: *base
        """
    )
    exp = d.get("exp")
    assert {k: v.value for k, v in exp.items.items()} == {"batch": 8, "lr": 1e-4, "warmup": 10}
    assert "<<" not in exp.items
    # A merged value is the base's node and points at the base.
    assert exp.items["lr"] is d.get("base", "lr")
    assert exp.key_spans["lr"] == Span(3, 3, 3, 5)
    assert exp.key_spans["batch"] == Span(10, 3, 10, 8)
    assert {k: v.value for k, v in d.get("single").items.items()} == {"lr": 1e-4, "batch": 2}
    assert yaml.safe_load(textwrap.dedent("""
        base: &base {lr: 1, batch: 2}
        other: &other {warmup: 10, batch: 99}
        exp: {<<: [*base, *other], batch: 8}
    """))["exp"] == {"lr": 1, "batch": 8, "warmup": 10}


def test_aliases_are_shared_not_copied():
    d = doc(
        """
        optim: &opt {type: adamw, lr: 1}
        a: *opt
        b: *opt
        """
    )
    assert d.get("a") is d.get("optim")
    assert d.get("b") is d.get("optim")
    assert d.get("a", "lr").value == 1


def test_an_alias_to_a_scalar_is_the_same_node():
    d = doc("micro: &mb 4\nper_device: *mb\n")
    assert d.get("per_device") is d.get("micro")
    assert d.get("per_device").span == Span(1, 8, 1, 13)  # at the anchor, where the value is written


def test_a_recursive_alias_terminates():
    d = doc("a: &a [1, *a]\nb: &b {self: *b}\n")
    assert d.get("a").items[1] is d.get("a")
    assert d.get("b", "self") is d.get("b")


def _billion_laughs(levels, width=10):
    lines = ['lol0: &lol0 "lol"']
    for level in range(1, levels + 1):
        refs = ", ".join([f"*lol{level - 1}"] * width)
        lines.append(f"lol{level}: &lol{level} [{refs}]")
    return "\n".join(lines) + "\n"


def test_aliases_of_aliases_are_shared():
    d = read("laughs.yaml", _billion_laughs(4), "yaml")  # 10 ** 4 strings if expanded: under the bound
    top = d.get("lol4")
    assert len(top.items) == 10
    assert all(item is d.get("lol3") for item in top.items)
    assert all(item is d.get("lol0") for item in d.get("lol1").items)
    assert d.get("lol0").value == "lol"


def test_an_alias_bomb_stops_at_the_node_bound_quickly():
    text = _billion_laughs(12)  # 10 ** 12 strings if expanded
    tracemalloc.start()
    start = time.perf_counter()
    with pytest.raises(LimitExceeded) as caught:
        read("bomb.yaml", text, "yaml")
    elapsed = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert elapsed < 1.0
    assert peak < 20 * 1024 * 1024
    assert f"more than {MAX_NODES:,} once its aliases are expanded" in caught.value.message
    assert caught.value.line == 6  # lol5: 10 ** 5 strings and the lists around them


def test_a_merge_key_bomb_reads_quickly():
    lines = ["m0: &m0 {x: 1}"]
    for level in range(1, 40):
        lines.append(f"m{level}: &m{level} {{<<: [{', '.join([f'*m{level - 1}'] * 9)}], y{level}: {level}}}")
    start = time.perf_counter()
    d = read("bomb.yaml", "\n".join(lines) + "\n", "yaml")
    assert time.perf_counter() - start < 1.0
    assert d.get("m39", "x").value == 1
    assert d.get("m39", "y1").value == 1
    assert len(d.get("m39").items) == 40


def test_the_node_budget_stops_a_huge_document(monkeypatch):
    import batchlint.sources.yaml as reader

    monkeypatch.setattr(reader, "MAX_NODES", 50)
    text = "items:\n" + "".join(f"  - {i}\n" for i in range(100))
    with pytest.raises(ParseError) as caught:
        read("big.yaml", text, "yaml")
    assert "too many nodes" in caught.value.message


# -- nothing runs ------------------------------------------------------------


def test_python_tags_are_unknown_and_nothing_runs(tmp_path):
    marker = tmp_path / "pwned"
    text = textwrap.dedent(
        f"""
        run: !!python/object/apply:os.system ["touch {marker}"]
        new: !!python/object/new:os.system ["touch {marker}"]
        name: !!python/name:os.system
        module: !!python/module:os
        obj: !!python/object:argparse.Namespace {{a: 1}}
        custom: !include other.yaml
        batch: 4
        """
    )
    d = read("evil.yaml", text, "yaml")
    assert not marker.exists()
    for key in ("run", "new", "name", "module", "obj", "custom"):
        node = d.get(key)
        assert isinstance(node, Unknown), key
        assert "not interpreted" in node.why
    assert "python/object/apply:os.system" in d.get("run").why
    assert d.get("run").span.line == 2
    assert d.get("batch").value == 4


# -- invalid and unusual files -----------------------------------------------


@pytest.mark.parametrize(
    "text, line, column",
    [
        ("a: 1\nb: [1, 2\nc: 3\n", 3, 2),
        ("a: 1\n  b: 2\n", 2, 4),
        ("a: 1\n\tb: 2\n", 2, 1),
        ("a: *undefined\n", 1, 4),
        ("a: 1\nb: 'unterminated\n", 3, 1),
        ("é: 1\né2: [\n", 3, 1),
        ("a:\n  - 1\n  b: 2\n", 3, 3),
    ],
)
def test_syntax_errors_point_at_the_line(text, line, column):
    with pytest.raises(ParseError) as caught:
        read("bad.yaml", text, "yaml")
    assert (caught.value.line, caught.value.column) == (line, column)
    assert caught.value.message.startswith("YAML")


@pytest.mark.parametrize("character, column", [("\x00", 5), ("\x07", 5)])
def test_a_forbidden_character_is_reported_where_it_is(character, column):
    with pytest.raises(ParseError) as caught:
        read("bad.yaml", f"é: 1\nb: é{character}\n", "yaml")
    assert (caught.value.line, caught.value.column) == (2, column)
    assert f"#x{ord(character):04x}" in caught.value.message


def test_several_documents_are_refused_as_the_frameworks_refuse_them():
    with pytest.raises(yaml.YAMLError):
        yaml.safe_load("a: 1\n---\nb: 2\n")
    with pytest.raises(ParseError) as caught:
        read("multi.yaml", "a: 1\n---\nb: 2\n", "yaml")
    assert caught.value.line == 2
    assert "document" in caught.value.message


def test_one_document_with_markers_is_fine():
    d = doc("%YAML 1.1\n---\na: 1\n...\n")
    assert d.get("a").value == 1


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "---\n", "--- \n...\n", "~\n"])
def test_empty_files_give_an_empty_mapping(text):
    d = read("empty.yaml", text, "yaml")
    assert isinstance(d.root, Mapping)
    assert d.root.items == {}
    assert d.root.span == Span(1, 1, 1, 1)


@pytest.mark.parametrize("text", ["- 1\n- 2\n", "just a string\n", "42\n"])
def test_a_document_that_is_not_a_mapping_has_an_empty_root(text):
    d = read("list.yaml", text, "yaml")
    assert d.root.items == {}


def test_duplicate_keys_are_recorded():
    d = doc(
        """
        lr: 1
        batch: 2
        lr: 3
        nested:
          a: 1
          a: 2
          a: 4
        """
    )
    assert d.get("lr").value == 3  # the last wins, as in PyYAML
    assert d.root.duplicates == [("lr", Span(4, 1, 4, 3))]
    nested = d.get("nested")
    assert nested.get("a").value == 4
    assert nested.duplicates == [("a", Span(7, 3, 7, 4)), ("a", Span(8, 3, 8, 4))]
    assert doc("a: 1\nb: 2\n").root.duplicates == []


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000 + "]" * 100_000 + "\n",
        "{a: " * 100_000 + "1" + "}" * 100_000 + "\n",
        "- " * 100_000 + "x\n",
    ],
    ids=["flow-sequences", "flow-mappings", "block-sequences"],
)
def test_absurd_nesting_is_a_parse_error_not_a_crash(text, tmp_path):
    # In a child process: a C stack overflow would kill the interpreter.
    source = tmp_path / "deep.yaml"
    source.write_text(text)
    script = textwrap.dedent(
        f"""
        import time
        from batchlint.document import ParseError
        from batchlint.sources import read
        text = open({str(source)!r}).read()
        start = time.perf_counter()
        try:
            read("deep.yaml", text, "yaml")
            print("read")
        except ParseError as exc:
            print("ParseError", exc.line)
        print(round(time.perf_counter() - start, 3))
        """
    )
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert child.returncode == 0, child.stderr[-2000:]
    outcome, seconds = child.stdout.split("\n")[:2]
    assert outcome == "ParseError 1"
    assert float(seconds) < 10


def test_nesting_reads_up_to_the_bound():
    d = read("deep.yaml", "a: " + "[" * MAX_DEPTH + "1" + "]" * MAX_DEPTH + "\n", "yaml")
    node = d.get("a")
    for _ in range(MAX_DEPTH):
        assert isinstance(node, Sequence)
        node = node.items[0]
    assert node.value == 1
    with pytest.raises(LimitExceeded) as caught:
        read("deep.yaml", "a: " + "[" * (MAX_DEPTH + 1) + "1" + "]" * (MAX_DEPTH + 1) + "\n", "yaml")
    assert (caught.value.line, caught.value.column) == (1, 4 + MAX_DEPTH)
