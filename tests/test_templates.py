"""Config templates (shell `${VAR}` or Jinja placeholders filled in before use)
are not broken files: no BL001, the placeholders' values are Unknown, the rest
is still checked where it is written; a file broken without them still is."""

import time

import pytest

from batchlint.document import ParseError, Unknown
from batchlint.sources import TemplateError, read

from conftest import lint_text

# A DeepSpeed config a launch script fills with sed/envsubst before `deepspeed` reads it.
DS_TEMPLATE = """\
{
  "train_batch_size": ${GLOBAL_BATCH},
  "train_micro_batch_size_per_gpu": $MICRO_BATCH,
  "gradient_accumulation_steps": $((GBS / MBS / 8)),
  "tensorboard": {"enabled": true, "output_path": "${OUT}/tb"},
  "zero_optimization": {
    "stage": ${ZERO_STAGE:-2}
  }
}
"""

# LLaMA-Factory-style YAML written as a Jinja template.
JINJA_YAML = """\
model_name_or_path: {{ model }}
stage: sft
per_device_train_batch_size: {{ batch_size }}
gradient_accumulation_steps: 8
{% if deepspeed %}
deepspeed: {{ deepspeed }}
{% endif %}
packing: true
group_by_length: true
"""

TITAN_TEMPLATE = """\
[job]
dump_folder = "./outputs"  # ${not a placeholder that matters}

[training]
local_batch_size = ${LBS}
global_batch_size = 100
"""


def codes(result):
    return [(d.code, d.span.line) for d in result.diagnostics]


def test_a_deepspeed_json_template_is_not_broken_and_its_placeholders_are_unknown(tmp_path):
    assert codes(lint_text(tmp_path, "ds_config.json", DS_TEMPLATE, world_size=8)) == []
    document = read("ds_config.json", DS_TEMPLATE, "json")
    for key in ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps"):
        assert isinstance(document.get(key), Unknown), key
    assert isinstance(document.get("zero_optimization", "stage"), Unknown)
    assert document.get("train_batch_size").span[:2] == (2, 23)  # where the placeholder is written
    assert document.get("tensorboard", "enabled").value is True
    assert document.text == DS_TEMPLATE


def test_the_written_values_of_a_template_are_still_checked(tmp_path):
    # train_batch_size 64 with micro 4 x GA 4 x W 8 = 128: BL102 on line 2 once the micro batch is written...
    text = DS_TEMPLATE.replace("${GLOBAL_BATCH}", "64").replace("$MICRO_BATCH", "4").replace(
        "$((GBS / MBS / 8))", "4")
    assert codes(lint_text(tmp_path, "ds.json", text, world_size=8)) == [("BL102", 2)]
    # ...and not while the micro batch is a placeholder.
    text = DS_TEMPLATE.replace("${GLOBAL_BATCH}", "64").replace("$((GBS / MBS / 8))", "4")
    assert codes(lint_text(tmp_path, "ds2.json", text, world_size=8)) == []


def test_a_jinja_yaml_template_is_read_with_its_lines_kept(tmp_path):
    result = lint_text(tmp_path, "sft.yaml", JINJA_YAML)
    assert result.framework == "llamafactory"
    assert codes(result) == [("BL301", 9)]


def test_a_toml_template(tmp_path):
    assert codes(lint_text(tmp_path, "train.toml", TITAN_TEMPLATE, world_size=8)) == []
    assert isinstance(read("t.toml", TITAN_TEMPLATE, "toml").get("training", "local_batch_size"), Unknown)


@pytest.mark.parametrize("name,text", [
    ("ds.json", '{\n  "train_batch_size": 64,\n  "train_micro_batch_size_per_gpu": 4\n  "gradient_accumulation_steps": 4\n}\n'),
    # A placeholder inside a string does not excuse the missing comma.
    ("ds2.json", '{\n  "train_batch_size": 64,\n  "tensorboard": {"output_path": "${OUT}/tb"}\n'
                 '  "train_micro_batch_size_per_gpu": 4\n}\n'),
    # A placeholder in a TOML comment neither.
    ("t.toml", '[training]\nlocal_batch_size = 8  # ${LBS}\nglobal_batch_size = = 100\n'),
    # Filled, the file is still broken, and no Jinja statement explains it.
    ("ds3.json", '{\n  "train_batch_size": ${GBS}\n  "train_micro_batch_size_per_gpu": 4\n}\n'),
    # Two objects, one per line, but one of them broken: not JSON Lines either.
    ("ds4.json", '{"train_batch_size": 64}\n{"train_micro_batch_size_per_gpu": 4,}\n'),
    # Two configs written one after the other over several lines: a mistake, not a dataset.
    ("ds5.json", '{\n  "train_batch_size": 64\n}\n{\n  "train_batch_size": 32\n}\n'),
])
def test_a_broken_file_is_still_reported(tmp_path, name, text):
    result = lint_text(tmp_path, name, text)
    assert [d.code for d in result.diagnostics] == ["BL001"]


