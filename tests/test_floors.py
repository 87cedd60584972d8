"""The dependency floors CI tests (.ci/floors.txt, installed with `pip -c`) are the ones the pyproject declares:
a floor raised or lowered in one place and not the other would make the "oldest supported" run test something
the pyproject does not promise."""

from __future__ import annotations

import sys
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def _floors() -> dict[str, Version]:
    out = {}
    for line in (ROOT / ".ci" / "floors.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            req = Requirement(line)
            (spec,) = req.specifier
            assert spec.operator == "==", line
            out[canonicalize_name(req.name)] = Version(spec.version)
    return out


def _declared() -> dict[str, Version | None]:
    """Each runtime and test dependency: its declared floor (>=), None when it has none."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    out = {}
    for line in project["dependencies"] + project["optional-dependencies"]["test"]:
        req = Requirement(line)
        lows = [Version(s.version) for s in req.specifier if s.operator == ">="]
        out[canonicalize_name(req.name)] = max(lows) if lows else None
    return out


def test_every_declared_dependency_has_a_floor_and_ci_pins_it():
    declared, floors = _declared(), _floors()
    assert {name for name, low in declared.items() if low is None} == set(), "a dependency without a floor"
    assert declared == floors
