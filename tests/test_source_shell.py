"""The launch-script reader: commands, variables, quoting and positions."""

import pytest

from batchlint.document import Span
from batchlint.sources import is_shell_script
from batchlint.sources.shell import UNKNOWN, read_shell


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


@pytest.mark.parametrize("text, lines", [
    # LLaVA-NeXT's shape: the launch ended two lines up; the block under the comment is already a command
    # of its own (`--eval_num_processes ...`), so the broken `\\` drops nothing from the launch.
    ("deepspeed train.py \\\n    --run_name x\n# evaluation\n    --eval_num_processes 4 \\ \n    --limit 8 \\\n"
     "    --batch_size 1\n", []),
    ("deepspeed train.py --lr 1\n    --eval_num_processes 4 \\ \n    --limit 8\n", []),
    # The same lines still in the launch: the break drops them from it.
    ("deepspeed train.py \\\n    --run_name x \\\n    --eval_num_processes 4 \\ \n    --limit 8\n", [3]),
    # A command started by a variable or an assignment is a command: its break is reported.
    ("    $LAUNCHER train.py \\ \n    --limit 8\n", [1]),
    ("CUDA_VISIBLE_DEVICES=0 torchrun \\\n    train.py \\  # the script\n    --lr 1\n", [2]),
])
def test_a_break_in_lines_already_cut_from_their_command_is_not_reported(text, lines):
    assert [b.span.line for b in read_shell("run.sh", text).broken_continuations] == lines


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


@pytest.mark.parametrize("substitution", ['$(dirname "$1")', '$(dirname "$0")/$(date +%s)', "$(cd /opt && pwd)"])
def test_other_substitutions_stay_unknown(substitution):
    [command] = read_shell("examples/sft/run.sh", f"DIR={substitution}\ncmd $DIR\n").commands
    assert [w.value for w in command.words] == ["cmd", UNKNOWN]


@pytest.mark.parametrize("pwd", ["$(pwd)", "`pwd`", "$(pwd -P)", "$PWD", "${PWD}", '"$(pwd)"'])
def test_the_folder_the_shell_is_in_is_the_one_a_cd_moved_to(pwd):
    """`$(pwd)` runs nothing: it is the folder of an absolute `cd`, else `.` (where the command runs),
    which a `cd` before the command moves as any relative path; a value held from a folder left is not known."""
    assert commands(f"cd /opt/Megatron-LM\ntorchrun {pwd}/pretrain_gpt.py\n")[1:] == [
        ["torchrun", "/opt/Megatron-LM/pretrain_gpt.py"]]
    [_, command] = read_shell("run.sh", f"cd sub\npython {pwd}/train.py\n").commands
    assert (command.words[1].value, command.directory) == ("./train.py", "sub")
    assert command.words[1].working == ("sub",)
    assert commands(f"D={pwd}\ncd sub\ncmd $D/x.yaml\n")[1:] == [["cmd", UNKNOWN]]
    assert commands(f"D={pwd}\ncmd --config-path=$D/conf\n") == [["cmd", "--config-path=./conf"]]


def test_a_pwd_the_script_sets_is_its_own():
    assert commands("PWD=/data\ncmd $PWD/x.yaml\n") == [["cmd", "/data/x.yaml"]]
    assert commands("cd \"$X\"\ncmd $(pwd)/x.yaml\n")[1:] == [["cmd", "./x.yaml"]]


def test_a_bare_script_name_has_the_current_folder():
    assert commands('D=$(dirname "$0")\ncmd $D/x.yaml\n') == [["cmd", "./x.yaml"]]


def test_a_partly_unknown_string_keeps_its_known_words():
    """Megatron-LM's `options="--micro-batch-size 4 --data-path ${DATA_PATH}"` with DATA_PATH=$1 not known:
    each word an unknown value touches is one unknown word, the rest as written."""
    text = ('DATA_PATH=$1\nGBS=32\noptions=" \\\n  --micro-batch-size 4 \\\n  --global-batch-size ${GBS} \\\n'
            '  --data-path ${DATA_PATH}"\ncmd ${options}\n')
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


# -- if/elif/else and case decided by known values ------------------------------------------

def variables(text, **kwargs):
    doc = read_shell("run.sh", text, **kwargs)
    return {name: value.value for name, value in doc.variables.items() if hasattr(value, "value")}


