"""What every fixer shares: the registry, the context a fixer works in, and the error that stops a write.

A fixer receives the findings it fixes (their node locations, resolved to the nodes of the model being
fixed, inside If/Loop/Scan bodies too) and the selected targets; it returns the rewritten model. A fixer
that finds nothing it can change safely returns the model unchanged, and the caller says so.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Callable

import onnx

from onnxlint.model.graph import GraphIndex, NodeRef
from onnxlint.model.locations import body_path, function_path
from onnxlint.rules.rule import UNSAFE_FIXES


class FixError(Exception):
    """The fixed model must not be written; the text says why."""


@dataclass
class FixContext:
    """model: the working copy (fixers edit it in place or return a new one); nodes: the nodes of this
    fixer's findings in that copy; targets: the selected targets; model_level: a finding with no node (the
    fix is about the whole model); inputs: the graph inputs of this fixer's graph-input findings; notes: lines the
    fixer has to say (what it left alone and why), shown with the model's fix notes; base_dir: the folder the model's
    external data paths are relative to (the model file's), None where not known (a model fixed in memory)."""

    model: onnx.ModelProto
    nodes: list[NodeRef] = field(default_factory=list)
    targets: frozenset[str] = frozenset()
    model_level: bool = False
    inputs: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    base_dir: Path | None = None

    @property
    def opset(self) -> int:
        return opset_of(self.model)

    @property
    def node_names(self) -> list[str]:
        """The names of this fixer's findings' nodes: how a graph from `graph()` finds them (`n.name in ...`)."""
        return [n.proto.name for n in self.nodes]

    def graph(self) -> Any:
        """The working copy as an onnx-graphsurgeon Graph to edit; give it back with `from_graph`. Leave dead
        nodes and order to the run: it cleans up and sorts once, after every fixer."""
        import onnx_graphsurgeon as gs

        return gs.import_onnx(self.model)

    def found(self, graph: Any) -> list[Found]:
        """This fixer's findings' nodes in `graph` (from `graph()`; If/Loop/Scan bodies and local functions
        included), each with the gs graph that holds it and its NodeRef (types, the constant lookup)."""
        refs = {n.location: n for n in self.nodes}
        return [Found(node, owner, refs[loc]) for loc, owner, node in gs_locations(graph) if loc in refs]

    def from_graph(self, graph: Any) -> onnx.ModelProto:
        """The model with `graph` (from `graph()`) in place of its graph; every other field of the model stays."""
        return graft(self.model, graph)


@dataclass(frozen=True)
class Found:
    """A finding's node in a gs graph: node (gs.Node, to edit), graph (the gs graph or body whose `nodes`
    holds it: where a node inserted beside it goes), ref (the NodeRef of the lint index of the working copy)."""

    node: Any
    graph: Any
    ref: NodeRef


def gs_locations(graph: Any) -> Iterator[tuple[str, Any, Any]]:
    """(location, owning graph, node) for every node of a gs graph, its bodies and local functions, with the
    locations GraphIndex gives (`graph/<name>`, `graph/<op>#<position>` unnamed, `<node>:<attribute>/...` in a
    body, `function:<domain>.<name>/...`): what a finding names."""
    import onnx_graphsurgeon as gs

    stack: list[tuple[str, Any]] = [("graph", graph)]
    for f in getattr(graph, "functions", None) or ():
        stack.append((function_path(f.domain, f.name), f))
    while stack:
        path, g = stack.pop()
        for i, n in enumerate(g.nodes):
            part = n.name if n.name else f"{n.op}#{i}"
            yield f"{path}/{part}", g, n
            for attr, value in n.attrs.items():
                if isinstance(value, gs.Graph):
                    stack.append((body_path(path, part, attr), value))


def is_read(graph: Any, tensor: Any) -> bool:
    """Whether a gs tensor is read by a node (a body's node reading it from outside included) or is an output of
    `graph` or of any body or function in it."""
    if tensor is None or not tensor.name:
        return False
    if tensor.outputs:
        return True
    return any(tensor.name in {t.name for t in g.outputs} for _, g, _ in _graphs(graph))


def truncate(items: Any, keep: int) -> None:
    """Drop a gs node's inputs or outputs after the first `keep` (gs's lists keep each tensor's readers and
    producer in step on pop, not on slice deletion)."""
    while len(items) > keep:
        items.pop()


def _graphs(graph: Any) -> Iterator[tuple[str, Any, Any]]:
    yield "graph", graph, None
    seen = {id(graph)}
    for _, _, n in gs_locations(graph):
        for value in n.attrs.values():
            if hasattr(value, "nodes") and id(value) not in seen:
                seen.add(id(value))
                yield "", value, n


def graft(model: onnx.ModelProto, graph: Any) -> onnx.ModelProto:
    """A copy of model whose graph is the onnx-graphsurgeon Graph's export (gs exports a graph and its opsets,
    not the model's metadata, functions or doc_string, which stay). gs drops what nodes carry besides their
    computation: each node's doc_string and metadata_props (where in-model suppressions live) come back from
    the node of the model that made the same first output, and the main graph's metadata_props stay."""
    import onnx_graphsurgeon as gs

    from onnxlint.model.graph import iter_graphs

    exported = gs.export_onnx(graph, do_type_check=False)
    out = onnx.ModelProto()
    out.CopyFrom(model)
    out.graph.CopyFrom(exported.graph)
    carried = {}
    for g in iter_graphs(model):
        for n in g.node:
            if (n.doc_string or n.metadata_props) and n.output and n.output[0]:
                carried[n.output[0]] = n
    if carried:
        for g in iter_graphs(out):
            for n in g.node:
                old = carried.get(n.output[0]) if n.output else None
                if old is not None and not n.doc_string and not n.metadata_props:
                    n.doc_string = old.doc_string
                    n.metadata_props.extend(old.metadata_props)
    if hasattr(model.graph, "metadata_props") and not out.graph.metadata_props:
        out.graph.metadata_props.extend(model.graph.metadata_props)
    if out.ir_version < 4:
        _inputs_for_initializers(out)
    return out


def _inputs_for_initializers(model: onnx.ModelProto) -> None:
    """IR versions below 4 want every initializer listed as a graph input too; gs exports initializers only (a
    tidied IR-3 model failed the checker: "... in initializer but not in graph input", pypi-onnx light_resnet50)."""
    from onnx import helper

    from onnxlint.model.graph import iter_graphs

    for g in iter_graphs(model):
        listed = {i.name for i in g.input}
        g.input.extend(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
                       for t in g.initializer if t.name not in listed)


class Applicability(str, Enum):
    """How far a fix may be applied without being asked, as ruff's `Applicability` says it.

    SAFE: `--fix` applies it. It keeps what the model computes: the numeric check holds the fixed model to the
    original's outputs (or, for a fixer with a reference, to the behaviour the reference names).
    UNSAFE: applied only with `--unsafe-fixes`. It changes the interface or the numerics on purpose (float64
    inputs taken as float32), so a user must ask for it.
    DISPLAY_ONLY: never applied. The finding still names it, for a rewrite a user should make by hand or in
    the exporter (`--explain` says so)."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"

    def applies(self, unsafe: bool) -> bool:
        """Whether a run applies it: SAFE always, UNSAFE with --unsafe-fixes, DISPLAY_ONLY never."""
        return self is Applicability.SAFE or (self is Applicability.UNSAFE and unsafe)


@dataclass(frozen=True)
class Fixer:
    name: str
    applicability: Applicability
    summary: str
    apply: Callable[[FixContext], onnx.ModelProto]
    reference: Callable[[onnx.ModelProto], onnx.ModelProto] | None = None
    # can_fix(node, rule): whether this fixer can clear the rule's finding on that node (None: always)
    can_fix: Callable[[NodeRef, Any], bool] | None = None
    # with a reference: (what the fix changes on purpose, what it was checked against), for the fix note
    intended: tuple[str, str] = ("changes outputs on purpose", "its reference")
    # the hint of a finding can_fix declines (None: the engine's "no automatic fix for this node")
    declined: str | None = None
    # the rewrite changes where bytes are stored, no value and no node (inline-small-tensors): a fixed model ORT's
    # graph resolution accepts but the CPU EP has no kernel for is written unrun (equivalence.verify)
    storage_only: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.applicability, bool):  # the form before Applicability: True safe, False unsafe
            object.__setattr__(self, "applicability", _applicability(self.name, self.applicability, None))

    @property
    def safe(self) -> bool:
        """Applied by --fix alone (Applicability.SAFE): the numeric check wants outputs equal."""
        return self.applicability is Applicability.SAFE


# The built-in fixers: name -> the module of onnxlint.fixers whose @fixer registers it. A lint asks only for
# the fixers its findings name (fix_for), so only their modules are imported (all of them would be a
# visible part of a process's start-up). tests/fixers/test_registry.py checks this table against what the modules register.
BUILTIN = {
    "batchnorm-inference": "batchnorm",
    "double-inputs-to-float": "double_inputs",
    "dropout-inference": "dropout",
    "equal-cast": "equal_cast",
    "fold-shapes": "fold_shapes",
    "gridsample-standard": "gridsample",
    "inline-small-tensors": "inline_external",
    "int64-to-int32": "int64_to_int32",
    "resize-sizes": "resize_sizes",
    "toposort": "tidy",
    "upgrade-opset": "upgrade_opset",
}


class FixerRegistry(MutableMapping[str, Fixer]):
    """Fixers by name. A built-in fixer's module is imported when that fixer is first asked for; a plug-in's
    (an entry point of PLUGIN_GROUP) only when a fix needs it: a plain lint, the rule schema and the result
    cache's keys know plug-ins by name (names(): their entry points' names, nothing imported), so a broken
    plug-in costs only the --fix that asks for it, as one FixError line. Listing the registry (iterating, len)
    imports every fixer, so a listing is always complete."""

    def __init__(self, builtin: dict[str, str]) -> None:
        self._fixers: dict[str, Fixer] = {}
        self._builtin = builtin

    def _import(self, name: str) -> None:
        module = self._builtin.get(name)
        if module is not None and name not in self._fixers:
            importlib.import_module(f"onnxlint.fixers.{module}")
        elif module is None and name not in self._fixers:
            self._plugins(name)

    def _plugins(self, name: str | None = None) -> None:
        """Load the fixers installed packages declare in the entry-point group `onnxlint.fixers` (entry name: the
        fixer's name; loading it imports the module whose @fixer registers it): the one asked for, or all. A
        plug-in that cannot be imported, or registers no such fixer, is a FixError (one line)."""
        for ep in _entry_points():
            if (name is None or ep.name == name) and ep.name not in self._fixers and ep.name not in self._builtin:
                try:
                    ep.load()
                except Exception as exc:  # noqa: BLE001 - any failure of a third party's import is one line
                    detail = " ".join(str(exc).split())[:300]
                    raise FixError(f"plug-in fixer {ep.name!r} ({ep.value}, entry point of {PLUGIN_GROUP}) cannot be "
                                   f"loaded: {type(exc).__name__}: {detail}") from None
                if ep.name not in self._fixers:
                    raise FixError(f"plug-in {ep.value} (entry point {ep.name!r} of group {PLUGIN_GROUP}) registered "
                                   f"no fixer named {ep.name!r}; decorate it with onnxlint.fixers.base.fixer")

    def names(self) -> list[str]:
        """Every fixer name, built-in, registered or declared by a plug-in's entry point, without importing any
        fixer (what the rule schema's `fix:` enum lists)."""
        declared = [ep.name for ep in _entry_points()]
        return list(dict.fromkeys([*self._builtin, *self._fixers, *declared]))

    def loaded(self, name: str) -> Fixer | None:
        """The fixer when it can be had without running a plug-in's code: a built-in one (imported now if need
        be) or one already registered; None for a plug-in not loaded yet (a lint does not load it)."""
        if name in self._builtin:
            return self.get(name)
        return self._fixers.get(name)

    def __getitem__(self, name: str) -> Fixer:
        if name not in self._fixers:
            self._import(name)
        return self._fixers[name]

    def __setitem__(self, name: str, fx: Fixer) -> None:
        self._fixers[name] = fx

    def __delitem__(self, name: str) -> None:
        del self._fixers[name]

    def __iter__(self) -> Iterator[str]:
        for name in self._builtin:
            self._import(name)
        self._plugins()
        # the built-in ones in the table's order (whichever was asked for first), then any other
        names = [n for n in self._builtin if n in self._fixers]
        return iter(names + [n for n in self._fixers if n not in self._builtin])

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _entry_points() -> list[Any]:
    """The entry points of PLUGIN_GROUP (their metadata only: nothing is imported)."""
    from importlib.metadata import entry_points

    return list(entry_points(group=PLUGIN_GROUP))


PLUGIN_GROUP = "onnxlint.fixers"  # the entry-point group of user fixers (docs: CONTRIBUTING.md, "Plug-in fixers")
REGISTRY = FixerRegistry(BUILTIN)


FixFn = Callable[[FixContext], onnx.ModelProto]


def fixer(name: str, applicability: Applicability | bool | None = None, summary: str | None = None,
          reference: Callable[[onnx.ModelProto], onnx.ModelProto] | None = None,
          can_fix: Callable[[NodeRef, Any], bool] | None = None,
          intended: tuple[str, str] = ("changes outputs on purpose", "its reference"),
          *, safe: bool | None = None, declined: str | None = None,
          storage_only: bool = False) -> Callable[[FixFn], FixFn]:
    """Register a fixer: `@fixer("my-fix", Applicability.SAFE, "what it does")`. reference(model) gives the
    behaviour the fix must keep when the original's own outputs are not it (a training-mode Dropout is random:
    the fix must match the original run in inference mode). can_fix(node, rule) says, at lint time, whether the
    fixer can clear that finding: a finding it cannot clear is not marked fixable. intended: with a reference,
    (what the fix changes on purpose, what it was checked against): the fix note says so, not "outputs equal".
    declined: the hint of a finding can_fix declines, where "no automatic fix for this node" is not what it is (a
    model-level finding's fixer that clears one of its causes only). storage_only: the rewrite moves stored bytes
    and changes no value or node, so a fixed model ORT resolves but has no CPU kernel for is written, said unrun.

    The form before Applicability, a bool (`@fixer(name, True, summary)`, `@fixer(name, safe=True, ...)`), still
    registers the same fixer (True: SAFE, False: UNSAFE) with a DeprecationWarning (CONTRIBUTING.md, "Plug-in
    fixers")."""
    how = _applicability(name, applicability, safe)
    if summary is None:
        raise TypeError(f"fixer {name!r}: a summary is required")

    def deco(fn: FixFn) -> FixFn:
        REGISTRY[name] = Fixer(name, how, summary, fn, reference, can_fix, intended, declined, storage_only)
        return fn

    return deco


def _applicability(name: str, given: Applicability | bool | None, safe: bool | None) -> Applicability:
    """The Applicability a registration names, from the new form or the bool one."""
    if isinstance(given, Applicability):
        if safe is not None:
            raise TypeError(f"fixer {name!r}: give the applicability or safe=, not both")
        return given
    if given is None and safe is None:
        raise TypeError(f"fixer {name!r}: its applicability is required (Applicability.SAFE, UNSAFE or DISPLAY_ONLY)")
    if given is not None and safe is not None:
        raise TypeError(f"fixer {name!r}: give the applicability or safe=, not both")
    flag = given if given is not None else safe
    if not isinstance(flag, bool):
        raise TypeError(f"fixer {name!r}: applicability must be an Applicability, not {flag!r}")
    warnings.warn(f"fixer {name!r}: a bool for fix safety is deprecated; pass onnxlint.fixers.base.Applicability."
                  f"{'SAFE' if flag else 'UNSAFE'}", DeprecationWarning, stacklevel=3)
    return Applicability.SAFE if flag else Applicability.UNSAFE


def opset_of(model: onnx.ModelProto) -> int:
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)


class Nodes(list[NodeRef]):
    """NodeRefs with the GraphIndex they belong to (a NodeRef holds its scope weakly: the index keeps it)."""

    graph_index: GraphIndex | None = None


def resolve(model: onnx.ModelProto, locations: list[str]) -> Nodes:
    """The nodes at these locations in model (the same locations the lint index gives); the list keeps
    their index alive."""
    wanted = set(locations)
    index = GraphIndex(model)
    out = Nodes(n for n in index.nodes if n.location in wanted)
    out.graph_index = index
    return out


def worded_hint(hint: str, fix: str) -> str:
    """A fixable finding's hint worded by its fixer's applicability (`Rule.fix_hint` knows the fixer's name only):
    an unsafe fixer (it changes the interface or numerics) runs only with --fix --unsafe-fixes, a display-only one
    never, and the hint says so. The text's --statistics counts a hint naming --unsafe-fixes apart. A plug-in is
    not imported to word it (a lint never imports one): its hint stays as the rule words it."""
    fx = REGISTRY.loaded(fix)
    if fx is None or fx.applicability is Applicability.SAFE:
        return hint
    generic = hint == f"fixable with --fix ({fix})"
    if fx.applicability is Applicability.UNSAFE:
        if generic:
            return f"fixable with --fix {UNSAFE_FIXES} ({fix}; unsafe: it changes the interface or numerics)"
        return hint if UNSAFE_FIXES in hint else f"{hint} (its fix needs --fix {UNSAFE_FIXES})"
    return f"{fix} describes a fix onnxlint does not apply" if generic else hint


def declined_hint(fix: str | None, hint: str) -> str:
    """The hint of a finding whose rule's fixer declined it: the fixer's own words (Fixer.declined), else hint."""
    fx = REGISTRY.loaded(fix) if fix else None
    return fx.declined if fx is not None and fx.declined is not None else hint


def fix_for(rule: Any, node: NodeRef | None, model: onnx.ModelProto | None = None, lint: Any = None) -> str | None:
    """The fixer a finding of `rule` on `node` names (None: not fixable there). Called by the engine when it
    builds a finding (`engine._finding`): a fixer that cannot clear this node's finding (no equivalent graph
    exists: a Resize whose input shape is dynamic, a shape computation that depends on run-time data ...)
    leaves the finding unfixable. A graph-input finding (node None) keeps the rule's fixer; a model-level
    one asks the fixer with a stand-in node whose scope carries the model (upgrade-opset tries the converter).

    model: the model the lint indexes (`ctx.index.model`); needed only for model-level findings. lint: the lint's
    context (a LintContext), on the stand-in node of a model-level finding as `lint` (what ORT's refusal is:
    inline-small-tensors)."""
    name: str | None = getattr(rule, "fix", None)
    if not name:
        return None
    fx = REGISTRY.loaded(name)  # a plug-in is not imported by a lint: its finding keeps the rule's fixer
    if fx is None or fx.can_fix is None:
        return name
    asked: Any = node
    if node is None:
        if model is None or getattr(rule, "scope", "node") != "model":
            return name
        asked = _ModelNode(model, lint)
    elif model is not None:
        root = node.scope.root
        if getattr(root, "_onnxlint_model", None) is not model:
            root.__dict__["_onnxlint_model"] = model  # what a fixer asks about the whole model (upgrade-opset)
    try:
        return name if fx.can_fix(asked, rule) else None
    except Exception:  # a predicate bug must not break linting: claim nothing
        return None


class _ModelScope:
    """The scope a model-level finding's fixer is asked about: its own root (GraphScope.root)."""

    parent = None

    def __init__(self, model: onnx.ModelProto):
        self._onnxlint_model = model

    @property
    def root(self) -> "_ModelScope":
        return self


class _ModelNode:
    """What a model-level finding's fixer is asked about: no node, the model on its scope."""

    op_type = ""
    domain = "ai.onnx"
    opset = None
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()

    def __init__(self, model: onnx.ModelProto, lint: Any = None):
        self.scope = _ModelScope(model)
        self.lint = lint


