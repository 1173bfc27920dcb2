"""The Python reader: a static evaluator over `ast` that never runs the config.

Each test reads a small config with `batchlint.sources.read` and checks the
values, types, spans and derivations of the Document it gives back.
"""

import os
import textwrap
import time
import tracemalloc

import pytest

from batchlint.document import Mapping, ParseError, Scalar, Sequence, Span, Symbol, Unknown
from batchlint.sources import format_of, read


def doc(text):
    return read("config.py", textwrap.dedent(text), "python")


def value(node):
    """The plain Python value of a known node (containers recursively)."""
    if isinstance(node, Scalar):
        return node.value
    if isinstance(node, Mapping):
        return {key: value(item) for key, item in node.items.items()}
    if isinstance(node, Sequence):
        return [value(item) for item in node.items]
    raise AssertionError(f"not a known value: {node!r}")


def test_python_files_are_read_as_python():
    assert format_of("configs/sft.py") == "python"
    assert format_of("configs/SFT.PY") == "python"
    assert format_of("configs/run.sh") == "shell"
    assert format_of("configs/notes.txt") is None


# -- literals and names ------------------------------------------------------


def test_literals():
    d = doc(
        """
        an_int = 16
        a_float = 2e-5
        a_str = 'bf16'
        a_true = True
        a_none = None
        negative = -3
        inverted = ~0
        positive = +2.5
        """
    )
    assert d.format == "python"
    expected = {"an_int": 16, "a_float": 2e-5, "a_str": "bf16", "a_true": True, "a_none": None,
                "negative": -3, "inverted": -1, "positive": 2.5}
    for name, want in expected.items():
        node = d.get(name)
        assert isinstance(node, Scalar), name
        assert node.value == want and type(node.value) is type(want), name
        assert node.origin == name


def test_a_name_reads_the_value_and_records_where_it_came_from():
    d = doc(
        """
        batch_size = 4
        micro = batch_size
        """
    )
    micro = d.get("micro")
    assert micro.value == 4
    assert micro.deps == frozenset({"batch_size"})
    assert micro.origin == "micro"
    assert d.get("batch_size").deps == frozenset()
    # The value is shown where it was written, not where it was copied.
    assert micro.span == Span(2, 14, 2, 15)


def test_namespace_and_root_hold_the_same_top_level_names():
    d = doc("a = 1\nb = 'x'\n")
    assert list(d.root) == ["a", "b"]
    assert set(d.namespace) == {"a", "b"}
    assert d.namespace["a"] is d.root.items["a"]


# -- arithmetic --------------------------------------------------------------


@pytest.mark.parametrize(
    "expression, expected",
    [
        ("7 + 2", 9),
        ("7 - 9", -2),
        ("7 * 3", 21),
        ("7 / 2", 3.5),
        ("8 / 2", 4.0),
        ("7 // 2", 3),
        ("-7 // 2", -4),
        ("7 % 3", 1),
        ("2 ** 10", 1024),
        ("2 ** -1", 0.5),
        ("2 * 3 + 4 ** 2 // 5 - 1", 8),
        ("(1 + 2) * (3 + 4)", 21),
        ("1.5 * 4", 6.0),
        ("'ab' + 'cd'", "abcd"),
        ("'ab' * 3", "ababab"),
        ("3 * 'ab'", "ababab"),
        ("max(2, 8) // min(4, 2)", 4),
        ("int('12') + len('abc') + abs(-1)", 16),
        ("round(2.6) + int(float('1.5'))", 4),
    ],
)
def test_arithmetic(expression, expected):
    node = doc(f"x = {expression}\n").get("x")
    assert isinstance(node, Scalar)
    assert node.value == expected
    assert type(node.value) is type(expected)


@pytest.mark.parametrize(
    "expression",
    ["1 / 0", "1 // 0", "1 % 0", "'a' + 1", "'a' * 'b'", "'%d' % 3", "(-8) ** 0.5", "1e308 * 1e308 ** 2"],
)
def test_arithmetic_that_would_fail_or_leave_the_value_types_is_unknown(expression):
    node = doc(f"x = {expression}\n").get("x")
    assert isinstance(node, Unknown)
    assert node.origin == "x"


