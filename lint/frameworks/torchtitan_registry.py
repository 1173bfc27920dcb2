"""TorchTitan's Python config registries (after v0.2.2; the TOML files are gone).

A registry is a module of functions, each returning a whole `Trainer.Config(...)`
(torchtitan/models/<model>/config_registry.py, torchtitan_recipes/*.py, any module
`--module` names); `--config NAME` picks one, and ConfigManager calls it with no
arguments (torchtitan/config/manager.py:143-158 @ b5bcd76). A derived config calls
another and sets attributes on the result:

    def llama3_8b_tp2() -> Trainer.Config:
        config = llama3_8b()
        config.parallelism.tensor_parallel_degree = 2
        return config

The functions are read statically, never run: each body is evaluated by the Python
reader's evaluator (lint/sources/python.py), a call to a function of the same file is
followed (its result copied, its parameters bound to the arguments given), an
attribute set on a section the config left to its default (`config.parallelism`)
sets it on that default, and a method called on a value (`config.override.imports
.append(x)`) makes that value alone unknown. A function returned under a condition,
or built by a function of another module, is not understood: its values are unknown.

Two arithmetics, told apart by the keys a config writes, else by the TrainingConfig
of the project's own copy of TorchTitan (none: the batch is unknown):
- tokens (main @ b5bcd76): num_tokens_per_microbatch_per_dp_rank per dp rank and
  micro-step (default 16384, config/configs.py:37), times num_pp_microbatches when
  pp > 1 (trainer.py:408-414); num_tokens_per_train_step (-1: that times dp,
  configs.py:43, trainer.py:416-418) must be a multiple of it times dp, else
  ValueError (trainer.py:419-425); the accumulation is the quotient (:426-428);
  TrainingConfig refuses a token count <= 0 (configs.py:54-62);
- sequences (0.3.0, the release on PyPI): local_batch_size (default 8) and
  global_batch_size (-1), asserted as v0.2 did (trainer.py:414-433 @ 0.3.0).
Either way dp is dp_replicate x dp_shard (the "batch" mesh, parallel_dims.py:280),
a dp_shard of -1 the ranks left over (:178-179), and the tokens of one micro-batch
(the sequence length, 0.3.0) must divide by (tp if enable_sequence_parallel) x
(2 cp if cp > 1), else ValueError (trainer.py:294-307; :305-315 @ 0.3.0).
"""

from __future__ import annotations

import ast
import os

from ..document import Document, LimitExceeded, Mapping, Node, ParseError, Scalar, Sequence, Span, Symbol, Unknown
from ..lean_dataclass import lean_dataclass
from ..limits import MAX_DEPTH, MAX_EVAL_STEPS, MAX_NODES
from ..plan import Fact, Origin, Subject, TrainingPlan
from ..project import ProjectView
from ..sources.python import Evaluator, read_python
from .facts import Outside, number
from .torchtitan import SEQUENCES, TOKENS, copy_arithmetic

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

# Trainer.Config's fields that hold a config with defaults (torchtitan/trainer.py:89-116 @ b5bcd76):
# an attribute set on one a function did not write sets it on the default.
SECTIONS = frozenset({"profiler", "metrics", "tokenizer", "dataloader", "optimizer", "lr_scheduler", "training",
                      "parallelism", "checkpoint", "activation_checkpoint", "compile", "comm", "validator", "debug",
                      "override", "loss"})
# Calls to config functions followed one inside another, at most this deep; modules of the project
# read for the functions a file imports, at most this many; folders looked up for one, at most this many.
MAX_CALLS = 32
MAX_MODULES = 16
MAX_LEVELS = 16

# The keys that tell which arithmetic a config is written for (config/configs.py @ b5bcd76 and @ 0.3.0).
_TOKEN_KEYS = ("num_tokens_per_microbatch_per_dp_rank", "num_tokens_per_train_step", "max_context_length")
_SEQUENCE_KEYS = ("local_batch_size", "global_batch_size", "seq_len")


@lean_dataclass(frozen=True)
class RegistryConfig:
    """One config function of a registry, read."""

    name: str
    line: int  # of its `def`
    value: Node  # what it returns: a Mapping when understood


# --------------------------------------------------------------------------- reading


def is_registry(text: str) -> bool:
    """Cheap test before parsing: a module that builds trainer configs."""
    return "Trainer.Config" in text or "TrainingConfig(" in text


