"""EasyR1 (hiyouga/EasyR1), a fork of verl for vision-language RL (GRPO, DAPO, ...).

Its package is named `verl` too, but its config is its own: dataclasses (verl/trainer/config.py,
verl/workers/*/config.py) merged by OmegaConf, not verl's Hydra YAML. A config file
(`examples/config.yaml`: data / algorithm / worker.{actor,critic,ref,rollout,reward} / trainer)
holds the whole config over the dataclass defaults, and the launch line overrides it:
`python3 -m verl.trainer.main config=examples/config.yaml worker.actor.global_batch_size=32 ...`
(verl/trainer/main.py:90-101: `OmegaConf.from_cli()`, `config=` names the file, the rest is a
dotlist). verl's own entry point is `verl.trainer.main_ppo`, its keys `actor_rollout_ref.*`:
neither is EasyR1's.

The arithmetic (all @ b44b311):
- W = trainer.n_gpus_per_node x trainer.nnodes (main.py:58-61, the Ray resource pool; defaults
  8 and 1, trainer/config.py:109-111);
- every prompt is sampled worker.rollout.n times; one step takes data.rollout_batch_size prompts
  (trainer/config.py:47; data_loader.py:53-56 draws mini_rollout_batch_size at a time when
  online filtering regenerates, and ray_trainer.py:559 keeps rollout_batch_size x n sequences);
- worker.actor.global_batch_size counts prompts: the workers multiply it by n (when n > 1) and
  split it over dp = W // ulysses_size (fsdp_workers.py:142-146); dp_actor.py:229 cuts each
  rank's data into mini-batches of that many sequences, one optimizer step each, and each
  mini-batch into micro batches of micro_batch_size_per_device_for_update (:245), or with
  dynamic_batching (the default) into micro batches of at most that many x the padded sequence
  length in tokens (:241-243);
- the checks at start-up: ray_trainer.py:211-236 (rollout batch divisible by the global batch;
  rollout batch x n by the experience micro batch; the critic's too with GAE; GRPO and RLOO
  need n > 1), fsdp_workers.py:146-157 (the per-device mini-batch: not 0, a multiple of the
  micro batch, equal to it under FSDP CPU offload), fsdp_workers.py:383-385 (W divisible by the
  rollout's tensor_parallel_size), vllm_rollout_spmd.py:113-114 (max_num_batched_tokens holds a
  prompt and its response); at the first step, the generation and update batches are split into W
  equal shares (single_controller/base/decorator.py:106-108, protocol.py:555-557 asserts it).

The per-role settings are verl's `PPOSettings`, extended (`EasyR1Settings`, the subject of the
EasyR1 rules): the rules judging both frameworks (BL142, BL261) take `PPOSettings`, as EasyR1's
workers normalise the batch as verl's do.
"""

from __future__ import annotations

from ..document import Document, Mapping, Scalar
from ..lean_dataclass import lean_dataclass, replace
from ..plan import RL, Fact, GenerationChecks, Origin, TrainingPlan
from .facts import Outside, divide, number, product
from .releases import EASYR1 as DISTRIBUTION
from .spec import ASSIGN, Count, Framework, Launcher
from .verl import PPOSettings, Role, dynamic_step_batch, role_accumulation_steps, sequence_length

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

NAME = "easyr1"
FORMATS = ("yaml",)
MARKERS = (b"rollout_batch_size", b"global_batch_size", b"micro_batch_size_per_device", b"ulysses_size")

# W comes from the config the line runs (its file, then the line's overrides), so the line's counts
# have no default of their own: a count the line leaves out is the file's (see `_world`).
GPUS_PER_NODE = Count(key="trainer.n_gpus_per_node", source="verl/trainer/config.py:111")
NODES = Count(key="trainer.nnodes", source="verl/trainer/config.py:109")
# `python3 -m verl.trainer.main config=x.yaml a.b=c ...` (verl/trainer/main.py:90-101).
LAUNCHERS = (Launcher(NAME, modules=("verl.trainer.main",), markers=(b"verl.trainer.main",), nproc=GPUS_PER_NODE,
                      nnodes=NODES, flags=ASSIGN, config_flags=("config",), inline=True),)
# Before verl (70) and the YAML schemas whose markers its files hold (NeMo 80, LLaMA-Factory 100: global_batch_size).
FRAMEWORK = Framework(NAME, FORMATS, MARKERS, order=65, launchers=LAUNCHERS, distribution=DISTRIBUTION)