def test_augmented_assignment():
    d = doc(
        """
        steps = 10
        steps += 5
        steps *= 4
        steps -= 20
        steps //= 3
        steps %= 7
        lr = 1.0
        lr /= 4
        lr **= 2
        """
    )
    assert d.get("steps").value == 6  # ((10 + 5) * 4 - 20) // 3 % 7 = 40 // 3 % 7 = 13 % 7
    assert d.get("lr").value == 0.0625
    # The name is located where it was first assigned.
    assert d.root.key_spans["steps"] == Span(2, 1, 2, 11)


def test_augmented_assignment_of_an_unknown_stays_unknown():
    d = doc("x = load()\nx += 1\n")
    assert isinstance(d.get("x"), Unknown)


# -- conditions --------------------------------------------------------------


@pytest.mark.parametrize(
    "expression, expected",
    [
        ("1 < 2 < 3", True),
        ("1 < 3 < 2", False),
        ("2 == 2.0", True),
        ("'a' != 'b'", True),
        ("4 >= 4 > 3 <= 3", True),
        ("'bf' in 'bf16'", True),
        ("3 not in [1, 2]", True),
        ("None is None", True),
        ("1 is not None", True),
        ("not 0", True),
        ("0 or 5", 5),
        ("3 and 0", 0),
        ("[1, 2] == [1, 2]", True),
    ],
)
def test_comparisons_and_boolean_operations(expression, expected):
    node = doc(f"x = {expression}\n").get("x")
    assert isinstance(node, Scalar)
    assert node.value == expected and type(node.value) is type(expected)


def test_a_comparison_between_types_python_refuses_is_unknown():
    assert isinstance(doc("x = 1 < 'a'\n").get("x"), Unknown)


def test_conditional_expression_with_a_comparison():
    d = doc(
        """
        from mmengine.dataset import DefaultSampler
        from xtuner.parallel.sequence import SequenceParallelSampler

        sequence_parallel_size = 4
        sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
        fallback = SequenceParallelSampler if sequence_parallel_size > 8 else DefaultSampler
        """
    )
    sampler = d.get("sampler")
    assert sampler.value == Symbol("xtuner.parallel.sequence.SequenceParallelSampler")
    assert sampler.value.name == "SequenceParallelSampler"
    assert "sequence_parallel_size" in sampler.deps
    assert d.get("fallback").value == Symbol("mmengine.dataset.DefaultSampler")


def test_conditional_expression_on_an_unknown_test_is_unknown_but_keeps_its_deps():
    d = doc(
        """
        sp = 4
        ga = 8
        x = sp if world_size() > 8 else ga
        """
    )
    x = d.get("x")
    assert isinstance(x, Unknown)
    assert {"sp", "ga"} <= x.deps


def test_if_statement_with_a_known_test_runs_only_the_taken_branch():
    d = doc(
        """
        sp = 4
        if sp > 1:
            ga = 16
            note = 'sp'
        else:
            ga = 2
        if sp == 1:
            lr = 1
        elif sp == 4:
            lr = 2
        else:
            lr = 3
        """
    )
    assert d.get("ga").value == 16
    assert d.get("note").value == "sp"
    assert d.get("lr").value == 2


def test_if_statement_with_an_unknown_test():
    d = doc(
        """
        import os
        sp = 2
        ga = 8
        kept = 'same'
        if os.environ.get('FAST'):
            ga = 4 * sp
            only_here = 1
        else:
            ga = 16
        """
    )
    ga = d.get("ga")
    assert isinstance(ga, Unknown)
    assert "sp" in ga.deps
    assert isinstance(d.get("only_here"), Unknown)
    # What neither branch touches keeps its value.
    assert d.get("kept").value == "same"
    assert d.get("sp").value == 2


def test_a_mapping_changed_under_an_unknown_test_is_not_taken_as_changed():
    """The branch may not run: `cfg['lr']` is 1 or 2, so it is not known."""
    d = doc(
        """
        cfg = dict(lr=1, bs=4)
        if use_large():
            cfg['lr'] = 2
        """
    )
    cfg = d.get("cfg")
    assert isinstance(cfg, Mapping)
    assert isinstance(cfg.items["lr"], Unknown)
    assert cfg.items["bs"].value == 4


