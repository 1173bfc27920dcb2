"""XTuner v0.1: mmengine-style Python configs.

Global batch = batch_size x accumulative_counts x W / sequence_parallel_size
(xtuner docs/zh_cn/user_guides/sequence_parallel.md); W must be a multiple of
sequence_parallel_size (xtuner/parallel/sequence/setup_distributed.py:23-27 @
0.2.0). XTuner v1 configs (`from xtuner.v1 ...`) are another schema, read by
xtuner_v1.py.

The XTuner rules (rules/xtuner/, rules/mmengine/) judge `XTunerSettings`, the
settings this module fills from the config (the helpers at its end find them).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..document import (
    Document,
    LimitExceeded,
    Mapping,
    Node,
    ParseError,
    Scalar,
    Sequence,
    Span,
    Symbol,
    first_lines,
)
from ..lazy_pattern import LazyPattern
from ..lean_dataclass import lean_dataclass
from ..plan import Fact, Origin, Subject, TrainingPlan
from ..project import ProjectView
from ..sources.inheritance import Inherited, Refusal, inherit, read_config, text_at
from .facts import Outside, divide, find_key, flag, number
from .releases import XTUNER as DISTRIBUTION
from .spec import Count, Framework, Launcher

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

NAME = "xtuner"
FORMATS = ("python",)
# A child config may set neither, and inherit both from its bases (`_base_`, `with read_base()`).
MARKERS = (b"train_dataloader", b"accumulative_counts", b"_base_", b"read_base")

# `xtuner train cfg.py` runs torchrun itself with NPROC_PER_NODE x NNODES (xtuner/tools/train.py).
LAUNCHERS = (Launcher("xtuner", commands=("xtuner",), subcommands=("*",), markers=(b"xtuner",),
                      nproc=Count(env=("NPROC_PER_NODE",)), nnodes=Count(env=("NNODES",))),)
FRAMEWORK = Framework(NAME, FORMATS, MARKERS, order=20, launchers=LAUNCHERS, distribution=DISTRIBUTION)

LENGTH_GROUPED = "LengthGroupedSampler"
VARLEN = "use_varlen_attn"


@lean_dataclass(frozen=True)
class SamplerSpec:
    package: str  # where the class lives: a same-named class from elsewhere is not this one
    accepts: tuple[str, ...]  # keyword arguments besides `dataset`, which mmengine passes with `seed`
    requires: tuple[str, ...]
    by_dp_rank: bool  # splits the data by data-parallel rank: safe under sequence parallelism


# The signatures @ xtuner 0.2.0 / mmengine 0.10.6 (mmengine/dataset/sampler.py:43-47,
# 121-124; xtuner/parallel/sequence/sampler.py:12-20; xtuner/dataset/samplers/
# intern_repo.py:17-26, length_grouped.py:71-83).
SAMPLERS = {
    "DefaultSampler": SamplerSpec("mmengine.", ("shuffle", "seed", "round_up"), (), False),
    "InfiniteSampler": SamplerSpec("mmengine.", ("shuffle", "seed"), (), False),
    "SequenceParallelSampler": SamplerSpec("xtuner.", ("shuffle", "seed", "round_up"), (), True),
    "InternRepoSampler": SamplerSpec("xtuner.", ("shuffle", "seed"), (), True),
    "InternlmRepoSampler": SamplerSpec("xtuner.", ("shuffle", "seed"), (), True),
    LENGTH_GROUPED: SamplerSpec(
        "xtuner.", ("per_device_batch_size", "length_property", "mega_batch_mult", "seed", "round_up"),
        ("per_device_batch_size",), False,
    ),
}


def is_v1(doc: Document) -> bool:
    for node in doc.namespace.values():  # a loop, not any(): asked of every Python config
        if type(node) is Scalar and type(node.value) is Symbol and node.value.qualname.startswith("xtuner.v1"):
            return True
    return False


def plan(doc: Document, outside: Outside) -> Optional[TrainingPlan]:
    if doc.format != "python":
        return None
    doc = inherit(doc, outside.view)  # as mmengine builds it with its bases, each value where its file wrote it
    if is_v1(doc):
        return None
    if isinstance(doc, Inherited) and doc.refused is not None:
        return _refused(doc, doc.refused, outside)
    loader = doc.get("train_dataloader")
    optim = doc.get("optim_wrapper")
    if not isinstance(loader, Mapping) and not isinstance(optim, Mapping):
        return None
    loader = loader if isinstance(loader, Mapping) else Mapping()

    sp = number(doc.namespace.get("sequence_parallel_size"), "sequence_parallel_size", default=1)
    micro, accumulation = _batch_facts(doc)
    plan = TrainingPlan(
        framework=NAME,
        document=doc,
        micro_batch=micro,
        grad_accum=accumulation,
        world_size=outside.world_size,
        target_global_batch=outside.target_global_batch,
        parallel={"sp": sp},
        seq_len=_packed_length(doc),
        packing=flag(find_key(loader.get("dataset"), "pack_to_max_length"), "pack_to_max_length"),
        # init_sequence_parallel raises unless sp divides W.
        layout=(sp,),
        layout_exact=False,
    )
    plan.data_parallel = divide(outside.world_size, [sp])
    plan.seq_len_multiple = _varlen_sp_multiple(doc, sp)
    sampler_type = sampler_class(doc)
    if sampler_type is not None:
        plan.sampler = Fact(sampler_type.value, "train_dataloader.sampler.type", sampler_type.span, node=sampler_type)
        grouped = sampler_type.value.name == LENGTH_GROUPED
        plan.length_grouping = Fact(grouped, sampler_type.value.name, sampler_type.span, node=sampler_type)
    attn = doc.get("model", "llm", "attn_implementation")
    if isinstance(attn, Scalar):
        plan.attention = Fact(attn.value, "attn_implementation", attn.span, node=attn)
    plan.settings = XTunerSettings(
        varlen=tuple(varlen_flags(doc)),
        sampler=_sampler(doc),
        unused_sampler=_unused_sampler(doc, sp),
        accumulation=_accumulation(doc, micro, accumulation, sp, outside.view),
        hf_datasets=tuple(_hf_datasets(doc)),
    )
    return plan


@lean_dataclass(frozen=True)
class Sampler:
    """The train sampler dict, when its class is one of SAMPLERS: mmengine builds
    it by calling the class with the dict's keywords plus `dataset` and `seed`
    (mmengine/runner/runner.py:1387-1392 @ 0.10.6)."""

    spec: SamplerSpec
    keywords: dict[str, Span]  # each keyword the dict passes (`type` and `dataset` too) -> its span, as written
    span: Span  # the dict
    per_device_batch_size: Optional[Fact]  # LengthGroupedSampler's group unit
    mega_batch_mult: Optional[Fact]


@lean_dataclass(frozen=True)
class SamplerVariable:
    """A top-level `sampler` that no statement reads: XTuner's configs compute it for
    sequence parallelism (`sampler = SequenceParallelSampler if sequence_parallel_size
    > 1 else DefaultSampler`) and pass `type=sampler`."""

    assigned: Span  # its assignment
    follows_sp: bool  # computed from sequence_parallel_size


@lean_dataclass(frozen=True)
class Accumulation:
    """How accumulative_counts is written. XTuner's sequence-parallel guide has it
    scaled by sp in the config (`accumulative_counts *= sequence_parallel_size`,
    docs/zh_cn/user_guides/sequence_parallel.md:40-53 @ 0.2.0): nothing scales it for the user."""

    follows_sp: bool  # the accumulation or the micro batch is computed from sequence_parallel_size
    # (micro batch, accumulation) with the config evaluated at sequence_parallel_size = 1,
    # when they follow sp and both are known there; None otherwise.
    at_sp1: Optional[tuple[int, int]]
    # The sp a comment at the accumulation says its value is written for: the
    # number of a `sp=N` it writes, else the configured sp when it names sequence
    # parallelism (`# 1 x 8 acc / 8 sequence parallel`); else, for a literal a base
    # writes, that base's own sequence_parallel_size; None when nothing says.
    written_for: Optional[int]
    # The end of its line when that line is a plain `accumulative_counts = <int>`:
    # where `accumulative_counts *= sequence_parallel_size` goes; None otherwise.
    line_end: Optional[Span]
    indent: str  # that line's indentation
    # Written in a base the config inherits it from: how the config sets it again, a
    # statement with `{}` for the value; None when this file writes it (or it is not known how).
    reset: Optional[str] = None
    # The base whose own sequence_parallel_size `written_for` is, when no comment says one.
    written_in: Optional[str] = None


@lean_dataclass(frozen=True)
class HFDataset:
    """A process_hf_dataset dict in the train dataset: variable-length attention
    needs its samples packed (xtuner/dataset/huggingface.py:182-186 @ 0.2.0)."""

    use_varlen_attn: Optional[Fact]  # None unless written true/false
    pack_to_max_length: Optional[Fact]  # default True (huggingface.py:267); None when written but not true/false


@lean_dataclass(frozen=True)
class XTunerSettings(Subject):
    """XTuner settings its own rules read."""

    FRAMEWORKS = (NAME,)

    varlen: tuple[tuple[str, Fact], ...]  # (where, Fact) of every written use_varlen_attn: see varlen_flags
    sampler: Optional[Sampler]  # None: no sampler dict, or a class batchlint does not know
    unused_sampler: Optional[SamplerVariable]
    accumulation: Optional[Accumulation]  # None only for a chain mmengine refuses (`refused`)
    hf_datasets: tuple[HFDataset, ...]  # HFDataset of every process_hf_dataset dict
    # A `_base_` chain mmengine refuses to load: nothing else of the config is judged.
    refused: Optional[Refusal] = None


# An import of XTuner in a file of the chain: the chain is an XTuner config's, loaded by the
# mmengine XTuner requires (>= 0.8.4 from v0.1.0 to 0.10.6 @ v0.2.0, requirements/runtime.txt), which
# has pure-Python configs and refuses to mix them (mmengine 0.8.0 on; Refusal). Another program's
# mmengine-style config may be loaded by mmcv's Config, which has no such configs.
_IMPORTS_XTUNER = LazyPattern(r"^\s*(?:from|import)\s+xtuner\b", re.M)


def _refused(doc: Inherited, refusal: Refusal, outside: Outside) -> Optional[TrainingPlan]:
    """The plan of a chain mmengine refuses: the refusal alone, when the chain is XTuner's."""
    if not any(_IMPORTS_XTUNER.search(text) for text in (doc.text, *doc.texts.values())):
        return None
    settings = XTunerSettings(varlen=(), sampler=None, unused_sampler=None, accumulation=None, hf_datasets=(),
                         refused=refusal)
    return TrainingPlan(framework=NAME, document=doc, world_size=outside.world_size,
                        target_global_batch=outside.target_global_batch, settings=settings)


