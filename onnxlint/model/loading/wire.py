"""Protobuf wire surgery: a model's bytes without its large initializers' data, cut at the wire level."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import onnx


WEIGHT_BYTES = 4096  # in-file tensors above this are weights: shape inference needs their dims, not their bytes
# field numbers of onnx.proto: ModelProto.graph, GraphProto.initializer; TensorProto's fields as keys (number
# << 3 | wire type) of the wire types protobuf reads them with (any other is kept as an unknown field)
_MODEL_GRAPH, _GRAPH_INITIALIZER, _GRAPH_NODE = 7, 5, 1
# NodeProto's op_type, domain and attribute; AttributeProto's name, type and t; TensorProto's data_type (keys)
_NODE_OP_TYPE, _NODE_DOMAIN, _NODE_ATTRIBUTE = 4 << 3 | 2, 7 << 3 | 2, 5 << 3 | 2
_ATTR_NAME, _ATTR_TYPE, _ATTR_T = 1 << 3 | 2, 20 << 3 | 0, 5 << 3 | 2
_DATA_TYPE_FIELD = 2 << 3 | 0
_TENSOR_ATTRIBUTE = 4  # AttributeProto.TENSOR
_FLOAT_TYPES = frozenset({1, 10, 11, 16})  # FLOAT, FLOAT16, DOUBLE, BFLOAT16: no inference reads such a value
_RAW_FIELD, _LOCATION_FIELD = 9 << 3 | 2, 14 << 3 | 0  # raw_data, data_location
_TYPED_FIELDS = frozenset({4 << 3 | 2, 4 << 3 | 5, 5 << 3 | 2, 5 << 3 | 0, 6 << 3 | 2, 7 << 3 | 2, 7 << 3 | 0,
                           10 << 3 | 2, 10 << 3 | 1, 11 << 3 | 2, 11 << 3 | 0})  # float/int32/string/int64/double/uint64_data


def weightless_bytes(model: onnx.ModelProto, raw: bytes | None = None) -> bytes:
    """The model serialized without the bytes of its large in-file initializers (dims and dtype kept).

    onnx's shape inference copies the whole model in and out; weights are most of it and it never reads them.
    Cut out of the serialized model (raw: the file's bytes, when at hand) at the protobuf wire level, the main
    graph's initializers only (weights in a control-flow body are rare; inference reads them, its answer is
    the same). Neither the model nor its weights are copied into Python objects: clearing a field of a parsed
    model and setting it again grew the model's memory by the size of every weight."""
    data = raw if raw is not None else model.SerializeToString()
    try:
        return strip_initializers(data)
    except (IndexError, ValueError):  # the graph given in parts (merged on parsing), or not a model's bytes: as is
        return bytes(data)


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _skip(buf: bytes, pos: int, key: int) -> tuple[int, int]:
    """(start of the value, end of the field) of a field whose key ended at pos."""
    kind = key & 7
    if kind == 2:
        n, pos = _varint(buf, pos)
        return pos, pos + n
    if kind == 0:
        return pos, _varint(buf, pos)[1]
    if kind == 1:
        return pos, pos + 8
    if kind == 5:
        return pos, pos + 4
    raise ValueError(f"wire type {kind}")  # groups: onnx.proto has none


def strip_initializers(buf: bytes) -> bytes:
    """buf (a model serialized) with the data fields of its main graph's large initializers left out, as
    clearing them in the parsed model and serializing it would (a field of buf's graph at a time, copied as
    it is). IndexError or ValueError: buf's graph cannot be read so (given in parts, or not a model)."""
    return strip_weights(buf, constants=False)[0]


