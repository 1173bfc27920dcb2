"""mmengine config inheritance (lint/sources/inheritance.py) and what the XTuner rules see through it.

Each base is built on its own (mmengine/config/config.py `_file2dict`, `_parse_lazy_import`): a child
that raises `sequence_parallel_size` keeps the accumulation and sampler its base computed with the
base's sp. Findings point at the base's line, with a note at the child's sp."""

import os

from batchlint.config import Settings
from batchlint.document import Scalar, Sequence, Unknown
from batchlint.engine import Options, lint_file
from batchlint.project import ProjectView
from batchlint.rules import RULES
from batchlint.sources.inheritance import Inherited, read_config

from conftest import run, write

# A full XTuner v0.1 config in the upstream shape (xtuner/configs/internlm/*/..._qlora_*.py):
# it imports its classes, so mmengine reads it as a pure-Python config.
LAZY_BASE = """\
from mmengine.dataset import DefaultSampler
from mmengine.optim import AmpOptimWrapper
from torch.optim import AdamW
from xtuner.dataset import process_hf_dataset
from xtuner.dataset.collate_fns import default_collate_fn
from xtuner.parallel.sequence import SequenceParallelSampler

#######################################################################
#                          PART 1  Settings                           #
#######################################################################
max_length = 32768
pack_to_max_length = True

# parallel
sequence_parallel_size = 1

# Scheduler & Optimizer
batch_size = 1  # per_device
accumulative_counts = 16
accumulative_counts *= sequence_parallel_size
lr = 2e-4

#######################################################################
#                      PART 3  Dataset & Dataloader                   #
#######################################################################
train_dataset = dict(
    type=process_hf_dataset,
    max_length=max_length,
    pack_to_max_length=pack_to_max_length,
)
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(
    batch_size=batch_size,
    dataset=train_dataset,
    sampler=dict(type=sampler, shuffle=True),
    collate_fn=dict(type=default_collate_fn),
)

#######################################################################
#                    PART 4  Scheduler & Optimizer                    #
#######################################################################
optim_wrapper = dict(
    type=AmpOptimWrapper,
    optimizer=dict(type=AdamW, lr=lr),
    accumulative_counts=accumulative_counts,
    dtype="bfloat16",
)
"""
SCALED_LINE = 20  # accumulative_counts *= sequence_parallel_size: evaluated at the base's sp
SAMPLER_LINE = 35  # type=sampler: DefaultSampler at the base's sp

LAZY_CHILD = """\
from mmengine.config import read_base

with read_base():
    from ._base_.internlm2_7b_qlora_sft import *

# parallel
sequence_parallel_size = 4
"""
CHILD_SP_LINE = 7

# The child that sets again what its base computed from sp.
LAZY_CHILD_FIXED = LAZY_CHILD + """\
accumulative_counts *= sequence_parallel_size
optim_wrapper.accumulative_counts = accumulative_counts
train_dataloader.sampler.type = SequenceParallelSampler
"""

# A base mmengine reads under `_base_`: nothing imported from an installed package
# (types by registry name), so that the chain is of one kind.
PLAIN_BASE = """\
# parallel
sequence_parallel_size = 1

# Scheduler & Optimizer
batch_size = 1  # per_device
accumulative_counts = 16
accumulative_counts *= sequence_parallel_size
lr = 2e-4

train_dataloader = dict(batch_size=batch_size, sampler=dict(type="DefaultSampler", shuffle=True))
custom_hooks = [dict(type="DatasetInfoHook"), dict(type="EvaluateChatHook")]
optim_wrapper = dict(
    type="AmpOptimWrapper",
    optimizer=dict(type="AdamW", lr=lr),
    accumulative_counts=accumulative_counts,
    dtype="bfloat16",
)
"""
PLAIN_SCALED_LINE = 7


def project(tmp_path, files: dict) -> str:
    """A project (a git root) holding `files`; returns its folder."""
    os.makedirs(tmp_path / ".git", exist_ok=True)
    for name, text in files.items():
        write(tmp_path, name, text)
    return str(tmp_path)


