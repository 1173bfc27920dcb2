"""transformers' Trainer and TRL: TrainingArguments as YAML or JSON.

The last adapter for YAML/JSON: it takes TrainingArguments-style configs that
no more specific adapter (ms-swift, LLaMA-Factory) recognised. Defaults: a
micro batch of 8, no accumulation (transformers/training_args.py; TRL's
configs keep both). A config with a key only TRL's configs have is "trl".
The DeepSpeed config a `deepspeed:` key names is resolved by linked.py when
a rule needs it.
"""

from __future__ import annotations

from ..document import Document, Mapping, Scalar
from ..lazy_pattern import LazyPattern
from ..lean_dataclass import lean_dataclass, replace
from ..own_trainer import _program_holds, program_imports, program_trains
from ..plan import RL, Fact, GenerationChecks, Origin, Subject, TrainingPlan
from ..project import ProjectView
from .facts import Outside, flag, number, per_group, product
from .releases import TRANSFORMERS, TRL
from .spec import FLAGS, Framework, Launcher
from .training_arguments import FORMATS, MARKERS, is_training_arguments, plan_from

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Optional

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
        "generation_batch_size", "steps_per_generation", "max_prompt_length", "max_completion_length", "rloo_k"}

# Keys only TRL's SFTConfig has (trl/trainer/*_config.py @ 0.19.1-1.16.0): they tell an SFT
# config from DPO's, which shares padding_free and dataset_num_proc.
SFT_KEYS = ("packing", "packing_strategy", "dataset_text_field", "completion_only_loss", "assistant_only_loss",
            "eval_packing", "dataset_kwargs")


def plan(doc: Document, outside: Outside):
    program = _program(doc, outside.view)
    if not is_training_arguments(doc.root) and not (
            program.kind == NAME and getattr(doc, "entry", None) is not None and "deepspeed" in doc.root.items):
        # A TrainingArguments program's flags without a batch key are planned only for the DeepSpeed JSON
        # they link, with TrainingArguments' defaults: per_device_train_batch_size 8, gradient_accumulation_steps
        # 1 (training_args.py:373-374, 395-396 @ v4.9.0; 861-862, 887-888 @ v4.57.1). Not for TRL's programs:
        # GRPOConfig of TRL 0.14.0 has its own (1 and 8, grpo_config.py:159-170 @ v0.14.0).
        return None
    entry = getattr(doc, "entry", None)
    if entry is not None and program_trains(doc.path, entry, outside.view) is False:
        return None  # the project's own program parses the flags but trains nothing with them
    basis = _trl_basis(doc, outside.view)
    if program.kind in ("trl", "grpo"):
        basis = basis or program.why
    elif program.kind == NAME:
        basis = None  # the program in view reads them as TrainingArguments and imports no trl
    framework = "trl" if basis is not None else NAME
    # bf16 is off unless written in transformers' TrainingArguments (training_args.py:1068-1069 @ v4.57.1;
    # a release without the field has no bf16 to turn on), where the program certainly parses them and
    # no TRL config (which turns bf16 on from TRL 0.19.0: grpo_config.py:530 @ v0.19.0) is among them.
    # A program in view that parses its flags with an argparse of its own (`--per_device_train_batch_size`,
    # default 1, passed on to GRPOConfig) has its own defaults: TrainingArguments' are not assumed.
    own_parser = entry is not None and _program_holds(doc.path, entry, _PARSES_TRAINING_ARGUMENTS,
                                                      view=outside.view) is False
    plan = plan_from(doc, outside, framework, micro_default=None if own_parser else 8,
                     grad_accum_default=_own_default if own_parser else None,
                     precision_off=("fp16", "bf16") if program.kind == NAME and framework == NAME else ("fp16",),
                     bf16_default=_grpo_bf16(doc, outside.view)
                     if program.kind == "grpo" and "bf16" not in doc.root.items else None)
    if framework == "trl":
        plan.basis = basis or ""
        # The release in force is asked only where the verdict needs it: finding it may read every script of
        # the project for an install command (lint/versions.py), which a one-file lint in a large repository
        # pays for (asked twice, it is read once: versions.release remembers it for the folder).
        def older() -> bool:
            return _counts_without_accumulation(doc.path, outside.view)

        renamed = any(old in doc.root.items and new not in doc.root.items for old, new in RLOO_RENAMED) and \
            _rloo_names_renamed(doc.path, outside.view)
        plan.rl = _grpo(doc.root, plan, grpo=program.kind == "grpo", older=older, renamed=renamed)
        halving = flag(doc.root.get("auto_find_batch_size"), "auto_find_batch_size")
        plan.settings = TRLSettings(sft=_sft_arguments(doc.root),
                                    accumulation_left_out=plan.rl is not None and older(),
                                    rloo=_rloo_batch(doc.root, plan),
                                    auto_find_batch_size=halving if halving is not None and halving.value else None)
        # SFTConfig's max_length, with its default 1024 (null: no limit); other configs' as written.
        sft = plan.settings.sft
        plan.seq_len = sft.max_length if sft is not None and sft.max_length.value is not None else (
            None if sft is not None else number(doc.root.get("max_length"), "max_length"))
    return plan