def _sampler(doc: Document) -> Optional[Sampler]:
    sampler = sampler_class(doc)
    spec = sampler_spec(sampler.value) if sampler is not None else None
    if spec is None:
        return None
    args = sampler_args(doc)
    return Sampler(
        spec=spec,
        keywords=dict(args.key_spans),
        span=args.span,
        per_device_batch_size=number(args.get("per_device_batch_size"), "per_device_batch_size"),
        mega_batch_mult=number(args.get("mega_batch_mult"), "mega_batch_mult"),
    )


def _unused_sampler(doc: Document, sp: Fact) -> Optional[SamplerVariable]:
    variable = doc.namespace.get("sampler")
    assigned = doc.root.key_spans.get("sampler")
    if variable is None or assigned is None or "sampler" not in doc.unused:
        return None
    return SamplerVariable(assigned, sp.key in variable.deps)


def _batch_facts(doc: Document) -> tuple[Fact, Fact]:
    """(micro batch, accumulation) as the runner reads them."""
    optim = doc.get("optim_wrapper")
    accumulation = optim.get("accumulative_counts") if isinstance(optim, Mapping) else None
    if accumulation is None:
        accumulation = doc.namespace.get("accumulative_counts")
    return (
        number(train_loader(doc).get("batch_size"), "train_dataloader.batch_size", default=1),
        # mmengine's OptimWrapper defaults accumulative_counts to 1.
        number(accumulation, "optim_wrapper.accumulative_counts", default=1),
    )


