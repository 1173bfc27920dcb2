"""
## What it does
Flags a NeMo 1 Megatron config with `model.sequence_parallel: true` and a
tensor-parallel size of 1 (`model.tensor_model_parallel_size`, default 1).

## Why is this bad?
Megatron sequence parallelism splits the activations that tensor parallelism
leaves replicated across the tensor-parallel ranks; with one rank there is
nothing to split. NeMo only logs "Sequence parallel should only be used with
tensor parallel size > 1" at info level and turns it off, so the memory
saving the config promises is not there - and `ub_tp_comm_overlap`, which
needs it, goes off with it.

## Example
```yaml
model:
  tensor_model_parallel_size: 1
  sequence_parallel: true
```

## Use instead
```yaml
model:
  tensor_model_parallel_size: 2
  sequence_parallel: true
```
or `sequence_parallel: false`.

## Source
NeMo @ 8cfedd7: nemo/collections/nlp/models/language_modeling/
megatron_base_model.py:1019-1025 (`_validate_and_override_config`); NeMo 2
does the same with a warning (nemo/collections/llm/api.py:1363-1367).
"""

from batchlint.frameworks.facts import flag
from batchlint.rule import Example, Finding, Related, Rule


def check(plan):
    sp = flag(plan.document.get("model", "sequence_parallel"), "model.sequence_parallel")
    tp = plan.parallel.get("tp")
    if sp is None or sp.value is not True or tp is None or not tp.known or tp.value != 1:
        return
    yield Finding(
        span=sp.span,
        message=(
            f"model.sequence_parallel is true but {tp.describe()} is 1: NeMo silently turns sequence "
            f"parallelism off, since it splits activations across tensor-parallel ranks"
        ),
        fix=f"set model.sequence_parallel: false, or raise {tp.key} above 1",
        related=(Related(f"{tp.key} = 1", tp.span),) if tp.span else (),
    )


_CONFIG = """\
trainer:
  devices: 8
  num_nodes: 1
model:
  micro_batch_size: 1
  global_batch_size: 64
  tensor_model_parallel_size: {tp}
  sequence_parallel: {sp}
"""

RULE = Rule(
    code="BL241",
    name="nemo-sequence-parallel-without-tp",
    severity="warning",
    summary="NeMo: sequence_parallel with tensor_model_parallel_size 1 is silently off",
    check=check,
    frameworks=("nemo",),
    doc=__doc__,
    examples=(
        Example("sp_tp1.yaml", _CONFIG.format(tp=1, sp="true"), flagged=(8,)),
        Example("sp_tp2.yaml", _CONFIG.format(tp=2, sp="true")),
        Example("no_sp_tp1.yaml", _CONFIG.format(tp=1, sp="false")),
        # An interpolated tp is unknown: nothing to say.
        Example("sp_tp_interp.yaml", _CONFIG.format(tp="${oc.env:TP}", sp="true")),
    ),
)
