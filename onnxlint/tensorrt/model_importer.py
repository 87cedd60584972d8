"""TensorRT's ONNX parser over a whole model (onnx-tensorrt's ModelImporter: supportsModel, parseGraph): each node
gets the importer its op type names, then that importer's checks (builtin_op_checks); one verdict per node.

Nodes with one signature, constant pattern and attributes get one verdict, computed once.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from onnxlint.model import local_functions
from onnxlint.model.graph import STANDARD_DOMAINS, GraphIndex, GraphScope, NodeRef
from onnxlint.tensorrt import behaviour, quantization, tables, versions
from onnxlint.tensorrt.builtin_op_checks import Row, verdict_docs, verdict_verified
from onnxlint.tensorrt.node_facts import NodeCheck, Signature, constant_value, dtype_of, is_constant, ort_only, rank
from onnxlint.tensorrt.tables import Table
from onnxlint.tensorrt.verdicts import QDQ_OPS, SUPPORTED, TrtPrediction, Verdict

CheckFn = Callable[[NodeRef, Signature, Table, str, Row], Verdict]
KeyFn = Callable[[NodeRef, Signature], tuple[Any, ...]]
_STRING = 8  # TensorProto.STRING
_IMPORTER_SAID = re.compile(r"'s importer for \S+ \([^)]*\): \"(.+)\"$")  # a probed importer's words (_ort_op)


def predict(index: GraphIndex, version: str | None = None) -> TrtPrediction:
    """The parser's verdict on every node (local function bodies left out: the parser inlines none)."""
    ver, note = tables.resolve(version)
    table = tables.load(ver)
    pred = TrtPrediction(ver, note, verified=table.get("verified") == "parser")
    check: CheckFn = verdict_verified if pred.verified else verdict_docs
    shared: dict[tuple[Any, ...], Verdict] = {}
    key_of, row_only, main, roles = _share_key(table, index)
    role, no_role = roles.get, roles.keys().isdisjoint
    # id(signature) -> the verdict of its main-graph nodes that read no constant or network input and write every
    # output (row_only signatures): their key_of key, (id, all None, output count), known from the signature alone
    plain: dict[int, Verdict] = {}
    signature, record = index.signature, pred.recorder()  # record_as, bound once
    local = index.is_local_function if index.functions else None
    running = local_functions.running_roots(index) if index.functions else set()
    for node in index.nodes:
        if local is not None and (local(node) or id(node.scope.root) not in running):
            continue
        sig = signature(node)
        sid = id(sig)
        if sid in row_only and node.scope is main:  # most nodes: key_of's key for them, without its call
            ins, outs = node.inputs, node.outputs
            if no_role(ins) and "" not in outs:  # the key read from the signature: no tuple made, none hashed
                verdict = plain.get(sid) or plain.setdefault(
                    sid, _shared(shared, (sid, (None,) * len(ins), len(outs)), node, sig, table, ver, check))
            else:
                key = (sid, tuple(map(role, ins)), len(outs) - outs.count(""))
                verdict = shared.get(key) or _shared(shared, key, node, sig, table, ver, check)
        else:
            key = key_of(node, sig)
            verdict = shared.get(key) or _shared(shared, key, node, sig, table, ver, check)
        if verdict[1] == "ort-op":
            _count_ort_op(pred, node, verdict)
        record(node.index, node, verdict)  # no TrtNode made a node in a big model
    measured = (table.get("behaviour") or {}).get("quantization")
    if measured:
        pred.unread_imports = quantization.unread_tensors(index, measured, versions.describe(ver))
    return pred


def _shared(shared: dict[tuple[Any, ...], Verdict], key: tuple[Any, ...], node: NodeRef, sig: Signature, table: Table,
            ver: str, check: CheckFn) -> Verdict:
    """The verdict of the nodes of that key: the one already made, else the node's."""
    verdict = shared.get(key)
    if verdict is None:
        verdict = shared[key] = _verdict(node, sig, table, ver, check)
    return verdict