def test_a_template_whose_jinja_statements_shape_it_is_skipped_not_broken(tmp_path):
    text = ('{\n  "train_micro_batch_size_per_gpu": {{ micro }},\n  {% if zero3 %}\n'
            '  "zero_optimization": {"stage": 3},\n  {% endif %}\n  "gradient_accumulation_steps": 4,\n}\n')
    result = lint_text(tmp_path, "ds_config.json", text)
    assert result.diagnostics == [] and any("Jinja template" in n for n in result.notices)
    with pytest.raises(TemplateError):
        read("ds_config.json", text, "json")
    # The same trailing comma without the Jinja statement is a syntax error.
    with pytest.raises(ParseError) as raised:
        read("ds_config.json", text.replace("{% if zero3 %}", "").replace("{% endif %}", ""), "json")
    assert not isinstance(raised.value, TemplateError)


def test_a_large_template_is_read_in_linear_time():
    text = "{\n" + "".join(f'  "k{i}": "${{V}}/{i}",\n' for i in range(40_000)) + '  "last": ${X}\n}\n'
    started = time.perf_counter()
    document = read("big.json", text, "json")
    assert isinstance(document.get("last"), Unknown) and isinstance(document.get("k7"), Unknown)
    assert time.perf_counter() - started < 10


def test_bare_upper_case_words_a_sed_replaces_are_placeholders_in_json(tmp_path):
    # The shape of DeepSpeedExamples' ds_config_*_TEMPLATE.json: `sed "s/MB_SIZE/4/"` fills them.
    text = ('{\n  "train_batch_size" : GB_SIZE,\n  "train_micro_batch_size_per_gpu": MB_SIZE,\n'
            '  "fp16": {"enabled": FP16_ENABLE},\n  "quantize_weight_in_forward": QuantW_FORWARD,\n'
            '  "zero_optimization": {"stage": 0, "offload_param": {"device": "cpu"}}\n}\n')
    result = lint_text(tmp_path, "ds_config_TEMPLATE.json", text)
    assert codes(result) == [("BL521", 6)]  # what is written is still checked
    document = read("ds.json", text, "json")
    assert isinstance(document.get("train_micro_batch_size_per_gpu"), Unknown)
    assert isinstance(document.get("fp16", "enabled"), Unknown)


@pytest.mark.parametrize("word", ["TRUE", "True", "None", "NULL"])
def test_a_misspelt_literal_is_not_a_placeholder(tmp_path, word):
    text = '{\n  "train_micro_batch_size_per_gpu": 4,\n  "fp16": {"enabled": %s}\n}\n' % word
    assert codes(lint_text(tmp_path, "ds.json", text)) == [("BL001", 3)]


def test_a_dataset_in_json_lines_under_json_is_skipped_not_broken(tmp_path):
    # A toy dataset saved as .json with one record a line (FlagEmbedding's data/toy/*.json): its records
    # may name a marker ("batch_size" in a query) but it is no config, and no syntax error of one.
    text = ('{"query": "What batch_size fits?", "pos": ["train_batch_size is 8"], "query_id": 0}\n'
            '{"query": "And the accumulation?", "pos": ["gradient_accumulation_steps"], "query_id": 1}\n')
    result = lint_text(tmp_path, "convsearch.json", text)
    assert result.diagnostics == []
    assert [n.rsplit("/", 1)[-1] for n in result.notices] == [
        "convsearch.json: JSON Lines data (one record per line), not a config"]


def _tokenizer(tokens: int) -> str:
    """A tokenizers JSON (tokenizer.json under any name), its vocabulary holding config words as tokens."""
    vocab = ",\n".join(f'      "tok{i}": {i}' for i in range(tokens))
    return ('{\n  "version": "1.0",\n  "truncation": null,\n  "padding": null,\n  "added_tokens": [],\n'
            '  "model": {\n    "type": "BPE",\n    "vocab": {\n      "packing": 0,\n      "train_batch_size": 1,\n'
            f'{vocab}\n    }},\n    "merges": []\n  }}\n}}\n')


@pytest.mark.parametrize("tokens", [3, 120_000])  # a small one, and one past the reading limit (was BL003)
def test_a_tokenizers_json_under_any_name_is_data_not_a_config(tmp_path, tokens):
    # gpt-neox's tests/data/hf_cache/tokenizer/gpt2.json: its tokens hold markers ("packing").
    result = lint_text(tmp_path, "gpt2.json", _tokenizer(tokens))
    assert result.diagnostics == []
    assert [n.rsplit("/", 1)[-1] for n in result.notices] == ["gpt2.json: a tokenizer's vocabulary, not a config"]


