"""TrainingPlan: the batch facts of one config, whatever framework wrote it.

Adapters fill a plan; rules read it. Every fact carries its value, the key
the user knows it by, and where it came from, so a finding can quote both the
numbers and their lines.
"""

from __future__ import annotations

import enum
import functools

from .document import Document, Node, Span
from .lean_dataclass import field, fields, is_lean_dataclass, lean_dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import ClassVar, Optional, TypeVar

    from .change import Change
    from .frameworks.training_arguments import TrainerArguments
    from .project import ProjectView
    S = TypeVar("S", bound="Subject")


class Origin(enum.Enum):
    """Where a fact's value came from. `Fact.detail` says more: the formula of a
    derived value, the launch line, the flag, the release whose default it is."""

    FILE = "file"  # written in the file (its span says where)
    DEFAULT = "default"  # the framework's default
    DERIVED = "derived"  # computed from other facts
    LAUNCH = "launch line"  # the launch line that runs the config
    DIRECTIVE = "directive"  # a `# batchlint:` directive
    COMMAND_LINE = "command line"  # --world-size, --global-batch
    PROJECT = "project config"  # [tool.batchlint]


# How each origin reads in a message, with `detail` filled in.
_PROVENANCE = {
    Origin.DERIVED: "derived: {detail}",
    Origin.LAUNCH: "from the launch line: {detail}",
    Origin.DIRECTIVE: "from the batchlint directive",
    Origin.COMMAND_LINE: "from {detail}",
    Origin.PROJECT: "from the project config",
}


def _filled(value: object) -> bool:
    """Present: not None, and not an empty layout or table."""
    # A Fact is never equal to () or {}: spared the two comparisons (each a call to its __eq__).
    return type(value) is Fact or (value is not None and value != () and value != {})


@functools.lru_cache(maxsize=64)
def _by_field(names: frozenset) -> tuple:
    """`names` ("micro_batch", "parallel.tp") grouped by plan field: ((field, ((name, member), ...)), ...)."""
    groups: dict = {}
    for name in sorted(names):
        head, _, member = name.partition(".")
        groups.setdefault(head, []).append((name, member))
    return tuple((head, tuple(members)) for head, members in groups.items())


@lean_dataclass(frozen=True)
class Fact:
    value: object
    key: str  # the name the user knows it by: "accumulative_counts", "[training] local_batch_size"
    span: Optional[Span] = None  # None: not written in this file
    origin: Origin = Origin.FILE
    node: Optional[Node] = None  # Python configs: how the value was derived
    detail: str = ""  # see Origin

    @property
    def known(self) -> bool:
        return isinstance(self.value, int) and not isinstance(self.value, bool)

    @property
    def positive(self) -> bool:
        """Known and at least 1: a value a batch size, count or degree can take
        (a rule that divides by it, or by a product of such values, is safe)."""
        return self.count is not None

    @property
    def number(self) -> Optional[int]:
        """The value when known (an int, not a bool), else None: typed, for arithmetic."""
        value = self.value
        return value if type(value) is int else None

    @property
    def count(self) -> Optional[int]:
        """The value when positive (a batch size, count or degree can take it), else None."""
        value = self.value
        return value if type(value) is int and value > 0 else None

    @property
    def provenance(self) -> str:
        """Where the value came from, as a message says it."""
        template = _PROVENANCE.get(self.origin)
        return template.format(detail=self.detail) if template else (self.detail or self.origin.value)

    def describe(self) -> str:
        """`key (value)` plus where a value not written in the file came from."""
        if self.origin is Origin.FILE and not self.detail:
            return f"{self.key} ({self.value})"
        if self.origin is Origin.DEFAULT and not self.detail:
            return f"{self.key} (default {self.value})"
        return f"{self.key} ({self.value}, {self.provenance})"


class Subject:
    """What a rule judges, typed: a framework's settings (`TrainingPlan.settings`), or another part of a
    plan that names its own `of`. A rule declares it (`Rule(subject=TheSettings)`) and its check takes it
    (`check(plan, settings)`); the engine runs the rule only on plans where `of` finds one.
    `FRAMEWORKS` says whose plans hold it (None: any framework's): what `batchlint rule` shows as
    "applies to"."""

    __slots__ = ()
    FRAMEWORKS: ClassVar[Optional[tuple[str, ...]]] = None

    @classmethod
    def of(cls: type[S], plan: TrainingPlan) -> Optional[S]:
        settings = plan.settings
        return settings if isinstance(settings, cls) else None


