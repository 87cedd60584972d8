"""The op schemas ONNX Runtime registers itself (core/graph/contrib_ops/*_defs.cc, onnx_deprecated_operators.cc):
the ops ORT defines that onnx has no schema for.

ORT adds them to the schema registry it resolves every node against, next to onnx's own: its contrib domains
(com.microsoft: Attention, SkipLayerNormalization, MatMulNBits, ...) and a few ops in the ONNX domain itself
(SimplifiedLayerNormalization at version 1 with no upper bound, so any opset resolves to it; LayerNormalization-1
before onnx's 17; MeanVarianceNormalization-1 and ThresholdedRelu-1 before onnx's; Scale, Crop, Affine, ... at 1
and deprecated at 10). A node of such an op takes that schema's since-version, which picks its kernel: without it
an ORT-written GenAI model's SimplifiedLayerNormalization looked like an op no provider runs.

Read from each release's binary (``tools/gen_ort_schemas.py``: ``get_all_operator_schema`` of the wheel, the
schemas whose source file is ORT's), packed into ``onnxlint/data/kernels/ort-schemas.json.gz``: one row per
schema with a bit mask of the releases that register it exactly so.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from onnxlint import resources
from onnxlint.ort.releases import version_key

PACKED_FORMAT = 1
Param = tuple[str, str, str]  # formal parameter: name, type string, option (single | optional | variadic)


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
