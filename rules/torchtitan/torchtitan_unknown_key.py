"""
## What it does
Flags a section or key the TorchTitan release a project runs does not know
(found in a pin in requirements or pyproject, a lock file, a copy of
TorchTitan in the project, or `versions` in the project config), with the key
it became where it was renamed (`[training] batch_size` is `local_batch_size`
since PR #1238; `pipeline_parallel_microbatches`, a count, became
`pipeline_parallel_microbatch_size`, a size), the section it lives in when
it moved, or the closest spelling. Files that set `[job]
custom_config_module` (0.1.0: `[experimental] custom_args_module`) are
skipped: that module may add any key. A release batchlint has no key set for
is not judged, nor is a TOML file in a project whose TorchTitan reads no TOML
(0.3.0 on, or a copy of the config-registry kind).

When the release is unknown: a key no release reads (0.1.0 to 0.2.2, and main
before 0.1.0, whose layouts count as "0.0.2") is a warning, since every
release either refuses the file (0.2.0 on) or drops the key (0.1.0 and
before); a key only main before 0.1.0 read (`[experimental]
pipeline_parallel_degree`, `[training] batch_size`: a config of that layout)
is refused only from 0.2.0, so it is an info unless the project runs 0.2.0 or
later.

## Why is this bad?
TorchTitan's ConfigManager turns each TOML table into its dataclass and
raises "Invalid field names in <class ...>: {'batch_size'}" for any other
name, before anything else runs (from 0.2.0; 0.1.0 and main before it drop
the key silently, so the setting has no effect: a warning then). A config
written for another release, or with one typo, does not start. A whole new
section is reported only when it is a near-miss of a known one
(`[paralelism]`): other new sections are what a custom config module passed
on the command line (`--job.custom_config_module`) adds.

## Example
```toml
[training]
batch_size = 8
```

## Use instead
```toml
[training]
local_batch_size = 8
```

## Source
torchtitan/config/manager.py:160-171 @ v0.2.0 and v0.2.2 (`_dict_to_dataclass`
refuses); torchtitan/config_manager.py:805-818 @ v0.1.0 and :686-699 @ c1c2f55d1
(drop), :774-800 @ 785c34c99^ (argparse's manager keeps any key, unread). The
key set is the fields of JobConfig and its nested dataclasses in
torchtitan/config/job_config.py @ v0.2.0-v0.2.2 and
torchtitan/config_manager.py @ v0.1.0 (generated into
batchlint/frameworks/torchtitan_keys.py by tools/generate_torchtitan_keys.py,
checked against the installed package by tests/test_fw_torchtitan.py); main's
keys before 0.1.0: batchlint/frameworks/torchtitan.py PRE_RELEASE_KEYS. Custom
modules: manager.py:86-116 @ v0.2.2, config_manager.py:734-762 @ v0.1.0.
"""

from __future__ import annotations

from collections.abc import Iterator

from batchlint.document import Mapping, Span
from batchlint.frameworks.torchtitan import (
    DISTRIBUTION,
    NO_TOML,
    PRE_RELEASE_KEYS,
    TitanSettings,
    copy_arithmetic,
    custom_config_module,
    keys_from_source,
)
from batchlint.frameworks.torchtitan_keys import KEY_SETS
from batchlint.keysets import InForce, in_force, nest
from batchlint.plan import TrainingPlan
from batchlint.premise import HOLDS, Premise, judge
from batchlint.rule import Example, Finding, Rule, closest
from batchlint.versions import version_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Optional

# The first release whose config manager refuses an unknown name; 0.1.0 drops it
# (torchtitan/config_manager.py:805-818 @ v0.1.0 keeps only the dataclass's fields).
_REFUSES_FROM: tuple[int, ...] = version_key("0.2.0")  # type: ignore[assignment]  # a version: never None

REFUSED = Premise(
    DISTRIBUTION, since="0.2.0", name="refused",
    source="v0.1.0 torchtitan/config_manager.py:805-818 (before: drops an unknown name); v0.2.0 "
           "torchtitan/config/manager.py:160-171 (first: raises \"Invalid field names\"); v0.2.2 "
           "torchtitan/config/manager.py:160-171 (still); " + NO_TOML)
UNREAD = Premise(
    DISTRIBUTION, name="unread",
    source="0.0.2 (main before 0.1.0): torchtitan/config_manager.py:774-800 @ 785c34c99^ keeps any TOML key "
           "unread, :686-699 @ c1c2f55d1 drops it; v0.1.0 torchtitan/config_manager.py:805-818 drops it; v0.2.0 "
           "to v0.2.2 torchtitan/config/manager.py:160-171 refuse the file; " + NO_TOML)

# Keys renamed between releases: (section, old) -> (new, what changed).
_RENAMED = {
    ("training", "batch_size"): ("local_batch_size", "renamed in PR #1238"),
    ("training", "compile"): ("[compile] enable", "moved to the [compile] section in 0.2.0"),
    ("parallelism", "pipeline_parallel_microbatches"): (
        "pipeline_parallel_microbatch_size",
        "replaced by a microbatch size: local_batch_size / the old count",
    ),
}