def test_a_config_with_a_version_key_is_still_a_config(tmp_path):
    text = '{\n  "version": "1.0",\n  "train_batch_size": 8,\n  "train_micro_batch_size_per_gpu": 4,\n' \
           '  "gradient_accumulation_steps": 1\n}\n'
    assert codes(lint_text(tmp_path, "ds.json", text, world_size=4)) == [("BL102", 3)]


def test_a_vocabulary_a_launch_line_names_is_not_read_as_a_config(tmp_path):
    # Megatron-DeepSpeed's rebase scripts: `--vocab-file ${vocab_path}` beside the batch flags.
    vocab = "{" + ", ".join(f'"t{i}": {i}' for i in range(120_000)) + ', "packing": 120000}\n'
    for name in ("gpt2-vocab.json", "tokenizer.json"):
        script = ('#!/bin/bash\ndir=`pwd`\nvocab_path="%s"\n'
                  'deepspeed ${dir}/pretrain_gpt.py --micro-batch-size 2 --global-batch-size 16 '
                  '--vocab-file ${vocab_path}\n' % name)
        (tmp_path / name).write_text(vocab)
        assert [d.code for d in lint_text(tmp_path, "run.sh", script).diagnostics] == []


@pytest.mark.parametrize("name", ["roberta-base-vocab-withbbox.json", "encoder.json"])
def test_a_json_of_more_values_than_any_config_is_data_whatever_its_name(tmp_path, name):
    # A GPT-2 encoder.json and a vocabulary renamed by a project: token -> id, 120,000 of them, tokens
    # holding markers ("train_batch_size"). Past the value bound no training config goes: a notice, no BL003.
    vocab = '{"train_batch_size": 0, ' + ", ".join(f'"t{i}": {i}' for i in range(1, 120_000)) + "}\n"
    result = lint_text(tmp_path, name, vocab)
    assert result.diagnostics == []
    assert any("data, not a training config" in n for n in result.notices)


def test_a_config_past_the_nesting_bound_is_still_reported(tmp_path):
    text = '{"train_batch_size": 8, "x": ' + "[" * 300 + "]" * 300 + "}\n"
    assert [d.code for d in lint_text(tmp_path, "ds.json", text).diagnostics] == ["BL003"]


def test_a_jinja_template_of_a_program_is_not_a_syntax_error(tmp_path):
    # transformers' templates/adding_a_new_example_script/{{cookiecutter.directory_name}}/run_*.py shape: its
    # `train_dataloader` is a marker of the Python config readers, so the file is parsed.
    body = "import logging\ntrain_dataloader = get_dataloader(args)\n"
    text = ('"""Fine-tuning on {{cookiecutter.example_name}}."""\n{%- if cookiecutter.with_trainer == "True" %}\n\n'
            + body + "{%- else %}\nimport torch\n{% endif %}\n")
    result = lint_text(tmp_path, "run_example.py", text)
    assert result.diagnostics == []
    assert any("a Jinja template of a program" in n for n in result.notices)
    broken = lint_text(tmp_path, "broken.py", body + "def f(:\n    pass\n")
    assert [d.code for d in broken.diagnostics] == ["BL001"]  # no Jinja: the syntax error stands


# Megatron-DeepSpeed's examples_deepspeed/universal_checkpointing: every run_*.sh writes ds_config.json with a
# heredoc before deepspeed reads it; the committed file is left over from another run.
WRITER = """\
#!/bin/bash
script_dir=$(dirname $0)
CONFIG_JSON="$script_dir/ds_config.json"
GLOBAL_BATCH=16
cat <<EOT > {target}
{{
  "train_batch_size": $GLOBAL_BATCH,
  "train_micro_batch_size_per_gpu": 2
}}
EOT
deepspeed pretrain_gpt.py --deepspeed_config=${{CONFIG_JSON}}
"""
STALE = '{\n  "train_batch_size": 16,\n  "train_micro_batch_size_per_gpu": 16\n}\n'


@pytest.mark.parametrize("target, flagged", [
    ("$CONFIG_JSON", False),  # written through the variable naming it
    ("ds_config.json", False),  # written by its name
    ("run.log", True),  # the script writes another file: the committed config is what runs
])
def test_a_json_a_script_writes_before_use_is_that_scripts_output(tmp_path, target, flagged):
    (tmp_path / ".git").mkdir()
    (tmp_path / "run_bf16.sh").write_text(WRITER.format(target=target))
    result = lint_text(tmp_path, "ds_config.json", STALE, world_size=8)
    assert [d.code for d in result.diagnostics] == (["BL103"] if flagged else [])
    assert any("run_bf16.sh:5 writes it before it is used" in n for n in result.notices) is not flagged