VERL = """\
backend=megatron
rollout_mode=async
if [[ $backend == "megatron" ]]; then
    CONFIG_NAME=ppo_megatron_trainer
    TP=4
else
    CONFIG_NAME=ppo_trainer
    python3 -m verl.trainer.main_ppo --config-name=other
fi
if [ "$rollout_mode" = "async" ]; then
    export VLLM_USE_V1=1
    return_raw_chat="True"
fi
python3 -m verl.trainer.main_ppo --config-name=$CONFIG_NAME tp=$TP raw=$return_raw_chat
"""


def test_a_branch_known_values_decide_is_the_only_one_run():
    *_, command = read_shell("run.sh", VERL).commands
    assert [w.value for w in command.words[3:]] == ["--config-name=ppo_megatron_trainer", "tp=4", "raw=True"]
    assert command.env["VLLM_USE_V1"].value == "1"
    assert command.words[4].value_span.line == 5  # tp=4 points where TP was set, inside the branch
    # the branch not taken runs nothing: its launch line is not the script's
    assert not any(w.value == "--config-name=other" for c in read_shell("run.sh", VERL).commands for w in c.words)


def test_the_other_value_takes_the_other_branch():
    *_, command = read_shell("run.sh", VERL.replace("backend=megatron", "backend=fsdp")
                             .replace("rollout_mode=async", "rollout_mode=sync")).commands
    assert [w.value for w in command.words[3:]] == ["--config-name=ppo_trainer", UNKNOWN, UNKNOWN]
    assert "VLLM_USE_V1" not in command.env


def test_a_branch_nothing_decides_keeps_what_all_paths_leave_alike():
    text = VERL.replace("backend=megatron", "backend=$1")
    values = variables(text)
    assert values["CONFIG_NAME"] is UNKNOWN and values["TP"] is UNKNOWN  # set in one branch only
    # each branch's launch line is read, with the values it runs with
    lines = [[w.value for w in c.words] for c in read_shell("run.sh", text).commands if c.words[0].value == "python3"]
    assert lines[0] == ["python3", "-m", "verl.trainer.main_ppo", "--config-name=other"]
    assert lines[1][3] is UNKNOWN
    assert variables("if [ -f x ]; then N=4; else N=4; fi\n")["N"] == "4"  # every path sets 4
    assert variables("N=8\nif [ -f x ]; then N=4; fi\n")["N"] is UNKNOWN  # the empty else leaves 8


@pytest.mark.parametrize("test, taken", [
    ('[ -z "$E" ]', True), ('[ -n "$E" ]', False), ('[ -z "$A" ]', False), ('[ -n "$A" ]', True),
    ('[[ "$A" == "b" ]]', True), ('[ "$A" != "b" ]', False), ('[ "$A" == b ]', True), ("test $A = c", False),
    ("[ $N -gt 8 ]", True), ("[ $N -eq 16 ]", True), ("[ $N -ne 16 ]", False), ("[ $N -lt 8 ]", False),
    ("[ $N -le 16 ]", True), ("[ $N -ge 17 ]", False), ("(( N > 8 ))", True), ("(( N % 2 ))", False),
    ("[[ $P == pre* ]]", True), ('[[ $P == "pre*" ]]', False), ("[[ $P == p?efix_[a-c]bx ]]", True),
    ('[[ $A == b && $N -gt 4 ]]', True), ('[[ $A == c || $N -gt 20 ]]', False), ('[[ ! ( $A == c ) ]]', True),
    ('! [ "$A" = b ]', False), ('[ "$A" = b ] && [ $N -gt 100 ]', False), ('[ "$A" = c ] || [ $N = 16 ]', True),
    ("true", True), ("false", False), ('[ "x$E" = "x" ]', True),
])
def test_tests_over_known_values(test, taken):
    text = f"A=b\nE=\nN=16\nP=prefix_abx\nR=0\nif {test}; then\n  R=1\nfi\n"
    assert variables(text)["R"] == ("1" if taken else "0")


@pytest.mark.parametrize("test", [
    "[ -f ds.json ]", "command -v nvidia-smi", '[ "$UNSET" = b ]', "[ $UNSET -gt 8 ]", "(( UNSET > 8 ))",
    '[[ $A =~ ^b ]]', '[[ $A < c ]]', '[ "$A" = "$UNSET" ]', '[[ "$P" == *"_"* ]]', "[ abc -gt 3 ]",
    "[[ $UNSET == pre* ]]", "grep -q x f",
])
def test_tests_not_decided_here_leave_both_branches(test):
    text = f"A=b\nP=prefix_abx\nR=0\nif {test}; then\n  R=1\nfi\n"
    assert variables(text)["R"] is UNKNOWN


