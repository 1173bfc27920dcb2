"""The Hugging Face Trainer and TRL: the TrainingArguments <-> DeepSpeed JSON check (BL120) with the
link resolution behind it, load_best_model_at_end (BL522), and TRL's checks (BL170, BL320, BL420),
beyond the rules' own examples. The tests marked `differential` let transformers and TRL judge
batchlint's verdicts; they skip unless both are importable (transformers 4.57.1, TRL 1.16.0)."""

import dataclasses
import itertools
import json
import os
import random
import shutil
from unittest import mock

import pytest

from batchlint.config import Settings
from batchlint.engine import Options, lint_file
from batchlint.frameworks.linked import deepspeed_config
from batchlint.project import Project, ProjectView
from batchlint.rules import RULES
from batchlint.sources import read

from conftest import CORPUS, lint_text, write


def codes(result, prefix="BL"):
    return sorted(d.code for d in result.diagnostics if d.code.startswith(prefix))


def lint_path(path, world_size=None, project_root=None):
    """Lint `path`; `project_root`: the project boundary (default: found as the CLI finds it)."""
    boundary = Project((os.path.realpath(project_root),)) if project_root else None
    return lint_file(str(path), Settings(root=os.path.dirname(str(path))),
                     Options(world_size=world_size, project=boundary), RULES)


SFT = """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 2
gradient_accumulation_steps: 8
deepspeed: {name}
"""
DS_MICRO_4 = '{\n  "train_micro_batch_size_per_gpu": 4,\n  "gradient_accumulation_steps": "auto"\n}\n'


# -- which adapter ------------------------------------------------------------------------------------

def test_trl_only_keys_make_it_trl(lint):
    for key in ("packing_strategy: bfd", "dataset_text_field: text", "steps_per_generation: 2", "max_prompt_length: 512"):
        assert lint("c.yaml", f"per_device_train_batch_size: 2\n{key}\n").framework == "trl"
    assert lint("d.yaml", "per_device_train_batch_size: 2\nlearning_rate: 1.0e-5\n").framework == "transformers"


def said(finding):
    """A finding's message and its notes: the verdict and the arithmetic and sources behind it."""
    return " ".join((finding.message,) + finding.notes)


# -- BL120: where the DeepSpeed config is found -------------------------------------------------------

def test_next_to_the_config(tmp_path):
    write(tmp_path, "configs/ds.json", DS_MICRO_4)
    [finding] = lint_path(write(tmp_path, "configs/sft.yaml", SFT.format(name="ds.json"))).diagnostics
    assert finding.code == "BL120" and finding.span.line == 2  # per_device_train_batch_size
    assert "train_micro_batch_size_per_gpu (4)" in said(finding) and "per_device_train_batch_size (2)" in said(finding)
    other, named = finding.related
    assert other.path.endswith("configs/ds.json") and other.span.line == 2
    assert named.path == finding.path and named.span.line == 4


@pytest.mark.parametrize("marker", [".git", "pyproject.toml"])
def test_from_the_project_root(tmp_path, marker):
    (tmp_path / marker).mkdir() if marker == ".git" else write(tmp_path, marker, "[project]\nname = 'x'\n")
    write(tmp_path, "examples/deepspeed/ds.json", DS_MICRO_4)
    config = write(tmp_path, "examples/train/sft.yaml", SFT.format(name="examples/deepspeed/ds.json"))
    assert codes(lint_path(config, project_root=tmp_path)) == ["BL120"]


def test_from_the_working_directory(tmp_path, monkeypatch):
    write(tmp_path, "run/ds.json", DS_MICRO_4)
    config = write(tmp_path, "configs/sft.yaml", SFT.format(name="ds.json"))
    assert codes(lint_path(config, project_root=tmp_path)) == []
    monkeypatch.chdir(tmp_path / "run")
    assert codes(lint_path(config, project_root=tmp_path)) == ["BL120"]
    assert codes(lint_path(config)) == [], "outside a git checkout and with no project config, the project is the linted path"