def check(plan: TrainingPlan, titan: TitanSettings) -> Iterator[Finding]:
    doc = plan.document
    if doc.format != "toml" or copy_arithmetic(doc.path, plan.project) is not None:
        return  # a config registry, or a project whose TorchTitan reads no TOML (its registries' release)
    if custom_config_module(doc) or doc.get("experimental", "custom_args_module") is not None:
        return  # 0.1.0's name for a module that adds keys (config_manager.py:734-762 @ v0.1.0)
    force = in_force(DISTRIBUTION, KEY_SETS, doc.path, keys_from_source, plan.project)
    if force is None:
        return  # a release batchlint has no key set for
    table = nest([k for k in KEY_SETS.table if k in force.keys] + sorted(force.keys - KEY_SETS.union))
    # Release unknown: a range whose every release is 0.2.0 or later still refuses.
    refused = not force.known and judge(REFUSED, doc.path, plan.project).outcome == HOLDS
    if isinstance(doc.root, Mapping):
        yield from _walk(doc.root, table, (), table, (force, refused))


def _walk(mapping: Mapping, known: dict[str, Any], path: tuple[str, ...], table: dict[str, Any],
          force: tuple[InForce, bool]) -> Iterator[Finding]:
    for key, node in mapping.items.items():
        span = mapping.key_spans.get(key) or node.span
        if key not in known:
            # A new section is what a custom config module given at launch adds
            # (the transformers_modeling_backend experiment's [hf_transformers]):
            # only a near-miss of a known one is surely a mistake.
            if path or closest(key, known, 0.8) is not None:
                yield _unknown(path, key, known, span, table, force)
        elif isinstance(known[key], dict) and isinstance(node, Mapping):
            yield from _walk(node, known[key], path + (key,), table, force)


def _unknown(path: tuple[str, ...], key: str, known: dict[str, Any], span: Optional[Span], table: dict[str, Any],
             judged: tuple[InForce, bool]) -> Finding:
    force, refused = judged
    where = f"[{'.'.join(path)}]" if path else "the top level"
    what = "key" if path else "section"
    renamed = _RENAMED.get((".".join(path), key))
    moved = [s for s, keys in table.items() if path and isinstance(keys, dict) and key in keys]
    if renamed:
        fix = f"use {renamed[0]} ({renamed[1]})"
    elif moved:
        fix = f"move it to [{moved[0]}], where {force.named if force.known else 'TorchTitan 0.1.0 on'} reads it"
    else:
        close = closest(key, known, 0.6)
        fix = f"did you mean {close}?" if close else f"remove it; {where} holds: {', '.join(sorted(known))}"
    release = version_key(force.release) if force.release else None
    named = force.named[:1].upper() + force.named[1:]
    if not force.known:
        checked = f"{named} has the {what} {key!r} in {where}"
        dotted = ".".join(path + (key,)) if path else key + "."
        if dotted in PRE_RELEASE_KEYS and not refused:
            # A config of main's layout before 0.1.0, which read it: only 0.2.0 on refuse it.
            return Finding(span=span, fix=fix, premise="refused",
                           message=f"{what} {key!r} in {where} was read only by TorchTitan's main before 0.1.0",
                           notes=(checked + ".", "From 0.2.0 on the config manager refuses the file at start-up "
                                                 "(0.1.0 drops it silently)."))
        if refused:
            return Finding(span=span, fix=fix, premise="refused",
                           message=f"unknown {what} {key!r} in {where}: TorchTitan 0.2.0 on refuses the file",
                           notes=(checked + ".", "From 0.2.0 on its config manager refuses the file at start-up."))
        return Finding(span=span, fix=fix, severity="warning", premise="unread",
                       message=f"unknown {what} {key!r} in {where}: refused from TorchTitan 0.2.0, dropped before",
                       notes=(checked + ", nor did main before 0.1.0.",
                              "From 0.2.0 on the config manager refuses the file at start-up, and older releases "
                              "drop it silently (no effect)."))
    short = force.named.split(" (", 1)[0]
    checked = f"Checked against {force.named}."
    if release is not None and release < _REFUSES_FROM:
        return Finding(span=span, fix=fix, severity="warning", premise="unread",
                       message=f"{what} {key!r} in {where} is unknown to {short}, which drops it: no effect",
                       notes=(checked, "Its config manager drops it silently, so the setting has no effect."))
    return Finding(span=span, fix=fix, premise="refused",
                   message=f"{what} {key!r} in {where} is unknown to {short}, which refuses the file",
                   notes=(checked, "Its config manager refuses the file at start-up."))


_TITAN_OLD_KEYS = """\
[job]
description = "Llama 3 8B training"

[training]
batch_size = 1
seq_len = 8192

[parallelism]
data_parallel_shard_degree = -1
pipeline_parallel_microbatches = 1
"""

