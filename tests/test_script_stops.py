"""BL603: a launch script that reads a variable before it sets it, where bash exits (`$((...))`
divides by an unset variable, an empty `$X` leaves no operand, `set -u`), so its launch line
never runs. Flagged only where the variable is certainly unset and the line certainly runs."""

import pytest

from batchlint.sources.shell import read_shell

LAUNCH = "python3 -m verl.trainer.main_ppo data.max_prompt_length=$max_prompt_length trainer.n_gpus_per_node=8\n"


def stops(text, **kwargs):
    """(line, column, variable, why, line set at) of the Stop the reader records."""
    return [(s.span.line, s.span.column, s.variable, s.why, s.set_at.line)
            for s in read_shell("run.sh", text, **kwargs).stops]


# The verl shape: lengths first, a token budget divided by the sequence-parallel size set further down.
VERL = """\
#!/usr/bin/env bash
{options}
max_prompt_length=$((1024 * 16))
max_response_length=$((1024 * 16))
{first}actor_ppo_max_token_len=$(((max_prompt_length + max_response_length) / {divisor}))
sp_size=4
""" + LAUNCH


def verl(options="set -xeuo pipefail", first="", divisor="sp_size"):
    return VERL.format(options=options, first=first, divisor=divisor)


def test_the_divisor_set_further_down_stops_the_script(lint):
    # Under `set -u`: "sp_size: unbound variable", bash exits; without it, "division by 0": bash skips
    # the command and goes on. The column is sp_size's.
    assert stops(verl()) == [(5, 72, "sp_size", "unbound", 6)]
    assert stops(verl(options="set -x")) == [(5, 72, "sp_size", "division", 6)]
    [finding] = [d for d in lint("run_gspo.sh", verl()).diagnostics if d.code == "BL603"]
    assert (finding.span.line, finding.span.column, finding.span.end_column) == (5, 72, 79)
    assert finding.message.startswith("bash exits here: `sp_size` is not set yet (it is set on line 6)")
    said = " ".join(finding.notes)
    assert "`set -u` (line 2)" in said and "sp_size: unbound variable" in said
    assert "the launch on line 7 never runs" in said
    assert finding.fix == "move `sp_size=4` (line 6) above line 5"
    [finding] = [d for d in lint("run_gspo.sh", verl(options="set -x")).diagnostics if d.code == "BL603"]
    said = " ".join(finding.notes)
    assert "`$(((max_prompt_length + max_response_length) / sp_size))` divides by zero" in said
    assert "bash abandons the command and goes on: `actor_ppo_max_token_len` is left unset" in said


def test_after_a_stop_that_exits_no_other():
    text = verl().replace("sp_size=4\n", "infer=$(((max_prompt_length + max_response_length) / sp_size))\nsp_size=4\n")
    assert stops(text) == [(5, 72, "sp_size", "unbound", 7)]  # bash never gets to line 6
    # Without `set -u` bash goes on after each: both assignments are skipped.
    assert stops(text.replace("set -xeuo pipefail", "set -xeo pipefail")) == [
        (5, 72, "sp_size", "division", 7), (6, 54, "sp_size", "division", 7)]


def test_a_launch_line_that_divides_is_skipped(lint):
    text = "#!/bin/bash\ntorchrun --nproc_per_node 8 pretrain_gpt.py \\\n    --global-batch-size $((512 / TP))\nTP=8\n"
    [finding] = [d for d in lint("pretrain.sh", text).diagnostics if d.code == "BL603"]
    assert (finding.span.line, finding.span.column) == (3, 34)
    assert "the launch on line 2 is skipped" in " ".join(finding.notes)


@pytest.mark.parametrize("divisor, expected", [
    ("TP", [(4, 32, "TP", "division", 5)]),
    ("$TP", [(4, 33, "TP", "empty", 5)]),  # `64 / ` once $TP expands to nothing
    ("${TP}", [(4, 34, "TP", "empty", 5)]),
    ("(TP * PP)", []),  # PP, never set in the script, may come from the caller: TP * PP is not known
    ("8", []),
    ("${TP:-8}", []),
    ("(TP + 8)", []),  # 8: no division by zero
])
def test_megatron_data_parallel_size(divisor, expected):
    text = f"#!/bin/bash\nGPUS_PER_NODE=8\nNNODES=8\nDP=$((GPUS_PER_NODE * NNODES / {divisor}))\nTP=8\n" \
           "torchrun --nproc_per_node $GPUS_PER_NODE pretrain_gpt.py --tensor-model-parallel-size $TP\n"
    assert stops(text) == expected