def _own_default(micro: Optional[Fact], world: Optional[Fact]) -> Fact:
    """gradient_accumulation_steps unwritten to a program with a parser of its own: its default, not known here."""
    return Fact(None, "gradient_accumulation_steps", None, Origin.DEFAULT, detail="the program's own default")


# Names many programs of their own give their flags too (`--packing`, `--max_seq_length`): alone they
# do not make an unseen program TRL's.
_COMMON = frozenset({"max_length", "dataset_name", "max_seq_length", "packing"})
_TRL_ENTRY = LazyPattern(r"(?:^|[/.])trl(?:[/.]|$)")


def _trl_basis(doc: Document, view: ProjectView) -> Optional[str]:
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
    imports = program_imports(doc.path, entry, "trl", view=view)
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
    # dataset_kwargs.skip_prepare_dataset written true: SFTTrainer leaves the data as it is, unpacked.
    skip_prepare_dataset: Optional[Fact] = None


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
        skip_prepare_dataset=_skip_prepare(root.get("dataset_kwargs")),
    )


def _skip_prepare(kwargs) -> Optional[Fact]:
    """`dataset_kwargs: {skip_prepare_dataset: true}` as written (YAML or JSON)."""
    node = kwargs.get("skip_prepare_dataset") if isinstance(kwargs, Mapping) else None
    found = flag(node, "dataset_kwargs.skip_prepare_dataset")
    return found if found is not None and found.value else None


@lean_dataclass(frozen=True)
class RLOOBatch:
    """The batch of TRL's first RLOOTrainer (0.9-0.21: `rloo_k` samples per prompt), which splits each
    process's batch, per_device_train_batch_size x gradient_accumulation_steps x num_mini_batches, into
    prompts of rloo_k samples each (rloo_trainer.py:129-150 @ v0.21.0)."""

    samples: Fact  # rloo_k
    local_batch: Optional[Fact]  # per device x accumulation x num_mini_batches; None where one is unknown


def _rloo_batch(root: Mapping, plan: TrainingPlan) -> Optional[RLOOBatch]:
    """Only for a config that writes rloo_k (default 2): no other config of TRL's has it, and from 0.22.0
    it is a deprecated name of num_generations (rloo_config.py:588-613 @ v0.22.0)."""
    samples = number(root.get("rloo_k"), "rloo_k")
    if samples is None:
        return None
    minis = number(root.get("num_mini_batches"), "num_mini_batches", default=1)
    factors = [plan.micro_batch, plan.grad_accum, minis]
    local = product(factors, "local_batch_size") if all(f is not None for f in factors) else None
    return RLOOBatch(samples, local)


