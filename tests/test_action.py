"""The GitHub Action, run as the runner runs it: the steps of action.yml in order, each `run:`
script in bash with the variables the runner gives a composite action's step (GITHUB_ACTION_PATH,
GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, RUNNER_TEMP, the step's `env:` with its `${{ }}` expressions
evaluated, outputs passed on), `if:` conditions honoured. A `uses:` step (actions/setup-python) is
recorded, not run: the machine's Python must then do. The README's workflow snippet gives the inputs.

Installing runs offline: pip gets no index; the dependencies come from the suite's own environment
(PYTHONPATH), at the versions action/constraints.txt pins (checked here too), and setuptools from
the wheels virtualenv embeds."""

import contextlib
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, distribution, version

import pytest
import yaml

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(REPO, "examples")
ACTION_FILES = ("action.yml", "action", "pyproject.toml", "README.md", "lint", "rules")

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")



@contextlib.contextmanager
def _counted(runner, calls):
    """The installed batchlint, each of its runs noted in `calls` (one line each)."""
    wrapper = calls.parent / "counting-batchlint"
    wrapper.write_text(f'#!/usr/bin/env bash\necho "$*" >>{shlex.quote(str(calls))}\n'
                       f'exec {shlex.quote(runner.outputs["install"]["batchlint"])} "$@"\n')
    wrapper.chmod(0o755)
    calls.write_text("")
    with _installed(runner, wrapper):
        yield


@contextlib.contextmanager
def _installed(runner, program):
    """The Action's later steps run `program` as the batchlint the install step made."""
    saved = runner.outputs["install"]["batchlint"]
    runner.outputs["install"]["batchlint"] = str(program)
    try:
        yield
    finally:
        runner.outputs["install"]["batchlint"] = saved

def load_action() -> dict:
    with open(os.path.join(REPO, "action.yml"), encoding="utf-8") as handle:
        action = yaml.safe_load(handle)
    assert action["runs"]["using"] == "composite"
    return action


def pins() -> dict:
    with open(os.path.join(REPO, "action", "constraints.txt"), encoding="utf-8") as handle:
        lines = [line.split("#")[0].strip() for line in handle]
    return dict(line.split("==") for line in lines if line)


def readme_workflow() -> dict:
    """The README's workflow snippet (the yaml block that uses the action)."""
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as handle:
        blocks = re.findall(r"```yaml\n(.*?)```", handle.read(), re.S)
    [workflow] = [yaml.safe_load(b) for b in blocks if "/batchlint@" in b and "jobs:" in b]
    return workflow


class Runner:
    """A composite action's steps, as the runner runs them."""

    def __init__(self, action_path: str, workspace: str, temp: str, env: dict):
        self.action = load_action()
        self.action_path, self.workspace, self.temp, self.env = action_path, workspace, temp, env
        self.outputs: dict = {}
        self.results: dict = {}
        self.summaries: dict = {}

    def value(self, expr: str, inputs: dict) -> str:
        expr = expr.strip()
        if "||" in expr:  # the first truthy operand, else the last
            values = [self.value(part, inputs) for part in expr.split("||")]
            return next((v for v in values if v), values[-1])
        compared = re.fullmatch(r"(.+?)\s*(==|!=)\s*(.+)", expr)
        if compared:
            left, op, right = compared.groups()
            equal = self.value(left, inputs) == self.value(right, inputs)
            return "true" if equal == (op == "==") else ""
        if re.fullmatch(r"'[^']*'", expr):
            return expr[1:-1]
        name = re.fullmatch(r"inputs\.([\w-]+)", expr)
        if name:
            return inputs[name.group(1)] if name.group(1) in inputs else self.action["inputs"][name.group(1)]["default"]
        output = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expr)
        if output:
            return self.outputs.get(output.group(1), {}).get(output.group(2), "")
        raise AssertionError(f"this test's runner cannot evaluate {expr!r}: teach it, or keep action.yml simple")

    def substitute(self, text, inputs: dict) -> str:
        if isinstance(text, bool):  # YAML's false, which the runner passes on as "false"
            return str(text).lower()
        return re.sub(r"\$\{\{(.*?)\}\}", lambda m: self.value(m.group(1), inputs), str(text))

    def run(self, inputs: dict, only: tuple = ()) -> dict:
        unknown = set(inputs) - set(self.action["inputs"])
        assert not unknown, f"the action has no input {unknown}"
        for step in self.action["runs"]["steps"]:
            sid = step["id"]
            if only and sid not in only:
                continue
            if "if" in step and not self.value(step["if"], inputs):
                self.results[sid] = "skipped"
                continue
            if "uses" in step:
                self.results[sid] = ("uses", step["uses"], {k: self.substitute(v, inputs) for k, v in step["with"].items()})
                continue
            assert "${{" not in step["run"], "inputs must reach the script as variables, never pasted into it"
            assert step["shell"] == "bash"
            output, summary = os.path.join(self.temp, f"output-{sid}"), os.path.join(self.temp, f"summary-{sid}.md")
            for path in (output, summary):
                open(path, "w").close()
            env = dict(self.env, GITHUB_ACTION_PATH=self.action_path, GITHUB_WORKSPACE=self.workspace,
                       RUNNER_TEMP=self.temp, GITHUB_OUTPUT=output, GITHUB_STEP_SUMMARY=summary)
            env.update({k: self.substitute(v, inputs) for k, v in step.get("env", {}).items()})
            self.results[sid] = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=self.workspace, env=env,
                                               capture_output=True, text=True, timeout=120)
            with open(output, encoding="utf-8") as handle:
                self.outputs[sid] = dict(line.split("=", 1) for line in handle.read().splitlines() if "=" in line)
            with open(summary, encoding="utf-8") as handle:
                self.summaries[sid] = handle.read()
        return self.results


