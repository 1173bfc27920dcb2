"""verl YAML (Hydra) configs: the PPO trainer (`ppo_trainer.yaml`,
`ppo_megatron_trainer.yaml` and the user configs composed over them) and the
FSDP SFT trainer (`sft_trainer.yaml`).

A verl file is usually partial: Hydra composes it over the trainer's defaults
and shell scripts override it again. Its `defaults:` list is composed as Hydra
composes it (lint/sources/hydra.py) from the project's configs and the trainer's
config folder of the copy of verl the project holds (CONFIGS), and a launch line's
settings over the config it names (`--config-name`, else main_ppo.py's
ppo_trainer), each value keeping its file and line. A fact is what the composed
config writes, else verl's own default (`DEFAULTS`, read in verl/trainer/config
@ b178a3c: a config composed over an installed verl). Hydra reads it through
OmegaConf: its interpolations (`${data.train_batch_size}`,
`${oc.select:actor_rollout_ref.actor.ppo_mini_batch_size,256}`) are followed, after
the launch line's overrides (lint/sources/omegaconf.py); one to a key the file does
not write, when its `defaults:` list is not composed, stays unknown.

World size: the PPO trainer's resource pool is trainer.n_gpus_per_node x
trainer.nnodes (verl/trainer/main_ppo.py `init_resource_pool_mgr`), so a file
that writes n_gpus_per_node gives its own W (a W from the user wins). The SFT
trainer runs under torchrun and never reads those keys: its W only comes from
the user.

PPO rules read the per-role settings in `plan.settings` (a VerlSettings, the subject
`VerlSettings.of(plan)` finds; SFT plans hold none; `PPOSettings` is what EasyR1's plans
share with verl's); the generic plan
carries the Ulysses (FSDP) or Megatron layout for BL202 and, for SFT, the
global batch for BL103.
"""

from __future__ import annotations

import functools
import math
import re

from ..document import Document, Mapping, Scalar
from ..lazy_pattern import LazyPattern
from ..lean_dataclass import lean_dataclass, replace
from ..plan import RL, Fact, Origin, Subject, TrainingPlan
from ..sources.hydra import framework_default
from .facts import Outside, divide, number, product
from .releases import VERL as DISTRIBUTION, VERL_RELEASES as RELEASES
from .spec import HYDRA, HYDRA_COMPOSED, Count, Framework, Launcher

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import ClassVar, Optional

    from ..premise import Premise
    from ..project import ProjectView


NAME = "verl"
FORMATS = ("yaml",)
MARKERS = (b"actor_rollout_ref", b"partial_pretrain")

# W of the PPO trainer: trainer.n_gpus_per_node x trainer.nnodes (main_ppo.py `init_resource_pool_mgr`),
# defaults from verl/trainer/config/ppo_trainer.yaml. One policy for the launch line and the adapter.
GPUS_PER_NODE = Count(key="trainer.n_gpus_per_node", default=8, source="verl/trainer/config/ppo_trainer.yaml")
NODES = Count(key="trainer.nnodes", default=1, source="verl/trainer/config/ppo_trainer.yaml")
# `python3 -m verl.trainer.main_ppo a.b=c ...`: Hydra overrides forming the whole config.
LAUNCHERS = (Launcher("verl", modules=("verl.trainer.main_*",), markers=(b"verl.trainer",), nproc=GPUS_PER_NODE,
                      nnodes=NODES, flags=HYDRA, config_files=False, inline=True),
             # The SFT trainer runs under torchrun (`torchrun --nproc_per_node=8 -m verl.trainer.fsdp_sft_trainer
             # data.micro_batch_size_per_gpu=4 ...`), which gives W; its Hydra overrides are the config.
             Launcher("verl", modules=("verl.trainer.fsdp_sft_trainer", "verl.trainer.sft_trainer"),
                      markers=(b"verl.trainer",), flags=HYDRA, config_files=False, inline=True))
# Its trainers' Hydra configs (main_ppo.py `@hydra.main(config_path="config")`), in a copy of verl.
CONFIGS = ("verl/trainer/config",)
# The trainer configs that folder holds (@ b178a3c), which a project using an installed verl names.
CONFIG_NAMES = ("ppo_trainer", "ppo_megatron_trainer", "sft_trainer", "sft_trainer_engine", "generation",
                "evaluation", "reward_manager", "_generated_ppo_trainer", "_generated_ppo_megatron_trainer")
FRAMEWORK = Framework(NAME, FORMATS, MARKERS, order=70, launchers=LAUNCHERS, distribution=DISTRIBUTION,
                      interpolation=HYDRA_COMPOSED, configs=CONFIGS, config_names=CONFIG_NAMES)

# The PPO trainer's key set in a copy of verl: the flattened configs verl ships since 0.5 (its
# ppo_trainer.yaml composes others then), or before that the plain ppo_trainer.yaml itself.
KEY_SOURCES = (("verl/trainer/config/_generated_ppo_trainer.yaml", "verl/trainer/config/_generated_ppo_megatron_trainer.yaml"),
               ("verl/trainer/config/ppo_trainer.yaml", "verl/trainer/config/ppo_megatron_trainer.yaml"))