def _accumulation(doc: Document, micro: Fact, ga: Fact, sp: Fact, view: ProjectView) -> Accumulation:
    follows_sp = any(fact.node is not None and sp.key in fact.node.deps for fact in (micro, ga))
    at_sp1 = _at_sp1(doc, sp, view) if follows_sp and sp.known and sp.value != 1 else None
    text = text_at(doc, ga.span) if ga.span is not None else None
    # Up to its line (the comments above it say which sp it is written for): the lines after it are not split.
    lines = first_lines(text, doc.format, ga.span.line) if text is not None and ga.span is not None else []
    written_for = _written_for(lines, ga.span, sp) if ga.span is not None and not follows_sp else None
    written_in = None
    if written_for is None and not follows_sp and ga.span is not None and isinstance(doc, Inherited):
        # A literal of a base that sets its own sp is written for that sp.
        own = number(doc.base_names.get(ga.span.path, {}).get(sp.key), sp.key)
        if own is not None and own.known and type(own.value) is int:
            written_for, written_in = own.value, ga.span.path
    reset = _reset(doc, ga) if ga.span is not None and ga.span.path is not None else None
    if ga.span is None or ga.span.line != ga.span.end_line or ga.span.path is not None:
        # Written in another file (a base): an edit there would change every config built on it.
        return Accumulation(follows_sp, at_sp1, written_for, None, "", reset, written_in)
    line = lines[ga.span.line - 1] if ga.span.line <= len(lines) else ""
    if not re.match(rf"\s*{re.escape(ga.key)}\s*=\s*\d+\s*(#.*)?$", line):
        return Accumulation(follows_sp, at_sp1, written_for, None, "", reset, written_in)  # not a plain literal
    end = Span(ga.span.line, len(line) + 1, ga.span.line, len(line) + 1)
    return Accumulation(follows_sp, at_sp1, written_for, end, line[: len(line) - len(line.lstrip())], reset, written_in)