MAMBA = """\
MODEL_SCALE="800M" # or "8B"

case "${MODEL_SCALE}" in
    "800M")
        TENSOR_MODEL_PARALLEL_SIZE=1
        GLOBAL_BATCH_SIZE=32
        ;;
    "8B"|"8b") TENSOR_MODEL_PARALLEL_SIZE=4; GLOBAL_BATCH_SIZE=8;;
    *)
        echo "Invalid version specified"
        exit 1
        ;;
esac
torchrun pretrain_mamba.py --tensor-model-parallel-size ${TENSOR_MODEL_PARALLEL_SIZE} --global-batch-size ${GLOBAL_BATCH_SIZE}
"""


@pytest.mark.parametrize("scale, expected", [("800M", ["1", "32"]), ("8b", ["4", "8"]), ("8B", ["4", "8"])])
def test_case_runs_the_item_whose_pattern_matches(scale, expected):
    *_, command = read_shell("train.sh", MAMBA.replace('"800M" #', f'"{scale}" #')).commands
    assert [command.words[3].value, command.words[5].value] == expected


def test_case_of_a_value_no_pattern_matches_runs_the_default_item():
    commands = read_shell("train.sh", MAMBA.replace('"800M" #', '"2B" #')).commands
    assert [w.value for w in commands[-1].words] == ["exit", "1"]  # and nothing after it runs


def test_case_of_an_unknown_value_keeps_what_the_items_leave_alike():
    text = MAMBA.replace('"800M" #', '$1 #').replace("GLOBAL_BATCH_SIZE=8;;", "GLOBAL_BATCH_SIZE=32;;")
    *_, command = read_shell("train.sh", text).commands
    # TP differs between the items; the global batch is 32 in both (the `*)` item exits)
    assert [command.words[3].value, command.words[5].value] == [UNKNOWN, "32"]


@pytest.mark.parametrize("patterns, expected", [
    ("a|b) R=1;;", "1"), ("'a') R=1;;", "1"), ("(a) R=1;;", "1"), ("x*) R=0;; a*) R=1;;", "1"),
    ("[a-c]) R=1;;", "1"), ("[!a]) R=0;; *) R=1;;", "1"), ('"*") R=0;; *) R=1;;', "1"),
    ("a) R=1;& b) R=2;;", UNKNOWN),  # a fall-through: not followed
    ("a)\n  if [ $N = 1 ]; then R=1; else R=2; fi\n  ;;", "1"),
])
def test_case_patterns(patterns, expected):
    assert variables(f"V=a\nN=1\ncase $V in\n{patterns}\nesac\n").get("R") == expected


def test_then_and_do_on_their_own_lines_and_one_line_blocks():
    assert variables("X=1\nif [ \"$X\" = 1 ]\nthen\n  Y=2\nelif true\nthen\n  Y=3\nfi\n")["Y"] == "2"
    assert variables("X=1; if [ \"$X\" != 1 ]; then Y=2; elif [ $X = 1 ]; then Y=3; else Y=4; fi\n")["Y"] == "3"
    assert variables("X=1\nif [ $X = 2 ]; then Y=2; else if [ $X = 1 ]; then Y=5; fi; fi\nZ=1\n") \
        | {} == {"X": "1", "Y": "5", "Z": "1"}
    assert variables("for i in 1 2\ndo\n  M=$i\ndone\n")["M"] is UNKNOWN  # a loop: not followed


def test_a_test_of_an_outside_variable_being_empty_is_the_scripts_default():
    """`ZERO_STAGE=$2; if [ "$ZERO_STAGE" == "" ]; then ZERO_STAGE=3; fi` says what `ZERO_STAGE=${2:-3}`
    says: the caller that leaves it empty gets 3, as `${2:-3}` is read as 3."""
    text = 'OUTPUT=$1\nZERO_STAGE=$2\nif [ "$OUTPUT" == "" ]; then\n    OUTPUT=./output\nfi\n' \
           'if [ "$ZERO_STAGE" == "" ]; then\n    ZERO_STAGE=3\nfi\n[ -z "$NNODES" ] && NNODES=1\n'
    values = variables(text)
    assert (values["OUTPUT"], values["ZERO_STAGE"], values["NNODES"]) == ("./output", "3", "1")
    assert variables(text, arguments=[Word_("out"), Word_("2")])["ZERO_STAGE"] == "2"  # given: as given
    # a branch that changes a value the script set itself is not a default: unknown as before
    assert variables('MBS=4\nif [ -n "$DEBUG" ]; then\n  MBS=1\nfi\n')["MBS"] is UNKNOWN
    # the usage check of a missing argument does not end the script read
    commands = read_shell("run.sh", 'if [ -z "$1" ]; then\n  echo usage; exit 1\nfi\ntorchrun t.py\n').commands
    assert commands[-1].words[0].value == "torchrun"
    # an outside value compared with anything but empty is not known
    assert variables('if [ "$MODE" = "async" ]; then R=1; fi\n')["R"] is UNKNOWN