def test_an_absolute_path(tmp_path):
    ds = write(tmp_path, "elsewhere/ds.json", DS_MICRO_4)
    assert codes(lint_path(write(tmp_path, "sft.yaml", SFT.format(name=ds)))) == ["BL120"]


@pytest.mark.parametrize(
    "name,content",
    [
        ("zero2", None),  # ms-swift's built-in config, not a file
        ("missing.json", None),
        ("broken.json", '{"train_micro_batch_size_per_gpu": 4,'),
        ("latin1.json", b'{"train_micro_batch_size_per_gpu": 4, "x": "\xe9"}'),
        ("list.json", "[1, 2]"),
        ("ds.yaml", "train_micro_batch_size_per_gpu: 4\n"),
        ("folder.json", "DIR"),
    ],
)
def test_an_unresolvable_or_unreadable_link_gives_nothing(tmp_path, name, content):
    if content == "DIR":
        (tmp_path / name).mkdir()
    elif content is not None:
        write(tmp_path, name, content)
    result = lint_path(write(tmp_path, "sft.yaml", SFT.format(name=name)))
    assert result.framework == "transformers" and result.error is None and result.diagnostics == []


def test_the_linked_file_is_read_again_when_it_changes(tmp_path):
    ds = write(tmp_path, "ds.json", DS_MICRO_4)
    config = write(tmp_path, "sft.yaml", SFT.format(name="ds.json"))
    assert codes(lint_path(config)) == ["BL120"]
    write(tmp_path, "ds.json", DS_MICRO_4.replace("4", "2"))
    os.utime(ds, ns=(1, 1))  # a new modification time, whatever the clock's resolution
    assert codes(lint_path(config)) == []


def test_the_llamafactory_examples_resolve_and_agree(tmp_path):
    """LLaMA-Factory's examples name examples/deepspeed/*.json from the repository root: every link
    resolves once the copy is a project, and every DeepSpeed value is "auto" or agrees."""
    source = os.path.join(CORPUS, "llamafactory")
    if not os.path.isdir(source):
        pytest.skip("../shared/corpus is not present")
    shutil.copytree(source, tmp_path / "lf")
    (tmp_path / "lf" / ".git").mkdir()
    linked = []
    for top, _, files in os.walk(tmp_path / "lf" / "examples"):
        for name in files:
            path = os.path.join(top, name)
            if name.endswith(".yaml"):
                with open(path, encoding="utf-8") as handle:
                    if deepspeed_config(read(path, handle.read(), "yaml"), ProjectView()) is not None:
                        linked.append(name)
                assert codes(lint_path(path, world_size=8), "BL120") == []
    assert len(linked) >= 7


# -- BL120: what is compared --------------------------------------------------------------------------

def inline(ds, head="per_device_train_batch_size: 2\ngradient_accumulation_steps: 8\n"):
    """A TrainingArguments YAML with its DeepSpeed config written inline under `deepspeed:`."""
    lines = "".join(f"  {k}: {json.dumps(v)}\n" for k, v in ds.items())
    return head + "deepspeed:\n" + lines


def bl120(lint, text, **kwargs):
    return [d for d in lint("sft.yaml", text, **kwargs).diagnostics if d.code == "BL120"]


def test_train_batch_size_needs_the_world_size_unless_no_world_size_fits(lint):
    assert bl120(lint, inline({"train_batch_size": 64})) == []  # 2 x 8 x W = 64 at W = 4
    [finding] = bl120(lint, inline({"train_batch_size": 64}), world_size=8)
    assert "W (8) x per_device_train_batch_size (2) x gradient_accumulation_steps (8) = 128" in said(finding)
    [finding] = bl120(lint, inline({"train_batch_size": 100}))
    assert "for any world size W" in said(finding) and "multiple of 16" in finding.fix


