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
from .releases import TRANSFORMERS, TRL
from .spec import FLAGS, Framework, Launcher
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
# Generic TrainingArguments: tried last among the adapters of its formats.
FRAMEWORK = Framework(NAME, FORMATS, MARKERS, order=1000, launchers=LAUNCHERS, distribution=TRANSFORMERS)

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
    basis = _trl_basis(doc)
    framework = "trl" if basis is not None else NAME
    plan = plan_from(doc, outside, framework)
    if framework == "trl":
        plan.basis = basis or ""
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


def _trl_basis(doc: Document) -> Optional[str]:
    """Why the flags of a line are TRL's ("" for a config file, which its keys alone make TRL's), or None
    when they are not. The program in view decides: its code imports trl or not (open-instruct's dpo.py
    has its own `max_seq_length`, `packing`). A program out of view is TRL's only by its identity
    (`trl/scripts/sft.py`, `-m trl.scripts.grpo`) or by two keys only TRL's configs have: one flag such
    as `--packing` is any program's."""
    if not set(doc.root.items) & _TRL:
        return None
    entry = getattr(doc, "entry", None)
    if entry is None:
        return ""
    imports = program_imports(doc.path, entry, "trl")
    if imports is not None:
        return f"{entry} imports trl" if imports else None
    if _TRL_ENTRY.search(entry):
        return f"{entry}, not in the project, is TRL's by its name"
    distinct = sorted((set(doc.root.items) & _TRL) - _COMMON)
    if len(distinct) >= 2:
        return f"{entry} is not in the project; keys only TRL has: {', '.join(distinct)}"
    return None


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
