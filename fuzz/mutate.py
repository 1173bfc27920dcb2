"""Mutations: how the fuzzer turns one seed into a hostile input.

Each mutation takes (rng, text, fmt) and returns new text, or bytes for the
byte-level ones (flips, truncation, invalid UTF-8). Most of them aim at the
values rules read: a regex per format finds `key: value` places, and the
value is swapped for one of VALUES rendered the way that format writes it
(huge, negative, zero, float, NaN, inf, string, null, bool, list, dict...).
Everything is driven by the `random.Random` passed in, so a (seed, index)
pair always gives the same input.
"""

from __future__ import annotations

import re

# Keys whose values the rules read: batch sizes, degrees, sequence lengths, counts.
INTERESTING = re.compile(
    r"batch|accum|degree|parallel|_size|seq|len|nproc|gpus|nodes|world|micro|mini|steps|devices|rollout|"
    r"n_gpus|^n$|num_|epochs|packing|packed|group|sampler|ngpu|dim|_dp|_tp|_pp|_cp|_ep|mult|generation|chunk",
    re.IGNORECASE,
)

HUGE_DIGITS = "1" + "0" * 5000  # 10**5000, past int()'s 4300-digit limit
NINES = "9" * 5000

# Values as each format writes them.
VALUES = {
    "yaml": [
        "999999999999999999999999999989", "123456789012345678901234567890", "2305843009213693951", "1000000007",
        "4294967296", HUGE_DIGITS, NINES, "1e999", "-1e999", "1.0e+999", ".nan", ".NaN", ".inf", "-.inf", "-1", "0",
        "-0", "-8", "1.5",
        "2.0", "0.0", "'8'", '"8"', "'auto'", "auto", "null", "~", "", "true", "false", "yes", "on", "[1, 2]", "[]",
        "{a: 1}", "{}", "3", "7", "8", "16", "1024", "9223372036854775808", "-9223372036854775809", "0x10", "0o17",
        "1_000", "1:30", "!!int", "!!int x", "!!float", "!!str 8", "!!bool", "!!python/object:os.system x",
        "${model.encoder_seq_length}", "???", "²", "'²'", "1e-300", "4e3", "&a 8", "*a", "- 1", "|\n  8",
    ],
    "json": [
        "999999999999999999999999999989", "123456789012345678901234567890", "2305843009213693951", "1000000007",
        "4294967296", HUGE_DIGITS, NINES, "1e999", "-1e999", "1E400", "NaN", "Infinity", "-Infinity", "-1", "0", "-0",
        "-8", "1.5",
        "2.0", "0.0", '"8"', '"auto"', '""', "null", "true", "false", "[1, 2]", "[]", '{"a": 1}', "{}", "3", "7", "8",
        "16", "9223372036854775808", "-9223372036854775809", "1e-300", "4e3", '"\\ud800"', '"²"', "0x10", "01",
    ],
    "toml": [
        "999999999999999999999999999989", "123456789012345678901234567890", "2305843009213693951", "1000000007",
        "4294967296", HUGE_DIGITS, NINES, "1e999", "-1e999", "nan", "+nan", "-nan", "inf", "+inf", "-inf", "-1", "0",
        "-0", "+0",
        "-8", "1.5", "2.0", "0.0", '"8"', '"auto"', '""', "true", "false", "[1, 2]", "[]", "{a = 1}", "{}", "3", "7",
        "8", "16", "9223372036854775808", "-9223372036854775809", "0x10", "0o17", "0b11", "1_000", "1e-300", "4e3",
        "1979-05-27", '"\\ud800"', '"²"', "'''8'''",
    ],
    "python": [
        "999999999999999999999999999989", "123456789012345678901234567890", "2305843009213693951", "1000000007",
        "4294967296", "10**5000", HUGE_DIGITS, NINES, "1e999", "-1e999", "float('nan')", "float('inf')",
        "-float('inf')", "-1", "0",
        "-0", "-8", "1.5", "2.0", "0.0", "'8'", "'auto'", "''", "None", "True", "False", "[1, 2]", "[]",
        "dict(a=1)", "{}", "(1, 2)", "3", "7", "8", "16", "2**63", "-(2**63)", "2**64 - 1", "1e-300", "0x10",
        "1_000", "round(1, -10**9)", "round(1.5, 10**9)", "8 // 0", "8 % 0", "2 ** -1", "10 ** 10 ** 10",
        "'a' * 10 ** 9", "[0] * 10 ** 9", "undefined_name", "f'{8}'", "-True", "~0", "not 0", "8 if x else 0",
        "sequence_parallel_size", "batch_size * 0", "2 ** 0.5", "(-8) ** 0.5", "1 << 10000", "int('²')", "'²'",
        "accumulative_counts", "abs(-8)", "max(0, -1)", "8 / 3", "3 - 3", "10 ** 4300", "-(10 ** 5000)",
    ],
    "shell": [
        "999999999999999999999999999989", "123456789012345678901234567890", "2305843009213693951", "1000000007",
        "4294967296", HUGE_DIGITS, NINES, "-1", "0", "00", "08", "-0", "1.5", "'8'", '"8"', "auto", "''", "8:8", "0:0",
        "8:9",
        "$((1/0))", "$((8 % 0))", "$((2**64))", "$((2**-1))", "$((10**5000))", "${X}", "${X:-0}", "${X:--1}",
        "$(nproc)", "`nproc`", "(1 2)", "²", "٣", "𝟠", "1e3", "3", "7", "8", "16", "true", "$((NPROC_PER_NODE*0))",
        "${NPROC_PER_NODE:-${NNODES:-${GPUS:-8}}}", "$((${#X} + 1))", "$RANDOM",
    ],
}