def lint(root, name, world_size=None):
    result = lint_file(os.path.join(root, name), Settings(root=root), Options(world_size=world_size), RULES)
    result.project_root = root
    return result


def found(result):
    """(code, path from the project root, line) of each finding."""
    return sorted((d.code, os.path.relpath(d.path, result.project_root).replace(os.sep, "/"), d.span.line)
                  for d in result.diagnostics)


def built(root, name):
    path = os.path.join(root, name)
    with open(path, encoding="utf-8") as handle:
        return read_config(path, handle.read(), ProjectView())


# -- `with read_base(): from .base import *` ------------------------------------------------------

def test_a_child_raising_sp_keeps_the_accumulation_and_sampler_its_base_computed(tmp_path):
    root = project(tmp_path, {"configs/_base_/internlm2_7b_qlora_sft.py": LAZY_BASE, "configs/sp4.py": LAZY_CHILD})
    result = lint(root, "configs/sp4.py", world_size=32)
    assert result.framework == "xtuner"
    base = "configs/_base_/internlm2_7b_qlora_sft.py"
    assert found(result) == [("BL101", base, SCALED_LINE), ("BL201", base, SAMPLER_LINE)]
    bl101 = next(d for d in result.diagnostics if d.code == "BL101")
    assert bl101.message == "global batch 128 at sp = 4, was 512 at sp = 1"
    said = " ".join(bl101.notes)
    assert "128 sequences" in said and "512 sequences" in said and "4x smaller" in said
    assert "configs/_base_/internlm2_7b_qlora_sft.py, which computed it from its own" in said.replace(os.sep, "/")
    assert "optim_wrapper.accumulative_counts = 16 * sequence_parallel_size" in bl101.fix
    assert not bl101.edits  # never an edit in a base other configs are built on
    [note] = bl101.related
    assert note.path.endswith("configs/sp4.py") and note.span.line == CHILD_SP_LINE
    assert f"{base}:{SCALED_LINE}" in note.message.replace(os.sep, "/")
    bl201 = next(d for d in result.diagnostics if d.code == "BL201")
    assert not bl201.edits and bl201.related[0].span.line == CHILD_SP_LINE


def test_the_child_that_sets_them_again_is_clean(tmp_path):
    root = project(tmp_path, {"configs/_base_/internlm2_7b_qlora_sft.py": LAZY_BASE, "configs/sp4.py": LAZY_CHILD_FIXED})
    result = lint(root, "configs/sp4.py", world_size=32)
    assert result.framework == "xtuner" and found(result) == []


def test_scaling_the_name_alone_leaves_the_dict_with_the_base_value(tmp_path):
    # The name is the child's to change; optim_wrapper was built in the base with the base's value.
    child = LAZY_CHILD + "accumulative_counts *= sequence_parallel_size\n" \
        "train_dataloader.sampler.type = SequenceParallelSampler\n"
    root = project(tmp_path, {"configs/_base_/internlm2_7b_qlora_sft.py": LAZY_BASE, "configs/sp4.py": child})
    assert found(lint(root, "configs/sp4.py", world_size=32)) == [
        ("BL101", "configs/_base_/internlm2_7b_qlora_sft.py", SCALED_LINE)]


def test_the_base_alone_is_linted_as_before(tmp_path):
    root = project(tmp_path, {"configs/_base_/internlm2_7b_qlora_sft.py": LAZY_BASE, "configs/sp4.py": LAZY_CHILD})
    result = lint(root, "configs/_base_/internlm2_7b_qlora_sft.py", world_size=32)
    assert result.framework == "xtuner" and found(result) == []
    assert not isinstance(built(root, "configs/_base_/internlm2_7b_qlora_sft.py"), Inherited)


