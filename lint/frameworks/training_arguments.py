"""What every Hugging Face TrainingArguments-style config shares (transformers,
TRL, ms-swift, LLaMA-Factory): the keys, and the plan they give.

Global batch = per_device_train_batch_size x gradient_accumulation_steps x dp,
dp = W / sequence_parallel_size where the framework has one (ms-swift).
`plan.trainer` holds the Trainer's own arguments (TrainerArguments): the
checkpoint schedule, the precision the DeepSpeed integration demands, and the
`deepspeed:` link, which linked.py resolves when a rule asks.
"""

from __future__ import annotations

from collections.abc import Callable

from ..document import Document, Mapping, Scalar
from ..lean_dataclass import lean_dataclass
from ..plan import Fact, Origin, Subject, TrainingPlan
from .facts import Outside, divide, flag, number
from .linked import DeepSpeedLink, deepspeed_link

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

FORMATS = ("yaml", "json")
# One of _BATCH_KEYS | _SAMPLING_KEYS is how is_training_arguments() recognises a config (Framework.markers).
MARKERS = (b"per_device_train_batch_size", b"gradient_accumulation_steps", b"group_by_length", b"packing",
           b"train_sampling_strategy")

_BATCH_KEYS = {"per_device_train_batch_size", "gradient_accumulation_steps"}
_SAMPLING_KEYS = {"group_by_length", "train_sampling_strategy", "packing", "neat_packing"}
# Keys that mark another framework's schema, read by its own adapter; or a program's own argparse, not
# TrainingArguments (`--train_batch_size`: the diffusers and accelerate example scripts, which HfArgumentParser
# would refuse as an unknown argument).
_FOREIGN = {"micro_batch_size", "base_model", "train_micro_batch_size_per_gpu", "actor_rollout_ref", "trainer",
            "train_batch_size"}


def is_training_arguments(root: Mapping) -> bool:
    keys = set(root.items)
    if not (keys & (_BATCH_KEYS | _SAMPLING_KEYS)) or keys & _FOREIGN:
        return False
    # torchtune configs also say batch_size and gradient_accumulation_steps, but build objects from _component_.
    return not any(isinstance(v, Mapping) and "_component_" in v.items for v in root.items.values())


def plan_from(
    doc: Document,
    outside: Outside,
    framework: str,
    micro_default: Optional[int] = 8,  # None: not assumed (a program with its own defaults)
    grad_accum_default: Optional[Callable] = None,
    precision_off: tuple = ("fp16",),
    max_grad_norm_default: Optional[float] = 1.0,
    logging_steps_default: Optional[int] = None,
    bf16_default: Optional[Fact] = None,
) -> TrainingPlan:
    """The plan of a TrainingArguments config. `grad_accum_default(micro, world)`
    gives the framework's default accumulation (None: 1); `precision_off` the
    precisions ("fp16", "bf16") that are off unless written (transformers: fp16;
    TRL turns bf16 on unless fp16 is); `max_grad_norm_default` None when the
    framework's own default is not assumed; `logging_steps_default` None where
    it is not assumed; `bf16_default` the bf16 fact when bf16 is not written, where the program's
    default is known (TRL's GRPOConfig by release)."""
    root = doc.root
    world = outside.world_size
    own_deepspeed = deepspeed_link(doc, outside.view)
    fp16, bf16 = (_precision(root, key, precision_off) for key in ("fp16", "bf16"))
    if bf16_default is not None and "bf16" not in root.items:
        bf16 = bf16_default
    logging_steps = _step_interval(root, "logging_steps", logging_steps_default)
    micro = number(root.get("per_device_train_batch_size"), "per_device_train_batch_size", default=micro_default)
    sp = number(root.get("sequence_parallel_size"), "sequence_parallel_size", default=1)
    grad_accum = number(root.get("gradient_accumulation_steps"), "gradient_accumulation_steps")
    if grad_accum is None:
        grad_accum = (grad_accum_default(micro, world) if grad_accum_default
                      else Fact(1, "gradient_accumulation_steps", None, Origin.DEFAULT))
    return TrainingPlan(
        framework=framework,
        document=doc,
        micro_batch=micro,
        grad_accum=grad_accum,
        world_size=world,
        target_global_batch=outside.target_global_batch,
        parallel={"sp": sp},
        data_parallel=outside.data_parallel or divide(world, [sp]),
        packing=_first_true(root, ("packing", "neat_packing")),
        length_grouping=_length_grouping(root),
        length_grouping_off=_length_grouping_off(root),
        fp16=fp16,
        bf16=bf16,
        max_grad_norm=_max_grad_norm(root, max_grad_norm_default),
        logging_steps=logging_steps,
        trainer=TrainerArguments(
            checkpointing=None if framework in _OWN_EVAL_SCHEDULE else _checkpointing(root, logging_steps),
            auto_find_batch_size=_flag_or_default(root, "auto_find_batch_size", False),
            deepspeed_fp16=_deepspeed_precision(root, "fp16", fp16),
            deepspeed_bf16=_deepspeed_precision(root, "bf16", bf16),
            deepspeed=own_deepspeed or _launched_deepspeed(root, outside, framework),
            deepspeed_refused=getattr(outside.deepspeed, "refused", ()) if _names_config(own_deepspeed) else (),
        ),
    )


