"""The launch-script reader: commands, variables, quoting and positions."""

import pytest

from batchlint.document import Span
from batchlint.sources.shell import UNKNOWN, read_shell
from batchlint.sources import is_shell_script


def commands(text):
    return [[w.value for w in c.words] for c in read_shell("run.sh", text).commands]


def test_variables_defaults_and_arithmetic():
    text = "N=${NNODES:-2}\nG=8\nW=$((N * G))\necho $W ${G} \"$N\" ${UNSET} ${UNSET:-4}\n"
    assert commands(text) == [["echo", "16", "8", "2", UNKNOWN, "4"]]


def test_export_env_prefix_and_keywords():
    text = "export A=1\nB=2 C=$A torchrun x.py\n"
    [command] = read_shell("run.sh", text).commands
    assert [w.value for w in command.words] == ["torchrun", "x.py"]
    assert {k: v.value for k, v in command.env.items()} == {"A": "1", "B": "2", "C": "1"}  # A is exported


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


# -- commands built elsewhere: heredocs read by `read`, `bash -c "..."` strings ---------------

HEREDOC = """\
N=2
read -r -d '' cmds <<EOF
mytool.train \\
   --micro $N \\
   --name "two words"
EOF
run $cmds
run "$cmds"
"""


def test_read_heredoc_words_keep_their_place_in_the_heredoc():
    # (a word that is exactly `$N` points where N was set, as everywhere)
    doc = read_shell("run.sh", HEREDOC)
    split, quoted = doc.commands
    assert [(w.value, w.span.line, w.span.column) for w in split.words] == [
        ("run", 7, 1), ("mytool.train", 3, 1), ("--micro", 4, 4), ("2", 1, 3), ("--name", 5, 4), ("two words", 5, 11)]
    assert [w.value for w in quoted.words] == ["run", "mytool.train --micro 2 --name two words"]


def test_heredoc_not_read_whole_is_not_followed():
    quoted = HEREDOC.replace("<<EOF", "<<'EOF'")  # no expansion in the body: left unknown
    first_line = HEREDOC.replace("-d ''", "")  # read stops at the first newline
    for text in (quoted, first_line):
        assert commands(text)[0] == ["run", UNKNOWN]
    unterminated = HEREDOC.replace("EOF\nrun", "END\nrun")
    assert commands(unterminated) == []  # the body runs to the end of the file: no command after it
    assert commands("cat <<EOF\nx $y\nEOF\nrun\n") == [["cat"], ["run"]]  # only `read` assigns


def test_heredoc_inside_a_branch_is_unknown_afterwards():
    text = "if x; then\nread -r -d '' cmds <<EOF\na b\nEOF\nfi\nrun $cmds\n"
    assert commands(text)[-1] == ["run", UNKNOWN]


def test_heredoc_with_an_unbalanced_quote_does_not_fail():
    assert commands("read -r -d '' c <<EOF\nit's\nEOF\nrun $c\n") == [["run", UNKNOWN]]


def test_bash_c_string_commands_are_read_where_they_stand():
    text = 'G=8\nsrun -N 2 bash -c \\\n  "cd /w; torchrun --nproc_per_node $G train.py --lr 1" &> log\n'
    outer, cd, torchrun, redirect = read_shell("run.sh", text).commands
    assert [w.value for w in outer.words][:4] == ["srun", "-N", "2", "bash"]
    assert [w.value for w in cd.words] == ["cd", "/w"]
    assert [(w.value, w.span.line, w.span.column) for w in torchrun.words] == [
        ("torchrun", 3, 11), ("--nproc_per_node", 3, 20), ("8", 1, 3), ("train.py", 3, 40), ("--lr", 3, 49),
        ("1", 3, 54)]
    assert (torchrun.span.line, torchrun.span.column) == (3, 11)
    assert [w.value for w in redirect.words][0] == ">"
    # a string that is not the whole word, or no -c: not read as commands
    assert len(read_shell("run.sh", 'bash -c "a b"x\n').commands) == 1
    assert len(read_shell("run.sh", 'bash "a b"\n').commands) == 1


def test_expr_arithmetic_is_computed_as_bash_does():
    doc = read_shell("run.sh", "N=3\nG=$(expr 16 \\* 2 / $N)\nH=$(expr $N + ${N})\nI=$(expr $N - 5)\nJ=$(nproc)\n")
    values = {name: word.value for name, word in doc.variables.items()}
    assert values["G"] == "10" and values["H"] == "6" and values["I"] == "-2"  # integer division, like expr
    assert values["J"] is UNKNOWN  # any other command is never run


def test_expr_with_an_unknown_variable_is_unknown():
    doc = read_shell("run.sh", "G=$(expr 16 / $GPUS_PER_NODE)\n")
    assert doc.variables["G"].value is UNKNOWN


