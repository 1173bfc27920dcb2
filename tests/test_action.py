"""The GitHub Action's own command lines, run as the runner would run them
(inputs as environment variables, a fake $GITHUB_STEP_SUMMARY), produce the
annotations, the job-summary table and the SARIF file."""

import json
import os
import re
import shutil
import subprocess

import pytest
import yaml

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def steps():
    with open(os.path.join(REPO, "action.yml"), encoding="utf-8") as handle:
        action = yaml.safe_load(handle)
    assert action["runs"]["using"] == "composite"
    return {step["id"]: step for step in action["runs"]["steps"]}


def run_step(step, inputs, tmp_path):
    """Run one step's script in bash with the env the runner gives it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env.update(GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"), GITHUB_ACTION_PATH=REPO, GITHUB_WORKSPACE=REPO)
    for name, value in step.get("env", {}).items():
        env[name] = re.sub(r"\$\{\{\s*inputs\.(\w+)\s*\}\}", lambda m: inputs[m.group(1)], value)
    assert "${{" not in step["run"], "inputs must reach the script as variables, never pasted into it"
    return subprocess.run(["bash", "-c", step["run"]], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(shutil.which("batchlint") is None or shutil.which("bash") is None, reason="needs bash and batchlint")
def test_action_annotates_summarises_and_writes_sarif(tmp_path):
    inputs = {"paths": "examples/deepspeed examples/swift", "args": "--select BL1,BL3", "sarif": str(tmp_path / "out.sarif")}
    all_steps = steps()
    assert set(all_steps) == {"install", "sarif", "annotate"}

    sarif = run_step(all_steps["sarif"], inputs, tmp_path)
    assert sarif.returncode == 0, sarif.stderr  # --exit-zero: the annotate step decides
    log = json.loads((tmp_path / "out.sarif").read_text())
    assert {r["ruleId"] for r in log["runs"][0]["results"]} == {"BL102", "BL301"}

    annotate = run_step(all_steps["annotate"], inputs, tmp_path)
    assert annotate.returncode == 1
    lines = annotate.stdout.splitlines()
    assert lines[0].startswith("::error file=examples/deepspeed/ds_zero2.json,line=2,")  # errors first
    assert any(line.startswith("::warning file=examples/swift/qwen2_5_sft.yaml,") for line in lines)
    summary = (tmp_path / "summary.md").read_text()
    assert "| error | BL102 global-batch-mismatch | <code>examples/deepspeed/ds\\_zero2.json:2:23</code> |" in summary


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_a_hostile_input_is_not_executed(tmp_path):
    marker = tmp_path / "pwned"
    inputs = {"paths": f"examples/trl; touch {marker}", "args": f"$(touch {marker})", "sarif": ""}
    run_step(steps()["annotate"], inputs, tmp_path)
    assert not marker.exists()
