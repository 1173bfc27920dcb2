"""The launch-script reader: commands, variables, quoting and positions."""

from batchlint.sources.shell import UNKNOWN, is_shell_script, read_shell


def commands(text):
    return [[w.value for w in c.words] for c in read_shell("run.sh", text).commands]


def test_variables_defaults_and_arithmetic():
    text = "N=${NNODES:-2}\nG=8\nW=$((N * G))\necho $W ${G} \"$N\" ${UNSET} ${UNSET:-4}\n"
    assert commands(text) == [["echo", "16", "8", "2", UNKNOWN, "4"]]


def test_export_env_prefix_and_keywords():
    text = "export A=1\nB=2 C=$A torchrun x.py\n"
    [command] = read_shell("run.sh", text).commands
    assert [w.value for w in command.words] == ["torchrun", "x.py"]
    assert {k: v.value for k, v in command.env.items()} == {"B": "2", "C": "1"}


def test_arrays_and_word_splitting():
    text = 'ARGS=(\n  --a 1  # one\n  --b "two words"\n)\nMORE="--c 3"\ncmd "${ARGS[@]}" $MORE "$MORE"\n'
    assert commands(text) == [["cmd", "--a", "1", "--b", "two words", "--c", "3", "--c 3"]]


def test_quotes_comments_and_continuations():
    text = "cmd 'a # b' \"c\"d e#f \\\n  g # comment\n"
    assert commands(text) == [["cmd", "a # b", "cd", "e#f", "g"]]


def test_assignments_inside_branches_are_unknown():
    text = "N=8\nif [ -n \"$X\" ]; then\n  N=4\nfi\necho $N\nfor i in 1 2; do M=$i; done\necho $M\n"
    assert commands(text)[-2:] == [["echo", UNKNOWN], ["echo", UNKNOWN]]


def test_same_value_in_a_branch_stays_known():
    assert commands("N=8\nif true; then\n  N=8\nfi\necho $N\n")[-1] == ["echo", "8"]


def test_command_substitution_and_positional_args_are_unknown():
    assert commands("G=$(nproc)\necho $G $1\n") == [["echo", UNKNOWN, UNKNOWN]]


def test_heredoc_is_not_read_as_commands():
    assert commands("cat <<EOF\ntorchrun x.py\nEOF\necho done\n") == [["cat"], ["echo", "done"]]


def test_a_word_from_a_variable_points_at_the_assignment():
    doc = read_shell("run.sh", "GPUS=8\n\ntorchrun --nproc_per_node $GPUS x.py\n")
    word = doc.commands[0].words[2]
    assert (word.value, word.span.line, word.span.column) == ("8", 1, 6)


def test_broken_continuations():
    text = "python -m x \\\n    a=1 \\  # why\n    b=2 \\\n    c=3\necho 'a \\ '\n"
    [broken] = read_shell("run.sh", text).broken_continuations
    assert (broken.span.line, broken.span.column, broken.dropped, broken.comment) == (2, 9, 2, True)


def test_trailing_backslash_space_at_the_end_is_harmless():
    assert read_shell("run.sh", "echo a \\  \n\necho b\n").broken_continuations == []


def test_shell_scripts_are_recognised_by_suffix_or_shebang():
    assert is_shell_script("train.sh", b"")
    assert is_shell_script("train", b"#!/usr/bin/env bash\n")
    assert is_shell_script("train", b"#!/bin/sh\n")
    assert not is_shell_script("train", b"#!/usr/bin/env python3\n")