def strip_weights(buf: bytes, constants: bool = True) -> tuple[bytes, bytes, list[tuple[int, int]]]:
    """(strip_initializers(buf), the same bytes without the data of the main graph's large floating-point
    Constant nodes too, where those are: [(the node's position in the graph, its `value` attribute's position)]),
    in one walk over buf's graph. The second is for shape inference only, which reads a Constant's dtype and
    dims (and the values of the small integer ones that feed a shape: none of these); the caller puts the
    values back into the inferred model (restore_constants), as it would have had them. constants False: the
    second is the first, and the list empty."""
    graphs = 0
    pos, end = 0, len(buf)
    while pos < end:
        at = pos
        key, pos = _varint(buf, pos)
        start, pos = _skip(buf, pos, key)
        if key == (_MODEL_GRAPH << 3 | 2):
            graphs += 1
            graph_at, graph_start, graph_end = at, start, pos
    if pos != end or graphs != 1:  # no graph, or one given in parts (merged on parsing): leave it
        raise ValueError("graph field")
    view = memoryview(buf)
    body: list = []  # the graph's new bytes: ranges of buf and rewritten initializers
    copied = graph_start  # buf[copied:] is not in body yet
    # the same for the inference copy, once a Constant is rewritten: (ranges, where buf[...] is copied up to)
    body2: list = []
    copied2 = graph_start
    stripped: list[tuple[int, int]] = []
    node_at = -1  # the position of the last node field in the graph
    pos = graph_start
    for_init = _GRAPH_INITIALIZER << 3 | 2
    for_node = _GRAPH_NODE << 3 | 2
    while pos < graph_end:
        at = pos
        key = buf[pos]  # most keys are one byte
        pos += 1
        if key >= 0x80:
            key, pos = _varint(buf, at)
        if key & 7 == 2:
            n = buf[pos]
            if n < 0x80:
                pos += 1
            else:
                n, pos = _varint(buf, pos)
            start, pos = pos, pos + n
        else:
            start, pos = _skip(buf, pos, key)
        if key == for_node:
            node_at += 1
            if constants and n > WEIGHT_BYTES:  # only a node this large can hold a large Constant value
                try:
                    cut = _constant_without_data(buf, start, pos)
                except (IndexError, ValueError):  # not readable so: left as it is (its parse says why)
                    cut = None
                if cut is not None:
                    node, attr_at = cut
                    if not stripped:  # the inference copy starts apart from the other here
                        body2, copied2 = list(body), copied
                    body2 += [view[copied2:at], _encode_varint(for_node), _encode_varint(len(node)), node]
                    copied2 = pos
                    stripped.append((node_at, attr_at))
            continue
        if key != for_init:
            continue
        drop = _drop_fields(buf, start, pos)
        if drop is None:
            continue
        tensor = b"".join([view[a:b] for a, b in drop])
        piece = [_encode_varint(for_init), _encode_varint(len(tensor)), tensor]
        body += [view[copied:at], *piece]
        copied = pos
        if stripped:
            body2 += [view[copied2:at], *piece]
            copied2 = pos
    if pos != graph_end:
        raise ValueError("graph")
    weightless = _with_graph(buf, view, body, copied, graph_at, graph_end) if body else bytes(buf)
    if not stripped:
        return weightless, weightless, stripped
    return weightless, _with_graph(buf, view, body2, copied2, graph_at, graph_end), stripped


def restore_constants(inferred: onnx.ModelProto, model: onnx.ModelProto, stripped: list[tuple[int, int]]) -> bool:
    """Put the values strip_weights left out of the inference copy back into the model onnx inferred from it, from
    the model parsed with them (inference adds value types, never a node or an attribute: the positions are the
    same). False, with nothing changed, when a node there is not that Constant in both."""
    inferred_nodes, nodes = inferred.graph.node, model.graph.node
    pairs = []
    for at, k in stripped:
        if at >= len(inferred_nodes) or at >= len(nodes):
            return False
        got, have = inferred_nodes[at], nodes[at]
        if got.op_type != "Constant" or have.op_type != "Constant" or k >= len(got.attribute) \
                or k >= len(have.attribute) or got.attribute[k].name != "value" or have.attribute[k].name != "value" \
                or list(got.attribute[k].t.dims) != list(have.attribute[k].t.dims):
            return False
        pairs.append((got.attribute[k].t, have.attribute[k].t))
    for dst, src in pairs:
        dst.CopyFrom(src)
    return True


def _with_graph(buf: bytes, view: memoryview, body: list, copied: int, graph_at: int, graph_end: int) -> bytes:
    """buf with its graph field (from graph_at to graph_end) made of body and the rest of the graph from copied."""
    body.append(view[copied:graph_end])
    graph = b"".join(body)
    return b"".join([view[:graph_at], _encode_varint(_MODEL_GRAPH << 3 | 2), _encode_varint(len(graph)), graph,
                     view[graph_end:]])


def _fields(buf: bytes, start: int, end: int, what: str = "message") -> list[tuple[int, int, int, int]]:
    """The fields of the message buf[start:end]: (key, where the field starts, where its value starts, its end);
    ValueError(what) when they do not end where it does."""
    fields = []
    pos = start
    while pos < end:
        at = pos
        key, pos = _varint(buf, pos)
        value, pos = _skip(buf, pos, key)
        fields.append((key, at, value, pos))
    if pos != end:
        raise ValueError(what)
    return fields