def keys_from_source(read) -> Optional[frozenset]:
    """Every dotted key of the PPO trainer config of a verl source tree; `read(relative path)`
    gives a file's text or None. None when the tree has neither form (a composed config
    without the flattened one: its keys are the composition's, not read here)."""
    for names in KEY_SOURCES:
        texts = [read(name) for name in names]
        if texts[0] is None:
            continue
        found: set = set()
        for name, text in zip(names, texts):
            if text is None:
                continue
            keys = _flattened_keys(name, text)
            if keys is None:
                return None
            found |= keys
        return frozenset(found) or None
    return None


@functools.lru_cache(maxsize=16)
def _flattened_keys(name: str, text: str) -> Optional[frozenset]:
    """The dotted keys of one flattened trainer config (empty for a composed one); None when it
    cannot be read. Cached by text: every verl launch line of a run asks for the same copy's."""
    from ..document import LimitExceeded, ParseError
    from ..keysets import dotted_keys
    from ..sources.yaml import read_yaml

    try:
        root = read_yaml(name, text).root
    except (LimitExceeded, ParseError):
        return None
    return frozenset(dotted_keys(root)) if isinstance(root, Mapping) and "defaults" not in root.items else frozenset()

ACTOR = "actor_rollout_ref.actor"
ROLLOUT_TP = "actor_rollout_ref.rollout.tensor_model_parallel_size"
# The rollout's other degrees (0.6.0 on, rollout/rollout.yaml:53,59 default 1): the mesh is tp x dp x pp.
_ROLLOUT_OTHER_DEGREES = ("actor_rollout_ref.rollout.data_parallel_size",
                          "actor_rollout_ref.rollout.pipeline_model_parallel_size")
# Defaults of the keys the rules read (verl/trainer/config @ b178a3c).
DEFAULTS = {
    "data.train_batch_size": 1024,  # data/legacy_data.yaml
    "data.max_prompt_length": 512,  # data/legacy_data.yaml:35
    "data.max_response_length": 512,  # data/legacy_data.yaml:39
    "actor_rollout_ref.rollout.n": 1,  # rollout/rollout.yaml
    f"{ACTOR}.ppo_mini_batch_size": 256,  # actor/actor.yaml
    f"{ACTOR}.ulysses_sequence_parallel_size": 1,  # actor/dp_actor.yaml
    "actor_rollout_ref.model.use_remove_padding": True,  # model/hf_model.yaml
    "critic.model.use_remove_padding": False,  # critic/dp_critic.yaml
    "critic.ulysses_sequence_parallel_size": 1,  # critic/dp_critic.yaml
    NODES.key: NODES.default,  # ppo_trainer.yaml
    f"{ACTOR}.megatron.tensor_model_parallel_size": 1,  # engine/megatron.yaml
    f"{ACTOR}.megatron.pipeline_model_parallel_size": 1,
    f"{ACTOR}.megatron.context_parallel_size": 1,
    # The rollout's tensor parallel degree: 2 in every release (ppo_trainer.yaml:63 @ v0.1, :116 @ v0.4.0;
    # rollout/rollout.yaml:41 @ v0.5.0, :50 @ v0.7.0 and b178a3c), so a one-GPU run must write 1.
    ROLLOUT_TP: 2,
    f"{ACTOR}.ppo_epochs": 1,  # actor/actor.yaml
}
FSDP = ("fsdp", "fsdp2")


@lean_dataclass(frozen=True)
class Role:
    """The PPO batch settings of one trained model: the actor or the critic."""

    name: str  # "actor" | "critic"
    strategy: Optional[str]  # "fsdp", "fsdp2", "megatron"; None: unknown
    # None where the file writes null.
    mini: Optional[Fact]  # ppo_mini_batch_size (prompts)
    micro: Optional[Fact]  # ppo_micro_batch_size_per_gpu (sequences)
    sp: Optional[Fact]  # ulysses_sequence_parallel_size
    rollout_n: Optional[Fact]
    dynamic: Optional[bool]  # use_dynamic_bsz; None: unknown
    remove_padding: Fact
    # The critic inherits most values from the actor: its checks only run on
    # what its own section writes, so one mistake is reported once.
    own: bool = True

    @property
    def fsdp(self) -> bool:
        return self.strategy in FSDP


@lean_dataclass(frozen=True)
class MicroBatchKeys:
    """One micro batch verl takes from two keys: the deprecated global one and its
    per-GPU replacement (verl/workers/config/actor.py:178-184, critic.py:104-105 and
    143-153, verl/utils/config.py:117-168 @ b178a3c). Each as written when an integer, else None."""

    role: Role  # the trained model whose use_dynamic_bsz governs it
    deprecated: Optional[Fact]  # key: its dotted path
    per_gpu: Optional[Fact]

    @property
    def per_gpu_name(self) -> str:
        """The replacement's own name, without its section (the rule names it only when written)."""
        return self.per_gpu.key.rpartition(".")[2] if self.per_gpu is not None else ""