RUNTIME = ("click", "pyyaml", "libcst", "pathspec", "tomli")


def offline_site(folder) -> str:
    """batchlint's dependencies, as the suite has them, in one folder for PYTHONPATH: pip finds them
    installed (at the pinned versions) and downloads nothing. Only they: no pip, no setuptools."""
    folder.mkdir()
    for name in RUNTIME:
        try:
            dist = distribution(name)
        except PackageNotFoundError:
            continue
        for top in sorted({pathlib.PurePath(str(f)).parts[0] for f in dist.files or ()}):
            if top not in ("..", "__pycache__") and not top.endswith(".pth") and not (folder / top).exists():
                os.symlink(dist.locate_file(top), folder / top)
    return str(folder)


def wheelhouse() -> str:
    """setuptools wheels on this machine without a download: those virtualenv (pre-commit's) embeds."""
    embed = pytest.importorskip("virtualenv.seed.wheels.embed", reason="needs virtualenv's embedded wheels")
    return os.path.dirname(embed.__file__)


def base_env(python_dir: str, site: str) -> dict:
    """The job's environment, offline: PATH starts with the Python the action should find; pip
    has no index, reads no config and finds setuptools in the wheelhouse."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_", "PIP_", "INPUT_", "PYTHON"))}
    env.update(PATH=python_dir + os.pathsep + env.get("PATH", ""), PIP_NO_INDEX="1", PIP_CONFIG_FILE=os.devnull,
               PIP_FIND_LINKS=wheelhouse(), PYTHONPATH=site, PYTHONNOUSERSITE="1", PYTHONDONTWRITEBYTECODE="1")
    return env


def copy_action(folder) -> str:
    """The action as a checkout of it: its files, never this repository's build artefacts. Offline, the
    build takes a setuptools from the wheelhouse: the pinned one if it is there, else the newest."""
    folder.mkdir()
    for name in ACTION_FILES:
        source = os.path.join(REPO, name)
        if os.path.isdir(source):
            shutil.copytree(source, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, folder / name)
    found = sorted((tuple(int(p) for p in m.group(1).split(".")), m.group(1)) for m in
                   (re.match(r"setuptools-([\d.]+)-py3-none-any\.whl$", n) for n in os.listdir(wheelhouse())) if m)
    if not found:
        pytest.skip("no setuptools wheel on this machine")
    if pins()["setuptools"] not in {v for _, v in found}:
        constraints = folder / "action" / "constraints.txt"
        constraints.write_text(re.sub(r"(?m)^setuptools==.*$", f"setuptools=={found[-1][1]}", constraints.read_text()))
    return str(folder)


def example(workspace, name: str, source: str) -> None:
    os.makedirs(os.path.dirname(os.path.join(workspace, name)), exist_ok=True)
    shutil.copy(os.path.join(EXAMPLES, source), os.path.join(workspace, name))


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    """The action's python and install steps, run once: batchlint in its own venv under RUNNER_TEMP."""
    base = tmp_path_factory.mktemp("action")
    python_dir = base / "job-python"
    python_dir.mkdir()
    os.symlink(sys.executable, python_dir / "python3")
    workspace = base / "workspace"
    example(workspace, "configs/ds_zero2.json", "deepspeed/ds_zero2.json")
    example(workspace, "configs/qwen2_5_sft.yaml", "swift/qwen2_5_sft.yaml")
    example(workspace, "launch/train.sh", "deepspeed/train.sh")
    temp = base / "runner-temp"
    temp.mkdir()
    env = base_env(str(python_dir), offline_site(base / "site"))
    runner = Runner(copy_action(base / "batchlint-action"), str(workspace), str(temp), env)
    results = runner.run({}, only=("python", "setup-python", "install"))
    if not isinstance(results["install"], subprocess.CompletedProcess) or results["install"].returncode:
        detail = results["install"].stderr if isinstance(results["install"], subprocess.CompletedProcess) else results
        if "ensurepip" in str(detail) or "venv" in str(detail) and "No module" in str(detail):
            pytest.skip(f"this Python cannot create a virtual environment: {detail}")
        raise AssertionError(f"the install step failed: {detail}")
    return runner