def _count_ort_op(pred: TrtPrediction, node: NodeRef, verdict: Verdict) -> None:
    """An ORT-only op the parser does not import: counted, with its probed importer's words (once an op)."""
    label = node.op_type if node.domain == "ai.onnx" else f"{node.domain}::{node.op_type}"
    pred.ort_ops[label] = pred.ort_ops.get(label, 0) + 1
    said = _IMPORTER_SAID.search(verdict[2])
    if said and label not in pred.ort_op_words:
        pred.ort_op_words[label] = said.group(1)


def _verdict(node: NodeRef, sig: Signature, table: Table, ver: str, check: CheckFn) -> Verdict:
    """A stored input the parser cannot import (it imports every initializer before any node), else the importer's
    verdict; an op only ORT defines that the parser has no importer for says so (the key holds the op and domain,
    so the one verdict per key stays right). An ORT op the parser imports by its name (com.microsoft::
    QuantizeLinear gets ONNX's importer) is judged as that importer judges it."""
    if (table.get("behaviour") or {}).get("quantization"):
        stored = quantization.imported_tensors(NodeCheck(node, sig, table, ver, {}))
        if stored is not None:
            return stored
    found = importer(node, sig, table, ver)
    if not isinstance(found, tuple):
        return check(node, sig, table, ver, found)
    if found[0] == "unsupported" and ort_only(node):
        return ("unsupported", "ort-op", found[2])
    return found


def _share_key(table: Table, index: GraphIndex) -> tuple[KeyFn, set[int], GraphScope | None, dict[str, int]]:
    """What a node's verdict depends on beyond its signature, as the table's row for its op asks: which inputs are
    constant, their values, ranks, network inputs, attributes, the output count; a node whose verdict reads its
    neighbours or bodies is keyed by itself. Returns key_of, and what predict's loop makes the key of most nodes
    from without calling it: the ids of the signatures whose op's row asks nothing more (key_of adds each as it
    meets it), the main graph and the roles of its values (_roles)."""
    qdq_probed = bool((table.get("behaviour") or {}).get("quantization"))
    what = _what(table)
    # id(signature) -> what() of its op: signatures are the index's own, one object each (GraphIndex.signature),
    # so their ids stand for them while the index lives, and an int hashes at once where a signature's nested
    # tuples are hashed again at each lookup
    per_sig: dict[int, tuple[Any, ...]] = {}
    row_only: set[int] = set()  # the ids in per_sig whose what() is _ROW_ONLY
    # id(scope) -> (its constant values, its network inputs), for the nodes of a scope nothing encloses: one set
    # lookup an input, where is_constant and is_graph_input ask up to three dicts
    main_names: dict[int, tuple[set[str], set[str]]] = {}
    # id(scope) -> the roles' dict.get of such a scope (_roles): one lookup an input for the most common key
    main_roles: dict[int, Callable[[str], int | None]] = {}
    zero_points: quantization.ZeroPoints = {}  # each Q/DQ zero point tensor's kind, read once (quantization.key)
    main = index.scopes[0] if index.scopes else None
    main_role_of = _roles(main, index.by_op.get("Constant", [])) if main is not None else {}
    if main is not None:
        main_roles[id(main)] = main_role_of.get

    def key_of(node: NodeRef, sig: Signature) -> tuple[Any, ...]:
        """id(sig) and the facts its op's verdicts read, in a tuple of one shape per signature (what() is its
        op's) and kind of scope: two nodes share a verdict exactly when their keys are equal."""
        sid = id(sig)
        flags = per_sig.get(sid)
        if flags is None:
            flags = what(node.op_type, node.domain)
            if any(t and not t.startswith("tensor(") for t in sig[3]):  # the importer's verdict may name the
                flags = (*flags[:6], True)  # non-tensor network input it reads: each node keyed by itself
            per_sig[sid] = flags
            if flags is _ROW_ONLY:
                row_only.add(sid)
        scope = node.scope
        if flags is _ROW_ONLY and scope.parent is None:  # most nodes: which inputs are constants and network
            # inputs (each input's role, which says both), and the output count
            role = main_roles.get(id(scope))
            if role is None:
                role = main_roles[id(scope)] = _roles(scope, index.by_op.get("Constant", [])).get
            outs = node.outputs
            return (sid, tuple(map(role, node.inputs)), len(outs) - outs.count(""))
        has_row, values, ranks, attrs, own_cast, qdq, by_index = flags
        if has_row:
            ins = node.inputs
            main = scope.parent is None
            if main:  # is_constant and is_graph_input, without their calls: nothing encloses this scope
                names = main_names.get(id(scope))
                if names is None:
                    names = main_names[id(scope)] = _main_names(scope, index.by_op.get("Constant", []))
                constant: tuple[bool, ...] = tuple(map(names[0].__contains__, ins))
                # () where it reads none (most nodes): all False, as many as the signature has inputs
                network: tuple[bool, ...] | None = () if names[1].isdisjoint(ins) else tuple(map(names[1].__contains__, ins))
            else:
                constant, network = tuple([bool(n) and is_constant(node, n) for n in ins]), None
            outs = node.outputs
            outputs = len(outs) - outs.count("")
            if not (values or ranks or attrs or own_cast or qdq or by_index):  # most ops: nothing more
                return (id(sig), constant, network, outputs)
            return (id(sig), constant, network, outputs,
                    tuple([constant_value(node, n) if n else None for n in ins]) if values else None,
                    tuple([rank(node, i) for i in range(len(ins))]) if ranks else None,
                    _attributes(node) if attrs else None,
                    # the verdict reads its consumers / its axes values and input rank (_own_verdict) / its bodies
                    # / the attributes its importer checks (MatMulNBits' bits)
                    node.index if by_index or (own_cast and _own_verdict(node, sig)) else None,
                    # where x comes from, the zero point's values, the scale's shape
                    quantization.key(node, zero_points) if qdq else None)
        if qdq_probed:  # the stored inputs the parser cannot import, whatever the op
            return (id(sig), tuple([bool(n) and is_constant(node, n) for n in node.inputs]), node.index if by_index else None)
        return (id(sig), node.index) if by_index else (id(sig),)

    return key_of, row_only, main, main_role_of