@lean_dataclass(frozen=True)
class PPOSettings(Subject):
    """The PPO batch settings verl's trainer and workers read, which EasyR1 (a fork) builds too: the
    subject of the rules that judge both frameworks' plans."""

    FRAMEWORKS: ClassVar[Optional[tuple[str, ...]]] = (NAME, "easyr1")

    train_batch: Optional[Fact]  # None where the file writes null
    actor: Role
    critic: Optional[Role]  # None: the critic is not trained (or not known to be)
    legacy_workers: bool  # verl/workers/fsdp_workers.py (trainer.use_legacy_worker_impl != disable)
    megatron: dict[str, Optional[Fact]]  # tp, pp, cp of the Megatron actor
    # The actor's, the rollout's (governed by the actor) and the trained critic's.
    micro_batch_keys: tuple[MicroBatchKeys, ...] = ()
    # Who refuses, as a message names it (forks of verl build this type too: lint/frameworks/easyr1.py).
    label: str = "verl"
    # Start-up checks the verl the project runs makes (a copy in the project may predate them: `refuses`).
    checks_mini_within_train: bool = True  # train_batch_size >= each ppo_mini_batch_size
    checks_micro_set_once: bool = True  # not both a deprecated micro batch and its _per_gpu key
    checks_sp_remove_padding: bool = True  # Ulysses sp > 1 only with use_remove_padding (FSDP roles)
    # train_batch_size x rollout.n divisible by the minimal batch; without the check an FSDP job still fails,
    # at its first step, splitting the prompts over the W ranks (protocol.py DataProto.chunk asserts it).
    checks_train_batch_divisible: bool = True
    # The rollout's tensor parallel degree, which must divide W (BL261); None where another rollout degree
    # (0.6.0's data_parallel_size, pipeline_model_parallel_size) is written other than 1: not judged.
    rollout_tp: Optional[Fact] = None
    # The prompts of one step are split over the W ranks before rollout.n repeats them (BL182).
    generates_unrepeated: bool = False
    # actor_rollout_ref.rollout.n_agent, where the project's copy of verl repeats each step's prompts by it
    # before anything else (Search-R1's and its forks' ray_trainer.py `batch.repeat(repeat_times=...n_agent)`).
    agents: Optional[Fact] = None

    @property
    def step_prompts(self) -> Optional[Fact]:
        """The prompts a step's data holds: train_batch_size, times n_agent where the copy repeats by it (what
        the rollout splits over the ranks and the actor splits into mini-batches; the start-up checks read
        train_batch_size as written)."""
        train, agents = self.train_batch, self.agents
        if train is None or agents is None:
            return train
        found = product([train, agents], "prompts per step")
        return replace(found, span=train.span) if found is not None else None

    def train_multiple(self, divisor: int, per_prompt: int = 1, agents: bool = True) -> int:
        """What train_batch_size must be a multiple of for train_batch_size x per_prompt (x n_agent, where the
        copy repeats by it and `agents`) to divide by `divisor`: a fix's step."""
        times = self.agents.count if agents and self.agents is not None and self.agents.count else 1
        return divisor // math.gcd(divisor, per_prompt * times)


@lean_dataclass(frozen=True)
class VerlSettings(PPOSettings):
    """verl's own PPO trainer settings (`plan.settings` of a verl PPO plan; SFT plans hold none): the
    subject of the rules about verl alone."""

    FRAMEWORKS = (NAME,)


def plan(doc: Document, outside: Outside):
    root = doc.root
    if isinstance(root.get("actor_rollout_ref"), Mapping):
        return _ppo_plan(doc, outside)
    if isinstance(root.get("model", "partial_pretrain"), Scalar) and isinstance(root.get("data"), Mapping):
        return _sft_plan(doc, outside)
    return None


# -- PPO ---------------------------------------------------------------------------------

# (section, deprecated key) of each micro batch verl still reads the old way.
_ACTOR_MICRO_KEYS = ((ACTOR, "ppo_micro_batch_size"), ("actor_rollout_ref.rollout", "log_prob_micro_batch_size"))
_CRITIC_MICRO_KEYS = (("critic", "ppo_micro_batch_size"),)


def _read_ppo(root: Mapping) -> VerlSettings:
    default_strategy = "megatron" if _composes_megatron(root) else "fsdp"
    actor = _actor(root, default_strategy)
    critic = _critic(root, actor, default_strategy) if _critic_used(root) else None
    pairs = [(actor, keys) for keys in _ACTOR_MICRO_KEYS] + [(critic, keys) for keys in _CRITIC_MICRO_KEYS if critic]
    return VerlSettings(
        train_batch=_number(root, "data.train_batch_size"),
        actor=actor,
        critic=critic,
        legacy_workers=_text(root, "trainer.use_legacy_worker_impl", "auto") in ("auto", "enable"),
        megatron={
            short: _number(root, f"{ACTOR}.megatron.{key}")
            for short, key in (("tp", "tensor_model_parallel_size"), ("pp", "pipeline_model_parallel_size"),
                               ("cp", "context_parallel_size"))
        },
        micro_batch_keys=tuple(
            MicroBatchKeys(role, _integer(root, f"{section}.{key}"), _integer(root, f"{section}.{key}_per_gpu"))
            for role, (section, key) in pairs
        ),
    )


def _in_verl_configs(span) -> bool:
    """A value read from verl's own trainer configs, also where the project holds a copy of them
    (`hydra.searchpath: file://verl/trainer/config`): verl's default, not the project's choice."""
    path = (getattr(span, "path", None) or "").replace("\\", "/")
    return any(path.startswith(folder + "/") or f"/{folder}/" in path for folder in CONFIGS)


def _rollout_tp(doc: Document) -> Optional[Fact]:
    """actor_rollout_ref.rollout.tensor_model_parallel_size, its default 2 when unwritten (origin
    "default", also when a composed config brings it from verl's own rollout config)."""
    root = doc.root
    for key in _ROLLOUT_OTHER_DEGREES:
        other = _number(root, key, table={key: 1})
        if other is None or other.value != 1:
            return None
    node = _node(root, ROLLOUT_TP)
    if isinstance(node, Scalar) and (framework_default(doc, node.span) or _in_verl_configs(node.span)):
        return Fact(node.value, ROLLOUT_TP, None, Origin.DEFAULT)
    return _number(root, ROLLOUT_TP)