def Word_(value):
    from batchlint.sources.shell import Word
    return Word(value, Span(1, 1, 1, 2), value)


def test_exit_ends_the_script_and_a_branch_that_exits_is_left_out():
    assert [c.words[0].value for c in read_shell("run.sh", "echo a\nexit 0\ntorchrun t.py\n").commands] == ["echo", "exit"]
    assert variables("N=8\nif [ -f x ]; then\n  N=4; exit 1\nfi\n")["N"] == "8"
    assert variables("cd x || exit 1\nN=2\n")["N"] == "2"
    # an exit in a function, a loop, a subshell or a `bash -c` string does not end the script
    for text in ("f() {\n  exit 1\n}\n", "for i in 1; do exit; done\n", "(exit 1)\n", "bash -c \"exit 1\"\n"):
        assert read_shell("run.sh", text + "torchrun t.py\n").commands[-1].words[0].value == "torchrun"


# -- cd: the folder later commands run in ------------------------------------------------------

@pytest.mark.parametrize("line, directory", [
    ("cd ../..", "../.."), ('cd "$(dirname "$0")/.."', "examples"), ("cd $(dirname $0)", "examples/sft"),
    ("ROOT=$(cd $(dirname $0) && pwd)\ncd $ROOT/sub", "examples/sft/sub"), ("pushd configs", "configs"),
    ("cd /workspace/repo", "/workspace/repo"), ("cd a\ncd b", "a/b"), ("cd $UNSET", UNKNOWN), ("cd", UNKNOWN),
    ("cd ~/work", UNKNOWN), ("cd -", UNKNOWN), ("cd $UNSET\ncd sub", UNKNOWN),
    ("(cd sub && make)", None), ("pushd a\npopd", None), ("if [ -f x ]; then cd a; fi", UNKNOWN),
    ("if [ -f x ]; then cd a; else cd a; fi", "a"), ('bash -c "cd /w; echo"', None),
])
def test_cd_moves_the_commands_after_it(line, directory):
    *_, command = read_shell("examples/sft/run.sh", line + "\ntorchrun train.py\n").commands
    assert command.directory == directory


def test_paths_seen_from_the_folder_moved_to():
    from batchlint.sources.shell import in_directory
    assert in_directory("../..", "configs/ds.json") == "../../configs/ds.json"
    assert in_directory("a", "/abs/ds.json") == "/abs/ds.json"
    assert in_directory(None, "ds.json") == "ds.json"
    assert in_directory(UNKNOWN, "ds.json") is None
    # a path built from the script's own folder is where it is whatever the folder moved to
    [_, command] = read_shell("examples/sft/run.sh", 'D=$(cd "$(dirname "$0")" && pwd)\ncd ..\n'
                              'torchrun t.py --deepspeed $D/ds.json\n').commands
    assert command.words[3].value == "examples/sft/ds.json"
    assert in_directory(command.directory, "examples/sft/ds.json", command.anchored) == "examples/sft/ds.json"


def test_blocks_are_bounded():
    from batchlint.document import LimitExceeded
    with pytest.raises(LimitExceeded):
        read_shell("run.sh", "if true; then\n" * 100 + "fi\n" * 100)
    with pytest.raises(LimitExceeded):  # blocks the text never closes nest as deep
        read_shell("run.sh", "if a; then {\nfi\n" * 100)
    # many branches in a row cost each what it changes, not the state's size
    text = "".join(f"V{n}=1\n" for n in range(1000)) + "if [ -f x ]; then A=1; fi\n" * 1000
    assert variables(text)["A"] is UNKNOWN


ARGUMENT_LOOP = """\
TRAIN_BATCH_SIZE=256
ROLLOUT_N=8
while [[ "$#" -gt 0 ]]; do
  case "$1" in
    --train_batch_size) TRAIN_BATCH_SIZE="$2"; shift 2 ;;
    --rollout_n) ROLLOUT_N="$2"; shift 2 ;;
    *) echo "Unknown option: $1"; exit 1 ;;
  esac
done
"""


