"""
## What it does
With pipeline parallelism and `pp_engine: 1f1b`, checks that each step has at
least `pp - 1` microbatches: nanotron feeds the pipeline
`batch_accumulation_per_replica` microbatches per step, and its 1F1B engine
runs `pp - 1 - rank` warm-up forwards before the first backward. The `afab`
engine (all forwards, then all backwards; the default when `pp_engine` is not
written) accepts any count and is not flagged.

## Why is this bad?
`OneForwardOneBackwardPipelineEngine.train_batch_iter` asserts "Number of
microbatches (1) must be at least PP_SIZE-1=3 when using the
OneForwardOneBackwardPipelineEngine": the job dies at its first training step,
after every GPU has built its stage of the model.

## Example
```yaml
parallelism:
  dp: 2
  pp: 4
  tp: 1
  pp_engine: 1f1b
tokens:
  micro_batch_size: 4
  batch_accumulation_per_replica: 1   # 1 microbatch for 4 stages
```

## Use instead
```yaml
tokens:
  micro_batch_size: 4
  batch_accumulation_per_replica: 4   # at least pp - 1 = 3
```
or `pp_engine: afab`.

## Source
nanotron v0.4 (PyPI 0.4): src/nanotron/parallel/pipeline_parallel/engine.py:236-238
(the assert, the same in every tag v0.1-v0.5 and on main), trainer.py:220 and 325 (the
engine's microbatches are tokens.batch_accumulation_per_replica), config/utils_config.py:95-107
("afab" / "1f1b"), config/parallelism_config.py:39-40 (afab when pp_engine is not given).
"""

from collections.abc import Iterator

from batchlint.frameworks.nanotron import NanotronSettings
from batchlint.frameworks.releases import NANOTRON
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

ASSERTED = Premise(
    NANOTRON,
    source="v0.1 (0.1.0) src/nanotron/parallel/pipeline_parallel/engine.py:236-238, trainer.py:209,319; "
           "v0.4 (0.4) engine.py:236-238, trainer.py:220,325")


def check(plan: TrainingPlan, nanotron: NanotronSettings) -> Iterator[Finding]:
    pp, accumulation, engine = plan.parallel["pp"], plan.grad_accum, nanotron.pp_engine
    stages, steps = pp.count, accumulation.count if accumulation is not None else None
    if engine.value != "1f1b" or stages is None or steps is None or accumulation is None or accumulation.span is None:
        return  # afab, or a value not known; an accumulation below 1 is BL104's finding
    needed = stages - 1
    if steps >= needed:
        return
    yield Finding(
        span=accumulation.span,
        message=f"{steps} microbatch{'es' if steps != 1 else ''} per step; 1F1B with pp = {stages} needs {needed}",
        notes=(f"{accumulation.key} sets the microbatches of each step; the 1F1B engine asserts at least "
               f"{pp.key} - 1 = {needed}, and the job dies at its first training step",),
        fix=f"set {accumulation.key} to {needed} or more (the global batch grows with it), or set {engine.key} to afab",
        related=tuple(Related(f"{fact.key} = {fact.value}", fact.span) for fact in (pp, engine) if fact.span),
    )


RULE = Rule(
    code="BL113",
    name="nanotron-pp-too-few-microbatches",
    severity="error",
    summary="nanotron: fewer than pp - 1 microbatches per step with the 1F1B pipeline engine",
    check=check,
    subject=NanotronSettings,
    needs=("parallel.pp", "grad_accum"),
    premises=(ASSERTED,),
    doc=__doc__,
    examples=(
        Example("nanotron_1f1b_1_of_4.yaml", """\
general:
  project: pipeline
parallelism:
  dp: 2
  pp: 4
  tp: 1
  pp_engine: 1f1b
tokens:
  sequence_length: 2048
  micro_batch_size: 4
  batch_accumulation_per_replica: 1
  train_steps: 100
""", flagged=(11,),
                message="1 microbatch per step; 1F1B with pp = 4 needs 3",
                fix="set tokens.batch_accumulation_per_replica to 3 or more (the global batch grows with it), "
                    "or set parallelism.pp_engine to afab"),
        Example("nanotron_1f1b_3_of_4.yaml", """\
general:
  project: pipeline
parallelism:
  dp: 2
  pp: 4
  tp: 1
  pp_engine: 1f1b
tokens:
  sequence_length: 2048
  micro_batch_size: 4
  batch_accumulation_per_replica: 3
  train_steps: 100
"""),
        # AllForwardAllBackward takes any count: the default engine too.
        Example("nanotron_afab_1_of_4.yaml", """\
general:
  project: pipeline
parallelism:
  dp: 2
  pp: 4
  tp: 1
  pp_engine: afab
tokens:
  sequence_length: 2048
  micro_batch_size: 4
  batch_accumulation_per_replica: 1
  train_steps: 100
"""),
        Example("nanotron_default_1_of_4.yaml", """\
general:
  project: pipeline
parallelism:
  dp: 2
  pp: 4
  tp: 1
tokens:
  sequence_length: 2048
  micro_batch_size: 4
  batch_accumulation_per_replica: 1
  train_steps: 100
"""),
        # Two stages need one warm-up forward: any accumulation will do.
        Example("nanotron_1f1b_1_of_2.yaml", """\
general:
  project: pipeline
parallelism:
  dp: 2
  pp: 2
  tp: 1
  pp_engine: 1f1b
tokens:
  sequence_length: 2048
  micro_batch_size: 4
  batch_accumulation_per_replica: 1
  train_steps: 100
"""),
    ),
)