def test_named_imports_and_names_before_the_block(tmp_path):
    # mmengine binds the bases' names before any statement runs: the child's sp wins wherever it stands.
    child = "sequence_parallel_size = 2\n" + LAZY_CHILD.replace("import *", "import optim_wrapper as ow, lr") \
        .replace("sequence_parallel_size = 4\n", "")
    root = project(tmp_path, {"configs/_base_/internlm2_7b_qlora_sft.py": LAZY_BASE, "configs/c.py": child})
    doc = built(root, "configs/c.py")
    assert isinstance(doc, Inherited) and doc.lazy
    assert doc.namespace["sequence_parallel_size"].value == 2
    assert doc.get("ow", "accumulative_counts").value == 16
    assert doc.get("lr").span.path.endswith("internlm2_7b_qlora_sft.py")
    assert "train_dataloader" not in doc.namespace


def test_a_literal_of_a_base_with_its_own_sp_is_written_for_that_sp(tmp_path):
    base = LAZY_BASE.replace("accumulative_counts *= sequence_parallel_size\n", "")
    root = project(tmp_path, {"configs/_base_/internlm2_7b_qlora_sft.py": base, "configs/sp4.py": LAZY_CHILD})
    result = lint(root, "configs/sp4.py", world_size=32)
    bl101 = [d for d in result.diagnostics if d.code == "BL101"]
    assert [d.span.line for d in bl101] == [SCALED_LINE - 1]
    said = " ".join(bl101[0].notes)
    assert "the sequence_parallel_size of" in said and "not the 512 sequences" in said
    # The same sp in the child as in the base: nothing to say.
    same = LAZY_CHILD.replace("= 4", "= 1")
    write(tmp_path, "configs/sp1.py", same)
    assert found(lint(root, "configs/sp1.py", world_size=32)) == []


# -- `_base_ = [...]` --------------------------------------------------------------------------

def test_base_list_child_raising_sp_is_flagged_at_the_base_line(tmp_path):
    child = "_base_ = ['./_base_/sft.py']\n\nsequence_parallel_size = 4\n"
    root = project(tmp_path, {"configs/_base_/sft.py": PLAIN_BASE, "configs/sp4.py": child})
    result = lint(root, "configs/sp4.py", world_size=8)
    assert found(result) == [("BL101", "configs/_base_/sft.py", PLAIN_SCALED_LINE)]
    bl101 = result.diagnostics[0]
    assert "optim_wrapper = dict(accumulative_counts=16 * sequence_parallel_size)" in bl101.fix
    assert bl101.related[0].span.line == 3


def test_base_string_child_that_sets_the_key_again_is_merged_key_by_key(tmp_path):
    child = "_base_ = './_base_/sft.py'\n\nsequence_parallel_size = 4\n" \
        "optim_wrapper = dict(accumulative_counts=16 * sequence_parallel_size)\n"
    root = project(tmp_path, {"configs/_base_/sft.py": PLAIN_BASE, "configs/sp4.py": child})
    assert found(lint(root, "configs/sp4.py", world_size=8)) == []
    doc = built(root, "configs/sp4.py")
    optim = doc.get("optim_wrapper")
    assert optim.items["accumulative_counts"].value == 64 and optim.items["accumulative_counts"].span.path is None
    assert optim.items["type"].value == "AmpOptimWrapper" and optim.items["type"].span.path.endswith("sft.py")
    assert doc.get("optim_wrapper", "optimizer", "lr").value == 2e-4
    assert doc.root.key_spans["optim_wrapper"].line == 4 and doc.root.key_spans["lr"].path.endswith("sft.py")


def test_base_values_are_not_child_names(tmp_path):
    # Under `_base_` the child sees only `_base_`: its `accumulative_counts` is a new name, and
    # `_base_.x` reads the base's value.
    child = "_base_ = ['./_base_/sft.py']\nsequence_parallel_size = 4\n" \
        "accumulative_counts = _base_.accumulative_counts * sequence_parallel_size\n" \
        "optim_wrapper = dict(accumulative_counts=accumulative_counts)\n" \
        "unknown = batch_size\n"
    root = project(tmp_path, {"configs/_base_/sft.py": PLAIN_BASE, "configs/sp4.py": child})
    doc = built(root, "configs/sp4.py")
    assert doc.get("optim_wrapper", "accumulative_counts").value == 64
    assert isinstance(doc.get("unknown"), Unknown)
    assert found(lint(root, "configs/sp4.py", world_size=8)) == []