# Where values are written: group 1 is everything before the value, group 2 the key, group 3 the value.
PLACES = {
    "yaml": re.compile(r"^([ \t]*(?:-[ \t]+)?([\w.\-]+)[ \t]*:[ \t]+)([^#\n]*?)[ \t]*$", re.MULTILINE),
    "json": re.compile(r'("((?:[^"\\\n]|\\.)*)"\s*:\s*)(-?[\d.eE+\-]+|"(?:[^"\\\n]|\\.)*"|true|false|null|NaN|-?Infinity)'),
    "toml": re.compile(r"^([ \t]*([\w.\-\"']+)[ \t]*=[ \t]*)([^#\n]*?)[ \t]*$", re.MULTILINE),
    "python": re.compile(r"((?<![\w.])([A-Za-z_]\w*)[ \t]*(?:[+\-*/]|//)?=[ \t]*)([^,\n)#]+)"),
    "shell": re.compile(r"((?:--|\b)([A-Za-z_][\w.\-]*)[= ])([^\s\\;&|]+)"),
}

# Characters that break naive text handling.
UNICODE = [
    "\x00", "\x01", "\x0b", "\x0c", "\x1b", "\x7f", "\x85", "\u2028", "\u2029", "\u200b", "\u200d", "\u200e",
    "\u200f", "\u202e", "\u2066", "\ufeff", "\ufffe", "\uffff", "²", "¹", "٣", "𝟠", "é", "ß", "İ", "ﬀ", "\U0001f600",
    "\r", "\t", "\\", '"', "'", "#", ":", "=", "[", "{", "$", "`", "\u0301", "\ud800", "\udfff",
]