@lean_dataclass(frozen=True)
class TRLSettings(Subject):
    """TRL's own arguments its rules read: SFTConfig's padding-free settings, the first RLOOTrainer's batch."""

    FRAMEWORKS = ("trl",)

    sft: Optional[SFTArguments]
    # The release in force checks GRPO's per-device batch x W without the accumulation (TRL 0.15-0.16): asked
    # of a plan with generation batches (plan.rl) only, whose rule alone reads it (rules/generic/rl_generation_batch.py).
    accumulation_left_out: bool = False
    rloo: Optional[RLOOBatch] = None
    # auto_find_batch_size written true: the Trainer halves the per-device batch on out-of-memory.
    auto_find_batch_size: Optional[Fact] = None


@lean_dataclass(frozen=True)
class Program:
    """Which program certainly reads a config or a line's flags: "grpo" (TRL's GRPOConfig), "trl" (one
    of TRL's configs), "transformers" (TrainingArguments, no TRL), None when not certain; `why` says how."""

    kind: Optional[str] = None
    why: str = ""


# TRL's trainers and configs (trl/trainer/*_config.py): a program naming GRPO's and no other's reads GRPOConfig.
_GRPO = LazyPattern(rb"\bGRPO(?:Trainer|Config)\b")
_OTHER_TRL = LazyPattern(rb"\b(?:SFT|DPO|KTO|ORPO|CPO|PPO|RLOO|OnlineDPO|Reward|GKD|XPO|NashMD|BCO|PRM|GOLD|"
                        rb"MiniLLM|IterativeSFT|AlignProp|DDPO)(?:Trainer|Config)\b")
_PARSES_TRAINING_ARGUMENTS = LazyPattern(rb"\b(?:HfArgumentParser|TrlParser)\s*\(")
# What may change a default this adapter assumes in the program's code: a dataclass field of its own
# (`num_generations: int = 4`), an assignment (`args.bf16 = True`) or a keyword (`GRPOConfig(num_generations=4)`).
_OWN_DEFAULTS = LazyPattern(rb"\b(?:per_device_train_batch_size|gradient_accumulation_steps|bf16|num_generations)"
                           rb"[ \t]*(?::|=(?!=))")
_TRL_GRPO_SCRIPT = LazyPattern(r"(?:^|[/.])trl[/.]scripts[/.]grpo(?:\.py)?$")


def _program(doc: Document, view: ProjectView) -> Program:
    """The program that reads the document, where certain: a launch line's own flags (its `entry`), or
    a config a launch line names (Document.program). Its code in view decides: it parses its flags
    with HfArgumentParser/TrlParser and changes no default of its own; out of view, only TRL's own
    `trl/scripts/grpo.py` by its name."""
    entry = getattr(doc, "entry", None)
    script = doc.path
    if entry is None and doc.program is not None:
        script, entry = doc.program
    if entry is None:
        return Program()
    if _TRL_GRPO_SCRIPT.search(entry):
        return Program("grpo", f"{entry} is TRL's GRPO script")
    if not (_program_holds(script, entry, _PARSES_TRAINING_ARGUMENTS, view=view)
            and _program_holds(script, entry, _OWN_DEFAULTS, view=view) is False):
        return Program()
    trl = program_imports(script, entry, "trl", view=view)
    if trl is False and program_imports(script, entry, "transformers", view=view):
        return Program(NAME, f"{entry} parses TrainingArguments and imports no trl")
    if not trl:
        return Program()
    if _program_holds(script, entry, _GRPO, view=view) and _program_holds(script, entry, _OTHER_TRL, view=view) is False:
        return Program("grpo", f"{entry} runs TRL's GRPOTrainer")
    return Program("trl", f"{entry} imports trl")


# GRPOConfig's bf16 when unwritten: TrainingArguments' False through 0.18.x (v0.18.2 trl/trainer/grpo_config.py
# writes no bf16), `not fp16` from 0.19.0 (v0.19.0 grpo_config.py:219-220, 530; v1.0.0 trl/trainer/base_config.py:67,
# 105; 1.16.0 base_config.py:68, 108).
BF16_ON_SINCE = "0.19.0"


