"""
## What it does
Flags a NeMo 1 Megatron config that enables `model.ub_tp_comm_overlap`
(userbuffer tensor-parallel communication overlap) where NeMo turns it off:
without sequence parallelism in effect (`model.sequence_parallel` not true,
or true with tensor-parallel size 1, which NeMo turns off first) or with
`model.fsdp: true`.

## Why is this bad?
The overlap only exists for sequence-parallel communication and not under
Torch FSDP. NeMo logs an info line and sets it to false: the throughput the
config was tuned for (and the `tp_overlap` userbuffer config it may load)
does not apply, with nothing above info level to say so.

## Example
```yaml
model:
  tensor_model_parallel_size: 4
  sequence_parallel: false
  ub_tp_comm_overlap: true
```

## Use instead
```yaml
model:
  tensor_model_parallel_size: 4
  sequence_parallel: true
  ub_tp_comm_overlap: true
```

NeMo reads `ub_tp_comm_overlap` from 1.19.0 (turned off without sequence
parallelism from then on; 1.19-1.22 also without Transformer Engine, which is
not flagged) and `fsdp` from 1.23.0, to 2.5.0 (2.5.1 removed NeMo 1's Megatron
models). Judged by the NeMo release the project pins: without one, no finding.

## Source
NeMo 2.5.0: nemo/collections/nlp/models/language_modeling/
megatron_base_model.py:1019-1025 (sequence parallel off with tp 1), then
1072-1087 (`ub_tp_comm_overlap` off without sequence parallel or with FSDP).
First: v1.19.0 megatron_base_model.py:564-570, v1.23.0 :938-944 (FSDP).
"""

from __future__ import annotations

from collections.abc import Iterator

from batchlint.frameworks.nemo import NemoSettings
from batchlint.frameworks.releases import NEMO
from batchlint.plan import Fact, TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

WITHOUT_SP = Premise(
    NEMO, since="1.19.0", until="2.5.0", runs_until="2.5.0",  # NeMo-1 Megatron YAML: gone after 2.5.0
    name="sequence_parallel",
    source="v1.18.0 megatron_base_model.py (no ub_tp_comm_overlap); v1.19.0 nemo/collections/nlp/models/"
           "language_modeling/megatron_base_model.py:564-570 (first); 2.5.0 megatron_base_model.py:1072-1079 (last); "
           "2.5.1 has no nemo/collections/nlp/models")
WITH_FSDP = Premise(
    NEMO, since="1.23.0", until="2.5.0", runs_until="2.5.0",  # NeMo-1 Megatron YAML: gone after 2.5.0
    name="fsdp",
    source="v1.22.0 megatron_base_model.py (no fsdp); v1.23.0 nemo/collections/nlp/models/language_modeling/"
           "megatron_base_model.py:938-944 (first); 2.5.0 megatron_base_model.py:1081-1087 (last); 2.5.1 has no "
           "nemo/collections/nlp/models")


def check(plan: TrainingPlan, nemo: NemoSettings) -> Iterator[Finding]:
    overlap = nemo.ub_tp_comm_overlap
    if overlap is None or overlap.value is not True:
        return
    tp = plan.parallel.get("tp")
    reason = _why_off(nemo, tp)
    if reason is None:
        return
    why, because, culprit, premise = reason
    yield Finding(
        span=overlap.span,
        message=f"{overlap.key} is true{_with(tp)} but {why}",
        notes=(because,
               "NeMo logs an info line (\"Setting `ub_tp_comm_overlap` to False\") and turns the overlap off"),
        fix="enable model.sequence_parallel with tensor_model_parallel_size > 1 (and no FSDP), or drop ub_tp_comm_overlap",
        related=(Related(f"{culprit.key} = {culprit.value}", culprit.span),) if culprit.span else (),
        premise=premise.name,
    )


def _with(tp: Optional[Fact]) -> str:
    return f" with {tp.describe()}" if tp is not None and tp.known and tp.value != 1 else ""


def _why_off(nemo: NemoSettings, tp: Optional[Fact]) -> Optional[tuple[str, str, Fact, Premise]]:
    """(why, the reason for it, the fact behind it, the premise it rests on), or None when the overlap stays on or it
    cannot be known."""
    fsdp, sp = nemo.fsdp, nemo.sequence_parallel
    if fsdp is not None and fsdp.value:
        return f"{fsdp.key} is true", "NeMo has no userbuffer overlap under Torch FSDP", fsdp, WITH_FSDP
    if sp is not None and sp.value is False:
        return (f"{sp.key} is not enabled", "the overlap is for sequence-parallel communication", sp,
                WITHOUT_SP)
    if sp is not None and tp is not None and tp.known and tp.value == 1:
        return (f"sequence parallelism is turned off with {tp.describe()} of 1",
                "NeMo turns sequence parallelism off with tensor parallelism of 1, and the overlap is for "
                "sequence-parallel communication", tp, WITHOUT_SP)
    return None


