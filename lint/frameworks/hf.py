"""transformers' Trainer and TRL: TrainingArguments as YAML or JSON.

The last adapter for YAML/JSON: it takes TrainingArguments-style configs that
no more specific adapter (ms-swift, LLaMA-Factory) recognised. Defaults: a
micro batch of 8, no accumulation (transformers/training_args.py; TRL's
configs keep both). A config with a key only TRL's configs have is "trl".
The DeepSpeed config a `deepspeed:` key names is resolved by linked.py when
a rule needs it.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Optional

from ..document import Document, Mapping, Scalar
from ..lean_dataclass import lean_dataclass
from ..own_trainer import program_imports, program_trains
from ..plan import RL, Fact, GenerationChecks, Origin, TrainingPlan
from .facts import Outside, flag, number, per_group, product
from .spec import FLAGS, Distribution, Framework, Launcher
from .training_arguments import FORMATS, MARKERS, is_training_arguments, plan_from

NAME = "transformers"
__all__ = ["NAME", "FORMATS", "MARKERS", "FRAMEWORK", "SFT_KEYS", "TRANSFORMERS", "TRL", "plan"]
# A training script of the project's own (LLaVA's train_mem.py, any program run by python, torchrun,
# deepspeed or accelerate launch) that parses TrainingArguments from its flags (HfArgumentParser): the
# flags are its config. Every framework's own entry points are tried first (order 1000), and the flags
# form a plan only when they are TrainingArguments' (is_training_arguments). `--deepspeed ds.json` is
# linked, never written into: the Trainer fills the JSON's "auto" values from these flags. Its config
# file is the one HfArgumentParser/TrlParser scripts take (`--config x.yaml`, `--config_file`, `--cfg`);
# any other `*config*` flag names a file of the program's own (`--origin_bert_config_file bert.json`,
# `--model_config`), which the program's flags are never written into.
LAUNCHERS = (Launcher("python", scripts=("*.py",), modules=("*",), markers=(b"per_device_train_batch_size",),
                      flags=FLAGS, inline=True, config_flags=("config", "config_file", "cfg"),
                      linked=("deepspeed", "deepspeed_config")),)
# Every transformers release on PyPI from 2.0.0 (oldest first; the 0.1 upload before it is no release of
# this library), which the Trainer's start-up checks are weighed against when the project pins none
# (lint/premise.py). TrainingArguments and the Trainer appear in 2.9.0.
TRANSFORMERS_RELEASES = (
    '2.0.0', '2.1.0', '2.1.1', '2.2.0', '2.2.1', '2.2.2', '2.3.0', '2.4.0', '2.4.1', '2.5.0', '2.5.1',
    '2.6.0', '2.7.0', '2.8.0', '2.9.0', '2.9.1', '2.10.0', '2.11.0', '3.0.0', '3.0.1', '3.0.2', '3.1.0', '3.2.0',
    '3.3.0', '3.3.1', '3.4.0', '3.5.0', '3.5.1', '4.0.0', '4.0.1', '4.1.0', '4.1.1', '4.2.0', '4.2.1', '4.2.2',
    '4.3.0', '4.3.1', '4.3.2', '4.3.3', '4.4.0', '4.4.1', '4.4.2', '4.5.0', '4.5.1', '4.6.0', '4.6.1', '4.7.0',
    '4.8.0', '4.8.1', '4.8.2', '4.9.0', '4.9.1', '4.9.2', '4.10.0', '4.10.1', '4.10.2', '4.10.3', '4.11.0', '4.11.1',
    '4.11.2', '4.11.3', '4.12.0', '4.12.1', '4.12.2', '4.12.3', '4.12.4', '4.12.5', '4.13.0', '4.14.1', '4.15.0',
    '4.16.0', '4.16.1', '4.16.2', '4.17.0', '4.18.0', '4.19.0', '4.19.1', '4.19.2', '4.19.3', '4.19.4', '4.20.0',
    '4.20.1', '4.21.0', '4.21.1', '4.21.2', '4.21.3', '4.22.0', '4.22.1', '4.22.2', '4.23.0', '4.23.1', '4.24.0',
    '4.25.1', '4.26.0', '4.26.1', '4.27.0', '4.27.1', '4.27.2', '4.27.3', '4.27.4', '4.28.0', '4.28.1', '4.29.0',
    '4.29.1', '4.29.2', '4.30.0', '4.30.1', '4.30.2', '4.31.0', '4.32.0', '4.32.1', '4.33.0', '4.33.1', '4.33.2',
    '4.33.3', '4.34.0', '4.34.1', '4.35.0', '4.35.1', '4.35.2', '4.36.0', '4.36.1', '4.36.2', '4.37.0', '4.37.1',
    '4.37.2', '4.38.0', '4.38.1', '4.38.2', '4.39.0', '4.39.1', '4.39.2', '4.39.3', '4.40.0', '4.40.1', '4.40.2',
    '4.41.0', '4.41.1', '4.41.2', '4.42.0', '4.42.1', '4.42.2', '4.42.3', '4.42.4', '4.43.0', '4.43.1', '4.43.2',
    '4.43.3', '4.43.4', '4.44.0', '4.44.1', '4.44.2', '4.45.0', '4.45.1', '4.45.2', '4.46.1', '4.46.2', '4.46.3',
    '4.47.0', '4.47.1', '4.48.0', '4.48.1', '4.48.2', '4.48.3', '4.49.0', '4.50.0', '4.50.1', '4.50.2', '4.50.3',
    '4.51.0', '4.51.1', '4.51.2', '4.51.3', '4.52.1', '4.52.2', '4.52.3', '4.52.4', '4.53.0', '4.53.1', '4.53.2',
    '4.53.3', '4.54.0', '4.54.1', '4.55.0', '4.55.1', '4.55.2', '4.55.3', '4.55.4', '4.56.0', '4.56.1', '4.56.2',
    '4.57.1', '4.57.2', '4.57.3', '4.57.4', '4.57.5', '4.57.6', '5.0.0', '5.1.0', '5.2.0', '5.3.0', '5.4.0', '5.5.0',
    '5.5.1', '5.5.2', '5.5.3', '5.5.4', '5.6.0', '5.6.1', '5.6.2', '5.7.0', '5.8.0', '5.8.1', '5.9.0', '5.10.1',
    '5.10.2', '5.10.4', '5.11.0', '5.12.0', '5.12.1', '5.13.0', '5.13.1', '5.14.0', '5.14.1', '5.15.0', '5.15.1',
    '5.16.0', '5.16.1', '5.17.0', '5.18.0', '5.19.0', '5.20.0', '5.20.1', '5.20.2', '5.21.0', '5.21.1', '5.22.0',
    '5.22.1', '5.22.2', '5.23.0', '5.24.0',
)
TRANSFORMERS = Distribution(("transformers",), "transformers", ("transformers/__init__.py",), title="transformers",
                            releases=TRANSFORMERS_RELEASES)
# Generic TrainingArguments: tried last among the adapters of its formats.
FRAMEWORK = Framework(NAME, FORMATS, MARKERS, order=1000, launchers=LAUNCHERS, distribution=TRANSFORMERS)
# The plans it calls "trl" run TRL, whose release decides whether SFTConfig still has max_seq_length.
# Every TRL release on PyPI from 0.1.0 (oldest first): what a rule's window is weighed against
# when the project pins none (lint/premise.py).
TRL_RELEASES = (
    '0.1.0', '0.2.0', '0.2.1', '0.3.0', '0.3.1', '0.4.0', '0.4.1', '0.4.2', '0.4.3', '0.4.4', '0.4.5', '0.4.6',
    '0.4.7', '0.5.0', '0.6.0', '0.7.0', '0.7.1', '0.7.2', '0.7.3', '0.7.4', '0.7.5', '0.7.6', '0.7.7', '0.7.8',
    '0.7.9', '0.7.10', '0.7.11', '0.8.0', '0.8.1', '0.8.2', '0.8.3', '0.8.4', '0.8.5', '0.8.6', '0.9.2', '0.9.3',
    '0.9.4', '0.9.6', '0.10.1', '0.11.0', '0.11.1', '0.11.2', '0.11.3', '0.11.4', '0.12.0', '0.12.1', '0.12.2',
    '0.13.0', '0.14.0', '0.15.0', '0.15.1', '0.15.2', '0.16.0', '0.16.1', '0.17.0', '0.18.0', '0.18.1', '0.18.2',
    '0.19.0', '0.19.1', '0.20.0', '0.21.0', '0.22.0', '0.22.1', '0.22.2', '0.23.0', '0.23.1', '0.24.0', '0.25.0',
    '0.25.1', '0.26.0', '0.26.1', '0.26.2', '0.27.0', '0.27.1', '0.27.2', '0.28.0', '0.29.0', '0.29.1', '1.0.0',
    '1.1.0', '1.2.0', '1.3.0', '1.4.0', '1.5.0', '1.5.1', '1.6.0', '1.7.0', '1.7.1', '1.8.0', '1.9.0', '1.9.1',
    '1.9.2', '1.10.0', '1.11.0', '1.12.0', '1.13.0', '1.14.0', '1.14.1', '1.14.2', '1.15.0', '1.16.0',
)
TRL = Distribution(("trl",), "trl", ("trl/__init__.py",), title="TRL", releases=TRL_RELEASES)

# Keys of TRL's configs (SFTConfig, GRPOConfig/RLOOConfig, DPOConfig, ScriptArguments) that
# transformers' TrainingArguments lacks.
_TRL = {"max_length", "dataset_name", "max_seq_length", "num_generations", "padding_free", "packing",
        "packing_strategy", "dataset_text_field", "completion_only_loss", "assistant_only_loss",
        "generation_batch_size", "steps_per_generation", "max_prompt_length", "max_completion_length"}

# Keys only TRL's SFTConfig has (trl/trainer/*_config.py @ 0.19.1-1.16.0): they tell an SFT
# config from DPO's, which shares padding_free and dataset_num_proc.
SFT_KEYS = ("packing", "packing_strategy", "dataset_text_field", "completion_only_loss", "assistant_only_loss",
            "eval_packing", "dataset_kwargs")


def plan(doc: Document, outside: Outside):
    if not is_training_arguments(doc.root):
        return None
    entry = getattr(doc, "entry", None)
    if entry is not None and program_trains(doc.path, entry) is False:
        return None  # the project's own program parses the flags but trains nothing with them
    framework = "trl" if set(doc.root.items) & _TRL and _may_run_trl(doc) else NAME
    plan = plan_from(doc, outside, framework)
    if framework == "trl":
        plan.rl = _grpo(doc.root, plan)
        plan.settings = TRLArguments(sft=_sft_arguments(doc.root))
        # SFTConfig's max_length, with its default 1024 (null: no limit); other configs' as written.
        sft = plan.settings.sft
        plan.seq_len = sft.max_length if sft is not None and sft.max_length.value is not None else (
            None if sft is not None else number(doc.root.get("max_length"), "max_length"))
    return plan


# Names many programs of their own give their flags too (`--packing`, `--max_seq_length`): alone they
# do not make an unseen program TRL's.
_COMMON = frozenset({"max_length", "dataset_name", "max_seq_length", "packing"})
_TRL_ENTRY = re.compile(r"(?:^|[/.])trl(?:[/.]|$)")


def _may_run_trl(doc: Document) -> bool:
    """Whether the flags of a line are TRL's. The program in view decides: its code imports trl or
    not (open-instruct's dpo.py has its own `max_seq_length`, `packing`). A program out of view is
    TRL's only by its identity (`trl/scripts/sft.py`, `-m trl.scripts.grpo`) or by two keys only TRL's
    configs have: one flag such as `--packing` is any program's."""
    entry = getattr(doc, "entry", None)
    if entry is None:
        return True
    imports = program_imports(doc.path, entry, "trl")
    if imports is not None:
        return imports
    if _TRL_ENTRY.search(entry):
        return True
    return len((set(doc.root.items) & _TRL) - _COMMON) >= 2


@lean_dataclass(frozen=True)
class SFTArguments:
    """SFTConfig's padding-free settings (trl/trainer/sft_config.py @ 1.0+)."""

    padding_free: Optional[Fact]
    packing: Optional[Fact]  # None when absent, or written as something else than true/false
    packing_unreadable: bool  # written, but not as true/false
    max_length: Fact  # value None when written null (no limit); default 1024


def _sft_arguments(root: Mapping) -> Optional[SFTArguments]:
    """Only for a config with an SFT-only key: DPO's padding_free means something else."""
    if not any(k in root.items for k in SFT_KEYS):
        return None
    packing, length = root.get("packing"), root.get("max_length")
    return SFTArguments(
        padding_free=flag(root.get("padding_free"), "padding_free"),
        packing=flag(packing, "packing"),
        packing_unreadable=packing is not None and flag(packing, "packing") is None,
        max_length=Fact(getattr(length, "value", None), "max_length", length.span, node=length) if length is not None
        else Fact(1024, "max_length", None, Origin.DEFAULT),
    )


@lean_dataclass(frozen=True)
class TRLArguments:
    """TRL's own arguments its rules read: SFTConfig's padding-free settings."""

    sft: Optional[SFTArguments]


# TRL's distillation configs (GOLD, IW-OPD) also have num_generations and
# generation_batch_size, with another meaning: a per-device batch of prompts.
_DISTILLATION_KEYS = ("lmbda", "teacher_model_name_or_path", "teacher_model_init_kwargs")


def _grpo(root: Mapping, plan: TrainingPlan) -> Optional[RL]:
    """GRPOConfig/RLOOConfig's batch and what their `__post_init__` refuses
    (grpo_config.py:1096-1141, defaults 480-486 @ 1.16.0; rloo_config.py:659-704):
    the generation batch is generation_batch_size, else per_device_train_batch_size
    x W x steps_per_generation (default gradient_accumulation_steps), whole groups
    of num_generations (at least 2) and a whole number of per_device_train_batch_size
    x W; generation_batch_size and steps_per_generation exclude each other; with
    evaluation on, per_device_eval_batch_size (default 8) x W is whole groups of
    num_generations_eval (default num_generations)."""
    samples = number(root.get("num_generations"), "num_generations")
    if samples is None or any(k in root.items for k in _DISTILLATION_KEYS):
        return None
    micro, world = plan.micro_batch, plan.world_size
    given_steps = number(root.get("steps_per_generation"), "steps_per_generation")
    steps = given_steps or plan.grad_accum
    given = number(root.get("generation_batch_size"), "generation_batch_size")
    generation = given or product([micro, world, steps], "generation batch",
                                  f"{micro.describe()} x W ({world.value}) x {steps.describe()}"
                                  if micro and world and steps else None)  # no product without all three
    checks = GenerationChecks(
        refusal="TRL refuses to start",
        group_baseline=Fact("the GRPO/RLOO trainer", "trainer", None, Origin.DEFAULT),
        step_batch=(micro, world or Fact(None, "world size")),
        exclusive=(given, given_steps) if given is not None and given_steps is not None else (),
    )
    rl = RL(samples_per_prompt=samples, generation_batch=generation,
            prompts_per_step=per_group(generation, samples),
            mini_batch=product([micro, world, plan.grad_accum], "optimizer-step batch"),
            micro_batch={"actor": micro}, generation_checks=checks)
    strategy = root.get("eval_strategy")
    if isinstance(strategy, Scalar) and strategy.value in ("steps", "epoch") and world is not None:
        eval_micro = number(root.get("per_device_eval_batch_size"), "per_device_eval_batch_size", default=8)
        rl.eval_samples_per_prompt = number(root.get("num_generations_eval"), "num_generations_eval") or samples
        rl.eval_generation_batch = product([eval_micro, world], "evaluation batch",
                                           f"{eval_micro.describe()} x W ({world.value})")
        if rl.eval_generation_batch is not None:
            rl.eval_generation_batch = replace(rl.eval_generation_batch, span=eval_micro.span or strategy.span)
    return rl
