"""axolotl YAML.

micro_batch_size and gradient_accumulation_steps are per device (schema
defaults 1 and 1, src/axolotl/utils/schemas/training.py:71-82); the global
batch is micro x GA x dp with dp = W // context_parallel_size //
tensor_parallel_size (utils/config/__init__.py:198-230). A `batch_size` does
not set the accumulation: validation fills GA's default 1 before
normalize_config reads batch_size (from 0.5.0, the first PyPI release; the
git tags before it derived GA from batch_size: rules/axolotl/axolotl_batch_size_accumulation.py).
With the expert-parallel plugin the ep ranks come out of W first and dp is
not modelled. The axolotl rules share the helpers at the end of this module.
"""

from __future__ import annotations

from ..document import Document, Mapping, Node, Scalar, Sequence
from ..lean_dataclass import lean_dataclass
from ..plan import RL, Fact, GenerationChecks, Origin, Subject, TrainingPlan
from .facts import Outside, algorithm, divide, flag, number, per_group
from .releases import AXOLOTL
from .spec import Framework

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional, TypeGuard

NAME = "axolotl"
FORMATS = ("yaml",)
MARKERS = (b"base_model",)


FRAMEWORK = Framework(NAME, FORMATS, MARKERS, order=50, distribution=AXOLOTL)

BATCH_FIELDS = ("micro_batch_size", "gradient_accumulation_steps", "batch_size")


def plan(doc: Document, outside: Outside):
    root = doc.root
    base_model = root.get("base_model")
    if not (isinstance(base_model, Scalar) and isinstance(base_model.value, str)):
        return None  # axolotl names a model; NeMo's muTransfer configs nest one
    world = outside.world_size
    cp = context_parallel(root)
    tp = number(root.get("tensor_parallel_size"), "tensor_parallel_size", default=1)
    ep = expert_parallel(root)
    plan = TrainingPlan(
        framework=NAME,
        document=doc,
        micro_batch=number(root.get("micro_batch_size"), "micro_batch_size", default=1),
        grad_accum=number(root.get("gradient_accumulation_steps"), "gradient_accumulation_steps", default=1),
        world_size=world,
        target_global_batch=outside.target_global_batch,
        parallel={"cp": cp, "tp": tp},
        packing=flag(root.get("sample_packing"), "sample_packing"),
        length_grouping=flag(root.get("group_by_length"), "group_by_length"),
        length_grouping_off="false",
        seq_len=number(root.get("sequence_len"), "sequence_len"),
    )
    experts = ep.number if ep is not None else None
    if ep is not None and experts is not None and experts > 1:
        # The expert-parallel plugin demands ep x dp_shard x tp x cp == W (integrations/expert_parallel/plugin.py:283-290).
        plan.parallel["ep"] = ep
        plan.layout = (ep, number(root.get("dp_shard_size"), "dp_shard_size", default=1), tp, cp)
    else:
        plan.data_parallel = divide(world, [cp, tp])
        if not _fsdp1(root):
            # tp x cp must divide W: the mesh filled with the leftover ranks must multiply back to W
            # (utils/distributed.py:320-375); axolotl builds no mesh under FSDP1 (loaders/model.py:205-220).
            plan.layout, plan.layout_exact = (tp, cp), False
    plan.rl = _rl(root, plan)
    impl, node = attention(root)
    plan.attention = Fact(impl, "attention", getattr(node, "span", None), node=node)
    plan.settings = AxolotlSettings(batch_flattening=flag(root.get("batch_flattening"), "batch_flattening"),
                                    glm_dsa_kernels=written(root, "use_glm_dsa_kernels") is not None,
                                    batch_size=_batch_size(root))
    plan.eval_packing = flag(root.get("eval_sample_packing"), "eval_sample_packing")
    return plan


@lean_dataclass(frozen=True)
class AxolotlSettings(Subject):
    """axolotl settings its own rules read."""

    FRAMEWORKS = (NAME,)

    batch_flattening: Optional[Fact]  # as written (true, false or "auto")
    glm_dsa_kernels: bool  # the GLM DSA kernels bring their own context-parallel attention
    batch_size: Optional[BatchSize]  # batch_size standing for the accumulation


@lean_dataclass(frozen=True)
class BatchSize:
    """batch_size and micro_batch_size written (positive whole numbers) without
    gradient_accumulation_steps. axolotl's validation fills an absent accumulation with
    its default 1 before it could derive it (batch_size is then only used to count
    steps); written as null or 0 it is derived as batch_size // micro_batch_size
    (utils/schemas/validation.py, config.py normalize_config @ 067b021)."""

    micro: Fact
    batch: Fact
    derived: bool  # gradient_accumulation_steps written as null or 0: derived by floor division


def _batch_size(root: Mapping) -> Optional[BatchSize]:
    micro, batch = written(root, "micro_batch_size"), written(root, "batch_size")
    if micro is None or batch is None or written(root, "gradient_accumulation_steps") is not None:
        return None  # fewer keys, or accumulation and batch_size together: axolotl-batch-fields
    if not (_positive_count(micro) and _positive_count(batch)):
        return None
    return BatchSize(micro=Fact(micro.value, "micro_batch_size", micro.span, node=micro),
                     batch=Fact(batch.value, "batch_size", batch.span, node=batch),
                     derived="gradient_accumulation_steps" in root.items)