ACTOR, CRITIC, ROLLOUT = "worker.actor", "worker.critic", "worker.rollout"
# The dataclass defaults of the keys read here (@ b44b311).
DEFAULTS = {
    "data.rollout_batch_size": 512,  # verl/trainer/config.py:47
    "data.max_prompt_length": 512,  # verl/trainer/config.py:45
    "data.max_response_length": 512,  # verl/trainer/config.py:46
    "algorithm.adv_estimator": "grpo",  # verl/trainer/config.py:71
    "trainer.nnodes": 1,  # verl/trainer/config.py:109
    "trainer.n_gpus_per_node": 8,  # verl/trainer/config.py:111
    f"{ACTOR}.strategy": "fsdp",  # verl/workers/actor/config.py:98
    f"{ACTOR}.global_batch_size": 256,  # verl/workers/actor/config.py:99
    f"{ACTOR}.micro_batch_size_per_device_for_update": 4,  # verl/workers/actor/config.py:101
    f"{ACTOR}.micro_batch_size_per_device_for_experience": 16,  # verl/workers/actor/config.py:103
    f"{ACTOR}.padding_free": True,  # verl/workers/actor/config.py:119
    f"{ACTOR}.dynamic_batching": True,  # verl/workers/actor/config.py:121
    f"{ACTOR}.ulysses_size": 1,  # verl/workers/actor/config.py:123
    f"{ACTOR}.fsdp.enable_cpu_offload": False,  # verl/workers/actor/config.py:80
    f"{CRITIC}.strategy": "fsdp",  # verl/workers/critic/config.py:25
    f"{CRITIC}.global_batch_size": 256,  # verl/workers/critic/config.py:26
    f"{CRITIC}.micro_batch_size_per_device_for_update": 4,  # verl/workers/critic/config.py:28
    f"{CRITIC}.micro_batch_size_per_device_for_experience": 16,  # verl/workers/critic/config.py:30
    f"{CRITIC}.padding_free": False,  # verl/workers/critic/config.py:40
    f"{CRITIC}.dynamic_batching": True,  # verl/workers/critic/config.py:42
    f"{CRITIC}.ulysses_size": 1,  # verl/workers/critic/config.py:44
    f"{CRITIC}.fsdp.enable_cpu_offload": False,  # verl/workers/actor/config.py:80 (FSDPConfig)
    f"{ROLLOUT}.n": 1,  # verl/workers/rollout/config.py:25
    f"{ROLLOUT}.tensor_parallel_size": 2,  # verl/workers/rollout/config.py:36
    f"{ROLLOUT}.max_num_batched_tokens": 8192,  # verl/workers/rollout/config.py:38
}
# ray_trainer.py:234-236: the estimators that compare a prompt's samples refuse n = 1.
GROUP_ESTIMATORS = ("grpo", "rloo")
REFUSAL = "EasyR1 refuses to start"


@lean_dataclass(frozen=True)
class Worker:
    """What one trained model's FSDP worker checks beyond verl's per-GPU mini-batch (fsdp_workers.py:153-157)."""

    role: Role
    experience: Optional[Fact]  # micro_batch_size_per_device_for_experience: log-prob / value micro batch
    cpu_offload: Optional[Fact]  # fsdp.enable_cpu_offload


@lean_dataclass(frozen=True)
class EasyR1Settings(PPOSettings):
    """EasyR1's batch settings: verl's PPOSettings (train_batch is data.rollout_batch_size, each role's
    mini batch its global_batch_size) and what its rollout and workers check."""

    FRAMEWORKS = (NAME,)

    workers: tuple[Worker, ...] = ()  # Worker: the actor's, then the critic's when GAE trains one
    # The prompts of one generation call: data.mini_rollout_batch_size when set (online filtering
    # generates in such rounds until rollout_batch_size are kept), else data.rollout_batch_size.
    round_prompts: Optional[Fact] = None
    # rollout_tp (verl's PPOSettings field): worker.rollout.tensor_parallel_size
    token_budget: Optional[Fact] = None  # worker.rollout.max_num_batched_tokens
    prompt_length: Optional[Fact] = None
    response_length: Optional[Fact] = None
    world_size: Optional[Fact] = None
    label: str = "EasyR1"


