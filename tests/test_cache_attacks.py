"""Attacks on the result cache: it can only ever be a cache. It never marks, fills or deletes a folder that is not
its own, a report is stored only under the key of the bytes it is about, every rule file the loader reads is in
the key, and an entry is data: checked, rendered like a fresh result, and a bad one is a miss."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import onnx
import pytest
from conftest import CAST_RULE, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h

from onnxlint import cache
from onnxlint.config.settings import Settings
from onnxlint.linting import linter
from onnxlint.rulefiles import ruleset

ROOT = Path(__file__).resolve().parent.parent


def _model(node_name: str = "eq") -> onnx.ModelProto:
    """Equal on float vs int32 (OLX015, an error) and a Cast."""
    nodes = [h.make_node("Equal", ["x", "k"], ["e"], name=node_name),
             h.make_node("Cast", ["e"], ["y"], name="cast", to=T.FLOAT)]
    return make_model(nodes, [vi("x", T.FLOAT, [4]), vi("k", T.INT32, [4])], [vi("y", T.FLOAT, [4])])


def _clean_model() -> onnx.ModelProto:
    return make_model([h.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", T.FLOAT, [4])], [vi("y", T.FLOAT, [4])])


def _project(tmp_path: Path) -> tuple[Path, list[Path]]:
    """A folder with a model, a .git folder and a file: what `--cache-dir .` would point at."""
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    (proj / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (proj / "README.md").write_text("hello\n")
    onnx.save(_model(), proj / "m.onnx")
    return proj, sorted(proj.rglob("*"))


# ----------------------------------------------------------------------------- the folder


@pytest.mark.parametrize("how", ["option", "environment", "empty-folder", "home"])
def test_an_existing_folder_is_never_marked_filled_or_cleaned(cli, spy, tmp_path, monkeypatch, how):
    proj, before = _project(tmp_path)
    target = proj
    if how == "empty-folder":
        target = tmp_path / "made-by-someone"
        target.mkdir()
    if how == "home":
        monkeypatch.setenv("HOME", str(proj))
        target = proj
    monkeypatch.chdir(proj)
    args = ["m.onnx"] + (["--cache-dir", str(target)] if how == "option" else [])
    if how != "option":
        monkeypatch.setenv(cache.ENV_DIR, str(target))
    first = cli(*args)
    assert cli(*args) == first and first[0] == 1
    assert spy.linted == ["m.onnx", "m.onnx"]  # uncached: the folder is not onnxlint's
    assert sorted(proj.rglob("*")) == before and list(target.iterdir()) == ([] if how == "empty-folder" else list(target.iterdir()))
    assert not (target / "CACHEDIR.TAG").exists() and not (target / ".gitignore").exists()
    rc, out, err = cli("clean", "--cache-dir", target)
    assert rc == 2 and "not an onnxlint cache folder" in err and "Traceback" not in err
    assert sorted(proj.rglob("*")) == before and target.is_dir()


def test_a_forged_tag_that_is_a_link_or_differs_is_not_a_cache(cli, spy, tmp_path):
    proj, _ = _project(tmp_path)
    tag = tmp_path / "real.tag"
    tag.write_text("Signature: 8a477f597d28d172789f06886806bc55\n# onnxlint result cache (https://bford.info/cachedir/)\n")
    os.symlink(tag, proj / "CACHEDIR.TAG")
    rc, _, err = cli("clean", "--cache-dir", proj)
    assert rc == 2 and (proj / ".git" / "HEAD").is_file()
    os.unlink(proj / "CACHEDIR.TAG")
    (proj / "CACHEDIR.TAG").write_text("Signature: 8a477f597d28d172789f06886806bc55\n# another tool\n")
    rc, _, err = cli("clean", "--cache-dir", proj)
    assert rc == 2 and (proj / ".git" / "HEAD").is_file() and (proj / "m.onnx").is_file()


def test_clean_deletes_only_what_onnxlint_wrote(cli, spy, tmp_path):
    onnx.save(_model(), tmp_path / "m.onnx")
    d = tmp_path / ".onnxlint_cache"
    cli("m.onnx")
    entries = [p for p in d.rglob("*.json")]
    assert entries and (d / "CACHEDIR.TAG").is_file()
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / ("a" * 64 + ".json")
    victim.write_text("{}")
    (d / "notes.txt").write_text("mine")  # put there by someone else
    (d / "v1" / "mine.onnx").write_bytes(b"x")
    shard = next(n for n in ("ab", "cd", "ef") if not (d / "v1" / n).exists())  # not the entry's own shard
    os.symlink(outside, d / "v1" / shard)  # a link named like a shard folder, to a folder outside
    os.symlink(victim, d / "v1" / ("b" * 64 + ".json"))  # a link named like an entry
    rc, out, err = cli("clean")
    assert rc == 2 and "kept 4 path(s)" in err and "Traceback" not in err
    assert victim.is_file() and (d / "notes.txt").read_text() == "mine" and (d / "v1" / "mine.onnx").is_file()
    assert all(not p.exists() for p in entries) and (d / "CACHEDIR.TAG").is_file()  # still a cache: still tagged
    for p in (d / "notes.txt", d / "v1" / "mine.onnx", d / "v1" / shard, d / "v1" / ("b" * 64 + ".json")):
        os.unlink(p)
    rc, out, err = cli("clean")
    assert rc == 0 and "removed cache folder" in out and not d.exists() and victim.is_file()


def test_entries_are_never_written_or_read_through_a_link_under_the_cache(cli, spy, tmp_path):
    """A branch commits links where the cache's own folders are (`v1/00`..`v1/ff`, `v1/runs`, `v1/rulesets`, to a
    folder outside): git ignores those folders, so a checkout puts the links in their place. Entries were written
    through them, outside the repository, and read back from there. Now a link under the cache is a miss and no
    entry is written through it; the run lints as if uncached."""
    onnx.save(_model(), tmp_path / "m.onnx")
    d = tmp_path / ".onnxlint_cache"
    assert cli("m.onnx")[0] == 1 and spy.linted == ["m.onnx"]
    v1 = d / "v1"
    outside = tmp_path / "outside"
    outside.mkdir()
    for folder in sorted(p for p in v1.iterdir() if p.is_dir()):  # what the first run stored, moved outside
        for entry in folder.iterdir():
            os.replace(entry, outside / entry.name)
        folder.rmdir()
    stored = sorted(p.name for p in outside.iterdir())
    for name in [f"{i:02x}" for i in range(256)] + ["runs", "rulesets"]:
        os.symlink(outside, v1 / name)
    assert cli("m.onnx")[0] == 1 and spy.linted == ["m.onnx", "m.onnx"]  # not read back from outside: a miss
    onnx.save(_clean_model(), tmp_path / "n.onnx")
    assert cli("n.onnx")[0] == 0 and spy.linted[-1] == "n.onnx"
    assert sorted(p.name for p in outside.iterdir()) == stored  # nothing written there


def test_clean_of_a_cache_folder_it_cannot_list_keeps_it_in_one_line(cli, spy, tmp_path, monkeypatch):
    """A tagged cache folder that can be entered but not listed (mode 0311, another user's): clean was an internal
    error (PermissionError from the listing); now the folder is kept, said in the kept line, exit 2. Simulated:
    this suite may run as root, whom permission bits do not stop."""
    from onnxlint.cache import folder

    onnx.save(_model(), tmp_path / "m.onnx")
    cli("m.onnx")
    d = tmp_path / ".onnxlint_cache"
    real_scandir = os.scandir

    def scandir(path="."):
        if os.path.abspath(path) == os.path.abspath(d):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(folder.os, "scandir", scandir)
    rc, out, err = cli("clean")
    assert rc == 2 and "kept 1 path(s)" in err and "Traceback" not in err and "internal error" not in err, out + err
    assert (d / "CACHEDIR.TAG").is_file()


def test_clean_of_a_cache_folder_that_is_a_link_says_so(cli, spy, tmp_path):
    """--cache-dir naming a link to a cache folder: nothing removed (a link is never followed), and the line said
    "not an onnxlint cache folder (no onnxlint CACHEDIR.TAG)" while the folder behind it has one."""
    onnx.save(_model(), tmp_path / "m.onnx")
    cli("m.onnx")
    d = tmp_path / ".onnxlint_cache"
    os.symlink(d, tmp_path / "linked")
    rc, out, err = cli("clean", "--cache-dir", tmp_path / "linked")
    assert rc == 2 and "is a symbolic link" in err and "no onnxlint CACHEDIR.TAG" not in err, out + err
    assert (d / "CACHEDIR.TAG").is_file() and any(d.rglob("*.json"))


def test_clean_walks_a_committed_tree_thousands_of_folders_deep(cli, spy, tmp_path):
    """A folder tree 1,200 deep under v1/ (committed with the cache, or made by anyone who can write the folder)
    was an internal error (RecursionError): clean now walks it in a loop and removes it."""
    onnx.save(_model(), tmp_path / "m.onnx")
    cli("m.onnx")
    d = tmp_path / ".onnxlint_cache"
    deep = str(d / "v1")
    for _ in range(1200):  # os.makedirs recurses per level itself
        deep = os.path.join(deep, "a")
        os.mkdir(deep)
    try:
        rc, out, err = cli("clean")
    finally:  # shutil.rmtree (pytest's clean-up of old temporary folders) recurses per level: never leave it
        while deep != str(d / "v1") and os.path.isdir(deep):
            os.rmdir(deep)
            deep = os.path.dirname(deep)
    assert rc == 0 and "removed cache folder" in out and "internal error" not in err, err
    assert not d.exists()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_clean_leaves_a_cache_that_git_tracks(cli, spy, tmp_path, monkeypatch):
    """A repository that commits `.onnxlint_cache/` (tag, .gitignore, entries: `git add -f`): `onnxlint clean` in
    its checkout deleted the tracked files, which whoever chose the repository's files wrote, not this onnxlint.
    It now refuses (exit 2, one line) and deletes nothing; an untracked cache beside it is still removed."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(cache.ENV_DIR, raising=False)
    subprocess.run(["git", "init", "-q"], check=True)
    onnx.save(_model(), tmp_path / "m.onnx")
    cli("m.onnx")
    d = tmp_path / ".onnxlint_cache"
    before = sorted(p for p in d.rglob("*") if p.is_file())
    assert before and (d / "CACHEDIR.TAG").is_file()
    subprocess.run(["git", "add", "-f", ".onnxlint_cache"], check=True)
    rc, out, err = cli("clean")
    assert rc == 2 and "git tracks" in err and ".onnxlint_cache" in err and "Traceback" not in err
    assert sorted(p for p in d.rglob("*") if p.is_file()) == before
    assert cache.clean(d) is None and sorted(p for p in d.rglob("*") if p.is_file()) == before
    subprocess.run(["git", "rm", "-q", "-r", "--cached", ".onnxlint_cache"], check=True)
    rc, out, err = cli("clean")
    assert rc == 0 and "removed cache folder" in out and not d.exists()


# ----------------------------------------------------------------------------- the key


def test_a_model_swapped_between_hashing_and_linting_is_not_stored_under_the_old_key(tmp_path):
    """A checkout or a stash during a run: the bytes hashed are A, the bytes linted B. B's report must never be
    answered for A."""
    p = tmp_path / "m.onnx"
    onnx.save(_clean_model(), p)
    good = p.read_bytes()
    onnx.save(_model(), tmp_path / "bad.onnx")
    bad = (tmp_path / "bad.onnx").read_bytes()
    s = Settings.from_config(None)
    cdir = tmp_path / "cache"

    def swap_then_lint(fs):
        p.write_bytes(bad)  # the file changes after it was hashed
        try:
            return [linter.lint_file(f, s, digest=True) for f in fs]
        finally:
            p.write_bytes(good)  # and back: the same bytes as hashed again

    first = cache.lint_with_cache([p], lambda f: s, swap_then_lint, cdir)
    assert any(f.code == "OLX015" for f in first[0].findings)  # the report of what was linted
    calls: list = []

    def lint(fs):
        calls.extend(fs)
        return [linter.lint_file(f, s, digest=True) for f in fs]

    again = cache.lint_with_cache([p], lambda f: s, lint, cdir)
    assert calls == [p] and not any(f.code == "OLX015" for f in again[0].findings)
    assert cache.lookup(p, s, cdir) is not None  # now stored: what was linted is what was hashed


def test_a_report_without_the_digest_of_its_bytes_is_not_stored(tmp_path):
    p = tmp_path / "m.onnx"
    onnx.save(_model(), p)
    s = Settings.from_config(None)
    assert not cache.store(p, s, linter.lint_file(p, s), tmp_path / "c")
    assert cache.store(p, s, linter.lint_file(p, s, digest=True), tmp_path / "c")


def _rules(folder: Path, name: str, code: str, op: str = "Cast") -> None:
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(CAST_RULE.replace("XTR001", code).replace("{op: Cast}", f"{{op: {op}}}"))


def test_a_dot_rule_file_is_read_and_in_the_key(cli, spy, tmp_path):
    onnx.save(_model(), tmp_path / "m.onnx")
    _rules(tmp_path / "rules", ".hidden.yaml", "XTR002", op="Relu")
    rc, out, _ = cli("m.onnx", "--rules", "rules")
    assert "XTR002" not in out
    _rules(tmp_path / "rules", ".hidden.yaml", "XTR002", op="Equal")  # the loader reads it: the key must too
    ruleset._CACHE.clear()  # as a new process: nothing parsed yet
    rc, out, _ = cli("m.onnx", "--rules", "rules")
    assert "XTR002" in out and spy.linted == ["m.onnx", "m.onnx"]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links")
def test_a_rules_folder_linking_to_itself_twice_neither_hangs_nor_escapes_the_key(tmp_path):
    rules = tmp_path / "rules"
    _rules(rules, "r.yaml", "XTR001")
    os.symlink(".", rules / "loop1")
    os.symlink("..", rules / "loop2")
    onnx.save(_model(), tmp_path / "m.onnx")
    env = {**os.environ, cache.ENV_DIR: str(tmp_path / "c")}
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-m", "onnxlint", "m.onnx", "--rules", "rules", "--format", "json"],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert [f["code"] for f in json.loads(proc.stdout)].count("XTR001") == 1


def test_a_model_over_the_size_limit_is_refused_before_it_is_hashed(tmp_path, monkeypatch, cli, spy):
    big = tmp_path / "big.onnx"
    with open(big, "wb") as fh:  # sparse: 3 GiB that take no disk
        fh.truncate(3 << 30)
    from onnxlint.support import digest

    hashed: list = []
    real = digest.new

    def counting(*a, **k):
        hashed.append(1)
        return real(*a, **k)

    monkeypatch.setattr(digest, "new", counting)  # every hash the cache makes starts here
    assert cache.keys.scan(big, cache.keys.MODEL_LIMIT) is None and hashed == []
    rc, out, err = cli("big.onnx")
    assert rc == 2 and "2 GiB limit" in err and len(err.strip().splitlines()) == 1


# ----------------------------------------------------------------------------- entries


def _entry_files(d: Path) -> list[Path]:
    return [p for p in d.rglob("*.json") if "rulesets" not in p.parts]


def _forge(d: Path, change) -> None:
    for p in _entry_files(d):
        data = json.loads(p.read_text())
        reports = [data["report"]] if "report" in data else [f["report"] for f in data["files"]]
        for r in reports:
            change(r)
        p.write_text(json.dumps(data))


EVIL = "\x1b]8;;http://evil\x07click\x1b[2J\n::error file=README.md::PWNED\u202e"


@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif"])
@pytest.mark.parametrize("several", [False, True])
def test_a_forged_message_is_rendered_through_the_same_escaping(cli, spy, tmp_path, fmt, several):
    onnx.save(_model(), tmp_path / "m.onnx")
    onnx.save(_model("other"), tmp_path / "n.onnx")
    files = ["m.onnx", "n.onnx"] if several else ["m.onnx"]
    fresh = cli(*files, "--format", fmt, "--no-progress")

    def evil(r):
        for f in r["findings"]:
            f["message"] = EVIL
            f["node"] = EVIL

    _forge(tmp_path / ".onnxlint_cache", evil)
    rc, out, err = cli(*files, "--format", fmt, "--no-progress")
    assert spy.linted == files and rc == fresh[0] == 1 and "Traceback" not in err
    assert "\x1b" not in out and "\x07" not in out  # JSON escapes controls itself; the text formats make them visible
    assert not any(line.lstrip().startswith("::error file=README.md") for line in out.splitlines())
    if fmt in ("json", "sarif"):
        doc = json.loads(out)  # the text is data there, as a fresh result's would be
        assert fmt != "json" or any(f["message"] == EVIL for f in doc)
    else:
        assert "\u202e" not in out


BAD_ENTRIES = {
    "bogus severity": lambda r: r["findings"][0].update(severity="fatal"),
    "severity not a string": lambda r: r["findings"][0].update(severity=["error"]),
    "message a number": lambda r: r["findings"][0].update(message=12),
    "missing field": lambda r: r["findings"][0].pop("code"),
    "extra field": lambda r: r["findings"][0].update(extra=1),
    "deep nesting": lambda r: r["findings"][0].update(message=json.loads("[" * 50 + "]" * 50)),
    "findings not a list": lambda r: r.update(findings={"a": 1}),
    "notes of numbers": lambda r: r.update(notes=[1, 2]),
    "placement of lists": lambda r: r.update(placement={"cuda": [1]}),
    "an error report": lambda r: r.update(error="x"),
    "another file": lambda r: r.update(filename="elsewhere.onnx"),
    "a code with escapes": lambda r: r["findings"][0].update(code="\x1b[2JOLX001"),
    "a name that is no rule's": lambda r: r["findings"][0].update(name="::error::x"),
    "no findings at all": lambda r: r.clear(),
}


@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif"])
@pytest.mark.parametrize("bad", sorted(BAD_ENTRIES))
def test_a_bad_entry_is_a_miss_never_a_traceback(cli, spy, tmp_path, fmt, bad):
    onnx.save(_model(), tmp_path / "m.onnx")
    onnx.save(_model("other"), tmp_path / "n.onnx")
    fresh = cli("m.onnx", "n.onnx", "--format", fmt, "--no-progress")
    _forge(tmp_path / ".onnxlint_cache", BAD_ENTRIES[bad])
    again = cli("m.onnx", "n.onnx", "--format", fmt, "--no-progress")
    assert again == fresh and spy.linted == ["m.onnx", "n.onnx"] * 2  # linted again: a miss


def test_an_entry_nested_past_the_decoder_or_over_the_size_limit_is_a_miss(cli, spy, tmp_path, monkeypatch):
    onnx.save(_model(), tmp_path / "m.onnx")
    fresh = cli("m.onnx")
    (entry,) = _entry_files(tmp_path / ".onnxlint_cache")
    k = entry.stem
    entry.write_text('{"key": "%s", "external": [], "report": %s}' % (k, "[" * 200_000 + "]" * 200_000))
    assert cli("m.onnx") == fresh and spy.linted == ["m.onnx"] * 2
    monkeypatch.setattr(cache.folder, "MAX_ENTRY_BYTES", 10)
    assert cli("m.onnx") == fresh and spy.linted == ["m.onnx"] * 3


def test_the_exit_code_is_computed_from_the_checked_findings(cli, spy, tmp_path):
    """A hit's exit code is never stored: it follows from the findings, as for a fresh result."""
    onnx.save(_clean_model(), tmp_path / "m.onnx")
    assert cli("m.onnx")[0] == 0
    entries = _entry_files(tmp_path / ".onnxlint_cache")
    assert entries and all('"rc"' not in p.read_text() for p in entries)
    assert not list((tmp_path / ".onnxlint_cache").rglob("shown"))


FORGED_RULES = {
    "bogus severity": lambda r: r.update(severity="fatal"),
    "match of another shape": lambda r: r.update(match={"op": 5}),
    "a match that matches nothing": lambda r: r.update(match={"op": "NoSuchOp"}),
    "derived fields that disagree": lambda r: r.update(ops=["NoSuchOp"]),
    "targets not a list": lambda r: r.update(targets=7),
    "missing field": lambda r: r.pop("message"),
}


@pytest.mark.parametrize("fmt", ["text", "sarif"])
@pytest.mark.parametrize("bad", sorted(FORGED_RULES))
def test_a_forged_rule_set_entry_is_a_miss(cli, spy, tmp_path, fmt, bad):
    """The stored rule set decides what is linted: its rules are validated again as a rule file's are, and
    what parsing derives must be what the entry says; otherwise the rule files are parsed again."""
    onnx.save(_model(), tmp_path / "m.onnx")
    onnx.save(_model("other"), tmp_path / "n.onnx")
    fresh = cli("n.onnx", "--format", fmt, "--no-progress")
    (stored,) = (tmp_path / ".onnxlint_cache").rglob("rulesets/*.json")
    data = json.loads(stored.read_text())
    for r in data["rules"]:
        FORGED_RULES[bad](r)
    stored.write_text(json.dumps(data))
    for p in _entry_files(tmp_path / ".onnxlint_cache"):
        p.unlink()  # the model misses: it is linted with the rules
    rc, out, err = cli("n.onnx", "--format", fmt, "--no-progress")
    assert (rc, out, err) == fresh and "Traceback" not in err
    rc, out, err = cli("m.onnx", "--format", fmt, "--no-progress")  # a run of hits reads the stored rules too
    assert rc == 1 and "Traceback" not in err and spy.linted == ["n.onnx", "n.onnx", "m.onnx"]


def test_the_shapes_a_stored_rule_code_and_name_must_have_are_the_rule_schemas():
    from onnxlint.cache import report_json
    from onnxlint.rulefiles import rule_schema

    assert (report_json.ID.pattern, report_json.NAME.pattern) == (rule_schema.ID_PATTERN, rule_schema.NAME_PATTERN)


def test_outside_a_work_tree_a_cache_that_came_with_the_files_is_never_read(tmp_path):
    """A checkout without .git (a source archive, a CI checkout made without git) can carry an `.onnxlint_cache/`
    whose entries whoever chose the files wrote (a report saying a model is clean), and without git nothing tells
    it from onnxlint's own. There the default cache is a folder of the user's cache home, one per working
    folder; in a work tree it stays `.onnxlint_cache` (git tells a committed one)."""
    proj, home = tmp_path / "proj", tmp_path / "home"
    proj.mkdir()
    onnx.save(_model(), proj / "m.onnx")
    env = {k: v for k, v in os.environ.items() if k != cache.ENV_DIR}
    env["XDG_CACHE_HOME"] = str(home)

    def run(cwd: Path = proj) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "onnxlint", "m.onnx"], cwd=cwd, env=env, capture_output=True,
                              text=True, timeout=300)

    first = run()
    assert first.returncode == 1 and "OLX015" in first.stdout, first.stderr
    assert not (proj / ".onnxlint_cache").exists()
    (made,) = (home / "onnxlint").iterdir()
    assert (made / "CACHEDIR.TAG").is_file()
    shipped = proj / ".onnxlint_cache"  # the same entries, forged clean, as a checkout would bring them
    shutil.copytree(made, shipped)
    forged = 0
    for p in shipped.rglob("*.json"):
        d = json.loads(p.read_text())
        if isinstance(d, dict) and isinstance(d.get("report"), dict) and d["report"].get("findings"):
            d["report"]["findings"] = []
            p.write_text(json.dumps(d))
            forged += 1
    assert forged
    shutil.rmtree(home)
    before = sorted((p, p.read_bytes()) for p in shipped.rglob("*") if p.is_file())
    again = run()
    assert again.returncode == 1 and "OLX015" in again.stdout  # linted, not answered by the shipped entries
    assert sorted((p, p.read_bytes()) for p in shipped.rglob("*") if p.is_file()) == before
    if shutil.which("git") is not None:  # in a work tree: the current folder's, as before
        tree = tmp_path / "tree"
        tree.mkdir()
        onnx.save(_model(), tree / "m.onnx")
        subprocess.run(["git", "init", "-q"], cwd=tree, check=True)
        assert run(tree).returncode == 1 and (tree / ".onnxlint_cache" / "CACHEDIR.TAG").is_file()


def test_rules_named_by_a_relative_folder_are_those_of_the_working_folder(tmp_path, monkeypatch):
    """An API caller's process lints `rules` from two repositories: each gets its own rules, not the first's."""
    ruleset._CACHE.clear()
    for repo, code in (("a", "XTR010"), ("b", "XTR011")):
        (tmp_path / repo).mkdir()
        _rules(tmp_path / repo / "rules", "mine.yaml", code)
    monkeypatch.chdir(tmp_path / "a")
    assert "XTR010" in ruleset.get_ruleset((Path("rules"),)).by_id()
    monkeypatch.chdir(tmp_path / "b")
    got = ruleset.get_ruleset((Path("rules"),)).by_id()
    assert "XTR011" in got and "XTR010" not in got
