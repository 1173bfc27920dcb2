"""
## What it does
Flags an XTuner v1 `DataloaderConfig` that asks for length grouping
(`group_by_length=True`) while turning packing off (`pack_level="none"`).

## Why is this bad?
In XTuner v1 length grouping works on packed samples: the
`LengthGroupedSampler` groups packs, and the config refuses the combination
when it is built, so the launch fails before any GPU work. (This is the
opposite of XTuner v0.1, where packing makes grouping pointless: BL301.)
Leaving `group_by_length` out with `pack_level="none"` turns it off.

## Example
```python
dataloader_config = DataloaderConfig(dataset_config_list=datasets, pack_level="none", group_by_length=True)
```

## Use instead
```python
dataloader_config = DataloaderConfig(dataset_config_list=datasets, pack_level="none")
```

## Source
xtuner v1.0.1: xtuner/v1/datasets/config.py:367-376
(`DataloaderConfig._infer_group_by_length`: "group_by_length must be False
when pack_level is none"); the same in v1.0.0rc0 at 302-311. xtuner.v1 is in
no PyPI release: those two tags are its releases.
"""

from collections.abc import Iterator

from batchlint.frameworks.releases import XTUNER_V1
from batchlint.frameworks.xtuner_v1 import XTunerV1Settings
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

REFUSED = Premise(
    XTUNER_V1,
    source="v1.0.0rc0 xtuner/v1/datasets/config.py:302-311; v1.0.1 xtuner/v1/datasets/config.py:367-376")


def check(plan: TrainingPlan, xtuner: XTunerV1Settings) -> Iterator[Finding]:
    for config in xtuner.dataloader_configs:
        level, grouping = config.pack_level, config.group_by_length
        if level is None or level.value != "none" or grouping is None or grouping.value is not True:
            continue
        if grouping.span is None or level.span is None:
            continue
        yield Finding(
            span=grouping.span,
            message=f'group_by_length=True with pack_level="none" (line {level.span.line}): v1 groups packed samples only',
            notes=("XTuner v1 groups packed samples only, and DataloaderConfig refuses the combination when the "
                   "config loads",),
            fix='remove group_by_length (it then defaults to False), or choose a pack_level such as "soft"',
            related=(Related('pack_level="none" here', level.span),),
        )


RULE = Rule(
    code="BL335",
    name="xtuner-v1-grouping-without-packing",
    severity="error",
    summary="XTuner v1 group_by_length with pack_level none",
    check=check,
    subject=XTunerV1Settings,
    premises=(REFUSED,),
    doc=__doc__,
    examples=(
        Example("v1_grouped_unpacked.py", """\
from xtuner.v1.config import AdamWConfig, LRConfig
from xtuner.v1.datasets.config import DataloaderConfig, DatasetConfig
from xtuner.v1.datasets import OpenaiTokenizeFunctionConfig
from xtuner.v1.model import Qwen3Dense8BConfig
from xtuner.v1.train import TrainerConfig

dataset_config = [
    {
        "dataset": DatasetConfig(name="alpaca", anno_path="data/alpaca.jsonl"),
        "tokenize_fn": OpenaiTokenizeFunctionConfig(chat_template="qwen3", max_length=8192),
    }
]
dataloader_config = DataloaderConfig(
    dataset_config_list=dataset_config,
    pack_level="none",
    group_by_length=True,
)
trainer = TrainerConfig(
    model_cfg=Qwen3Dense8BConfig(),
    optim_cfg=AdamWConfig(lr=1e-5),
    lr_cfg=LRConfig(lr_type="cosine"),
    dataloader_cfg=dataloader_config,
    global_batch_size=32,
    total_epoch=1,
)
""",
                flagged=(16,),
                message='group_by_length=True with pack_level="none" (line 15): v1 groups packed samples only',
                fix='remove group_by_length (it then defaults to False), or choose a pack_level such as "soft"'),
        Example("v1_unpacked.py", """\
from xtuner.v1.config import AdamWConfig, LRConfig
from xtuner.v1.datasets.config import DataloaderConfig, DatasetConfig
from xtuner.v1.datasets import OpenaiTokenizeFunctionConfig
from xtuner.v1.model import Qwen3Dense8BConfig
from xtuner.v1.train import TrainerConfig

dataset_config = [
    {
        "dataset": DatasetConfig(name="alpaca", anno_path="data/alpaca.jsonl"),
        "tokenize_fn": OpenaiTokenizeFunctionConfig(chat_template="qwen3", max_length=8192),
    }
]
dataloader_config = DataloaderConfig(
    dataset_config_list=dataset_config,
    pack_level="none",
    num_workers=4,
)
trainer = TrainerConfig(
    model_cfg=Qwen3Dense8BConfig(),
    optim_cfg=AdamWConfig(lr=1e-5),
    lr_cfg=LRConfig(lr_type="cosine"),
    dataloader_cfg=dataloader_config,
    global_batch_size=32,
    total_epoch=1,
)
"""),
        Example("v1_grouped_soft.py", """\
from xtuner.v1.config import AdamWConfig, LRConfig
from xtuner.v1.datasets.config import DataloaderConfig, DatasetConfig
from xtuner.v1.datasets import OpenaiTokenizeFunctionConfig
from xtuner.v1.model import Qwen3Dense8BConfig
from xtuner.v1.train import TrainerConfig

dataset_config = [
    {
        "dataset": DatasetConfig(name="alpaca", anno_path="data/alpaca.jsonl"),
        "tokenize_fn": OpenaiTokenizeFunctionConfig(chat_template="qwen3", max_length=8192),
    }
]
dataloader_config = DataloaderConfig(
    dataset_config_list=dataset_config,
    pack_level="soft",
    group_by_length=True,
)
trainer = TrainerConfig(
    model_cfg=Qwen3Dense8BConfig(),
    optim_cfg=AdamWConfig(lr=1e-5),
    lr_cfg=LRConfig(lr_type="cosine"),
    dataloader_cfg=dataloader_config,
    global_batch_size=32,
    total_epoch=1,
)
"""),
    ),
)
