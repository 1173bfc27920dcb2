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

from batchlint.frameworks.releases import NANOTRON
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

ASSERTED = Premise(
    NANOTRON,
    source="v0.1 (0.1.0) src/nanotron/parallel/pipeline_parallel/engine.py:236-238, trainer.py:209,319; "
           "v0.4 (0.4) engine.py:236-238, trainer.py:220,325")


def check(plan: TrainingPlan) -> Iterator[Finding]:
    pp, accumulation, engine = plan.parallel["pp"], plan.grad_accum, plan.settings.pp_engine
    if engine.value != "1f1b" or not (pp.known and accumulation.known) or accumulation.value < 1:
        return  # afab, or a value not known; an accumulation below 1 is BL104's finding
    needed = pp.value - 1
    if accumulation.value >= needed or accumulation.span is None:
        return
    related = tuple(Related(f"{fact.key} = {fact.value}", fact.span) for fact in (pp, engine) if fact.span)
    yield Finding(
        span=accumulation.span,
        message=f"{accumulation.describe()} gives {accumulation.value} microbatch{'es' if accumulation.value != 1 else ''}"
        f" per step, but the 1F1B pipeline engine asserts at least {pp.key} - 1 = {needed}: the job dies at its"
        " first training step",
        fix=f"set {accumulation.key} to {needed} or more (the global batch grows with it), or set {engine.key} to afab",
        related=related,
    )


_NANOTRON = """\
general:
  project: pipeline
parallelism:
  dp: 2
  pp: {pp}
  tp: 1
{engine}tokens:
  sequence_length: 2048
  micro_batch_size: 4
  batch_accumulation_per_replica: {accumulation}
  train_steps: 100
"""

RULE = Rule(
    code="BL113",
    name="nanotron-pp-too-few-microbatches",
    severity="error",
    summary="nanotron: fewer than pp - 1 microbatches per step with the 1F1B pipeline engine",
    check=check,
    needs=("parallel.pp", "grad_accum", "settings.pp_engine"),
    premises=(ASSERTED,),
    doc=__doc__,
    examples=(
        Example("nanotron_1f1b_1_of_4.yaml", _NANOTRON.format(pp=4, engine="  pp_engine: 1f1b\n", accumulation=1),
                flagged=(11,)),
        Example("nanotron_1f1b_3_of_4.yaml", _NANOTRON.format(pp=4, engine="  pp_engine: 1f1b\n", accumulation=3)),
        # AllForwardAllBackward takes any count: the default engine too.
        Example("nanotron_afab_1_of_4.yaml", _NANOTRON.format(pp=4, engine="  pp_engine: afab\n", accumulation=1)),
        Example("nanotron_default_1_of_4.yaml", _NANOTRON.format(pp=4, engine="", accumulation=1)),
        # Two stages need one warm-up forward: any accumulation will do.
        Example("nanotron_1f1b_1_of_2.yaml", _NANOTRON.format(pp=2, engine="  pp_engine: 1f1b\n", accumulation=1)),
    ),
)
