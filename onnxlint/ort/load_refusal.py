"""What a release refuses while reading a model, before its graph is resolved (load_refusal): no opset_import, and a
tensor of an element type the release's row says it refuses (releases.ElemTypes, probed on each release's wheel by
tools/follow_releases.py), found in the order ORT's Graph constructor meets them. ort.model_load says what follows
(the IR version and opset limits, Graph::Resolve) and asks this module first."""

from __future__ import annotations

from typing import Any, Iterator

import onnx

from onnxlint.model.graph_walks import iter_graphs, node_reads, scan_attributes
from onnxlint.ort import releases

UNREGISTERED = "MLDataType for: "  # load_refusal's words for a main-graph input of a type with no MLDataType

MISSING_OPSET = ("Missing opset in the model. All ModelProtos MUST have at least one entry that specifies which version "
                 "of the ONNX OperatorSet is being imported.")
# the Model constructor's words (model.cc), after the IR version and opset checks, before the graph is built; which
# cycle it names, and from which function, follows its hash map's order (measured: F, G calling each other is
# "loc:F -> loc:G -> loc:F" where onnx's checker says "loc::G -> loc::F -> loc::G"): not quoted
# the Model constructor's words (model.cc, 1.31 on) for two local functions of one id, before the recursion check; the
# id it names is the first repeated one in its own order (not measured with several): not quoted
DUPLICATE_FUNCTION = "Duplicate model-local function identifier: ..."
RECURSIVE_FUNCTION = "Model local function definitions must not be recursive. Cycle detected: ..."
_NAME_SHOWN = 200  # a tensor name quoted in the cause is cut to its first characters past this


def load_refusal(model: onnx.ModelProto, version: str | None, memo: dict[str, Any] | None = None
                 ) -> tuple[str, str] | None:
    """(what is wrong, ORT's words) when session creation of ORT `version` fails while reading the model, before its
    graph is resolved:

    - no opset_import at all (model.cc, "Missing opset in the model"; every measured release); one importing other
      domains only loads (ORT imports ai.onnx, ai.onnx.ml and its own domains at their newest);
    - two local functions of one id, then local functions calling themselves (the Model constructor), where the
      release's row says it refuses them (probed on its wheel);
    - a tensor of an element type the release's row says it refuses (releases.ElemTypes, probed on its wheel; a
      release with no probed row, or a number not probed, is not claimed): an initializer or a Constant's value (the
      Graph constructor) of a type refused as an initializer; of a type ORT does not know ("Invalid tensor data type
      N."), the type of a graph input, of a node's output (its graph output's, else its value_info's: a value_info
      of a graph input, an initializer, a graph output or nothing is not read, nor a Constant's output's declared
      type, the Constant being an initializer by then) in any graph (tensors, sequences and
      optionals of them), or a ConstantOfShape's value (the type its output is inferred to have); then a main-graph
      tensor input no node reads, else (none of such a type read) a main-graph tensor output, of a type it knows but
      has no MLDataType for (complex64, complex128: "MLDataType for: tensor(complex64) is not currently registered
      or supported"); before all of these in each graph, a Constant
      whose sparse value, then (the main graph) a sparse initializer whose values, are of a type the release does
      not make dense.
    memo: GraphIndex.memo of an index whose source_model is `model`, where the walk's answer is kept."""
    if not model.opset_import:
        return "the model imports no opset (no opset_import)", MISSING_OPSET
    row = releases.row(version)
    if model.functions and function_domain_unimported(model):
        pass  # 1.31 refuses it first in other words ("No opset registered for domain ..."): neither claim below
    elif row.duplicate_function_refusal and (repeated := duplicate_function(model)):
        return f"two local functions have the id {repeated}", DUPLICATE_FUNCTION
    elif row.recursive_function_refusal and model.functions:
        cycle = recursive_function(model)
        if cycle:
            what = f"local function {cycle[0]} calls itself" if len(cycle) == 2 else "local functions call one another"
            return f"{what}: {' -> '.join(cycle)}", RECURSIVE_FUNCTION
    types = row.elem
    if memo is None:
        found = _undefined_elem_type(model, types)
    else:  # a walk over every node: once per model and row (the lint, then its placement)
        walks = memo.setdefault("undefined_elem_type", {})
        found = walks[types] if types in walks else walks.setdefault(
            types, _undefined_elem_type(model, types, memo.get("model_walk")))
    if found is None:
        return None
    what, name, elem, initializer = found
    shown = name if len(name) <= _NAME_SHOWN else name[:_NAME_SHOWN] + f"... ({len(name):,} characters)"
    cause = f"{what} '{shown}' has element type {_elem_words(elem, version)}"
    if initializer == "sparse":
        return cause, _sparse_words(types, elem, shown)
    if isinstance(initializer, str) and initializer.startswith("sparse:"):
        values = initializer[len("sparse:"):]
        values = values if len(values) <= _NAME_SHOWN else values[:_NAME_SHOWN] + f"... ({len(values):,} characters)"
        return cause, _sparse_words(types, elem, values, constant=True)
    if initializer and elem == 0:
        return cause, "This is an invalid model. Tensor does not have type information."
    if initializer and elem in types.initializer_checked:
        return cause, f"This is an invalid model. Tensor '{shown}' does not have valid data type."
    if not initializer and elem in types.unregistered and elem not in types.invalid:
        return cause, f"{UNREGISTERED}tensor({_ort_type_name(elem)}) is not currently registered or supported"
    return cause, f"Invalid tensor data type {elem}."