def test_the_python_step_takes_the_runners_python_and_setup_python_is_not_needed(runner):
    job_python = os.path.join(runner.env["PATH"].split(os.pathsep)[0], "python3")
    assert runner.outputs["python"] == {"found": "true", "python": job_python}
    assert runner.results["setup-python"] == "skipped"


def test_batchlint_is_installed_in_its_own_environment_with_the_pinned_versions(runner):
    outputs = runner.outputs["install"]
    venv = os.path.join(runner.temp, "batchlint-venv")
    assert outputs["batchlint"] == os.path.join(venv, "bin", "batchlint")
    assert outputs["python"] == os.path.join(venv, "bin", "python")
    probe = subprocess.run([outputs["python"], "-c", "import batchlint, click; print(batchlint.__file__); print(click.__version__)"],
                           env=runner.env, capture_output=True, text=True, timeout=60)
    module, click_version = probe.stdout.split()
    assert module.startswith(venv + os.sep), "batchlint runs from the action's venv, not the job's Python"
    assert click_version == pins()["click"]
    assert "batchlint" in runner.results["install"].stdout  # `batchlint --version`, in the step's log


def test_the_readme_workflow_is_one_batchlint_run_that_annotates_summarises_and_writes_sarif(runner, tmp_path):
    [step] = [s for s in readme_workflow()["jobs"]["batchlint"]["steps"] if "/batchlint@" in s.get("uses", "")]
    inputs = dict(step["with"])
    assert inputs["args"].splitlines() == ["--world-size 64", '--select "BL1,BL3"'], "the snippet this test runs"
    assert inputs.pop("compare") == "${{ github.event.pull_request.base.sha }}"  # a pull request's: tested below
    calls = tmp_path / "calls"
    with _counted(runner, calls):
        lint = runner.run(inputs, only=("lint",))["lint"]
    assert calls.read_text().count("\n") == 1, "one batchlint process for annotations, summary and SARIF"

    with open(os.path.join(runner.workspace, inputs["sarif"]), encoding="utf-8") as handle:
        log = json.load(handle)
    assert {r["ruleId"] for r in log["runs"][0]["results"]} == {"BL102", "BL301"}
    assert lint.returncode == 1, lint.stderr
    lines = lint.stdout.splitlines()
    assert lines[0].startswith("::error file=configs/ds_zero2.json,line=2,")  # errors first
    assert any(line.startswith("::warning file=configs/qwen2_5_sft.yaml,") for line in lines)
    assert "| error | BL102 global-batch-mismatch | <code>configs/ds\\_zero2.json:2:23</code> |" in runner.summaries["lint"]


def test_paths_are_taken_whole_and_args_split_as_a_shell_would_without_expanding(runner, tmp_path):
    example(runner.workspace, "my configs/ds_zero2.json", "deepspeed/ds_zero2.json")
    example(runner.workspace, "-dash.yaml", "swift/qwen2_5_sft.yaml")
    marker = tmp_path / "pwned"
    inputs = {"paths": "  my configs/ds_zero2.json  \r\n\n-dash.yaml\n",
              "args": f"# a comment line\n--select 'BL102'   --ignore \"BL3\"\n--extend-exclude \"$(touch {marker})\""}
    lint = runner.run(inputs, only=("lint",))["lint"]
    assert lint.returncode == 1, lint.stderr
    linted = sorted({re.search(r"file=([^,]+),", line).group(1) for line in lint.stdout.splitlines()})
    assert linted == ["-dash.yaml", "my configs/ds_zero2.json"]
    assert not marker.exists()