def test_a_shared_mapping_changed_under_an_unknown_test_is_unknown_everywhere():
    d = doc(
        """
        model = dict(dim=1, heads=8)
        cfg = dict(model=model)
        if flag():
            model.dim = 2
            del model['heads']
        """
    )
    assert isinstance(d.get("cfg", "model", "dim"), Unknown)
    assert isinstance(d.get("model", "dim"), Unknown)
    assert isinstance(d.get("model", "heads"), Unknown)  # deleted or not


def test_a_mapping_changed_under_a_known_test_is_changed():
    d = doc(
        """
        cfg = dict(lr=1)
        sp = 2
        if sp > 1:
            cfg['lr'] = 2
            cfg['new'] = 'x'
        """
    )
    assert value(d.get("cfg")) == {"lr": 2, "new": "x"}


# -- containers --------------------------------------------------------------


def test_dict_call_dict_literal_list_and_tuple():
    d = doc(
        """
        model = dict(type='llama', layers=[1, 2, 3], shape=(4, 8), opts={'lr': 1e-4, 'betas': (0.9, 0.95)})
        """
    )
    model = d.get("model")
    assert isinstance(model, Mapping)
    assert value(model) == {
        "type": "llama",
        "layers": [1, 2, 3],
        "shape": [4, 8],
        "opts": {"lr": 1e-4, "betas": [0.9, 0.95]},
    }
    assert isinstance(model.items["shape"], Sequence)
    assert model.get("opts", "lr").value == 1e-4
    assert model.origin == "model"


def test_keys_and_values_of_a_mapping_have_spans():
    d = doc(
        """
        train = dict(
            batch_size=16,
            lr=2e-5,
        )
        other = {'k': 'v'}
        """
    )
    train = d.get("train")
    assert train.span == Span(2, 9, 5, 2)
    assert train.key_spans["batch_size"] == Span(3, 5, 3, 18)  # the whole `batch_size=16` keyword
    assert train.items["batch_size"].span == Span(3, 16, 3, 18)
    assert train.items["lr"].span == Span(4, 8, 4, 12)
    other = d.get("other")
    assert other.key_spans["k"] == Span(6, 10, 6, 13)
    assert other.items["k"].span == Span(6, 15, 6, 18)


def test_double_star_merges():
    d = doc(
        """
        base = dict(lr=1, bs=2, wd=0)
        a = {**base, 'bs': 8}
        b = dict(base, wd=0.1)
        c = dict(**base, extra=True)
        d = {'bs': 8, **base}
        """
    )
    assert value(d.get("a")) == {"lr": 1, "bs": 8, "wd": 0}
    assert value(d.get("b")) == {"lr": 1, "bs": 2, "wd": 0.1}
    assert value(d.get("c")) == {"lr": 1, "bs": 2, "wd": 0, "extra": True}
    assert value(d.get("d")) == {"bs": 2, "lr": 1, "wd": 0}  # later wins, as in Python
    assert value(d.get("base")) == {"lr": 1, "bs": 2, "wd": 0}  # merging copies, never changes the base


def test_double_star_of_an_unknown_mapping_is_unknown():
    d = doc(
        """
        a = {**load(), 'bs': 8}
        b = dict(**load(), bs=8)
        c = dict(load())
        """
    )
    for name in "abc":
        assert isinstance(d.get(name), Unknown), name


def test_subscripts_attributes_and_unpacking():
    d = doc(
        """
        cfg = dict(model=dict(dim=4096), sizes=[1, 2, 3])
        dim = cfg['model']['dim']
        dim2 = cfg.model.dim
        last = cfg['sizes'][-1]
        a, b = 1, 2
        [c, d] = [3, 4]
        e, *rest = [5, 6, 7]
        """
    )
    assert d.get("dim").value == 4096
    assert d.get("dim2").value == 4096
    assert d.get("last").value == 3
    assert [d.get(n).value for n in "abcd"] == [1, 2, 3, 4]
    assert isinstance(d.get("e"), Unknown)
    assert isinstance(d.get("rest"), Unknown)


