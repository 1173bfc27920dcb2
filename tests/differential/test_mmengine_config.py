"""Differential test: mmengine's own `Config.fromfile` judges the configs batchlint builds
with their bases (lint/sources/inheritance.py).

For every generated chain (a child over its bases, `_base_` or `with read_base()`) two judges:

* mmengine: `Config.fromfile(child)` loads it (its values, imports left lazy) or raises.
* batchlint: `read_config(child)` builds it with its bases, or leaves it alone with a notice.

They must agree on whether the chain loads, and on every value batchlint knows (an imported
class by its name). mmengine-lite suffices (no torch, no xtuner: imports stay LazyObjects).

Install: pip install mmengine-lite packaging. Run: pytest -m differential tests/differential/test_mmengine_config.py
"""

from __future__ import annotations

import os

import pytest

pytestmark = pytest.mark.differential

pytest.importorskip("mmengine")

from mmengine.config import Config  # noqa: E402
from mmengine.config.lazy import LazyAttr, LazyObject  # noqa: E402

from batchlint import reads  # noqa: E402
from batchlint.document import Mapping, Scalar, Sequence, Symbol  # noqa: E402
from batchlint.project import ProjectView  # noqa: E402
from batchlint.sources.inheritance import Inherited, read_config  # noqa: E402

from conftest import write  # noqa: E402
from test_mmengine_inheritance import LAZY_BASE, LAZY_CHILD, LAZY_CHILD_FIXED, PLAIN_BASE  # noqa: E402

LAZY = "configs/_base_/internlm2_7b_qlora_sft.py"
PLAIN = "configs/_base_/sft.py"
READ_BASE = "from mmengine.config import read_base\nwith read_base():\n    from {module} import *\n"

CASES = {
    "read_base": {LAZY: LAZY_BASE, "configs/c.py": LAZY_CHILD},
    "read_base_fixed": {LAZY: LAZY_BASE, "configs/c.py": LAZY_CHILD_FIXED},
    "read_base_named": {LAZY: LAZY_BASE, "configs/c.py": "sequence_parallel_size = 2\n" + LAZY_CHILD.replace(
        "import *", "import optim_wrapper as ow, lr").replace("sequence_parallel_size = 4\n", "")},
    "read_base_name_only": {LAZY: LAZY_BASE, "configs/c.py": LAZY_CHILD + "accumulative_counts *= sequence_parallel_size\n"},
    "read_base_nested": {LAZY: LAZY_BASE,
                         "configs/_base_/mid.py": READ_BASE.format(module=".internlm2_7b_qlora_sft")
                         + "sequence_parallel_size = 2\nlr = 1e-5\n",
                         "configs/c.py": READ_BASE.format(module="._base_.mid") + "batch_size = 4\n"},
    "base_list": {PLAIN: PLAIN_BASE, "configs/c.py": "_base_ = ['./_base_/sft.py']\n\nsequence_parallel_size = 4\n"},
    "base_key_merged": {PLAIN: PLAIN_BASE, "configs/c.py": "_base_ = './_base_/sft.py'\nsequence_parallel_size = 4\n"
                        "optim_wrapper = dict(accumulative_counts=16 * sequence_parallel_size)\n"},
    "base_variable": {PLAIN: PLAIN_BASE, "configs/c.py": "_base_ = ['./_base_/sft.py']\nsequence_parallel_size = 4\n"
                      "accumulative_counts = _base_.accumulative_counts * sequence_parallel_size\n"
                      "optim_wrapper = dict(accumulative_counts=accumulative_counts)\n"},
    "delete": {PLAIN: PLAIN_BASE, "configs/c.py": "_base_ = ['./_base_/sft.py']\n"
               "optim_wrapper = dict(_delete_=True, type='OptimWrapper', accumulative_counts=4)\n"
               "train_dataloader = dict(sampler=dict(_delete_=False, shuffle=False))\nnew = dict(_delete_=True, a=1)\n"},
    "placeholders": {PLAIN: PLAIN_BASE, "configs/c.py": "_base_ = ['./_base_/sft.py']\nlr = {{_base_.lr}}\n"
                     "optim_wrapper = dict(accumulative_counts={{ _base_.optim_wrapper.accumulative_counts }}, "
                     "extra=[{{_base_.lr}}])\n"},
    "list_replaced": {PLAIN: PLAIN_BASE, "configs/c.py": "_base_ = ['./_base_/sft.py']\ncustom_hooks = [dict(type='A')]\n"},
    "nested_bases": {PLAIN: PLAIN_BASE, "configs/_base_/middle.py": "_base_ = './sft.py'\nsequence_parallel_size = 2\n"
                     "optim_wrapper = dict(accumulative_counts=32)\n",
                     "configs/c.py": "_base_ = './_base_/middle.py'\nsequence_parallel_size = 4\n"},
    "yaml_base": {"configs/_base_/b.yaml": "sequence_parallel_size: 1\noptim_wrapper:\n  type: AmpOptimWrapper\n"
                  "  accumulative_counts: 16\n",
                  "configs/c.py": "_base_ = './_base_/b.yaml'\nsequence_parallel_size = 4\noptim_wrapper = dict(dtype='bf16')\n"},
    # What mmengine refuses, batchlint does not follow.
    "mixed_kinds": {LAZY: LAZY_BASE, "configs/c.py": "_base_ = './_base_/internlm2_7b_qlora_sft.py'\n"},
    "base_after_import": {PLAIN: PLAIN_BASE, "configs/c.py": "from mmengine.dataset import DefaultSampler\n"
                          "_base_ = './_base_/sft.py'\n"},
    "shared_key": {"a.py": "lr = 1\n", "b.py": "lr = 2\n", "configs/c.py": "_base_ = ['../a.py', '../b.py']\n"},
    "dict_over_list": {PLAIN: PLAIN_BASE, "configs/c.py": "_base_ = './_base_/sft.py'\ncustom_hooks = dict(a=1)\n"},
    "missing_name": {LAZY: LAZY_BASE, "configs/c.py": LAZY_CHILD.replace("import *", "import nothing_here")},
}