def _constant_without_data(buf: bytes, start: int, end: int) -> tuple[bytes, int] | None:
    """The serialized node buf[start:end] without the data of its value, and the position of its `value`
    attribute among its attributes, when it is an ai.onnx Constant of one floating-point tensor value whose data
    _drop_fields leaves out (over WEIGHT_BYTES); else None. Anything unusual (a field given twice, a value of
    another kind or dtype) is left as it is."""
    fields = _fields(buf, start, end)
    ops = [f for f in fields if f[0] == _NODE_OP_TYPE]
    if len(ops) != 1 or buf[ops[0][2]:ops[0][3]] != b"Constant":
        return None
    domains = [f for f in fields if f[0] == _NODE_DOMAIN]
    if len(domains) > 1 or (domains and buf[domains[0][2]:domains[0][3]] not in (b"", b"ai.onnx")):
        return None
    attrs = [f for f in fields if f[0] == _NODE_ATTRIBUTE]
    found = None
    for k, (_, _, a_start, a_end) in enumerate(attrs):
        a_fields = _fields(buf, a_start, a_end)
        names = [f for f in a_fields if f[0] == _ATTR_NAME]
        if len(names) == 1 and buf[names[0][2]:names[0][3]] == b"value":
            if found is not None:
                return None  # two `value` attributes
            found = (k, a_fields)
    if found is None:
        return None
    k, a_fields = found
    types = [f for f in a_fields if f[0] == _ATTR_TYPE]
    tensors = [f for f in a_fields if f[0] == _ATTR_T]
    if len(types) != 1 or _varint(buf, types[0][2])[0] != _TENSOR_ATTRIBUTE or len(tensors) != 1:
        return None
    t_start, t_end = tensors[0][2], tensors[0][3]
    dtypes = [f for f in _fields(buf, t_start, t_end) if f[0] == _DATA_TYPE_FIELD]
    if len(dtypes) != 1 or _varint(buf, dtypes[0][2])[0] not in _FLOAT_TYPES:
        return None
    drop = _drop_fields(buf, t_start, t_end)
    if drop is None:
        return None
    view = memoryview(buf)
    tensor = b"".join([view[a:b] for a, b in drop])
    # the attribute with its new tensor in its place, then the node with its new attribute in its place: every
    # other field copied as it was, in its order
    attr = _replaced(view, a_fields, tensors[0], _ATTR_T, tensor)
    return _replaced(view, fields, attrs[k], _NODE_ATTRIBUTE, attr), k


def _replaced(view: memoryview, fields: list[tuple[int, int, int, int]], old: tuple[int, int, int, int], key: int,
              value: bytes) -> bytes:
    """The message of these fields with the field `old` (one of them) holding value instead."""
    return b"".join([view[f[1]:f[3]] if f is not old else _encode_varint(key) + _encode_varint(len(value)) + value
                     for f in fields])


def _drop_fields(buf: bytes, start: int, end: int) -> list[tuple[int, int]] | None:
    """The byte ranges of the serialized tensor buf[start:end] to keep without its data, or None to keep it
    whole. As the parsed tensor would decide: one whose data_location is EXTERNAL stays; raw_data over
    WEIGHT_BYTES goes (every occurrence: the last one is the value); with no raw_data, a tensor over
    WEIGHT_BYTES (its ByteSize, read from the tensor parsed alone when it may be) loses its typed data."""
    import onnx

    fields = _fields(buf, start, end, "tensor")
    location = [f for f in fields if f[0] == _LOCATION_FIELD]
    if location and _varint(buf, location[-1][2])[0] == onnx.TensorProto.EXTERNAL:
        return None
    raws = [f for f in fields if f[0] == _RAW_FIELD]
    if raws:
        if raws[-1][3] - raws[-1][2] <= WEIGHT_BYTES:
            return None
        gone = frozenset({_RAW_FIELD})
    elif end - start > WEIGHT_BYTES // 2 and onnx.TensorProto.FromString(bytes(buf[start:end])).ByteSize() > WEIGHT_BYTES:
        gone = _TYPED_FIELDS  # (the serialized size can exceed the file's bytes a little: packing, so the margin)
    else:
        return None
    return [(a, b) for key, a, _, b in fields if key not in gone]


# onnx shape inference re-reads the whole outer scope for every control-flow body (If/Loop/Scan) and