def test_changing_a_mapping_in_place():
    d = doc(
        """
        cfg = dict(model=dict(dim=1), lr=1)
        cfg['lr'] = 3
        cfg.model.dim = 8
        del cfg['model']['dim']
        alias = cfg
        alias['bs'] = 4
        """
    )
    assert value(d.get("cfg")) == {"model": {}, "lr": 3, "bs": 4}


def test_a_method_call_on_a_container_makes_it_unknown():
    d = doc(
        """
        hooks = [1]
        hooks.append(2)
        cfg = dict(lr=1)
        cfg.pop("lr")
        loader = dict(batch_size=1)
        loader.update(**extra)
        untouched = [1]
        """
    )
    assert isinstance(d.get("hooks"), Unknown)
    assert "append" in d.get("hooks").why
    assert isinstance(d.get("cfg"), Unknown)
    assert isinstance(d.get("loader"), Unknown)  # an update with arguments not known
    assert value(d.get("untouched")) == [1]


def test_dict_update_is_followed():
    d = doc(
        """
        cfg = dict(lr=1, sampler=dict(type="a", shuffle=True))
        cfg.update(lr=2)
        cfg.update({"bs": 4}, warmup=3)
        cfg.update(dict(sampler=dict(type="b")))
        cfg["sampler"].update(seed=0)
        if flag:
            cfg.update(lr=5)
        """
    )
    # A plain dict's update replaces a dict value whole (an inherited ConfigDict merges it: test_mmengine_inheritance).
    # Under a condition that cannot be evaluated, the dict becomes unknown.
    assert isinstance(d.get("cfg"), Unknown)
    d = doc(
        """
        cfg = dict(lr=1, sampler=dict(type="a", shuffle=True))
        cfg.update(lr=2)
        cfg.update({"bs": 4}, warmup=3)
        cfg.update(dict(sampler=dict(type="b")))
        cfg["sampler"].update(seed=0)
        """
    )
    assert value(d.get("cfg")) == {"lr": 2, "sampler": {"type": "b", "seed": 0}, "bs": 4, "warmup": 3}
    assert d.get("cfg").key_spans["lr"].line == 3 and d.get("cfg").key_spans["bs"].line == 4


def test_f_strings():
    d = doc(
        """
        name = 'llama'
        size = 7
        tag = f'{name}-{size}b'
        formatted = f'{size:03d}'
        """
    )
    assert d.get("tag").value == "llama-7b"
    assert d.get("tag").deps == frozenset({"name", "size"})
    assert isinstance(d.get("formatted"), Unknown)


# -- imports -----------------------------------------------------------------


def test_imports_resolve_to_qualified_names():
    d = doc(
        """
        import torch
        import torch.nn as nn
        import os.path
        from xtuner.dataset.samplers import LengthGroupedSampler
        from mmengine.dataset import DefaultSampler as Default
        from .base import settings
        from . import sibling
        from .. import parent
        """
    )
    expected = {
        "torch": "torch",
        "nn": "torch.nn",
        "os": "os",
        "LengthGroupedSampler": "xtuner.dataset.samplers.LengthGroupedSampler",
        "Default": "mmengine.dataset.DefaultSampler",
        "settings": ".base.settings",
        "sibling": ".sibling",
        "parent": "..parent",
    }
    for name, qualname in expected.items():
        node = d.namespace[name]
        assert isinstance(node, Scalar) and node.value == Symbol(qualname), name
    assert str(d.namespace["nn"].value) == "torch.nn"
    # Imports are not config values: they are never reported as unused.
    assert d.unused == set()


def test_attribute_access_on_an_imported_name():
    d = doc(
        """
        import torch
        from mmengine import optim
        dtype = torch.bfloat16
        optimizer = dict(type=optim.AdamW, lr=1e-4)
        """
    )
    assert d.get("dtype").value == Symbol("torch.bfloat16")
    assert d.get("dtype").value.name == "bfloat16"
    kind = d.get("optimizer", "type")
    assert kind.value == Symbol("mmengine.optim.AdamW")
    # A class is shown where the config uses it, not at the import.
    assert kind.span == Span(5, 23, 5, 34)