# Keys batchlint's adapters read, so a rename lands on a neighbouring real key.
REAL_KEYS = [
    "per_device_train_batch_size", "gradient_accumulation_steps", "train_batch_size", "train_micro_batch_size_per_gpu",
    "micro_batch_size", "global_batch_size", "batch_size", "local_batch_size", "sequence_parallel_size",
    "tensor_parallel_degree", "pipeline_parallel_degree", "context_parallel_degree", "data_parallel_shard_degree",
    "data_parallel_replicate_degree", "expert_parallel_degree", "expert_tensor_parallel_degree",
    "pipeline_parallel_microbatch_size", "pipeline_parallel_schedule", "tensor_model_parallel_size",
    "pipeline_model_parallel_size", "virtual_pipeline_model_parallel_size", "context_parallel_size",
    "expert_model_parallel_size", "tensor_parallel_size", "dp_shard_size", "expert_parallel_size", "seq_len",
    "sequence_len", "max_seq_len", "max_length", "cutoff_len", "packing", "sample_packing", "group_by_length",
    "accumulative_counts", "ppo_mini_batch_size", "ppo_micro_batch_size_per_gpu", "ulysses_sequence_parallel_size",
    "n_gpus_per_node", "nnodes", "devices", "num_nodes", "NPROC_PER_NODE", "NNODES", "NGPU", "num_generations",
    "generation_batch_size", "steps_per_generation", "ppo_batch_size", "forward_batch_size", "max_steps",
    "use_remove_padding", "use_dynamic_bsz", "rollout_n", "n", "tensor_parallel_dim", "data_parallel_shard_dim",
    "data_parallel_replicate_dim", "context_parallel_dim", "accumulate_grad_batches", "sequence_parallel",
    "padding_free", "use_varlen_attn", "pack_to_max_length", "packed", "encoder_seq_length", "seq_length",
    "fp16", "bf16", "optimizer_in_bwd", "load_best_model_at_end", "deepspeed", "model_type", "base_model",
    "enable_async_tensor_parallel", "fsdp_version", "eval_batch_size", "per_device_eval_batch_size",
    "mini_batch_size", "micro_batch_size_per_gpu", "max_prompt_length", "max_response_length",
]


def _lines(text: str) -> list:
    return text.split("\n")


def _insert_line(rng, text: str, shape: str) -> str:
    """`text` with `shape` inserted as a line at a random place."""
    lines = _lines(text)
    lines.insert(rng.randint(0, len(lines)), shape)
    return "\n".join(lines)


def value_swap(rng, text: str, fmt: str) -> str:
    """Replace the value of a key (preferably one rules read) by a hostile value."""
    places = list(PLACES[fmt].finditer(text))
    if not places:
        return insert_assignment(rng, text, fmt)
    interesting = [m for m in places if INTERESTING.search(m.group(2))]
    match = rng.choice(interesting if interesting and rng.random() < 0.85 else places)
    value = rng.choice(VALUES[fmt])
    return text[: match.start(3)] + value + text[match.end(3):]


def multi_swap(rng, text: str, fmt: str) -> str:
    """Several value swaps at once: rules often need two bad facts together."""
    for _ in range(rng.randint(2, 5)):
        text = value_swap(rng, text, fmt)
    return text


def insert_assignment(rng, text: str, fmt: str) -> str:
    """Add a real key with a hostile value where that format's keys go."""
    key = rng.choice(REAL_KEYS)
    value = rng.choice(VALUES[fmt])
    if fmt == "json":
        body = text.rstrip()
        at = body.rfind("}")
        if at < 0:
            return text + f'"{key}": {value}'
        return body[:at] + f', "{key}": {value}' + body[at:]
    if fmt == "shell":
        line = rng.choice([f"{key}={value} torchrun --nproc_per_node {value} train.py --config a.yaml",
                           f"export {key}={value}", f"swift sft --{key} {value}",
                           f"python -m verl.trainer.main_ppo {key}={value}"])
    elif fmt == "toml":
        line = f"{key} = {value}"
    elif fmt == "python":
        line = f"{key} = {value}"
    else:
        line = f"{key}: {value}"
    lines = _lines(text)
    lines.insert(rng.randint(0, len(lines)), line)
    return "\n".join(lines)


def key_rename(rng, text: str, fmt: str) -> str:
    """Rename a key to a neighbouring real key (or to another key of the same file)."""
    places = list(PLACES[fmt].finditer(text))
    if not places:
        return text
    match = rng.choice(places)
    if rng.random() < 0.3:
        other = rng.choice(places).group(2)
    else:
        other = rng.choice(REAL_KEYS)
    start, end = match.start(2), match.end(2)
    return text[:start] + other + text[end:]


def directive(rng, text: str, fmt: str) -> str:
    """A `# batchlint:` directive, often with a value no int() takes."""
    if fmt == "json":
        return text  # JSON has no comments
    key = rng.choice(["world-size", "world-size", "global-batch", "disable", "disable-file", "world_size"])
    value = rng.choice(["8", "7", "1", "0", "-1", "²", "¹²", "٣", "𝟠", NINES, HUGE_DIGITS, "8.0", "", "1e3", "8,8",
                        "ALL", "BL1", "BL101,BL2", "x", "\u2028", "8\u00858"])
    line = f"# batchlint: {key}={value}"
    lines = _lines(text)
    where = rng.randint(0, len(lines))
    if rng.random() < 0.3 and lines:
        where = rng.randrange(len(lines))
        lines[where] = lines[where] + "  " + line
    else:
        lines.insert(where, line)
    return "\n".join(lines)