def read_configs(doc: Document, view: ProjectView) -> list:
    """Every config function of a registry module (public, no required parameter, annotated
    to return a config class), each evaluated, the modules it imports read through `view`; []
    when the module is none."""
    if not is_registry(doc.text):
        return []
    try:
        tree = ast.parse(doc.text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    registry = _Registry(doc, tree, _Shared(doc.path, view))
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and _is_config_function(node):
            try:
                value = registry.call(node.name, [], {}, node)
            except LimitExceeded as exc:
                value = Unknown(_line_span(node), exc.message)
            found.append(RegistryConfig(node.name, node.lineno, value))
    return found


def select(doc: Document, name: str, view: ProjectView) -> Optional[Document]:
    """The document of the config function `name` of a registry module (None when the module
    has no such function): its config as root, for a launch line's overrides to apply to."""
    for config in read_configs(doc, view):
        if config.name == name:
            return config_document(doc, config)
    return None


def config_document(doc: Document, config: RegistryConfig) -> Document:
    root = config.value if isinstance(config.value, Mapping) else Mapping(span=_line_span_at(config.line))
    return Document(path=doc.path, format=doc.format, root=root, text=doc.text, launched_by=doc.launched_by,
                    selected=config.name)


def _is_config_function(node: ast.FunctionDef) -> bool:
    args = node.args
    required = len(args.posonlyargs) + len(args.args) - len(args.defaults)
    required_kw = sum(1 for default in args.kw_defaults if default is None)
    returns = ast.unparse(node.returns) if node.returns is not None else ""
    return not node.name.startswith("_") and required == 0 and required_kw == 0 and returns.endswith("Config")


def _line_span(node: ast.stmt | ast.expr) -> Span:
    return _line_span_at(node.lineno)


def _line_span_at(line: int) -> Span:
    return Span(line, 1, line, 1)


class _Shared:
    """What the modules read for one file share: one step budget, the calls running, the
    modules of the project already read (dotted name -> _Registry, or None when not found)."""

    def __init__(self, path: str, view: ProjectView):
        self.path = path
        self.view = view  # the project as the lint reads it
        self.steps = MAX_EVAL_STEPS
        self.running: list = []
        self.modules: dict = {}


class _Registry:
    """The functions of one module, evaluated on demand. `shown`: the module's path when it is
    not the file linted (its values' positions are marked as in it)."""

    def __init__(self, doc: Document, tree: ast.Module, shared: _Shared, shown: Optional[str] = None):
        self.text = doc.text
        self.functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
        self.namespace = doc.namespace if doc.namespace else read_python(doc.path, doc.text).namespace
        self.results: dict = {}  # name -> value of a call without arguments
        self.shared = shared
        self.shown = shown

    @property
    def steps(self) -> int:
        return self.shared.steps

    @steps.setter
    def steps(self, value: int) -> None:
        self.shared.steps = value

    def call(self, name: str, args: list, kwargs: dict, where: ast.stmt | ast.expr) -> Node:
        """The value a call of the module's function `name` returns, as a fresh copy."""
        plain = not args and not kwargs
        if plain and name in self.results:
            return _copied(self.results[name], self.shown, self.shared)
        running = self.shared.running
        key = (self.shown, name)
        if key in running or len(running) >= MAX_CALLS:
            return Unknown(_line_span(where), f"{name} calls itself, or calls nest too deeply")
        function = self.functions[name]
        evaluator = _Body(self)
        if not evaluator.bind_arguments(function, args, kwargs):
            return Unknown(_line_span(where), f"arguments of {name}() not followed")
        running.append(key)
        try:
            value = evaluator.body(function)
        finally:
            running.pop()
            self.steps = evaluator.steps
        if plain:
            self.results[name] = value
        return _copied(value, self.shown, self.shared)

    def imported(self, qualname: str) -> Optional[tuple]:
        """(the _Registry of the project's module, the function's name) a qualified name imported
        from a config module names (`from torchtitan.models.llama3.config_registry import llama3_8b`),
        when the project holds that module and it defines the function."""
        stripped = qualname.lstrip(".")
        level = len(qualname) - len(stripped)
        module, _, name = stripped.rpartition(".")
        if module.startswith("builtins") or not (module or level):
            return None
        folder = os.path.dirname(os.path.abspath(self.shown or self.shared.path))
        if level:  # `from . import f`, `from .base import f`: from this module's package
            for _ in range(level - 1):
                folder = os.path.dirname(folder)
        key = (folder if level else "", module)
        modules = self.shared.modules
        if key not in modules:
            modules[key] = _module(module, folder, level == 0, self.shared) if len(modules) < MAX_MODULES else None
        registry = modules[key]
        return (registry, name) if registry is not None and name in registry.functions else None


def _module(module: str, folder: str, upwards: bool, shared: _Shared) -> Optional[_Registry]:
    """The project's file of a module: `module` (dotted, "" for the package itself) from `folder`,
    and from each folder above it when `upwards` (an absolute import, from wherever the root is)."""
    from ..discover import display_path
    from ..project import upward

    relative, view = module.replace(".", os.sep), shared.view
    for above in upward(folder, MAX_LEVELS if upwards else 1):
        base = os.path.join(above, relative) if relative else above
        for candidate in ((base + ".py",) if relative else ()) + (os.path.join(base, "__init__.py"),):
            if view.is_file(candidate) and view.may_read(candidate):
                try:
                    text = view.read_bytes(candidate).decode("utf-8-sig", "replace")
                    if not is_registry(text):
                        return None
                    shown = display_path(candidate)
                    doc = read_python(shown, text)
                    return _Registry(doc, ast.parse(text), shared, shown)
                except (OSError, ParseError, SyntaxError, ValueError, RecursionError, MemoryError):
                    return None
    return None


class _Body(Evaluator):
    """The evaluator of one function body: the module's names plus its locals."""

    def __init__(self, registry: _Registry):
        super().__init__(registry.text)
        self.registry = registry
        self.steps = registry.steps
        self.names = dict(registry.namespace)
        self.returned: Optional[Node] = None
        self.done = False

    def bind_arguments(self, function: ast.FunctionDef, args: list, kwargs: dict) -> bool:
        spec = function.args
        if spec.vararg or spec.kwarg:
            return False
        positional = spec.posonlyargs + spec.args
        if len(args) > len(positional):
            return False
        defaults = dict(zip([a.arg for a in positional[len(positional) - len(spec.defaults):]], spec.defaults))
        defaults.update({a.arg: d for a, d in zip(spec.kwonlyargs, spec.kw_defaults) if d is not None})
        given = dict(zip([a.arg for a in positional], args))
        for key, value in kwargs.items():
            if key in given or key not in {a.arg for a in positional + spec.kwonlyargs}:
                return False
            given[key] = value
        for arg in positional + spec.kwonlyargs:
            if arg.arg in given:
                self.names[arg.arg] = given[arg.arg]
            elif arg.arg in defaults:
                self.names[arg.arg] = self.expr(defaults[arg.arg])
            else:
                return False
        return True

    def body(self, function: ast.FunctionDef) -> Node:
        self.run(function.body)
        if self.returned is None:
            return Unknown(_line_span(function), f"{function.name}() returns no value that is followed")
        return self.returned

    def run(self, body: list) -> None:
        for stmt in body:
            if self.done:
                return
            self.statement(stmt)

    def statement(self, stmt: ast.stmt) -> None:
        if self.done:
            return
        if isinstance(stmt, ast.Return):
            self.line = stmt.lineno
            if self.condition is not None:
                self.returned = Unknown(self.span(stmt), "returned under a condition that cannot be evaluated")
            else:
                self.returned = self.expr(stmt.value) if stmt.value is not None else Scalar(None, self.span(stmt))
            self.done = True
            return
        if not isinstance(stmt, ast.If) and _returns_inside(stmt):
            # A return inside a loop, `with` or `try`: which value comes back is not followed.
            self.returned = Unknown(self.span(stmt), "returned from inside a block that is not evaluated")
            self.done = True
            return
        super().statement(stmt)

    def expr(self, node: ast.expr) -> Node:
        # The base evaluator dispatches on its own methods: calls and attributes are read here first.
        if isinstance(node, (ast.Call, ast.Attribute)) and self.depth < MAX_DEPTH:
            self.charge(1)
            self.depth += 1
            value = self.call(node) if isinstance(node, ast.Call) else self.attribute(node)
            self.depth -= 1
            return value
        return super().expr(node)

    def call(self, node: ast.Call) -> Node:
        function = node.func
        target = self.followed(function)
        if target is not None:
            registry, name = target
            if any(isinstance(arg, ast.Starred) for arg in node.args) or any(kw.arg is None for kw in node.keywords):
                return Unknown(self.span(node), f"arguments of {name}() not followed")
            args = [self.expr(arg) for arg in node.args]
            kwargs = {kw.arg: self.expr(kw.value) for kw in node.keywords}
            self.registry.steps = self.steps
            value = registry.call(name, args, kwargs, node)
            self.steps = self.registry.steps
            return value
        return super().expr_Call(node)

    def followed(self, function: ast.expr) -> Optional[tuple]:
        """(registry, function name) of a call that is followed: a function of this module, or one
        a config module of the project defines, imported by name."""
        if not isinstance(function, ast.Name):
            return None
        bound = self.names.get(function.id)
        qualname = getattr(bound.value, "qualname", None) if isinstance(bound, Scalar) else None
        if qualname is None:
            return None
        if qualname == function.id and function.id in self.registry.functions:
            return self.registry, function.id
        return self.registry.imported(qualname) if "." in qualname else None

    def attribute(self, node: ast.Attribute) -> Node:
        base = self.expr(node.value)
        if isinstance(base, Mapping) and node.attr not in base.items and node.attr in SECTIONS and _is_trainer(base):
            section = Mapping(span=base.span)  # the section's defaults, no key written
            base.items[node.attr] = section
            return section
        if isinstance(base, Mapping) and node.attr in base.items:
            return base.items[node.attr]
        if isinstance(base, Scalar) and isinstance(base.value, Symbol):
            return super().expr_Attribute(node)  # a qualified name: evaluates its base once more, cheaply
        return Unknown(self.span(node), f"attribute {node.attr}", base.deps)

    def expression_statement(self, stmt: ast.Expr) -> None:
        """A call for its effect: a method changes the value it is called on (that value alone
        becomes unknown); a function of another module given a config may change all of it."""
        call = stmt.value
        if not isinstance(call, ast.Call):
            return
        if self.followed(call.func) is not None:
            self.expr(call)  # followed: what it sets is set
            return
        if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, (ast.Attribute, ast.Subscript)):
            container, key = self.item_of(call.func.value)
            if isinstance(container, Mapping) and isinstance(key, str):
                container.items[key] = Unknown(self.span(stmt), f"changed by {call.func.attr}()")
                return
        for arg in list(call.args) + [kw.value for kw in call.keywords]:
            if isinstance(arg, ast.Name) and isinstance(self.names.get(arg.id), (Mapping, Sequence)):
                self.names[arg.id] = Unknown(self.span(stmt), "given to a function that is not followed")
        super().expression_statement(stmt)