def test_a_hostile_input_is_not_executed(runner, tmp_path):
    marker = tmp_path / "pwned"
    inputs = {"paths": f"configs; touch {marker}\n`touch {marker}`", "args": f"$(touch {marker}) ${{HOME}} *", "sarif": "x.sarif"}
    lint = runner.run(inputs, only=("lint",))["lint"]
    assert lint.returncode == 2  # `$(touch` is no option batchlint knows
    assert not marker.exists()


def test_an_unclosed_quote_in_args_is_one_error(runner):
    lint = runner.run({"args": '--select "BL1'}, only=("lint",))["lint"]
    assert lint.returncode == 2
    assert lint.stderr.strip() == '::error title=batchlint action::args, line 1: No closing quotation: --select "BL1'


def test_the_job_summary_is_cut_to_githubs_limit_on_whole_lines(runner, tmp_path):
    """A stand-in batchlint writes a 1.5 MiB table: the summary keeps whole rows within 1 MiB and
    says where the rest is; the step's exit code is batchlint's."""
    fake = tmp_path / "batchlint"
    fake.write_text('#!/usr/bin/env bash\nfor i in $(seq 1 6000); do printf "| row %04d | %0240d |\\n" "$i" 0; done '
                    '>>"$GITHUB_STEP_SUMMARY"\necho "::error file=a.yaml,line=1::x"\nexit 1\n')
    fake.chmod(0o755)
    with _installed(runner, fake):
        lint = runner.run({}, only=("lint",))["lint"]
    assert lint.returncode == 1
    summary = runner.summaries["lint"].encode()
    assert 1024 * 1024 - 400 < len(summary) <= 1024 * 1024
    table, note = summary.decode().split("\n**batchlint: the job summary stops here.**")
    assert all(re.fullmatch(r"\| row \d{4} \| 0{240} \|", row) for row in table.splitlines())
    assert "GitHub accepts at most 1,048,576 in one step's summary" in note
    assert "::warning title=batchlint::the job summary was cut" in lint.stdout


def test_a_summary_within_the_limit_is_copied_whole(tmp_path):
    sys.path.insert(0, os.path.join(REPO, "action"))
    try:
        import helper
    finally:
        sys.path.pop(0)
    full, dest = tmp_path / "full.md", tmp_path / "summary.md"
    full.write_text("| a |\n| b |\n")
    dest.write_text("earlier\n")
    assert helper.cap_summary(str(full), str(dest), limit=100) is False
    assert dest.read_text() == "earlier\n| a |\n| b |\n"
    full.write_text("| a |\n" * 100)
    assert helper.cap_summary(str(full), str(dest), limit=len(dest.read_bytes()) + 10) is True  # no room for the note
    assert dest.read_text() == "earlier\n| a |\n| b |\n"


def test_without_a_suitable_python_setup_python_provides_one(tmp_path):
    """No python3/python of 3.10+ on PATH, or a python-version asked for: the setup-python step runs
    (without touching the job's Python) and the install step takes its python-path."""
    bare = tmp_path / "bin"  # bash and nothing else
    bare.mkdir()
    os.symlink(shutil.which("bash"), bare / "bash")
    env = {"PATH": str(bare), "HOME": str(tmp_path)}
    runner = Runner(REPO, str(tmp_path), str(tmp_path), env)
    runner.run({}, only=("python", "setup-python"))
    assert runner.outputs["python"] == {"found": "false"}
    assert runner.results["setup-python"] == ("uses", "actions/setup-python@v5", {"python-version": "3.12", "update-environment": "false"})
    runner.outputs["setup-python"] = {"python-path": "/opt/hostedtoolcache/Python/3.12/bin/python"}
    install = next(s for s in runner.action["runs"]["steps"] if s["id"] == "install")
    assert runner.substitute(install["env"]["BATCHLINT_PYTHON"], {}) == "/opt/hostedtoolcache/Python/3.12/bin/python"

    runner = Runner(REPO, str(tmp_path), str(tmp_path), dict(env, PATH=os.environ["PATH"]))
    runner.run({"python-version": "3.13"}, only=("python", "setup-python"))
    assert runner.outputs["python"] == {"found": "false"}
    assert runner.results["setup-python"][2]["python-version"] == "3.13"