def test_delete_replaces_the_base_dict(tmp_path):
    child = "_base_ = ['./_base_/sft.py']\n" \
        "optim_wrapper = dict(_delete_=True, type='OptimWrapper', accumulative_counts=4)\n" \
        "train_dataloader = dict(sampler=dict(_delete_=False, shuffle=False))\n"
    root = project(tmp_path, {"configs/_base_/sft.py": PLAIN_BASE, "configs/c.py": child})
    doc = built(root, "configs/c.py")
    assert set(doc.get("optim_wrapper").items) == {"type", "accumulative_counts"}
    assert doc.get("train_dataloader", "batch_size").value == 1  # merged: kept
    assert set(doc.get("train_dataloader", "sampler").items) == {"type", "shuffle"}
    assert doc.get("train_dataloader", "sampler", "shuffle").value is False


def test_base_placeholders_become_the_base_values(tmp_path):
    child = "_base_ = ['./_base_/sft.py']\n" \
        "lr = {{_base_.lr}}\n" \
        "optim_wrapper = dict(accumulative_counts={{ _base_.optim_wrapper.accumulative_counts }}, extra=[{{_base_.lr}}])\n" \
        "scaled = {{_base_.lr}} * 2\n"
    root = project(tmp_path, {"configs/_base_/sft.py": PLAIN_BASE, "configs/c.py": child})
    doc = built(root, "configs/c.py")
    assert doc.get("lr").value == 2e-4 and doc.get("lr").span.path.endswith("sft.py")
    assert doc.get("optim_wrapper", "accumulative_counts").value == 16
    extra = doc.get("optim_wrapper", "extra")
    assert isinstance(extra, Sequence) and extra.items[0].value == 2e-4
    # In an expression the placeholder is a string, as mmengine leaves it: never the number doubled.
    assert isinstance(doc.get("scaled"), Scalar) and isinstance(doc.get("scaled").value, str)


def test_lists_replace_and_are_never_merged(tmp_path):
    child = "_base_ = ['./_base_/sft.py']\ncustom_hooks = [dict(type='ThroughputHook')]\n"
    root = project(tmp_path, {"configs/_base_/sft.py": PLAIN_BASE, "configs/c.py": child})
    hooks = built(root, "configs/c.py").get("custom_hooks")
    assert [h.items["type"].value for h in hooks.items] == ["ThroughputHook"]


def test_bases_nest_and_the_nearest_wins(tmp_path):
    middle = "_base_ = './sft.py'\nsequence_parallel_size = 2\noptim_wrapper = dict(accumulative_counts=32)\n"
    child = "_base_ = './_base_/middle.py'\nsequence_parallel_size = 4\n"
    root = project(tmp_path, {"configs/_base_/sft.py": PLAIN_BASE, "configs/_base_/middle.py": middle,
                              "configs/c.py": child})
    doc = built(root, "configs/c.py")
    assert doc.namespace["sequence_parallel_size"].value == 4
    ga = doc.get("optim_wrapper", "accumulative_counts")
    assert ga.value == 32 and ga.span.path.endswith("middle.py")
    assert doc.get("optim_wrapper", "type").span.path.endswith("sft.py")  # the grand-base's own file
    # 32 is a literal of a base whose own sp is 2: the child's 4 halves the global batch it was written for.
    result = lint(root, "configs/c.py", world_size=8)
    assert found(result) == [("BL101", "configs/_base_/middle.py", 3)]


# -- what is not followed: the child as it reads alone, a notice, never a crash -------------------

def notices(result):
    return " ".join(result.notices)


def test_a_cycle_is_not_followed(tmp_path):
    root = project(tmp_path, {"a.py": "_base_ = './b.py'\nsequence_parallel_size = 4\n",
                              "b.py": "_base_ = './a.py'\ntrain_dataloader = dict(batch_size=2)\n"})
    result = lint(root, "a.py")
    assert result.error is None and result.framework is None and result.diagnostics == []
    assert "inherits from itself" in notices(result)