def _reset(doc: Document, ga: Fact) -> Optional[str]:
    """How this config sets the accumulation a base wrote again (`{}`: the value): into the
    inherited dict with `with read_base()`, where a new dict would replace the base's whole
    optim_wrapper; as a dict of that one key under `_base_`, which mmengine merges key by key."""
    optim = doc.get("optim_wrapper")
    if not isinstance(optim, Mapping) or "accumulative_counts" not in optim.items or not isinstance(doc, Inherited):
        return None
    return "optim_wrapper.accumulative_counts = {}" if doc.lazy else "optim_wrapper = dict(accumulative_counts={})"


def _at_sp1(doc: Document, sp: Fact, view: ProjectView) -> Optional[tuple[int, int]]:
    """The micro batch and accumulation the config gives with every read of
    sequence_parallel_size at 1, in it and in its bases: whether a derivation keeps the
    global batch is a question of values, not of how it is written (`64 // sp` follows sp too)."""
    try:
        micro, ga = _batch_facts(read_config(doc.path, doc.text, view, pinned={sp.key: 1}))
    except (ParseError, LimitExceeded):
        return None
    return (micro.number, ga.number) if micro.number is not None and ga.number is not None else None


# A comment that names sequence parallelism, and one that says which sp a value is for.
_SP_WORDS = r"(?:\bsp\b|sequence[ _-]?parallel\w*|ulysses)"
_NAMES_SP = LazyPattern(_SP_WORDS, re.I)
# `sp=1`, `sequence_parallel_size: 4`, `sp 8`; then `/ 8 sequence parallel`, `8 sp`.
_SP_VALUE = (re.compile(_SP_WORDS + r"\s*(?:=|==|:)?\s*(\d+)\b", re.I),
             re.compile(r"\b(\d+)\s*" + _SP_WORDS, re.I))
