"""onnx shape inference within budgets (its cost grows with control-flow bodies and function calls, not with
the file), strict first and lenient only when that fails."""

from __future__ import annotations

from itertools import islice
from operator import attrgetter
from typing import TYPE_CHECKING, Iterable

from onnxlint.model.loading.model_file import ModelFile
from onnxlint.model.loading.wire import restore_constants, weightless_bytes
from onnxlint.support.errors import first_line

if TYPE_CHECKING:
    import onnx

    from onnxlint.model.loading.native import NativeLimit


# onnx's shape inference re-infers a local function's body at every call: its cost grows with bodies x outer
# values and with nested calls, not with the file. The estimate below counts that work; the budget bounds the
# seconds one model may take (calibrated in benchmarks/README.md, "Budgets").
INFER_BUDGET = 25_000_000
# and onnx holds memory per node while inferring, on top of the model (benchmarks/README.md, "Budgets")
INFER_MAX_NODES = 300_000
# a local function's body node, inferred at each call, costs as much as this many units of the rest (a call
# builds the body's context and types anew: 2.5 us a node against the budget's 0.1-0.3 us a unit), and an input
# or output it names one more (a Sum of 20,000 references, called 2,000 times: 13 s)
FUNCTION_NODE_UNITS = 10


def inference_cost(model: onnx.ModelProto, limit: int | None = None) -> int:
    """Estimated work of onnx shape inference (see INFER_BUDGET): one unit per node, plus, per control-flow
    body, the values visible to it (onnx copies its outer scope), plus every local-function call's body
    expanded (nested calls multiply). Linear in the model; stops counting once past limit."""
    return _inference_work(model, limit)[0]


def _inference_work(model: onnx.ModelProto, limit: int | None = None,
                    graphs: list | None = None, bodies: list | None = None,
                    main_outputs: Iterable[int] | None = None) -> tuple[int, int]:
    """(inference_cost, nodes in the model's graphs and subgraphs), counting stopped once past limit. graphs: a
    list that gets every graph walked (all of them when the cost is within limit), for the next walk. bodies:
    graph.graph_bodies(model), when a walk already found them; main_outputs, with them: the output count of each
    node of the main graph, in order, where an index has read them (_work_of_bodies)."""
    import onnx

    # read once, not per attribute: an enum of a protobuf class is looked up on every read (100k nodes)
    GRAPH, GRAPHS = onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS
    cap = limit if limit is not None else 2**62
    if bodies is not None and not model.functions:
        return _work_of_bodies(bodies, cap, graphs, main_outputs)
    fn_cost = _function_costs(model, cap)
    cost = nodes = 0
    stack = [(model.graph, 0)]
    while stack:
        g, outer = stack.pop()
        if graphs is not None:
            graphs.append(g)
        visible = outer + len(g.input) + len(g.initializer) + len(g.value_info)
        nodes += len(g.node)
        cost += len(g.node)
        for n in g.node:
            visible += len(n.output)  # onnx's scope holds the values inferred so far
            attrs = n.attribute
            if attrs:
                for a in attrs:
                    kind = a.type
                    if kind == GRAPH:
                        cost += visible
                        stack.append((a.g, visible))
                    elif kind == GRAPHS:
                        cost += visible * len(a.graphs)
                        stack.extend((sub, visible) for sub in a.graphs)
            if fn_cost:
                cost += fn_cost.get((n.domain, n.op_type, n.overload), 0)
        if cost > cap:
            break
    return cost, nodes


_OUTPUT = attrgetter("output")
_OUTPUTS = attrgetter("outputs")  # a NodeRef's


def _work_of_bodies(bodies: list, cap: int, graphs: list | None,
                    main_outputs: Iterable[int] | None = None) -> tuple[int, int]:
    """_inference_work of a model without local functions, from where its bodies are (graph.graph_bodies, in the
    walk's order): a node's attributes are not read again, only the output counts of the nodes up to the last
    one holding a body, without a Python loop a node (a million at 1M nodes); the main graph's from main_outputs
    where given (its protos not read again)."""
    cost = nodes = 0
    stack = [0]  # the values visible to each graph the walk would pop next: its order is graph_bodies'
    for k, (g, held) in enumerate(bodies):
        outer = stack.pop()
        if graphs is not None:
            graphs.append(g)
        visible = outer + len(g.input) + len(g.initializer) + len(g.value_info)
        nodes += len(g.node)
        cost += len(g.node)
        # graph_bodies starts with the main graph
        rest, at = iter(main_outputs if k == 0 and main_outputs is not None else map(len, map(_OUTPUT, g.node))), 0
        for pos, count in held:
            visible += sum(islice(rest, pos + 1 - at))
            at = pos + 1
            cost += visible * count
            stack.extend([visible] * count)
        if cost > cap:
            break
    return cost, nodes