@pytest.mark.parametrize("micro, ga", [(0, 8), (2, 0), (-2, 8), (0, 0)])
def test_train_batch_size_is_not_compared_with_a_batch_of_zero_or_less(lint, micro, ga):
    """micro x GA of 0 used to divide by zero; a product of 0 or less is no batch to compare
    (BL104 reports the value itself)."""
    text = inline({"train_batch_size": 100}, head=f"per_device_train_batch_size: {micro}\ngradient_accumulation_steps: {ga}\n")
    result = lint("sft.yaml", text)
    assert result.error is None
    assert "BL120" not in {d.code for d in result.diagnostics} and "BL104" in {d.code for d in result.diagnostics}


def test_auto_find_batch_size_leaves_the_batch_but_not_the_accumulation(lint):
    head = "per_device_train_batch_size: 2\ngradient_accumulation_steps: 8\nauto_find_batch_size: true\n"
    ds = {"train_micro_batch_size_per_gpu": 4, "train_batch_size": 100, "gradient_accumulation_steps": 4}
    [finding] = bl120(lint, inline(ds, head), world_size=8)
    assert finding.notes[0].startswith("gradient_accumulation_steps (4)")


def test_defaults_are_used_where_every_reader_agrees(lint):
    # transformers: micro batch 8, max_grad_norm 1.0, fp16 off.
    ds = {"train_micro_batch_size_per_gpu": 4, "gradient_clipping": 0.5, "fp16": {"enabled": True}}
    text = "output_dir: out\ngradient_accumulation_steps: 2\ndeepspeed:\n" + "".join(
        f"  {k}: {json.dumps(v)}\n" for k, v in ds.items()
    )
    found = [d.notes[0].split(" (")[0] for d in bl120(lint, text)]
    assert found == ["train_micro_batch_size_per_gpu", "gradient_clipping", "fp16.enabled"]


def test_bf16_counts_only_where_written_except_for_llamafactory(lint):
    ds = {"bf16": {"enabled": True}}
    assert bl120(lint, inline(ds)) == []  # transformers or TRL (whose bf16 defaults to on): unknown
    assert len(bl120(lint, inline(ds, "per_device_train_batch_size: 2\nbf16: false\n"))) == 1
    assert len(bl120(lint, inline(ds, "stage: sft\nper_device_train_batch_size: 2\n"))) == 1  # LLaMA-Factory


def test_full_eval_flags_count(lint):
    [finding] = bl120(lint, inline({"bf16": {"enabled": False}}, "per_device_train_batch_size: 2\nbf16_full_eval: true\n"))
    assert "bf16_full_eval (true)" in said(finding)


def test_apex_leaves_fp16_alone(lint):
    head = "per_device_train_batch_size: 2\nfp16: true\nfp16_backend: apex\n"
    assert bl120(lint, inline({"fp16": {"enabled": True}}, head)) == []


def test_swift_compares_only_what_is_written(lint):
    head = "model_type: qwen2\nper_device_train_batch_size: 1\n"
    ds = {"gradient_clipping": 0.5, "fp16": {"enabled": True}, "train_micro_batch_size_per_gpu": 2}
    [finding] = bl120(lint, inline(ds, head))
    assert finding.notes[0].startswith("train_micro_batch_size_per_gpu (2)")


def test_a_value_written_as_a_string_never_matches(lint):
    """fill_match compares with `!=`: "4" is not 4, and "true" is not false (tests/differential agree)."""
    found = bl120(lint, inline({"train_micro_batch_size_per_gpu": "4", "fp16": {"enabled": "true"}}))
    assert [d.notes[0].split(" (")[0] for d in found] == ["train_micro_batch_size_per_gpu", "fp16.enabled"]
    assert all("is a string" in d.message for d in found)
    assert bl120(lint, inline({"train_micro_batch_size_per_gpu": "auto", "fp16": {"enabled": "auto"}})) == []


