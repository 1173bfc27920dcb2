"""SkyPilot task files (`sky launch task.yaml`): a job description, not a training config. Its
`run: |` block is the launch script, run once on each of `num_nodes` nodes with the task's
variables; the configs it launches are checked under the W its launch lines give.

Read as SkyPilot reads a task (sky/task.py `Task.from_yaml_config`, sky/utils/schemas.py
`get_task_schema`, docs/source/running-jobs/environment-variables.rst):

- a task has `run` (a shell script) beside `resources`, `num_nodes`, `envs`, `setup`,
  `file_mounts` or `workdir`; a config with a `run` key and none of these is no task;
- `envs` are exported to the script, each value as `str()` of what YAML loads (a null one must
  be given with `--env`: unknown); `--env` may override any, so these are the defaults the file
  states, read as written; `secrets` are set at launch: unknown;
- SkyPilot sets SKYPILOT_NUM_NODES (`num_nodes`, default 1), SKYPILOT_NUM_GPUS_PER_NODE (the
  count of `resources.accelerators`, `A100:8`, `{A100: 8}`, `A100` = 1; 0 without accelerators),
  SKYPILOT_NODE_RANK and SKYPILOT_NODE_IPS (per node: unknown). A choice of accelerators (a list,
  a set, `any_of`, `ordered`) gives one count only when every choice has the same; a fraction
  (`A100:0.5`) is rounded up by SkyPilot, but then the GPUs are shared: unknown here;
- `workdir` (a local folder) is where the script runs; `file_mounts` maps a path on the node to
  a local one (`/configs: ./configs`), so `--config /configs/x.yaml` is the project's file.
"""

from __future__ import annotations

from ..document import Mapping, Node, Scalar, Sequence, Span
from ..lazy_pattern import LazyPattern
from ..sources.shell import UNKNOWN, Word
from .facts import whole_number
from .spec import Framework, TaskFile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

NAME = "skypilot"
FORMATS = ("yaml",)
MARKERS = (b"run:",)

# The task keys (schemas.py get_task_schema) that tell a task from a config with a `run` key.
_TASK_KEYS = ("resources", "num_nodes", "envs", "setup", "file_mounts", "workdir", "secrets")
_NODE_VARIABLES = ("SKYPILOT_NODE_RANK", "SKYPILOT_NODE_IPS")  # set on each node: not known here
# `A100:8`, `tpu-v3-8`, `A100-80GB:1`: an accelerator and its count (resources.py _set_accelerators).
_ACCELERATOR = LazyPattern(r"([^:\s{}]+)(?::(\S+))?")
_MAX_CHOICES = 1000


def plan(document, outside):
    """A task file is no config: the engine reads it as a launch (FRAMEWORK.task)."""
    return None


def environment(root: Mapping) -> dict:
    """The variables the `run` script starts with: the task's envs and secrets, and SkyPilot's own."""
    found: dict = {}
    envs = root.get("envs")
    if isinstance(envs, Mapping):
        for name, node in envs.items.items():
            found[str(name)] = _env_value(node)
    secrets = root.get("secrets")
    if isinstance(secrets, Mapping):
        for name, node in secrets.items.items():
            found[str(name)] = Word(UNKNOWN, node.span, "")
    script = root.key_spans.get("run", Span.point(1))
    nodes = root.get("num_nodes")
    if nodes is None:
        found["SKYPILOT_NUM_NODES"] = Word("1", script, "")  # Task(num_nodes=None): one node
    else:
        count = whole_number(nodes.value) if isinstance(nodes, Scalar) and type(nodes.value) is int else None
        found["SKYPILOT_NUM_NODES"] = Word(str(count) if count else UNKNOWN, nodes.span, "")
    found["SKYPILOT_NUM_GPUS_PER_NODE"] = gpus_per_node(root.get("resources"), script)
    for name in _NODE_VARIABLES:
        found[name] = Word(UNKNOWN, script, "")
    return found


def gpus_per_node(resources: Optional[Node], default: Span) -> Word:
    """SKYPILOT_NUM_GPUS_PER_NODE: the one accelerator count every choice of resources gives, at
    the place it is written; unknown for a choice of counts or a count not known."""
    counts = _counts(resources, default)
    values = {value for value, _ in counts}
    if len(values) != 1 or UNKNOWN in values:
        return Word(UNKNOWN, counts[0][1] if counts else default, "")
    value, span = counts[0]
    return Word(str(value), span, "")


