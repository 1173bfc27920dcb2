"""Trust: one bad file never loses another file's findings, a crash is exit 2
(never the "findings" code), a dead worker is noticed, the same input gives the
same output, selection mistakes are loud, and nothing outside the project
reaches the output."""

import json
import os
import signal
import time

import pytest

import batchlint.engine as engine
from batchlint.cli import main
from batchlint.config import Settings
from batchlint.engine import Options, lint_file
from batchlint.rule import Rule
from batchlint.rules import RULES
from batchlint.run import unique

from conftest import DS_MISMATCH, HF_YAML, TRL_PACKED_GROUPED, XTUNER_SP, cli_runner, codes, run, run_module, write

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _exploding(names: set, action):
    """A rule that runs `action` for configs whose file name is in `names`."""

    def check(plan):
        if os.path.basename(plan.document.path) in names:
            action()
        return ()

    return Rule("BL999", "test-explosion", "error", "test", check, doc="x")


@pytest.fixture
def explode(monkeypatch):
    """Make linting the named files fail with `action`, in this process and in forked workers."""

    def arm(names, action):
        rules = RULES + (_exploding(set(names), action),)
        monkeypatch.setattr("batchlint.rules.LAZY", rules)  # what the run layer lints with

    return arm


def _boom():
    raise ValueError("boom")


# --- isolation and exit codes ---------------------------------------------------------------

@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_internal_error_costs_one_file_and_exits_2(workdir, explode, jobs):
    for i in range(4):
        write(workdir, f"ds{i}.json", DS_MISMATCH)
    explode({"ds1.json"}, _boom)
    result = run("-w", "8", "-j", jobs, ".")
    assert result.exit_code == 2
    assert [c for c in codes(result.stdout)] == ["BL102"] * 3, "the other files' findings are all reported"
    assert "ds1.json" not in result.stdout
    errors = [line for line in result.stderr.splitlines() if "error:" in line]
    assert errors == ["batchlint: error: internal error while linting ds1.json: ValueError: boom "
                      "(run with --verbose for the traceback)"]


def test_verbose_shows_the_traceback(workdir, explode):
    write(workdir, "ds.json", DS_MISMATCH)
    explode({"ds.json"}, _boom)
    result = cli_runner().invoke(main, ["--verbose", "ds.json"])
    assert result.exit_code == 2
    assert "Traceback (most recent call last)" in result.stderr and "_boom" in result.stderr


def test_an_internal_error_beats_exit_zero(workdir, explode):
    write(workdir, "ds.json", DS_MISMATCH)
    explode({"ds.json"}, _boom)
    assert run("--exit-zero", "ds.json").exit_code == 2


def test_lint_file_never_raises(tmp_path, explode):
    path = write(tmp_path, "ds.json", DS_MISMATCH)
    rules = RULES + (_exploding({"ds.json"}, lambda: [][1]),)
    result = lint_file(path, Settings(root=str(tmp_path)), Options(), rules)
    assert result.error.startswith("internal error while linting") and "IndexError" in result.error
    assert result.diagnostics == [] and "Traceback" in result.traceback


def test_a_killed_worker_costs_its_file_and_the_run_finishes(workdir, explode):
    for i in range(6):
        write(workdir, f"ds{i}.json", DS_MISMATCH)
    explode({"ds2.json"}, lambda: os.kill(os.getpid(), signal.SIGKILL))
    started = time.monotonic()
    result = run("-w", "8", "-j", "2", ".")
    assert time.monotonic() - started < 30, "the parent must not hang on a dead worker"
    assert result.exit_code == 2
    assert codes(result.stdout) == ["BL102"] * 5
    assert "internal error while linting ds2.json: the worker process was killed by SIGKILL" in result.stderr