def _returns_inside(stmt: ast.stmt) -> bool:
    """A `return` of this function within a compound statement (not one of a function defined in it)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return False
    stack: list[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            return True
        stack.extend(child for child in ast.iter_child_nodes(node)
                     if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)))
    return False


def _is_trainer(mapping: Mapping) -> bool:
    """A trainer's config: it holds the model spec every one needs (trainer.py:281-283), or is built
    by a `*Trainer.Config(...)`."""
    kind = mapping.items.get("type")
    name = kind.value.qualname if isinstance(kind, Scalar) and isinstance(kind.value, Symbol) else ""
    return "model_spec" in mapping.items or name.endswith("Trainer.Config")


def _copied(node: Node, shown: Optional[str] = None, shared: Optional[_Shared] = None) -> Node:
    """A fresh copy of a value (each call builds a new config), shared parts shared as they are,
    its positions marked as in the module `shown` (None: the file linted); past MAX_NODES nodes
    or MAX_DEPTH levels, Unknown. Each node copied is a step of the file's budget."""
    budget = [MAX_NODES]
    try:
        return _copy(node, {}, budget, 0, shown)
    except _TooLarge:
        return Unknown(node.span.elsewhere(shown), f"a value past {MAX_NODES:,} nodes", node.deps)
    finally:
        if shared is not None:
            shared.steps -= MAX_NODES - budget[0]
            if shared.steps < 0:
                raise LimitExceeded(f"Python config needs more than {MAX_EVAL_STEPS:,} evaluation steps")