def unicode_insert(rng, text: str, fmt: str) -> str:
    """Characters that trip text handling, at random places or inside keys and values."""
    chars = "".join(rng.choice(UNICODE) for _ in range(rng.randint(1, 4)))
    places = list(PLACES[fmt].finditer(text))
    if places and rng.random() < 0.6:
        match = rng.choice(places)
        group = rng.choice((2, 3))
        at = rng.randint(match.start(group), match.end(group))
    else:
        at = rng.randint(0, len(text))
    return text[:at] + chars + text[at:]


def escaped_surrogate(rng, text: str, fmt: str) -> str:
    """A lone surrogate written as an escape, where the format can encode one:
    in a JSON, YAML (double-quoted) or Python string, usually a key."""
    escape = rng.choice(["\\ud800", "\\udfff", "\\udc80", "\\u0000", "\\u2028", "\\uffff"])
    if fmt == "json":
        places = list(PLACES["json"].finditer(text))
        if places:
            match = rng.choice(places)
            at = rng.randint(match.start(2), match.end(2))
            return text[:at] + escape + text[at:]
        return text
    if fmt == "yaml":
        return text + f'\n"{escape}batch_size": "{escape}"\nper_device_train_batch_size: "8{escape}"\n'
    if fmt == "python":
        return text + f'\n{rng.choice(REAL_KEYS)} = "{escape}"\nx = dict(**{{"{escape}": 1}})\n'
    if fmt == "toml":
        return text + f'\n"{escape}" = 1\n'
    return text


def crlf(rng, text: str, fmt: str) -> str:
    choice = rng.random()
    if choice < 0.6:
        return text.replace("\n", "\r\n")
    if choice < 0.8:
        return text.replace("\n", "\r")
    return text.replace("\n", rng.choice(["\u2028", "\x85", "\x0c\n", "\x0b\n"]))


def bom(rng, text: str, fmt: str) -> str:
    return "\ufeff" + text if rng.random() < 0.7 else text.replace("\n", "\n\ufeff", 1)


def long_line(rng, text: str, fmt: str) -> str:
    """A very long key, value or comment line."""
    size = rng.choice([1000, 10_000, 100_000])
    key = rng.choice(REAL_KEYS)
    fill = rng.choice(["x", "9", "a.", "[", "-", "\\", "$", " "])
    blob = (fill * size)[:size]
    form = {
        "yaml": [f"{key}: {blob}", f"# {blob}", f"{blob}: 1", f"{key}: '{blob}'"],
        "json": [f'"{key}": "{blob}"', f'"{blob}": 1'],
        "toml": [f'{key} = "{blob}"', f"# {blob}", f"{'a.' * (size // 20)}b = 1"],
        "python": [f"{key} = '{blob}'", f"# {blob}", f"{key} = {'1 + ' * (size // 40)}1"],
        "shell": [f"torchrun --nproc_per_node 8 {blob}", f"X={blob}", f"# {blob}", f"swift sft --{key} {blob}"],
    }[fmt]
    line = rng.choice(form)
    if fmt == "json":
        body = text.rstrip()
        at = body.rfind("}")
        return body[:at] + ", " + line + body[at:] if at >= 0 else text + line
    lines = _lines(text)
    lines.insert(rng.randint(0, len(lines)), line)
    return "\n".join(lines)


