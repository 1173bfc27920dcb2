"""One account of W: a config that launch lines in view run is judged, explained, hovered and shown as
they run it, each with its own W; `-w` is for the configs no launch line runs, and says where it is not
used; a problem reached through several jobs is one finding."""

import json
import os

import pytest
from click.testing import CliRunner

from batchlint import per_run, project
from batchlint.cli import main
from batchlint.launching import callers

from conftest import CORPUS, write

SFT = """\
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 3
batch_size = 1
accumulative_counts = 16
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=SequenceParallelSampler, shuffle=True))
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""


def two_jobs(folder):
    write(folder, "sft.py", SFT)
    write(folder, "a.sh", "#!/bin/bash\nNPROC_PER_NODE=8 xtuner train sft.py\n")
    write(folder, "b.sh", "#!/bin/bash\nNPROC_PER_NODE=16 xtuner train sft.py\n")


def run(folder, monkeypatch, *args):
    monkeypatch.chdir(folder)
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_a_problem_two_jobs_reach_is_one_finding_with_both_launch_lines(tmp_path, monkeypatch):
    two_jobs(tmp_path)
    for paths in (["."], ["sft.py"]):
        found = json.loads(run(tmp_path, monkeypatch, "check", "--output-format", "json", *paths).stdout)
        [layout] = [d for d in found if d["code"] == "BL202"]
        assert "W (8)" in layout["message"], "the first job's numbers"
        notes = [(r["path"], r["message"]) for r in layout["related"]]
        assert ("a.sh", "launched here by xtuner with W=8") in notes
        assert ("b.sh", "launched here by xtuner with W=16") in notes
        assert len([d for d in found if (d["code"], d["line"]) == ("BL105", 5)]) == 1


def test_explain_gives_a_column_for_each_launch_line_that_runs_the_config(tmp_path, monkeypatch):
    two_jobs(tmp_path)
    result = run(tmp_path, monkeypatch, "explain", "sft.py")
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0] == "sft.py, as 2 launch lines run it: a.sh:2, b.sh:2  [xtuner]"
    assert lines[1].split() == ["a.sh:2", "b.sh:2"]
    world = next(line for line in lines if line.strip().startswith("world size W"))
    assert world.split()[3:5] == ["8", "16"]
    data = json.loads(run(tmp_path, monkeypatch, "explain", "sft.py", "--output-format", "json").stdout)
    assert data[0]["columns"] == ["a.sh:2", "b.sh:2"]


def test_explain_w_still_asks_what_if(tmp_path, monkeypatch):
    two_jobs(tmp_path)
    result = run(tmp_path, monkeypatch, "explain", "-w", "6", "sft.py")
    world = next(line for line in result.output.splitlines() if line.strip().startswith("world size W"))
    assert world.split()[3] == "6"


def test_w_given_for_a_launched_config_says_it_is_not_used(tmp_path, monkeypatch):
    two_jobs(tmp_path)
    result = run(tmp_path, monkeypatch, "check", "-w", "4", "sft.py")
    assert "sft.py: W 4 (from --world-size) is not used: the launch lines that run it give W " \
           "(a.sh:2 (W=8), b.sh:2 (W=16))" in result.stderr
    alone = tmp_path / "alone"
    write(alone, "sft.py", SFT)
    result = run(alone, monkeypatch, "check", "-w", "4", "sft.py")
    assert "is not used" not in result.stderr and "W (4)" in result.stdout


def test_show_settings_names_the_launch_lines_and_their_w(tmp_path, monkeypatch):
    two_jobs(tmp_path)
    result = run(tmp_path, monkeypatch, "check", "--show-settings", "sft.py", "--output-format", "json")
    assert json.loads(result.stdout)["launched-by"] == ["a.sh:2 (W=8)", "b.sh:2 (W=16)"]


def test_hover_takes_w_from_the_launch_lines(tmp_path, monkeypatch):
    from batchlint.config import Settings
    from batchlint.server.hover import tables_at

    two_jobs(tmp_path)
    monkeypatch.chdir(tmp_path)
    tables = tables_at(str(tmp_path / "sft.py"), 3, Settings(root=str(tmp_path)))
    assert [t.title.split(", as ")[1] for t in tables] == ["launched by xtuner with W=8 at a.sh:2",
                                                          "launched by xtuner with W=16 at b.sh:2"]


def test_the_index_of_names_finds_what_the_scan_finds(monkeypatch):
    """callers.naming answers from an index of names after its first few asks: the same callers as
    scanning every file, for every config of the corpus."""
    import pytest

    if not os.path.isdir(CORPUS):
        pytest.skip("the corpus (../shared) is not here")
    configs = sorted(os.path.join(d, f) for d, _, fs in os.walk(CORPUS) for f in fs
                     if f.endswith((".yaml", ".yml", ".json", ".py", ".toml", ".sh")))
    with project.using(project.Project((os.path.realpath(CORPUS),))):
        per_run.forget()
        monkeypatch.setattr(callers, "SCANS_BEFORE_INDEX", 10 ** 9)
        scanned = [callers.naming(p) for p in configs]
        per_run.forget()
        monkeypatch.setattr(callers, "SCANS_BEFORE_INDEX", 0)
        indexed = [callers.naming(p) for p in configs]
    assert indexed == scanned
    assert sum(1 for found in scanned if found) > 20, "the corpus names its configs in scripts"


def test_the_index_holds_every_whole_run_with_a_dot_in_each_file():
    """The index of names makes objects only of the runs of name characters that hold a dot (the names
    looked up in it have one): the same index as keeping those of all runs, on generated files."""
    import random

    rng = random.Random(20261129)
    pieces = [b"sft.yaml", b"configs/", b"a.b", b".", b"..", b"-", b"_", b"x", b"9", b" ", b"\n", b"/", b"$", b"=",
              b"\"", b"\xc3\xa9", b"ds_config.json", b".hidden", b"end.", b"-.-", b"\t", b"${STAGE}.json"]
    chunks = [b"".join(rng.choice(pieces) for _ in range(rng.randrange(0, 60))) for _ in range(400)]
    starts, size = [], 0
    for chunk in chunks:
        starts.append(size)
        size += len(chunk) + len(callers._SEPARATOR)
    files = callers._Files(b"".join(chunk + callers._SEPARATOR for chunk in chunks), tuple(starts),
                           tuple(f"f{i}" for i in range(len(chunks))), True)
    every_run: dict = {}
    for number, chunk in enumerate(chunks):
        for run in set(callers._NAME.findall(chunk)):
            if b"." in run:
                every_run.setdefault(run, []).append(number)
    assert callers._index(files) == every_run
    assert len(every_run) > 100


def test_the_run_lints_the_jobs_of_the_files_it_was_given_before_them(tmp_path, monkeypatch):
    """pre-commit's list: the scripts that run a given config are linted by the run first (ProjectJobs.prepare),
    once each, not from inside the config's lint."""
    import inspect

    from batchlint import engine

    two_jobs(tmp_path)
    linted: list = []
    check_file = engine.check_file

    def spy(path, *args, **kwargs):
        linted.append((os.path.basename(path), any(f.function == "lint_file" for f in inspect.stack())))
        return check_file(path, *args, **kwargs)

    monkeypatch.setattr(engine, "check_file", spy)
    result = run(tmp_path, monkeypatch, "check", "sft.py")
    assert "BL202" in result.stdout
    assert sorted(linted) == [("a.sh", False), ("b.sh", False), ("sft.py", True)]