def _ppo_plan(doc: Document, outside: Outside) -> TrainingPlan:
    world = outside.world_size or _file_world_size(doc)
    view = outside.view
    settings = replace(_read_ppo(doc.root), checks_mini_within_train=refuses(doc.path, "mini_within_train", view),
                       checks_micro_set_once=refuses(doc.path, "micro_set_once", view),
                       checks_sp_remove_padding=refuses(doc.path, "sp_remove_padding", view),
                       checks_train_batch_divisible=refuses(doc.path, "train_batch_divisible", view),
                       rollout_tp=_rollout_tp(doc), generates_unrepeated=_generates_unrepeated(doc.path, view),
                       agents=_agents(doc, view))
    actor = settings.actor
    plan = TrainingPlan(
        framework=NAME,
        document=doc,
        world_size=world,
        target_global_batch=outside.target_global_batch,
        micro_batch=actor.micro,
        layout_exact=False,
    )
    if actor.strategy == "megatron":
        # verl/utils/config.py validate_config: n_gpus % (tp x pp x cp) == 0.
        plan.parallel = {k: v for k, v in settings.megatron.items() if v is not None}
        plan.layout = _layout(settings.megatron[k] for k in ("tp", "pp", "cp"))
    elif actor.fsdp and actor.sp is not None:
        # fsdp_workers.py builds a (W // sp, sp) device mesh.
        plan.parallel = {"sp": actor.sp}
        plan.layout = _layout([actor.sp])
    plan.data_parallel = divide(world, list(plan.layout)) if plan.layout else None
    if actor.micro is None:
        micro = _micro_from_deprecated(settings, plan.data_parallel, _scales_micro_by_n(doc.path, actor.strategy, view))
        if micro is not None:
            plan.micro_batch = micro
            actor = replace(actor, micro=micro)
    plan.grad_accum = role_accumulation_steps(actor, plan.data_parallel)
    if actor.dynamic:
        plan.step_batch = dynamic_step_batch(actor, plan.data_parallel)
        plan.micro_tokens = _token_budget(doc.root, actor, plan.parallel)
    plan.seq_len = sequence_length(doc.root)
    plan.rl = _rl(settings)
    plan.rl.accumulation = _role_accumulation(settings, plan.grad_accum, world)
    plan.rl.optimizer_steps = remainder_steps(settings, _number(doc.root, f"{ACTOR}.ppo_epochs"))
    plan.settings = settings
    return plan


def _micro_from_deprecated(settings: PPOSettings, dp: Optional[Fact], times_n: bool = False) -> Optional[Fact]:
    """The deprecated global actor.ppo_micro_batch_size, which the workers turn into the per-GPU
    one by floor division over dp (fsdp_workers.py:248-252, megatron_workers.py:356-359 @ b178a3c);
    `times_n`: a copy of verl whose workers then multiply it by rollout.n (a micro batch of prompts,
    as the forks vendoring an early verl count it: TinyZero's verl/workers/fsdp_workers.py:98-101)."""
    written = settings.micro_batch_keys[0].deprecated if settings.micro_batch_keys else None
    size = written.count if written is not None else None
    ranks = dp.count if dp is not None else None
    if written is None or size is None or ranks is None:
        return None
    if size < ranks:  # floors to 0 per GPU (BL181): shown as the workers compute it
        return Fact(0, "ppo_micro_batch_size_per_gpu", None, Origin.DERIVED,
                    detail=f"{written.key} {size} // dp {ranks}")
    n = settings.actor.rollout_n
    if times_n:
        samples = n.count if n is not None else None
        if n is None or samples is None:
            return None
        return Fact(size // ranks * samples, "ppo_micro_batch_size_per_gpu", None, Origin.DERIVED,
                    detail=f"{written.key} {size} // dp {ranks} x {n.describe()}")
    return Fact(size // ranks, "ppo_micro_batch_size_per_gpu", None, Origin.DERIVED,
                detail=f"{written.key} {size} // dp {ranks}")


# The workers of an early verl scale the deprecated micro batch by rollout.n after dividing it by dp.
_MICRO_TIMES_N = LazyPattern(rb"ppo_micro_batch_size\s*\*=\s*self\.config\.rollout\.n\b")
_WORKERS = {"megatron": "verl/workers/megatron_workers.py"}


def _scales_micro_by_n(path: str, strategy: Optional[str], view: ProjectView) -> bool:
    """Whether the copy of verl the project holds (the one its jobs run) multiplies the deprecated
    actor micro batch by rollout.n, read in its own workers' source (the release's version file
    does not tell: copies saying 0.1 differ)."""
    from .. import versions

    found = versions.release(DISTRIBUTION, path, view=view)
    if found is None or found.copy is None:
        return False
    workers = _WORKERS[strategy] if strategy in _WORKERS else "verl/workers/fsdp_workers.py"
    source = versions.copy_reader(found.copy, view)(workers)
    return source is not None and _MICRO_TIMES_N.search(source.encode()) is not None


