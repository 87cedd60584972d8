"""Cached look-ups in onnx's operator schemas (formal parameters, defaults, since-versions)."""

from __future__ import annotations

from functools import lru_cache

import onnx
from onnx import defs, helper


@lru_cache(maxsize=4096)
def get_schema(op_type: str, version: int | None, domain: str):
    dom = "" if domain == "ai.onnx" else domain
    try:
        if version is None:
            return defs.get_schema(op_type, dom)
        return defs.get_schema(op_type, version, dom)
    except Exception:  # SchemaError: unknown op / version
        return None


@lru_cache(maxsize=4096)
def since_version(op_type: str, version: int | None, domain: str) -> int | None:
    s = get_schema(op_type, version, domain)
    return s.since_version if s is not None else None


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
    """([(name, type_str, variadic)], same for outputs) or None when onnx has no schema for it."""
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