def _counts(resources: Optional[Node], default: Span) -> list:
    """[(count or UNKNOWN, span)] of each choice of resources (`any_of`, `ordered`, a list or a set
    of accelerators); no resources or no accelerators: 0 GPUs."""
    if resources is None:
        return [(0, default)]
    if not isinstance(resources, Mapping):
        return [(UNKNOWN, resources.span)]
    choices = [node for key in ("any_of", "ordered") for node in _items(resources.get(key))]
    if choices:
        shared = {key: node for key, node in resources.items.items() if key not in ("any_of", "ordered")}
        found = []
        for choice in choices[:_MAX_CHOICES]:
            if not isinstance(choice, Mapping):
                return [(UNKNOWN, choice.span)]
            merged = Mapping(dict(shared, **choice.items), span=choice.span)
            found += _counts(merged, choice.span)
        return found
    accelerators = resources.get("accelerators")
    if accelerators is None or (isinstance(accelerators, Scalar) and accelerators.value is None):
        return [(0, resources.span)]
    if isinstance(accelerators, Scalar):
        return [_written(accelerators.value, accelerators)]
    if isinstance(accelerators, Sequence):
        return [_written(item.value if isinstance(item, Scalar) else None, item)
                for item in accelerators.items[:_MAX_CHOICES]] or [(UNKNOWN, accelerators.span)]
    if isinstance(accelerators, Mapping):
        found = []
        for name, node in list(accelerators.items.items())[:_MAX_CHOICES]:
            if isinstance(node, Scalar) and node.value is None:
                found.append(_written(name, node))  # `{A100:8, H100:8}`: a set of `name:count`
            else:
                found.append(_count(node.value if isinstance(node, Scalar) else None, node.span))
        return found or [(UNKNOWN, accelerators.span)]
    return [(UNKNOWN, accelerators.span)]


def _items(node: Optional[Node]) -> list:
    return node.items if isinstance(node, Sequence) else []


def _written(text, node: Node) -> tuple:
    """(count, span) of `A100:8` (the span of the 8 when it is written plainly on one line)."""
    match = _ACCELERATOR.fullmatch(text.strip()) if isinstance(text, str) else None
    if match is None:
        return UNKNOWN, node.span
    if match.group(2) is None:
        return 1, node.span  # `A100`: one
    count, span = _count(match.group(2), node.span)
    if isinstance(node, Scalar) and node.value == text and span.line == span.end_line \
            and span.end_column - span.column == len(text):
        span = Span(span.line, span.end_column - len(match.group(2)), span.line, span.end_column)
    return count, span


def _count(value, span: Span) -> tuple:
    """A per-node accelerator count: a whole number of at least 1 (a fraction shares a GPU)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    count = whole_number(value) if isinstance(value, (int, str)) and not isinstance(value, bool) else None
    return (count if count else UNKNOWN), span


def _env_value(node: Node) -> Word:
    """An `envs` value as SkyPilot passes it: `str()` of what YAML loads; null: given at launch."""
    value = node.value if isinstance(node, Scalar) else None
    if value is None or isinstance(value, float):
        # A float's text differs between loaders (`1e-6` is a string to PyYAML): not followed.
        return Word(UNKNOWN, node.span, "")
    return Word(str(value), node.span, "")


def folder(root: Mapping) -> Optional[str]:
    """`workdir`, when it is a local folder: where the script runs."""
    workdir = root.get("workdir")
    value = workdir.value if isinstance(workdir, Scalar) else None
    return value if isinstance(value, str) and value and "$" not in value and "://" not in value else None


def mounts(root: Mapping) -> dict:
    """{path on the node: local path} of the `file_mounts` that copy a local folder or file."""
    found: dict = {}
    file_mounts = root.get("file_mounts")
    if not isinstance(file_mounts, Mapping):
        return found
    for remote, node in file_mounts.items.items():
        local = node.value if isinstance(node, Scalar) else None
        if isinstance(local, str) and "://" not in local and "$" not in local + str(remote) \
                and str(remote).startswith("/") and not local.startswith("~"):
            found[str(remote)] = local
    return found


TASK = TaskFile("run", _TASK_KEYS, environment, folder, mounts)
FRAMEWORK = Framework(NAME, FORMATS, MARKERS, order=950, task=TASK)