def _function_costs(model: onnx.ModelProto, cap: int) -> dict:
    """(domain, name, overload) -> the work of inferring one call of that local function, calls expanded:
    FUNCTION_NODE_UNITS a body node, and one more per input and output it names.

    A function that calls itself, directly or not, costs cap + 1 (onnx cannot infer it)."""
    import onnx

    A = onnx.AttributeProto
    funcs = {(f.domain, f.name, f.overload): f for f in model.functions}
    if not funcs:
        return {}

    def body_nodes(f):
        todo, out = [f.node], []
        while todo:
            nodes = todo.pop()
            for n in nodes:
                out.append(n)
                for a in n.attribute:
                    if a.type == A.GRAPH:
                        todo.append(a.g.node)
                    elif a.type == A.GRAPHS:
                        todo.extend(g.node for g in a.graphs)
        return out

    calls = {}
    size = {}
    for key, f in funcs.items():
        nodes = body_nodes(f)
        size[key] = sum(FUNCTION_NODE_UNITS + len(n.input) + len(n.output) for n in nodes)
        calls[key] = [c for c in ((n.domain, n.op_type, n.overload) for n in nodes) if c in funcs]
    costs: dict = {}
    for root in funcs:
        if root in costs:
            continue
        stack, on_path = [(root, iter(calls[root]))], {root}
        while stack:  # post-order, iteratively; a callee still on the path is a cycle: it has no cost yet
            key, pending = stack[-1]
            for callee in pending:
                if callee not in costs and callee not in on_path:
                    stack.append((callee, iter(calls[callee])))
                    on_path.add(callee)
                    break
            else:
                stack.pop()
                on_path.discard(key)
                costs[key] = min(size[key] + sum(costs.get(c, cap + 1) for c in calls[key]), cap + 1)
    return costs


def infer_shapes(mf: ModelFile, budget: int | None = None, main_outputs: Iterable[int] | None = None) -> None:
    """onnx's shape inference on the weight-less proto; failure is recorded, never raised.

    mf.inferred keeps every small constant but has no bytes for the large initializers: rules only read
    constants of a few elements (engine.MAX_VALUE_ELEMENTS).

    A model whose inference would cost more than the budget (inference_cost, INFER_BUDGET, INFER_MAX_NODES)
    is not inferred: mf.inferred stays None and mf.inference_skipped says why (a rule reports it). main_outputs:
    the output count of each node of the main graph, where an index of mf.model has read them (index_model)."""
    mf.inference_work = None
    graphs: list = []  # the graphs the budget walk met (their number: the control-flow bodies)
    mf.inference_skipped, cost, nodes = _budget_verdict(mf.model, budget, None, False, graphs, mf.graph_bodies,
                                                        main_outputs)
    if mf.inference_skipped:
        mf.inferred = None
        _inference_done(mf)
        return
    mf.inference_work = (cost, nodes, len(graphs) - 1)
    if mf.weightless is not None:
        data, stripped = mf.weightless, mf.stripped_constants
    else:
        data, stripped = weightless_bytes(mf.model, mf.raw), []
    _inference_done(mf)  # the file's bytes may go before onnx's copies of the model are made
    _infer(mf, data)
    if stripped and mf.inferred is not None and not restore_constants(mf.inferred, mf.model, stripped):
        mf.strict_error = mf.inference_error = None  # not the same nodes (never seen): inferred with the values
        _infer(mf, weightless_bytes(mf.model))


def _inference_done(mf: ModelFile) -> None:
    """The file's bytes serve the checker and the weight-less copy for inference: dropped once both are done."""
    mf.inference_done, mf.weightless, mf.stripped_constants = True, None, []
    if mf.checked is not False or not mf.checker_wanted:
        mf.raw = None


def over_inference_budget(model: onnx.ModelProto, budget: int | None = None, max_nodes: int | None = None,
                          flat: bool = False) -> str | None:
    """Why onnx shape inference must not run on this model (past the budget), or None when it may.

    Every caller of onnx.shape_inference.infer_shapes on a user's model checks this first. flat: the caller
    knows the model holds no control-flow body and no local function (a graph index of one scope): its cost is
    then its node count, read without the walk."""
    return _budget_verdict(model, budget, max_nodes, flat)[0]


