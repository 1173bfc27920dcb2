"""Helpers adapters share to turn Document nodes into plan facts."""

from __future__ import annotations

from ..document import Mapping, Node, Scalar, Sequence
from ..lean_dataclass import field, lean_dataclass
from ..limits import MAX_NUMBER_DIGITS
from ..plan import RL, Fact, Origin

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional, overload

    from ..project import ProjectView
else:
    from ..annotations import overload


@lean_dataclass(frozen=True)
class Outside:
    """Facts about a file that come from outside it: the launch or the user."""

    world_size: Optional[Fact] = None
    target_global_batch: Optional[Fact] = None
    # The DeepSpeed config the launcher builds from its own config and hands the program
    # (`accelerate launch --config_file cfg.yaml` with DEEPSPEED): what the Trainer fills and
    # checks when the program names none. Resolved like linked.DeepSpeedLink (`config()`).
    deepspeed: Optional[object] = None
    # The ranks the data is split over, when the launcher's own config says (accelerate's
    # parallelism_config; value None when not known): it replaces W / the program's own divisors.
    data_parallel: Optional[Fact] = None
    # The project as this lint reads it: an adapter reads every other file through it (`view`).
    project: Optional[ProjectView] = field(default=None, compare=False)

    @property
    def view(self) -> ProjectView:
        """The project view the engine passed in; a caller that passed none (a library user, a test) gets a
        view with no boundary, no overlay and no revision: the disk as it is."""
        if self.project is not None:
            return self.project
        from ..project import ProjectView

        return ProjectView()


@overload
def number(node: Node, key: str, default: object = None) -> Fact: ...  # a node or a default: always a fact
@overload
def number(node: Optional[Node], key: str, default: int) -> Fact: ...
@overload
def number(node: Optional[Node], key: str, default: object = None) -> Optional[Fact]: ...
def number(node: Optional[Node], key: str, default: object = None) -> Optional[Fact]:
    """An integer fact from a node; a missing node gives the default; a node
    whose value is not a plain integer (a string, "auto", Unknown) gives a fact
    whose value is not known, so arithmetic skips it."""
    if node is None:
        return None if default is None else Fact(default, key, None, Origin.DEFAULT)
    value = node.value if isinstance(node, Scalar) else None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return Fact(value, _label(node, key), node.span, Origin.FILE, node, _assumed(node))


def whole_number(text: object) -> Optional[int]:
    """A count written as text (an environment variable, a launcher option, a
    Hydra override) as the launchers read it: ASCII digits only (`"²".isdigit()`
    is true, but int() refuses it), at most MAX_NUMBER_DIGITS of them, greater
    than zero; None for anything else."""
    text = str(text).strip() if isinstance(text, (str, int)) and not isinstance(text, bool) else ""
    if not (text.isascii() and text.isdigit()) or len(text) > MAX_NUMBER_DIGITS:
        return None
    value = int(text)
    return value if value > 0 else None


def flag(node: Optional[Node], key: str) -> Optional[Fact]:
    """A boolean fact; only a written true/false counts (None when unknown)."""
    if isinstance(node, Scalar) and isinstance(node.value, bool):
        return Fact(node.value, _label(node, key), node.span, Origin.FILE, node, _assumed(node))
    return None


def _label(node: Node, key: str) -> str:
    # A Python value defined once and referenced from a dict is best named by
    # its variable: users edit `batch_size = 1`, not `train_dataloader.batch_size`
    # (and a YAML value read through an OmegaConf interpolation by the key that writes it).
    return node.origin or key


def _assumed(node: Node) -> str:
    """What was assumed to know a value (an OmegaConf `${oc.env:VAR,default}`'s default), said
    wherever the fact is described; the value is marked read, so that every finding on the plan
    says it too (lint/sources/omegaconf.py `notes`)."""
    assumed = getattr(node, "assumed", "")
    if assumed:
        node.read = True  # type: ignore[attr-defined]  # an OmegaConf value (sources/omegaconf.py): it has `assumed`
    return assumed


def find_key(node: Optional[Node], key: str, limit: int = 2000) -> Optional[Node]:
    """The first value stored under `key` anywhere below `node` (breadth first)."""
    queue = [node]
    seen = 0
    while queue and seen < limit:
        current = queue.pop(0)
        seen += 1
        if isinstance(current, Mapping):
            if key in current.items:
                return current.items[key]
            queue.extend(current.items.values())
        elif isinstance(current, Sequence):
            queue.extend(current.items)
    return None


def divide(world: Optional[Fact], divisors: list, key: str = "dp") -> Optional[Fact]:
    """dp = W / product(divisors), when W is known and the division is exact."""
    w = world.number if world is not None else None
    factors = [d.number for d in divisors]
    if w is None or any(f is None for f in factors):
        return None
    product = 1
    for f in factors:
        product *= f or 0
    if product <= 0 or w % product:
        return None
    shown = " / ".join([f"W ({w})"] + [d.describe() for d in divisors if d.value != 1])
    return Fact(w // product, key, None, Origin.DERIVED, detail=shown)


def product(facts: list, key: str, shown: Optional[str] = None) -> Optional[Fact]:
    """The product of positive facts as a derived Fact (`shown`: how to write the
    formula; default the factors' descriptions joined by x); None unless each is positive."""
    counts = [f.count if f is not None else None for f in facts]
    if not facts or any(c is None for c in counts):
        return None
    value = 1
    for c in counts:
        value *= c or 0
    return Fact(value, key, None, Origin.DERIVED, detail=shown or " x ".join(f.describe() for f in facts))


def per_group(batch: Optional[Fact], samples: Optional[Fact], key: str = "prompts per step") -> Optional[Fact]:
    """Prompts = completions / samples per prompt, when the groups are whole."""
    total = batch.count if batch is not None else None
    each = samples.count if samples is not None else None
    if batch is None or samples is None or total is None or each is None or total % each:
        return None
    return Fact(total // each, key, None, Origin.DERIVED, detail=f"{batch.key} {total} / {samples.key} {each}")


@overload
def algorithm(node: Node, key: str) -> RL: ...
@overload
def algorithm(node: Optional[Node], key: str) -> Optional[RL]: ...
def algorithm(node: Optional[Node], key: str) -> Optional[RL]:
    """The RL facts of a config that names its algorithm (`rl: dpo`, `rlhf_type: grpo`);
    None when the key is absent (supervised training). The value is as written."""
    if node is None:
        return None
    return RL(algorithm=Fact(getattr(node, "value", None), key, node.span, node=node))
