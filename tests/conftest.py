"""Shared helpers: build real ONNX models with onnx.helper and run the CLI in-process."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper as h
from onnx import numpy_helper as nh

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
CORPUS = ROOT.parent / "shared" / "corpus" / "models"  # the real models, weights included, where a checkout has them
CORPUS_GRAPHS = ROOT / "tests" / "corpus"  # their graphs, weights left out, in every clone (tools/gen_test_corpus.py)


def _onnxruntime_dists() -> list[str]:
    from importlib import metadata

    found = []
    for name in ("onnxruntime", "onnxruntime-gpu"):
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            pass
    return found


def pytest_configure(config):
    """The tests run models with ONNX Runtime; the test extra leaves choosing its build to the user."""
    config.addinivalue_line("markers", "once: an end-to-end test of what does not depend on the Python running the "
                            "suite (a fresh venv, a fresh clone, the CUDA rig's own venv), or an attack's run in a mode "
                            "bringing the same code as its one-file run (tests/security); CI runs it in one run only")
    dists = _onnxruntime_dists()
    if not dists:
        raise pytest.UsageError("the tests need ONNX Runtime: pip install '.[test,cpu]' (CPU), or onnxruntime-gpu")
    if len(dists) == 2:  # both wheels write onnxruntime/: the one installed last won, CUDA may be gone
        config.issue_config_time_warning(pytest.PytestConfigWarning(
            f"{' and '.join(dists)} are both installed and share one onnxruntime/ package; for CUDA back: "
            "pip uninstall -y onnxruntime && pip install --force-reinstall onnxruntime-gpu"), stacklevel=2)


# a user rule file (flags every Cast), for tests that edit rule files
CAST_RULE = """\
- id: XTR001
  name: no-cast
  severity: warning
  targets: any
  summary: no Cast
  explanation: a Cast node
  match: {op: Cast}
  message: a Cast here
"""


def make_model(nodes, inputs, outputs, inits=(), opset=17, extra_opsets=(), ir=8, functions=()):
    g = h.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset), *[h.make_opsetid(d, v) for d, v in extra_opsets]],
                     functions=list(functions))
    m.ir_version = ir
    return m


def chain_with_if(n: int) -> onnx.ModelProto:
    """n Relus in a chain, then an If whose branches read the chain's end (its bodies capture an outer value)."""
    nodes = [h.make_node("Relu", [f"v{i}"], [f"v{i + 1}"], name=f"r{i}") for i in range(n)]
    then_g = h.make_graph([h.make_node("Identity", [f"v{n}"], ["t"], name="then_id")], "then", [], [vi("t", onnx.TensorProto.FLOAT, [2])])
    else_g = h.make_graph([h.make_node("Neg", [f"v{n}"], ["e"], name="else_neg")], "else", [], [vi("e", onnx.TensorProto.FLOAT, [2])])
    nodes.append(h.make_node("If", ["c"], ["y"], name="if", then_branch=then_g, else_branch=else_g))
    return make_model(nodes, [vi("v0", onnx.TensorProto.FLOAT, [2]), vi("c", onnx.TensorProto.BOOL, [])],
                      [vi("y", onnx.TensorProto.FLOAT, [2])])


def vi(name, dtype, shape):
    return h.make_tensor_value_info(name, dtype, shape)


def init(name, arr):
    return nh.from_array(np.asarray(arr), name)


@pytest.fixture
def save(tmp_path):
    def _save(model, name="m.onnx"):
        p = tmp_path / name
        onnx.save(model, p)
        return p

    return _save


@pytest.fixture
def cli(capsys):
    from onnxlint.cli import main

    def _run(*args):
        rc = main([str(a) for a in args])
        out = capsys.readouterr()
        return rc, out.out, out.err

    return _run


@pytest.fixture
def lint_json(cli):
    def _run(*args):
        rc, out, err = cli(*args, "--format", "json")
        return rc, json.loads(out)

    return _run


@pytest.fixture(scope="session")
def examples_dir(tmp_path_factory):
    import make_examples

    d = tmp_path_factory.mktemp("examples")
    make_examples.main(str(d))
    return d


@pytest.fixture(autouse=True)
def _own_result_cache(tmp_path_factory, monkeypatch):
    """Each test gets its own result cache folder: an in-process CLI run must never answer from an entry an
    earlier test (or a developer's run in the checkout) left behind."""
    # a folder that does not exist yet: onnxlint makes and tags it (an existing folder that is not a cache is never used)
    monkeypatch.setenv("ONNXLINT_CACHE_DIR", str(tmp_path_factory.mktemp("onnxlint-cache") / "cache"))
    # outside a git work tree the default cache is in the user's cache home: never the developer's own
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache-home")))


def _shard(value: str) -> tuple[int, int]:
    """ONNXLINT_SHARD's "K/N" (1 <= K <= N) as (K - 1, N); a usage error, not a silent full run, when it is not."""
    k, sep, n = value.partition("/")
    if sep and k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n):
        return int(k) - 1, int(n)
    raise pytest.UsageError(f"ONNXLINT_SHARD={value!r}: expected K/N with 1 <= K <= N, e.g. 1/2")


def pytest_collection_modifyitems(config, items):
    """ONNXLINT_SHARD=K/N keeps the K-th of N shards (N shards together run each test once), so .ci/run can split
    one run over two Pythons and keep both cores busy to its end. ONNXLINT_SKIP_ONCE=1 (what .ci/run sets for all
    but one of its runs on several Pythons) skips the tests marked `once`: each builds its own environment, so
    running it on every Python tests the same thing again."""
    import os

    if os.environ.get("ONNXLINT_SHARD"):
        import zlib

        k, n = _shard(os.environ["ONNXLINT_SHARD"])
        # round robin within each file, from a place its path hashes to: a file's slow tests spread over the
        # shards, and a test one Python collects and another does not (skipped at import) moves only the tests
        # after it in its own file, not every test after it in the run
        mine, seen = [], {}
        for it in items:
            path = it.nodeid.partition("::")[0]
            at = seen[path] = seen.get(path, zlib.crc32(path.encode()) - 1) + 1
            mine.append(at % n == k)
        config.hook.pytest_deselected(items=[it for it, keep in zip(items, mine) if not keep])
        items[:] = [it for it, keep in zip(items, mine) if keep]
    if os.environ.get("ONNXLINT_SKIP_ONCE") != "1":
        return
    skip = pytest.mark.skip(reason="marked once: run in another of this CI's runs (ONNXLINT_SKIP_ONCE=1)")
    for item in items:
        if item.get_closest_marker("once"):
            item.add_marker(skip)


class LintSpy:
    """Counts the models the linter is asked to lint (a cache hit asks for none)."""

    def __init__(self, monkeypatch):
        from onnxlint.linting import linter

        self.linted: list[str] = []
        real = linter.lint_file

        def lint_file(path, settings, *a, **k):
            self.linted.append(Path(path).name)
            return real(path, settings, *a, **k)

        monkeypatch.setattr(linter, "lint_file", lint_file)


@pytest.fixture
def spy(monkeypatch, tmp_path):
    """A LintSpy, run from tmp_path with no cache folder set in the environment: the cache is `.onnxlint_cache` in
    tmp_path, as in a work tree (where there is no home to put it in, the cache stays there: _user_cache_home)."""
    from onnxlint import cache
    from onnxlint.cache import folder

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(cache.ENV_DIR, raising=False)
    monkeypatch.setattr(folder, "_user_cache_home", lambda: None)
    monkeypatch.setattr(folder, "_DEFAULT", {})
    return LintSpy(monkeypatch)