# Start-up checks a copy of verl the project holds may predate (early copies, TinyZero's and its forks',
# have none of them): the files that hold the check in the releases that have it, and its test.
_CHECKS = {
    # ray_trainer.py `_validate_config` (0.2-0.4), workers/config/actor.py `ActorConfig.validate` (later).
    "mini_within_train": (("verl/trainer/ppo/ray_trainer.py", "verl/workers/config/actor.py"),
                          re.compile(rb"train_batch_size\s*(?:<|>=)\s*[\w.]*ppo_mini_batch_size")),
    # "You have set both ... Please remove": ray_trainer.py check_mutually_exclusive (0.2-0.4), then
    # workers/config/{actor,critic}.py and utils/config.py.
    "micro_set_once": (("verl/trainer/ppo/ray_trainer.py", "verl/workers/config/actor.py",
                        "verl/workers/config/critic.py", "verl/utils/config.py"),
                       re.compile(rb"You have set both")),
    # "When using sequence parallelism for actor/ref policy, you must enable `use_remove_padding`": ray_trainer.py
    # `_validate_config` (0.2-0.4), then workers/config/{actor,critic}.py. Early copies patch Ulysses only
    # when remove padding is on, and otherwise run without a word.
    "sp_remove_padding": (("verl/trainer/ppo/ray_trainer.py", "verl/workers/config/actor.py",
                           "verl/workers/config/critic.py"),
                          re.compile(rb"you must enable `use_remove_padding`")),
    # fsdp_sft_trainer.py: "Sequence parallel is only supported when remove_padding is enabled".
    "sft_sp_remove_padding": (("verl/trainer/fsdp_sft_trainer.py",),
                              re.compile(rb"only supported when remove_padding is enabled")),
    # `real_train_batch_size % minimal_bsz`: ray_trainer.py `_validate_config` (0.2-0.4), then utils/config.py.
    "train_batch_divisible": (("verl/trainer/ppo/ray_trainer.py", "verl/utils/config.py"),
                              re.compile(rb"real_train_batch_size\s*%\s*minimal_bsz")),
    # The legacy FSDP workers' normalisation of the actor's and critic's mini-batch (0.2-0.7.1; BL142): the
    # actor's x n before // dp (early copies divide first, then multiply), its > 0 assertion, the multiple of
    # a per-GPU micro batch as written (not only one derived from the deprecated key), the critic's x n.
    "mini_times_n": (("verl/workers/fsdp_workers.py",),
                     re.compile(rb"actor\.ppo_mini_batch_size \*= self\.config\.rollout\.n\s+"
                                rb"self\.config\.actor\.ppo_mini_batch_size //=")),
    "mini_positive": (("verl/workers/fsdp_workers.py",),
                      re.compile(rb"ppo_mini_batch_size\s*>\s*0\s*,\s*\(?\s*f?[\"'][^\"']*should be larger than 0")),
    "mini_micro_multiple": (("verl/workers/fsdp_workers.py",),
                            re.compile(rb"if self\.config\.actor\.ppo_micro_batch_size_per_gpu is not None:")),
    # The trainer calls generate_sequences on the prompts before any `gen_batch = gen_batch.repeat(`
    # (0.1-0.4.1; 0.5.0 repeats first): the W ranks split train_batch_size prompts, not x n sequences.
    "generates_unrepeated": (("verl/trainer/ppo/ray_trainer.py",),
                             re.compile(rb"\A(?:(?!gen_batch\s*=\s*gen_batch\.repeat\().)*?"
                                        rb"generate_sequences\(gen_batch\)", re.S)),
    # No start-up check that the deprecated micro batch holds one sequence per rank: ray_trainer.py
    # `ppo_micro_batch_size * sp_size >= n_gpus` (0.2-0.5), workers/config/actor.py (0.7.0 on).
    "micro_at_least_dp": (("verl/trainer/ppo/ray_trainer.py", "verl/workers/config/actor.py"),
                          re.compile(rb"ppo_micro_batch_size \* sp_size (?:>=|<) n_gpus")),
    # Search-R1's trainer (a copy of verl 0.1) repeats each step's prompts n_agent times before generating
    # (verl/trainer/ppo/ray_trainer.py:702 @ PeterGriffinJin/Search-R1 a14dc3a): its step holds train x n_agent.
    "repeats_by_n_agent": (("verl/trainer/ppo/ray_trainer.py",),
                           re.compile(rb"\bbatch\s*=\s*batch\.repeat\(\s*repeat_times\s*=\s*"
                                      rb"self\.config\.actor_rollout_ref\.rollout\.n_agent\b")),
    "critic_mini_times_n": (("verl/workers/fsdp_workers.py",),
                            re.compile(rb"self\.config\.ppo_mini_batch_size \*= self\.config\.rollout_n")),
}


def _generates_unrepeated(path: str, view: ProjectView) -> bool:
    """Whether the trainer hands the prompts to the rollout before repeating them rollout.n times (so the
    W ranks split train_batch_size itself): verl 0.1-0.4.1 (ray_trainer.py:436 @ v0.1, :817 and :838 @
    v0.3.0.post1; v0.5.0 :1163 repeats first; 0.4.0 adds auto-padding to the dispatch, decorator.py:93, so
    BL182 judges to 0.3.0.post1). The releases: the rule's premise says which; a copy in the project: its
    own trainer's source."""
    return refuses(path, "generates_unrepeated", view)


def _agents(doc: Document, view: ProjectView) -> Optional[Fact]:
    """actor_rollout_ref.rollout.n_agent, where the copy of verl the project runs repeats each step's
    prompts by it (released verl has no such key); None elsewhere."""
    agents = _number(doc.root, "actor_rollout_ref.rollout.n_agent")
    if agents is None or not runs_copy(doc.path, view) or not refuses(doc.path, "repeats_by_n_agent", view):
        return None
    return agents