# -- BL522 load_best_model_at_end ---------------------------------------------------------------------

def bl522(lint, body, name="t.yaml"):
    return [d for d in lint(name, "per_device_train_batch_size: 4\nload_best_model_at_end: true\n" + body).diagnostics
            if d.code == "BL522"]


def test_load_best_with_default_strategies(lint):
    [finding] = bl522(lint, "")
    assert 'eval_strategy "no" (default) but save_strategy "steps" (default)' in finding.message
    assert finding.span.line == 2


def test_the_pre_4_41_name_counts_in_the_releases_that_read_it(lint):
    # evaluation_strategy is read from 4.9.0 (the first check) to 4.50.3 (it overrides eval_strategy there).
    [finding] = bl522(lint, "evaluation_strategy: steps\neval_steps: 300\n")
    assert "save_steps 500 (default) to be a multiple of eval_steps 300" in finding.message
    assert finding.severity == "info"  # no release pinned: 4.8 and older accept it
    [finding] = bl522(lint, "evaluation_strategy: epoch\neval_strategy: steps\nsave_strategy: steps\n")
    assert 'evaluation_strategy "epoch" but save_strategy "steps"' in finding.message
    assert bl522(lint, "evaluation_strategy: 'yes'\n") == []  # not a strategy: transformers refuses it otherwise


def test_eval_steps_falls_back_to_logging_steps(lint):
    [finding] = bl522(lint, "eval_strategy: steps\nlogging_steps: 30\nsave_steps: 100\n")
    assert "logging_steps 30" in finding.message and "eval_steps is unset" in said(finding)
    assert bl522(lint, "eval_strategy: steps\nsave_steps: 100\n") == []  # transformers 500 or TRL 10: unknown
    assert len(bl522(lint, "stage: sft\neval_strategy: steps\nsave_steps: 100\n", "lf.yaml")) == 1  # 100 % 500


def test_ratios(lint):
    assert bl522(lint, "eval_strategy: steps\neval_steps: 0.1\nsave_steps: 0.2\n") == []
    assert len(bl522(lint, "eval_strategy: steps\neval_steps: 0.1\nsave_steps: 0.25\n")) == 1
    [finding] = bl522(lint, "eval_strategy: steps\neval_steps: 0.1\nsave_steps: 500\n")
    assert "ratio" in said(finding)


# -- TRL --------------------------------------------------------------------------------------------

# An SFT recipe in the shape of huggingface/alignment-handbook's recipes/zephyr-7b-beta/sft/config_full.yaml
# @ 925acdf, which still says max_seq_length while setup.py asks for trl>=0.19.1 (so a fresh install gets a
# TRL without it, and scripts/sft.py's TrlParser refuses the config).
HANDBOOK_SFT = """\
model_name_or_path: mistralai/Mistral-7B-v0.1
torch_dtype: bfloat16
dataset_num_proc: 12
bf16: true
gradient_accumulation_steps: 1
learning_rate: 2.0e-05
max_seq_length: 2048
per_device_train_batch_size: 16
"""


def test_max_seq_length_in_a_handbook_recipe(lint):
    result = lint("config_full.yaml", HANDBOOK_SFT)
    [finding] = result.diagnostics
    assert (result.framework, finding.code, finding.span.line) == ("trl", "BL420", 7)
    assert finding.fix == "rename it to max_length: 2048" and "default 1024" in finding.message


@pytest.mark.parametrize("pin, severity, says", [
    ("trl>=0.29.0\n", "error", "releases: TRL 0.20.0 and later; >=0.29.0 in requirements.txt:1"),
    ("trl==0.21.0\n", "error", "releases: TRL 0.21.0, pinned in requirements.txt:1"),
    ("trl>=0.19.1\n", "info", "releases: from TRL 0.20.0 on; >=0.19.1 in requirements.txt:1"),
    ("trl>=0.8,<0.20\n", None, ""),  # every release it admits still has max_seq_length
])
def test_max_seq_length_judged_by_the_range_the_project_admits(tmp_path, pin, severity, says):
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text(pin)
    found = lint_text(tmp_path, "recipes/sft.yaml", HANDBOOK_SFT).diagnostics
    assert [(f.code, f.severity) for f in found] == ([("BL420", severity)] if severity else [])
    assert all(says in f.notes for f in found)