_TITAN_MOVED_KEY = """\
[job]
description = "Llama 3 8B training"

[training]
local_batch_size = 1
seq_len = 8192

[parallelism]
data_parallel_shard_degree = -1
seq_len = 1
"""


RULE = Rule(
    judges_keys=True,
    code="BL510",
    name="torchtitan-unknown-key",
    severity="error",
    summary="TorchTitan: a section or key the release in force does not know (renamed, moved or misspelt), which fails the launch",
    check=check,
    subject=TitanSettings,
    premises=(REFUSED, UNREAD),
    doc=__doc__,
    examples=(
        # Keys main read before 0.1.0: only 0.2.0 on refuse them.
        Example("titan_old_keys.toml", _TITAN_OLD_KEYS, flagged=(5, 10), severity="info",
                message="key 'batch_size' in [training] was read only by TorchTitan's main before 0.1.0",
                fix="use local_batch_size (renamed in PR #1238)"),
        Example("titan_old_keys_022.toml", _TITAN_OLD_KEYS, flagged=(5, 10),
                files=(('requirements.txt', 'torchtitan==0.2.2\n'),), severity="error",
                message="key 'batch_size' in [training] is unknown to TorchTitan 0.2.2, which refuses the file",
                fix="use local_batch_size (renamed in PR #1238)"),
        Example("titan_old_keys_010.toml", _TITAN_OLD_KEYS, flagged=(5, 10),
                files=(('requirements.txt', 'torchtitan==0.1.0\n'),), severity="warning",
                message="key 'batch_size' in [training] is unknown to TorchTitan 0.1.0, which drops it: no effect",
                fix="use local_batch_size (renamed in PR #1238)"),
        Example("titan_old_keys_002.toml", _TITAN_OLD_KEYS, files=(('requirements.txt', 'torchtitan==0.0.2\n'),)),
        Example("titan_old_keys_range.toml", _TITAN_OLD_KEYS, flagged=(5, 10),
                files=(('requirements.txt', 'torchtitan>=0.2.0\n'),), severity="error",
                message="unknown key 'batch_size' in [training]: TorchTitan 0.2.0 on refuses the file",
                fix="use local_batch_size (renamed in PR #1238)"),
        # The layout of early 2025 ([training] degrees, [experimental] pp/cp), read by main of that time.
        Example("titan_2025_layout.toml", """\
[model]
name = "llama3"
flavor = "8B"
norm_type = "rmsnorm"

[training]
batch_size = 1
tensor_parallel_degree = 1

[experimental]
pipeline_parallel_degree = 1
""", flagged=(4, 7, 8, 11), severity="info",
                message="key 'norm_type' in [model] was read only by TorchTitan's main before 0.1.0",
                fix="remove it; [model] holds: converters, flavor, hf_assets_path, name, print_after_conversion, "
                    "tokenizer_path"),
        Example("titan_new_keys.toml", """\
[job]
description = "Llama 3 8B training"

[training]
local_batch_size = 1
seq_len = 8192

[parallelism]
data_parallel_shard_degree = -1
pipeline_parallel_microbatch_size = 1
"""),
        # No release reads it: refused from 0.2.0, dropped before.
        Example("titan_moved_key.toml", _TITAN_MOVED_KEY, flagged=(10,), severity="warning",
                message="unknown key 'seq_len' in [parallelism]: refused from TorchTitan 0.2.0, dropped before",
                fix="move it to [training], where TorchTitan 0.1.0 on reads it"),
        Example("titan_moved_key_021.toml", _TITAN_MOVED_KEY, flagged=(10,),
                files=(('requirements.txt', 'torchtitan==0.2.1\n'),), severity="error",
                message="key 'seq_len' in [parallelism] is unknown to TorchTitan 0.2.1, which refuses the file",
                fix="move it to [training], where TorchTitan 0.2.1 (pinned in requirements.txt:1) reads it"),
        Example("titan_section_typo.toml", """\
[job]
description = "Llama 3 8B training"

[training]
local_batch_size = 1
seq_len = 8192

[paralelism]
data_parallel_shard_degree = -1
tensor_parallel_degree = 1
""", flagged=(8,), severity="warning",
                message="unknown section 'paralelism' in the top level: refused from TorchTitan 0.2.0, dropped before",
                fix="did you mean parallelism?"),
        Example("titan_new_section.toml", """\
[job]
description = "Llama 3 8B training"

[training]
local_batch_size = 1
seq_len = 8192

[parallelism]
data_parallel_shard_degree = -1
tensor_parallel_degree = 1

[hf_transformers]
model = "Qwen/Qwen3-4B-Instruct-2507"
"""),
        Example("titan_custom_module.toml", """\
[job]
custom_config_module = "torchtitan.models.flux.job_config"
description = "Llama 3 8B training"

[training]
batch_size = 1
seq_len = 8192

[parallelism]
data_parallel_shard_degree = -1
seq_len = 1
"""),
    ),
)
