"""
## What it does
Flags an XTuner config with `sequence_parallel_size` > 1 or
`use_varlen_attn = True` whose model sets `llm.attn_implementation` to
anything but `"flash_attention_2"` (leaving it out is fine).

## Why is this bad?
XTuner's sequence parallelism and variable-length attention are implemented on
FlashAttention-2. `xtuner train` checks the model's attention implementation
before building anything and refuses `"eager"` or `"sdpa"`.

## Example
```python
sequence_parallel_size = 4
model = dict(type=SupervisedFinetune, llm=dict(type=AutoModelForCausalLM.from_pretrained, attn_implementation="sdpa"))
```

## Use instead
```python
sequence_parallel_size = 4
model = dict(type=SupervisedFinetune, llm=dict(type=AutoModelForCausalLM.from_pretrained, attn_implementation="flash_attention_2"))
```

## Source
xtuner 0.2.0: xtuner/tools/train.py:106-117 (sequence parallel) and 119-130
(varlen attention) in `check_cfg`. Whether flash_attn is installed
(`SUPPORT_FLASH2`, checked in the same lines) is not in the config. Both
checks came in v0.1.19 (xtuner/tools/train.py:104-124); v0.1.18 and earlier
do not look at `attn_implementation`.
"""

from collections.abc import Iterator

from batchlint.frameworks.releases import XTUNER
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

FLASH = "flash_attention_2"

ATTENTION_CHECKED = Premise(
    XTUNER, since="0.1.19",
    source="v0.1.18 xtuner/tools/train.py:104-106 (flash_attn required, attn_implementation not read); v0.1.19 "
           "xtuner/tools/train.py:104-124 (first); v0.2.0 xtuner/tools/train.py:106-130 (still)")


def check(plan: TrainingPlan) -> Iterator[Finding]:
    attn = plan.attention
    if not isinstance(attn.value, str) or attn.value == FLASH:
        return
    needs = []
    sp = plan.parallel.get("sp")
    if sp is not None and sp.known and sp.value > 1:
        needs.append(sp)
    varlen = next((fact for where, fact in plan.settings.varlen if where == "the config"), None)
    if varlen is not None and varlen.value:
        needs.append(varlen)
    if not needs:
        return
    reasons = " and ".join(f"{fact.key} = {fact.value}" for fact in needs)
    yield Finding(
        span=attn.span,
        message=(
            f"attn_implementation is {attn.value!r}, but with {reasons} (line {needs[0].span.line}) XTuner needs "
            f"FlashAttention-2: xtuner train refuses the config at start-up"
        ),
        fix=f'set attn_implementation="{FLASH}", or remove it',
        related=tuple(Related(f"{fact.key} = {fact.value} here", fact.span) for fact in needs if fact.span),
    )


_CONFIG = """\
from transformers import AutoModelForCausalLM
from xtuner.model import SupervisedFinetune

sequence_parallel_size = {sp}
batch_size = 1  # per_device
accumulative_counts = 16
accumulative_counts *= sequence_parallel_size

model = dict(
    type=SupervisedFinetune,
    llm=dict(type=AutoModelForCausalLM.from_pretrained, attn_implementation="{attn}"),
)
train_dataloader = dict(batch_size=batch_size)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""

RULE = Rule(
    code="BL530",
    name="xtuner-sp-attention",
    severity="error",
    summary="XTuner sequence parallelism or varlen attention without FlashAttention-2",
    check=check,
    needs=("attention", "settings"),
    frameworks=("xtuner",),
    premises=(ATTENTION_CHECKED,),
    doc=__doc__,
    examples=(
        # No XTuner release pinned: those before 0.1.19 do not check it.
        Example("sp4_sdpa.py", _CONFIG.format(sp=4, attn="sdpa"), flagged=(11,), severity="info"),
        Example("sp4_sdpa_pinned.py", _CONFIG.format(sp=4, attn="sdpa"), flagged=(11,),
                files=(("requirements.txt", "xtuner==0.1.19\n"),), severity="error"),
        Example("sp4_sdpa_pinned_old.py", _CONFIG.format(sp=4, attn="sdpa"),
                files=(("requirements.txt", "xtuner==0.1.18\n"),)),
        Example("sp4_flash.py", _CONFIG.format(sp=4, attn=FLASH)),
        Example("sp1_sdpa.py", _CONFIG.format(sp=1, attn="sdpa")),
        Example(
            "varlen_eager.py",
            _CONFIG.format(sp=1, attn="eager").replace("batch_size = 1", "use_varlen_attn = True\nbatch_size = 1"),
            flagged=(12,), severity="info",
        ),
    ),
)