def test_the_pins_are_the_versions_this_suite_runs_with():
    """action/constraints.txt is what the Action installs: it must be what these tests ran with
    (.ci/run installs with it). setuptools only builds batchlint, so the suite's may differ."""
    pinned = pins()
    declared = {"click", "pyyaml", "libcst", "pathspec", "tomli", "setuptools", "pyyaml-ft",
                "pygls", "lsprotocol", "cattrs", "attrs", "typing-extensions",  # the [server] extra
                # the code checkers of the `test` extra, and mypy's own dependencies
                "ruff", "mypy", "mypy-extensions", "librt", "ast-serialize"}
    assert set(pinned) == declared
    for name, wanted in sorted(pinned.items()):
        try:
            installed = version(name)
        except PackageNotFoundError:
            continue  # a pin for another Python (tomli before 3.11, pyyaml-ft on 3.13)
        if name != "setuptools":
            assert installed == wanted, f"{name} {installed} is installed, {wanted} pinned: install with -c action/constraints.txt"


@pytest.fixture
def pull_request(runner, tmp_path):
    """A checkout whose work tree raises sp over its base commit; the runner's workspace meanwhile."""
    workspace = tmp_path / "checkout"
    example(workspace, "configs/sft.yaml", "swift/qwen2_5_sft_fixed.yaml")
    example(workspace, "train.sh", "swift/train.sh")
    script = workspace / "train.sh"
    script.write_text(script.read_text().replace("examples/swift/qwen2_5_sft_fixed.yaml", "configs/sft.yaml"))
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True, timeout=60)
    subprocess.run(git + ["add", "-A"], cwd=workspace, check=True, timeout=60)
    subprocess.run(git + ["commit", "-q", "-m", "base"], cwd=workspace, check=True, timeout=60)
    base = subprocess.run(["git", "rev-parse", "HEAD"], cwd=workspace, check=True, capture_output=True, text=True,
                          timeout=60).stdout.strip()
    config = workspace / "configs" / "sft.yaml"
    config.write_text(config.read_text().replace("max_length: 4096\n", "max_length: 4096\nsequence_parallel_size: 2\n"))
    saved, runner.workspace = runner.workspace, str(workspace)
    try:
        yield base
    finally:
        runner.workspace = saved


def test_compare_puts_the_batch_numbers_a_pull_request_moves_before_the_findings(runner, pull_request):
    lint = runner.run({"compare": pull_request}, only=("lint",))["lint"]
    summary = runner.summaries["lint"]
    assert summary.startswith(f"### batchlint: batch arithmetic moved since `{pull_request[:12]}`\n")
    assert ("|  | global batch (sequences/step) | 128 | 64 | sequence\\_parallel\\_size, line 8: 1 → 2 |"
            in summary.splitlines())
    # The same run judges the job: sp raised alone halves the global batch its directive states (BL102).
    assert lint.returncode == 1 and "title=BL102 global-batch-mismatch" in lint.stdout
    assert summary.index("batch arithmetic moved") < summary.index("BL102")
    assert "global batch (sequences/step)" in lint.stderr  # the log has the table too


def test_compare_without_the_base_commit_warns_and_still_lints(runner, pull_request):
    """A shallow checkout (actions/checkout's default depth 1) lacks the base commit."""
    lint = runner.run({"compare": "0" * 40}, only=("lint",))["lint"]
    assert lint.returncode == 1, lint.stdout + lint.stderr  # the lint runs all the same (BL102)
    assert lint.stdout.startswith(f"::warning title=batchlint compare::the revision '{'0' * 40}' is not in this "
                                  "checkout")
    assert "fetch-depth: 0" in lint.stdout and "batch arithmetic moved" not in runner.summaries["lint"]
    hostile = runner.run({"compare": "--output=x\n`touch y`"}, only=("lint",))["lint"]
    assert "::warning title=batchlint compare::" in hostile.stdout
    assert not os.path.exists(os.path.join(runner.workspace, "x")) and not os.path.exists(os.path.join(runner.workspace, "y"))


def test_compare_with_nothing_moved_says_so(runner, pull_request):
    subprocess.run(["git", "checkout", "-q", "--", "."], cwd=runner.workspace, check=True, timeout=60)
    lint = runner.run({"compare": pull_request}, only=("lint",))["lint"]
    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert runner.summaries["lint"].startswith(f"### batchlint: no batch number moved since `{pull_request}`\n")
    runner.run({}, only=("lint",))
    assert "batch number moved" not in runner.summaries["lint"]
