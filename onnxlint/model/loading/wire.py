"""Protobuf wire surgery: a model's bytes without its large initializers' data, cut at the wire level."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import onnx


WEIGHT_BYTES = 4096  # in-file tensors above this are weights: shape inference needs their dims, not their bytes
# field numbers of onnx.proto: ModelProto.graph, GraphProto.initializer; TensorProto's fields as keys (number
# << 3 | wire type) of the wire types protobuf reads them with (any other is kept as an unknown field)
_MODEL_GRAPH, _GRAPH_INITIALIZER = 7, 5
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
    pos = graph_start
    for_init = _GRAPH_INITIALIZER << 3 | 2
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
        if key != for_init:
            continue
        drop = _drop_fields(buf, start, pos)
        if drop is None:
            continue
        tensor = b"".join([view[a:b] for a, b in drop])
        body += [view[copied:at], _encode_varint(for_init), _encode_varint(len(tensor)), tensor]
        copied = pos
    if pos != graph_end:
        raise ValueError("graph")
    if not body:
        return bytes(buf)
    body.append(view[copied:graph_end])
    graph = b"".join(body)
    return b"".join([view[:graph_at], _encode_varint(_MODEL_GRAPH << 3 | 2), _encode_varint(len(graph)), graph,
                     view[graph_end:]])


def _drop_fields(buf: bytes, start: int, end: int) -> list[tuple[int, int]] | None:
    """The byte ranges of the serialized tensor buf[start:end] to keep without its data, or None to keep it
    whole. As the parsed tensor would decide: one whose data_location is EXTERNAL stays; raw_data over
    WEIGHT_BYTES goes (every occurrence: the last one is the value); with no raw_data, a tensor over
    WEIGHT_BYTES (its ByteSize, read from the tensor parsed alone when it may be) loses its typed data."""
    import onnx

    fields = []
    pos = start
    while pos < end:
        at = pos
        key, pos = _varint(buf, pos)
        value, pos = _skip(buf, pos, key)
        fields.append((key, at, value, pos))
    if pos != end:
        raise ValueError("tensor")
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