def plan(doc: Document, outside: Outside) -> Optional[TrainingPlan]:
    root = doc.root
    if not isinstance(root, Mapping) or not (doc.launched_by == NAME or _is_config(root)):
        return None
    if "config" in root.items:
        return None  # a launch line's `config=` file that is not read (a variable, not in the project): unknown
    world = _world(root, outside.world_size, doc.launched_by == NAME)
    settings = _settings(root, world)
    actor = settings.actor
    plan_ = TrainingPlan(framework=NAME, document=doc, world_size=world, target_global_batch=outside.target_global_batch,
                         micro_batch=actor.micro, layout_exact=False)
    if actor.sp is not None:
        # fsdp_workers.py:130-135 builds a (W // ulysses_size, ulysses_size) device mesh.
        plan_.parallel = {"sp": actor.sp}
        plan_.layout = (actor.sp,)
        plan_.data_parallel = divide(world, [actor.sp])
    plan_.grad_accum = role_accumulation_steps(actor, plan_.data_parallel)
    plan_.seq_len = sequence_length(root)
    if actor.dynamic:
        plan_.step_batch = dynamic_step_batch(actor, plan_.data_parallel)
        plan_.micro_tokens = _token_budget(actor.micro, plan_.seq_len)
    plan_.rl = _rl(root, settings, world, doc.launched_by == NAME)
    plan_.settings = settings
    return plan_


def _is_config(root: Mapping) -> bool:
    """EasyR1's sections: `worker` holding a role's section, beside data, algorithm or trainer;
    never verl's `actor_rollout_ref`."""
    worker = root.get("worker")
    if not isinstance(worker, Mapping) or "actor_rollout_ref" in root.items:
        return False
    roles = any(isinstance(worker.items.get(role), Mapping) for role in ("actor", "critic", "ref", "rollout", "reward"))
    return roles and any(isinstance(root.items.get(section), Mapping) for section in ("data", "algorithm", "trainer"))


def _world(root: Mapping, given: Optional[Fact], launched: bool) -> Optional[Fact]:
    """The user's W; else the config's (a launch line's counts are overrides written into it). The
    default 8 GPUs count only for a config a launch line runs: a file alone may be launched with others."""
    if given is not None and given.origin is not Origin.LAUNCH:
        return given
    gpus, nodes = _number(root, GPUS_PER_NODE.key), _number(root, NODES.key)
    per_node = gpus.count if gpus is not None else None
    node_count = nodes.count if nodes is not None else None
    if gpus is None or nodes is None or per_node is None or node_count is None:
        return given
    if gpus.span is None and not launched:
        return given
    if gpus.span is None and nodes.span is None:
        return Fact(per_node * node_count, f"{GPUS_PER_NODE.key} x {NODES.key}", None, Origin.DEFAULT)
    span = gpus.span or nodes.span
    return Fact(per_node * node_count, f"{GPUS_PER_NODE.key} x {NODES.key}", span, Origin.FILE,
                detail=f"{gpus.describe()} x {nodes.describe()}")


def _settings(root: Mapping, world: Optional[Fact]) -> EasyR1Settings:
    n = _number(root, f"{ROLLOUT}.n")
    actor = _role(root, "actor", ACTOR, n)
    workers = [_worker(root, actor, ACTOR)]
    critic = None
    if _text(root, "algorithm.adv_estimator") == "gae":  # ray_trainer.py:203-206: only GAE trains a critic
        critic = _role(root, "critic", CRITIC, n)
        workers.append(_worker(root, critic, CRITIC))
    return EasyR1Settings(
        train_batch=_number(root, "data.rollout_batch_size"),
        actor=actor,
        critic=critic,
        legacy_workers=True,  # EasyR1 has one worker implementation, verl's legacy FSDP one
        megatron={},
        workers=tuple(workers),
        round_prompts=_number(root, "data.mini_rollout_batch_size") or _number(root, "data.rollout_batch_size"),
        rollout_tp=_number(root, f"{ROLLOUT}.tensor_parallel_size"),
        token_budget=_number(root, f"{ROLLOUT}.max_num_batched_tokens"),
        prompt_length=_number(root, "data.max_prompt_length"),
        response_length=_number(root, "data.max_response_length"),
        world_size=world,
    )


def _role(root: Mapping, name: str, section: str, n: Optional[Fact]) -> Role:
    strategy = _text(root, f"{section}.strategy")
    return Role(
        name=name,
        strategy=strategy if strategy == "fsdp" else None,  # workers/fsdp_workers.py is the only one
        mini=_number(root, f"{section}.global_batch_size"),
        micro=_number(root, f"{section}.micro_batch_size_per_device_for_update"),
        sp=_number(root, f"{section}.ulysses_size"),
        rollout_n=n,
        dynamic=_bool(root, f"{section}.dynamic_batching"),
        remove_padding=_flag(root, f"{section}.padding_free"),
    )


