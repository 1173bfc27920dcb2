"""
## What it does
Flags a section or key TorchTitan v0.2.2 does not know, with the key it
became where it was renamed (`[training] batch_size` is `local_batch_size`
since PR #1238; `pipeline_parallel_microbatches`, a count, became
`pipeline_parallel_microbatch_size`, a size), the section it lives in when
it moved, or the closest spelling. Files that set `[job]
custom_config_module` are skipped: that module may add any key.

## Why is this bad?
TorchTitan's ConfigManager turns each TOML table into its dataclass and
raises "Invalid field names in <class ...>: {'batch_size'}" for any other
name, before anything else runs. A config written for an older release, or
with one typo, does not start. A whole new section is reported only when it
is a near-miss of a known one (`[paralelism]`): other new sections are what
a custom config module passed on the command line
(`--job.custom_config_module`) adds.

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
torchtitan/config/manager.py:160-171 @ v0.2.2 (`_dict_to_dataclass`); the key
set is the fields of JobConfig and its nested dataclasses in
torchtitan/config/job_config.py @ v0.2.2 (generated into
batchlint/frameworks/torchtitan_keys.py by tools/generate_torchtitan_keys.py,
checked against the installed package by tests/test_fw_torchtitan.py); custom
modules: manager.py:86-116.
"""

import difflib

from batchlint.document import Mapping
from batchlint.frameworks.torchtitan import custom_config_module
from batchlint.frameworks.torchtitan_keys import JOB_CONFIG_KEYS
from batchlint.rule import Example, Finding, Rule

# Keys renamed between releases: (section, old) -> (new, what changed).
_RENAMED = {
    ("training", "batch_size"): ("local_batch_size", "renamed in PR #1238"),
    ("parallelism", "pipeline_parallel_microbatches"): (
        "pipeline_parallel_microbatch_size",
        "replaced by a microbatch size: local_batch_size / the old count",
    ),
}


def check(plan):
    if custom_config_module(plan.document):
        return
    yield from _walk(plan.document.root, JOB_CONFIG_KEYS, ())


def _walk(mapping: Mapping, known: dict, path: tuple):
    for key, node in mapping.items.items():
        span = mapping.key_spans.get(key) or node.span
        if key not in known:
            # A new section is what a custom config module given at launch adds
            # (the transformers_modeling_backend experiment's [hf_transformers]):
            # only a near-miss of a known one is surely a mistake.
            if path or difflib.get_close_matches(key, list(known), n=1, cutoff=0.8):
                yield _unknown(path, key, known, span)
        elif isinstance(known[key], dict) and isinstance(node, Mapping):
            yield from _walk(node, known[key], path + (key,))


def _unknown(path: tuple, key: str, known: dict, span):
    where = f"[{'.'.join(path)}]" if path else "the top level"
    what = "key" if path else "section"
    renamed = _RENAMED.get((".".join(path), key))
    moved = [s for s, keys in JOB_CONFIG_KEYS.items() if path and isinstance(keys, dict) and key in keys]
    if renamed:
        fix = f"use {renamed[0]} ({renamed[1]})"
    elif moved:
        fix = f"move it to [{moved[0]}], where TorchTitan 0.2.2 reads it"
    else:
        close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
        fix = f"did you mean {close[0]}?" if close else f"remove it; {where} holds: {', '.join(sorted(known))}"
    return Finding(
        span=span,
        message=f"{what} {key!r} is not one TorchTitan 0.2.2 knows in {where}: its config manager refuses the file at start-up",
        fix=fix,
    )


_TITAN = """\
[job]
description = "Llama 3 8B training"

[training]
{batch} = 1
seq_len = 8192

[parallelism]
data_parallel_shard_degree = -1
{microbatch} = 1
"""

RULE = Rule(
    code="BL510",
    name="torchtitan-unknown-key",
    severity="error",
    summary="TorchTitan: a section or key v0.2.2 does not know (renamed, moved or misspelt), which fails the launch",
    check=check,
    frameworks=("torchtitan",),
    doc=__doc__,
    examples=(
        Example("titan_old_keys.toml", _TITAN.format(batch="batch_size", microbatch="pipeline_parallel_microbatches"), flagged=(5, 10)),
        Example("titan_new_keys.toml", _TITAN.format(batch="local_batch_size", microbatch="pipeline_parallel_microbatch_size")),
        Example("titan_moved_key.toml", _TITAN.format(batch="local_batch_size", microbatch="seq_len"), flagged=(10,)),
        Example("titan_section_typo.toml", _TITAN.format(batch="local_batch_size", microbatch="tensor_parallel_degree").replace("[parallelism]", "[paralelism]"), flagged=(8,)),
        Example("titan_new_section.toml", _TITAN.format(batch="local_batch_size", microbatch="tensor_parallel_degree") + '\n[hf_transformers]\nmodel = "Qwen/Qwen3-4B-Instruct-2507"\n'),
        Example(
            "titan_custom_module.toml",
            _TITAN.format(batch="batch_size", microbatch="seq_len").replace(
                "[job]\n", '[job]\ncustom_config_module = "torchtitan.models.flux.job_config"\n'
            ),
        ),
    ),
)