def test_an_imported_class_used_in_a_config():
    d = doc(
        """
        from xtuner.dataset.samplers import LengthGroupedSampler
        train_dataloader = dict(sampler=dict(type=LengthGroupedSampler, length_property='modality_length'))
        """
    )
    sampler = d.get("train_dataloader", "sampler", "type")
    assert sampler.value.qualname == "xtuner.dataset.samplers.LengthGroupedSampler"
    assert sampler.span == Span(3, 43, 3, 63)
    assert "LengthGroupedSampler" in sampler.deps


def test_a_function_or_class_defined_in_the_file_is_a_symbol():
    d = doc(
        """
        def make():
            return 1
        class Hook:
            pass
        built = make()
        """
    )
    assert d.namespace["make"].value == Symbol("make")
    assert d.namespace["Hook"].value == Symbol("Hook")
    assert isinstance(d.get("built"), Unknown)


# -- derivations (deps) ------------------------------------------------------


def test_accumulative_counts_scaled_by_sequence_parallel_size_records_the_derivation():
    d = doc(
        """
        sequence_parallel_size = 4
        accumulative_counts = 16
        accumulative_counts *= sequence_parallel_size
        """
    )
    ga = d.get("accumulative_counts")
    assert ga.value == 64
    assert "sequence_parallel_size" in ga.deps
    assert ga.origin == "accumulative_counts"


def test_a_plain_literal_has_no_deps():
    d = doc(
        """
        sequence_parallel_size = 4
        accumulative_counts = 64
        """
    )
    ga = d.get("accumulative_counts")
    assert ga.value == 64
    assert ga.deps == frozenset()
    assert "sequence_parallel_size" not in ga.deps


def test_deps_are_transitive_and_follow_values_into_containers():
    d = doc(
        """
        sp = 4
        factor = 2 * sp
        ga = 8 * factor
        train_cfg = dict(accumulative_counts=ga, max_epochs=3)
        """
    )
    assert d.get("factor").deps == frozenset({"sp"})
    assert d.get("ga").deps == frozenset({"factor", "sp"})
    item = d.get("train_cfg", "accumulative_counts")
    assert item.value == 64
    assert {"ga", "factor", "sp"} <= item.deps
    assert d.get("train_cfg", "max_epochs").deps == frozenset()


def test_an_unknown_value_keeps_the_deps_it_was_computed_from():
    d = doc(
        """
        sp = 4
        ga = compute(16, sp)
        """
    )
    ga = d.get("ga")
    assert isinstance(ga, Unknown)
    assert "sp" in ga.deps


# -- what stays unknown ------------------------------------------------------


def test_unknowns_stay_unknown():
    d = doc(
        """
        import json
        loaded = json.load(open('x.json'))
        random = pick_batch_size()
        missing = not_defined_anywhere
        from_missing = not_defined_anywhere * 2
        attribute = loaded.batch_size
        lam = lambda: 1
        comp = [i for i in range(3)]
        """
    )
    for name in ("loaded", "random", "missing", "from_missing", "attribute", "lam", "comp"):
        node = d.get(name)
        assert isinstance(node, Unknown), name
        assert node.origin == name
    assert "json.load" in d.get("loaded").why
    assert "not_defined_anywhere" in d.get("missing").why


def test_a_loop_makes_what_it_assigns_unknown():
    d = doc(
        """
        batch = 4
        total = 0
        cfg = dict(lr=1, bs=2)
        hooks = []
        for i in range(3):
            total += i
            cfg['lr'] = i
            hooks.append(i)
        while False:
            batch = 8
        """
    )
    assert isinstance(d.get("total"), Unknown)
    assert isinstance(d.get("i"), Unknown)
    assert isinstance(d.get("batch"), Unknown)
    assert isinstance(d.get("cfg", "lr"), Unknown)
    assert d.get("cfg", "bs").value == 2
    assert isinstance(d.get("hooks"), Unknown)


def test_with_and_try_blocks_are_not_evaluated():
    d = doc(
        """
        try:
            import flash_attn
            attn = 'flash'
        except ImportError:
            attn = 'sdpa'
        with open('x') as handle:
            text = handle.read()
        after = 1
        """
    )
    assert isinstance(d.get("attn"), Unknown)
    assert isinstance(d.get("text"), Unknown)
    assert d.get("after").value == 1


