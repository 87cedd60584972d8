"""Configuration: `[tool.onnxlint]` in the nearest pyproject.toml or a `.onnxlint.yaml`, searched upward."""

from __future__ import annotations

import fnmatch
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import yaml

from onnxlint.errors import RuleError
from onnxlint.ruleset import KNOWN_TARGETS, SEVERITIES

KEYS = {"select", "ignore", "extend-select", "targets", "severity", "per-file-ignores", "rules", "fail-on",
        "ort-version", "trt-version"}


@dataclass
class Config:
    path: Path | None = None
    select: list[str] | None = None
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    targets: list[str] | None = None
    severity: dict[str, str] = field(default_factory=dict)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    rules: list[Path] = field(default_factory=list)
    fail_on: str | None = None
    ort_version: str | None = None
    trt_version: str | None = None

    def ignored_for(self, filename: str) -> list[str]:
        out = []
        base = self.path.parent if self.path else Path.cwd()
        try:
            rel = Path(filename).resolve().relative_to(base.resolve()).as_posix()
        except ValueError:
            rel = Path(filename).as_posix()
        for pattern, codes in self.per_file_ignores.items():
            if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(Path(filename).name, pattern):
                out.extend(codes)
        return out


def _codes(value, where: str) -> list[str]:
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RuleError(f"{where}: expected a list of rule codes or prefixes")
    return value


def parse(data: dict, path: Path) -> Config:
    if not isinstance(data, dict):
        raise RuleError(f"{path}: [tool.onnxlint] must be a table of settings")
    for k in data:
        if k not in KEYS:
            raise RuleError(f"{path}: unknown onnxlint setting '{k}' (known: {', '.join(sorted(KEYS))})")
    cfg = Config(path=path)
    if "select" in data:
        cfg.select = _codes(data["select"], f"{path}: select")
    cfg.extend_select = _codes(data.get("extend-select", []), f"{path}: extend-select")
    cfg.ignore = _codes(data.get("ignore", []), f"{path}: ignore")
    if "targets" in data:
        cfg.targets = _codes(data["targets"], f"{path}: targets")
        for t in cfg.targets:
            if t not in KNOWN_TARGETS:
                raise RuleError(f"{path}: unknown target '{t}'")
    sev = data.get("severity", {})
    if not isinstance(sev, dict):
        raise RuleError(f"{path}: severity must map rule codes to info, warning or error")
    for code, level in sev.items():
        if level not in SEVERITIES:
            raise RuleError(f"{path}: severity for {code} must be info, warning or error, got {level!r}")
    cfg.severity = dict(sev)
    pfi = data.get("per-file-ignores", {})
    if not isinstance(pfi, dict):
        raise RuleError(f"{path}: per-file-ignores must map glob patterns to rule codes")
    cfg.per_file_ignores = {k: _codes(v, f"{path}: per-file-ignores.{k}") for k, v in pfi.items()}
    rules = data.get("rules", [])
    if isinstance(rules, str):
        rules = [rules]
    cfg.rules = [(path.parent / r) for r in rules]
    if "fail-on" in data:
        if data["fail-on"] not in SEVERITIES:
            raise RuleError(f"{path}: fail-on must be info, warning or error")
        cfg.fail_on = data["fail-on"]
    cfg.ort_version = str(data["ort-version"]) if "ort-version" in data else None
    cfg.trt_version = str(data["trt-version"]) if "trt-version" in data else None
    return cfg


def load_file(path: Path) -> Config:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RuleError(f"{path}: cannot read config: {exc.strerror or exc}") from None
    if path.suffix == ".toml":
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise RuleError(f"{path}: TOML syntax error: {exc}") from None
        data = data.get("tool", {}).get("onnxlint", {})
    else:
        try:
            data = yaml.safe_load(text) or {}
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise RuleError(f"{path}:{mark.line + 1 if mark else 0}: YAML syntax error in config") from None
    return parse(data, path)


@lru_cache(maxsize=256)
def find_for(directory: Path) -> Config:
    """Nearest config at or above directory; an empty Config when there is none."""
    d = directory.resolve()
    for cand in [d, *d.parents]:
        y = cand / ".onnxlint.yaml"
        if y.is_file():
            return load_file(y)
        t = cand / "pyproject.toml"
        if t.is_file():
            try:
                data = tomllib.loads(t.read_text(encoding="utf-8"))
            except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError):
                continue
            if "onnxlint" in data.get("tool", {}):
                return parse(data["tool"]["onnxlint"], t)
    return Config()