def test_a_missing_base_leaves_the_child_alone(tmp_path):
    root = project(tmp_path, {"configs/sp4.py": LAZY_CHILD})
    result = lint(root, "configs/sp4.py")
    assert result.error is None and result.framework is None
    assert "is not found" in notices(result)


def test_a_base_outside_the_project_is_never_read(tmp_path):
    outside = tmp_path / "outside"
    write(outside, "sft.py", PLAIN_BASE)
    inside = tmp_path / "repo"
    root = project(inside, {"configs/sp4.py": "_base_ = ['../../outside/sft.py']\nsequence_parallel_size = 4\n"})
    result = lint(root, "configs/sp4.py", world_size=8)
    assert result.error is None and result.framework is None and result.diagnostics == []
    assert "outside the project" in notices(result)
    assert not any(path.startswith(str(outside)) for path in result.reads)


def test_an_installed_package_base_is_not_followed(tmp_path):
    root = project(tmp_path, {"c.py": "_base_ = 'mmdet::_base_/default_runtime.py'\nsequence_parallel_size = 4\n",
                              "d.py": "from mmengine.config import read_base\nwith read_base():\n"
                                      "    from xtuner.configs.x import *\n"})
    assert "installed package" in notices(lint(root, "c.py"))
    assert "installed package" in notices(lint(root, "d.py"))


def test_a_chain_mmengine_refuses_is_an_error_at_its_base_line(tmp_path):
    # `_base_` over a pure-Python base: "the configuration file type in the inheritance chain must match"
    # (mmengine/config/config.py:846 @ v0.10.7): the job cannot start.
    root = project(tmp_path, {"configs/_base_/internlm2_7b_qlora_sft.py": LAZY_BASE,
                              "configs/sp4.py": "_base_ = './_base_/internlm2_7b_qlora_sft.py'\n"
                                                "sequence_parallel_size = 4\n"})
    result = lint(root, "configs/sp4.py", world_size=32)
    assert found(result) == [("BL230", "configs/sp4.py", 1)] and "must match" in notices(result)
    finding = result.diagnostics[0]
    assert finding.severity == "error" and (finding.span.column, finding.span.end_column) == (10, 46)
    assert [(os.path.basename(r.path), r.span.line) for r in finding.related] == [("internlm2_7b_qlora_sft.py", 1)]
    # In a list, in a base of the base: at the entry that names it, in the file that names it.
    write(tmp_path, "configs/mid.py", "_base_ = [\n    './_base_/internlm2_7b_qlora_sft.py',\n]\n")
    write(tmp_path, "configs/top.py", "_base_ = './mid.py'\nsequence_parallel_size = 4\n")
    assert found(lint(root, "configs/top.py")) == [("BL230", "configs/mid.py", 2)]
    # `_base_ =` after an import of XTuner: mmengine reads the file the other way, and refuses it (config.py:579).
    write(tmp_path, "configs/_base_/sft.py", "batch_size = 1\ntrain_dataloader = dict(batch_size=batch_size)\n")
    write(tmp_path, "configs/late.py", "from xtuner.model import SupervisedFinetune\n_base_ = './_base_/sft.py'\n")
    late = lint(root, "configs/late.py")
    assert found(late) == [("BL230", "configs/late.py", 2)] and "is refused" in notices(late)
    # A `_base_` file imported under `with read_base()`: read as pure-Python too, and refused there.
    write(tmp_path, "configs/lazy.py", "from mmengine.config import read_base\nfrom xtuner.model import SupervisedFinetune\n"
                                       "with read_base():\n    from .text import *\n")
    write(tmp_path, "configs/text.py", "_base_ = './_base_/sft.py'\naccumulative_counts = 4\n")
    lazy = lint(root, "configs/lazy.py")
    assert found(lazy) == [("BL230", "configs/text.py", 1)]
    assert [(os.path.basename(r.path), r.span.line) for r in lazy.diagnostics[0].related] == [("lazy.py", 4)]