@lean_dataclass(frozen=True)
class GenerationChecks:
    """What a framework refuses at start-up about its generation batch. The adapter
    says which checks its framework makes and how the refusal reads; one generic
    rule (BL170) does the arithmetic for every framework."""

    refusal: str  # how the framework's refusal reads: "TRL refuses to start"
    # What computes advantages within each prompt's group of samples, so that one
    # sample per prompt is refused (GRPO itself, a group estimator); None: n = 1 is accepted.
    group_baseline: Optional[Fact] = None
    # Factors whose product the generation batch must be a whole number of (TRL: the
    # per-device batch and W; ms-swift: global_batch_size). An unknown factor (W) is
    # left out: what fails without it fails for every value it can take.
    step_batch: tuple[Optional[Fact], ...] = ()
    # More batches it must be a whole number of, each a tuple of factors as step_batch (EasyR1: the
    # experience micro batch, and a critic's mini-batch).
    multiples: tuple[tuple[Optional[Fact], ...], ...] = ()
    # Two written keys the framework refuses together (TRL: generation_batch_size
    # and steps_per_generation), whatever their values.
    exclusive: tuple[Fact, ...] = ()
    # The generation batch as the other keys give it, when the framework accepts both
    # ways only if they agree (ms-swift: global_batch_size x steps_per_generation).
    alternative: Optional[Fact] = None
    # The prompts are shared by the dp ranks, each rank's share in micro batches (ms-swift).
    split_over_dp: bool = False
    # Every one of the W ranks needs a whole group (axolotl).
    group_per_rank: bool = False


@lean_dataclass
class RL(Subject):
    """The batch vocabulary of RL training (GRPO, RLOO, PPO), whatever the
    framework calls each number. Each Fact's key is the framework's own name
    (or, derived, its formula in `detail`), so a finding quotes what the user wrote.
    The subject of the rules about RL batches, in any framework."""

    @classmethod
    def of(cls, plan: TrainingPlan) -> Optional[RL]:
        return plan.rl

    algorithm: Optional[Fact] = None  # as written: "grpo", "dpo", "kto", ... (axolotl rl, ms-swift rlhf_type)
    samples_per_prompt: Optional[Fact] = None  # completions sampled per prompt: the group size
    prompts_per_step: Optional[Fact] = None  # prompts drawn per generation round
    generation_batch: Optional[Fact] = None  # completions per generation round (prompts x samples)
    mini_batch: Optional[Fact] = None  # what one optimizer step consumes, in the framework's unit (its key says)
    # Optimizer steps per generation round, where the framework sets their number rather than the
    # mini batch (its detail says when it is only a bound).
    optimizer_steps: Optional[Fact] = None
    micro_batch: dict[str, Fact] = field(default_factory=dict)  # role ("actor", "critic") -> per-GPU micro batch
    # role -> micro-steps per mini-batch (its gradient accumulation), where the framework derives it per role.
    accumulation: dict[str, Fact] = field(default_factory=dict)
    # Evaluation's own generation batch and group size, where evaluation samples groups too.
    eval_generation_batch: Optional[Fact] = None
    eval_samples_per_prompt: Optional[Fact] = None
    # What the framework checks of the generation batch at start-up (None: nothing).
    generation_checks: Optional[GenerationChecks] = None