def test_a_crlf_script_is_read_as_its_author_meant_it():
    text = "NPROC=8\r\ntorchrun --nproc_per_node $NPROC \\\r\n    train.py --config c.yaml\r\n"
    doc = read_shell("run.sh", text)
    [command] = [c for c in doc.commands if c.words and c.words[0].value == "torchrun"]
    assert [w.value for w in command.words] == ["torchrun", "--nproc_per_node", "8", "train.py", "--config", "c.yaml"]
    assert command.words[2].span.line == 1  # the value where NPROC was set


SBATCH = """\
#!/bin/bash
#SBATCH --job-name=sft
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=1
#SBATCH --gres=gpu:a100:8
#SBATCH -n 4

srun torchrun --nnodes $SLURM_NNODES --nproc_per_node $SLURM_GPUS_ON_NODE train.py
#SBATCH --nodes=99
"""


def test_a_slurm_header_sets_the_variables_slurm_gives_the_job():
    doc = read_shell("job.slurm", SBATCH)
    [command] = doc.commands
    assert [w.value for w in command.words[:6]] == ["srun", "torchrun", "--nnodes", "4", "--nproc_per_node", "8"]
    assert command.words[3].span == Span(3, 17, 3, 18) and command.words[5].span == Span(5, 25, 5, 26)
    assert doc.variables["SLURM_NTASKS"].value == "4" and doc.variables["SLURM_JOB_NUM_NODES"].value == "4"


@pytest.mark.parametrize("header", ["#SBATCH --nodes=2-4\n", "#SBATCH --nodes=$NUM_NODES\n", "#SBATCH --gres=mps:8\n",
                                    "echo hi\n#SBATCH --nodes=4\n"])
def test_a_count_slurm_would_not_know_sets_nothing(header):
    doc = read_shell("job.slurm", header + "srun torchrun --nnodes $SLURM_NNODES train.py\n")
    assert "SLURM_NNODES" not in doc.variables and "SLURM_GPUS_ON_NODE" not in doc.variables


def test_slurm_batch_scripts_are_shell_scripts():
    assert is_shell_script("job.slurm", b"") and is_shell_script("job.sbatch", b"")


def test_exported_variables_are_in_the_environment_of_later_commands():
    text = ("export NPROC_PER_NODE=4\nNNODES=2\nswift sft --model m\nexport NNODES\ntorchrun t.py\n"
            "if [ -n \"$X\" ]; then\n  export MASTER_PORT\nfi\nMASTER_PORT=1 NNODES=3 swift sft\n")
    first, second, third = [c for c in read_shell("run.sh", text).commands if c.words[0].value != "["]
    assert {k: v.value for k, v in first.env.items()} == {"NPROC_PER_NODE": "4"}  # NNODES is not exported
    assert (first.env["NPROC_PER_NODE"].span.line, first.env["NPROC_PER_NODE"].span.column) == (1, 23)
    assert {k: v.value for k, v in second.env.items()} == {"NPROC_PER_NODE": "4", "NNODES": "2"}
    assert {k: v.value for k, v in third.env.items()} == {"NPROC_PER_NODE": "4", "NNODES": "3", "MASTER_PORT": "1"}
    *_, command = read_shell("run.sh", "MASTER_PORT=1\nif [ -f x ]; then export MASTER_PORT; fi\ntorchrun t.py\n").commands
    assert command.env["MASTER_PORT"].value is UNKNOWN  # exported in a branch that may not run
    *_, command = read_shell("run.sh", "MASTER_PORT=1\nif true; then export MASTER_PORT; fi\ntorchrun t.py\n").commands
    assert command.env["MASTER_PORT"].value == "1"  # `true`: the branch runs
    [command] = read_shell("run.sh", "declare -x A=1\ndeclare B=2\nexport -n C=3\ncmd\n").commands
    assert set(command.env) == {"A"}


def _sourcer(files):
    """A sourcer over {name: text}, as the engine's gives files of the project."""
    return lambda word: (word.value, word.value, files[word.value]) if word.value in files else None


def test_a_sourced_file_sets_variables_and_exports_of_the_script():
    files = {"./common.sh": "export NPROC_PER_NODE=8\nNNODES=2\nif [ -n \"$X\" ]; then\n  TP=4\nfi\n",
             "env.sh": "MICRO=${1:-1}\n. ./common.sh\n"}
    text = "#!/bin/bash\nsource ./common.sh\n. env.sh 4\necho $1\ntorchrun --nnodes $NNODES --tp $TP --micro $MICRO t.py\n"
    *_, echo, command = read_shell("run.sh", text, sourcer=_sourcer(files)).commands
    assert [w.value for w in command.words[1:3]] == ["--nnodes", "2"]
    assert command.words[4].value is UNKNOWN  # set inside a branch of the sourced file
    assert command.words[6].value == "4"  # the sourced file's $1 is the `source` line's argument
    assert echo.words[1].value is UNKNOWN  # and the script's own $1 comes back after it
    assert command.env["NPROC_PER_NODE"].value == "8"
    # positions point into the sourced file
    assert command.env["NPROC_PER_NODE"].span == Span(1, 23, 1, 24, "./common.sh")
    assert command.words[2].span == Span(2, 8, 2, 9, "./common.sh")
    # the sourced file's own commands are not the script's
    assert [c.words[0].value for c in read_shell("run.sh", text, sourcer=_sourcer(files)).commands] == \
        ["echo", "torchrun"]


