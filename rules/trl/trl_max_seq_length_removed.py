"""
## What it does
Flags `max_seq_length` in a TRL config (one that also sets a key only TRL's
configs have, such as `packing`, `dataset_text_field` or `dataset_num_proc`;
of them only SFTConfig ever had `max_seq_length`): TRL deprecated it in 0.19
and removed it in 0.20 in favour of `max_length`. Judged by the TRL release
the project runs (see "When it holds"): silent before 0.20, an error from 0.20
on, an info when the release is unknown or a range admits both (`trl>=0.19.1`).

## Why is this bad?
From TRL 0.20 on, SFTConfig has no such field. `TrlParser` (used by most
training scripts) and the `trl sft` command refuse the config with "Unknown
arguments"; TRL's own example scripts accept unknown keys and drop it, so the
sequences are cut at `max_length`, 1024 by default, not at the length you
wrote.

## Example
```yaml
model_name_or_path: Qwen/Qwen2.5-0.5B
dataset_name: trl-lib/Capybara
packing: true
max_seq_length: 4096
```

## Use instead
```yaml
model_name_or_path: Qwen/Qwen2.5-0.5B
dataset_name: trl-lib/Capybara
packing: true
max_length: 4096
```

## Source
trl/trainer/sft_config.py:244-261 (deprecated, copied into `max_length`) @
0.19.1, absent from 0.20.0 on; sft_config.py:202-209 (`max_length` default
1024), scripts/utils.py:303-357 (`parse_args_and_config` rejects unknown
config keys unless `fail_with_unknown_args=False`, as trl/scripts/sft.py:144
passes) @ 1.16.0.
"""

from collections.abc import Iterator

from batchlint.frameworks.hf import SFT_KEYS, TRLSettings
from batchlint.frameworks.releases import TRL
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

# With max_seq_length, any key only TRL has makes it TRL's SFTConfig; without one it may be
# another script's arguments (transformers' run_mlm.py has a max_seq_length field).
TRL_KEYS = SFT_KEYS + ("dataset_num_proc",)

REMOVED = Premise(
    TRL, since="0.20.0",
    source="v0.19.1 trl/trainer/sft_config.py:244-261 (still read, deprecated); v0.20.0 trl/trainer/sft_config.py "
           "(no such field); v1.16.0 trl/trainer/sft_config.py (none)")


def check(plan: TrainingPlan, trl: TRLSettings) -> Iterator[Finding]:
    root = plan.document.root
    stale = root.get("max_seq_length")
    marker = next((k for k in TRL_KEYS if k in root.items), None)
    if stale is None or marker is None:
        return
    value = getattr(stale, "value", None)
    current = root.get("max_length")
    related: tuple[Related, ...] = (Related(f"{marker} makes this a TRL config", root.key_spans[marker]),)
    if current is not None:
        related += (Related(f"max_length = {getattr(current, 'value', '?')} is set here", current.span),)
        fix = "delete max_seq_length: max_length already sets the length"
    else:
        fix = f"rename it to max_length: {value}"
    truncated = getattr(current, "value", None) if current is not None else "default 1024"
    yield Finding(
        span=root.key_spans["max_seq_length"],
        message=f"max_seq_length ({value}) was removed in TRL 0.20; the length is max_length ({truncated})",
        notes=("TrlParser and `trl sft` refuse the config; TRL's example scripts drop max_seq_length and "
               f"truncate at max_length ({truncated})",),
        fix=fix,
        related=related,
    )


RULE = Rule(
    code="BL420",
    name="trl-max-seq-length-removed",
    severity="error",
    summary="TRL SFT config still using max_seq_length, removed in TRL 0.20",
    check=check,
    subject=TRLSettings,
    premises=(REMOVED,),
    doc=__doc__,
    examples=(
        Example("sft_stale.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 4
packing: true
max_seq_length: 4096
""", flagged=(4,), severity="info",
                message="max_seq_length (4096) was removed in TRL 0.20; the length is max_length (default 1024)",
                fix="rename it to max_length: 4096"),
        Example("sft_current.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 4
packing: true
max_length: 4096
"""),
        Example("sft_stale_pinned_new.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 4
packing: true
max_seq_length: 4096
""", flagged=(4,), files=(("requirements.txt", "trl==0.21.0\n"),), severity="error",
                message="max_seq_length (4096) was removed in TRL 0.20; the length is max_length (default 1024)",
                fix="rename it to max_length: 4096"),
        Example("sft_stale_pinned_old.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 4
packing: true
max_seq_length: 4096
""", files=(("requirements.txt", "trl==0.19.1\n"),)),
        Example("run_mlm_args.yaml", """\
model_name_or_path: bert-base-uncased
per_device_train_batch_size: 4
max_seq_length: 512
dataset_name: wikitext
"""),
    ),
)