def _worker(root: Mapping, role: Role, section: str) -> Worker:
    return Worker(role, _number(root, f"{section}.micro_batch_size_per_device_for_experience"),
                  _flag(root, f"{section}.fsdp.enable_cpu_offload"))


def _token_budget(micro: Optional[Fact], seq_len: Optional[Fact]) -> Optional[Fact]:
    """dynamic_batching packs each micro batch up to micro_batch_size_per_device_for_update x the
    padded sequence length (prompt + response) in tokens (dp_actor.py:241-243)."""
    per_device = micro.count if micro is not None else None
    tokens = seq_len.count if seq_len is not None else None
    if micro is None or per_device is None or tokens is None:
        return None
    return Fact(per_device * tokens, micro.key, micro.span, micro.origin, micro.node,
                detail=f"{per_device} x the padded sequence length {tokens}")


def _rl(root: Mapping, settings: EasyR1Settings, world: Optional[Fact], launched: bool) -> RL:
    """Prompts, groups and mini batches as ray_trainer.py and dp_actor.py count them, and the
    start-up checks of ray_trainer.py:211-236 for the generic generation-batch rule (BL170)."""
    actor, prompts = settings.actor, settings.train_batch
    n = actor.rollout_n
    estimator = _fact(root, "algorithm.adv_estimator")
    generation = product([prompts, n], "generation batch")
    if generation is not None and prompts is not None and n is not None:  # a product only when both are there
        generation = replace(generation, span=prompts.span or n.span)
    # A file alone that leaves n to its default of 1 may be launched with another: judged only when launched.
    grouped = estimator is not None and estimator.value in GROUP_ESTIMATORS and (launched or n is None or n.span is not None)
    wholes: list[tuple] = [(worker.experience,) for worker in settings.workers[:1]]
    if settings.critic is not None:
        wholes += [(settings.critic.mini, n), (settings.workers[1].experience,)]
    checks = GenerationChecks(
        refusal=REFUSAL,
        group_baseline=estimator if grouped else None,
        step_batch=(actor.mini, n),
        multiples=tuple(wholes),
    )
    micro = {}
    accumulation = {}
    for worker in settings.workers:
        role = worker.role
        if role.micro is not None:
            micro[role.name] = role.micro
        if worker.experience is not None:
            micro[f"{role.name} experience"] = worker.experience
        steps = role_accumulation_steps(role, divide(world, [role.sp]) if role.sp is not None else None)
        if steps is not None:
            accumulation[role.name] = steps
    return RL(algorithm=estimator, samples_per_prompt=n, prompts_per_step=prompts, generation_batch=generation,
              mini_batch=actor.mini, micro_batch=micro, accumulation=accumulation, generation_checks=checks)


# -- reading values ----------------------------------------------------------------------

def _node(root: Mapping, dotted: str):
    return root.get(*dotted.split("."))


def _number(root: Mapping, dotted: str) -> Optional[Fact]:
    """An integer fact: the written value, else the dataclass default; None when written null."""
    node = _node(root, dotted)
    if isinstance(node, Scalar) and node.value is None:
        return None
    return number(node, dotted, default=DEFAULTS.get(dotted))


def _fact(root: Mapping, dotted: str) -> Optional[Fact]:
    """Any value as written (a string), else the default."""
    node = _node(root, dotted)
    if node is None:
        return Fact(DEFAULTS[dotted], dotted, None, Origin.DEFAULT) if dotted in DEFAULTS else None
    return Fact(getattr(node, "value", None), dotted, node.span, Origin.FILE, node)


def _text(root: Mapping, dotted: str) -> Optional[str]:
    fact = _fact(root, dotted)
    return fact.value if fact is not None and isinstance(fact.value, str) else None


def _flag(root: Mapping, dotted: str) -> Fact:
    """A boolean as written (OmegaConf reads `True`, `true`), else the default; unknown otherwise."""
    fact = _fact(root, dotted)
    if fact is None or not isinstance(fact.value, bool):
        return Fact(None, dotted, fact.span if fact is not None else None)
    return fact


def _bool(root: Mapping, dotted: str) -> Optional[bool]:
    value = _flag(root, dotted).value
    return value if isinstance(value, bool) else None
