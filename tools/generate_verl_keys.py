"""Regenerate lint/frameworks/verl_keys.py from a verl checkout.

    python tools/generate_verl_keys.py PATH/TO/verl [--commit SHA]

Reads verl/trainer/config/_generated_ppo_trainer.yaml and
_generated_ppo_megatron_trainer.yaml (the flattened configs verl ships for
reference) and writes every dotted key path of their mappings. The embedded
table was generated at verl b178a3c; pass the commit you read so the module
says which release its keys are.
"""

from __future__ import annotations

import argparse
import os
import sys

import yaml

from generated import write_or_check  # tools/generated.py: run as a script, tools/ is on the path

SOURCES = ("_generated_ppo_trainer.yaml", "_generated_ppo_megatron_trainer.yaml")
TARGET = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lint", "frameworks", "verl_keys.py")

HEADER = '''"""Every key of verl's PPO trainer config, FSDP and Megatron variants, at verl {commit}.

Generated from verl/trainer/config/_generated_ppo_trainer.yaml and
_generated_ppo_megatron_trainer.yaml (the flattened configs verl ships for
reference) by walking their mappings; Hydra refuses an override of a key that
is not among them unless it is written `+key=value`.
"""

'''


def keys(node, prefix: str = "") -> set:
    found = set()
    if isinstance(node, dict):
        for key, value in node.items():
            dotted = f"{prefix}.{key}" if prefix else str(key)
            found.add(dotted)
            found |= keys(value, dotted)
    return found


def render(all_keys: set, commit: str) -> str:
    body = "".join(f'    "{key}",\n' for key in sorted(all_keys))
    return HEADER.format(commit=commit) + "KEYS = frozenset({\n" + body + "})\n"


def main(argv: list) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("verl", help="a verl checkout")
    parser.add_argument("--commit", default="b178a3c", help="the verl commit read (shown in the module)")
    parser.add_argument("--check", action="store_true", help="exit 1 if the module differs instead of writing it")
    args = parser.parse_args(argv)
    found: set = set()
    for name in SOURCES:
        with open(os.path.join(args.verl, "verl", "trainer", "config", name), encoding="utf-8") as handle:
            found |= keys(yaml.safe_load(handle))
    text = render(found, args.commit)
    return write_or_check(TARGET, text, args.check)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