def test_a_divisor_unset_only_when_every_unset_variable_is_set_further_down():
    text = "#!/bin/bash\nDP=$((64 / (TP * PP)))\nTP=8\nPP=2\n" + LAUNCH
    assert stops(text) == [(2, 13, "TP", "division", 3)]
    assert stops(text.replace("PP=2\n", "")) == []  # PP may come from the caller: TP * PP is not known


@pytest.mark.parametrize("line", [
    'echo "model: $MODEL"', "echo ${MODEL}", "cp $MODEL /tmp", "[ -n \"$MODEL\" ]", "X=$((MODEL + 1))",
])
def test_set_u_stops_at_any_plain_read(line):
    text = f"#!/bin/bash\nset -euo pipefail\n{line}\nMODEL=7\n" + LAUNCH
    assert [s[2:] for s in stops(text)] == [("MODEL", "unbound", 4)]
    assert stops(text.replace("set -euo pipefail", "set -o nounset")) != []
    assert stops(text.replace("set -euo pipefail", "set -eo pipefail")) == []  # no -u: an empty string
    assert stops(text.replace("set -euo pipefail", "set -u\nset +u")) == []


@pytest.mark.parametrize("line", [
    "echo ${MODEL:-x}", "echo ${MODEL-}", "echo ${MODEL:=x}", 'echo "$#" "$@" "$*"', "echo '$MODEL'",
    "echo \\$MODEL", "X=$(echo $MODEL)", "X=`echo $MODEL`", "echo $MODEL | tee log", "echo $MODEL &",
    "(echo $MODEL)", "(( MODEL > 1 ))", "bash -c 'echo $MODEL'", "f() { echo $MODEL; }",
])
def test_set_u_reads_that_do_not_stop_the_script(line):
    text = f"#!/bin/bash\nset -euo pipefail\n{line}\nMODEL=7\n" + LAUNCH
    assert stops(text) == []


@pytest.mark.parametrize("before", [
    "sp_size=4",  # set before: the verl fix
    "export sp_size=4", "declare -i sp_size=4", "read -r sp_size < sp.txt", "for sp_size in 4; do :; done",
    "getopts 's:' sp_size", "printf -v sp_size '%d' 4", "let sp_size=4", ": ${sp_size:=4}", "(( sp_size = 4 ))",
    "mapfile -t sp_size < sp.txt",
    'if [ "$1" = big ]; then sp_size=8; fi',  # set in a branch that may run
    "source ./env.sh",  # a file not read may set anything
    'eval "$(cat env.sh)"',
    "export $(cat .env | xargs)",
    "f() { sp_size=4; }",  # a function body, which may run
    "f() { sp_size=4; }\nf",
    "function f {\n  sp_size=4\n}\nf",
])
def test_a_variable_that_may_be_set_before_is_not_flagged(before):
    assert stops(verl(first=before + "\n")) == []


def test_variables_from_the_caller_and_the_scheduler():
    from batchlint.document import Span
    from batchlint.sources.shell import Word
    given = Word("4", Span(1, 1, 1, 2), "4")
    assert stops(verl(), environment={"sp_size": given}) == []  # `sp_size=4 ./run.sh`
    text = "#!/bin/bash\n#SBATCH --nodes=2\nPER=$((64 / SLURM_NNODES))\nSLURM_NNODES=2\n" + LAUNCH
    assert stops(text) == []
    text = "#!/bin/bash\nPER=$((64 / SLURM_NTASKS))\nSLURM_NTASKS=2\n" + LAUNCH
    assert stops(text) == []  # a Slurm variable: the environment's even if the script sets it later


def test_never_set_in_the_script_is_the_environments():
    assert stops(verl().replace("sp_size=4\n", "")) == []
    # Set later only from the caller's value, or only in a branch: the caller may give it.
    assert stops(verl().replace("sp_size=4\n", "sp_size=${sp_size:-4}\n")) == []
    assert stops(verl().replace("sp_size=4\n", '[ -z "${sp_size:-}" ] && sp_size=4\n')) == []
    assert stops(verl().replace("sp_size=4\n", 'if [ "$1" = x ]; then\n  sp_size=4\nfi\n')) == []


