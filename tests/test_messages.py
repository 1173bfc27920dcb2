"""Messages say what the framework does: a framework that warns or logs is not
said to act silently (BL203's three frameworks, each checked in its source)."""

import pytest

from conftest import lint_text

MEGATRON = """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 1 --micro-batch-size 1 \\
    --global-batch-size 64 --sequence-parallel
"""
NEMO = """\
trainer:
  devices: 8
  num_nodes: 1
model:
  micro_batch_size: 1
  global_batch_size: 64
  tensor_model_parallel_size: 1
  sequence_parallel: true
"""
SWIFT = "model: Qwen/Qwen3-8B\ntuner_type: lora\nmicro_batch_size: 1\nglobal_batch_size: 16\nsequence_parallel: true\n"


@pytest.mark.parametrize("name,text,says", [
    # Megatron-LM warns from core 0.10.0, silently before: the message claims no warning it cannot know of.
    ("pretrain.sh", MEGATRON, "Megatron-LM turns it off at start-up"),
    ("megatron_gpt_config.yaml", NEMO, 'NeMo logs "Sequence parallel should only be used with tensor parallel size > 1.'),
    ("sft.yaml", SWIFT, "ms-swift 4.x without a log line, 3.x with Megatron-LM's warning"),
])
def test_sequence_parallel_without_tp_says_who_warns(tmp_path, name, text, says):
    [finding] = [d for d in lint_text(tmp_path, name, text).diagnostics if d.code == "BL203"]
    said = " ".join((finding.message,) + finding.notes)
    assert says in said and "silently" not in said


def test_nemo_overlap_says_nemo_logs_it(tmp_path):
    text = NEMO.replace("tensor_model_parallel_size: 1", "tensor_model_parallel_size: 4").replace(
        "sequence_parallel: true", "sequence_parallel: false\n  ub_tp_comm_overlap: true")
    [finding] = [d for d in lint_text(tmp_path, "megatron_gpt_config.yaml", text).diagnostics if d.code == "BL244"]
    said = " ".join((finding.message,) + finding.notes)
    assert "NeMo logs an info line" in said and "silently" not in said
