"""The result cache: a hit is the same report, anything that can change the report misses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import CAST_RULE, ROOT, init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h

from onnxlint import cache
from onnxlint.config.settings import Settings
from onnxlint.formats import render
from onnxlint.linting import linter
from onnxlint.linting.report import Report


def _model(extra_dropout: bool = True) -> onnx.ModelProto:
    nodes = [h.make_node("Equal", ["x", "k"], ["e"], name="eq"), h.make_node("Cast", ["e"], ["y"], name="cast", to=T.FLOAT)]
    if extra_dropout:
        nodes.insert(0, h.make_node("Dropout", ["x"], ["d"], name="drop"))
    return make_model(nodes, [vi("x", T.FLOAT, [4]), vi("k", T.INT32, [4])], [vi("y", T.FLOAT, [4])])


def _external_model(folder: Path, name: str = "ext.onnx", location: str = "ext.data") -> Path:
    """A MatMul whose 64x64 weight lives in folder/location (external data)."""
    m = make_model([h.make_node("MatMul", ["x", "w"], ["y"], name="mm")], [vi("x", T.FLOAT, [1, 64])],
                   [vi("y", T.FLOAT, [1, 64])], [init("w", np.ones((64, 64), np.float32))])
    p = folder / name
    onnx.save(m, p, save_as_external_data=True, all_tensors_to_one_file=True, location=location, size_threshold=0)
    return p


@pytest.fixture
def cdir(tmp_path):
    return tmp_path / "cache"


def _json(reports) -> str:
    return render("json", Report(files=list(reports)))


def _lint(path: Path, settings: Settings):
    return linter.lint_file(path, settings, digest=True)


def _run(files, settings, cdir, calls=None):
    def lint_misses(fs):
        if calls is not None:
            calls.extend(fs)
        return [_lint(f, settings) for f in fs]

    return cache.lint_with_cache(files, lambda p: settings, lint_misses, cdir)


def test_hit_gives_identical_json(tmp_path, cdir):
    p = tmp_path / "m.onnx"
    onnx.save(_model(), p)
    s = Settings.from_config(None)
    calls: list = []
    first = _run([p], s, cdir, calls)
    assert calls == [p]
    calls.clear()
    second = _run([p], s, cdir, calls)
    assert calls == []  # not linted again
    assert first[0].findings and _json(first) == _json(second)
    assert first[0].placement == second[0].placement and first[0].notes == second[0].notes
    assert (cdir / ".gitignore").read_text().strip().endswith("*") and (cdir / "CACHEDIR.TAG").exists()


def test_changed_byte_misses(tmp_path, cdir):
    p = tmp_path / "m.onnx"
    onnx.save(_model(), p)
    s = Settings.from_config(None)
    _run([p], s, cdir)
    assert cache.lookup(p, s, cdir) is not None
    data = bytearray(p.read_bytes())
    i = data.index(b"\x1a\x02eq")  # NodeProto.name = "eq"
    data[i + 2:i + 4] = b"ex"  # same size, one node renamed
    p.write_bytes(bytes(data))
    assert cache.lookup(p, s, cdir) is None
    calls: list = []
    res = _run([p], s, cdir, calls)
    assert calls == [p] and any(f.node == "ex" for f in res[0].findings)


def test_changed_setting_misses(tmp_path, cdir):
    p = tmp_path / "m.onnx"
    onnx.save(_model(), p)
    s = Settings.from_config(None)
    _run([p], s, cdir)
    assert cache.lookup(p, s, cdir) is not None
    for other in (Settings.from_config(None, ignore=["OLX0"]), Settings.from_config(None, targets=["tensorrt"]),
                  Settings.from_config(None, fail_on="error"), Settings.from_config(None, select=["OLX015"])):
        assert cache.lookup(p, other, cdir) is None
    assert cache.lookup(p, Settings.from_config(None), cdir) is not None  # an equal Settings object hits


def test_changed_config_file_misses(tmp_path, cdir):
    p = tmp_path / "m.onnx"
    onnx.save(_model(), p)
    cfg = tmp_path / "pyproject.toml"
    cfg.write_text("[tool.onnxlint]\nignore = []\n")
    s = Settings.from_config(cfg)
    _run([p], s, cdir)
    assert cache.lookup(p, Settings.from_config(cfg), cdir) is not None
    cfg.write_text("[tool.onnxlint]\nignore = []\n# a comment changes the bytes\n")
    assert cache.lookup(p, Settings.from_config(cfg), cdir) is None


def test_changed_rule_file_misses(tmp_path, cdir):
    p = tmp_path / "m.onnx"
    onnx.save(_model(), p)
    rules = tmp_path / "rules"
    rules.mkdir()
    rule = CAST_RULE
    (rules / "mine.yaml").write_text(rule)
    s = Settings.from_config(None, rule_dirs=[rules])
    res = _run([p], s, cdir)
    assert any(f.code == "XTR001" for f in res[0].findings)
    assert cache.lookup(p, Settings.from_config(None, rule_dirs=[rules]), cdir) is not None
    (rules / "mine.yaml").write_text(rule.replace("message: a Cast here", "message: a Cast node"))
    assert cache.lookup(p, Settings.from_config(None, rule_dirs=[rules]), cdir) is None
    (rules / "mine.yaml").write_text(rule)
    assert cache.lookup(p, Settings.from_config(None, rule_dirs=[rules]), cdir) is not None
    (rules / "more.yml").write_text("[]\n")  # a new rule file
    assert cache.lookup(p, Settings.from_config(None, rule_dirs=[rules]), cdir) is None


def test_external_data_changed_by_size_or_mtime_misses(tmp_path, cdir):
    p = _external_model(tmp_path)
    data = tmp_path / "ext.data"
    s = Settings.from_config(None)
    _run([p], s, cdir)
    assert cache.lookup(p, s, cdir) is not None
    st = os.stat(data)
    os.utime(data, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # touched: mtime differs
    assert cache.lookup(p, s, cdir) is None
    _run([p], s, cdir)
    assert cache.lookup(p, s, cdir) is not None
    with open(data, "ab") as fh:  # grown
        fh.write(b"\0" * 16)
    os.utime(data, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert cache.lookup(p, s, cdir) is None
    _run([p], s, cdir)
    data.unlink()  # gone
    assert cache.lookup(p, s, cdir) is None


def test_external_data_is_never_read(tmp_path, cdir, monkeypatch):
    p = _external_model(tmp_path)
    s = Settings.from_config(None)
    report = _lint(p, s)
    opened: list = []
    real_open = open

    def spy(file, *a, **k):
        opened.append(os.fspath(file))
        return real_open(file, *a, **k)

    monkeypatch.setattr("builtins.open", spy)
    assert cache.store(p, s, report, cdir)
    assert cache.lookup(p, s, cdir) is not None
    assert not any(f.endswith("ext.data") for f in opened)


def test_corrupt_entry_is_ignored_and_rewritten(tmp_path, cdir):
    p = tmp_path / "m.onnx"
    onnx.save(_model(), p)
    s = Settings.from_config(None)
    first = _run([p], s, cdir)
    entry = next((cdir / f"v{cache.FORMAT}").rglob("*.json"))
    good = entry.read_bytes()
    for bad in (good[: len(good) // 2], b"", b"\xff\xfe not json", b"[]", json.dumps({"key": "other"}).encode(),
                good.replace(b'"findings":[', b'"findings":[{"nonsense":1},')):
        entry.write_bytes(bad)
        assert cache.lookup(p, s, cdir) is None
    calls: list = []
    again = _run([p], s, cdir, calls)
    assert calls == [p] and _json(again) == _json(first)
    assert cache.lookup(p, s, cdir) is not None


def test_error_reports_are_not_stored(tmp_path, cdir):
    p = tmp_path / "bad.onnx"
    p.write_bytes(b"\x08\x07 not a model at all \xff\xff")
    s = Settings.from_config(None)
    res = _run([p], s, cdir)
    assert res[0].error
    assert cache.lookup(p, s, cdir) is None


def test_unwritable_cache_dir_still_lints(tmp_path):
    p = tmp_path / "m.onnx"
    onnx.save(_model(), p)
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    res = _run([p], Settings.from_config(None), blocker / "cache")
    assert res[0].findings


def test_clean_removes_only_an_onnxlint_cache(tmp_path, cdir):
    p = tmp_path / "m.onnx"
    onnx.save(_model(), p)
    _run([p], Settings.from_config(None), cdir)
    other = tmp_path / "precious"
    other.mkdir()
    (other / "data.txt").write_text("keep")
    assert not cache.clean(other) and (other / "data.txt").exists()
    assert cache.clean(cdir) and not cdir.exists()
    assert not cache.clean(cdir)  # already gone


def test_a_run_writing_while_another_cleans_leaves_no_untagged_folder(tmp_path, cdir, monkeypatch):
    """`onnxlint clean` beside a running lint: the lint wrote an entry after clean had scanned the folder, the
    folder could not be removed and stayed untagged (or a writer made it again, untagged, with mkdir -p), and
    every later run took it for a folder that is not onnxlint's cache: uncached for good, and `onnxlint clean`
    refused it ("not an onnxlint cache folder; not removed"). Clean takes what a run wrote meanwhile in another
    pass, and a run never makes the cache folder itself again."""
    from onnxlint.cache import folder

    p = tmp_path / "m.onnx"
    onnx.save(_model(), p)
    _run([p], Settings.from_config(None), cdir)
    entry = next(cdir.glob("v*/*/*.json"))
    real_unlink, written = folder._unlink, []

    def unlink(path, left):  # a run stores an entry as the tag goes
        done = real_unlink(path, left)
        if path.endswith("CACHEDIR.TAG") and not written:
            written.append(entry.parent / ("0" * 64 + ".json"))
            entry.parent.mkdir(parents=True, exist_ok=True)
            written[0].write_text("{}")
        return done

    monkeypatch.setattr(folder, "_unlink", unlink)
    kept: list[str] = []
    assert cache.clean(cdir, kept) and kept == [] and not cdir.exists(), kept
    # the run that claimed the folder before it was removed stores its next entry nowhere, not in a new untagged one
    monkeypatch.setitem(folder._OWNED, os.path.abspath(cdir), True)  # as that process knows it
    assert not folder.write_entry(cdir, entry, b"{}") and not cdir.exists()
    monkeypatch.delitem(folder._OWNED, os.path.abspath(cdir))
    _run([p], Settings.from_config(None), cdir)  # a new run makes it again, tagged
    assert folder.is_cache(cdir) and list(cdir.glob("v*/*/*.json"))


_WRITER = r"""
import sys
from pathlib import Path
from onnxlint import cache
from onnxlint.linting import linter
from onnxlint.config.settings import Settings
p, d, n = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
s = Settings.from_config(None)
rep = linter.lint_file(p, s, digest=True)
for _ in range(n):
    assert cache.store(p, s, rep, d)
    got = cache.lookup(p, s, d)
    assert got is not None and len(got.findings) == len(rep.findings), "torn entry read"
