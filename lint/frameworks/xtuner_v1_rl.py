"""XTuner v1 RL configs: `trainer = RLColocateTrainerConfig(...)` (or RLDisaggregatedTrainerConfig),
as xtuner/v1/train/cli/rl.py loads them (`Config.fromfile(config)`, then `cfg.trainer.build()`,
cli/rl.py:57-63). Read by the xtuner-v1 adapter, not registered of its own.

The arithmetic (xtuner main @ b934f46):
- W: the training workers are the bundles of the trainer's placement group, resources.num_workers
  of them (rl_trainer.py:1600-1605, 1625; rl/utils/ray_accelerator_worker.py:292-298, 462-471; the
  disaggregated trainer's train_resources, rl_trainer.py:1867-1879); `rl.py --num-workers N`
  replaces resources.num_workers (cli/rl.py:60-61);
- a train step asks for train_batch_size groups (rl_trainer.py:1724-1731), shared over the tasks by
  weight (agent_loop_manager/produce_utils.py:371-399); a task's sampler makes prompt_repeat_k
  samples of each prompt (agent_loop_manager/sampler.py:47, 83-113): train_batch_size counts prompts
  (the steps of an epoch are the dataset's prompts // train_batch_size, rl_trainer.py:743-745);
- the samples are packed in order into packs of at most pack_max_length tokens, each padded to it
  (rl/trainer/controller.py:56-91, 94-183), the packs padded to a multiple of
  dp = W // (fsdp_cfg.tp_size x sp_size) and dealt to the dp ranks (controller.py:210-281;
  worker.py:999-1003; engine/train_engine.py:186-188). A rank runs one pack per micro-step and
  ceil(packs / optimizer_steps) packs per optimizer step (rl/trainer/worker.py:582-590, 764-800): the
  micro-steps, and the samples of one optimizer step, follow the lengths; a rank with fewer packs
  than optimizer_steps steps fewer times. Nothing checks these numbers at start-up;
- what is refused at start-up: W not a multiple of sp_size (worker.py:424-433,
  ParallelConfigException); rollout GPUs that are not a whole number of engines, an engine being
  expert_parallel_size GPUs when that is above 1, else tensor_parallel_size (rollout/worker.py:472-474;
  lmdeploy.py:159-166, 185-190; sglang.py:129-134; vLLM's topology is not implemented, vllm.py:136-142).
  The colocated rollout shares the training pool (rl_trainer.py:1625, 1645); the disaggregated one
  has rollout_resources (rl_trainer.py:1872-1880).
"""

from __future__ import annotations

from ..document import Mapping, Node, Scalar, Sequence, Symbol
from ..lean_dataclass import lean_dataclass, replace
from ..plan import RL, Fact, TrainingPlan
from .facts import Outside, divide, number, product

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

TRAINERS = ("RLColocateTrainerConfig", "RLDisaggregatedTrainerConfig")
# The agent loop whose group is prompt_repeat_k trained samples; the others (tools, sandboxes) may
# cut one session into several trainable segments (rl_trainer.py:1080-1081).
SINGLE_TURN = "SingleTurnAgentLoopConfig"


@lean_dataclass(frozen=True)
class Rollout:
    """The rollout's engines and the GPUs they are cut from."""

    engine: Fact  # GPUs per engine: expert_parallel_size when above 1, else tensor_parallel_size
    workers: Optional[Fact]  # the rollout's GPUs: W colocated, rollout_resources.num_workers disaggregated