def _names_config(link: Optional[DeepSpeedLink]) -> bool:
    """A `deepspeed:` that makes TrainingArguments build its own DeepSpeed config (`if self.deepspeed:`)."""
    reference = link.reference if link is not None else None
    return bool(reference.items) if isinstance(reference, Mapping) else \
        isinstance(reference, Scalar) and bool(str(reference.value).strip())


def _launched_deepspeed(root: Mapping, outside: Outside, framework: str):
    """The DeepSpeed config the launcher hands the program, for a config that names none of its own
    (its own wins: training_args.py:2067-2088 @ 4.57.1), when the settings are a Trainer's: a framework's
    (all build on the Trainer), or a program of the project's own whose flags write
    per_device_train_batch_size, TrainingArguments' own name (a loop of its own on accelerate's
    Accelerator, `--train_batch_size 4 --gradient_accumulation_steps 8`, meets no Trainer check)."""
    trainer = framework != _GENERIC or "per_device_train_batch_size" in root.items
    return outside.deepspeed if trainer else None


_GENERIC = "transformers"  # hf.py's plans: TrainingArguments flags of any program


# -- the Trainer's own arguments (transformers/training_args.py @ 4.57.1) ---------------------------

@lean_dataclass(frozen=True)
class Checkpointing:
    """What TrainingArguments checks load_best_model_at_end against
    (training_args.py:1686-1712; 1748-1775 @ 5.23.0). Each value as written, else
    transformers' default; None when written as something transformers refuses."""

    load_best_model_at_end: Optional[Fact]  # default False (1203)
    # The pre-4.46 name of eval_strategy, written: which of the two counts depends on the version.
    evaluation_strategy: Optional[Fact]
    save_strategy: Optional[Fact]  # "no", "steps", "epoch", "best"; default "steps" (987)
    eval_strategy: Optional[Fact]  # "no", "steps", "epoch"; default "no" (852)
    save_steps: Optional[Fact]  # a positive count or ratio; default 500 (991)
    # The evaluation interval: eval_steps, or logging_steps when eval_steps is
    # unset, null or 0 (1657-1666); None when unknown.
    eval_steps: Optional[Fact]
    eval_steps_from_logging: bool  # eval_steps is logging_steps


@lean_dataclass(frozen=True)
class TrainerArguments(Subject):
    """The Hugging Face Trainer's own arguments, for every adapter built on plan_from: the subject of
    the rules about them."""

    FRAMEWORKS = ("transformers", "trl", "llamafactory", "swift")

    # None where the framework rewrites the schedule from its own defaults (ms-swift).
    checkpointing: Optional[Checkpointing]
    auto_find_batch_size: Optional[Fact]  # default False (1459); None when not a bool
    # What the Trainer demands of the DeepSpeed config's `fp16.enabled` / `bf16.enabled`:
    # fp16 or fp16_full_eval (integrations/deepspeed.py:174-197). None when unknown, and
    # for fp16 with the apex backend (4.x expects fp16.enabled off and amp.enabled on).
    deepspeed_fp16: Optional[Fact]
    deepspeed_bf16: Optional[Fact]
    # The `deepspeed:` value, resolved on demand; else the config its launcher builds (linked.BuiltDeepSpeed).
    deepspeed: Optional[DeepSpeedLink]
    # With a `deepspeed:` of its own: the settings its launcher's config writes that the launcher's
    # DeepSpeed plugin refuses beside it (linked.BuiltDeepSpeed.refused), facts of that config.
    deepspeed_refused: tuple[Fact, ...] = ()

    @classmethod
    def of(cls, plan: TrainingPlan) -> Optional[TrainerArguments]:
        return plan.trainer


# ms-swift sets eval_strategy from save_strategy and eval_steps from save_steps when
# unset (swift/llm/argument/train_args.py `_init_eval_strategy`).
_OWN_EVAL_SCHEDULE = ("swift",)
_EVAL_STRATEGIES = ("no", "steps", "epoch")  # IntervalStrategy
_SAVE_STRATEGIES = _EVAL_STRATEGIES + ("best",)  # SaveStrategy