def refuses(path: str, check: str, view: Optional[ProjectView]) -> bool:
    """Whether the verl the project of the file at `path` runs makes start-up check `check`: the
    released verl does (in the releases the rule's premise names); a copy in the project only if its
    own source holds the check."""
    from .. import versions

    found = versions.release(DISTRIBUTION, path, view=view)
    if found is None or found.copy is None:
        return True
    files, test = _CHECKS[check]
    read = versions.copy_reader(found.copy, view)
    return any((source := read(relative)) is not None and test.search(source.encode()) is not None for relative in files)


def runs_copy(path: str, view: Optional[ProjectView]) -> bool:
    """Whether the project of the file at `path` runs a copy of verl it holds (whose own source `refuses` reads)."""
    from .. import versions

    found = versions.release(DISTRIBUTION, path, view=view)
    return found is not None and found.copy is not None


def copy_premise(check: str, name: str = "copy") -> Premise:
    """The premise of a finding on a project that runs its own copy of verl, whose source `refuses` read:
    the copy refuses because its source holds `check` (named in `_CHECKS`), whatever its version file says
    (copies of main between releases say 0.1 or 0.2.0.dev over source that has the check). It holds in
    every release: the copy was judged by what it runs, not by a release number."""
    from ..premise import Premise

    files = " or ".join(_CHECKS[check][0])
    return Premise(DISTRIBUTION, name=name,
                   source=f"the copy's own {files}, read by lint/frameworks/verl.py `refuses` "
                          f"(`{_CHECKS[check][1].pattern.decode()}`), for any release from {RELEASES[0]} to {RELEASES[-1]}")


def dynamic_step_batch(role: Role, dp: Optional[Fact]) -> Optional[Fact]:
    """With use_dynamic_bsz the micro batches are packed by tokens, but each optimizer step
    still takes one mini batch: ppo_mini_batch_size x n sequences, split evenly over dp
    (fsdp_workers.py / megatron_workers.py normalise it to x n // dp; dp_actor.py
    update_policy splits the data into mini batches of that size and scales each loss by
    its share of it, @ b178a3c). None when dp does not divide it (the step is floored: BL142)."""
    step = product([role.mini, role.rollout_n], "sequences per optimizer step")
    sequences = step.count if step is not None else None
    ranks = dp.count if dp is not None else None
    if step is None or sequences is None or (ranks is not None and sequences % ranks):
        return None
    return step


def _token_budget(root: Mapping, role: Role, parallel: dict) -> Optional[Fact]:
    """The tokens one dynamic micro batch holds per GPU: ppo_max_token_len_per_gpu (actor/actor.yaml:33
    16384); dp_actor.py packs up to it x ulysses sp, megatron_actor.py x context parallel."""
    budget = _number(root, f"{ACTOR}.ppo_max_token_len_per_gpu", table={f"{ACTOR}.ppo_max_token_len_per_gpu": 16384})
    if budget is None or not budget.positive:
        return None
    split = parallel.get("sp") or parallel.get("cp")
    degree = split.number if split is not None else None
    if split is not None and degree is not None and degree > 1:
        return Fact(budget.value, budget.key, budget.span, budget.origin, budget.node,
                    detail=f"packed up to {budget.value} x {split.key} {degree} tokens per group of {degree} GPUs")
    return budget


def _role_accumulation(settings: PPOSettings, actor_accumulation: Optional[Fact], world: Optional[Fact]) -> dict:
    """Micro-steps per mini-batch of each trained model (the critic has its own micro batch and sp)."""
    found = {"actor": actor_accumulation} if actor_accumulation is not None else {}
    critic = settings.critic
    if critic is not None and critic.fsdp and critic.sp is not None:
        accumulation = role_accumulation_steps(critic, divide(world, [critic.sp]))
        if accumulation is not None:
            found["critic"] = accumulation
    return found


