"""
## What it does
Flags an override on a launch line whose key is not in the framework's
config but is one or two letters away from a key that is
(`actor_rollout_ref.actor.ppo_mini_batchsize=256`), for verl's Hydra
overrides. TorchTitan's `--section.key` overrides are checked against its key
set by BL510 at the place they are written.

## Why is this bad?
Hydra refuses to override a key the config does not have, so the job fails
at start-up, after it was queued; with a `+` in front the typo instead adds a
new key nobody reads, and the setting keeps its default without a word.

A project that brings its own copy of the trainer (`verl/trainer/main_ppo.py`
in the repository, as forks that vendor verl have) runs that copy, whose Hydra
config may define keys the released one does not: a key its own config
defines is not a typo.

## Example
```bash
python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.ppo_mini_batchsize=256
```

## Use instead
```bash
python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.ppo_mini_batch_size=256
```

The key set is that of the verl release the project runs (a pin in
requirements, pyproject, setup.py or a lock file, `versions` in the project
config), or read from the copy of verl inside the project (TinyZero-style
forks); when the release is unknown, only a key no embedded release (0.1 to
the development snapshot) has is reported, and a release batchlint has no key
set for is not judged.

## Source
hydra/_internal/config_loader_impl.py (`Could not override '...'. ... Key '...' is not in struct`);
verl/trainer/config/ppo_trainer.yaml and ppo_megatron_trainer.yaml @ v0.1-v0.4.1,
_generated_ppo_trainer.yaml and _generated_ppo_megatron_trainer.yaml @ v0.5.0-v0.7.0
for the key sets (tools/generate_verl_keys.py; it also embeds main at b178a3c,
0.8.0.dev, the union's newest; the releases after 0.7.0, 0.7.1-0.9.1, have no
embedded set: a project pinning one is not judged).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from batchlint.keysets import InForce, KeySets, in_force
from batchlint.launching.lines import launches
from batchlint.own_trainer import hydra_keys
from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Rule, closest
from batchlint.sources.shell import ShellDocument
from batchlint.versions import Distribution

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional, cast

    # What a framework's keys come from: its distribution (to find the release), its key sets by release, and
    # the reader of a copy's keys.
    KeyReaders = tuple[Distribution, KeySets, Callable[..., Optional[frozenset[str]]]]
else:
    from batchlint.annotations import cast


def _verl() -> KeyReaders:
    from batchlint.frameworks import verl
    from batchlint.frameworks.verl_keys import KEY_SETS

    return verl.DISTRIBUTION, KEY_SETS, verl.keys_from_source


# framework -> what gives (how to find its release, its key sets by release, the reader of a copy's keys):
# imported only for a script that launches it.
KNOWN_KEYS: dict[str, Callable[[], KeyReaders]] = {"verl": _verl}


def check(plan: TrainingPlan) -> Iterator[Finding]:
    forces: dict[str, Optional[InForce]] = {}
    for line in launches(cast(ShellDocument, plan.document)):  # a launch plan's document: the script
        if line.framework not in KNOWN_KEYS:
            continue
        if line.framework not in forces:
            distribution, key_sets, from_source = KNOWN_KEYS[line.framework]()
            forces[line.framework] = in_force(distribution, key_sets, plan.document.path, from_source, plan.project)
        force = forces[line.framework]
        if force is None:
            continue  # a release batchlint has no key set for
        if not force.holds(line.entry, plan.project):
            continue  # the line runs a module the project's copy lacks: another release, keys unknown
        name = line.config_name.value if line.config_name is not None and line.config_name.known else None
        own = hydra_keys(plan.document.path, line.entry, name)  # the project's own trainer: its config's keys exist too
        known = force.keys | own if own else force.keys
        for keys, _, key_word in line.overrides:
            dotted = ".".join(keys)
            if dotted in known or str(key_word.value).startswith(("+", "~")):
                continue
            guess = _closest(dotted, known)
            if guess is None:
                continue  # far from every key: an addition or an open dict, not a typo we can name
            verdict = "is not a key of" if force.known else "is a key of"  # unknown: "of no release from ..."
            yield Finding(
                span=key_word.span,
                message=f"unknown key `{dotted}`; did you mean `{_leaf(dotted, guess)}`?",
                notes=(f"`{dotted}` {verdict} {force.named}; `{guess}` is", "Hydra refuses the override at start-up"),
                fix=f"write `{guess}=...`",
            )


def _leaf(dotted: str, guess: str) -> str:
    """The guess as the message shows it: its last part alone where the parent is the one written."""
    parent, _, leaf = guess.rpartition(".")
    return leaf if parent and dotted.rpartition(".")[0] == parent else guess


def _closest(dotted: str, known: frozenset[str]) -> Optional[str]:
    parent, _, leaf = dotted.rpartition(".")
    siblings = [k.rpartition(".")[2] for k in known if k.rpartition(".")[0] == parent]
    match = closest(leaf, siblings, 0.85)
    if match:
        return f"{parent}.{match}" if parent else match
    return closest(dotted, known, 0.92)


RULE = Rule(
    code="BL602",
    name="override-key-typo",
    severity="error",
    summary="a launch-line override whose key is a typo of a config key",
    check=check,
    frameworks=("launch",),
    every_release=("judged against the key set of the verl release the project runs (one set per release, "
                   "lint/frameworks/verl_keys.py, or the copy's own config), and every verl release runs its "
                   "trainers under Hydra, which refuses an override of a key its config lacks"),
    doc=__doc__,
    examples=(
        Example("verl_typo.sh", """\
#!/bin/bash
python3 -m verl.trainer.main_ppo \\
    data.train_batch_size=1024 \\
    actor_rollout_ref.actor.ppo_mini_batchsize=256 \\
    trainer.n_gpus_per_node=8
""", flagged=(4,),
                message="unknown key `actor_rollout_ref.actor.ppo_mini_batchsize`; did you mean "
                        "`ppo_mini_batch_size`?",
                fix="write `actor_rollout_ref.actor.ppo_mini_batch_size=...`"),
        Example("verl_ok.sh", """\
#!/bin/bash
python3 -m verl.trainer.main_ppo \\
    data.train_batch_size=1024 \\
    actor_rollout_ref.actor.ppo_mini_batch_size=256 \\
    trainer.n_gpus_per_node=8
"""),
        Example("verl_added.sh", """\
#!/bin/bash
python3 -m verl.trainer.main_ppo \\
    data.train_batch_size=1024 \\
    actor_rollout_ref.actor.ppo_mini_batch_size=256 \\
    +actor_rollout_ref.actor.ppo_mini_batchsize=1 \\
    trainer.n_gpus_per_node=8
"""),
    ),
)