def _plain_mm(value):
    if isinstance(value, dict):
        return {str(k): _plain_mm(v) for k, v in value.items() if k != "_scope_"}
    if isinstance(value, (list, tuple)):
        return [_plain_mm(v) for v in value]
    if isinstance(value, (LazyObject, LazyAttr)):
        return "symbol " + str(value).rsplit(".", 1)[-1]
    return value


def _plain_ours(node):
    if isinstance(node, Mapping):
        return {str(k): _plain_ours(v) for k, v in node.items.items()}
    if isinstance(node, Sequence):
        return [_plain_ours(v) for v in node.items]
    if isinstance(node, Scalar):
        return f"symbol {node.value.name}" if isinstance(node.value, Symbol) else node.value
    return None  # not known: not compared


def _disagreements(mm, ours, where=""):
    if ours is None:
        return []
    if isinstance(ours, dict) and isinstance(mm, dict):
        found = [f"{where}.{k}: only batchlint" for k in ours if k not in mm and ours[k] is not None]
        found += [f"{where}.{k}: only mmengine" for k in mm if k not in ours]
        return found + [d for k in ours if k in mm for d in _disagreements(mm[k], ours[k], f"{where}.{k}")]
    if isinstance(ours, list) and isinstance(mm, list) and len(ours) == len(mm):
        return [d for i, (a, b) in enumerate(zip(mm, ours)) for d in _disagreements(a, b, f"{where}[{i}]")]
    return [] if mm == ours else [f"{where}: mmengine {mm!r}, batchlint {ours!r}"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_mmengine_builds_what_batchlint_builds(tmp_path, name):
    for path, text in CASES[name].items():
        write(tmp_path, path, text)
    child = os.path.join(str(tmp_path), "configs", "c.py")
    try:
        cfg = Config.fromfile(child)
        mm = _plain_mm(cfg._to_lazy_dict(keep_imported=True) if getattr(cfg, "_imported_names", None) is not None
                       else dict(cfg._cfg_dict))
    except Exception:  # noqa: BLE001 - any refusal of mmengine's
        mm = None
    with open(child, encoding="utf-8") as handle, reads.tracking() as touched:
        doc = read_config(child, handle.read(), ProjectView())
    if mm is None:
        # batchlint does not build the chain either, and says so: a notice, or the refusal (BL230's finding).
        refused = getattr(doc, "refused", None)
        assert (not isinstance(doc, Inherited) or refused is not None) and (touched.notices or refused), \
            "mmengine refuses the chain; batchlint followed it"
        return
    assert isinstance(doc, Inherited), touched.notices
    mm.pop("read_base", None)
    ours = _plain_ours(doc.root)
    ours.pop("read_base", None)
    assert _disagreements(mm, ours) == []