def _sparse_words(types: releases.ElemTypes, elem: int, name: str, constant: bool = False) -> str:
    """ORT's words for sparse values it does not make dense; name: the values' tensor. Of a Constant's, the empty
    NOT_IMPLEMENTED status (1.31 on) comes without the sparse initializer's "status.IsOK() was false." (measured on
    1.31.1 and 1.32.0)."""
    if elem in types.sparse_unsupported:
        return f"tensor type {elem} is not supported"
    if elem in types.sparse_no_zero:
        return f"Sparse tensor: {name} {_onnx_name(elem) or elem} values are unsupported because the type has no zero representation."
    status = "[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED"
    return status if constant else f"status.IsOK() was false. {status}"


def _elem_words(elem: int, version: str | None) -> str:
    """The element type as the cause says it, named as the installed onnx names it: refused by this release (another
    may load it). A number that onnx does not name may be one a newer onnx defines (FLOAT6E2M3, 27, is not in onnx
    1.21): the words say which onnx has no name for it, not that ONNX defines none."""
    if elem == 0:
        return "0 (UNDEFINED)"
    known = _onnx_name(elem)
    runtime = f"ONNX Runtime {version}" if version else "ONNX Runtime"
    if known:
        return f"{elem} ({known}), which {runtime} does not load"
    return f"{elem}, which {runtime} does not load (onnx {onnx.__version__} has no element type {elem})"


def _ort_type_name(elem: int) -> str:
    """ORT's name of an element type in its messages: onnx's, lower case ("complex64", "float8e8m0")."""
    return (_onnx_name(elem) or str(elem)).lower()


def _onnx_name(elem: int) -> str | None:
    """The installed onnx's name of an element type (TensorProto.DataType), or None where it has none."""
    return onnx.TensorProto.DataType.Name(elem) if elem in onnx.TensorProto.DataType.values() else None


