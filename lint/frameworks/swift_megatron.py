"""ms-swift Megatron YAML (`megatron sft/pt/rlhf config.yaml`; Ray configs with `train:`/`rollout:` groups).

micro_batch_size (default 1) and global_batch_size (default 16) as in
Megatron-LM; dp = W // (tensor x pipeline x context parallel size), the
global batch must divide by micro x dp and the accumulation is the quotient
(swift/megatron/arguments/megatron_args.py:480-483, 943-959); megatron core
needs W % (tp x pp x cp) == 0. A Ray config's `train:` group overrides the
shared keys and names the train group's GPUs (`train.gpus`,
swift/ray/megatron/driver_utils.py:87-170). Read through the ms-swift
adapter (swift.py), which tries this schema first; its rules are weighed
against ms-swift's releases (swift.MS_SWIFT).
"""

from __future__ import annotations

from ..document import Document, Mapping, Node, Scalar
from ..lean_dataclass import lean_dataclass
from ..plan import RL, Fact, GenerationChecks, Origin, Subject, TrainingPlan
from .facts import Outside, divide, flag, number, per_group

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import ClassVar, Optional

NAME = "swift-megatron"
# ms-swift 4.x: MegatronArguments.__post_init__ sets sequence_parallel = False with tp <= 1 and logs
# nothing (swift/megatron/arguments/megatron_args.py:660-661 @ v4.0.0, :943-944 @ 4.6.0), before
# Megatron-LM's own check sees it; 3.x leaves it to Megatron-LM's validate_args, which warns
# (megatron/training/arguments.py:850-853 @ core_r0.13.0).
SEQUENCE_PARALLEL_OFF = "it is turned off at start-up (ms-swift 4.x without a log line, 3.x with Megatron-LM's warning)"

DEGREES = {"tp": "tensor_model_parallel_size", "pp": "pipeline_model_parallel_size", "cp": "context_parallel_size"}


def plan(doc: Document, outside: Outside, world: Optional[Fact]) -> Optional[TrainingPlan]:
    """`world`: the world size the ms-swift adapter settled on; a Ray config's train.gpus wins over it."""
    if lookup(doc.root, "micro_batch_size") is None and lookup(doc.root, "global_batch_size") is None:
        return None
    world = _train_gpus(doc.root, outside) or world
    parallel = {short: number(lookup(doc.root, key), key, default=1) for short, key in DEGREES.items()}
    plan = TrainingPlan(
        framework=NAME,
        document=doc,
        micro_batch=number(lookup(doc.root, "micro_batch_size"), "micro_batch_size", default=1),
        world_size=world,
        target_global_batch=outside.target_global_batch,
        parallel=parallel,
        data_parallel=divide(world, list(parallel.values())),
        layout=tuple(parallel.values()),
        layout_exact=False,
        packing=flag(lookup(doc.root, "packing"), "packing"),
        seq_len=number(lookup(doc.root, "max_length"), "max_length"),
        sequence_parallel=flag(lookup(doc.root, "sequence_parallel"), "sequence_parallel"),
        sequence_parallel_off=SEQUENCE_PARALLEL_OFF,
    )
    declared = number(lookup(doc.root, "global_batch_size"), "global_batch_size")
    if declared is not None:  # the default 16 has no line to point at: left out
        plan.declared_global_batch, plan.derived_from_global = declared, "grad_accum"
    grpo_settings = grpo(doc.root) if getattr(lookup(doc.root, "rlhf_type"), "value", None) == "grpo" else None
    plan.settings = SwiftMegatronSettings(grpo=grpo_settings, tokenizing=tokenizing(doc.root, lookup),
                                          group_by_length=flag(lookup(doc.root, "group_by_length"), "group_by_length"),
                                          padding_free=padding_free(doc.root))
    if grpo_settings is not None:
        plan.rl = _rl(grpo_settings)
    return plan


@lean_dataclass(frozen=True)
class Tokenizing:
    """When ms-swift tokenizes: lazy_tokenize refuses packing and streaming (both schemas;
    swift/arguments/base_args/data_args.py and megatron_args.py @ 3602360). Each None unless
    written as true/false."""

    lazy_tokenize: Optional[Fact]
    packing: Optional[Fact]
    streaming: Optional[Fact]


def tokenizing(root: Mapping, get=Mapping.get) -> Tokenizing:
    """`get(root, key)`: where the schema keeps a key (the Megatron schema: a Ray config's train group)."""
    return Tokenizing(*(flag(get(root, key), key) for key in ("lazy_tokenize", "packing", "streaming")))