def _what(table: Table) -> Callable[[str, str], tuple[Any, ...]]:
    """What key_of adds for nodes of an op and domain, as flags (read from the row once per op, not per node):
    whether the op has a row, reads input values, ranks, attributes, its consumers or axes, a Q/DQ pattern, its
    bodies or probes; _ROW_ONLY itself where the row asks nothing more."""
    ops = table["ops"].get
    behaviour = table.get("behaviour") or {}
    mixed_rejected = behaviour.get("mixed_float_inputs") == "reject"
    qdq_probed = bool(behaviour.get("quantization"))
    probed_ort_ops = set(table.get("ort_op_probes") or ())
    reduce_ignored = {op for op, how in (behaviour.get("reduce_axes_input") or {}).items() if how == "ignored"}

    def what(op: str, domain: str) -> tuple[Any, ...]:
        row = ops(op)
        by_index = op in ("If", "Loop") or bool(probed_ort_ops and f"{domain}::{op}" in probed_ort_ops)
        if not row:
            return (False, False, False, False, False, False, by_index)
        flags = (True, bool(row.get("input_value_limits")), bool(row.get("bad_ranks") or row.get("crash_ranks")),
                 bool(row.get("attr_limits")) or op in ("Cast", "CastLike", "Shape"),
                 (mixed_rejected and op == "Cast") or op in reduce_ignored, qdq_probed and op in QDQ_OPS, by_index)
        return _ROW_ONLY if flags == _ROW_ONLY else flags

    return what


def _own_verdict(node: NodeRef, sig: Signature) -> bool:
    """Whether a node of an op whose verdict may read more than its key (what()'s own_cast) is keyed by itself: a
    Reduce node (its axes' values, its input's rank), a Cast where the parser's mixed-type check reads its consumers
    (its `to` is not its declared output type: behaviour.cast_to_other_type). Any other Cast's verdict is its key's,
    as on the tables whose parser takes mixed float inputs (a node reading a non-tensor input is keyed by itself
    whatever its op: key_of)."""
    if node.op_type != "Cast":
        return True
    return behaviour.cast_to_other_type(node, sig) is not None