def test_an_argument_loop_keeps_the_defaults_of_a_script_run_without_arguments():
    """simpleRL-reason's option loop: run without arguments the loop never runs, as `${1:-256}` is 256."""
    values = variables(ARGUMENT_LOOP)
    assert (values["TRAIN_BATCH_SIZE"], values["ROLLOUT_N"]) == ("256", "8")
    # given arguments: the loop runs, how often is not followed: unknown
    given = variables(ARGUMENT_LOOP, arguments=[Word_("--rollout_n"), Word_("4")])
    assert given["ROLLOUT_N"] is UNKNOWN
    # a loop that sets a value of its own (not the caller's) leaves it unknown
    assert variables(ARGUMENT_LOOP.replace('ROLLOUT_N="$2"', "ROLLOUT_N=16"))["ROLLOUT_N"] is UNKNOWN
    assert variables("N=1\nwhile [ $N -gt 5 ]; do N=2; done\n")["N"] == "1"  # a first test that fails: no run


def test_a_folder_not_known_in_a_text_parsed_again_is_not_known():
    """Megatron-LM's multimodal sft script: `run_cmd="cd ${SOURCE}; python -u train.py ..."` run by
    `srun sh -c "${run_cmd}"`: the folder is not known (was the placeholder of a part not known)."""
    text = ('run_cmd="cd ${SOURCE}; python -u examples/train.py --micro-batch-size 1"\n'
            'srun -l sh -c "${run_cmd}"\n')
    doc = read_shell("run.sh", text)
    python = [c for c in doc.commands if c.words and c.words[0].value == "python"]
    assert python and all(c.directory is UNKNOWN for c in python)


REQUIRED_ARGUMENTS = """\
input_tokenizer_file=""
output_model_dir=""
save_interval=1000
while [[ ${#} -gt 0 ]]; do
    case ${1} in
        --input_tokenizer_file) input_tokenizer_file=${2}; shift ;;
        --output_model_dir) output_model_dir=${2}; shift ;;
        *) echo "Unknown parameter passed: ${1}"; exit 1 ;;
    esac
    shift
done
if [[ -z ${input_tokenizer_file} ]] || [[ -z ${output_model_dir} ]]; then
    echo "Error: Missing required arguments."
    exit 1
fi
deepspeed pretrain_gpt.py --save-interval ${save_interval}
"""


def test_a_usage_check_of_required_arguments_does_not_end_the_script_read():
    """Run without arguments the option loop leaves each default as the script set it, but a check that
    exits when a required one is still empty is the caller's to pass: the launch after it is read."""
    commands = read_shell("train.sh", REQUIRED_ARGUMENTS).commands
    assert [w.value for w in commands[-1].words] == ["deepspeed", "pretrain_gpt.py", "--save-interval", "1000"]
    single = REQUIRED_ARGUMENTS.replace("[[ -z ${input_tokenizer_file} ]] || [[ -z ${output_model_dir} ]]",
                                        '[ -z "$output_model_dir" ]')
    assert read_shell("train.sh", single).commands[-1].words[0].value == "deepspeed"
    # a default the script sets itself, no loop of arguments: the check is decided, the script ends
    assert read_shell("train.sh", 'OUT=""\nif [ -z "$OUT" ]; then\n  exit 1\nfi\ntorchrun t.py\n').commands[-1] \
        .words[0].value == "exit"
    assert variables(REQUIRED_ARGUMENTS)["save_interval"] == "1000"


@pytest.mark.parametrize("line, value", [
    (": ${NGPUS:=8}", "8"),                  # the idiom: set when the caller did not
    (': "${NGPUS:=8}"', "8"),                # quoted, as shellcheck asks
    (": ${NGPUS=8}", "8"),
    ("NGPUS=4\n: ${NGPUS:=8}", "4"),         # set already: kept
    ("NGPUS=\n: ${NGPUS:=8}", "8"),          # `:=` replaces an empty value too
    ("NGPUS=\n: ${NGPUS=8}", ""),            # `=` only an unset one
    ("true ${NGPUS:=8}", "8"),
])
def test_a_default_assigned_by_a_no_op_command_is_set(line, value):
    [*_, command] = read_shell("run.sh", f"{line}\ntorchrun --nproc_per_node $NGPUS x.py\n").commands
    assert [w.value for w in command.words][1:] == ["--nproc_per_node"] + ([value] if value else []) + ["x.py"]


def test_a_default_that_expands_or_runs_in_a_subshell_is_not_followed():
    text = ": ${NGPUS:=$DEFAULT}\necho $(: ${NNODES:=2})\ntorchrun --nproc_per_node $NGPUS --nnodes $NNODES x.py\n"
    [*_, command] = read_shell("run.sh", text).commands
    assert [w.value for w in command.words][2] is UNKNOWN and [w.value for w in command.words][4] is UNKNOWN