def _grpo_bf16(doc: Document, view: ProjectView) -> Optional[Fact]:
    """bf16 as GRPOConfig sets it when unwritten, where every TRL release the project may run agrees."""
    older = _every_release(doc.path, lambda key, bound: key < bound, BF16_ON_SINCE, view)
    newer = _every_release(doc.path, lambda key, bound: key >= bound, BF16_ON_SINCE, view)
    if not (older or newer):
        return None
    fp16 = flag(doc.root.get("fp16"), "fp16")
    if newer and (fp16 is None and "fp16" in doc.root.items):
        return None  # fp16 written as something else than true/false: bf16 = not fp16 is unknown
    value = newer and not (fp16 is not None and fp16.value)
    return Fact(value, "bf16", None, Origin.DEFAULT,
                detail=f"default {str(value).lower()}: GRPOConfig of TRL "
                       f"{'before ' + BF16_ON_SINCE if older else BF16_ON_SINCE + ' and later (not fp16)'}")


# TRL 0.15.0-0.16.1 check per_device_train_batch_size x W alone against num_generations; 0.17.0 counts the
# accumulation in (v0.15.0 trl/trainer/grpo_trainer.py:342-350, v0.16.1 :425-433; v0.17.0 :597-608).
COUNTS_ACCUMULATION_SINCE = "0.17.0"


def _counts_without_accumulation(path: str, view: ProjectView) -> bool:
    """Whether every TRL release the project may run is one that leaves the accumulation out (pinned)."""
    return _every_release(path, lambda key, bound: key < bound, COUNTS_ACCUMULATION_SINCE, view)


def _every_release(path: str, holds, boundary: str, view: ProjectView) -> bool:
    """Whether `holds(release, boundary)` (as version keys) for every TRL release the project may run, as
    the project pins it (lint/versions.py); False where it pins none."""
    from ..premise import candidates
    from ..versions import release, version_key

    found = release(TRL, path, TRL.releases, view)
    if found is None:
        return False
    versions, later, _ = candidates(TRL, found)
    bound = version_key(boundary)
    keys = [version_key(v) for v in versions]
    if not keys or bound is None or (later and not holds(version_key(TRL.releases[-1]), bound)):
        return False
    return all(k is not None and holds(k, bound) for k in keys)


def _as_written(fact: Optional[Fact], new: str, written: Mapping) -> Optional[Fact]:
    """`fact`, read under its new name from the old key written (RLOO_RENAMED), named as written."""
    old = next((old for old, renamed in RLOO_RENAMED if renamed == new), None)
    if fact is None or old is None or new in written.items or old not in written.items:
        return fact
    return replace(fact, key=old, detail=f"TRL 0.22-0.24 read it as {new}")


def _renamed(root: Mapping) -> Mapping:
    """`root` with each old RLOO name written and its new one not read as the new one (its node, so a finding
    stands at the old key's value and names it)."""
    moved = {new: root.items[old] for old, new in RLOO_RENAMED if old in root.items and new not in root.items}
    if not moved:
        return root
    return replace(root, items={**root.items, **moved})


# TRL's distillation configs (GOLD, IW-OPD) also have num_generations and
# generation_batch_size, with another meaning: a per-device batch of prompts.
_DISTILLATION_KEYS = ("lmbda", "teacher_model_name_or_path", "teacher_model_init_kwargs")


# RLOOConfig of TRL 0.22.0-0.24.0 takes the first RLOOTrainer's names for the new ones: rloo_k is num_generations,
# num_mini_batches steps_per_generation (rloo_config.py:588-613 @ v0.22.0, the same @ v0.24.0); 0.25.0 drops them.
RLOO_RENAMED = (("rloo_k", "num_generations"), ("num_mini_batches", "steps_per_generation"))