def test_a_deeply_nested_condition_with_a_known_test_still_evaluates():
    d = doc(
        """
        a = 1
        if a:
            if a > 0:
                if a < 2:
                    b = 'deep'
        """
    )
    assert d.get("b").value == "deep"


# -- unused names ------------------------------------------------------------


def test_a_sampler_computed_but_never_read_is_unused():
    d = doc(
        """
        from mmengine.dataset import DefaultSampler
        from xtuner.parallel.sequence import SequenceParallelSampler
        sequence_parallel_size = 4
        sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
        train_dataloader = dict(sampler=dict(type=DefaultSampler))
        """
    )
    assert d.unused == {"sampler", "train_dataloader"}
    assert d.root.key_spans["sampler"].line == 5


def test_a_sampler_that_is_read_is_not_unused():
    d = doc(
        """
        from xtuner.parallel.sequence import SequenceParallelSampler
        sampler = SequenceParallelSampler
        train_dataloader = dict(sampler=dict(type=sampler))
        """
    )
    assert "sampler" not in d.unused
    assert d.get("train_dataloader", "sampler", "type").value.name == "SequenceParallelSampler"


@pytest.mark.parametrize(
    "reader",
    [
        "print(sampler)",
        "register(dict(type=sampler))",
        "for _ in [sampler]:\n    pass",
        "def build():\n    return sampler",
        "assert sampler is not None",
        "if check(sampler):\n    pass",
        "with scope(sampler):\n    pass",
    ],
)
def test_a_name_read_by_a_statement_that_is_not_evaluated_is_not_unused(reader):
    d = doc("sampler = 'DefaultSampler'\n" + reader + "\n")
    assert "sampler" not in d.unused


# -- spans -------------------------------------------------------------------


def test_spans_are_one_based_with_an_exclusive_end():
    d = doc("batch_size = 16\nlr = 'cosine'\n")
    assert d.get("batch_size").span == Span(1, 14, 1, 16)
    assert d.get("lr").span == Span(2, 6, 2, 14)
    # The key of a top-level name spans its whole assignment.
    assert d.root.key_spans["batch_size"] == Span(1, 1, 1, 16)
    assert d.root.key_spans["lr"] == Span(2, 1, 2, 14)


def test_columns_count_characters_after_non_ascii_text():
    text = 'name = "日本語モデル"; batch_size = 16\nlabel = "ü" + "é"\n'
    d = read("config.py", text, "python")
    line = text.splitlines()[0]
    start = line.index("16") + 1
    assert d.get("batch_size").span == Span(1, start, 1, start + 2)
    assert d.get("name").span == Span(1, 8, 1, 16)
    assert d.get("label").value == "üé"
    assert d.get("label").span == Span(2, 9, 2, 18)


def test_line_breaks_only_python_knows_do_not_shift_lines():
    # \f, \x1c and \u2028 inside a comment or string are no line break to Python.
    text = '# sep\x0c here\ns = "a\u2028b"\n# \x1c\nname = "é"; batch_size = 16\r\nlr = 1\rwd = 2\n'
    d = read("config.py", text, "python")
    assert d.get("s").value == "a\u2028b"
    assert d.get("batch_size").span == Span(4, 26, 4, 28)
    assert d.get("lr").span == Span(5, 6, 5, 7)
    assert d.get("wd").span == Span(6, 6, 6, 7)


def test_spans_computed_on_first_read_are_where_the_characters_are():
    # The reader defers most spans to their first read: those of keys, of keys
    # assigned later, of values read through a name or an attribute, and of the
    # statements must still count characters, on lines broken by "\r\n" and "\r".
    text = 'a = "é"; m = dict(x=1, y="ü")\r\nm["z"] = a\rb = m; c = {"k": "名", "j": b.y}\n'
    d = read("config.py", text, "python")
    m, c = d.get("m"), d.get("c")
    assert m.key_spans == {"x": Span(1, 19, 1, 22), "y": Span(1, 24, 1, 29), "z": Span(2, 1, 2, 7)}
    assert m.items["y"].span == Span(1, 26, 1, 29)
    assert m.items["z"].span == Span(1, 5, 1, 8) and m.items["z"].origin == "a"
    assert c.key_spans == {"k": Span(3, 13, 3, 16), "j": Span(3, 23, 3, 26)}
    assert c.items["k"].span == Span(3, 18, 3, 21)
    assert c.items["j"] is m.items["y"]
    assert d.root.key_spans == {"a": Span(1, 1, 1, 8), "m": Span(1, 10, 1, 30), "b": Span(3, 1, 3, 6),
                                "c": Span(3, 8, 3, 32)}