def test_sourcing_is_bounded_and_skips_what_it_cannot_read():
    files = {"a.sh": "A=1\nsource b.sh\n", "b.sh": "B=2\nsource a.sh\n", "bad.sh": "X='unterminated\n"}
    doc = read_shell("run.sh", "source a.sh\nsource bad.sh\nsource missing.sh\nsource $DIR/x.sh\ncmd\n",
                     sourcer=_sourcer(files))
    assert doc.variables["A"].value == "1" and doc.variables["B"].value == "2"  # a cycle stops
    assert "X" not in doc.variables
    deep = {f"{n}.sh": f"V{n}=1\nsource {n + 1}.sh\n" for n in range(10)}
    doc = read_shell("run.sh", "source 0.sh\n", sourcer=_sourcer(deep))
    assert sorted(name for name in doc.variables if name.startswith("V")) == ["V0", "V1", "V2", "V3"]
    # without a sourcer (a reader with no files around), `source` is a command like any other
    [command] = read_shell("run.sh", "source ./common.sh\n").commands
    assert command.words[0].value == "source"


@pytest.mark.parametrize("substitution", [
    '$(dirname "$0")', "$(dirname $0)", "`dirname $0`", '$(cd "$(dirname "$0")" && pwd)',
    '$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" &> /dev/null && pwd -P)', '$(dirname "$(realpath "$0")")',
    '$(realpath "$(dirname "${BASH_SOURCE[0]}")")', "$(cd $(dirname $0); pwd)",
])
def test_the_scripts_own_folder_is_known(substitution):
    """The idiom scripts use to name the files beside them: nothing is run, the script's path is known."""
    [command] = read_shell("examples/sft/run.sh", f"DIR={substitution}\ncmd --deepspeed $DIR/ds.json\n").commands
    assert [w.value for w in command.words] == ["cmd", "--deepspeed", "examples/sft/ds.json"]


@pytest.mark.parametrize("substitution", ['$(dirname "$1")', "$(pwd)", '$(dirname "$0")/$(date +%s)', "$(cd /opt && pwd)"])
def test_other_substitutions_stay_unknown(substitution):
    [command] = read_shell("examples/sft/run.sh", f"DIR={substitution}\ncmd $DIR\n").commands
    assert [w.value for w in command.words] == ["cmd", UNKNOWN]


def test_a_bare_script_name_has_the_current_folder():
    assert commands('D=$(dirname "$0")\ncmd $D/x.yaml\n') == [["cmd", "./x.yaml"]]


def test_a_partly_unknown_string_keeps_its_known_words():
    """Megatron-LM's `options="--micro-batch-size 4 --data-path ${DATA_PATH}"` with DATA_PATH=$1 not known:
    each word an unknown value touches is one unknown word, the rest as written."""
    text = 'DATA_PATH=$1\nGBS=32\noptions=" \\\n  --micro-batch-size 4 \\\n  --global-batch-size ${GBS} \\\n  --data-path ${DATA_PATH}"\ncmd ${options}\n'
    [command] = read_shell("train.sh", text).commands
    assert [w.value for w in command.words] == ["cmd", "--micro-batch-size", "4", "--global-batch-size", "32", "--data-path", UNKNOWN]
    assert command.words[2].span.line == 4  # the 4 where it is written


@pytest.mark.parametrize("line, expected", [
    ('REPO=$(dirname $HERE)\ncmd $REPO/run_train.py\n', "examples/run_train.py"),
    ('REPO="$(dirname "${HERE}")"\ncmd $REPO/run_train.py\n', "examples/run_train.py"),
    ('REPO=$(dirname $NOT_SET)\ncmd $REPO/run_train.py\n', UNKNOWN),
])
def test_the_folder_of_a_known_path(line, expected):
    """nanotron's `EXAMPLE_PATH=$(cd -- "$(dirname "$0")" >/dev/null 2>&1 ; pwd -P)`, `REPO_PATH=$(dirname $EXAMPLE_PATH)`."""
    text = 'HERE=$(cd -- "$(dirname "$0")" >/dev/null 2>&1 ; pwd -P)\n' + line
    [command] = read_shell("examples/sub/train.sh", text).commands
    assert command.words[1].value == expected