def test_max_seq_length_next_to_max_length(lint):
    [finding] = lint("c.yaml", HANDBOOK_SFT + "max_length: 4096\n").diagnostics
    assert "delete max_seq_length" in finding.fix and "truncate at max_length (4096)" in said(finding)


def test_padding_free_needs_an_sft_config(lint):
    base = "model_name_or_path: Qwen/Qwen2.5-0.5B\nper_device_train_batch_size: 4\npadding_free: true\n"
    [finding] = lint("sft.yaml", base + "dataset_text_field: text\n").diagnostics  # packing is off by default
    assert finding.code == "BL320" and "max_length (default 1024)" in finding.message
    assert lint("dpo.yaml", base + "beta: 0.1\ndataset_num_proc: 8\n").diagnostics == []  # DPOConfig has both


def test_grpo_given_generation_batch_and_the_world_size(lint):
    text = "per_device_train_batch_size: 4\nnum_generations: 8\ngeneration_batch_size: 24\n"
    assert lint("grpo.yaml", text).diagnostics == []  # 24 = 4 x W x 6/W at W = 1, 2, 3, 6
    [finding] = lint("grpo4.yaml", text, world_size=4).diagnostics
    assert "is not a multiple of 16" in finding.message
    assert "per_device_train_batch_size (4) x W (4) = 16" in " ".join(finding.notes)


def test_grpo_checks_that_hold_for_every_world_size(lint):
    [finding] = lint("a.yaml", "per_device_train_batch_size: 5\nnum_generations: 4\ngeneration_batch_size: 24\n").diagnostics
    assert "so no world size makes it a multiple" in " ".join(finding.notes)
    [finding] = lint("b.yaml", "per_device_train_batch_size: 4\nnum_generations: 1\n").diagnostics
    assert "at least 2" in finding.message
    both = "per_device_train_batch_size: 4\nnum_generations: 4\ngeneration_batch_size: 16\nsteps_per_generation: 2\n"
    [finding] = lint("c.yaml", both).diagnostics
    assert "both set" in finding.message


# The batch keys of huggingface/open-r1's recipes/Qwen2.5-1.5B-Instruct/grpo/config_demo_code.yaml @ 1416fa0,
# which README.md:313-315 launches on 7 processes (GPU 0 serves vLLM): 16 x 7 x 4 = 448 = 32 groups of 14.
OPEN_R1_GRPO = """\
model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct
gradient_accumulation_steps: 4
num_generations: 14
per_device_train_batch_size: 16
use_vllm: true
"""


def test_an_open_r1_recipe_fits_the_world_size_it_was_written_for(lint):
    assert lint("config_demo_code.yaml", OPEN_R1_GRPO, world_size=7).diagnostics == []
    [finding] = lint("config_demo_code.yaml", OPEN_R1_GRPO, world_size=8).diagnostics
    assert finding.span.line == 3 and "generation batch 512 is not a multiple of num_generations 14" in finding.message


def test_grpo_evaluation_batch(lint):
    text = "per_device_train_batch_size: 4\nnum_generations: 8\neval_strategy: steps\nper_device_eval_batch_size: 3\n"
    [finding] = lint("g.yaml", text, world_size=4).diagnostics
    assert "evaluation batch 12 is not a multiple" in finding.message
    assert "the evaluation batch is per_device_eval_batch_size (3) x W (4) = 12" in finding.notes