_COMMENT_LINES = 12  # of the block right above: a section's header comment is not about one value


def _written_for(lines: list[str], span: Span, sp: Fact) -> Optional[int]:
    """Which sp the comment on the value's line, or the comment lines right above
    it, says the value is written for (see Accumulation.written_for)."""
    if not sp.known or span.line > len(lines):
        return None
    comments = []
    own = lines[span.line - 1]
    if "#" in own[span.end_column - 1:]:
        comments.append(own[own.index("#", span.end_column - 1):])
    above = span.line - 2
    while above >= 0 and span.line - 1 - above <= _COMMENT_LINES and lines[above].lstrip().startswith("#"):
        comments.append(lines[above])
        above -= 1
    text = "\n".join(comments)
    for pattern in _SP_VALUE:
        stated = pattern.search(text)
        if stated is not None:
            return int(stated.group(1))
    return sp.number if _NAMES_SP.search(text) else None


def _hf_datasets(doc: Document) -> Iterator[HFDataset]:
    for dataset in datasets(doc):
        if not is_xtuner_symbol(dataset.get("type"), "process_hf_dataset"):
            continue
        packing = dataset.get("pack_to_max_length")
        yield HFDataset(
            use_varlen_attn=flag(dataset.get(VARLEN), VARLEN),
            pack_to_max_length=flag(packing, "pack_to_max_length") if packing is not None
            else Fact(True, "pack_to_max_length", None, Origin.DEFAULT),
        )


def _packed_length(doc: Document) -> Optional[Fact]:
    """The length every packed sample has: build_packed_dataset's
    `packed_length`, else the dataset's (or the file's) `max_length`."""
    dataset = train_loader(doc).get("dataset")
    for key in ("packed_length", "max_length"):
        node = find_key(dataset, key)
        if node is not None:
            return number(node, key)
    return number(doc.namespace.get("max_length"), "max_length")


def _varlen_sp_multiple(doc: Document, sp: Fact) -> Optional[Fact]:
    """default_collate_fn asserts, with varlen attention, that the packed
    length divides by sp (default_collate_fn.py:54-55 @ 0.2.0); without varlen
    it pads instead, and preference_collate_fn always pads."""
    collate = collate_fn(doc)
    varlen = flag(collate.get(VARLEN), VARLEN)
    degree = sp.number
    if not (degree is not None and degree > 1 and varlen is not None and varlen.value):
        return None
    if not is_xtuner_symbol(collate.get("type"), "default_collate_fn"):
        return None
    why = f"{sp.key} with {VARLEN}: default_collate_fn splits each packed sequence into {sp.value} equal parts"
    return Fact(sp.value, sp.key, sp.span, Origin.DERIVED, sp.node, detail=why)


def global_batch_text(micro: int, accumulation: int, sp: int, world: Optional[int]) -> str:
    """The global batch of micro x accumulation sequences on each of W / sp
    data-parallel ranks, as a number when W is known."""
    per_rank = f"{micro} x {accumulation}"
    if world is not None and world % sp == 0:
        dp = f"dp {world // sp} = W {world} / sp {sp}" if sp > 1 else f"W {world}"
        return f"{micro * accumulation * world // sp} sequences ({per_rank} x {dp})"
    return f"{per_rank} x W/{sp} sequences" if sp > 1 else f"{per_rank} x W sequences"


def global_batch_size(micro: int, accumulation: int, sp: int, world: Optional[int]) -> str:
    """The global batch of global_batch_text as a size alone: "32" when W is known, else "16 x W/4"."""
    if world is not None and world % sp == 0:
        return f"{micro * accumulation * world // sp}"
    return f"{micro * accumulation} x W/{sp}" if sp > 1 else f"{micro * accumulation} x W"