def deep_nesting(rng, text: str, fmt: str) -> str:
    """Replace a value with one nested very deep."""
    depth = rng.choice([50, 500, 3000, 20_000])
    nested = {
        "yaml": rng.choice(["[" * depth + "1" + "]" * depth, "{a: " * depth + "1" + "}" * depth]),
        "json": rng.choice(["[" * depth + "1" + "]" * depth, '{"a": ' * depth + "1" + "}" * depth]),
        "toml": rng.choice(["[" * depth + "1" + "]" * depth, "{a = " * depth + "1" + "}" * depth]),
        "python": rng.choice(["(" * depth + "1" + ")" * depth, "[" * depth + "1" + "]" * depth,
                              "dict(a=" * depth + "1" + ")" * depth, "-" * depth + "1", "1" + " + 1" * depth]),
        "shell": rng.choice(["$((" + "(" * depth + "1" + ")" * depth + "))", "$(" * depth + ")" * depth,
                             "${X:-" * depth + "8" + "}" * depth, '"' + "$(echo " * 50 + ")" * 50 + '"']),
    }[fmt]
    if fmt == "yaml" and rng.random() < 0.3:
        block = "".join(" " * i + "a:\n" for i in range(min(depth, 3000))) + " " * min(depth, 3000) + "b: 1\n"
        return text + "\n" + block
    places = list(PLACES[fmt].finditer(text))
    if not places:
        return text + "\n" + nested
    match = rng.choice(places)
    return text[: match.start(3)] + nested + text[match.end(3):]


def duplicate_line(rng, text: str, fmt: str) -> str:
    """A key given twice (the same line copied, maybe with another value)."""
    lines = _lines(text)
    if not lines:
        return text
    index = rng.randrange(len(lines))
    copy = lines[index]
    if rng.random() < 0.5:
        copy = value_swap(rng, copy, fmt)
    lines.insert(rng.randint(0, len(lines)), copy)
    return "\n".join(lines)


def delete_lines(rng, text: str, fmt: str) -> str:
    lines = _lines(text)
    if len(lines) < 2:
        return text
    start = rng.randrange(len(lines))
    del lines[start:start + rng.randint(1, 4)]
    return "\n".join(lines)


def swap_lines(rng, text: str, fmt: str) -> str:
    lines = _lines(text)
    if len(lines) < 2:
        return text
    a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[a], lines[b] = lines[b], lines[a]
    return "\n".join(lines)


def indent(rng, text: str, fmt: str) -> str:
    """Shift a line's indentation: YAML's structure, Python's syntax."""
    lines = _lines(text)
    if not lines:
        return text
    index = rng.randrange(len(lines))
    if rng.random() < 0.5:
        lines[index] = " " * rng.choice([1, 2, 4, 8]) + lines[index]
    else:
        lines[index] = lines[index].lstrip()
    return "\n".join(lines)


def many_nodes(rng, text: str, fmt: str) -> str:
    """A long list of small values."""
    count = rng.choice([1000, 5000, 30_000])
    item = rng.choice(["1", "a", "[1]", "{}"])
    if fmt == "yaml":
        blob = "many:\n" + "".join(f"- {item}\n" for _ in range(count)) if rng.random() < 0.5 \
            else "many: [" + ", ".join([item] * count) + "]"
    elif fmt == "json":
        body = text.rstrip()
        at = body.rfind("}")
        blob = '"many": [' + ", ".join(["1"] * count) + "]"
        return body[:at] + ", " + blob + body[at:] if at >= 0 else text
    elif fmt == "toml":
        blob = "many = [" + ", ".join(["1"] * count) + "]"
    elif fmt == "python":
        blob = "many = [" + ", ".join(["1"] * count) + "]"
    else:
        blob = "args=(" + " ".join(["--a 1"] * count) + ")"
    return text.rstrip("\n") + "\n" + blob + "\n"


def splice(rng, text: str, fmt: str, other: str = "") -> str:
    """Lines of another seed of the same format, pasted in."""
    if not other:
        return text
    mine, theirs = _lines(text), _lines(other)
    start = rng.randrange(len(theirs))
    chunk = theirs[start:start + rng.randint(1, 30)]
    at = rng.randint(0, len(mine))
    return "\n".join(mine[:at] + chunk + mine[at:])