def test_a_file_that_runs_too_long_is_stopped(workdir, explode, monkeypatch):
    write(workdir, "slow.json", DS_MISMATCH)
    write(workdir, "ds.json", DS_MISMATCH)
    monkeypatch.setattr(engine, "FILE_SECONDS", 1)
    explode({"slow.json"}, lambda: time.sleep(30))
    started = time.monotonic()
    result = run("-w", "8", ".")
    assert time.monotonic() - started < 10
    assert result.exit_code == 2
    assert codes(result.stdout) == ["BL102"]
    assert "internal error while linting slow.json: took longer than the per-file limit" in result.stderr


def test_a_library_callers_alarm_handler_is_put_back(workdir):
    """The per-file limit borrows SIGALRM while a file is linted and gives back what was there."""
    write(workdir, "ds.json", DS_MISMATCH)

    def callers(signum, frame):
        raise AssertionError("not expected to fire")

    previous = signal.signal(signal.SIGALRM, callers)
    try:
        result = lint_file(str(workdir / "ds.json"), Settings(world_size=8), Options(), RULES)
        assert [d.code for d in result.diagnostics] == ["BL102"]
        assert signal.getsignal(signal.SIGALRM) is callers
        assert signal.getitimer(signal.ITIMER_REAL)[0] == 0
    finally:
        signal.signal(signal.SIGALRM, previous)
    assert signal.getsignal(signal.SIGALRM) is previous


def test_a_file_linted_in_another_thread_sets_no_alarm(workdir):
    """Signals arrive in the main thread only: a lint in another (an editor's server) runs without the
    per-file limit, leaves SIGALRM's handler as it was, and finds what the main thread finds."""
    import threading

    write(workdir, "ds.json", DS_MISMATCH)
    before = signal.getsignal(signal.SIGALRM)
    found: list = []
    worker = threading.Thread(target=lambda: found.append(
        lint_file(str(workdir / "ds.json"), Settings(world_size=8), Options(), RULES)))
    worker.start()
    worker.join(60)
    assert [d.code for d in found[0].diagnostics] == ["BL102"] and found[0].error is None
    assert signal.getsignal(signal.SIGALRM) is before and signal.getitimer(signal.ITIMER_REAL)[0] == 0


# --- determinism and completeness -------------------------------------------------------------

def test_two_findings_at_one_place_are_both_kept_in_a_fixed_order():
    from batchlint.diagnostic import Diagnostic
    from batchlint.document import Span

    at = Span(2, 3, 2, 5)
    a = Diagnostic("BL120", "hf-deepspeed-mismatch", "error", "train_batch_size is 8", "ds.json", at)
    b = Diagnostic("BL120", "hf-deepspeed-mismatch", "error", "gradient_accumulation_steps is 2", "ds.json", at)
    assert unique([a, b]) == unique([b, a]) == [b, a]


def test_the_same_finding_twice_is_one_with_both_notes():
    from batchlint.diagnostic import Diagnostic
    from batchlint.document import Span
    from batchlint.rule import Related

    at = Span(2, 3, 2, 5)
    plain = Diagnostic("BL101", "x", "warning", "m", "sft.py", at)
    note = Related("launched here by xtuner", Span(3, 1, 3, 9), "train.sh")
    launched = Diagnostic("BL101", "x", "warning", "m", "sft.py", at, related=(note,))
    assert unique([plain, launched]) == unique([launched, plain]) == [launched]


def test_output_does_not_depend_on_argument_order_or_jobs(workdir):
    write(workdir, "a/ds.json", DS_MISMATCH)
    write(workdir, "b/trl.yaml", TRL_PACKED_GROUPED)
    write(workdir, "c/sft.py", XTUNER_SP)
    outputs = {run("-w", "8", "--format", "json", *order).stdout
               for order in (["a", "b", "c"], ["c", "b", "a"], ["b", "c", "a"])}
    outputs.add(run("-w", "8", "--format", "json", "-j", "2", "c", "a", "b").stdout)
    assert len(outputs) == 1


def test_output_does_not_depend_on_the_hash_seed(tmp_path):
    outputs = set()
    for seed in ("1", "7", "123"):
        proc = run_module("--format", "json", "-w", "8", "examples", cwd=REPO, env={"PYTHONHASHSEED": seed})
        assert proc.returncode == 1, proc.stderr
        outputs.add(proc.stdout)
    assert len(outputs) == 1