def test_the_editor_shows_a_json_the_job_it_belongs_to(tmp_path, monkeypatch):
    """Issue 24's first case: a DeepSpeed JSON open alone in the editor, its launch script only on disk,
    gets the error the run over the whole folder gives it (DeepSpeed refuses 128 != 4 x 16 x 4 GPUs)."""
    from batchlint.server.session import Document, Session, key

    write(tmp_path, "ds_zero2.json", '{\n  "train_batch_size": 128,\n  "train_micro_batch_size_per_gpu": 4,\n'
                                     '  "gradient_accumulation_steps": 16\n}\n')
    write(tmp_path, "train.sh", "#!/bin/bash\ndeepspeed --num_gpus 4 train.py --deepspeed ds_zero2.json\n")
    write(tmp_path, "train.py", "import deepspeed\n")
    monkeypatch.chdir(tmp_path)
    whole = json.loads(run(tmp_path, monkeypatch, "check", "--output-format", "json", ".").stdout)
    assert [(d["code"], d["line"]) for d in whole] == [("BL102", 2)]
    session = Session()
    path = str(tmp_path / "ds_zero2.json")
    session.put(Document(path, (tmp_path / "ds_zero2.json").as_uri(), (tmp_path / "ds_zero2.json").read_text(), 1))
    linted = session.lint(key(path))
    assert [(d.code, d.span.line, d.severity) for d in linted.diagnostics] == [("BL102", 2, whole[0]["severity"])]


@pytest.mark.parametrize("line", [
    "deepspeed --num_gpus 4 train.py --deepspeed configs/${STAGE}.json",
    "deepspeed --num_gpus 4 train.py --deepspeed $DIR/$STAGE.json",
], ids=["braced", "bare"])
def test_a_config_whose_name_a_script_composes_is_judged_alone_as_in_the_folder(tmp_path, monkeypatch, line):
    """`STAGE=zero2` ... `configs/${STAGE}.json`: the name is never written whole, and the script runs it."""
    write(tmp_path, "configs/zero2.json", '{\n  "train_batch_size": 128,\n  "train_micro_batch_size_per_gpu": 4,\n'
                                          '  "gradient_accumulation_steps": 16\n}\n')
    write(tmp_path, "train.sh", f"#!/bin/bash\nSTAGE=zero2\nDIR=configs\n{line}\n")
    write(tmp_path, "train.py", "import deepspeed\n")
    whole = json.loads(run(tmp_path, monkeypatch, "check", "--output-format", "json", ".").stdout)
    alone = json.loads(run(tmp_path, monkeypatch, "check", "--output-format", "json", "configs/zero2.json").stdout)
    assert [(d["code"], d["line"]) for d in whole] == [("BL102", 2)]
    assert alone == whole
