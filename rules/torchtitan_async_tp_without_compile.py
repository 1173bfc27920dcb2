"""
## What it does
Flags `[parallelism] enable_async_tensor_parallel = true` with tensor
parallelism (`tensor_parallel_degree` > 1) while `[compile]` does not compile
the model (`enable = true` and "model" in `components`), for the models that
apply async TP (llama3, llama4, deepseek_v3 and their experiments).

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
"""

from collections.abc import Iterator

from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    titan, tp = plan.settings, plan.parallel["tp"]
    enabled, compiled = titan.async_tp, titan.compile_model
    if enabled.value is not True or not (tp.known and tp.value > 1) or not titan.model_support.async_tp:
        return
    if compiled.value is not False:
        return
    related: tuple[Related, ...] = (Related(f"{tp.key} = {tp.value}", tp.span),) if tp.span else ()
    if compiled.span is not None:
        related += (Related("[compile] does not compile the model", compiled.span),)
    yield Finding(
        span=enabled.span,
        message=f"async tensor parallelism with {tp.describe()} needs torch.compile of the model,"
                " which [compile] does not enable: the job refuses to start",
        fix='set [compile] enable = true with "model" in components, or enable_async_tensor_parallel = false',
        related=related,
    )


_TITAN = """\
[model]
name = "llama3"
flavor = "405B"

[parallelism]
tensor_parallel_degree = 8  # 8-way TP
enable_async_tensor_parallel = true

[compile]
enable={enable}
components = ["model", "loss"]
"""

RULE = Rule(
    code="BL511",
    name="torchtitan-async-tp-without-compile",
    severity="error",
    summary="TorchTitan: async tensor parallelism without torch.compile of the model",
    check=check,
    needs=("parallel.tp", "settings.model_support", "settings.async_tp", "settings.compile_model"),
    doc=__doc__,
    examples=(
        Example("titan_async_tp_eager.toml", _TITAN.format(enable="false"), flagged=(7,)),
        Example("titan_async_tp_compiled.toml", _TITAN.format(enable="true")),
    ),
)