# --- selection mistakes are loud --------------------------------------------------------------

@pytest.mark.parametrize("args", [("--select", "BL109"), ("--ignore", "BL9"), ("--select", "BL101,BL777")])
def test_a_selector_that_names_no_rule_is_a_usage_error(workdir, args):
    write(workdir, "sft.py", XTUNER_SP)
    result = run(*args, "sft.py")
    assert result.exit_code == 2
    assert "names no rule" in result.stderr and result.stdout == ""


def test_a_config_selector_that_names_no_rule_is_a_usage_error(workdir):
    write(workdir, "sft.py", XTUNER_SP)
    write(workdir, "batchlint.toml", 'ignore = ["BL1O1"]\n')
    assert run("sft.py").exit_code == 2
    write(workdir, "batchlint.toml", '[per-file-ignores]\n"*.py" = ["BL555"]\n')
    assert run("sft.py").exit_code == 2


def test_the_most_specific_selector_wins(workdir):
    write(workdir, "sft.py", XTUNER_SP)
    assert codes(run("--select", "BL101", "--ignore", "BL1", "sft.py").stdout) == ["BL101"]
    assert codes(run("--select", "BL1", "--ignore", "BL101", "sft.py").stdout) == []
    assert codes(run("--select", "BL101", "--ignore", "BL101", "sft.py").stdout) == []


def test_a_disable_without_equals_disables_nothing(workdir):
    text = XTUNER_SP.replace("accumulative_counts = 64 // sequence_parallel_size\n",
                             "accumulative_counts = 64 // sequence_parallel_size  # batchlint: disable BL101\n")
    write(workdir, "sft.py", text)
    result = run("sft.py")
    assert codes(result.stdout) == ["BL002", "BL101"]
    assert "'disable BL101' needs '=': write 'disable=BL101'" in result.stdout


def test_a_directive_naming_no_rule_is_bl002(workdir):
    text = XTUNER_SP.replace("accumulative_counts = 64 // sequence_parallel_size\n",
                             "accumulative_counts = 64 // sequence_parallel_size  # batchlint: disable=BL109\n")
    write(workdir, "sft.py", text)
    assert codes(run("sft.py").stdout) == ["BL002", "BL101"]


@pytest.mark.parametrize("value", ["²", "٣", "1e3", "9" * 5000, "-1", "0x8"])
def test_a_world_size_directive_that_is_not_a_plain_number_is_bl002(workdir, value):
    write(workdir, "sft.py", f"# batchlint: world-size={value}\n" + XTUNER_SP)
    result = run("sft.py")
    assert result.exit_code == 1
    assert codes(result.stdout)[0] == "BL002"


# --- what reaches the output -----------------------------------------------------------------

def test_control_characters_never_reach_the_terminal(workdir):
    name = "ds\x1b[31m\u202e.json"
    write(workdir, name, DS_MISMATCH)
    result = run("-w", "8", ".")
    assert result.exit_code == 1
    assert "\x1b" not in result.stdout and "\u202e" not in result.stdout
    assert "ds[31m.json:2:" in result.stdout


def test_an_undecodable_file_name_is_reported_in_every_format(workdir):
    folder = os.fsencode(str(workdir))
    with open(os.path.join(folder, b"ds\xff.json"), "wb") as handle:
        handle.write(DS_MISMATCH.encode())
    for fmt in ("text", "json", "sarif", "github"):
        result = run("-w", "8", "--format", fmt, ".")
        assert result.exit_code == 1, (fmt, result.stderr)
        assert "ds\ufffd.json" in result.stdout
    out = workdir / "report.json"
    assert run("-w", "8", "--format", "json", "--output", str(out), ".").exit_code == 1
    assert json.loads(out.read_text(encoding="utf-8"))[0]["path"] == "ds\ufffd.json"


def test_a_huge_number_is_abbreviated_in_messages():
    from batchlint.diagnostic import clean_text

    assert clean_text(f"train_batch_size ({'9' * 5000}) is wrong") == "train_batch_size (999999...(5000 digits)) is wrong"