def _type_elem(tp: onnx.TypeProto, refused: frozenset[int]) -> int | None:
    """The refused element type a value's type holds (a tensor, sparse tensor, or a sequence or optional of them),
    or None; a type with no field set is not read (no type declared)."""
    if tp.HasField("tensor_type"):  # the common case first
        elem = tp.tensor_type.elem_type
        return elem if elem in refused else None
    while True:
        kind = tp.WhichOneof("value")
        if kind in ("tensor_type", "sparse_tensor_type"):
            elem = getattr(tp, kind).elem_type
            return elem if elem in refused else None
        if kind in ("sequence_type", "optional_type"):
            inner = getattr(tp, kind)
            if not inner.HasField("elem_type"):
                return None
            tp = inner.elem_type
            continue
        return None


_TENSOR = onnx.AttributeProto.TENSOR
_SPARSE = onnx.AttributeProto.SPARSE_TENSOR

# what holds it, its name, the element type, how ORT checks it: as an initializer (True), a sparse initializer
# ("sparse"), a Constant's sparse value ("sparse:" and the values' name), or as a declared type (False)
Undefined = tuple[str, str, int, bool | str]


def _undefined_elem_type(model: onnx.ModelProto, types: releases.ElemTypes,
                         walked: tuple[list[Any], list[Any]] | None = None) -> Undefined | None:
    """The first tensor of a refused element type, in the order ORT builds each graph (the main graph, then its
    bodies): Constants' sparse values, sparse initializers (the main graph's), graph inputs, initializers and
    Constant values, nodes' declared outputs; then ConstantOfShape values
    (inferred while the graph is resolved); then a main-graph input of a type with no MLDataType (the model's
    metadata, after the graph is resolved). walked: (iter_graphs(model), every tensor attribute of the model) as
    load's walk found them (GraphIndex.memo["model_walk"]): no node is read again for them, nor, where no tensor
    attribute is of a refused type, for Constant values."""
    graphs, attributes = walked if walked is not None else (iter_graphs(model), None)
    refused = types.initializer | types.invalid
    values = attributes is None or any(a.t.data_type in refused for a in attributes if a.type == _TENSOR)
    sparse_values = attributes is None or any(a.type == _SPARSE for a in attributes)
    late: Undefined | None = None
    for g in graphs:
        found = _sparse_constant(g, types) if sparse_values else None
        if found is None and g is model.graph:
            found = _sparse_initializer(g, types)
        if found is not None:
            return found
        found, shaped = _in_graph(g, "graph" if g is model.graph else "body", types, values)
        if found is not None:
            return found
        late = late or shaped
    return late or _unregistered_io(model, types)


def _sparse_refused(types: releases.ElemTypes) -> frozenset[int]:
    return types.sparse_unsupported | types.sparse_not_implemented | types.sparse_no_zero


def _sparse_initializer(g: onnx.GraphProto, types: releases.ElemTypes) -> Undefined | None:
    """The first main-graph sparse initializer whose values' type the release refuses to make dense (the Graph
    constructor does that after its Constant nodes', before an initializer's or a dense Constant's check, measured)."""
    refused = _sparse_refused(types)
    for sp in g.sparse_initializer:
        if sp.values.data_type in refused:
            return "sparse initializer", sp.values.name, sp.values.data_type, "sparse"
    return None


def _sparse_constant(g: onnx.GraphProto, types: releases.ElemTypes) -> Undefined | None:
    """The first Constant node of the graph whose sparse_value's values are of a type the release refuses to make
    dense: the Graph constructor makes each Constant an initializer first, a sparse value dense as a sparse
    initializer is (measured on 1.23.2, 1.24.4, 1.31.1, 1.32.0: before the graph's inputs, its sparse initializers,
    its initializers and its dense Constants whatever the node order; a body's after the main graph's checks). Its
    words name the values' tensor, the cause the Constant's output."""
    refused = _sparse_refused(types)
    for n in g.node:
        if n.op_type != "Constant" or n.domain not in ("", "ai.onnx") or len(n.output) != 1:
            continue
        for a in n.attribute:
            if a.name == "sparse_value" and a.type == _SPARSE and a.sparse_tensor.values.data_type in refused:
                return "the sparse value of Constant", n.output[0], a.sparse_tensor.values.data_type, \
                    f"sparse:{a.sparse_tensor.values.name}"
    return None