@lean_dataclass(frozen=True)
class Tokenized(Subject):
    """What both ms-swift schemas hold: when they tokenize (rules/swift/swift_lazy_tokenize_conflict.py)."""

    FRAMEWORKS: ClassVar[Optional[tuple[str, ...]]] = ("swift", NAME)

    tokenizing: Tokenizing  # lazy_tokenize and what it refuses


@lean_dataclass(frozen=True)
class SwiftMegatronSettings(Tokenized):
    """ms-swift Megatron's own arguments its rules read."""

    FRAMEWORKS = (NAME,)

    grpo: Optional[GRPO]  # rlhf_type: grpo only
    group_by_length: Optional[Fact]  # None unless written true/false
    padding_free: Optional[Fact]  # as it runs: see padding_free()


@lean_dataclass(frozen=True)
class GRPO:
    """The keys megatron_args.py reads to size a GRPO generation batch, with its
    defaults (74-76, 482-483): None where a key is unset and has no default."""

    global_batch_size: Fact
    steps_per_generation: Optional[Fact]
    generation_batch_size: Optional[Fact]
    num_generations: Fact
    micro_batch_size: Fact

    def generation_batch(self) -> tuple[object, str]:
        """(value, how) as resolve_generation_batch_size derives it, for settings whose every value is
        positive (`_rl` asks only then)."""
        given, steps, global_ = self.generation_batch_size, self.steps_per_generation, self.global_batch_size
        if given is not None:
            return given.value, given.describe()
        factor = (steps.count or 1) if steps is not None else 1
        how = global_.describe() + (f" x {steps.describe()}" if steps is not None else "")
        return (global_.count or 0) * factor, how


def grpo(root: Mapping) -> GRPO:
    return GRPO(global_batch_size=number(lookup(root, "global_batch_size"), "global_batch_size", default=16),
                steps_per_generation=number(lookup(root, "steps_per_generation"), "steps_per_generation"),
                generation_batch_size=number(lookup(root, "generation_batch_size"), "generation_batch_size"),
                num_generations=number(lookup(root, "num_generations"), "num_generations", default=8),
                micro_batch_size=number(lookup(root, "micro_batch_size"), "micro_batch_size", default=1))


def _rl(settings: GRPO) -> RL:
    """The GRPO batch and what megatron_args.py:260-341 refuses of it: a generation_batch_size
    that is not global_batch_size x steps_per_generation (both given) or not a whole number of
    global_batch_size; completions that are not whole groups; prompts that do not split over dp
    and each rank's share over micro_batch_size (validate_batch_dp_alignment)."""
    known = all(f is None or f.positive for f in vars(settings).values())
    given, steps, global_ = settings.generation_batch_size, settings.steps_per_generation, settings.global_batch_size
    generation = alternative = None
    if known:
        value, how = settings.generation_batch()
        at = next((f.span for f in (steps, global_, settings.num_generations) if f is not None and f.span), None)
        generation = given or Fact(value, "generation batch", at, Origin.DERIVED, detail=how)
        if given is not None and steps is not None:
            alternative = Fact((global_.count or 0) * (steps.count or 0), "global_batch_size x steps_per_generation", steps.span,
                               Origin.DERIVED, detail=f"{global_.describe()} x {steps.describe()}")
    checks = GenerationChecks(refusal="ms-swift refuses to start", step_batch=(global_,) if given else (),
                              alternative=alternative, split_over_dp=True)
    return RL(samples_per_prompt=settings.num_generations, generation_batch=generation,
              prompts_per_step=per_group(generation, settings.num_generations),
              mini_batch=global_, micro_batch={"actor": settings.micro_batch_size}, generation_checks=checks)


def lookup(root: Mapping, key: str) -> Optional[Node]:
    """A key of the train group when a Ray config gives one there, else the shared (top-level) one."""
    train = root.get("train")
    if isinstance(train, Mapping) and key in train.items:
        return train.items[key]
    return root.get(key)


def padding_free(root: Mapping) -> Optional[Fact]:
    """padding_free as it runs: forced on by packing (megatron_base_args.py:35-37), default true
    (megatron_args.py:524); None when written as something else than true/false."""
    packing = flag(lookup(root, "packing"), "packing")
    if packing is not None and packing.value:
        return packing
    node = lookup(root, "padding_free")
    if node is None:
        return Fact(True, "padding_free", None, Origin.DEFAULT)
    return flag(node, "padding_free")  # None when not a plain true/false


def _train_gpus(root: Mapping, outside: Outside) -> Optional[Fact]:
    if outside.world_size is not None and outside.world_size.origin is Origin.DIRECTIVE:
        return None
    gpus = root.get("train", "gpus")
    if isinstance(gpus, Scalar) and isinstance(gpus.value, int) and not isinstance(gpus.value, bool) and gpus.value > 0:
        return Fact(gpus.value, "world size", gpus.span, Origin.FILE, detail="train.gpus")
    return None