def test_job_summary_escapes_markdown_and_html(workdir, monkeypatch):
    summary = workdir / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    write(workdir, "x<img src=y>|[a](b).json", DS_MISMATCH)
    result = run("-w", "8", "--format", "github", ".")
    assert result.exit_code == 1
    table = summary.read_text()
    assert "<img" not in table and "](b)" not in table
    row = [line for line in table.splitlines() if line.startswith("| error")][0]
    assert row.count(" | ") == 3, "a | in the text must not open a new cell"


def test_an_unwritable_job_summary_is_a_warning_and_the_annotations_are_printed(workdir, monkeypatch):
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(workdir / "missing-dir" / "summary.md"))
    write(workdir, "ds.json", DS_MISMATCH)
    result = run("-w", "8", "--format", "github", "ds.json")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("::warning title=batchlint::cannot write the job summary")
    assert lines[1].startswith("::error file=ds.json,line=2")


# --- the project boundary -------------------------------------------------------------------

SFT_LINKING = HF_YAML + "deepspeed: {link}\n"
DS_SECRET = '{\n  "train_micro_batch_size_per_gpu": 3,\n  "gradient_accumulation_steps": 5,\n  "secret_key_name": 1\n}\n'


@pytest.fixture
def project(tmp_path, monkeypatch):
    """tmp/project (a git checkout) and tmp/outside beside it; cwd is the project."""
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    write(tmp_path, "outside/ds.json", DS_SECRET)
    monkeypatch.chdir(root)
    for name in ("GITHUB_STEP_SUMMARY", "GITHUB_WORKSPACE", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    return root


def _assert_nothing_of_outside(result):
    assert "secret" not in result.stdout and "BL120" not in result.stdout
    assert "train_micro_batch_size_per_gpu (3)" not in result.stdout


@pytest.mark.parametrize("link", ["../outside/ds.json", "{outside}/ds.json"])
def test_a_linked_deepspeed_json_outside_the_project_is_not_read(project, link):
    link = link.format(outside=project.parent / "outside")
    write(project, "sft.yaml", SFT_LINKING.format(link=link))
    result = run("-w", "8", "--show-source", "sft.yaml")
    _assert_nothing_of_outside(result)
    assert f"sft.yaml:{len(HF_YAML.splitlines()) + 1}: `deepspeed: {link}` resolves outside the project" in result.stderr


def test_a_symlink_leaving_the_project_is_outside(project):
    os.symlink(project.parent / "outside" / "ds.json", project / "ds.json")
    write(project, "sft.yaml", SFT_LINKING.format(link="ds.json"))
    result = run("-w", "8", "sft.yaml")
    _assert_nothing_of_outside(result)
    assert "resolves outside the project" in result.stderr


def test_the_same_link_inside_the_project_is_read(project):
    write(project, "ds.json", DS_SECRET)
    write(project, "sft.yaml", SFT_LINKING.format(link="ds.json"))
    assert "BL120" in run("-w", "8", "sft.yaml").stdout


def test_reference_paths_widen_the_project(project):
    write(project, "batchlint.toml", 'reference-paths = ["../outside"]\n')
    write(project, "sft.yaml", SFT_LINKING.format(link="../outside/ds.json"))
    result = run("-w", "8", "sft.yaml")
    assert "BL120" in result.stdout and "outside the project" not in result.stderr


def test_a_launch_line_naming_a_config_outside_the_project_is_not_followed(project):
    write(project.parent, "outside/sft.yaml", TRL_PACKED_GROUPED)
    write(project, "train.sh", "#!/bin/bash\ntorchrun --nproc_per_node 8 train.py --config ../outside/sft.yaml\n"
                               "swift sft --config ../outside/sft.yaml\nllamafactory-cli train ../outside/sft.yaml\n")
    result = run("train.sh")
    assert "BL301" not in result.stdout
    assert "resolves outside the project" in result.stderr


# --- what is read -----------------------------------------------------------------------------

def test_a_fifo_is_never_opened(tmp_path):
    fifo = tmp_path / "ds.json"
    os.mkfifo(fifo)
    started = time.monotonic()
    result = lint_file(str(fifo), Settings(root=str(tmp_path)), Options(), RULES)
    assert time.monotonic() - started < 5
    assert result.error is None and result.diagnostics == []
    assert result.notices == [f"skipped {result.path}: not a regular file (a FIFO)"]


def test_a_file_past_the_size_bound_is_one_bl003(tmp_path, monkeypatch):
    monkeypatch.setattr("batchlint.limits.MAX_FILE_BYTES", 1000)
    path = write(tmp_path, "ds.json", DS_MISMATCH + " " * 2000)
    result = lint_file(path, Settings(root=str(tmp_path)), Options(), RULES)
    assert [d.code for d in result.diagnostics] == ["BL003"]
    assert "over the 1,000-byte bound" in result.diagnostics[0].message


def test_a_verdict_does_not_depend_on_the_pre_commit_batch(workdir):
    """pre-commit splits files into batches: a config and the launch script that runs it may
    land together or apart. Each finding is the same either way (only the notes of a finding
    seen in both contexts are merged when they land together)."""
    write(workdir, "sft.py", XTUNER_SP)
    write(workdir, "train.sh", "#!/bin/bash\nNPROC_PER_NODE=8 NNODES=4 xtuner train sft.py\n")
    write(workdir, "ds.json", DS_MISMATCH)

    def first_lines(*paths):
        out = run("-w", "8", *paths).stdout
        return {line for line in out.splitlines() if not line.startswith((" ", "Found", "All"))}

    together = first_lines("sft.py", "train.sh", "ds.json")
    apart = first_lines("sft.py", "ds.json") | first_lines("train.sh")
    assert together == apart
    assert {line.split(" ", 2)[1] for line in together} == {"BL101", "BL102"}


def test_an_error_outside_any_file_is_exit_2_with_one_line(workdir, monkeypatch):
    write(workdir, "ds.json", DS_MISMATCH)

    def broken(*args, **kwargs):
        raise RuntimeError("broken reporter")

    monkeypatch.setattr("batchlint.report.render", broken)
    result = cli_runner().invoke(main, ["ds.json"])
    assert result.exit_code == 2
    assert result.stderr == "batchlint: error: internal error: RuntimeError: broken reporter\n"


def test_a_baseline_with_an_undecodable_file_name_is_valid_utf8_and_matches(workdir):
    folder = os.fsencode(str(workdir))
    with open(os.path.join(folder, b"ds\xff.json"), "wb") as handle:
        handle.write(DS_MISMATCH.encode())
    assert run("-w", "8", "--write-baseline", "base.json", "ds\udcff.json").exit_code == 0
    (workdir / "base.json").read_bytes().decode("utf-8")  # strict: no raw undecodable bytes
    result = run("-w", "8", "--baseline", "base.json", ".")
    assert result.exit_code == 0, result.stdout  # matched, and the baseline itself is no config


def test_the_cache_folder_is_never_linted(workdir):
    write(workdir, "ds.json", DS_MISMATCH)
    assert run("-w", "8", "--cache-dir", "cache", ".").exit_code == 1
    assert {".gitignore", "CACHEDIR.TAG"} <= set(os.listdir(workdir / "cache"))
    files = [name for name in os.listdir(workdir / "cache") if name.endswith(".json")]
    (workdir / "cache" / files[0]).write_text(json.dumps({"train_batch_size": 0}))  # would be a finding if read
    result = run("-w", "8", ".")
    assert codes(result.stdout) == ["BL102"] and "in 1 file" in result.stdout


def test_a_path_holding_a_nul_is_never_in_the_project(tmp_path):
    from batchlint.project import Project

    assert not Project((str(tmp_path),)).contains(str(tmp_path / "a\x00b"))
    assert Project((str(tmp_path),)).contains(str(tmp_path / "ab"))
