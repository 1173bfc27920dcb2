"""Create the files of a new framework: its spec and adapter, examples, tests, parity table.

    python tools/new_framework.py NAME --marker KEY --micro KEY [--accumulation KEY] [--format yaml]

NAME is how findings name the framework (`my-trainer`); KEY are the names its
configs give the recognising key (one only its configs have), the per-device
micro batch and the gradient accumulation. The adapter it writes works at once
(the generic rules read its micro batch, accumulation and W); then add what is
particular to the framework in that one module: its defaults with source lines,
typed settings for its own rules, its launchers. Existing files are never
overwritten. `--root` writes into another checkout (the tests use it).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from registry_rows import add_row  # noqa: E402

FORMATS = ("yaml", "json", "toml")

ADAPTER = '''"""{name}: {fmt_upper} configs with `{marker}` (the key only its configs have).

Everything batchlint knows about {name} lives here: the spec (formats, markers,
launchers), the adapter that turns a document into a TrainingPlan, its defaults
with the upstream line that sets them, and typed settings for its own rules.
"""

from __future__ import annotations

from ..document import Document
from ..plan import Fact, Origin, TrainingPlan
from .facts import Outside, number
from .spec import Framework

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

NAME = "{name}"
# Recognised by a key only its configs have: files without these bytes are never parsed.
FRAMEWORK = Framework(NAME, ("{fmt}",), (b"{marker}",), order=500)

# Defaults, each with the upstream line that sets it (fill in the source).
DEFAULT_ACCUMULATION = 1


def plan(doc: Document, outside: Outside) -> Optional[TrainingPlan]:
    root = doc.root
    if "{marker}" not in getattr(root, "items", {{}}):
        return None
    world = outside.world_size
    plan = TrainingPlan(
        framework=NAME,
        document=doc,
        micro_batch=number(root.get("{micro}"), "{micro}"),
        grad_accum={accumulation},
        world_size=world,
        target_global_batch=outside.target_global_batch,
    )
    # dp = W without model parallelism; add the degrees the framework has to `parallel`
    # and divide them out here once it does.
    plan.data_parallel = world
    return plan
'''

ACCUMULATION_KEY = ('number(root.get("{key}"), "{key}", default=DEFAULT_ACCUMULATION)')
ACCUMULATION_NONE = 'Fact(DEFAULT_ACCUMULATION, "gradient accumulation", None, Origin.DEFAULT)'

EXAMPLE = {
    "yaml": "{marker}: true\n{micro}: {m}\n{accumulation}# batchlint: global-batch=64\n",
    "toml": "{marker} = true\n{micro} = {m}\n{accumulation}# batchlint: global-batch=64\n",
}

TEST = '''"""{name}: the adapter the scaffold wrote, and the examples in examples/{name}/."""

import os

from conftest import lint_text

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples", "{name}")


def _read(name):
    with open(os.path.join(EXAMPLES, name), encoding="utf-8") as f:
        return f.read()


def test_the_flawed_example_misses_its_global_batch(tmp_path):
    result = lint_text(tmp_path, "train.{fmt}", _read("train.{fmt}"), world_size=8)
    assert result.framework == "{name}"
    assert [d.code for d in result.diagnostics] == ["BL102"]


def test_the_fixed_example_is_clean(tmp_path):
    result = lint_text(tmp_path, "train.{fmt}", _read("train_fixed.{fmt}"), world_size=8)
    assert result.framework == "{name}" and result.diagnostics == []
'''

PARITY = '''framework = "{name}"
checked = "{name} at commit <sha>: the files whose start-up checks are listed below"

# One [[startup]] table for every check the framework makes at start-up:
# check = what it refuses, source = file:line @ version, rule = the code that finds it
# (or reason = why batchlint does not).
'''


def module_name(name: str) -> str:
    return re.sub(r"[^0-9a-zA-Z]+", "_", name).strip("_").lower()


def files(name: str, fmt: str, marker: str, micro: str, accumulation: Optional[str]) -> dict:
    """Relative path -> text of every file a new framework starts with."""
    module = module_name(name)
    out = {
        f"lint/frameworks/{module}.py": ADAPTER.format(
            name=name, fmt=fmt, fmt_upper=fmt.upper(), marker=marker, micro=micro,
            accumulation=ACCUMULATION_KEY.format(key=accumulation) if accumulation else ACCUMULATION_NONE),
        f"docs/parity/{module}.toml": PARITY.format(name=name),
    }
    if fmt in EXAMPLE:  # JSON has no comments for the directive that names the target
        sep = ": " if fmt == "yaml" else " = "
        # On 8 GPUs against a target of 64: flawed 4 (x 1) x 8 = 32; fixed 4 x 2 x 8 or 8 x 8 = 64.
        for suffix, m, steps in (("", 4, 1), ("_fixed", 4 if accumulation else 8, 2)):
            line = f"{accumulation}{sep}{steps}\n" if accumulation else ""
            out[f"examples/{name}/train{suffix}.{fmt}"] = EXAMPLE[fmt].format(
                marker=marker, micro=micro, m=m, accumulation=line)
        out[f"tests/test_fw_{module}.py"] = TEST.format(name=name, fmt=fmt)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name")
    parser.add_argument("--marker", required=True, help="a top-level key only this framework's configs have")
    parser.add_argument("--micro", required=True, help="the key of the per-device micro batch")
    parser.add_argument("--accumulation", help="the key of the gradient accumulation steps")
    parser.add_argument("--format", choices=FORMATS, default="yaml")
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    args = parser.parse_args(argv)
    if not re.fullmatch(r"[a-z][a-z0-9-]*", args.name):
        parser.error("NAME: lower-case letters, digits and dashes, starting with a letter")
    planned = files(args.name, args.format, args.marker, args.micro, args.accumulation)
    taken = [path for path in planned if os.path.exists(os.path.join(args.root, path))]
    if taken:
        print(f"new_framework: would overwrite {', '.join(taken)}; nothing written", file=sys.stderr)
        return 2
    for path, text in planned.items():
        target = os.path.join(args.root, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "x", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {path}")
    module = module_name(args.name)
    add_row(os.path.join(args.root, "lint", "frameworks", "registry.py"), "ADAPTERS", module,
            f'    "{module}": ("{args.name}", ("{args.format}",), 500, (b"{args.marker}",), False, ()),')
    print("wrote lint/frameworks/registry.py (its row)")
    print("then: python docs/generate.py (applies-to, docs), pytest tests/test_fw_" + module_name(args.name) + ".py")
    return 0


if __name__ == "__main__":
    sys.exit(main())