def _budget_verdict(model: onnx.ModelProto, budget: int | None, max_nodes: int | None, flat: bool,
                    graphs: list | None = None, bodies: list | None = None,
                    main_outputs: Iterable[int] | None = None) -> tuple[str | None, int, int]:
    """(over_inference_budget's answer, inference cost, nodes); graphs, bodies, main_outputs: see _inference_work."""
    limit = INFER_BUDGET if budget is None else budget
    most = INFER_MAX_NODES if max_nodes is None else max_nodes
    if flat:
        cost = nodes = len(model.graph.node)
    else:
        cost, nodes = _inference_work(model, limit, graphs, bodies, main_outputs)
    if nodes > most:
        return (f"onnx shape inference skipped: {nodes:,} nodes, past the budget of {most:,} (its time and memory); "
                f"types and shapes come from the file's own value_info"), cost, nodes
    if cost <= limit:
        return None, cost, nodes
    return (f"onnx shape inference skipped: the model's control-flow bodies and function calls would cost it over "
            f"{limit:,} steps (it re-reads the outer scope for every body and re-infers every function call); "
            f"types and shapes come from the file's own value_info"), cost, nodes


def reinference_within_budget(work: tuple[int, int, int], graphs: list) -> bool:
    """Whether inferring the inferred model again is within the default budget, told without a walk over its
    nodes from work (cost, nodes, control-flow bodies: ModelFile.inference_work, counted before the first
    inference) and graphs (the inferred model's graphs, as iter_graphs lists them). Inference adds no node, only
    value_info, and _inference_work charges each body the values visible to it, so the cost grows by at most
    bodies x the value_info entries now in the model. False: not known this way (over_inference_budget's walk
    decides)."""
    cost, nodes, bodies = work
    added = sum(len(g.value_info) for g in graphs)
    return nodes <= INFER_MAX_NODES and cost + bodies * added <= INFER_BUDGET


def _infer(mf: ModelFile, data: bytes) -> None:
    """Strict first (type checks, every node's inference function must succeed: what ORT's graph resolution
    requires, so a failure is "ORT will refuse this model"), then, only when that fails, lenient inference for
    the rules. One pass in the common case. Both run in a child, in one request (native.infer_strict_then_lenient):
    a crash of onnx's C++ code is recorded like a failure ("onnx's shape inference crashed on this model (signal
    11)"), the run goes on."""
    from onnxlint.model.loading import native

    try:
        inferred, strict, lenient = native.infer_strict_then_lenient(data)
    except native.NativeLimit as exc:  # not onnx's verdict on the model; lenient inference would meet it too
        return _stopped(mf, exc)
    except native.NativeCrash as exc:  # strict crashed (or lenient did): lenient alone, in a new child
        strict, lenient = exc, None
        try:
            inferred = native.infer_shapes(data, check_type=False, strict_mode=False)
        except native.NativeLimit as again:
            return _stopped(mf, again)
        except Exception as again:  # onnx raises several types here, including InferenceError and RuntimeError
            inferred, lenient = None, again
    if strict is not None:
        mf.strict_error = " ".join(str(strict).split())[:300] or type(strict).__name__
    if lenient is not None:
        mf.inference_error = first_line(lenient)
    mf.inferred = inferred


def _stopped(mf: ModelFile, limit: NativeLimit) -> None:
    """Inference ran past a limit of its child (native.NativeLimit): recorded as skipped (OLX008), like a model past
    the budget, not as a failure of onnx's (nothing is said about ORT from it)."""
    mf.inferred = None
    mf.inference_skipped = f"{limit}; types and shapes come from the file's own value_info"


def index_model(mf: ModelFile):
    """Shape inference, then the graph index over the inferred (weight-less) copy.

    A main graph of over INFER_MAX_NODES nodes is never inferred (the budget's walk counts it first, so its
    nodes alone are past the budget): its index, of the model as read, comes first, and the budget's count (the
    nodes in the message) reads the main graph's output counts from it, not from a million protos again."""
    from onnxlint.model.graph import GraphIndex

    if len(mf.model.graph.node) > INFER_MAX_NODES and mf.graph_bodies is not None and not mf.model.functions:
        _inference_done(mf)  # as infer_shapes would before the index: the file's bytes go first
        index = GraphIndex(mf.model, keep_protos=False)
        infer_shapes(mf, main_outputs=map(len, map(_OUTPUTS, index.scopes[0].nodes)))  # skipped, as said
        return _of_model_file(index, mf)
    infer_shapes(mf)
    index = GraphIndex(mf.inferred or mf.model, keep_protos=False)
    if mf.inferred is not None:
        index.inference_work = mf.inference_work
    return _of_model_file(index, mf)


def _of_model_file(index, mf: ModelFile):
    """The index knows the model as read (GraphIndex.source_model), what load's walk found in it (its graphs and
    tensor attributes) and reads small external tensors' values from the model's own data files
    (small_value_reader)."""
    index.source_model = mf.model
    if mf.graph_bodies is not None:  # load's walk: its graphs and tensor attributes (ort.model_load reads them)
        index.memo["model_walk"] = ([g for g, _ in mf.graph_bodies], mf.tensor_attributes)
    if mf.external:
        from onnxlint.model.loading.external import small_value_reader

        index.read_external = small_value_reader(mf.external)
    return index