class _TooLarge(Exception):
    pass


def _copy(node: Node, seen: dict, budget: list, depth: int, shown: Optional[str]) -> Node:
    if not isinstance(node, (Mapping, Sequence)):
        if shown is None or node.span.path is not None:
            return node  # scalars and unknowns are never changed in place
        if isinstance(node, Scalar):
            return Scalar(node.value, node.span.elsewhere(shown), node.deps, node.origin, node.quoted)
        return Unknown(node.span.elsewhere(shown), getattr(node, "why", ""), node.deps, node.origin)
    found = seen.get(id(node))
    if found is not None:
        return found
    budget[0] -= 1
    if budget[0] < 0 or depth > MAX_DEPTH:
        raise _TooLarge()
    span = node.span.elsewhere(shown) if shown else node.span
    fresh: Mapping | Sequence
    if isinstance(node, Mapping):
        spans = {k: v.elsewhere(shown) for k, v in node.key_spans.items()} if shown else dict(node.key_spans)
        fresh = Mapping(items={}, key_spans=spans, span=span, deps=node.deps, origin=node.origin)
        seen[id(node)] = fresh
        fresh.items = {key: _copy(value, seen, budget, depth + 1, shown) for key, value in node.items.items()}
    else:
        fresh = Sequence(items=[], span=span, deps=node.deps, origin=node.origin)
        seen[id(node)] = fresh
        fresh.items = [_copy(value, seen, budget, depth + 1, shown) for value in node.items]
    return fresh