def test_distillation_configs_are_not_grpo(lint):
    text = "per_device_train_batch_size: 4\nnum_generations: 3\ngeneration_batch_size: 1\nlmbda: 0.5\n"
    assert lint("gold.yaml", text, world_size=4).diagnostics == []


# -- differential: transformers and TRL judge ---------------------------------------------------------

def _import(name):
    try:
        return __import__(name)
    except Exception:  # ImportError, or a dependency mismatch raised at import
        return None


def _needs(*modules):
    missing = [m for m in modules if _import(m) is None]
    return pytest.mark.skipif(bool(missing), reason=f"needs {', '.join(missing)}")


def _yaml(values):
    return "".join(f"{k}: {json.dumps(v)}\n" for k, v in values.items())


def _patched_world(world):
    from transformers import TrainingArguments

    return mock.patch.object(TrainingArguments, "world_size", new_callable=mock.PropertyMock, return_value=world)


ABSENT = object()


def _pick(rng, values):
    return {k: v for k, v in ((k, rng.choice(options)) for k, options in values.items()) if v is not ABSENT}


@pytest.mark.differential
@_needs("transformers", "accelerate", "deepspeed")
def test_hf_deepspeed_mismatch_agrees_with_the_trainer(tmp_path):
    """For random TrainingArguments x DeepSpeed configs x W, batchlint's BL120 findings name exactly the
    DeepSpeed keys the Trainer's HfTrainerDeepSpeedConfig records as mismatches - except bf16.enabled
    when bf16 is not written, which batchlint leaves alone on purpose (TRL turns bf16 on by default)."""
    from transformers import TrainingArguments
    from transformers.integrations.deepspeed import HfTrainerDeepSpeedConfig

    defaults = {f.name: f.default for f in dataclasses.fields(TrainingArguments) if f.default is not dataclasses.MISSING}
    ta_space = {
        "per_device_train_batch_size": [ABSENT, 2, 4], "gradient_accumulation_steps": [ABSENT, 1, 4],
        "max_grad_norm": [ABSENT, 0.5, 1.0], "fp16": [ABSENT, True, False], "bf16": [ABSENT, True, False],
        "auto_find_batch_size": [ABSENT, True], "bf16_full_eval": [ABSENT, True],
    }
    ds_space = {
        "train_micro_batch_size_per_gpu": [ABSENT, "auto", 2, 4], "gradient_accumulation_steps": [ABSENT, "auto", 1, 4],
        "train_batch_size": [ABSENT, "auto", 8, 16, 32, 12], "gradient_clipping": [ABSENT, "auto", 1.0, 0.5],
        "fp16": [ABSENT, {"enabled": "auto"}, {"enabled": True}, {"enabled": False}],
        "bf16": [ABSENT, {"enabled": "auto"}, {"enabled": True}, {"enabled": False}],
    }
    rng = random.Random(1234)
    checked = 0
    for case in range(600):
        ta, ds, world = _pick(rng, ta_space), _pick(rng, ds_space), rng.choice([None, 1, 2, 4])
        if "per_device_train_batch_size" not in ta and "gradient_accumulation_steps" not in ta:
            ta["gradient_accumulation_steps"] = 1  # the default, written so that the file is recognised
        args = dict(defaults, **ta)
        if args["fp16"] and args["bf16"]:
            continue  # TrainingArguments itself refuses it (BL501)
        judge = HfTrainerDeepSpeedConfig(json.loads(json.dumps(ds)))
        worlds = [world] if world else range(1, 33)  # every W up to the largest train_batch_size
        expected_per_world = []
        for w in worlds:
            judge = HfTrainerDeepSpeedConfig(json.loads(json.dumps(ds)))
            judge.trainer_config_process(mock.Mock(world_size=w, **args), args["auto_find_batch_size"])
            expected_per_world.append({m[len("- ds "):].split("=")[0] for m in judge.mismatches})
        # Without W a finding must hold for every W: the keys flagged at every W.
        expected = set.intersection(*expected_per_world)
        if "gradient_accumulation_steps" not in ds and {"train_batch_size", "train_micro_batch_size_per_gpu"} <= set(ds) \
                and args["gradient_accumulation_steps"] != 1:
            # TrainingArguments hands the config to accelerate's plugin, which adds an accumulation of 1
            # (DeepSpeed's batch check then refuses it: tests/differential/test_hf_deepspeed_mismatch.py).
            expected.add("gradient_accumulation_steps")
        name = f"c{case}/sft.yaml"
        text = "model_name_or_path: m\n" + _yaml(ta) + "deepspeed:\n" + "".join(
            f"  {k}: {json.dumps(v)}\n" for k, v in ds.items())
        result = lint_text(tmp_path, name, text, world_size=world)
        found = {d.notes[0].split(" (")[0] for d in result.diagnostics if d.code == "BL120"}
        assert found <= expected, (ta, ds, world, found, expected)
        unwritten_bf16 = "bf16" not in ta and "bf16_full_eval" not in ta
        assert expected - found <= ({"bf16.enabled"} if unwritten_bf16 else set()), (ta, ds, world, found, expected)
        checked += 1
    assert checked > 400


