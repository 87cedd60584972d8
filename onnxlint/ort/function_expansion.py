"""Function expansion: a node no execution provider has a kernel for is inlined into its ONNX function body
(Graph::InlineFunction at partitioning), whose nodes are placed in its stead."""

from __future__ import annotations

from collections.abc import Mapping

import onnx

from onnxlint.model.graph import NodeRef, ValueType
from onnxlint.ort import schema_registry
from onnxlint.ort.kernel_registry import KernelTable


def function_body_gaps(node: NodeRef, tables: Mapping[str, KernelTable]) -> list[str]:
    """Ops of the function body (for the opset in effect) that no EP registers at their since-version.

    Used when the body cannot be instantiated for the node's types; then only op and version are checked."""
    s = schema_registry.get_schema(node.op_type, node.opset, node.domain)
    body = None
    try:
        body = s.get_function_with_opset_version(node.opset) if node.opset else s.function_body
        if isinstance(body, bytes):
            body = onnx.FunctionProto.FromString(body)
    except Exception:
        body = None
    if body is None or not body.node:
        return []  # context-dependent body: cannot be expanded without ORT's type context
    gaps = []
    for inner in body.node:
        if inner.op_type == "Constant":
            continue  # becomes an initializer
        dom = inner.domain or "ai.onnx"
        since = schema_registry.since_version(inner.op_type, node.opset, dom)
        ok = any(table.rows_for(dom, inner.op_type, since) for table in tables.values())
        if not ok and not schema_registry.has_function(inner.op_type, node.opset, dom):
            gaps.append(f"{inner.op_type}-{since}")  # function ops inside the body are expanded in turn
    return sorted(set(gaps))


def _type_proto(vt: ValueType) -> onnx.TypeProto | None:
    if not vt.type_str or not vt.type_str.startswith("tensor("):
        return None
    elem = _ELEM.get(vt.dtype or "")
    if elem is None:
        return None
    shape = vt.shape
    return onnx.helper.make_tensor_type_proto(elem, None if shape is None else [d if isinstance(d, int) else None for d in shape])


_ELEM = {onnx.helper.tensor_dtype_to_string(t).replace("TensorProto.", "").lower(): t
         for t in onnx.TensorProto.DataType.values() if t}


def expand_function(node: NodeRef, crashes: list[str] | None = None) -> onnx.ModelProto | None:
    """The node's ONNX function body as a model (inputs typed like the node's), inlined and shape-inferred, as
    ORT expands it when no provider has a kernel; an empty graph when ONNX defines no body for the node's opset;
    None when the body cannot be built here (unknown input types, nested functions), or when onnx's C++ crashed
    building it (in the native worker; what it said is added to crashes)."""
    from onnxlint.model.loading import native

    schema = schema_registry.get_schema(node.op_type, node.opset, node.domain)
    if schema is None or node.opset is None:
        return None
    in_types = [_type_proto(node.scope.type_of(v)) if v else None for v in node.inputs]
    try:
        if schema.has_context_dependent_function:
            if any(t is None for v, t in zip(node.inputs, in_types) if v):
                return None
            # the newest body at or before the model's opset (onnx builds GroupNormalization-21's for opset 21
            # only; ORT expands it in an opset-23 model with that body: measured on 1.24.4 and 1.31.1)
            raw = native.function_body(node.proto, "" if node.domain == "ai.onnx" else node.domain, node.opset,
                                       schema.since_version, in_types)
        elif schema.has_function:
            if node.opset < min(schema.function_opset_versions or [0]):
                return onnx.ModelProto(graph=onnx.GraphProto())
            raw = schema.get_function_with_opset_version(node.opset)
        else:
            return None
        fn = onnx.FunctionProto.FromString(raw) if isinstance(raw, bytes) else raw
        if fn is None or not fn.node:
            return None
        fn.domain = node.proto.domain
        fn.name = node.op_type
        del fn.opset_import[:]
        fn.opset_import.extend([onnx.helper.make_opsetid("", node.opset)])
        call = onnx.NodeProto()
        call.CopyFrom(node.proto)
        del call.input[:]
        del call.output[:]
        call.input.extend([f"in{i}" if v else "" for i, v in enumerate(node.inputs)])
        call.output.extend([f"out{i}" if v else "" for i, v in enumerate(node.outputs)])
        inputs = [onnx.helper.make_value_info(f"in{i}", t) for i, (v, t) in enumerate(zip(node.inputs, in_types)) if v and t is not None]
        if len(inputs) != sum(1 for v in node.inputs if v):
            return None
        outputs = [onnx.helper.make_empty_tensor_value_info(f"out{i}") for i, v in enumerate(node.outputs) if v]
        opsets = [onnx.helper.make_opsetid("", node.opset)]
        if node.proto.domain not in ("", "ai.onnx"):
            opsets.append(onnx.helper.make_opsetid(node.proto.domain, node.opset))
        model = onnx.helper.make_model(onnx.helper.make_graph([call], "expanded", inputs, outputs), opset_imports=opsets,
                                       functions=[fn], ir_version=10)
        expanded: onnx.ModelProto = native.inline_and_infer(model)
        return expanded
    except native.NativeCrash as exc:  # the model's node made onnx's C++ crash: no body, said in the notes
        if crashes is not None:
            crashes.append(f"{exc} (expanding {node.op_type} into its function body)")
        return None
    except Exception:  # noqa: BLE001 - onnx cannot build this body: fall back to the op-level check
        return None
