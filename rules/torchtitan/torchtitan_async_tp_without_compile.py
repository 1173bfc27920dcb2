"""
## What it does
Flags `[parallelism] enable_async_tensor_parallel = true` with tensor
parallelism (`tensor_parallel_degree` > 1) while `[compile]` does not compile
the model (`enable = true` and "model" in `components`), for the models that
apply async TP (llama3, llama4, deepseek_v3 and their experiments). A config
that writes `[training] compile`, the key of 0.1.0 and main before it, is
judged by it: `compile = true` there is what those releases compile with (0.2.0
on refuse the key itself: BL510).

## Why is this bad?
Async tensor parallelism is a torch.compile pass; TorchTitan raises "Async TP
requires 'model' in --compile.components and --compile.enable" while it
parallelises the model, after the job has its GPUs.

## Example
```toml
[parallelism]
tensor_parallel_degree = 8
enable_async_tensor_parallel = true

[compile]
enable = false
```

## Use instead
```toml
[parallelism]
tensor_parallel_degree = 8
enable_async_tensor_parallel = true

[compile]
enable = true
components = ["model", "loss"]
```

## Source
torchtitan/distributed/tensor_parallel.py:16-23 @ v0.2.2 (`maybe_enable_async_tp`),
called when tp > 1 from models/llama3/infra/parallelize.py:96,
models/llama4/infra/parallelize.py:111, models/deepseek_v3/infra/parallelize.py:97,
experiments/transformers_modeling_backend/infra/parallelize.py:74 and
experiments/simple_fsdp; config defaults in config/job_config.py (`Compile`).
Before 0.2.0 the check read `[training] compile` (models/llama3/infra/
parallelize.py:49-54 @ v0.1.0, "Async TP requires --training.compile"); a
[compile] section is unknown there (dropped), so it refuses the same configs.
See "When it holds".
"""

from collections.abc import Iterator

from batchlint.frameworks.torchtitan import TitanSettings, model_premises, model_window
from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule

PREMISES = model_premises({
    "0.0.2": "torchtitan/models/llama/parallelize_llama.py:53-58 @ 785c34c99 (the first to read [parallelism]; "
             "[training] compile; llama4 from e4e48349c)",
    "0.1.0": "torchtitan/models/llama3/infra/parallelize.py:49-54, experiments/llama4/infra/parallelize.py:41-46 "
             "([training] compile)",
    "0.2.0": "torchtitan/distributed/tensor_parallel.py:15-20 ([compile]), from models/deepseek_v3/infra/parallelize.py:89 "
             "and experiments/simple_fsdp/{llama3,deepseek_v3}/parallelize.py:77,69",
    "0.2.1": "torchtitan/distributed/tensor_parallel.py:16-23, from "
             "experiments/transformers_modeling_backend/infra/parallelize.py:70",
    "0.2.2": "torchtitan/distributed/tensor_parallel.py:16-23",
})


def check(plan: TrainingPlan, titan: TitanSettings) -> Iterator[Finding]:
    tp = plan.parallel["tp"]
    enabled, compiled, degree = titan.async_tp, titan.compile_model, tp.number
    if enabled.value is not True or degree is None or degree <= 1 or not titan.model_support.async_tp:
        return
    if compiled.value is not False:
        return
    related: tuple[Related, ...] = (Related(f"{tp.key} = {tp.value}", tp.span),) if tp.span else ()
    if compiled.span is not None:
        related += (Related(f"{compiled.key} does not compile the model", compiled.span),)
    old = compiled.key == "[training] compile"
    yield Finding(
        premise=model_window(titan.model_support),
        span=enabled.span,
        message=f"async tensor parallelism (tp = {degree}) needs the model compiled; {compiled.key} does not compile it",
        notes=(f"tp comes from {tp.describe()}.",
               "Async TP is a torch.compile pass: TorchTitan refuses to start while it parallelises the model."),
        fix=("set [training] compile = true (0.1.0's key; [compile] enable from 0.2.0)" if old else
             'set [compile] enable = true with "model" in components') + ", or enable_async_tensor_parallel = false",
        related=related,
    )


RULE = Rule(
    code="BL511",
    name="torchtitan-async-tp-without-compile",
    severity="error",
    summary="TorchTitan: async tensor parallelism without torch.compile of the model",
    check=check,
    subject=TitanSettings,
    needs=("parallel.tp",),
    premises=PREMISES,
    doc=__doc__,
    examples=(
        Example("titan_async_tp_eager.toml", """\
[model]
name = "llama3"
flavor = "405B"

[parallelism]
tensor_parallel_degree = 8  # 8-way TP
enable_async_tensor_parallel = true

[compile]
enable=false
components = ["model", "loss"]
""", flagged=(7,), severity="error",
                message="async tensor parallelism (tp = 8) needs the model compiled; [compile] does not compile it",
                fix='set [compile] enable = true with "model" in components, or enable_async_tensor_parallel = false'),
        Example("titan_async_tp_compiled.toml", """\
[model]
name = "llama3"
flavor = "405B"

[parallelism]
tensor_parallel_degree = 8  # 8-way TP
enable_async_tensor_parallel = true

[compile]
enable=true
components = ["model", "loss"]
"""),
        # 0.1.0's layout (its own llama3_405b.toml): [training] compile = true compiles the model there.
        Example("titan_async_tp_010_compiled.toml", """\
[model]
name = "llama3"
flavor = "405B"

[parallelism]
tensor_parallel_degree = 8  # 8-way TP
enable_async_tensor_parallel = true

[training]
compile = true
"""),
        Example("titan_async_tp_010_eager.toml", """\
[model]
name = "llama3"
flavor = "405B"

[parallelism]
tensor_parallel_degree = 8  # 8-way TP
enable_async_tensor_parallel = true

[training]
compile = false
""", flagged=(7,), severity="error",
                message="async tensor parallelism (tp = 8) needs the model compiled; [training] compile does not compile "
                        "it",
                fix="set [training] compile = true (0.1.0's key; [compile] enable from 0.2.0), or "
                    "enable_async_tensor_parallel = false"),
    ),
)