@pytest.mark.differential
@_needs("transformers", "accelerate")
def test_load_best_model_agrees_with_training_arguments(tmp_path):
    """BL522 <=> TrainingArguments refuses load_best_model_at_end, except where batchlint cannot know
    eval_steps (neither it nor logging_steps written: transformers says 500, TRL 10)."""
    from transformers import TrainingArguments

    space = {
        "eval_strategy": [ABSENT, "no", "steps", "epoch"], "save_strategy": [ABSENT, "no", "steps", "epoch", "best"],
        "eval_steps": [ABSENT, 100, 300, 0.1, 0.25], "save_steps": [ABSENT, 500, 0.2, 0.5],
        "logging_steps": [ABSENT, 50, 70],
    }
    keys = list(space)
    for n, combo in enumerate(itertools.product(*space.values())):
        values = {k: v for k, v in zip(keys, combo) if v is not ABSENT}
        try:
            TrainingArguments(output_dir=str(tmp_path / "out"), load_best_model_at_end=True, use_cpu=True, **values)
            refused = False
        except ValueError as exc:
            refused = "load_best_model_at_end" in str(exc)
        text = "per_device_train_batch_size: 4\nload_best_model_at_end: true\n" + _yaml(values)
        found = any(d.code == "BL522" for d in lint_text(tmp_path, f"c{n}.yaml", text).diagnostics)
        unknown = values.get("eval_strategy") == "steps" and "eval_steps" not in values and "logging_steps" not in values
        assert found == refused or (unknown and not found), (values, refused, found)


@pytest.mark.differential
@_needs("transformers", "accelerate", "trl")
def test_generation_batch_agrees_with_grpo_config(tmp_path):
    """BL170 at a given W <=> GRPOConfig refuses the batch at that W."""
    from trl import GRPOConfig

    space = {
        "per_device_train_batch_size": [1, 3, 4, 8], "gradient_accumulation_steps": [ABSENT, 2, 3],
        "num_generations": [1, 2, 4, 6, 8], "generation_batch_size": [ABSENT, 8, 12, 30],
        "steps_per_generation": [ABSENT, 2], "eval_strategy": [ABSENT, "steps"], "per_device_eval_batch_size": [ABSENT, 3],
    }
    keys = list(space)
    for n, combo in enumerate(itertools.product(*space.values())):
        values = {k: v for k, v in zip(keys, combo) if v is not ABSENT}
        world = (1, 2, 4)[n % 3]
        with _patched_world(world):
            try:
                GRPOConfig(output_dir=str(tmp_path / "out"), bf16=False, use_cpu=True, **values)
                refused = False
            except ValueError as exc:
                refused = "generation" in str(exc) or "eval batch" in str(exc)
        text = "model_name_or_path: m\n" + _yaml(values)
        found = any(d.code == "BL170" for d in lint_text(tmp_path, f"g{n}.yaml", text, world_size=world).diagnostics)
        assert found == refused, (values, world, refused, found)


