"""The verl examples: a config that interpolates its batch sizes (OmegaConf) and one composed by Hydra
from a config group, each flagged where the value is written and clean in its fixed twin."""

import json
import os

from conftest import run

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples", "verl")


def _findings(*paths):
    result = run("check", "--output-format", "json", *paths)
    return [(d["path"], d["code"], d["line"], [n["message"] for n in d["related"]]) for d in json.loads(result.stdout)]


def test_interpolated_batch_sizes_are_checked_at_the_written_value():
    [(path, code, line, notes)] = _findings(os.path.join(EXAMPLES, "grpo_batches.yaml"))
    assert (path.split("/")[-1], code, line) == ("grpo_batches.yaml", "BL141", 6)  # batch.mini: 128
    assert "`actor_rollout_ref.actor.ppo_mini_batch_size: ${batch.mini}` reads this value" in notes
    assert _findings(os.path.join(EXAMPLES, "grpo_batches_fixed.yaml")) == []


def test_a_composed_value_is_reported_in_the_group_file_that_writes_it():
    [(path, code, line, notes)] = _findings(os.path.join(EXAMPLES, "composed", "grpo.yaml"))
    assert (path.split("/")[-2:], code, line) == (["actor", "mini_128.yaml"], "BL141", 2)
    assert any("is composed in by the `defaults:` list of grpo.yaml" in n for n in notes)
    assert _findings(os.path.join(EXAMPLES, "composed", "grpo_fixed.yaml")) == []


def test_explain_names_the_file_and_line_of_each_composed_number():
    result = run("explain", os.path.join(EXAMPLES, "composed", "grpo_fixed.yaml"))
    micro = next(line for line in result.stdout.splitlines() if line.strip().startswith("micro batch"))
    assert micro.split()[4] == "8" and micro.rstrip().endswith("actor/mini_32.yaml:3")
    accumulation = next(line for line in result.stdout.splitlines() if "gradient accumulation" in line)
    assert accumulation.split()[2] == "2"