RULE = Rule(
    code="BL244",
    name="nemo-tp-overlap-ignored",
    severity="warning",
    summary="NeMo: ub_tp_comm_overlap without sequence parallelism (or with FSDP) is turned off",
    check=check,
    subject=NemoSettings,
    premises=(WITHOUT_SP, WITH_FSDP),
    doc=__doc__,
    examples=(
        Example("overlap_no_sp.yaml", """\
trainer:
  devices: 8
model:
  micro_batch_size: 1
  global_batch_size: 64
  tensor_model_parallel_size: 4
  sequence_parallel: false
  ub_tp_comm_overlap: true
""", flagged=(8,),
                message="model.ub_tp_comm_overlap is true with model.tensor_model_parallel_size (4) but "
                        "model.sequence_parallel is not enabled",
                fix="enable model.sequence_parallel with tensor_model_parallel_size > 1 (and no FSDP), or drop "
                    "ub_tp_comm_overlap",
                files=(("requirements.txt", "nemo_toolkit==1.19.0\n"),),
                severity="warning"),
        Example("overlap_sp.yaml", """\
trainer:
  devices: 8
model:
  micro_batch_size: 1
  global_batch_size: 64
  tensor_model_parallel_size: 4
  sequence_parallel: true
  ub_tp_comm_overlap: true
"""),
        Example("overlap_sp_tp1.yaml", """\
trainer:
  devices: 8
model:
  micro_batch_size: 1
  global_batch_size: 64
  tensor_model_parallel_size: 1
  sequence_parallel: true
  ub_tp_comm_overlap: true
""", flagged=(8,),
                message="model.ub_tp_comm_overlap is true but sequence parallelism is turned off with "
                        "model.tensor_model_parallel_size (1) of 1",
                fix="enable model.sequence_parallel with tensor_model_parallel_size > 1 (and no FSDP), or drop "
                    "ub_tp_comm_overlap",
                files=(("requirements.txt", "nemo_toolkit==2.5.0\n"),),
                severity="warning"),
        Example("overlap_fsdp.yaml", """\
trainer:
  devices: 8
model:
  micro_batch_size: 1
  global_batch_size: 64
  tensor_model_parallel_size: 4
  sequence_parallel: true
  ub_tp_comm_overlap: true
  fsdp: true
""", flagged=(8,),
                message="model.ub_tp_comm_overlap is true with model.tensor_model_parallel_size (4) but model.fsdp "
                        "is true",
                fix="enable model.sequence_parallel with tensor_model_parallel_size > 1 (and no FSDP), or drop "
                    "ub_tp_comm_overlap",
                files=(("requirements.txt", "nemo_toolkit==1.23.0\n"),),
                severity="warning"),
        # No NeMo release pinned: 1.18 has no overlap, 1.22 no FSDP, and 2.5.1 no NeMo 1 Megatron models.
        Example("overlap_no_sp_unpinned.yaml", """\
trainer:
  devices: 8
model:
  micro_batch_size: 1
  global_batch_size: 64
  tensor_model_parallel_size: 4
  sequence_parallel: false
  ub_tp_comm_overlap: true
""", flagged=(8,),
                message="model.ub_tp_comm_overlap is true with model.tensor_model_parallel_size (4) but "
                        "model.sequence_parallel is not enabled",
                fix="enable model.sequence_parallel with tensor_model_parallel_size > 1 (and no FSDP), or drop "
                    "ub_tp_comm_overlap",
                severity="info"),  # NeMo before the check can run it too
        Example("overlap_no_sp_1_18.yaml", """\
trainer:
  devices: 8
model:
  micro_batch_size: 1
  global_batch_size: 64
  tensor_model_parallel_size: 4
  sequence_parallel: false
  ub_tp_comm_overlap: true
""", files=(("requirements.txt", "nemo_toolkit==1.18.1\n"),)),
        Example("overlap_fsdp_1_22.yaml", """\
trainer:
  devices: 8
model:
  micro_batch_size: 1
  global_batch_size: 64
  tensor_model_parallel_size: 4
  sequence_parallel: true
  ub_tp_comm_overlap: true
  fsdp: true
""", files=(("requirements.txt", "nemo_toolkit==1.22.0\n"),)),
        Example("overlap_no_sp_2_5_1.yaml", """\
trainer:
  devices: 8
model:
  micro_batch_size: 1
  global_batch_size: 64
  tensor_model_parallel_size: 4
  sequence_parallel: false
  ub_tp_comm_overlap: true
""", files=(("requirements.txt", "nemo_toolkit==2.5.1\n"),)),
    ),
)