def test_multi_line_value_span():
    d = doc(
        """
        optim = dict(
            lr=1,
        )
        """
    )
    assert d.get("optim").span == Span(2, 9, 4, 2)


# -- invalid files -----------------------------------------------------------


@pytest.mark.parametrize(
    "text, line, column",
    [
        ("a = 1\nb = = 2\n", 2, 5),
        ("a = 1\n\nif True\n    b = 2\n", 3, 8),
        ("a = dict(\n    b=1,\n", 1, 9),
        ("x = 'é'; y = = 1\n", 1, 14),
        ("def f():\nreturn 1\n", 2, 1),
    ],
)
def test_syntax_errors_point_at_the_line(text, line, column):
    with pytest.raises(ParseError) as caught:
        read("config.py", text, "python")
    assert caught.value.line == line
    assert caught.value.column == column
    assert "syntax" in caught.value.message.lower()


def test_a_nul_byte_is_a_parse_error():
    with pytest.raises(ParseError) as caught:
        read("config.py", "a = 1\nb = '\x00'\n", "python")
    assert caught.value.line in (1, 2)  # Python 3.11 gives no line for it
    assert "null bytes" in caught.value.message


# -- bounded costs -----------------------------------------------------------


def _bounded(text, seconds=10.0, megabytes=50):
    """Read `text` and check it did not run away (`10 ** 10 ** 10` would never end, `'a' * 10 ** 9`
    would take gigabytes): a guard against unbounded work with generous limits, not a speed target.
    Returns the Document or the ParseError."""
    tracemalloc.start()
    start = time.perf_counter()
    try:
        result = read("config.py", text, "python")
    except ParseError as exc:
        result = exc
    finally:
        elapsed = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert elapsed < seconds
    assert peak < megabytes * 1024 * 1024
    return result


@pytest.mark.parametrize(
    "expression",
    [
        "10 ** 10 ** 10",
        "'a' * 10 ** 9",
        "10 ** 9 * 'a'",
        "'ab' * 10 ** 9 + 'c'",
        "2 ** 100000",
        "(2 ** 4000) * (2 ** 4000)",
        "-(10 ** 10 ** 10)",
        "2.0 ** 100000",
        "int('9' * 9000)",
        "str(10 ** 1000) * 100",
        "[0] * 10 ** 9",
    ],
)
def test_costly_expressions_are_refused_quickly(expression):
    d = _bounded(f"x = {expression}\ny = 1\n")
    assert isinstance(d.get("x"), Unknown)
    assert d.get("y").value == 1


def test_a_large_but_reasonable_power_is_computed():
    d = _bounded("x = 2 ** 64\ny = 3 ** 62\n")
    assert d.get("x").value == 18446744073709551616
    assert d.get("y").value == 3**62  # 30 digits: MAX_NUMBER_DIGITS


@pytest.mark.parametrize("expression", ["3 ** 63", "3 ** 200", "10 ** 30", "0x" + "f" * 5000, "-(10 ** 29) * 10"])
def test_an_integer_past_the_digit_bound_is_unknown(expression):
    node = _bounded(f"x = {expression}\n").get("x")
    assert isinstance(node, Unknown)
    assert node.why.startswith("a number with ") and node.why.endswith(" digits")


def test_a_long_chain_of_operations_is_unknown_but_the_rest_of_the_file_is_read():
    d = _bounded("x = " + " + ".join(["1"] * 1000) + "\ny = 2\nshort = " + " + ".join(["1"] * 50) + "\n")
    assert isinstance(d.get("x"), Unknown)
    assert d.get("y").value == 2
    assert d.get("short").value == 50