# --------------------------------------------------------------------------- the plan


@lean_dataclass(frozen=True)
class RegistrySettings(Subject):
    """What a registry config is, beside its batch facts (no v0.2 TOML rule reads these)."""

    FRAMEWORKS = ("torchtitan",)  # torchtitan.NAME: its plans are TorchTitan's

    config: str  # the function's name
    arithmetic: Optional[str]  # TOKENS, SEQUENCES, or None when it cannot be told


def plans(doc: Document, outside: Outside):
    """A plan for the selected config (a launch line's `--config`), else one per config function
    of the module; None when the module is no registry."""
    if doc.selected is not None:
        if not isinstance(doc.root, Mapping) or not _is_trainer(doc.root):
            return None
        return plan_config(doc, outside, _arithmetic(doc, doc.root, outside.view))
    configs = read_configs(doc, outside.view)
    found = []
    for config in configs:
        if isinstance(config.value, Mapping) and _is_trainer(config.value):
            one = config_document(doc, config)
            found.append(plan_config(one, outside, _arithmetic(one, one.root, outside.view)))
    return found or None


def _arithmetic(doc: Document, root: Mapping, view: ProjectView) -> Optional[str]:
    """Tokens or sequences: by the keys the config writes, else by the project's own copy of
    TorchTitan (its TrainingConfig's fields); None when neither tells."""
    training = root.get("training")
    if isinstance(training, Mapping):
        if any(key in training.items for key in _TOKEN_KEYS):
            return TOKENS
        if any(key in training.items for key in _SEQUENCE_KEYS):
            return SEQUENCES
    return copy_arithmetic(doc.path, view)


def _field(section: Optional[Node], name: str, key: str, default) -> Fact:
    """A field of a section: as written, the default when the section or the field is left
    out, not known when the section itself is not known."""
    if section is None:
        return Fact(default, key, None, Origin.DEFAULT)
    if not isinstance(section, Mapping):
        return Fact(None, key, section.span, Origin.FILE, section)
    return number(section.get(name), key, default=default) if name in section.items else \
        Fact(default, key, None, Origin.DEFAULT)


def _flag(section: Optional[Node], name: str, key: str, default: bool) -> Fact:
    if section is None or (isinstance(section, Mapping) and name not in section.items):
        return Fact(default, key, None, Origin.DEFAULT)
    if not isinstance(section, Mapping):
        return Fact(None, key, section.span, Origin.FILE)  # a section not known
    node = section.items[name]
    value = node.value if isinstance(node, Scalar) and isinstance(node.value, bool) else None
    return Fact(value, key, node.span, Origin.FILE, node)


# ParallelismConfig's degrees and their defaults (config/configs.py:122-282 @ b5bcd76).
_DEGREES = {
    "dp_replicate": ("data_parallel_replicate_degree", 1),
    "dp_shard": ("data_parallel_shard_degree", -1),
    "tp": ("tensor_parallel_degree", 1),
    "pp": ("pipeline_parallel_degree", 1),
    "cp": ("context_parallel_degree", 1),
    "ep": ("expert_parallel_degree", 1),
}