def _unregistered_io(model: onnx.ModelProto, types: releases.ElemTypes) -> Undefined | None:
    """The first main-graph tensor input no node reads (nor a body), else, where no input of such a type is read, the
    first main-graph tensor output, of a type the release has no MLDataType for (the model's metadata: inputs, then
    outputs in the graph's order; measured on 1.23.2, 1.24.4, 1.31.1, 1.32.0 with complex64/complex128 outputs of a
    Cast or an Identity, FLOAT8E8M0 on 1.24.4). ORT's words name the type as onnx does: a type the installed onnx
    has no name for (FLOAT6 in onnx 1.21) is not claimed, its words unknown here."""
    def unregistered(v: onnx.ValueInfoProto) -> bool:
        elem = v.type.tensor_type.elem_type
        return v.type.HasField("tensor_type") and elem in types.unregistered and _onnx_name(elem) is not None

    candidates = [i for i in model.graph.input if unregistered(i)]
    if candidates:
        read = {v for n in model.graph.node for v in node_reads(n)}  # a body's reads of outer values included
        for i in candidates:
            if i.name not in read:
                return "graph input", i.name, i.type.tensor_type.elem_type, False
        return None  # one a node reads: ORT refuses it before the outputs, not claimed (a node's check may come first)
    for o in model.graph.output:
        if unregistered(o):
            return "graph output", o.name, o.type.tensor_type.elem_type, False
    return None


def _in_graph(g: onnx.GraphProto, graph: str, types: releases.ElemTypes, values: bool = True
              ) -> tuple[Undefined | None, Undefined | None]:
    """(the first refused tensor ORT reads building the graph, the first ConstantOfShape of a refused value type);
    values False: no tensor attribute of the model is of a refused type (no Constant or ConstantOfShape is read).
    The graph's inputs first: the Graph constructor makes their NodeArgs before it reads an initializer or a
    Constant's value (measured on 1.20.2, 1.23.2, 1.24.4, 1.31.1, 1.32.0: an input of 100 beside an initializer,
    a Constant or an initializer listed as that input, of 99 or 0, is "Invalid tensor data type 100.")."""
    for i in g.input:
        elem = _type_elem(i.type, types.invalid)
        if elem is not None:
            return (f"{graph} input", i.name, elem, False), None
    for t in g.initializer:
        if t.data_type in types.initializer:
            return ("initializer", t.name, t.data_type, True), None
    constant, shaped = _constant_values(g, types) if values else (None, None)
    if constant is not None:
        return constant, None
    # a node output's declared type: its graph output's, else its value_info's (only the refused ones are looked up)
    outputs = {o.name for o in g.output}
    bad = {o.name: (f"{graph} output", e) for o in g.output if (e := _type_elem(o.type, types.invalid)) is not None}
    for v in g.value_info:
        if v.name not in outputs and v.name not in bad and (e := _type_elem(v.type, types.invalid)) is not None:
            bad[v.name] = ("the value_info of node output", e)
    if bad:
        for n in g.node:
            if n.op_type == "Constant" and n.domain in ("", "ai.onnx"):
                continue  # an initializer by then: its output's declared type is not read (measured, 1.24.4)
            for o in n.output:
                if o in bad:
                    return (bad[o][0], o, bad[o][1], False), None
    return None, shaped