# -- which transformers release the project runs (lint/premise.py) ---------------------------------

LOAD_BEST = "output_dir: out\nper_device_train_batch_size: 4\nload_best_model_at_end: true\n{eval}save_steps: 500\n"


@pytest.mark.parametrize("requirement, written, severity", [
    ("transformers>=4.41,<5\n", True, "error"),
    ("transformers>=4.30,<4.41\n", True, None),  # eval_strategy is no key of theirs: refused for another reason
    ("transformers>=4.30,<4.41\n", False, "error"),  # the default eval strategy: checked from 4.9 on
    ("transformers>=4.30\n", True, "error"),  # 4.30-4.40 cannot run a config writing eval_strategy
    ("transformers>=4.8\n", False, "info"),  # 4.8.x accepts it
    ("transformers==4.8.2\n", False, None),  # no check yet
])
def test_load_best_is_judged_by_the_transformers_release(tmp_path, requirement, written, severity):
    write(tmp_path, "requirements.txt", requirement)
    text = LOAD_BEST.format(eval="eval_strategy: epoch\n" if written else "")
    found = [(d.code, d.severity) for d in lint_text(tmp_path, "train.yaml", text).diagnostics]
    assert found == ([("BL522", severity)] if severity else [])


def test_a_program_with_its_own_train_batch_size_flag_is_not_the_trainer(tmp_path):
    """diffusers' and accelerate's example scripts take `--train_batch_size` with argparse of their own; the
    Trainer's HfArgumentParser would refuse it: not read as TrainingArguments, so no Trainer default (a micro
    batch of 8) is claimed for them. The same line with the Trainer's own flag is read."""
    line = ("accelerate launch --num_processes 8 train_dreambooth.py --train_batch_size=1 "
            "--gradient_accumulation_steps 4 --mixed_precision bf16\n")
    import json

    from conftest import run

    def frameworks(name, text):
        path = write(tmp_path, name, text)
        return [e["framework"] for e in json.loads(run("explain", "--output-format", "json", path).stdout or "[]")]

    assert frameworks("diffusers.sh", line) == []
    assert frameworks("trainer.sh", line.replace("--train_batch_size=1", "--per_device_train_batch_size 1")) == \
        ["transformers"]


# A research repository of 2021 (its README lists the environment as `pip list` prints it, no requirements file):
# DeepSpeed's fp16 on where TrainingArguments leave it off, refused only from transformers 4.7.0.
README_ENVIRONMENT = "# Model\n\n### Dependencies\n\n```\ndatasets                1.6.2\ndeepspeed               0.3.16\n" \
                     "transformers            {version}\n```\n"


@pytest.mark.parametrize("version, severity", [("4.6.1", None), ("4.7.0", "error"), (None, "info")])
def test_the_release_a_readme_lists_decides_the_fp16_check(tmp_path, version, severity):
    (tmp_path / ".git").mkdir()
    if version:
        write(tmp_path, "README.md", README_ENVIRONMENT.format(version=version))
    write(tmp_path, "longlm/ds.json", '{\n  "train_micro_batch_size_per_gpu": "auto",\n  "fp16": {"enabled": true}\n}\n')
    config = write(tmp_path, "longlm/train.yaml", "model_name_or_path: ./LongLM-large\nper_device_train_batch_size: 3\n"
                                                  "deepspeed: ds.json\n")
    found = [d for d in lint_path(config, project_root=tmp_path).diagnostics if d.code == "BL120"]
    assert [d.severity for d in found] == ([severity] if severity else [])
    if severity == "error":
        assert "transformers 4.7.0, pinned in README.md:8" in said(found[0])