def plan_config(doc: Document, outside: Outside, arithmetic: Optional[str]) -> TrainingPlan:
    from .torchtitan import NAME, data_parallel, shard_degree

    root = doc.root
    training, parallelism = root.items.get("training"), root.items.get("parallelism")
    parallel = {short: _field(parallelism, name, f"parallelism.{name}", default)
                for short, (name, default) in _DEGREES.items()}
    plan = TrainingPlan(framework=NAME, document=doc, world_size=outside.world_size,
                        target_global_batch=outside.target_global_batch, parallel=parallel,
                        derived_from_global="grad_accum",
                        settings=RegistrySettings(doc.selected or "", arithmetic))
    plan.layout = tuple(parallel[k] for k in ("dp_replicate", "dp_shard", "cp", "tp", "pp"))
    plan.data_parallel = data_parallel(parallel, shard_degree(parallel, outside.world_size), outside.world_size)
    if plan.data_parallel is None and parallel["dp_replicate"].positive:
        plan.data_parallel_factor = parallel["dp_replicate"]
    if arithmetic is None:
        return plan  # which keys and defaults apply is not known: the batch stays unknown
    if arithmetic == TOKENS:
        per_micro = _field(training, "num_tokens_per_microbatch_per_dp_rank",
                           "training.num_tokens_per_microbatch_per_dp_rank", 16384)  # configs.py:37
        plan.unit = TOKENS
        plan.micro_batch = _per_dp_rank(per_micro, parallel["pp"],
                                        _field(parallelism, "num_pp_microbatches", "parallelism.num_pp_microbatches", 1))
        declared = _field(training, "num_tokens_per_train_step", "training.num_tokens_per_train_step", -1)  # :43
        plan.seq_len = per_micro  # the tokens of one micro-batch are what sequence/context parallelism splits
    else:
        plan.micro_batch = _field(training, "local_batch_size", "training.local_batch_size", 8)  # @ 0.3.0
        declared = _field(training, "global_batch_size", "training.global_batch_size", -1)
        plan.seq_len = _field(training, "seq_len", "training.seq_len", 2048)
    if declared.origin is not Origin.DEFAULT and not (declared.known and declared.value == -1):
        plan.declared_global_batch = declared  # -1: tokens per dp rank x dp, nothing declared
    elif plan.micro_batch.known:
        plan.grad_accum = Fact(1, "gradient accumulation", None, Origin.DERIVED,
                               detail=f"{declared.key} is -1: one micro-step per optimizer step")
    plan.seq_len_multiple = _seq_len_multiple(parallel, _flag(parallelism, "enable_sequence_parallel",
                                                              "parallelism.enable_sequence_parallel", True))
    return plan


def _per_dp_rank(per_micro: Fact, pp: Fact, microbatches: Fact) -> Fact:
    """The tokens one dp rank takes per accumulation step: per micro-batch x num_pp_microbatches
    when pp > 1 (trainer.py:408-414; the count is ignored without pipeline parallelism)."""
    tokens, degree, count = per_micro.count, pp.number, microbatches.count
    if tokens is None or (degree is not None and degree <= 1) or count == 1:
        return per_micro
    if degree is None or count is None:
        return Fact(None, per_micro.key, per_micro.span, per_micro.origin, per_micro.node)
    return Fact(tokens * count, "tokens per dp rank", per_micro.span, Origin.DERIVED,
                detail=f"{per_micro.key} {tokens} x {microbatches.key} {count}")


def _seq_len_multiple(parallel: dict, sequence_parallel: Fact) -> Optional[Fact]:
    """(tp if enable_sequence_parallel) x (2 cp if cp > 1) (trainer.py:299-301)."""
    tp, cp = parallel["tp"], parallel["cp"]
    if not (tp.positive and cp.positive and isinstance(sequence_parallel.value, bool)):
        return None
    value = (tp.value if sequence_parallel.value else 1) * (2 * cp.value if cp.value > 1 else 1)
    parts = [f"tensor_parallel_degree {tp.value}" + ("" if sequence_parallel.value else " (sequence parallel off: 1)")]
    if cp.value > 1:
        parts.append(f"2 x context_parallel_degree {cp.value}")
    return Fact(value, "sequence/context parallel divisor", tp.span or cp.span, Origin.DERIVED,
                detail=" x ".join(parts))