def test_a_refused_chain_that_is_not_xtuners_is_left_alone(tmp_path):
    # No file of the chain imports xtuner: another program's loader (mmcv's Config has no pure-Python
    # configs) may read it. A notice, no finding.
    root = project(tmp_path, {"configs/_base_/runtime.py": "import torch\ntrain_dataloader = dict(batch_size=2)\n",
                              "configs/sp4.py": "_base_ = './_base_/runtime.py'\nsequence_parallel_size = 4\n"})
    result = lint(root, "configs/sp4.py")
    assert result.framework is None and result.diagnostics == [] and "must match" in notices(result)


def test_the_matching_chain_is_not_refused(tmp_path):
    root = project(tmp_path, {"configs/_base_/internlm2_7b_qlora_sft.py": LAZY_BASE,
                              "configs/sp4.py": LAZY_CHILD.replace("sequence_parallel_size = 4",
                                                                   "sequence_parallel_size = 1")})
    result = lint(root, "configs/sp4.py", world_size=32)
    assert result.framework == "xtuner" and "BL230" not in [d.code for d in result.diagnostics]


GROUPED_BY_UPDATE = """\
from mmengine.config import read_base
from xtuner.dataset.samplers import LengthGroupedSampler

with read_base():
    from ._base_.internlm2_7b_qlora_sft import *

train_dataloader.update(
    sampler=dict(type=LengthGroupedSampler, length_property="length",
                 per_device_batch_size=batch_size * accumulative_counts))
"""


def test_update_of_an_inherited_dict_is_followed(tmp_path):
    # ConfigDict.update merges a dict into a dict key by key (mmengine/config/config.py:186-204 @ v0.10.7):
    # the base's `shuffle=True` stays in the sampler, and the packing it sets meets the length grouping.
    root = project(tmp_path, {"configs/_base_/internlm2_7b_qlora_sft.py": LAZY_BASE,
                              "configs/grouped.py": GROUPED_BY_UPDATE})
    result = lint(root, "configs/grouped.py", world_size=8)
    assert ("BL301", "configs/grouped.py", 8) in found(result)
    sampler = built(root, "configs/grouped.py").get("train_dataloader", "sampler")
    assert set(sampler.items) == {"type", "shuffle", "length_property", "per_device_batch_size"}
    # Item assignment replaces the dict: no `shuffle` left; the packing still meets the grouping.
    assigned = GROUPED_BY_UPDATE.replace("train_dataloader.update(\n    sampler=dict(",
                                         "train_dataloader['sampler'] = (\n    dict(")
    write(tmp_path, "configs/assigned.py", assigned)
    assert set(built(root, "configs/assigned.py").get("train_dataloader", "sampler").items) == {
        "type", "length_property", "per_device_batch_size"}
    assert ("BL301", "configs/assigned.py", 8) in found(lint(root, "configs/assigned.py", world_size=8))
    # The same update on an unpacked base: nothing to say.
    write(tmp_path, "configs/_base_/internlm2_7b_qlora_sft.py", LAZY_BASE.replace("pack_to_max_length = True",
                                                                                 "pack_to_max_length = False"))
    assert "BL301" not in [code for code, _, _ in found(lint(root, "configs/grouped.py", world_size=8))]


def test_bases_that_share_a_key_are_refused(tmp_path):
    root = project(tmp_path, {"a.py": "lr = 1\n", "b.py": "lr = 2\n", "c.py": "_base_ = ['./a.py', './b.py']\n"})
    assert "both set `lr`" in notices(lint(root, "c.py"))


def test_depth_is_bounded(tmp_path):
    files = {f"b{i}.py": f"_base_ = './b{i + 1}.py'\n" for i in range(12)}
    files["b12.py"] = PLAIN_BASE
    root = project(tmp_path, files)
    result = lint(root, "b0.py", world_size=8)
    assert result.error is None and "nest more than 8 deep" in notices(result)