def _constant_values(g: onnx.GraphProto, types: releases.ElemTypes) -> tuple[Undefined | None, Undefined | None]:
    """(the first Constant whose value is of a type refused as an initializer, the first ConstantOfShape whose value
    is of a type ORT does not know: its output is inferred of that type; UNDEFINED there is the checker's complaint,
    which ORT shares)."""
    shaped: Undefined | None = None
    for n in g.node:
        if n.op_type not in ("Constant", "ConstantOfShape") or n.domain not in ("", "ai.onnx"):
            continue
        for a in n.attribute:
            if a.name != "value" or a.type != onnx.AttributeProto.TENSOR:
                continue
            elem = a.t.data_type
            if n.op_type == "Constant" and len(n.output) == 1 and elem in types.initializer:
                return ("the value of Constant", n.output[0], elem, True), None
            if n.op_type == "ConstantOfShape" and shaped is None and elem != 0 and elem in types.invalid:
                shaped = ("the value of ConstantOfShape", n.name or (n.output[0] if n.output else ""), elem, False)
    return None, shaped


def function_domain_unimported(model: onnx.ModelProto) -> bool:
    """Whether a local function's body (its graphs' nodes too) uses a domain the function does not import: ORT 1.31
    refuses that before it looks at duplicate or recursive functions, in its own words ("No opset registered for
    domain loc in function F", ValidateFunctionNodeCounts; review 50's measurement), so neither is claimed there."""
    def domain(d: str) -> str:
        return "" if d == "ai.onnx" else d

    for f in model.functions:
        imported = {domain(o.domain) for o in f.opset_import}
        if any(domain(n.domain) not in imported for n in _body_nodes(f)):
            return True
    return False


def _body_nodes(f: onnx.FunctionProto) -> Iterator[onnx.NodeProto]:
    """A local function's nodes and those of the graphs they hold (If branches, Loop bodies), without recursion (a
    deep nesting is no stack overflow): graph_walks.scan_attributes' bodies, the last one met first."""
    yield from f.node
    bodies: list[onnx.GraphProto] = []
    scan_attributes(f.node, bodies)
    while bodies:
        g = bodies.pop()
        yield from g.node
        scan_attributes(g.node, bodies)


def _function_id(domain: str, name: str, overload: str) -> str:
    """A local function's id as ORT's messages name it: "domain:name", ":overload" added where it has one."""
    return f"{domain}:{name}:{overload}" if overload else f"{domain}:{name}"


def duplicate_function(model: onnx.ModelProto) -> str | None:
    """The first id ("domain:name", ":overload" added where it has one, as ORT names it) that two of the model's
    local functions share, or None: ORT's Model constructor refuses such a model, called or not, where the release's
    row says so, before it looks for recursion."""
    seen: set[tuple[str, str, str]] = set()
    for f in model.functions:
        key = (f.domain, f.name, f.overload)
        if key in seen:
            return _function_id(*key)
        seen.add(key)
    return None


def recursive_function(model: onnx.ModelProto) -> list[str] | None:
    """A cycle of the model's local functions calling one another (a function that calls itself: [F, F]), as ORT
    names a function, "domain:name" or "domain:name:overload", or None; called from the main graph or not, ORT's
    Model constructor refuses it where the release's row says so. A body's calls are its nodes' and those of the
    graphs its nodes hold (an If's branches, a Loop's body), keyed by (domain, name, overload), as ORT's
    BuildLocalFunctionCallGraph does (measured on 1.27.0, 1.30.0, 1.31.1, 1.32.0: a cycle through an If or a Loop
    in a body, or an overload calling itself, is refused; an overload calling the plain function loads)."""
    Key = tuple[str, str, str]
    names = {(f.domain, f.name, f.overload) for f in model.functions}
    calls: dict[Key, dict[Key, None]] = {}  # each function's callees, once each, in the order met
    for f in model.functions:
        called = {key: None for n in _body_nodes(f) if (key := (n.domain, n.op_type, n.overload)) in names}
        calls[(f.domain, f.name, f.overload)] = called
    state: dict[Key, int] = {}  # 1: on the path, 2: done
    for start in calls:
        if state.get(start):
            continue
        path, stack = [start], [iter(calls[start])]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                cycle = path[path.index(nxt):] + [nxt]
                return [_function_id(*key) for key in cycle]
            elif not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(calls[nxt]))
    return None