@pytest.mark.parametrize("shape", [
    'if [ "$1" = x ]; then\n  {use}\nfi',  # an undecided branch may not run
    'if [ "$1" = x ]; then\n  :\nelif [ $((1024 / sp_size)) -gt 1 ]; then\n  :\nfi',  # after an undecided test
    "f() {{\n  {use}\n}}",  # a function never called
    "for i in 1 2; do\n  {use}\ndone",
    "X=$(echo {use})", "({use})", "{use} | cat", "exit 0\n{use}", "(( 1024 / sp_size ))",
    "[ -f x ] && {use}",
])
def test_a_line_that_may_not_run_in_this_shell_is_not_flagged(shape):
    use = "echo $(((max_prompt_length + max_response_length) / sp_size))"
    text = verl().replace("actor_ppo_max_token_len=$(((max_prompt_length + max_response_length) / sp_size))",
                          shape.format(use=use))
    assert stops(text) == []


def test_a_branch_the_reader_decides_runs():
    text = verl(first='MODE=big\nif [ "$MODE" = big ]; then\n  X=$((1 / sp_size))\nfi\n')
    assert stops(text)[0][:4] == (7, 12, "sp_size", "unbound")
    # The branch not taken: only line 9's read stops it.
    text = verl(first='MODE=small\nif [ "$MODE" = big ]; then\n  X=$((1 / sp_size))\nfi\n')
    assert stops(text)[0][0] == 9


def test_an_expression_bash_may_not_read_whole():
    base = verl(options="set -x")
    for expression in ("(1024 && 1024 / sp_size)", "(sp_size > 0 ? 1024 / sp_size : 0)", "(x = 1024 / sp_size)"):
        text = base.replace("((max_prompt_length + max_response_length) / sp_size)", expression)
        assert stops(text) == [], expression


@pytest.mark.parametrize("expression, expected", [
    ("1 + MODEL", "MODEL"),
    ("(1 + MODEL) ** 2", "MODEL"),
    ("1 MODEL", None),  # not a valid expression: bash reports the syntax and reads no name (and goes on)
    ("/ MODEL", None),
    ("$MODEL /", "MODEL"),  # `$MODEL` is expanded before the expression is read: unbound first
    ("1) - (MODEL", None),  # `$((1) - (MODEL))`: a command substitution of a subshell, not arithmetic
    ("1 || MODEL", None),  # || may not read MODEL
])
def test_set_u_in_arithmetic_as_bash_reads_it(expression, expected):
    text = f"#!/bin/bash\nset -u\nX=$(({expression}))\nMODEL=7\n" + LAUNCH
    assert [s[2] for s in stops(text)] == ([expected] if expected else [])


def test_an_expression_the_reader_refuses_does_not_break_it():
    for expression in ("1 ~ 2", "1 ! 2", "~", "((", "1 / ( 2"):
        assert stops(f"X=$(({expression}))\n" + LAUNCH) == []


def test_set_u_turned_on_where_it_may_not_run():
    text = verl(options='if [ "$1" = strict ]; then set -u; fi')
    assert stops(text)[0][3] == "division"  # the division still stops it; `set -u` is not certain
    assert stops(verl(options="f() { set -u; }", divisor="(sp_size + 1)")) == []


def test_a_sourced_file_that_sets_it(tmp_path):
    def sourcer(word):
        return ("env.sh", "env.sh", "sp_size=4\n") if word.value == "./env.sh" else None

    assert stops(verl(first="source ./env.sh\n"), sourcer=sourcer) == []
    assert stops(verl(first="source ./other.sh\n"), sourcer=sourcer) == []  # not read: anything may be set
    # A file the reader follows that sets something else: the read still stops the script.
    def other(word):
        return ("env.sh", "env.sh", "N=4\n")

    assert stops(verl(first="source ./env.sh\n"), sourcer=other)[0][2] == "sp_size"


def test_the_launch_named_is_the_first_after_the_stop(lint):
    launch = "torchrun --nproc_per_node 8 train.py\n"
    text = "#!/bin/bash\nset -u\n" + launch + "echo $MODEL\nMODEL=7\n" + launch
    [finding] = [d for d in lint("train.sh", text).diagnostics if d.code == "BL603"]
    assert (finding.span.line, finding.span.column) == (4, 6)
    assert "the launch on line 6 never runs" in finding.notes
    [finding] = [d for d in lint("train.sh", text[:-len(launch)]).diagnostics if d.code == "BL603"]
    assert "nothing after it runs" in finding.notes


def test_a_function_on_one_line_is_a_function():
    # Its body runs when it is called, not where it is written (and may set what it reads).
    text = "#!/bin/bash\nset -u\nlog() { echo \"$STAGE: $*\"; }\nSTAGE=train\nlog start\n" + LAUNCH
    assert stops(text) == []