def _checkpointing(root: Mapping, logging_steps: Optional[Fact]) -> Checkpointing:
    from_logging = _unset(root.get("eval_steps"))
    legacy = root.get("evaluation_strategy")
    return Checkpointing(
        load_best_model_at_end=_flag_or_default(root, "load_best_model_at_end", False),
        evaluation_strategy=None if legacy is None else Fact(getattr(legacy, "value", None), "evaluation_strategy",
                                                             legacy.span, node=legacy),
        save_strategy=_choice(root, "save_strategy", "steps", _SAVE_STRATEGIES),
        eval_strategy=_choice(root, "eval_strategy", "no", _EVAL_STRATEGIES),
        save_steps=_step_interval(root, "save_steps", 500),
        eval_steps=logging_steps if from_logging else _step_interval(root, "eval_steps", None),
        eval_steps_from_logging=from_logging,
    )


def _unset(node) -> bool:
    """Absent, null or 0 (a value that is no scalar counts as unset too)."""
    value = getattr(node, "value", 0)
    return value is None or (value == 0 and not isinstance(value, bool))


def _choice(root: Mapping, key: str, default: str, allowed: tuple) -> Optional[Fact]:
    node = root.get(key)
    if node is None:
        return Fact(default, key, None, Origin.DEFAULT)
    value = getattr(node, "value", None)
    return Fact(value, key, node.span, node=node) if value in allowed else None


def _flag_or_default(root: Mapping, key: str, default: bool) -> Optional[Fact]:
    """true/false as written, the default when absent; None when written as something else."""
    node = root.get(key)
    return Fact(default, key, None, Origin.DEFAULT) if node is None else flag(node, key)


def _deepspeed_precision(root: Mapping, precision: str, main: Optional[Fact]) -> Optional[Fact]:
    """`<precision> or <precision>_full_eval` (`main`: the plan's precision fact): the first
    written true; else false when both are known off."""
    if precision == "fp16" and any(
            getattr(root.get(k), "value", None) == "apex" for k in ("fp16_backend", "half_precision_backend")):
        # fp16_backend "apex" (1437, default "auto"; 4.x copies it to half_precision_backend, 1729-1735).
        return None
    full_eval = _flag_or_default(root, f"{precision}_full_eval", False)  # default False (1097, 1106)
    # (main may be on by the program's default: TRL's GRPOConfig, plan_from's bf16_default)
    on = next((f for f in (main, full_eval) if f is not None and f.value is True and (f.span is not None or f is main)),
              None)
    if on is not None:
        return on
    if main is not None and main.value is False and full_eval is not None and full_eval.value is False:
        return main
    return None


def _step_interval(root: Mapping, key: str, default: Optional[int]) -> Optional[Fact]:
    """A positive step count or ratio as written, else the default; None when unknown."""
    node = root.get(key)
    if node is None:
        return None if default is None else Fact(default, key, None, Origin.DEFAULT)
    value = getattr(node, "value", None)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return Fact(value, key, node.span, node=node)
    return None


def _precision(root: Mapping, key: str, off_by_default: tuple) -> Optional[Fact]:
    node = root.get(key)
    if node is None:
        return Fact(False, key, None, Origin.DEFAULT) if key in off_by_default else None
    return flag(node, key)


def _max_grad_norm(root: Mapping, default: Optional[float]) -> Optional[Fact]:
    """A number as written (None when written as something else), else the default."""
    node = root.get("max_grad_norm")
    if node is None:
        return None if default is None else Fact(default, "max_grad_norm", None, Origin.DEFAULT)
    value = getattr(node, "value", None)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return Fact(value, "max_grad_norm", node.span, node=node)
    return None


def _first_true(root: Mapping, keys: tuple):
    facts = [flag(root.get(key), key) for key in keys]
    return next((f for f in facts if f is not None and f.value), next((f for f in facts if f), None))


def _length_grouping_off(root: Mapping) -> Optional[str]:
    """What turns the grouping off: transformers' default sampling strategy, or group_by_length: false."""
    grouping = _length_grouping(root)
    return None if grouping is None else {"group_by_length": "false", "train_sampling_strategy": '"random"'}[grouping.key]


def _length_grouping(root: Mapping):
    strategy = root.get("train_sampling_strategy")
    if isinstance(strategy, Scalar) and strategy.value == "group_by_length":
        return Fact(True, "train_sampling_strategy", strategy.span, node=strategy)
    return flag(root.get("group_by_length"), "group_by_length")