def shell_specific(rng, text: str, fmt: str) -> str:
    """Shell shapes the launch reader must survive: array env prefixes, variable doubling."""
    if fmt != "shell":
        return value_swap(rng, text, fmt)
    shape = rng.choice([
        "A=(1 2) torchrun --nproc_per_node 8 train.py --config a.yaml",
        "NPROC_PER_NODE=(4 4) swift sft --per_device_train_batch_size 2",
        "X=x\n" + "".join("X=$X$X\n" for _ in range(rng.choice([10, 30, 64]))) + "torchrun --nproc_per_node $X t.py",
        "args=(--a)\n" + "args+=(\"${args[@]}\" \"${args[@]}\")\n" * rng.choice([5, 20, 40]) + "megatron sft \"${args[@]}\"",
        "GPUS=$((1<<62))\nNNODES=$((1<<62))\ntorchrun --nproc_per_node $GPUS --nnodes $NNODES t.py",
        "torchrun --nproc_per_node=8:8 --nnodes=0:0 t.py --config a.yaml",
        "torchrun --nproc_per_node " + NINES + " --nnodes 2 t.py",
        "NPROC_PER_NODE=²\nswift sft --sequence_parallel_size 2",
        "python -m verl.trainer.main_ppo trainer.n_gpus_per_node=" + NINES + " trainer.nnodes=0",
        "python -m verl.trainer.main_ppo trainer.n_gpus_per_node=² data.train_batch_size=-1",
        "tune run --nproc_per_node 0 full_finetune_distributed --config a.yaml batch_size=0",
        "deepspeed --num_gpus=-1 t.py --deepspeed ds.json",
        "accelerate launch --num_processes 0 t.py --config a.yaml",
        "NGPU=0 ./run_train.sh --parallelism.tensor_parallel_degree 0",
        "python pretrain_gpt.py --micro-batch-size 0 --global-batch-size -1 --tensor-model-parallel-size 0",
        "megatron sft --micro_batch_size 0 --global_batch_size " + NINES + " --tensor_model_parallel_size 3",
        "llamafactory-cli train a.yaml per_device_train_batch_size=" + HUGE_DIGITS,
        "x=$(( " + "X*X*" * 200 + "1 ))",
        "cat <<EOF\n" + "x\n" * 100 + "EOF",
        "f() { torchrun --nproc_per_node 8 t.py; }\nf",
    ])
    return _insert_line(rng, text, shape)


def python_specific(rng, text: str, fmt: str) -> str:
    """Python shapes the static evaluator must survive: f-string and arithmetic bombs."""
    if fmt != "python":
        return value_swap(rng, text, fmt)
    shape = rng.choice([
        "x = 'a'\n" + "x = x + x\n" * rng.choice([20, 40, 80]),
        "x = [1]\n" + "x = x + x\n" * rng.choice([20, 40]),
        "x = 'ab'\n" + "x = f'{x}{x}'\n" * rng.choice([20, 40, 80]),
        "x = f'{\"a\" * 10**9}'",
        "x = 2\n" + "x = x ** x\n" * 8,
        "x = 10 ** 10 ** 10",
        "x = round(1, -10**9)",
        "x = '{:>1000000000}'.format(1)",
        "x = f'{1:>{10**9}}'",
        "x = 9 ** 9 ** 9",
        "batch_size = 10 ** 5000\naccumulative_counts = batch_size * batch_size",
        "sequence_parallel_size = float('nan')",
        "sequence_parallel_size = 0\naccumulative_counts *= sequence_parallel_size",
        "accumulative_counts = 16\naccumulative_counts //= 0",
        "train_dataloader = dict(batch_size=[1, 2], sampler=dict(type=None))",
        "optim_wrapper = dict(accumulative_counts=dict(a=1))",
        "x = " + "(" * 200 + "1" + ")" * 200,
        "x = lambda: x\ny = x()",
        "x = {**x}",
        "x = [*range(10**9)]",
        "x = 'a'.join(['b'] * 10**9)",
        "x = 10**300 * 1.0",
        "x = -10**400 // 3",
        "x = 1 / 0",
    ])
    return _insert_line(rng, text, shape)