@pytest.mark.parametrize(
    "text",
    [
        "x = " + "1 + " * 100_000 + "1\n",
        "x = " + "-" * 100_000 + "1\n",
        "x = " + "(" * 1000 + "1" + ")" * 1000 + "\n",
        "x = " + "[" * 5000 + "]" * 5000 + "\n",
        "x = " + "not " * 100_000 + "1\n",
    ],
)
def test_absurdly_deep_nesting_is_a_parse_error_or_unknown_not_a_crash(text):
    # Python 3.10's own parser takes ~6 s and ~100 MB on the longest one, and may accept it.
    result = _bounded(text, seconds=30, megabytes=300)
    if isinstance(result, ParseError):
        assert result.line == 1 and result.message
    else:  # the parser took it: the evaluator stops at its depth limit
        assert isinstance(result.get("x"), Unknown)


# -- never executed ----------------------------------------------------------


def test_a_config_that_would_delete_files_is_only_read(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "inside.txt").write_text("keep me too")
    marker = tmp_path / "created.txt"
    text = textwrap.dedent(
        f"""
        import os
        import shutil
        os.remove({str(victim)!r})
        removed = os.unlink({str(victim)!r})
        __import__('shutil').rmtree({str(folder)!r})
        shutil.rmtree({str(folder)!r})
        exec("open({str(marker)!r}, 'w').write('x')")
        eval("__import__('os').remove({str(victim)!r})")
        handle = open({str(marker)!r}, 'w')
        written = open({str(marker)!r}, 'w').write('pwned')
        size = len(open({str(victim)!r}).read())
        if os.system('touch {marker}') == 0:
            flag = 1
        for _ in [os.remove({str(victim)!r})]:
            pass
        batch_size = 4
        """
    )
    d = read("config.py", text, "python")
    assert victim.read_text() == "keep me"
    assert (folder / "inside.txt").read_text() == "keep me too"
    assert not marker.exists()
    assert d.get("batch_size").value == 4
    for name in ("removed", "handle", "written", "size", "flag"):
        assert isinstance(d.get(name), Unknown), name
    assert os.path.exists(victim)


def test_pinned_names_read_as_the_given_number():
    from batchlint.sources.python import read_python

    text = "sp = 8\nga = 64 // sp\nga2 = 4\nga2 *= sp\nsampler = 'a' if sp > 1 else 'b'\n"
    doc = read_python("c.py", text, pinned={"sp": 1})
    assert [doc.namespace[n].value for n in ("ga", "ga2", "sampler")] == [64, 4, "b"]
    assert doc.namespace["sp"].value == 8  # the binding is kept: only reads are pinned
    assert read_python("c.py", text).namespace["ga"].value == 8


def test_names_an_undecided_branch_touches_keep_one_order_whatever_the_hash_seed():
    # The names were put back from a set: their order (and whatever lists them) changed from run to run.
    import subprocess
    import sys

    source = ("import os\nfoo = 1\nbar = 2\nbaz = 3\nqux = 4\n"
              "if os.environ.get('X'):\n    foo = zed = yam = xen = wok = vat = 5\nelse:\n    alpha = beta = 6\n")
    program = ("import sys\nfrom batchlint.sources.python import read_python\n"
               "print(list(read_python('c.py', sys.stdin.read()).namespace))\n")
    orders = {subprocess.run([sys.executable, "-c", program], input=source, capture_output=True, text=True,
                             env={**os.environ, "PYTHONHASHSEED": str(seed)}, check=True).stdout
              for seed in range(6)}
    assert len(orders) == 1, orders


def test_the_evaluators_walk_is_ast_walk_node_for_node():
    # sources/python.walked replaces list(ast.walk(...)): the same nodes in the same order (what a
    # block not evaluated forgets is bound in that order), on batchlint's own modules and a config.
    import ast
    import glob

    from batchlint.sources.python import walked

    package = os.path.dirname(os.path.dirname(os.path.abspath(read.__code__.co_filename)))
    sources = sorted(glob.glob(os.path.join(package, "**", "*.py"), recursive=True))[:40]
    assert len(sources) == 40
    for path in sources:
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
        for node in [tree] + tree.body:
            expected = list(ast.walk(node))
            found = walked(node)
            assert len(found) == len(expected) and all(a is b for a, b in zip(found, expected)), path