def fill(plan: TrainingPlan, trainer: Mapping, outside: Outside) -> Optional[Rollout]:
    """The batch facts of an RL trainer config into `plan`; the rollout's engines for their rule."""
    colocated = _class(trainer) == TRAINERS[0]
    resources = "resources" if colocated else "train_resources"
    workers = _workers(trainer, resources)
    plan.world_size = outside.world_size or workers
    worker = _mapping(trainer.get("train_worker_cfg"))
    fsdp = _mapping(worker.get("fsdp_cfg")) if worker is not None else None
    # WorkerConfig.sp_size defaults to 1 (worker.py:145), FSDPConfig.tp_size to 1 (config/fsdp.py:15).
    sp = number(worker.get("sp_size") if worker is not None else None, "sp_size", default=1)
    tp = number(fsdp.get("tp_size") if fsdp is not None else None, "fsdp_cfg.tp_size", default=1)
    plan.parallel = {"tp": tp, "sp": sp}
    plan.layout, plan.layout_exact = (sp,), False  # only sp is checked against W (worker.py:429)
    plan.data_parallel = divide(plan.world_size, [tp, sp])
    pack = number(worker.get("pack_max_length"), "pack_max_length") if worker is not None else None
    if pack is not None:
        plan.micro_tokens = replace(pack, detail="one pack per micro-step: samples packed in order, padded to it")
        plan.seq_len = pack  # the longest sample a pack takes (rl_trainer.py:1145)
    # optimizer_steps defaults to 1 (worker.py:144).
    steps = number(worker.get("optimizer_steps") if worker is not None else None, "optimizer_steps", default=1)
    prompts = number(trainer.get("train_batch_size"), "train_batch_size")
    tasks = _tasks(trainer.get("agent_loop_manager_cfg"))
    samples = _samples_per_prompt(tasks)
    generation = product([prompts, samples], "generation batch")
    if generation is not None and prompts is not None:  # a product only when both are there
        generation = replace(generation, span=prompts.span)
    if generation is not None and steps.known and steps.value == 1 and _single_turn(tasks):
        # One optimizer step takes every pack of the round (worker.py:587: ceil(packs / 1)).
        plan.step_batch = replace(generation, detail=f"{generation.detail}, all in one optimizer step "
                                                     f"({steps.describe()})")
    if steps.known:
        steps = replace(steps, detail=steps.detail or "at most: each rank steps once per ceil(its packs / "
                                                      "optimizer_steps) packs, fewer times with few packs")
    plan.rl = RL(samples_per_prompt=samples, prompts_per_step=prompts, generation_batch=generation,
                 optimizer_steps=steps)
    tp_rollout, ep_rollout = _rollout_degrees(trainer.get("rollout_config"))
    # The engine's size is the expert degree when above 1 (rollout/worker.py:472-474): unknown while it is.
    engine = ep_rollout if not ep_rollout.known or ep_rollout.value > 1 else tp_rollout
    rollout_workers = plan.world_size if colocated else _workers(trainer, "rollout_resources")
    return Rollout(engine=engine, workers=rollout_workers)


def trainer_call(calls) -> Optional[Mapping]:
    """The RL trainer config the CLI builds: the one assigned to `trainer`."""
    return next((c for c in calls if c.origin == "trainer" and _class(c) in TRAINERS), None)


def _class(call: Mapping) -> str:
    kind = call.get("type")
    return kind.value.name if isinstance(kind, Scalar) and isinstance(kind.value, Symbol) else ""


def _mapping(node: Optional[Node]) -> Optional[Mapping]:
    return node if isinstance(node, Mapping) else None


def _workers(trainer: Mapping, key: str) -> Optional[Fact]:
    """An AcceleratorResourcesConfig's num_workers (required: ray_accelerator_worker.py:67)."""
    resources = _mapping(trainer.get(key))
    if resources is None or resources.get("num_workers") is None:
        return None
    return number(resources.get("num_workers"), f"{key}.num_workers")


def _tasks(manager: Optional[Node]) -> list:
    """The training tasks: AgentLoopManagerConfig.tasks, one TaskSpecConfig or a list
    (agent_loop_manager.py:120); None when they cannot all be read."""
    manager = _mapping(manager)
    tasks = manager.get("tasks") if manager is not None else None
    items = tasks.items if isinstance(tasks, Sequence) else [tasks]
    return [t for t in items if isinstance(t, Mapping)] if items and all(isinstance(t, Mapping) for t in items) else []


def _samples_per_prompt(tasks: list) -> Optional[Fact]:
    """prompt_repeat_k, when every task samples each prompt as many times (SamplerConfig default 1,
    sampler.py:47); unknown when tasks differ or one is not known."""
    found = []
    for task in tasks:
        sampler = _mapping(task.get("sampler_config"))
        if sampler is None:
            return None
        found.append(number(sampler.get("prompt_repeat_k"), "prompt_repeat_k", default=1))
    known = [f for f in found if f is not None and f.known]
    if not known or len(known) < len(found) or len({f.value for f in known}) > 1:
        return None
    return next((f for f in known if f.span is not None), known[0])


def _single_turn(tasks: list) -> bool:
    """Every task's agent loop trains its group's samples as they are, one sequence each."""
    for task in tasks:
        loop = _mapping(task.get("agent_loop_config"))
        if loop is None or _class(loop) != SINGLE_TURN:
            return False
    return bool(tasks)


def _rollout_degrees(config: Optional[Node]) -> tuple:
    """RolloutConfig's tensor_parallel_size and expert_parallel_size, each defaulting to 1
    (rollout/worker.py:271-291)."""
    config = _mapping(config)
    if config is None:
        unknown = Fact(None, "rollout_config")
        return unknown, unknown
    return (number(config.get("tensor_parallel_size"), "tensor_parallel_size", default=1),
            number(config.get("expert_parallel_size"), "expert_parallel_size", default=1))
