"""Whether ORT loads the model at all: the newest IR version and ai.onnx opset a release accepts (model.cc's IR
check, model_load_utils.h ValidateOpsetForDomain), read from the release table; what a release refuses while reading
the model, before resolving it (ort.load_refusal: no opset_import, a tensor of an element type its row refuses);
and what Graph::Resolve
(core/graph/graph.cc) refuses at session creation, which is less than onnx's checker and strict shape inference:

- Constant nodes become initializers before anything is inferred (the Graph constructor), so a Constant whose
  declared value_info disagrees with its value is never looked at (every ORT GenAI model has one);
- each node is checked with onnx's check_node against ORT's schema registry (onnx's schemas and ORT's own:
  SimplifiedLayerNormalization passes), not the whole-model checker (an unsorted graph loads: ORT sorts it);
- types are checked (an input type its schema does not allow, a type parameter bound to two types, an output
  whose declared element type differs from the inferred one: "Type Error: ..."), and a node's inference function
  that throws fails the session ("Node (n) Op (t) [ShapeInferenceError] ...");
- an inferred shape that conflicts with a declared one is not a failure: ORT logs "Error merging shape info for
  output" and goes on (MergeShapeInfo; measured on 1.24.4 at opsets 17, 24 and 25, its newest; only the session
  option session.strict_shape_type_inference=1 makes it fail, "Can't merge shape info").

The type and inference checks are run as onnx's strict inference on the model as ORT resolves it (Constants as
initializers, declared shapes dropped); what fails there, ORT refuses, in its words. Not modelled (refusals with no
claim, benchmarks/refusal_claims.py): checks of the onnx ORT was built with where the installed onnx differs
(ORT 1.24.4 refuses Attention's newer left_window_size attribute and DFT with is_onesided and inverse), and
whether a refusal depends on the release (`version` keys the result: nothing measured differs between releases but
load_refusal's element types, each release's row: releases.ElemTypes, and whether Resolve may read a value stored in
an external data file: Release.external_inference_refusal, every release probed so far refuses it).
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable
from typing import Any

import onnx

from onnxlint.model.graph import ORT_DOMAINS, STANDARD_DOMAINS, iter_graphs
from onnxlint.model.graph_walks import node_reads
from onnxlint.ort import releases
from onnxlint.ort.load_refusal import UNREGISTERED, load_refusal


def refuses_model(model: onnx.ModelProto, version: str | None, memo: dict[str, Any] | None = None,
                  resolved: Resolved | None = None) -> tuple[str, str] | None:
    """(reason, message) when ORT `version` refuses to load the model: it imports no opset, its IR version or ai.onnx
    opset is newer than the release loads, or a tensor's element type is one the release refuses (load_refusal).
    resolved: version -> resolve_failure's words for the model (resolved_for): a model Graph::Resolve refuses (OLX007)
    is refused, and so is one refused only once the graph is resolved (no MLDataType for a graph input or output)
    where Resolve passes; without it, neither is asked (the latter is said in its own words)."""
    if not model.opset_import:  # Model::Model (model.cc) checks this before the IR version
        return _invalid(model, version, memo, resolved)
    row = releases.row(version)
    if row.max_opset is None or row.max_ir is None:
        return _invalid(model, version, memo, resolved)  # limits not known (a release newer or older than the table)
    max_opset, max_ir = row.max_opset, row.max_ir
    if model.ir_version > max_ir:
        return "model-ir", (f"IR version {model.ir_version} is newer than onnxruntime {version} loads (max {max_ir}): "
                            f"session creation fails with 'Unsupported model IR version'")
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx") and imp.version > max_opset:
            return "model-opset", (f"ai.onnx opset {imp.version} is newer than onnxruntime {version} supports (max {max_opset}): "
                                   f"session creation fails in ValidateOpsetForDomain")
    return _invalid(model, version, memo, resolved)


Resolved = Callable[[str | None], str | None]  # an ORT release -> what it prints when it refuses the model, or None


def _newer_than_release(model: onnx.ModelProto, version: str | None) -> bool:
    """Whether ORT `version` refuses the model for its IR version or ai.onnx opset (Model's constructor: after the
    opset_import check, before the graph is built); not for a model that imports no opset (refused before that)."""
    if not model.opset_import:
        return False
    row = releases.row(version)
    if row.max_opset is None or row.max_ir is None:
        return False
    return model.ir_version > row.max_ir or any(
        imp.domain in ("", "ai.onnx") and imp.version > row.max_opset for imp in model.opset_import)


def _invalid(model: onnx.ModelProto, version: str | None, memo: dict[str, Any] | None,
             resolved: Resolved | None = None) -> tuple[str, str] | None:
    refusal = load_refusal(model, version, memo)
    if resolved is not None and (refusal is None or refusal[1].startswith(UNREGISTERED)):
        # Graph::Resolve's words (resolve_failure): a model it refuses is refused, whatever the placement would be;
        # they come before the late MLDataType check, or none are known
        words = resolved(version)
        if refusal is None or words != refusal[1]:
            return ("model-invalid", f"session creation fails with '{words}'") if words else None
    return ("model-invalid", _load_message(refusal)) if refusal else None


def _load_message(refusal: tuple[str, str] | None) -> str:
    what, words = refusal or ("", "")
    return f"{what}: session creation fails with '{words}'"


# --------------------------------------------------------------------------- what loading refuses before resolving

def resolve_failure(model: onnx.ModelProto, checker_error: str | None, strict_error: str | None,
                    version: str | None, order: Callable[[], dict[str, int]] | None = None,
                    memo: dict[str, Any] | None = None) -> str | None:
    """What ORT `version` prints when Graph::Resolve refuses the model at session creation, or None when it
    resolves it. checker_error, strict_error: onnx's complaints (the checker's, strict inference's); ORT can only
    refuse what one of them flags, so a model both pass is not looked at again. order: node name -> its place in
    ORT's topological order (ORT stops at the first failing node in that order; onnx lists them all). A model
    loading refuses before resolving it (load_refusal; memo: its) is refused in those words. A model whose IR
    version or ai.onnx opset the release refuses (refuses_model's model-ir, model-opset: OLX203/OLX251 say it) is
    refused there, before the graph is built (measured, every release 1.20-1.32): nothing after that is ORT's words."""
    if _newer_than_release(model, version):
        return None
    refusal = load_refusal(model, version, memo)
    if refusal and not refusal[1].startswith(UNREGISTERED):
        return refusal[1]
    # an input with no MLDataType is refused in the model's metadata, once the graph is resolved: Resolve's own words
    # come first (measured on 1.24.4: complex64 beside an Add of float and int64 is the Type Error; beside a custom
    # domain's op, "is not a registered function/op", which OLX014/OLX202 say)
    resolved = _resolve_words(model, checker_error, strict_error, order, version)
    if resolved == _UNKNOWN:
        return None
    if resolved or not refusal or _op_without_schema_first(model, []):
        return resolved
    return refusal[1]


# onnx's strict inference checks a node's output type against its schema; ORT does not (a Cast to complex64 read by
# an Identity loads on 1.23.2-1.32.0, one that is a graph output is refused for want of an MLDataType, _unregistered_io)
_OUTPUT_TYPE = "output has unsupported type"
# a body node's complaint comes after its If/Loop/Scan's, which says nothing of its own
_WRAPPER = ("", "[ShapeInferenceError]", "[TypeInferenceError]")
_OUTPUT_TYPE_RETRIES = 8  # onnx stops at the first such node: inferred again past each, so many times at most
_UNKNOWN = ""  # _resolve_words: what ORT's Resolve meets is not known (onnx stopped at a check ORT does not make)


_EXTERNAL_DATA = "Cannot parse data from external tensors"  # onnx's inference, reading a value in a data file


def _resolve_words(model: onnx.ModelProto, checker_error: str | None, strict_error: str | None,
                   order: Callable[[], dict[str, int]] | None, version: str | None = None) -> str | None:
    """resolve_failure's Graph::Resolve part: what ORT prints when resolving the graph fails, None when it resolves
    the graph, _UNKNOWN when onnx stopped at a check ORT does not make and what ORT meets after it is not known. A
    node whose inference reads a value stored in an external data file (a model saved with `size_threshold=0`) fails
    only where the release's probe says so (Release.external_inference_refusal): elsewhere nothing is claimed from
    this inference (the nodes after it failed for want of its output's type)."""
    if checker_error:
        shared = _checker_complaint_ort_shares(model, checker_error)
        if shared:
            return shared
    if not strict_error:
        return None
    from onnxlint.model.loading import native

    view, index = as_ort_resolves(model), _node_index(model)
    for _ in range(_OUTPUT_TYPE_RETRIES):
        try:
            native.infer_shapes(view, check_type=True, strict_mode=True)
        except native.NativeCrash:
            return None  # onnx crashed on it: that says nothing about ORT
        except Exception as exc:  # what onnx's strict inference raises on the model as ORT sees it
            found = list(_NODE_ERROR.finditer(" ".join(str(exc).split())))
            errors = [m for m in found if not m.group("msg").startswith(_OUTPUT_TYPE) and _ort_infers(model, m, index)]
            unchecked = [m for m in found if m.group("msg").startswith(_OUTPUT_TYPE)]
            if not unchecked or any(m.group("msg").strip() not in _WRAPPER for m in errors):
                if not errors or _op_without_schema_first(model, errors) or _external_read(errors, version):
                    return None
                return ort_words(model, errors, order() if order else None, index)
            if not _past_output_types(view, unchecked):
                return _UNKNOWN
            continue
        return None
    return _UNKNOWN


def _past_output_types(view: onnx.ModelProto, errors: list[re.Match[str]]) -> bool:
    """The view with each main-graph node whose output type onnx refused (ORT does not check it: _OUTPUT_TYPE) made
    a graph input of that type, so that onnx's inference goes past it as ORT's does; False (the view as it was) when
    one is not a single-output node of the main graph."""
    from onnxlint.model.graph import dtype_name

    names = {dtype_name(e): e for e in onnx.TensorProto.DataType.values()}
    made = []
    for m in errors:
        nodes = [n for n in view.graph.node if n.op_type == m.group("op") and n.name == (m.group("name") or "")]
        elem = names.get(m.group("msg")[len(_OUTPUT_TYPE):].strip().removeprefix("tensor(").removesuffix(")"))
        if len(nodes) != 1 or len(nodes[0].output) != 1 or elem is None:
            return False
        made.append((nodes[0], elem))
    for node, elem in made:
        view.graph.node.remove(node)
        view.graph.input.append(onnx.helper.make_tensor_value_info(node.output[0], elem, None))
    return True


def _external_read(errors: list[re.Match[str]], version: str | None) -> bool:
    """Whether a failing node read a value in an external data file where the release is not known to refuse that."""
    return any(_EXTERNAL_DATA in m.group("msg") for m in errors) and not releases.row(version).external_inference_refusal


def _op_without_schema_first(model: onnx.ModelProto, errors: list[re.Match[str]]) -> bool:
    """Whether Graph::Resolve meets a node with no schema in ORT's registry (an ai.onnx op no opset defines, a
    custom domain's op with no custom-op library, a domain not imported) before the first node whose inference
    fails: it checks each node's op, then infers its types, node by node in its topological order (_resolve_order;
    measured, 1.20-1.32: "Fatal error: d:Op(-1) is not a registered function/op", "No Op registered for ..." when
    that node comes first, the Type Error when the failing node does). Then no inference failure is ORT's words
    (OLX202, OLX014 name the node). One in a body, or a failing node not found in the main graph: not claimed."""
    from onnxlint.ort import schema_registry

    opsets = {("ai.onnx" if imp.domain == "" else imp.domain): imp.version for imp in model.opset_import}
    local = {(f.domain, f.name) for f in model.functions}
    missing: list[onnx.NodeProto] = []
    for g in iter_graphs(model):
        for n in g.node:
            domain = n.domain or "ai.onnx"
            if (n.domain, n.op_type) in local or ((domain in opsets or domain in _ORT_IMPORTS) and
                                                  schema_registry.since_version(n.op_type, opsets.get(domain), domain)):
                continue
            if g is not model.graph:
                return True
            missing.append(n)
    if not missing:
        return False
    rank = {id(n): i for i, n in enumerate(_resolve_order(model.graph))}
    failing = {(m.group("name") or "", m.group("op")) for m in errors}
    ranks = [rank[id(n)] for n in model.graph.node if (n.name, n.op_type) in failing and id(n) in rank]
    return not ranks or min(rank.get(id(n), -1) for n in missing) < min(ranks)


def _resolve_order(g: onnx.GraphProto) -> list[onnx.NodeProto]:
    """Graph::PerformTopologicalSortAndCheckIsAcyclic's order, the one Resolve checks nodes in (core/graph/graph.cc):
    the nodes no other node feeds, in file order; then a DFS from the leaves (no consumer), the last leaf first,
    each node's producers pushed by ascending index (the highest pops first), a node emitted once its producers
    are. Constant nodes are initializers by then."""
    nodes = [n for n in g.node if not (n.op_type == "Constant" and n.domain in ("", "ai.onnx"))]
    producer = {o: i for i, n in enumerate(nodes) for o in n.output if o}
    inputs_of = [sorted({producer[v] for v in node_reads(n) if v in producer} - {i}) for i, n in enumerate(nodes)]
    consumed = {p for ins in inputs_of for p in ins}
    order = [i for i, ins in enumerate(inputs_of) if not ins]
    added, seen = set(order), set(order)
    stack = [i for i in range(len(nodes)) if i not in consumed]
    while stack:
        cur = stack.pop()
        if cur in added:
            continue
        if cur in seen:
            order.append(cur)
            added.add(cur)
            continue
        seen.add(cur)
        stack.append(cur)
        stack.extend(p for p in inputs_of[cur] if p not in seen)
    return [nodes[i] for i in order]

def _ort_infers(model: onnx.ModelProto, error: re.Match[str], index: dict[tuple[str, str], Found]) -> bool:
    """Whether ORT runs the inference that failed: a node of the graph (not one inside a function body onnx
    expanded) whose schema has an inference function of its own. ORT does not infer a function op through its
    body (onnx's MeanVarianceNormalization-13 body fails onnx's strict inference; ORT loads the node test)."""
    from onnxlint.ort import schema_registry

    found = _find_node(model, error.group("name") or "", error.group("op"), index)
    if found is None:
        return False
    node = found[1]
    opset = next((imp.version for imp in model.opset_import if imp.domain == node.domain), None)
    schema = schema_registry.get_schema(node.op_type, opset, node.domain or "ai.onnx")
    return schema is not None and bool(schema.has_type_and_shape_inference_function)


def resolve_failure_of(mf: Any, checker_error: str | None, version: str | None,
                       order: Callable[[], dict[str, int]] | None = None, memo: dict[str, Any] | None = None) -> str | None:
    """resolve_failure for a ModelFile, once per release. Nothing is claimed from strict inference when lenient
    inference failed too (OLX002 says that)."""
    if version not in mf.ort_resolve:
        strict = mf.strict_error if not mf.inference_error else None
        mf.ort_resolve[version] = resolve_failure(mf.model, checker_error, strict, version, order, memo)
    failure: str | None = mf.ort_resolve[version]
    return failure


def lint_failure(ctx: Any) -> str | None:
    """resolve_failure_of for a lint (a LintContext), at the lint's ORT release."""
    return resolved_for(ctx)(_lint_release(ctx))


def resolved_for(ctx: Any) -> Resolved:
    """resolve_failure_of for a lint (a LintContext) at a given release: what the placement asks (refuses_model's
    resolved) and the lint quotes (lint_failure), one answer per release (ModelFile.ort_resolve). Of several failing
    nodes, ORT names the first in Graph::Resolve's order (_resolve_order), not in GraphViewer's (measured on 1.23.2,
    1.24.4, 1.31.1: models saved with every initializer external, and two Type Errors)."""

    def order() -> dict[str, int]:
        return {n.name: i for i, n in enumerate(_resolve_order(ctx.mf.model.graph))}

    return lambda version: resolve_failure_of(ctx.mf, ctx.checker_error(), version, order, _memo(ctx))


def lint_cause(ctx: Any) -> str:
    """What load_refusal finds wrong, at the lint's ORT release, as ` (the cause)` after ORT's quoted words; ""
    when the refusal is Graph::Resolve's (ORT's words name the node)."""
    refusal = load_refusal(ctx.mf.model, _lint_release(ctx), _memo(ctx))
    return f" ({refusal[0]})" if refusal and refusal[1] == lint_failure(ctx) else ""


def refusal_is_external_data(ctx: Any, limit: int) -> bool:
    """Whether the lint's ORT refusal (lint_failure) is Graph::Resolve reading a value stored in the model's
    external data file, and nothing else: the model with every external tensor of at most `limit` bytes moved in
    (read from the model's own data file: loading.external.small_bytes_reader) is one that release resolves.
    inline-small-tensors' lint-time answer; a model refused otherwise is not read again."""
    failure = lint_failure(ctx)
    if not failure or _EXTERNAL_DATA not in failure:
        return False
    import copy

    from onnxlint.model.loading.external import inline_small, small_bytes_reader

    model = copy.deepcopy(ctx.mf.model)
    if not inline_small(model, small_bytes_reader(ctx.mf.external, limit)):
        return False
    # onnx's strict inference failed on the original (its words are the refusal's): the copy is inferred again; a node
    # with no schema anywhere is refused by Resolve too (resolve_failure leaves that to OLX202/OLX014: no words)
    return resolve_failure(model, None, failure, _lint_release(ctx)) is None and not _op_without_schema_first(model, [])


def _memo(ctx: Any) -> dict[str, Any] | None:
    """The lint's index's memo, where that index knows the lint's model as its source (loading.index_model)."""
    return ctx.index.memo if ctx.index.source_model is ctx.mf.model else None


def _lint_release(ctx: Any) -> str | None:
    from onnxlint.ort.kernel_registry import chosen_release

    eps = ("cuda", "cpu") if ctx.options.targets & {"ort-cuda", "ort-trt"} else ("cpu",)  # the targets' default release
    return chosen_release(ctx.options.ort_version, eps)[0]


def as_ort_resolves(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of the model as Graph::Resolve sees it: Constant nodes turned into initializers (their value_info
    gone: the initializer's own type is the value's), and no declared shapes on node outputs (value_info, graph
    outputs: ORT merges those leniently); element types stay (ORT checks them). From IR 4 on, an initializer the main
    graph also lists as an input can be overridden: Graph::GetConstantInitializer gives inference no value for it,
    so one stored in an external data file is not read there (ORT 1.23.2/1.24.4/1.31.1 load such a Reshape; IR 3
    refuses it): the view drops it, its graph input stays."""
    view = onnx.ModelProto()
    view.CopyFrom(model)
    if view.ir_version >= 4:
        inputs = {i.name for i in view.graph.input}
        kept_init = [t for t in view.graph.initializer
                     if not (t.name in inputs and t.data_location == onnx.TensorProto.EXTERNAL)]
        if len(kept_init) != len(view.graph.initializer):
            del view.graph.initializer[:]
            view.graph.initializer.extend(kept_init)
    for g in iter_graphs(view):  # yields a graph before it reads the graph's (rewritten) nodes for bodies
        names = set()
        kept_nodes = []
        for n in g.node:
            tensor = _constant_tensor(n) if n.op_type == "Constant" and n.domain in ("", "ai.onnx") and len(n.output) == 1 else None
            if tensor is None:
                kept_nodes.append(n)
                continue
            g.initializer.append(tensor)
            names.add(n.output[0])
        if names:
            del g.node[:]
            g.node.extend(kept_nodes)
        kept = [vi for vi in g.value_info if vi.name not in names]
        del g.value_info[:]
        g.value_info.extend(kept)
        for vi in (*g.value_info, *g.output):
            if vi.type.HasField("tensor_type"):
                vi.type.tensor_type.ClearField("shape")
        _sort(g)
    return view


def _sort(g: onnx.GraphProto) -> None:
    """The nodes in a topological order, as ORT resolves them (an unsorted file loads); a node waits only for the
    values a node of this graph produces (the rest come from inputs, initializers or an outer scope)."""
    nodes = list(g.node)
    made = {o: i for i, n in enumerate(nodes) for o in n.output if o}
    needs = [{made[v] for v in node_reads(n) if v in made and made[v] != i} for i, n in enumerate(nodes)]
    if all(all(j < i for j in deps) for i, deps in enumerate(needs)):
        return
    users: dict[int, list[int]] = {}
    for i, deps in enumerate(needs):
        for j in deps:
            users.setdefault(j, []).append(i)
    waiting = [len(d) for d in needs]
    ready = deque(i for i, w in enumerate(waiting) if w == 0)
    order: list[int] = []
    while ready:
        i = ready.popleft()
        order.append(i)
        for u in users.get(i, ()):
            waiting[u] -= 1
            if waiting[u] == 0:
                ready.append(u)
    placed = set(order)
    order += [i for i in range(len(nodes)) if i not in placed]  # a cycle: left as it was
    del g.node[:]
    g.node.extend(nodes[i] for i in order)


def _constant_tensor(node: onnx.NodeProto) -> onnx.TensorProto | None:
    """The initializer ORT makes of a Constant node (utils::ConstantNodeProtoToTensorProto), or None (sparse)."""
    from onnx import helper

    if len(node.attribute) != 1:
        return None
    a = node.attribute[0]
    name = node.output[0]
    if a.name == "value":
        t = onnx.TensorProto()
        t.CopyFrom(a.t)
        t.name = name
        return t
    values: dict[str, tuple[int, list[int], list[Any]]] = {
        "value_float": (onnx.TensorProto.FLOAT, [], [a.f]),
        "value_floats": (onnx.TensorProto.FLOAT, [len(a.floats)], list(a.floats)),
        "value_int": (onnx.TensorProto.INT64, [], [a.i]),
        "value_ints": (onnx.TensorProto.INT64, [len(a.ints)], list(a.ints))}
    if a.name in values:
        dtype, dims, vals = values[a.name]
        tensor: onnx.TensorProto = helper.make_tensor(name, dtype, dims, vals)
        return tensor
    return None  # value_string(s), sparse_value: left as nodes


# --------------------------------------------------------------------------- ORT's words

_NODE_ERROR = re.compile(r"\(op_type:(?P<op>[^,)]+)(?:, node name: (?P<name>[^)]*))?\): (?P<msg>.*?)(?= \(op_type:|$)")
_ELEM = re.compile(r"Inferred elem type differs from existing elem type: \((\d+)\) vs \((\d+)\)")
_BOUND = re.compile(r"^(?P<param>\S+) has inconsistent type (?P<type>\S+)")


def ort_words(model: onnx.ModelProto, errors: list[re.Match[str]], order: dict[str, int] | None = None,
              index: dict[tuple[str, str], Found] | None = None) -> str:
    """onnx's strict-inference complaints (node errors) as ORT's session creation says it (graph.cc
    InferAndVerifyTypeMatch): the first failing node's (in `order`, else onnx's) "Type Error: ..." or "Node (n)
    Op (t) ...", which ORT prints after "[ONNXRuntimeError] : 1 : FAIL : Load model from ... failed:"."""
    rank = order or {}
    m = min(errors, key=lambda f: rank.get(f.group("name") or "", len(rank)))
    op, name, msg = m.group("op"), m.group("name") or "", m.group("msg").strip()
    node = _find_node(model, name, op, index)
    elem = _ELEM.search(msg)
    if elem and node is not None:
        inferred, declared = (_tensor_type(int(x)) for x in elem.groups())
        out = _output_declared_as(model, node, int(elem.group(2)))
        if out is not None:
            return (f"Type Error: Type ({declared}) of output arg ({out}) of node ({name}) does not match expected type "
                    f"({inferred}).")
    bound = _BOUND.search(msg)
    if bound and node is not None:
        other = _other_binding(model, node, bound.group("param"), bound.group("type"))
        if other is not None:
            param, first = other
            return (f"Type Error: Type parameter ({param}) of Optype ({op}) bound to different types ({first} and "
                    f"{bound.group('type')} in node ({name}).")
    return f"Node ({name}) Op ({op}) {msg}"


def _tensor_type(elem: int) -> str:
    from onnxlint.model.graph import dtype_name

    return f"tensor({dtype_name(elem)})"


def _nodes(model: onnx.ModelProto) -> list[tuple[onnx.GraphProto, onnx.NodeProto]]:
    return [(g, n) for g in iter_graphs(model) for n in g.node]


Found = tuple[onnx.GraphProto, onnx.NodeProto]


def _node_index(model: onnx.ModelProto) -> dict[tuple[str, str], Found]:
    """(name, op type) -> the first such node (bodies included) and its graph."""
    index: dict[tuple[str, str], Found] = {}
    for g, n in _nodes(model):
        index.setdefault((n.name, n.op_type), (g, n))
    return index


def _find_node(model: onnx.ModelProto, name: str, op: str, index: dict[tuple[str, str], Found] | None = None) -> Found | None:
    if index is not None:
        return index.get((name, op))
    return next(((g, n) for g, n in _nodes(model) if n.name == name and n.op_type == op), None)


def _declared(g: onnx.GraphProto) -> dict[str, Any]:
    return {vi.name: vi.type for vi in (*g.input, *g.value_info, *g.output)}


def _output_declared_as(model: onnx.ModelProto, found: tuple[onnx.GraphProto, onnx.NodeProto], elem: int) -> str | None:
    g, node = found
    declared = _declared(g)
    return next((o for o in node.output if o in declared and declared[o].tensor_type.elem_type == elem), None)


def _other_binding(model: onnx.ModelProto, found: tuple[onnx.GraphProto, onnx.NodeProto], param_input: str,
                   type_str: str) -> tuple[str, str] | None:
    """(type parameter, the type another input bound it to) for onnx's "<input> has inconsistent type <t>"."""
    from onnxlint.ort import schema_registry

    g, node = found
    opset = next((imp.version for imp in model.opset_import if imp.domain == node.domain), None)
    formal = schema_registry.formal_params(node.op_type, opset, node.domain or "ai.onnx")
    if formal is None:
        return None
    ins = formal[0]
    names = [p[0] for p in ins]
    if param_input not in names:
        return None
    param = ins[names.index(param_input)][1]
    types = {**{t.name: t.data_type for t in g.initializer}}
    declared = _declared(g)
    for i, value in enumerate(node.input):
        if i < len(ins) and ins[i][1] == param and ins[i][0] != param_input:
            elem = types.get(value) or (declared[value].tensor_type.elem_type if value in declared else 0)
            if elem:
                first = _tensor_type(elem)
                if first != type_str:
                    return param, first
    return None


# --------------------------------------------------------------------------- the checker's complaints

_SSA = re.compile(r"Graph must be in single static assignment \(SSA\) form, however '([^']*)' has been used as output names multiple times")
_NO_OP = re.compile(r"No Op registered for (?P<op>\S+) with domain_version of (?P<version>\d+) ==> Context: Bad node spec for "
                    r"node\. Name: (?P<name>.*?) OpType: (?P=op)")
_UNSORTED = re.compile(r"Nodes in a graph must be topologically sorted, however input '([^']*)' of node")
_BAD_NODE = re.compile(r"==> Context: Bad node spec for node\. Name: (?P<name>.*?) OpType: (?P<op>\S+)")
_NO_IMPORT = re.compile(r"\s*No opset import for domain '(?P<domain>[^']*)'")
# the domains ORT imports itself, at their newest opset, when a model does not (Model's constructor fills in every
# domain of its schema registry): measured with ai.onnx, ai.onnx.ml and com.microsoft nodes on 1.20.2, 1.24.4 and
# 1.31.1, each of which loads; a node of another domain not imported is refused ("No opset import for domain 'x'")
_ORT_IMPORTS = frozenset(STANDARD_DOMAINS | ORT_DOMAINS | {""})


def complaint_is_ort_op(model: onnx.ModelProto, complaint: str) -> bool:
    """Whether the checker's complaint is only that onnx has no schema for an op ONNX Runtime defines
    (SimplifiedLayerNormalization in an ORT GenAI model): ORT resolves it with its own schema."""
    from onnxlint.ort import schema_registry

    m = _NO_OP.match(complaint)
    if not m:
        return False
    found = _find_node(model, m.group("name"), m.group("op"))
    domain = (found[1].domain if found else "") or "ai.onnx"
    return schema_registry.ort_only(m.group("op"), int(m.group("version")), domain)


def _checker_complaint_ort_shares(model: onnx.ModelProto, complaint: str) -> str | None:
    """ORT's words for a checker complaint ORT makes too, or None (one it does not make, or may not: an unsorted
    graph, a node of a domain ORT imports itself, an op no schema defines, which the placement reports per node)."""
    m = _SSA.search(complaint)
    if m:
        return f"This is an invalid model. Error: Duplicate definition of name ({m.group(1)})."
    m = _UNSORTED.search(complaint)
    if m and not _defined_anywhere(model, m.group(1)):  # not unsorted: nothing defines it (ORT sorts the rest)
        return f"Invalid model. Node input '{m.group(1)}' is not a graph input, initializer, or output of a previous node."
    m = _BAD_NODE.search(complaint)
    imported = _NO_IMPORT.match(complaint)
    if imported and imported.group("domain") in _ORT_IMPORTS:
        return None  # ORT imports the domain itself
    if m and not complaint.startswith("No Op registered for"):
        what = complaint[: m.start()].strip()
        found = _find_node(model, m.group("name"), m.group("op"))
        domain = found[1].domain if found else ""
        return f'This is an invalid model. In Node, ("{m.group("name")}", {m.group("op")}, "{domain}", -1) : ... , Error {what}'
    return None


def _defined_anywhere(model: onnx.ModelProto, name: str) -> bool:
    """Whether any graph of the model (bodies included) defines the value: an input, initializer or node output."""
    return any(any(v.name == name for v in (*g.input, *g.initializer)) or any(name in n.output for n in g.node)
               for g in iter_graphs(model))