def inherited_note(sp: Fact, written: Optional[Span], what: str) -> Optional[tuple[str, Span]]:
    """(message, span) of the note at the `sequence_parallel_size` this config sets, when the
    value at fault (`what`, at `written`) comes from a base: mmengine evaluated the base on
    its own, with the base's names, so the sp set here changed nothing in it. None otherwise."""
    if written is None or written.path is None or sp.span is None or sp.span.path == written.path:
        return None
    return (f"{sp.key} = {sp.value} is set here, but {what} was evaluated in {written.path}:{written.line} "
            f"with that file's own names: mmengine builds a base on its own", sp.span)


# -- finding the settings in the config -------------------------------------------------------

def train_loader(doc: Document) -> Mapping:
    loader = doc.get("train_dataloader")
    return loader if isinstance(loader, Mapping) else Mapping()


def collate_fn(doc: Document) -> Mapping:
    collate = train_loader(doc).get("collate_fn")
    return collate if isinstance(collate, Mapping) else Mapping()


def sampler_args(doc: Document) -> Mapping:
    sampler = train_loader(doc).get("sampler")
    return sampler if isinstance(sampler, Mapping) else Mapping()


def sampler_class(doc: Document) -> Optional[Scalar]:
    """The train sampler's `type` when it resolves to an imported class."""
    sampler_type = sampler_args(doc).get("type")
    if isinstance(sampler_type, Scalar) and isinstance(sampler_type.value, Symbol):
        return sampler_type
    return None


def sampler_spec(sampler: Optional[Symbol]) -> Optional[SamplerSpec]:
    """What batchlint knows of a sampler class, None for one it does not know."""
    if sampler is None:
        return None
    spec = SAMPLERS.get(sampler.name)
    return spec if spec is not None and sampler.qualname.startswith(spec.package) else None


def datasets(doc: Document, limit: int = 500) -> Iterator[Mapping]:
    """The train dataset's dict and every dict inside it (ConcatDataset
    members, the tokenizer...), breadth first."""
    queue: list = [train_loader(doc).get("dataset")]
    seen = 0
    while queue and seen < limit:
        node = queue.pop(0)
        seen += 1
        if isinstance(node, Mapping):
            yield node
            queue.extend(node.items.values())
        elif isinstance(node, Sequence):
            queue.extend(node.items)


def varlen_flags(doc: Document) -> list[tuple[str, Fact]]:
    """Every written `use_varlen_attn` boolean, as (where, Fact): the
    top-level variable check_cfg reads, the model's, each dataset's, the
    collate_fn's. Values that are not plain booleans are left out."""
    places = [("the config", doc.namespace.get(VARLEN), VARLEN)]
    model = doc.get("model")
    if isinstance(model, Mapping):
        places.append(("the model", model.get(VARLEN), f"model.{VARLEN}"))
    places += [
        (f"the dataset ({type_name(d)})", d.get(VARLEN), f"train_dataset.{VARLEN}")
        for d in datasets(doc)
        if VARLEN in d.items
    ]
    places.append(("the collate_fn", collate_fn(doc).get(VARLEN), f"train_dataloader.collate_fn.{VARLEN}"))
    found: list[tuple[str, Fact]] = []
    for where, node, key in places:
        fact = flag(node, key)
        if fact is not None:
            found.append((where, fact))
    return found


def type_name(mapping: Mapping) -> str:
    """The short name of a config dict's `type` ("process_hf_dataset"), or "?"."""
    node = mapping.get("type")
    return node.value.name if isinstance(node, Scalar) and isinstance(node.value, Symbol) else "?"


def is_xtuner_symbol(node: Optional[Node], name: str) -> bool:
    """`node` is the XTuner object `name` (imported from any xtuner module)."""
    return (
        isinstance(node, Scalar) and isinstance(node.value, Symbol)
        and node.value.name == name and node.value.qualname.startswith("xtuner.")
    )