def _positive_count(node: Node) -> TypeGuard[Scalar]:
    return isinstance(node, Scalar) and type(node.value) is int and node.value > 0


def _rl(root: Mapping, plan: TrainingPlan) -> Optional[RL]:
    """`rl:` as axolotl treats it as set; with `rl: grpo` and a `trl:` section, the
    GRPO batch (num_generations absent: TRL's own default, which axolotl does not check)."""
    rl = written(root, "rl")
    if not isinstance(rl, Scalar):
        return None
    facts = algorithm(rl, "rl")
    trl = root.get("trl")
    if rl.value == "grpo" and isinstance(trl, Mapping):
        facts.samples_per_prompt = number(trl.get("num_generations"), "trl.num_generations")
        facts.generation_batch = _generation_batch(root, trl)
        facts.prompts_per_step = per_group(facts.generation_batch, facts.samples_per_prompt)
        facts.micro_batch = {"actor": plan.micro_batch} if plan.micro_batch is not None else {}
        # check_grpo_batch_size_divisibility (validation.py:785-867): num_generations >= 2, the
        # generation batch whole groups and at least one group per rank (W: WORLD_SIZE, cli/config.py:369).
        facts.generation_checks = GenerationChecks(refusal="axolotl refuses the config",
                                                   group_baseline=facts.algorithm, group_per_rank=True)
    return facts


def _generation_batch(root: Mapping, trl: Mapping) -> Optional[Fact]:
    """trl.generation_batch_size, else micro_batch_size x gradient_accumulation_steps as
    axolotl's validation computes it (validation.py:821-829: unset or falsy counts as 1);
    None when neither is written or a value is not a whole number."""
    explicit = trl.get("generation_batch_size")
    if explicit is not None:
        fact = number(explicit, "trl.generation_batch_size")
        return fact if fact.known else None
    micro, ga = written(root, "micro_batch_size"), written(root, "gradient_accumulation_steps")
    micro_value, ga_value = (getattr(n, "value", None) if n is not None else 1 for n in (micro, ga))
    at = ga or micro
    if at is None or type(micro_value) is not int or type(ga_value) is not int:
        return None
    how = f"micro_batch_size ({micro_value}) x gradient_accumulation_steps ({ga_value})"
    return Fact(micro_value * ga_value, "generation batch", at.span, Origin.DERIVED, node=at, detail=how)


def _fsdp1(root: Mapping) -> bool:
    if written(root, "fsdp_config") is None:
        return False
    versions = (root.get("fsdp_version"), root.get("fsdp_config", "fsdp_version"), root.get("fsdp_config", "version"))
    return not any(isinstance(v, Scalar) and str(v.value) == "2" for v in versions)


# --------------------------------------------------------------------------- shared with the rules


def written(root: Mapping, key: str) -> Optional[Node]:
    """The node of `key` when axolotl treats it as set (`data.get(key)` truthy)."""
    node = root.get(key)
    if isinstance(node, Scalar) and not node.value:
        return None
    return node


def context_parallel(root: Mapping) -> Fact:
    """context_parallel_size, or the deprecated sequence_parallel_degree when it is unset
    (utils/schemas/validation.py:1634-1640)."""
    for key in ("context_parallel_size", "sequence_parallel_degree"):
        node = written(root, key)
        if node is not None:
            return number(node, key)
    return Fact(1, "context_parallel_size", None, Origin.DEFAULT)


def expert_parallel(root: Mapping) -> Optional[Fact]:
    """expert_parallel_size, which only the expert-parallel plugin reads."""
    plugins = root.get("plugins")
    listed = isinstance(plugins, Sequence) and any(
        isinstance(p, Scalar) and "expert_parallel" in str(p.value) for p in plugins.items
    )
    return number(root.get("expert_parallel_size"), "expert_parallel_size") if listed else None


# Legacy boolean flags in the order axolotl maps them to attn_implementation
# (utils/schemas/enums.py:117-124, applied in utils/schemas/config.py:1527-1570).
LEGACY_ATTENTION = {
    "xformers_attention": "xformers",
    "sage_attention": "sage",
    "flex_attention": "flex_attention",
    "flash_attention": "flash_attention_2",
    "sdp_attention": "sdpa",
    "eager_attention": "eager",
}
# Backends that use the flash-attn library (utils/schemas/enums.py:149-156).
FLASH_LIB = {"flash_attention_2", "flash_attention_3", "kernels-community/flash-attn2", "kernels-community/flash-attn3"}


def attention(root: Mapping) -> tuple[object, Optional[Node]]:
    """(implementation, node it was written at): attn_implementation, else the
    first legacy flag set; (None, None) when nothing chooses one. Unknown when
    both are written (axolotl rejects that) or a model option picks it
    (gemma4_hybrid_attn_impl defaults to flash_attention_2)."""
    flags = [key for key in LEGACY_ATTENTION if written(root, key) is not None]
    explicit = root.get("attn_implementation")
    if isinstance(explicit, Scalar) and explicit.value is not None:
        return (explicit.value, explicit) if not flags else ("unknown", None)
    if flags:
        return LEGACY_ATTENTION[flags[0]], root.get(flags[0])
    if written(root, "gemma4_hybrid_attn_impl") is not None:
        return "unknown", None
    return None, None