def role_accumulation_steps(role: Role, dp: Optional[Fact]) -> Optional[Fact]:
    """Micro-steps per optimizer step, which verl derives: the mini batch in sequences
    (ppo_mini_batch_size x rollout.n) split over dp, then into micro batches
    (fsdp_workers.py and megatron_workers.py normalise ppo_mini_batch_size: x n // dp;
    dp_actor.py update_policy: gradient_accumulation = mini // ppo_micro_batch_size_per_gpu
    @ b178a3c). None with dynamic batching (micro batches by tokens) or when a division
    is not exact (BL141/BL142 report those)."""
    mini, n, micro = role.mini, role.rollout_n, role.micro
    if role.dynamic is not False or mini is None or n is None or micro is None or dp is None:
        return None
    prompts, samples, per_gpu, ranks = mini.count, n.count, micro.count, dp.count
    if prompts is None or samples is None or per_gpu is None or ranks is None:
        return None
    sequences = prompts * samples
    if sequences % ranks or (sequences // ranks) % per_gpu:
        return None
    how = f"{mini.describe()} x {n.describe()} / dp {ranks} / {micro.describe()}"
    return Fact(sequences // ranks // per_gpu, "gradient accumulation", None, Origin.DERIVED, detail=how)


def sequence_length(root: Mapping) -> Optional[Fact]:
    """A sequence is a prompt and its response, each at most its limit."""
    prompt, response = _number(root, "data.max_prompt_length"), _number(root, "data.max_response_length")
    prompt_len = prompt.count if prompt is not None else None
    response_len = response.count if response is not None else None
    if prompt is None or response is None or prompt_len is None or response_len is None:
        return None
    return Fact(prompt_len + response_len, "sequence length", None, Origin.DERIVED,
                detail=f"{prompt.describe()} + {response.describe()}")


def _rl(settings: PPOSettings) -> RL:
    """verl counts the train batch and the mini batch in prompts; each prompt is
    sampled rollout.n times (ray_trainer.py, dp_actor.py: mini x n sequences)."""
    prompts, samples = settings.step_prompts, settings.actor.rollout_n
    roles = (settings.actor,) + ((settings.critic,) if settings.critic else ())
    return RL(samples_per_prompt=samples, prompts_per_step=prompts,
              generation_batch=product([prompts, samples], "generation batch"),
              mini_batch=settings.actor.mini,
              micro_batch={role.name: role.micro for role in roles if role.micro is not None})


def remainder_steps(settings: PPOSettings, epochs: Optional[Fact]) -> Optional[Fact]:
    """The actor's optimizer steps per PPO step when train_batch_size is no multiple of ppo_mini_batch_size:
    each rank splits its share into mini-batches and the remainder is one more, smaller update whose
    loss keeps the full mini-batch's scale (dp_actor.py `update_policy`: `data.split(ppo_mini_batch_size)`,
    `loss / gradient_accumulation`, :216 @ v0.2; `loss_scale_factor = 1 / gradient_accumulation` or
    `rows / ppo_mini_batch_size`, :418-420 @ v0.6.0, :465-467 @ v0.7.0, :576-578 @ b178a3c). v0.1
    refuses instead (protocol.py:351 `make_iterator` asserts the split is even), and so does the Megatron
    actor in every release (megatron_actor.py `make_iterator`): FSDP actors only. None when it divides."""
    train, mini = settings.step_prompts, settings.actor.mini
    prompts = train.count if train is not None else None
    mini_prompts = mini.count if mini is not None else None
    if not settings.actor.fsdp or prompts is None or mini_prompts is None \
            or prompts % mini_prompts == 0 or prompts < mini_prompts:
        return None
    full, rest = divmod(prompts, mini_prompts)
    times = (epochs.count if epochs is not None else None) or 1
    how = (f"{full} full mini-batch{'es' if full > 1 else ''} + 1 of {rest} prompts (weighted {rest}/{mini_prompts})"
           + (f" x ppo_epochs {times}" if times > 1 else ""))
    return Fact((full + 1) * times, "optimizer steps per PPO step", None, Origin.DERIVED, detail=how)


def _layout(degrees) -> tuple:
    """The degrees, or none at all when one is written null."""
    degrees = tuple(degrees)
    return degrees if all(d is not None for d in degrees) else ()


def _actor(root: Mapping, default_strategy: str) -> Role:
    strategy = _text(root, f"{ACTOR}.strategy", default_strategy)
    return Role(
        name="actor",
        strategy=strategy if strategy in FSDP + ("megatron",) else None,
        mini=_number(root, f"{ACTOR}.ppo_mini_batch_size"),
        micro=_number(root, f"{ACTOR}.ppo_micro_batch_size_per_gpu"),
        sp=_number(root, f"{ACTOR}.ulysses_sequence_parallel_size"),
        rollout_n=_number(root, "actor_rollout_ref.rollout.n"),
        dynamic=_bool(root, f"{ACTOR}.use_dynamic_bsz", False),
        remove_padding=_flag(root, "actor_rollout_ref.model.use_remove_padding"),
    )


def _critic(root: Mapping, actor: Role, default_strategy: str) -> Role:
    """critic/critic.yaml takes mini batch, rollout n and dynamic batching from the actor."""
    strategy = _text(root, "critic.strategy", default_strategy)
    own_keys = ("ppo_mini_batch_size", "ppo_micro_batch_size_per_gpu", "ulysses_sequence_parallel_size", "rollout_n")
    return Role(
        name="critic",
        strategy=strategy if strategy in FSDP + ("megatron",) else None,
        mini=_number(root, "critic.ppo_mini_batch_size", inherit=actor.mini),
        micro=_number(root, "critic.ppo_micro_batch_size_per_gpu"),
        sp=_number(root, "critic.ulysses_sequence_parallel_size"),
        rollout_n=_number(root, "critic.rollout_n", inherit=actor.rollout_n),
        dynamic=_bool(root, "critic.use_dynamic_bsz", actor.dynamic),
        remove_padding=_flag(root, "critic.model.use_remove_padding"),
        own=any(_written(root, f"critic.{key}") and not _inherited(root, f"critic.{key}") for key in own_keys),
    )


def _critic_used(root: Mapping) -> bool:
    """verl/trainer/ppo/utils.py need_critic: critic.enable, else adv_estimator == gae (the default)."""
    enable = root.get("critic", "enable")
    if isinstance(enable, Scalar) and isinstance(enable.value, bool):
        return enable.value
    if enable is not None and not (isinstance(enable, Scalar) and enable.value is None):
        return False  # an interpolation: unknown
    return _text(root, "algorithm.adv_estimator", "gae") == "gae"


def _composes_megatron(root: Mapping) -> bool:
    """Whether the Hydra defaults list pulls in the Megatron trainer or workers."""
    defaults = root.get("defaults")
    entries = getattr(defaults, "items", ())
    texts = []
    for entry in entries:
        if isinstance(entry, Scalar):
            texts.append(str(entry.value))
        elif isinstance(entry, Mapping):
            texts += [str(k) for k in entry.items] + [str(getattr(v, "value", "")) for v in entry.items.values()]
    return any("megatron" in text for text in texts)


def _file_world_size(doc: Document) -> Optional[Fact]:
    root = doc.root
    # Written in the file (or a config of the project's it composes): the framework's default
    # (ppo_trainer.yaml's 8, composed in) is no W of this file.
    gpus = _number(root, GPUS_PER_NODE.key)
    nodes = _number(root, NODES.key)
    per_node = gpus.number if gpus is not None else None
    node_count = nodes.number if nodes is not None else None
    if gpus is None or gpus.span is None or framework_default(doc, gpus.span) or per_node is None \
            or node_count is None:
        return None
    if per_node < 1 or node_count < 1:
        return None
    return Fact(per_node * node_count, f"{GPUS_PER_NODE.key} x {NODES.key}", gpus.span)


# -- SFT (verl/trainer/fsdp_sft_trainer.py) ---------------------------------------------

_SFT_DEFAULTS = {  # sft_trainer.yaml
    "data.train_batch_size": 256,
    "data.micro_batch_size_per_gpu": 4,
    "ulysses_sequence_parallel_size": 1,
    "use_remove_padding": False,
    "data.max_length": 1024,
}


def _sft_plan(doc: Document, outside: Outside) -> TrainingPlan:
    """train_batch_size % (W // sp) == 0, then (train_batch_size // dp) %
    micro_batch_size_per_gpu == 0 (`_normalize_config_bsz`): BL103's check."""
    root, world = doc.root, outside.world_size
    sp = _number(root, "ulysses_sequence_parallel_size", table=_SFT_DEFAULTS)
    layout = _layout([sp])
    return TrainingPlan(
        framework=NAME,
        document=doc,
        world_size=world,
        target_global_batch=outside.target_global_batch,
        micro_batch=_number(root, "data.micro_batch_size_per_gpu", table=_SFT_DEFAULTS),
        declared_global_batch=_number(root, "data.train_batch_size", table=_SFT_DEFAULTS),
        derived_from_global="grad_accum",
        parallel={"sp": sp} if sp is not None else {},
        layout=layout,
        layout_exact=False,
        data_parallel=divide(world, list(layout)) if layout else None,
        seq_len=_number(root, "data.max_length", table=_SFT_DEFAULTS),
    )


def sft_remove_padding(plan: TrainingPlan) -> Optional[Fact]:
    """The SFT trainer's top-level use_remove_padding (None for PPO configs and other frameworks, and
    where the verl the project runs does not refuse sp without it: an early copy)."""
    if plan.framework != NAME or isinstance(plan.document.get("actor_rollout_ref"), Mapping):
        return None
    if not refuses(plan.document.path, "sft_sp_remove_padding", plan.project):
        return None
    return _flag(plan.document.root, "use_remove_padding", table=_SFT_DEFAULTS)


# -- reading values ----------------------------------------------------------------------

def _node(root: Mapping, dotted: str):
    return root.get(*dotted.split("."))


def _written(root: Mapping, dotted: str) -> bool:
    node = _node(root, dotted)
    return isinstance(node, Scalar) and isinstance(node.value, int) and not isinstance(node.value, bool)


def _inherited(root: Mapping, dotted: str) -> bool:
    """Read through an interpolation of the actor's value (critic/critic.yaml:
    `ppo_mini_batch_size: ${oc.select:actor_rollout_ref.actor.ppo_mini_batch_size,256}`), which
    may itself interpolate another."""
    node = _node(root, dotted)
    keys = [node.origin or ""] + [hop.key for hop in getattr(node, "route", ())]
    return any(key.startswith("actor_rollout_ref.") for key in keys)


def _integer(root: Mapping, dotted: str) -> Optional[Fact]:
    """The value as written when it is an integer (not a bool, not a float), else None."""
    if not _written(root, dotted):
        return None
    node = _node(root, dotted)
    return Fact(node.value, dotted, node.span, Origin.FILE, node)


def _number(root: Mapping, dotted: str, table=DEFAULTS, inherit: Optional[Fact] = None) -> Optional[Fact]:
    """An integer fact: the file's value, else what verl inherits or defaults to;
    None when the file writes null (the key is off) or nothing is known."""
    node = _node(root, dotted)
    if isinstance(node, Scalar) and node.value is None:
        return None
    if node is None and inherit is not None:
        return inherit
    return number(node, dotted, default=table.get(dotted))


def _flag(root: Mapping, dotted: str, table=DEFAULTS) -> Fact:
    node = _node(root, dotted)
    if isinstance(node, Scalar) and isinstance(node.value, bool):
        return Fact(node.value, dotted, node.span, Origin.FILE, node)
    if node is None and dotted in table:
        return Fact(table[dotted], dotted, None, Origin.DEFAULT)
    return Fact(None, dotted, getattr(node, "span", None))  # an interpolation: unknown


def _bool(root: Mapping, dotted: str, default: Optional[bool]) -> Optional[bool]:
    node = _node(root, dotted)
    if node is None:
        return default
    return node.value if isinstance(node, Scalar) and isinstance(node.value, bool) else None


def _text(root: Mapping, dotted: str, default: str) -> Optional[str]:
    node = _node(root, dotted)
    if node is None:
        return default
    return node.value if isinstance(node, Scalar) and isinstance(node.value, str) and "${" not in node.value else None