def toml_specific(rng, text: str, fmt: str) -> str:
    """TOML shapes: long dotted keys, the reported tensor_parallel_degree = 3, odd tables."""
    if fmt != "toml":
        return value_swap(rng, text, fmt)
    shape = rng.choice([
        "[parallelism]\ntensor_parallel_degree = 3",
        "[parallelism]\ndata_parallel_shard_degree = 0\ndata_parallel_replicate_degree = -1",
        "[parallelism]\npipeline_parallel_degree = 0\npipeline_parallel_microbatch_size = 0",
        "[training]\nlocal_batch_size = 0\nglobal_batch_size = 0\nseq_len = 0",
        "[training]\nlocal_batch_size = -3\nglobal_batch_size = 7",
        "a." * rng.choice([100, 1000, 10_000]) + "b = 1",
        "[" + "a." * 500 + "b]\nc = 1",
        "[[parallelism]]\nx = 1",
        "parallelism = 3",
        "training = [1, 2]",
        "[parallelism]\ntensor_parallel_degree = inf\ncontext_parallel_degree = nan",
        "[parallelism]\nexpert_parallel_degree = 3\nexpert_tensor_parallel_degree = 0",
        "[model]\nname = 3",
    ])
    return _insert_line(rng, text, shape)


# ---- byte-level mutations (return bytes) ----

def byte_flip(rng, data: bytes, fmt: str) -> bytes:
    buf = bytearray(data)
    if not buf:
        return bytes([rng.randrange(256)])
    for _ in range(rng.randint(1, 8)):
        i = rng.randrange(len(buf))
        buf[i] ^= 1 << rng.randrange(8)
    return bytes(buf)


def byte_insert(rng, data: bytes, fmt: str) -> bytes:
    blob = rng.choice([b"\x00", b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xef\xbb\xbf", b"\xe2\x80\xa8", b"\xc2\x85",
                       b"\xc2\xb2", b"\x80", b"\xf4\x90\x80\x80", bytes([rng.randrange(256)])])
    at = rng.randint(0, len(data))
    return data[:at] + blob + data[at:]


def truncate(rng, data: bytes, fmt: str) -> bytes:
    if not data:
        return data
    return data[: rng.randrange(len(data))]


def chunk_dup(rng, data: bytes, fmt: str) -> bytes:
    if len(data) < 2:
        return data + data
    a = rng.randrange(len(data))
    b = min(len(data), a + rng.randint(1, 200))
    at = rng.randint(0, len(data))
    return data[:at] + data[a:b] * rng.randint(1, 3) + data[at:]


# (function, weight, works on bytes)
TEXT_MUTATIONS = [
    (value_swap, 30), (multi_swap, 12), (insert_assignment, 6), (key_rename, 8), (directive, 6),
    (unicode_insert, 6), (escaped_surrogate, 2), (crlf, 2), (bom, 1), (long_line, 1), (deep_nesting, 2),
    (duplicate_line, 5), (delete_lines, 4), (swap_lines, 2), (indent, 3), (many_nodes, 1), (splice, 4),
    (shell_specific, 3), (python_specific, 3), (toml_specific, 3),
]
BYTE_MUTATIONS = [(byte_flip, 4), (byte_insert, 2), (truncate, 3), (chunk_dup, 2)]


def mutate(rng, seed_data: bytes, fmt: str, others: list) -> tuple:
    """Apply 1 to 4 mutations; returns (bytes, names of the mutations applied)."""
    try:
        text = seed_data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = seed_data.decode("utf-8", "surrogateescape")
    applied = []
    data = None
    for _ in range(rng.choice([1, 1, 2, 2, 3, 4])):
        if rng.random() < 0.12:
            function = _weighted(rng, BYTE_MUTATIONS)
            data = function(rng, data if data is not None else _encode(text), fmt)
            text = None
        else:
            if text is None:  # back to text after a byte mutation: keep the damage
                text = data.decode("utf-8", "surrogateescape")
                data = None
            function = _weighted(rng, TEXT_MUTATIONS)
            if function is splice:
                text = splice(rng, text, fmt, rng.choice(others) if others else "")
            else:
                text = function(rng, text, fmt)
        applied.append(function.__name__)
    return (data if text is None else _encode(text)), applied


def _encode(text: str) -> bytes:
    # surrogateescape restores bytes a byte mutation put there; surrogatepass writes
    # lone surrogates as the (invalid) UTF-8 a careless editor would.
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def _weighted(rng, table):
    total = sum(weight for _, weight in table)
    pick = rng.uniform(0, total)
    for function, weight in table:
        pick -= weight
        if pick <= 0:
            return function
    return table[-1][0]
