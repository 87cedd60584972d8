"""Cached look-ups in the operator schemas a node resolves against (formal parameters, defaults, since-versions):
onnx's, and for since-versions and formal parameters also the schemas ONNX Runtime registers itself
(`ort.schema_registry`: its contrib ops, and ONNX-domain ops such as SimplifiedLayerNormalization that onnx has no
schema for), which ORT resolves a node against next to onnx's."""

from __future__ import annotations

from functools import lru_cache

import onnx
from onnx import defs, helper

from onnxlint.graph import ORT_DOMAINS, STANDARD_DOMAINS
from onnxlint.ort import schema_registry


@lru_cache(maxsize=4096)
def get_schema(op_type: str, version: int | None, domain: str):
    dom = "" if domain == "ai.onnx" else domain
    try:
        if version is None:
            return defs.get_schema(op_type, dom)
        return defs.get_schema(op_type, version, dom)
    except Exception:  # SchemaError: unknown op / version
        return None


def _ort_own(op_type: str, version: int | None, domain: str) -> schema_registry.OrtSchema | None:
    """ORT's own schema when it is the one the node resolves to: the newest since-version <= the opset among
    onnx's and ORT's schemas of the op is ORT's (ORT's schema registry holds both)."""
    ort = schema_registry.schema(op_type, version, domain)
    if ort is None:
        return None
    s = get_schema(op_type, version, domain)
    return ort if s is None or ort.since_version > s.since_version else None


@lru_cache(maxsize=4096)
def since_version(op_type: str, version: int | None, domain: str) -> int | None:
    """The since-version of the schema a node of this op at this opset resolves to (onnx's or ORT's own)."""
    ort = _ort_own(op_type, version, domain)
    if ort is not None:
        return ort.since_version
    s = get_schema(op_type, version, domain)
    return s.since_version if s is not None else None


@lru_cache(maxsize=4096)
def ort_only(op_type: str, version: int | None, domain: str) -> bool:
    """Whether only ONNX Runtime defines this op: a contrib-domain op, or an ONNX-domain op whose schema at this
    opset is ORT's own (SimplifiedLayerNormalization). A model holding one was prepared for ORT. Not the TensorRT
    plugin ops ORT registers in the ONNX domain for its TensorRT EP (EfficientNMS_TRT, ...: TensorRT's plugin names
    end in _TRT): a model holding those was prepared for TensorRT."""
    if domain not in STANDARD_DOMAINS:
        return domain in ORT_DOMAINS or domain in schema_registry.domains()
    return _ort_own(op_type, version, domain) is not None and not op_type.endswith("_TRT")


@lru_cache(maxsize=4096)
def attribute_default(op_type: str, version: int | None, domain: str, name: str):
    s = get_schema(op_type, version, domain)
    if s is None or name not in s.attributes:
        return None
    dv = s.attributes[name].default_value
    if dv is None or not dv.type:
        return None
    v = helper.get_attribute_value(dv)
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, list):
        return [x.decode() if isinstance(x, bytes) else x for x in v]
    return v


@lru_cache(maxsize=4096)
def formal_params(op_type: str, version: int | None, domain: str) -> tuple[list, list] | None:
    """([(name, type_str, variadic)], same for outputs) or None when neither onnx nor ORT has a schema for it."""
    ort = _ort_own(op_type, version, domain)
    if ort is not None:
        return ([(n, t, o == "variadic") for n, t, o in ort.inputs], [(n, t, o == "variadic") for n, t, o in ort.outputs])
    s = get_schema(op_type, version, domain)
    if s is None:
        return None
    var = onnx.defs.OpSchema.FormalParameterOption.Variadic
    ins = [(p.name, p.type_str, p.option == var) for p in s.inputs]
    outs = [(p.name, p.type_str, p.option == var) for p in s.outputs]
    return ins, outs


@lru_cache(maxsize=4096)
def has_function(op_type: str, version: int | None, domain: str) -> bool:
    s = get_schema(op_type, version, domain)
    return bool(s is not None and (s.has_function or s.has_context_dependent_function))