def test_a_base_that_does_not_parse_is_not_followed(tmp_path):
    root = project(tmp_path, {"base.py": "x = (\n", "c.py": "_base_ = './base.py'\ntrain_dataloader = dict(batch_size=2)\n"})
    result = lint(root, "c.py")
    assert result.error is None and result.framework == "xtuner" and "is not read: line" in notices(result)


def test_a_map_fn_module_imported_under_read_base(tmp_path):
    # xtuner's examples/demo_data configs import a map function from a module next to them.
    config = LAZY_BASE.replace("from xtuner.parallel.sequence import SequenceParallelSampler\n",
                               "from xtuner.parallel.sequence import SequenceParallelSampler\n"
                               "from mmengine.config import read_base\n\nwith read_base():\n"
                               "    from .map_fn import single_turn_map_fn as dataset_map_fn\n")
    root = project(tmp_path, {"map_fn.py": "def single_turn_map_fn(example):\n    return example\n",
                              "config.py": config})
    result = lint(root, "config.py", world_size=8)
    assert result.error is None and result.framework == "xtuner" and found(result) == []
    assert built(root, "config.py").namespace["dataset_map_fn"].value.name == "single_turn_map_fn"


# -- explain ---------------------------------------------------------------------------------------

def test_explain_names_the_file_of_every_number(tmp_path):
    root = project(tmp_path, {"configs/_base_/internlm2_7b_qlora_sft.py": LAZY_BASE, "configs/sp4.py": LAZY_CHILD})
    result = run("explain", os.path.join(root, "configs", "sp4.py"), "-w", "32")
    text = result.output.replace(os.sep, "/")
    rows = {line.split("  ")[1].strip(): line for line in text.splitlines() if line.startswith("  ") and "  " in line[2:]}
    assert "internlm2_7b_qlora_sft.py:18" in rows["micro batch (per GPU)"]
    assert f"internlm2_7b_qlora_sft.py:{SCALED_LINE}" in rows["gradient accumulation"]
    assert "sequence_parallel_size, line 7" in rows["sequence parallel degree"]
    assert "internlm2_7b_qlora_sft.py:11" in rows["sequence length"]
    assert "128" in rows["global batch (sequences/step)"]


def test_the_child_can_disable_what_it_inherits(tmp_path):
    child = LAZY_CHILD.replace("# parallel\n", "# batchlint: disable-file=BL101  # the smaller batch is meant\n")
    root = project(tmp_path, {"configs/_base_/internlm2_7b_qlora_sft.py": LAZY_BASE, "configs/sp4.py": child})
    assert [code for code, _, _ in found(lint(root, "configs/sp4.py", world_size=32))] == ["BL201"]


def test_a_yaml_base_is_merged_like_a_python_one(tmp_path):
    base = "sequence_parallel_size: 1\noptim_wrapper:\n  type: AmpOptimWrapper\n  accumulative_counts: 16\n"
    child = "_base_ = './_base_/b.yaml'\nsequence_parallel_size = 4\noptim_wrapper = dict(dtype='bfloat16')\n"
    root = project(tmp_path, {"configs/_base_/b.yaml": base, "configs/c.py": child})
    doc = built(root, "configs/c.py")
    ga = doc.get("optim_wrapper", "accumulative_counts")
    assert ga.value == 16 and ga.span.path.endswith("b.yaml") and ga.span.line == 4
    assert doc.get("optim_wrapper", "dtype").value == "bfloat16"


def test_a_base_changed_in_a_way_not_followed_is_not_followed(tmp_path):
    # mmengine lets the child change `_base_` in place; a change batchlint cannot follow must not
    # leave the base's old value standing as known.
    child = "_base_ = ['./_base_/sft.py']\n_base_.custom_hooks[0] = dict(type='ThroughputHook')\n"
    root = project(tmp_path, {"configs/_base_/sft.py": PLAIN_BASE, "configs/c.py": child})
    result = lint(root, "configs/c.py")
    assert "changes `_base_` in a way not followed" in notices(result)
    assert not isinstance(built(root, "configs/c.py"), Inherited)