def _rloo_names_renamed(path: str, view: ProjectView) -> bool:
    """Whether every TRL release the project may run reads rloo_k as num_generations (0.22.0-0.24.x, pinned)."""
    return (_every_release(path, lambda key, bound: key >= bound, "0.22.0", view)
            and _every_release(path, lambda key, bound: key < bound, "0.25.0", view))


def _grpo(root: Mapping, plan: TrainingPlan, grpo: bool = False, older: Callable[[], bool] = lambda: False,
          renamed: bool = False) -> Optional[RL]:
    """GRPOConfig/RLOOConfig's batch and what their `__post_init__` refuses
    (grpo_config.py:1096-1141, defaults 480-486 @ 1.16.0; rloo_config.py:659-704):
    the generation batch is generation_batch_size, else per_device_train_batch_size
    x W x steps_per_generation (default gradient_accumulation_steps), whole groups
    of num_generations (at least 2) and a whole number of per_device_train_batch_size
    x W; generation_batch_size and steps_per_generation exclude each other; with
    evaluation on, per_device_eval_batch_size (default 8) x W is whole groups of
    num_generations_eval (default num_generations). `grpo`: the program reads GRPOConfig, whose
    num_generations defaults to 8 (grpo_config.py:108-109 @ v0.14.0, :474-475 @ v1.9.0, 8 @ 1.16.0).
    `older()`: the release in force checks per_device_train_batch_size x W alone (TRL 0.15-0.16). `renamed`: the
    release in force reads the first RLOOTrainer's names as the new ones (RLOO_RENAMED), where those are unwritten."""
    written = root
    if renamed:
        root = _renamed(root)
    samples = number(root.get("num_generations"), "num_generations", default=8 if grpo else None)
    samples = _as_written(samples, "num_generations", written)
    if samples is None or any(k in root.items for k in _DISTILLATION_KEYS):
        return None
    micro, world = plan.micro_batch, plan.world_size
    given_steps = _as_written(number(root.get("steps_per_generation"), "steps_per_generation"), "steps_per_generation",
                              written)
    steps = given_steps or (Fact(1, "accumulation", None, Origin.DEFAULT, detail="not counted before TRL "
                                 f"{COUNTS_ACCUMULATION_SINCE}") if older() else plan.grad_accum)
    given = number(root.get("generation_batch_size"), "generation_batch_size")
    generation = given or product([micro, world, steps], "generation batch",
                                  f"{micro.describe()} x W ({world.value}) x {steps.describe()}"
                                  if micro and world and steps else None)  # no product without all three
    if generation is not None and micro is not None and generation.span is None and samples.span is None:
        generation = replace(generation, span=micro.span)  # num_generations unwritten: at the batch written
    checks = GenerationChecks(
        refusal="TRL refuses to start",
        group_baseline=Fact("the GRPO/RLOO trainer", "trainer", None, Origin.DEFAULT),
        step_batch=(micro, world or Fact(None, "world size")),
        exclusive=(given, given_steps) if given is not None and given_steps is not None else (),
    )
    rl = RL(samples_per_prompt=samples, generation_batch=generation,
            prompts_per_step=per_group(generation, samples),
            mini_batch=product([micro, world, plan.grad_accum], "optimizer-step batch"),
            micro_batch={"actor": micro} if micro is not None else {}, generation_checks=checks)
    strategy = root.get("eval_strategy")
    if isinstance(strategy, Scalar) and strategy.value in ("steps", "epoch") and world is not None:
        eval_micro = number(root.get("per_device_eval_batch_size"), "per_device_eval_batch_size", default=8)
        rl.eval_samples_per_prompt = number(root.get("num_generations_eval"), "num_generations_eval") or samples
        rl.eval_generation_batch = product([eval_micro, world], "evaluation batch",
                                           f"{eval_micro.describe()} x W ({world.value})")
        if rl.eval_generation_batch is not None:
            rl.eval_generation_batch = replace(rl.eval_generation_batch, span=eval_micro.span or strategy.span)
    return rl
