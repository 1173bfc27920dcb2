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

from batchlint.document import Scalar, Sequence
from batchlint.frameworks.torchtitan import model_name, parallelism_value
from batchlint.rule import Example, Finding, Related, Rule

_ASYNC_TP_MODELS = {
    "llama3", "llama3_ft", "llama4", "deepseek_v3", "transformers_modeling_backend",
    "simple_fsdp.llama3", "simple_fsdp.deepseek_v3",
}


def check(plan):
    tp = plan.parallel["tp"]
    enabled, node = parallelism_value(plan.document, "enable_async_tensor_parallel", False)
    if enabled is not True or not (tp.known and tp.value > 1) or model_name(plan.document) not in _ASYNC_TP_MODELS:
        return
    compiled = _model_compiled(plan.document)
    if compiled is not False:
        return
    related = (Related(f"{tp.key} = {tp.value}", tp.span),) if tp.span else ()
    compile_node = plan.document.get("compile")
    if compile_node is not None:
        related += (Related("[compile] does not compile the model", compile_node.span),)
    yield Finding(
        span=node.span,
        message=f"async tensor parallelism with {tp.describe()} needs torch.compile of the model, which [compile] does not enable: the job refuses to start",
        fix='set [compile] enable = true with "model" in components, or enable_async_tensor_parallel = false',
        related=related,
    )


def _model_compiled(doc):
    """True/False when `[compile]` does/does not compile the model; None when unknown."""
    enable = doc.get("compile", "enable")
    components = doc.get("compile", "components")
    if enable is not None and not (isinstance(enable, Scalar) and isinstance(enable.value, bool)):
        return None
    if enable is None or enable.value is False:
        return False  # the default is enable = false
    if components is None:
        return True  # the default is ["model", "loss"]
    if not isinstance(components, Sequence) or not all(isinstance(c, Scalar) for c in components.items):
        return None
    return "model" in [c.value for c in components.items]


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
    frameworks=("torchtitan",),
    doc=__doc__,
    examples=(
        Example("titan_async_tp_eager.toml", _TITAN.format(enable="false"), flagged=(7,)),
        Example("titan_async_tp_compiled.toml", _TITAN.format(enable="true")),
    ),
)
