"""ONNX Runtime's schema registry: the op schemas a node resolves against, onnx's and those ORT registers itself
(core/graph/schema_registry.cc: SchemaRegistryManager looks in ORT's own registries, then in onnx's).

ORT's own (core/graph/contrib_ops/*_defs.cc, onnx_deprecated_operators.cc) are the ops ORT defines that onnx has
no schema for: its contrib domains (com.microsoft: Attention, SkipLayerNormalization, MatMulNBits, ...) and a few
ops in the ONNX domain itself (SimplifiedLayerNormalization at version 1 with no upper bound, so any opset
resolves to it; LayerNormalization-1 before onnx's 17; MeanVarianceNormalization-1 and ThresholdedRelu-1 before
onnx's; Scale, Crop, Affine, ... at 1 and deprecated at 10). A node of such an op takes that schema's
since-version, which picks its kernel: without it an ORT-written GenAI model's SimplifiedLayerNormalization looked
like an op no provider runs.

ORT's own schemas are read from each release's binary (``tools/gen_ort_schemas.py``: ``get_all_operator_schema``
of the wheel, the schemas whose source file is ORT's), packed into ``onnxlint/data/kernels/ort-schemas.json.gz``:
one row per schema with a bit mask of the releases that register it exactly so. The cached look-ups at the end
(formal parameters, defaults, since-versions) answer for onnx's and ORT's schemas together.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import onnx
from onnx import defs, helper

from onnxlint.model.graph import ORT_DOMAINS, STANDARD_DOMAINS
from onnxlint.ort.releases import version_key
from onnxlint.support import resources

PACKED_FORMAT = 1
Param = tuple[str, str, str]  # formal parameter: name, type string, option (single | optional | variadic)
Formal = tuple[str, str, bool]  # formal parameter as the look-ups give it: name, type string, variadic


@dataclass(frozen=True)
class OrtSchema:
    """One schema version ORT registers: what resolving a node against it gives."""

    domain: str
    name: str
    since_version: int
    deprecated: bool  # ORT registers it only to refuse it: "Op registered for X is deprecated in domain_version of N"
    inputs: tuple[Param, ...]
    outputs: tuple[Param, ...]
    source: str  # the ORT source file that registers it, e.g. core/graph/contrib_ops/contrib_defs.cc


@lru_cache(maxsize=1)
def _packed() -> dict[str, Any] | None:
    path = resources.data_dir() / "kernels" / "ort-schemas.json.gz"
    if not path.exists():
        return None
    data: dict[str, Any] = json.loads(zlib.decompress(path.read_bytes(), wbits=31))
    if data.get("format") != PACKED_FORMAT:
        raise ValueError(f"{path}: unknown ORT schema table format {data.get('format')!r}")
    return data


def releases() -> list[str]:
    """Releases whose schemas were read, oldest first."""
    data = _packed()
    return list(data["releases"]) if data else []


@lru_cache(maxsize=1)
def _by_op() -> dict[tuple[str, str], list[tuple[OrtSchema, int]]]:
    """(domain, op) -> [(schema, release mask)], newest since-version first."""
    data = _packed()
    out: dict[tuple[str, str], list[tuple[OrtSchema, int]]] = {}
    for dom, name, since, deprecated, ins, outs, source, mask in (data["schemas"] if data else ()):
        s = OrtSchema(dom, name, since, deprecated, tuple(tuple(p) for p in ins),
                      tuple(tuple(p) for p in outs), source)
        out.setdefault((dom, name), []).append((s, mask))
    for rows in out.values():
        rows.sort(key=lambda r: -r[0].since_version)
    return out


def _release_bit(release: str | None, rows: list[tuple[OrtSchema, int]]) -> int:
    """The bit of `release`'s schemas; None, or a release not read: the newest read release that registers the op
    (at or before `release` when there is one)."""
    names = releases()
    if release in names:
        return 1 << names.index(release)
    have = [i for i, v in enumerate(names) if any(mask >> i & 1 for _, mask in rows)]
    if release is not None:
        older = [i for i in have if version_key(names[i]) <= version_key(release)]
        have = older or have
    return 1 << have[-1] if have else 0


@lru_cache(maxsize=4096)
def schema(op_type: str, opset: int | None, domain: str, release: str | None = None) -> OrtSchema | None:
    """ORT's own schema a node of this op resolves to at this opset (the newest since-version <= opset; None:
    the newest), as `release` registers it (None: the newest release that registers the op); None when ORT
    registers no schema of its own for it."""
    rows = _by_op().get((domain, op_type))
    if not rows:
        return None
    bit = _release_bit(release, rows)
    for s, mask in rows:
        if mask & bit and (opset is None or s.since_version <= opset):
            return s
    return None


@lru_cache(maxsize=1)
def domains() -> frozenset[str]:
    """The non-ONNX domains ORT registers schemas in (its contrib domains)."""
    return frozenset(d for d, _ in _by_op() if not d.startswith("ai.onnx"))


def registers(op_type: str, domain: str) -> bool:
    """Whether any release read registers a schema of its own for this op."""
    return (domain, op_type) in _by_op()


# ------------------------------------------------------------ look-ups in onnx's and ORT's schemas together


@lru_cache(maxsize=4096)
def get_schema(op_type: str, version: int | None, domain: str) -> Any:
    """onnx's schema of the op at that opset (an onnx.defs.OpSchema, whose stubs lack half its API), or None."""
    dom = "" if domain == "ai.onnx" else domain
    try:
        if version is None:
            return defs.get_schema(op_type, dom)
        return defs.get_schema(op_type, version, dom)
    except Exception:  # SchemaError: unknown op / version
        return None


def _ort_own(op_type: str, version: int | None, domain: str) -> OrtSchema | None:
    """ORT's own schema when it is the one the node resolves to: the newest since-version <= the opset among
    onnx's and ORT's schemas of the op is ORT's (ORT's schema registry holds both)."""
    ort = schema(op_type, version, domain)
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
        return domain in ORT_DOMAINS or domain in domains()
    return _ort_own(op_type, version, domain) is not None and not op_type.endswith("_TRT")


@lru_cache(maxsize=4096)
def attribute_default(op_type: str, version: int | None, domain: str, name: str) -> Any:
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
def formal_params(op_type: str, version: int | None, domain: str) -> tuple[list[Formal], list[Formal]] | None:
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