def _attributes(node: NodeRef) -> tuple[tuple[str, bytes], ...]:
    """The node's attributes but its graphs, serialized, for the key: () without reading the proto where the
    index's walk saw it has none (attribute_flags: most Shape and Cast nodes' protos would be made for nothing)."""
    if not node.attribute_flags():
        return ()
    return tuple([(a.name, a.SerializeToString()) for a in node.proto.attribute if a.type not in (5, 10)])


_ROW_ONLY = (True, False, False, False, False, False, False)  # _share_key's what() for an op whose row asks nothing more


def _roles(scope: GraphScope, constant_nodes: list[NodeRef]) -> dict[str, int]:
    """A scope nothing encloses: value name -> 1 a constant, 2 a network input, 3 both (_main_names); the
    names that are neither are not in it."""
    constants, network = _main_names(scope, constant_nodes)
    roles = dict.fromkeys(constants, 1)
    for name in network:
        roles[name] = roles.get(name, 0) | 2
    return roles


def _main_names(scope: GraphScope, constant_nodes: list[NodeRef]) -> tuple[set[str], set[str]]:
    """(the values node_facts.is_constant takes for constants in a scope nothing encloses: initializers, Constant
    values and the outputs a Constant node writes last; the scope's network inputs, GraphScope.is_graph_input)."""
    constants = {*scope.initializers, *scope.constants}
    producer = scope.producer
    for c in constant_nodes:
        if c.scope is scope and c.domain == "ai.onnx":
            constants.update(o for o in c.outputs if o and producer.get(o) is c)
    constants.discard("")  # no input
    return constants, set(scope.inputs).difference(scope.initializers)


def _casts_to_string(node: NodeRef) -> bool:
    """A Cast to string, read from its `to`: inside a local function body shape inference leaves the output
    untyped, and the parser imports the body (checkCast rejects the string type there as in the main graph)."""
    return node.op_type == "Cast" and node.domain == "ai.onnx" and node.attr("to") == _STRING


def importer(node: NodeRef, sig: Signature, table: Table, ver: str) -> Verdict | Row:
    """The importer the parser picks for the node: a verdict when there is none it can use (a plugin op, an op
    not listed or not supported, a string or non-tensor network input), else the op's table row to check."""
    ort = _ort_op(node, table, ver) if node.domain not in STANDARD_DOMAINS or node.op_type not in table["ops"] else None
    if ort is not None:
        return ort
    if node.domain not in STANDARD_DOMAINS:
        if versions.is_rtx(ver):  # TensorRT-RTX ships no plugin ops: promising a plugin would mislead
            return ("unsupported", "plugin", f"{versions.describe(ver)} has no importer for it, and TensorRT-RTX ships no plugin ops")
        return "unsupported", "plugin", "TensorRT needs a plugin registered under that name"
    row: Row | None = table["ops"].get(node.op_type)
    who = versions.describe(ver)
    if row is None or (node.domain != "ai.onnx" and table.get("verified") == "parser"):
        return "unsupported", "not-listed", f"{node.op_type} is not in {who}'s operator table"
    if not row["supported"]:
        return _no_importer(node, table, ver)
    if any(dtype_of(t) == "string" for t in sig[3] + sig[4]) or _casts_to_string(node):
        return "unsupported", "dtype", f"{node.op_type} touches a string tensor; TensorRT has no string type"
    if node.scope.parent is None:
        for name, t in zip(node.inputs, sig[3]):
            if t and not t.startswith("tensor(") and node.scope.is_graph_input(name):
                return "unsupported", "dtype", f"graph input '{name}' is a {t}; TensorRT network inputs are tensors"
    return row


def _no_importer(node: NodeRef, table: Table, ver: str) -> Verdict:
    """An op the table says has no importer."""
    who = versions.describe(ver)
    if table.get("verified") != "parser":
        return "unsupported", "not-supported", f"{who} lists {node.op_type} as unsupported"
    docs_ver = table.get("docs_restrictions_from") or ver
    docs = tables.docs_table(docs_ver)
    if docs and (docs["ops"].get(node.op_type) or {}).get("supported"):
        # plugin-backed importers (RoiAlign from 8.6, DeformConv): the probes load no plugin library and
        # TensorRT-RTX ships none, so "no importer" was measured, but TensorRT proper with its plugins
        # imports the op: too doubtful to call an error
        return ("restricted", "matrix-restriction",
                f"{who} had no importer for {node.op_type} when probed without plugins, but onnx-tensorrt's "
                f"{docs_ver} matrix lists it (through a TensorRT plugin); TensorRT-RTX ships no plugins")
    return "unsupported", "not-supported", f"{who} has no importer for {node.op_type}"


