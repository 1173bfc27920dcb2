"""Adapters: which files they take, and the facts they read from them."""

XTUNER = """\
from mmengine.dataset import DefaultSampler
sequence_parallel_size = {sp}
batch_size = 1
accumulative_counts = {ga}
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=DefaultSampler))
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""


def codes(result):
    return sorted(d.code for d in result.diagnostics)


# -- files that are not training configs yield nothing -------------------------------------

def test_model_module_with_a_marker_word_is_not_a_config(lint):
    text = (
        "import torch\n\n"
        "def build(cfg):\n"
        "    train_dataloader = torch.utils.data.DataLoader(cfg.data, batch_size=0)\n"
        "    return train_dataloader\n"
    )
    result = lint("model.py", text, world_size=8)
    assert result.framework is None and result.diagnostics == []


def test_python_file_without_markers_is_not_even_parsed(lint):
    result = lint("broken_helper.py", "def f(:\n    pass\n")  # a syntax error nobody asked about
    assert result.framework is None and result.diagnostics == []


def test_github_workflow_and_pyproject_yield_nothing(lint):
    workflow = "name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: pytest\n"
    pyproject = '[project]\nname = "x"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n'
    assert lint(".github/workflows/ci.yml", workflow).framework is None
    assert lint("pyproject.toml", pyproject).framework is None


def test_unrelated_files_are_never_parsed(lint, monkeypatch):
    import batchlint.engine

    def refuse(*args):
        raise AssertionError("an unrecognisable file was parsed")

    monkeypatch.setattr(batchlint.engine, "read", refuse)
    module = "import os\n\n\ndef helper(x):\n    return os.path.join(x, 'y')\n"
    assert lint("helpers.py", module).framework is None
    assert lint("data.json", '{"rows": [1, 2, 3]}').framework is None
    assert lint("compose.yaml", "services:\n  web:\n    image: nginx\n").framework is None


# -- XTuner ------------------------------------------------------------------------------

def test_xtuner_v1_config_is_not_read_as_v0(lint):
    text = (
        "from xtuner.v1.train import TrainerConfig\n"
        "sequence_parallel_size = 4\nbatch_size = 1\naccumulative_counts = 16\n"
        "train_dataloader = dict(batch_size=batch_size)\n"
        "optim_wrapper = dict(accumulative_counts=accumulative_counts)\n"
        "trainer = TrainerConfig(global_batch_size=64)\n"
    )
    result = lint("v1.py", text)
    assert result.framework == "xtuner-v1" and result.diagnostics == []


def test_xtuner_accumulation_derived_by_expression_is_scaled(lint):
    assert codes(lint("a.py", XTUNER.format(sp=4, ga="4 * sequence_parallel_size"))) == ["BL201"]


def test_xtuner_unknown_condition_leaves_values_unknown(lint):
    text = XTUNER.format(sp=4, ga=16) + "if os.environ.get('X'):\n    accumulative_counts = 64\n"
    text = text.replace("optim_wrapper = dict(accumulative_counts=accumulative_counts)\n", "") + (
        "optim_wrapper = dict(accumulative_counts=accumulative_counts)\n"
    )
    assert "BL101" not in codes(lint("cond.py", "import os\n" + text))


def test_xtuner_packing_found_in_nested_datasets(lint):
    text = (
        "from xtuner.dataset.samplers import LengthGroupedSampler\n"
        "from mmengine.dataset import ConcatDataset\n"
        "a = dict(pack_to_max_length=True)\n"
        "train_dataloader = dict(batch_size=1, dataset=dict(type=ConcatDataset, datasets=[a]),\n"
        "                        sampler=dict(type=LengthGroupedSampler, per_device_batch_size=16))\n"
    )
    result = lint("nested.py", text)
    assert [(d.code, d.span.line) for d in result.diagnostics] == [("BL301", 5)]


def test_xtuner_batch_size_and_accumulation_reach_the_global_batch(lint):
    result = lint("g.py", XTUNER.format(sp=2, ga="8 * sequence_parallel_size"), world_size=8, global_batch=64)
    # 1 x 16 x (8 / 2) = 64: the target is met, and sp is scaled.
    assert "BL102" not in codes(result)
    result = lint("g2.py", XTUNER.format(sp=2, ga="8 * sequence_parallel_size"), world_size=8, global_batch=128)
    [finding] = [d for d in result.diagnostics if d.code == "BL102"]
    assert "the global batch is 64" in finding.message and "128" in finding.message


# -- TorchTitan ---------------------------------------------------------------------------

def test_torchtitan_old_batch_size_key_is_the_local_batch(lint):
    text = "[training]\nbatch_size = 8\nglobal_batch_size = 20\n\n[parallelism]\ndata_parallel_shard_degree = 2\n"
    result = lint("old.toml", text)
    [finding] = [d for d in result.diagnostics if d.code == "BL103"]
    assert "[training] batch_size (8) x dp (2) = 16" in " ".join((finding.message,) + finding.notes)
    assert "BL510" in {d.code for d in result.diagnostics}  # v0.2.2 no longer knows the old name


def test_torchtitan_reads_only_the_training_table(lint):
    text = (
        "[training]\nlocal_batch_size = 4\nglobal_batch_size = 16\n\n"
        "[validation]\nlocal_batch_size = 3\n\n"
        "[parallelism]\ndata_parallel_shard_degree = -1\n"
    )
    assert lint("flux.toml", text, world_size=4).diagnostics == []
    assert codes(lint("flux8.toml", text, world_size=8)) == ["BL103"]  # 4 x 8 = 32 does not divide 16


def test_torchtitan_shard_minus_one_uses_the_leftover_ranks(lint):
    text = (
        "[training]\nlocal_batch_size = 2\nglobal_batch_size = 24\n\n"
        "[parallelism]\ndata_parallel_replicate_degree = 2\ndata_parallel_shard_degree = -1\n"
        "tensor_parallel_degree = 2\npipeline_parallel_degree = 2\ncontext_parallel_degree = 1\n"
    )
    # W=16 -> shard = 16 // (2*2*2) = 2, dp = 4, 2 x 4 = 8 does not divide 24? it does: no finding.
    assert lint("a.toml", text, world_size=16).diagnostics == []
    # W=32 -> shard 4, dp 8, 2 x 8 = 16 does not divide 24.
    [finding] = lint("b.toml", text, world_size=32).diagnostics
    assert "x dp (8) = 16" in " ".join((finding.message,) + finding.notes)
    # W unknown -> dp is a multiple of the replicate degree: 2 x 2 = 4 divides 24, nothing to say.
    assert lint("c.toml", text).diagnostics == []


# -- DeepSpeed ----------------------------------------------------------------------------

def test_deepspeed_auto_values_are_left_to_the_hf_integration(lint):
    text = '{"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": 3}'
    result = lint("ds.json", text, world_size=8, global_batch=7)
    assert result.framework == "deepspeed" and result.diagnostics == []


def test_hf_json_is_not_taken_for_deepspeed(lint):
    text = '{"per_device_train_batch_size": 2, "gradient_accumulation_steps": 4, "deepspeed": "zero2", "tuner_type": "lora"}'
    assert lint("sft.json", text).framework == "swift"


# -- Hugging Face family --------------------------------------------------------------------

def test_flavours(lint):
    assert lint("a.yaml", "stage: sft\nper_device_train_batch_size: 2\n").framework == "llamafactory"
    assert lint("b.yaml", "model_type: qwen2\nper_device_train_batch_size: 2\n").framework == "swift"
    assert lint("c.yaml", "dataset_name: x\nmax_length: 512\npacking: true\n").framework == "trl"
    assert lint("d.yaml", "output_dir: out\ngradient_accumulation_steps: 2\n").framework == "transformers"


def test_other_schemas_are_left_alone(lint):
    torchtune = "batch_size: 4\ngradient_accumulation_steps: 2\noptimizer:\n  _component_: torch.optim.AdamW\n"
    lf_v1 = "model: Qwen/Qwen3-0.6B\nmicro_batch_size: 1\ngradient_accumulation_steps: 2\n"
    assert lint("tune.yaml", torchtune).framework == "torchtune"
    # Too little to tell it is LLaMA-Factory v1, but never TrainingArguments (no per-device batch there).
    assert lint("v1.yaml", lf_v1).framework not in ("transformers", "trl", "swift", "llamafactory")


def test_swift_default_accumulation_depends_on_world_size(lint):
    # ms-swift: GA = max(1, ceil(16 / micro / W)) = ceil(16 / 1 / 4) = 4 -> 1 x 4 x 4 = 16.
    text = "model_type: qwen2\nper_device_train_batch_size: 1\n"
    assert lint("s.yaml", text, world_size=4, global_batch=16).diagnostics == []
    [finding] = lint("s2.yaml", text, world_size=4, global_batch=32).diagnostics
    assert "default for W=4" in " ".join((finding.message,) + finding.notes)


def test_transformers_default_micro_batch_is_8(lint):
    text = "output_dir: out\ngradient_accumulation_steps: 2\n"
    [finding] = lint("t.yaml", text, world_size=2, global_batch=16).diagnostics
    assert "the global batch is 32" in finding.message and "default 8" in " ".join((finding.message,) + finding.notes)


def test_yaml_strings_are_not_numbers(lint):
    text = 'output_dir: out\nper_device_train_batch_size: "4"\ngradient_accumulation_steps: 2\n'
    assert lint("q.yaml", text, world_size=2, global_batch=1).diagnostics == []


# -- axolotl --------------------------------------------------------------------------------

def test_axolotl_needs_a_model_name(lint):
    nemo = "trainer:\n  devices: 8\nbase_model:\n  micro_batch_size: 4\n"
    assert lint("nemo.yaml", nemo).framework is None
