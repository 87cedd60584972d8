"""TensorRT's support tables: which exist, reading one, and which one a requested version resolves to.

Two kinds live in onnxlint/data/tensorrt/:

* parser-verified (`trt-<version>.json`, `"verified": "parser"`): measured by tools/gen_trt_support.py, which
  probes the real parser (TensorRT 8.4/8.5/8.6; TensorRT-RTX 1.4 for the 10.x line) with single-node models
  per op x op version x dtype per formal type parameter x constant-or-graph-input per input x attributes.
  Per op: whether it has an importer, the op versions it rejects, accepted/rejected dtypes per type parameter,
  inputs that must be initializers (or Constant outputs), attribute values it rejects, the number of outputs
  it accepts; and the measured behaviour (tools/gen_trt_behaviour.py) under `behaviour` and `ort_ops`.
* docs-only (`docs/trt-<version>.json`, `"verified": "docs"`): onnx-tensorrt's docs/operators.md matrix
  (tools/gen_trt_tables.py), for versions whose parser cannot run here (10.0, 10.1). Their restriction texts
  are also carried into the verified tables as detail.

No onnx import: a cached run's summary names the table a version resolves to through this module.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from packaging.version import Version

from onnxlint.support import resources
from onnxlint.tensorrt import versions

Table = dict[str, Any]  # a support table as its JSON file holds it


def _base() -> Path:
    return resources.data_dir() / "tensorrt"


def _label(path: Path) -> str:
    return path.name[len("trt-"):-len(".json")]


@lru_cache(maxsize=None)
def _paths() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for p in sorted((_base() / "docs").glob("trt-*.json")):
        found[_label(p)] = p
    for p in sorted(_base().glob("trt-*.json")):  # parser-verified tables win over docs ones
        found[_label(p)] = p
    return found


@lru_cache(maxsize=None)
def available() -> list[str]:
    """Every version with a table, oldest first (parser-verified and docs-only)."""
    return sorted(_paths(), key=versions.sort_key)


def verified_versions() -> list[str]:
    return [v for v in available() if load(v).get("verified") == "parser"]


def docs_only_versions() -> list[str]:
    return [v for v in available() if load(v).get("verified") != "parser"]


@lru_cache(maxsize=None)
def load(version: str) -> Table:
    table: Table = json.loads(_paths()[version].read_text())
    table.setdefault("verified", "docs")
    return table


@lru_cache(maxsize=None)
def docs_table(version: str) -> Table | None:
    p = _base() / "docs" / f"trt-{version}.json"
    table: Table | None = json.loads(p.read_text()) if p.exists() else None
    return table


@lru_cache(maxsize=None)
def default_version() -> str:
    """The newest parser-verified table (a parser-verified table is one beside docs/, not in it: a test checks each
    says so), from the file names alone."""
    verified = [_label(p) for p in _base().glob("trt-*.json")]
    return max(verified, key=versions.sort_key) if verified else available()[-1]


def resolve(version: str | None) -> tuple[str, str | None]:
    """(table label, note or None) for a requested TensorRT version."""
    if version is None:  # the default from the file names alone: a cached run's summary sorts no other label
        return default_version(), None
    vs = available()
    version = str(version)
    if version in vs:
        return version, None
    want = versions.requested(version)
    same = versions.equal_label(vs, want) if want is not None else None
    if same is not None:
        return same, None
    best = default_version() if want is None else _closest(vs, want)
    kind = "parser-verified" if load(best).get("verified") == "parser" else "docs-only"
    return best, f"TensorRT {version} has no table of its own; using {versions.describe(best)} ({kind})"


def _closest(vs: list[str], want: Version) -> str:
    """The table answering for a version without a table of its own: for an RTX release, the newest RTX table not
    newer than it; the newest TensorRT-RTX one where it stands in; else the nearest numbered one."""
    rtx = [v for v in vs if versions.is_rtx(v)]
    numbered = [v for v in vs if not versions.is_rtx(v)]
    if rtx and versions.asks_for_rtx(want):
        return versions.nearest_rtx(rtx, str(want))
    if rtx and versions.stands_in_for(want, numbered):
        return rtx[-1]
    return versions.nearest(numbered, want)