@lean_dataclass
class TrainingPlan:
    framework: str
    document: Document
    micro_batch: Optional[Fact] = None
    grad_accum: Optional[Fact] = None
    world_size: Optional[Fact] = None
    # Parallel degrees by short name: sp, cp, tp, pp, ep, dp_replicate, dp_shard.
    parallel: dict[str, Fact] = field(default_factory=dict)
    # dp as the framework computes it; the adapter knows the formula.
    data_parallel: Optional[Fact] = None
    # What dp is a multiple of whatever W is (TorchTitan's replicate degree
    # when the shard degree is -1), for verdicts that hold for every W.
    data_parallel_factor: Optional[Fact] = None
    # A global batch written in the file (TorchTitan global_batch_size,
    # DeepSpeed train_batch_size).
    declared_global_batch: Optional[Fact] = None
    # The sequences one optimizer step consumes where the framework fixes them but not the
    # micro batch (verl's dynamic batching: mini batch x samples per prompt, micro batches
    # packed by tokens). Used only when micro x GA x dp is not known.
    step_batch: Optional[Fact] = None
    # Dynamic batching: each micro batch is packed up to this many tokens per GPU, so its
    # number of sequences (and the micro-steps per optimizer step) varies.
    micro_tokens: Optional[Fact] = None
    # The factor the framework derives from the declared global batch by
    # floor division ("grad_accum" or "micro_batch"; "device_batch": the per-device
    # batch, global / dp, refused with a remainder, then split into micro batches),
    # or None when the framework instead asserts declared == micro x GA x dp.
    derived_from_global: Optional[str] = None
    # The global batch the user says they mean (option, project config, directive).
    target_global_batch: Optional[Fact] = None
    # Parallel degrees whose product must equal W (layout_exact) or divide it.
    # One of them may be -1: "the ranks left over" (TorchTitan's shard degree).
    layout: tuple[Fact, ...] = ()
    layout_exact: bool = True
    # What the batch facts count when not sequences: "tokens" (micro batch, declared global
    # batch and the global batch are token counts: TorchTitan's registries after v0.2.2).
    unit: str = ""
    seq_len: Optional[Fact] = None
    # What seq_len must be a multiple of; its `source` says which check demands it.
    seq_len_multiple: Optional[Fact] = None
    # Megatron-style sequence parallelism: a flag that only acts with tp > 1.
    sequence_parallel: Optional[Fact] = None
    # What the framework does with that flag at tp = 1, as a message says it ("Megatron-LM warns and turns it off").
    sequence_parallel_off: str = ""
    # Mixed precision as written, or the framework's default where that is certain.
    fp16: Optional[Fact] = None
    bf16: Optional[Fact] = None
    # The attention implementation: its name, "unknown" when it cannot be told, None
    # when nothing chooses one (the span is where it is chosen).
    attention: Optional[Fact] = None
    # Gradient clipping (a float), written or the framework's default.
    max_grad_norm: Optional[Fact] = None
    # What leaves the data without a length (streaming, dynamic batching): value
    # True ("<key> is enabled") or the setting that does it ("<key> is <value>").
    unsized_data: Optional[Fact] = None
    max_steps: Optional[Fact] = None  # as written
    # The step interval evaluation falls back to when eval_steps is unset (a
    # positive int, or a float ratio of the training steps), written or the default.
    logging_steps: Optional[Fact] = None
    packing: Optional[Fact] = None
    eval_packing: Optional[Fact] = None  # packing of the evaluation data, where it has its own switch
    length_grouping: Optional[Fact] = None
    # The text that turns length_grouping off where it is written, for --fix
    # (None: no one-value edit, e.g. a sampler class to replace).
    length_grouping_off: Optional[str] = None
    sampler: Optional[Fact] = None
    # RL training only (None for supervised training).
    rl: Optional[RL] = None
    # The adapter's own typed settings, the subject of its framework's rules (ms-swift Megatron's
    # GRPO keys, TRL's SFT arguments): each framework's class of Subject.
    settings: Optional[Subject] = None
    # What the framework label rests on where it is decided by more than the file's own schema (a
    # launch line's program out of view read as TRL's by its name or keys): `--show-files` says it.
    basis: str = ""
    # The Hugging Face Trainer's own arguments (save/eval strategy, the linked
    # DeepSpeed config), typed by training_arguments.py for every adapter built on it.
    trainer: Optional[TrainerArguments] = None
    # The same job before the change under review (`check --since REV`: lint/change.py), where the
    # change touches a file it reads: the evidence of what the change did to its batch.
    change: Optional[Change] = None
    # The project as the adapter read it (lint/project.py): a rule that asks which release the project
    # runs, or reads a copy of the framework in it, reads through this view, as the adapter did.
    project: Optional[ProjectView] = field(default=None, compare=False)

    def fact(self, name: str) -> object:
        """A fact by the name a rule's `needs` gives: a field ("micro_batch") or a
        member of one ("parallel.tp", "rl.samples_per_prompt")."""
        head, _, member = name.partition(".")
        value = getattr(self, head)
        if not member or value is None:
            return value
        return value.get(member) if isinstance(value, dict) else getattr(value, member, None)

    def has(self, name: str) -> bool:
        """Present: filled by the adapter (not None; a layout or table not empty).
        Present does not mean known: a rule still checks `Fact.known`."""
        return _filled(self.fact(name))

    def present(self, names: frozenset) -> set:
        """The members of `names` the plan has (as `has` tells each), each field looked up
        once: what picking the rules for a plan asks, for every fact any rule needs."""
        found = set()
        for head, members in _by_field(names):
            value = getattr(self, head)
            if value is None:
                continue
            table = isinstance(value, dict)
            for name, member in members:
                if not member:
                    fact = value
                else:
                    fact = value.get(member) if table else getattr(value, member, None)
                if _filled(fact):
                    found.add(name)
        return found

    def facts(self) -> list:
        """Every Fact the plan holds: its fields, and the tables, tuples and typed settings below
        them (a framework's settings dataclass), at most a few thousand."""
        found, stack, seen = [], [getattr(self, f.name) for f in fields(self) if f.name != "document"], 0
        while stack and seen < 5000:
            value = stack.pop()
            seen += 1
            if isinstance(value, Fact):
                found.append(value)
            elif isinstance(value, dict):
                stack.extend(value.values())
            elif isinstance(value, (list, tuple)):
                stack.extend(value)
            elif is_lean_dataclass(value) and not isinstance(value, (Document, Node)):
                stack.extend(getattr(value, f.name, None) for f in fields(value))
        return found

    def factor(self, name: str) -> Optional[Fact]:
        return getattr(self, name)

    def produced_global_batch(self) -> Optional[tuple]:
        """(value, formula) of micro x GA x dp when every factor is known."""
        micro, ga, dp = self.micro_batch, self.grad_accum, self.data_parallel
        m, g, d = (f.number if f is not None else None for f in (micro, ga, dp))
        if micro is None or ga is None or dp is None or m is None or g is None or d is None:
            return None
        value = m * g * d
        formula = f"{micro.describe()} x {ga.describe()} x dp ({dp.value})"
        return value, formula

    def accumulation(self) -> Optional[Fact]:
        """Gradient accumulation as written, or as the framework derives it from
        the declared global batch (TorchTitan, Megatron): global // (micro x dp)."""
        if self.grad_accum is not None or self.derived_from_global != "grad_accum":
            return self.grad_accum
        return self._from_declared(self.micro_batch, "gradient accumulation")

    def micro(self) -> Optional[Fact]:
        """The micro batch as written, or as the framework derives it from the declared global batch
        (DeepSpeed without train_micro_batch_size_per_gpu): global // (accumulation x dp)."""
        if self.micro_batch is not None or self.derived_from_global != "micro_batch":
            return self.micro_batch
        return self._from_declared(self.grad_accum, "micro batch")

    def _from_declared(self, other: Optional[Fact], name: str) -> Optional[Fact]:
        """The factor of the declared global batch left unwritten: global // (`other` x dp); None where a
        factor is unknown or the division is not whole (the framework refuses to start)."""
        declared, dp = self.declared_global_batch, self.data_parallel
        total, each, d = (f.count if f is not None else None for f in (declared, other, dp))
        if declared is None or other is None or total is None or each is None or d is None or total % (each * d):
            return None
        shown = f"{declared.key} {total} // ({other.key} {each} x dp {d})"
        return Fact(total // (each * d), name, None, Origin.DERIVED, detail=shown)

    def effective_global_batch(self) -> Optional[tuple]:
        """The global batch the job trains with: the declared one where the
        framework derives a factor from it, else micro x GA x dp."""
        declared = self.declared_global_batch
        if declared is not None and declared.known and self.derived_from_global:
            return declared.value, declared.describe()
        produced = self.produced_global_batch()
        step = self.step_batch
        if produced is None and step is not None and step.known:
            return step.value, step.describe()
        return produced