print("ok")
"""


def test_concurrent_writers_do_not_corrupt(tmp_path, cdir, monkeypatch):
    p = tmp_path / "m.onnx"
    onnx.save(_model(), p)
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(p), str(cdir), "150"], cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0 and out.strip() == "ok", err[-2000:]
    s = Settings.from_config(None)
    monkeypatch.chdir(tmp_path)  # the key includes the working directory, as in the writers
    monkeypatch.setattr(cache.keys, "_PACKAGE_STAMP", None)  # as fresh as the writers' (a checkout being edited)
    assert cache.lookup(p, s, cdir) is not None
    leftovers = [f for f in cdir.rglob("*") if f.name.endswith(".tmp")]
    assert leftovers == []


_HIT_IMPORTS = r"""
import sys
from pathlib import Path
from onnxlint.config.settings import Settings
from onnxlint.linting import report
before = set(sys.modules)
from onnxlint import cache
s = Settings.from_config(None)
res = cache.lint_with_cache([Path(sys.argv[1])], lambda p: s, lambda fs: 1 / 0, sys.argv[2])
assert res[0] is not None and res[0].findings
new = sorted(m for m in set(sys.modules) - before if m.split(".")[0] in ("onnx", "yaml", "numpy", "google"))
print(new)
"""


def test_hit_path_imports_neither_onnx_nor_yaml(tmp_path, cdir, monkeypatch):
    p = tmp_path / "m.onnx"
    onnx.save(_model(), p)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cache.keys, "_PACKAGE_STAMP", None)  # as fresh as the child's (a checkout being edited)
    _run([p], Settings.from_config(None), cdir)
    proc = subprocess.run([sys.executable, "-c", _HIT_IMPORTS, str(p), str(cdir)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[]"
    assert "onnx" not in proc.stdout


def test_package_files_are_in_the_key():
    stamp = cache.keys.package_stamp()
    assert len(stamp) == 64
    files = cache.keys.walk_files(Path(cache.__file__).resolve().parent.parent)
    assert any(f.endswith(os.path.join("data", "kernels", "ort-cuda.json.gz")) for f in files)
    assert any(f.endswith("graph.py") for f in files)
    assert ROOT.exists()


def test_ruleset_copy_is_the_same_rules_and_follows_rule_files(tmp_path, cdir):
    from onnxlint.rulefiles.ruleset import load_ruleset

    calls: list = []

    def load(dirs):
        calls.append(dirs)
        return load_ruleset(list(dirs))

    first = cache.cached_ruleset((), load, cdir)  # the built-in rules: their bundled parsed copy, stored too
    second = cache.cached_ruleset((), load, cdir)
    assert calls == [] and cache.rule_index((), cdir) is not None
    assert [vars(r) for r in first.rules] == [vars(r) for r in load_ruleset().rules]
    assert [vars(r) for r in first.rules] == [vars(r) for r in second.rules]
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "x.yaml").write_text(CAST_RULE)
    mine = cache.cached_ruleset((rules,), load, cdir)
    assert len(calls) == 1
    again = cache.cached_ruleset((rules,), load, cdir)  # the stored copy, validated again
    assert len(calls) == 1 and [vars(r) for r in again.rules] == [vars(r) for r in mine.rules]
    (rules / "x.yaml").write_text(CAST_RULE + "# changed\n")
    cache.cached_ruleset((rules,), load, cdir)
    assert len(calls) == 2


def test_a_run_of_several_models_is_read_back_from_one_entry(tmp_path, cdir, monkeypatch):
    """A second run over an unchanged folder opens one run entry, not one entry per model; a changed model
    lints again alone (the others come from their own entries) and the run is stored anew."""
    paths = []
    for k in range(3):
        p = tmp_path / f"m{k}.onnx"
        onnx.save(_model(extra_dropout=k != 1), p)
        paths.append(p)
    s = Settings.from_config(None)
    first = _run(paths, s, cdir)
    opened: list[str] = []
    real_open = open

    def spy(file, *a, **k):
        opened.append(os.fspath(file))
        return real_open(file, *a, **k)

    monkeypatch.setattr("builtins.open", spy)
    from onnxlint.support import reading

    real_read = reading.read_with_stat

    def read_spy(path, *a, **k):  # the read guard (cache entries go through it) opens with os.open
        opened.append(os.fspath(path))
        return real_read(path, *a, **k)

    monkeypatch.setattr(reading, "read_with_stat", read_spy)
    calls: list = []
    second = _run(paths, s, cdir, calls)
    entries = [f for f in opened if f.startswith(str(cdir))]
    assert calls == [] and _json(second) == _json(first)
    assert len(entries) == 1 and os.sep + "runs" + os.sep in entries[0]
    clean = make_model([h.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", T.FLOAT, [4])], [vi("y", T.FLOAT, [4])])
    onnx.save(clean, paths[0])  # one model changes
    opened.clear()
    third = _run(paths, s, cdir, calls)
    assert calls == [paths[0]]
    assert _json(third[1:]) == _json(first[1:])
    assert {f.code for f in first[0].findings} >= {"OLX007", "OLX015"} and "OLX015" not in {f.code for f in third[0].findings}
    calls.clear()
    opened.clear()
    assert _json(_run(paths, s, cdir, calls)) == _json(third) and calls == []
    assert len([f for f in opened if f.startswith(str(cdir))]) == 1


def test_a_run_entry_checks_each_models_external_data(tmp_path, cdir):
    p = _external_model(tmp_path)
    q = tmp_path / "plain.onnx"
    onnx.save(_model(), q)
    s = Settings.from_config(None)
    _run([p, q], s, cdir)
    calls: list = []
    _run([p, q], s, cdir, calls)
    assert calls == []
    data = tmp_path / "ext.data"
    st = os.stat(data)
    os.utime(data, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    _run([p, q], s, cdir, calls)
    assert calls == [p]  # the run entry is stale; the plain model still comes from its own entry


@pytest.mark.parametrize("size", [0, 1, 4096, (1 << 20) - 1, 1 << 20, (1 << 20) * 2 + 5])
def test_the_key_hashes_every_byte_of_small_and_large_files(tmp_path, size):
    """Small models are read whole, large ones in chunks: either way the digest is of the whole file, and a
    `location` string is seen wherever it lies (across a chunk boundary too)."""
    from hashlib import blake2b

    data = bytearray(os.urandom(size))
    if size >= 16:
        at = min(size - 8, (1 << 20) - 4)
        data[at:at + 8] = b"location"
    p = tmp_path / "m.onnx"
    p.write_bytes(bytes(data))
    digest, seen = cache.keys.scan(p)
    assert digest == blake2b(bytes(data), digest_size=32).hexdigest()
    assert seen == (b"location" in data)


def test_a_run_entry_keeps_the_stamps_its_models_were_checked_with(tmp_path, cdir):
    """A hit's external data checked, then changed while the other models are linted: the run entry must carry
    the stamp that was checked (and so miss next time), not one taken after the change."""
    a = _external_model(tmp_path, "a.onnx", "a.bin")
    b = tmp_path / "b.onnx"
    onnx.save(_model(), b)
    s = Settings.from_config(None)
    _run([a, b], s, cdir)
    onnx.save(_model(extra_dropout=False), b)  # b misses next run, a hits

    def lint_misses(fs):
        (tmp_path / "a.bin").unlink()  # a's data goes while b is being linted
        return [_lint(f, s) for f in fs]

    cache.lint_with_cache([a, b], lambda p: s, lint_misses, cdir)
    calls: list = []
    again = _run([a, b], s, cdir, calls)
    assert calls == [a] and any(f.code == "OLX003" for f in again[0].findings)


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links")
def test_external_data_reached_through_a_link_that_now_leads_elsewhere_misses(tmp_path, cdir):
    """The data file's own size and mtime are unchanged when the link the model names is pointed at another
    file: the entry records where the named location led, and a link that leads elsewhere is a miss."""
    p = _external_model(tmp_path, location="w.data")
    (tmp_path / "w.data").rename(tmp_path / "good.data")
    (tmp_path / "short.data").write_bytes((tmp_path / "good.data").read_bytes()[:8])
    os.symlink("good.data", tmp_path / "w.data")
    s = Settings.from_config(None)
    calls: list = []
    _run([p], s, cdir, calls)
    _run([p], s, cdir, calls)
    assert calls == [p]
    os.unlink(tmp_path / "w.data")
    os.symlink("short.data", tmp_path / "w.data")
    again = _run([p], s, cdir, calls)
    assert calls == [p, p] and any(f.code == "OLX003" for f in again[0].findings)