def _ort_op(node: NodeRef, table: Table, ver: str) -> Verdict | Row | None:
    """An op ONNX Runtime defines (com.microsoft, or ONNX-domain with no onnx schema) that the parser has an
    importer for (the table's `ort_ops`, tools/gen_trt_behaviour.py). The parser picks importers by op type alone
    (onnx-tensorrt ModelImporter.cpp, parseGraph: `opImporters.count(node.op_type())`), so the node gets the
    importer of that name: the verdict, the ONNX op's table row, or None when the table does not know the op."""
    info = (table.get("ort_ops") or {}).get(f"{node.domain}::{node.op_type}")
    if not info:
        return None
    who, op = versions.describe(ver), node.op_type
    measured = _ort_op_probe(node, (table.get("ort_op_probes") or {}).get(f"{node.domain}::{op}"))
    if measured is not None:
        if measured.get("result") == "accept":
            return SUPPORTED
        words = measured.get("error", "")
        probed = f"A {measured['A']}" + (f", {measured['bits']} bits" if "bits" in measured else "") + "".join(
            f", {k.replace('_', ' ')} {measured[k]}" for k in ("x_batch", "position_ids_batch") if k in measured) + (
            ", position ids 1-D" if measured.get("position_ids_rank") == 1 else "")
        return ("unsupported", "plugin" if "plugin" in words else "not-supported",
                f"{who}'s importer for {op} ({probed}): \"{words}\"")
    if info.get("plugin"):
        return ("unsupported", "plugin", f"{who}'s importer for {op} loads a TensorRT plugin of that name, and fails when none "
                f"is registered ('failed to load {op} plugin')" + ("; TensorRT-RTX ships no plugins" if versions.is_rtx(ver) else ""))
    if info.get("onnx_op") and not info.get("same_inputs"):
        return ("unsupported", "not-supported", f"{who} picks importers by op type alone: this {node.domain}::{op} gets ONNX "
                f"{op}'s importer, whose inputs differ from ONNX Runtime's {op}")
    if info.get("onnx_op"):
        row: Row | None = table["ops"].get(op)
        return row if row else None
    return SUPPORTED


def _ort_op_probe(node: NodeRef, probes: list[dict[str, Any]] | None) -> dict[str, Any] | None:
    """The probe of an ORT op's importer that matches the node (tools/gen_trt_behaviour.py `ort_op_probes`:
    MatMulNBits by A's type and `bits`; RotaryEmbedding by its input's type, position_ids' rank and whether the
    batch dimensions of x and position_ids are static or dynamic), None when none does. Where the node's shapes do not say and the
    probes that could match disagree, an accepting one: no verdict on a doubt."""
    if not probes:
        return None
    a = node.input_type(0).dtype if node.inputs else None
    bits = node.attr("bits")
    bits = 4 if bits is None else bits  # MatMulNBits' schema default
    rows = [p for p in probes if p.get("A") == a and p.get("bits", bits) == bits]
    known = {"x_batch": _batch(node, 0), "position_ids_batch": _batch(node, 1), "position_ids_rank": rank(node, 1)}
    rows = [p for p in rows if all(known[k] is None or known[k] == p[k] for k in known if k in p)]
    if len({p.get("result") for p in rows}) > 1:
        return next(p for p in rows if p.get("result") == "accept")
    return rows[0] if rows else None


def _batch(node: NodeRef, i: int) -> str | None:
    """'static' or 'dynamic' for the first dimension of the node's i-th input, None when the shape does not say."""
    if i >= len(node.inputs) or not node.inputs[i]:
        return None
    shape = node.input_type(i).shape
    if not shape or shape[0] is None:
        return None
    return "static" if isinstance(shape[0], int) else "dynamic"
