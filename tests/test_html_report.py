"""The HTML placement report (`placement --format html`, `--format html`): built from models made here, opened
from disk in headless Chromium (tests/browser.py, the DevTools protocol over a pipe), and read back from the page
as a user sees it: the same counts and CPU nodes as `--format json`, no console error, no request, hostile names
shown as text. Without Chromium the browser tests are skipped, saying so; CI installs it and sets
ONNXLINT_REQUIRE_CHROMIUM=1, which makes its absence a failure."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import browser
import numpy as np
import onnx
import pytest
from conftest import ROOT, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from onnxlint.formats import html_report
from onnxlint.support.escape import text as esc

CORPUS = sorted((ROOT / "tests" / "corpus").glob("*.onnx"))
EXAMPLES = sorted((ROOT / "examples").glob("*.onnx"))


@pytest.fixture(scope="module")
def chromium():
    exe = browser.find()
    if exe is None:
        if os.environ.get("ONNXLINT_REQUIRE_CHROMIUM") == "1":
            pytest.fail("ONNXLINT_REQUIRE_CHROMIUM=1 but no Chromium found (apt-get install chromium)")
        pytest.skip("no Chromium on this machine (apt-get install chromium, or set ONNXLINT_CHROMIUM); .ci/run installs it")
    with browser.Chromium(exe) as b:
        yield b


def opened(b: browser.Chromium, page: Path) -> browser.Chromium:
    b.console.clear()
    b.requests.clear()
    b.open(page)
    return b


def clean(b: browser.Chromium) -> None:
    """Nothing logged as an error or warning (a CSP violation, an exception), nothing requested."""
    assert b.errors() == [], b.errors()
    assert b.outside_requests() == [], b.outside_requests()


PAGE_COUNTS = """(function(){
  var pick = document.getElementById('run-pick');  // the release whose lists are shown (comparing two)
  if (pick && pick.options.length) { pick.value = 'RUN'; pick.dispatchEvent(new Event('change')); }
  var c = {};
  document.querySelectorAll('#counts [data-count][data-run="RUN"]').forEach(function(e){ c[e.dataset.count] = +e.dataset.value; });
  var more = document.querySelector('#cpu-nodes + .show-all'); if (more) more.click();
  return {counts: c, cpu: Array.prototype.map.call(document.querySelectorAll('#cpu-nodes li .path'), function(e){ return e.textContent; })};
})()"""
KEYS = ("nodes", "on_preferred_ep", "real_fallback", "shape_only", "unsupported", "folded", "eliminated", "boundaries",
        "bytes_copied", "bytes_unknown")


def placement_json(cli, model: Path, *args) -> dict:
    rc, out, err = cli("placement", model, "--format", "json", *args)
    assert rc == 0, err
    return json.loads(out)[0]


def assert_page_equals_json(b: browser.Chromium, doc: dict, run: int = 0) -> None:
    shown = b.evaluate(PAGE_COUNTS.replace("RUN", str(run)))
    assert {k: shown["counts"][k] for k in KEYS} == {k: doc["summary"][k] for k in KEYS}
    cpu = [esc(n["node"][len("graph/"):] if n["node"].startswith("graph/") else n["node"]) for n in doc["nodes"]
           if n["ep"] == "CPUExecutionProvider"]
    assert sorted(shown["cpu"]) == sorted(cpu)


def fallback_model() -> onnx.ModelProto:
    """Torch-style names, an opset-19 Equal (no CUDA kernel before ORT 1.31: CPU, with a Memcpy each way), a shape
    computation ORT keeps on CPU on purpose, an If with a body."""
    nodes = [
        h.make_node("Relu", ["x"], ["r"], name="/model/block/Relu"),
        h.make_node("Cast", ["r"], ["c"], name="/model/block/Cast", to=T.INT64),
        h.make_node("Equal", ["c", "zero"], ["e"], name="/model/block/mask/Equal"),
        h.make_node("Where", ["e", "r", "x"], ["w"], name="/model/block/mask/Where"),
        h.make_node("Shape", ["w"], ["s"], name="/model/head/Shape"),
        h.make_node("Reshape", ["w", "s"], ["y"], name="/model/head/Reshape"),
        h.make_node("If", ["flag"], ["z"], name="/model/head/If",
                    then_branch=h.make_graph([h.make_node("Neg", ["y"], ["t"], name="/then/Neg")], "then", [],
                                             [vi("t", T.FLOAT, [2, 4, 8])]),
                    else_branch=h.make_graph([h.make_node("Abs", ["y"], ["u"], name="/else/Abs")], "else", [],
                                             [vi("u", T.FLOAT, [2, 4, 8])])),
    ]
    return make_model(nodes, [vi("x", T.FLOAT, [2, 4, 8]), vi("flag", T.BOOL, [])], [vi("z", T.FLOAT, [2, 4, 8])],
                      [nh.from_array(np.array(0, np.int64), "zero")], opset=19)


# ----------------------------------------------------------------------------- without a browser


def test_embedded_json_cannot_end_its_script_element():
    doc = {"name": "</script><script>alert(1)</script><!-- \u2028\u2029 & a\udcffb"}
    text = html_report._script_json(doc)
    assert not re.search("[<>&\u2028\u2029\ud800-\udfff]", text)
    assert json.loads(text) == {"name": "</script><script>alert(1)</script><!-- \u2028\u2029 & a\\xffb"}


def test_page_is_one_file_with_a_policy_that_allows_only_its_own_script_and_style(tmp_path, save, cli):
    page = tmp_path / "r.html"
    rc, _, err = cli("placement", save(fallback_model()), "--format", "html", "-o", page)
    assert rc == 0, err
    text = page.read_text(encoding="utf-8")
    assert len(re.findall(r"<script\b", text)) == 2 and len(re.findall(r"<style\b", text)) == 1
    assert not re.search(r"""(?:src|href)\s*=|@import|url\((?!#)|https?://""", text.replace("http://www.w3.org/2000/svg", "")), \
        "the page refers to nothing outside itself"
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', text).group(1)
    assert "default-src 'none'" in csp and "unsafe-inline" not in csp and csp.count("sha256-") == 2


def test_wide_scopes_are_split_so_none_lists_more_than_a_part():
    paths = [f"/m/blk.{i // 3}/op{i % 3}" for i in range(30_000)] + [f"flat_{i}" for i in range(250)]
    tree, scope_of, leaves = html_report._scope_tree(paths)
    children = [0] * len(tree.names)
    for parent in tree.parents:
        if parent >= 0:
            children[parent] += 1
    for s in scope_of:
        children[s] += 1
    assert max(children) <= html_report.PART
    assert leaves[0] == "op0" and tree.names[scope_of[0]] == "blk.0" and "part" in tree.kinds
    # every node is still under its own scope
    s = scope_of[29_999]
    while tree.kinds[s] == "part":
        s = tree.parents[s]
    assert tree.names[s] == "blk.9999"


def test_compare_needs_html_and_output_never_replaces_a_model(tmp_path, save, cli):
    model = save(fallback_model())
    rc, _, err = cli("placement", model, "--compare", "1.24.4")
    assert rc == 2 and "--compare: only with --format html" in err
    rc, _, err = cli("placement", model, "--format", "html", "-o", model)
    assert rc == 2 and "is one of the models being linted" in err
    assert onnx.load(model).graph.node  # untouched


def test_an_unreadable_model_is_one_line_and_named_on_the_page(tmp_path, save, cli):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    page = tmp_path / "r.html"
    rc, out, err = cli("placement", save(fallback_model()), bad, "--format", "html", "-o", page)
    assert rc == 2 and out == "" and err.count("\n") == 1 and "bad.onnx" in err and "Traceback" not in err
    data = page_data(page.read_text(encoding="utf-8"))
    assert [m["error"] is not None for m in data["models"]] == [False, True]


def page_data(text: str) -> dict:
    return json.loads(re.search(r'id="onnxlint-data">(.*?)</script>', text, re.S).group(1))


@pytest.mark.parametrize("in_place", [False, True], ids=["to -o", "in place"])
def test_a_fix_run_page_places_the_model_it_wrote(tmp_path, save, cli, lint_json, in_place):
    """After --fix the findings left are the written model's: the page places that model (its Identity, not the
    original's training-mode Dropout), named as written, with the JSON's counts for it."""
    nodes = [h.make_node("Dropout", ["x", "ratio", "tm"], ["d"], name="drop"),
             h.make_node("Relu", ["d"], ["y"], name="relu")]
    model = save(make_model(nodes, [vi("x", T.FLOAT, [2, 8])], [vi("y", T.FLOAT, [2, 8])],
                            [nh.from_array(np.array(0.5, np.float32), "ratio"), nh.from_array(np.array(True), "tm")],
                            opset=17))
    fixed = model if in_place else tmp_path / "fixed.onnx"
    rc, out, err = cli(model, "--fix", *(() if in_place else ("-o", fixed)), "--format", "html")
    assert rc == 0 and "1 fixed" in err, err
    [doc] = page_data(out)["models"]
    _, left = lint_json(fixed)
    assert doc["file"] == str(fixed)
    assert sorted((f["code"], f["where"]) for f in doc["findings"]) == sorted((f["code"], f["node"] or "") for f in left)
    assert "OLX010" not in {f["code"] for f in doc["findings"]}
    assert sorted(doc["nodes"]["op"]) == sorted(n.op_type for n in onnx.load(fixed).graph.node) == ["Identity", "Relu"]
    if not in_place:
        assert [n.op_type for n in onnx.load(model).graph.node] == ["Dropout", "Relu"]  # the original untouched


@pytest.mark.parametrize("target", ["ort-cuda", "ort-trt", "ort-cpu"])
def test_a_lint_page_shows_the_lints_placement_without_loading_or_placing_the_model_again(tmp_path, save, cli,
                                                                                         monkeypatch, target):
    """A lint run's page takes its placement from the lint (FileReport.page): the model is loaded once and placed
    as often as a JSON lint places it, where the page used to load and place it again; the page is the one a
    cached run makes, which has no lint to take it from and places the model itself."""
    from onnxlint.model import loading
    from onnxlint.ort import partitioner

    model = save(fallback_model())
    calls = {"load": 0, "simulate": 0}

    def counted(name, real):
        def call(*args, **kwargs):
            calls[name] += 1
            return real(*args, **kwargs)
        return call

    monkeypatch.setattr(loading, "load", counted("load", loading.load))
    monkeypatch.setattr(partitioner, "simulate", counted("simulate", partitioner.simulate))
    rc, _, err = cli(model, "--no-cache", "--target", target, "--format", "json")
    assert rc in (0, 1), err
    json_calls = dict(calls)
    calls.update(load=0, simulate=0)
    cache = tmp_path / "cache"
    rc, linted, err = cli(model, "--cache-dir", cache, "--target", target, "--format", "html")
    assert rc in (0, 1), err
    assert calls == json_calls == {"load": 1, "simulate": json_calls["simulate"]}, (calls, json_calls)
    assert json_calls["simulate"] >= 1
    calls.update(load=0, simulate=0)
    rc, cached, err = cli(model, "--cache-dir", cache, "--target", target, "--format", "html")
    assert calls["load"] == 1 and calls["simulate"] >= 1  # a hit: the page loads and places it
    assert cached == linted
    assert page_data(linted)["models"][0]["nodes"]["op"]  # a placed model, not an error


def test_a_model_with_a_name_that_is_not_utf8_gets_a_page_linted_and_cached(tmp_path, save, cli):
    """A node name whose bytes are not UTF-8: the lint repairs the model and lints it again; the page is placed
    from the repaired model too, linted or from the cache (the run used to stop with an internal error, no page)."""
    good = save(fallback_model(), "good.onnx")
    model = make_model([h.make_node("Relu", ["x"], ["y"], name="nodeQQ")], [vi("x", T.FLOAT, [4])],
                       [vi("y", T.FLOAT, [4])])
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(model.SerializeToString().replace(b"nodeQQ", b"node\xff\xfe"))
    cache = tmp_path / "cache"
    pages = []
    for _ in range(2):  # a miss (the lint's placement), then a hit (the page places the model itself)
        rc, out, err = cli(bad, good, "--cache-dir", cache, "--format", "html")
        assert rc in (0, 1) and "internal error" not in err, err
        pages.append(out)
    assert pages[0] == pages[1]
    data = page_data(pages[0])
    assert [m["error"] for m in data["models"]] == [None, None]
    assert data["models"][0]["nodes"]["name"] == [esc("node\\xff\\xfe")]
    # the placement command repairs it the same way, in each format (it stopped with an internal error)
    for fmt in ("text", "json", "html"):
        rc, out, err = cli("placement", bad, "--format", fmt)
        assert rc == 0 and "internal error" not in err and "node" in out, (fmt, err)
    rc, out, err = cli("placement", bad, "--format", "json")
    assert json.loads(out)[0]["nodes"][0]["node"].endswith("node\\xff\\xfe"), out


def test_a_model_the_page_cannot_place_is_one_line_on_the_page_and_the_others_stay(tmp_path, save, cli, monkeypatch):
    """A defect placing one model for the page (a cached run places it there) costs that model's part of the page,
    named with the error, not the run's page."""
    good = save(fallback_model(), "good.onnx")
    bad = save(fallback_model(), "bad.onnx")
    cache = tmp_path / "cache"
    rc, _, err = cli(good, bad, "--cache-dir", cache, "--format", "html")
    assert rc in (0, 1), err
    real = html_report.model_doc

    def model_doc(path, display, *args, **kwargs):
        if Path(path).name == "bad.onnx":
            raise RuntimeError("placing went wrong")
        return real(path, display, *args, **kwargs)

    monkeypatch.setattr(html_report, "model_doc", model_doc)
    rc, out, err = cli(good, bad, "--cache-dir", cache, "--format", "html")  # hits: the page places them
    assert rc in (0, 1) and "Traceback" not in err, err
    docs = {Path(d["file"]).name: d for d in page_data(out)["models"]}
    # `onnxlint placement`'s words (html_report.placing_failed): it said no "please report it"
    assert docs["bad.onnx"]["error"] == "internal error while placing (RuntimeError: placing went wrong); please report it"
    assert docs["good.onnx"]["error"] is None and docs["good.onnx"]["nodes"]["op"]
    calls = iter([RecursionError("maximum recursion depth exceeded"), RuntimeError("x")])

    def deep(path, display, *args, **kwargs):
        if Path(path).name == "bad.onnx":
            raise next(calls)
        return real(path, display, *args, **kwargs)

    monkeypatch.setattr(html_report, "model_doc", deep)
    rc, out, err = cli(good, bad, "--cache-dir", cache, "--format", "html")
    docs = {Path(d["file"]).name: d for d in page_data(out)["models"]}
    assert docs["bad.onnx"]["error"] == "graph nesting too deep to analyse", docs["bad.onnx"]  # as the lint says it


# ----------------------------------------------------------------------------- in Chromium


@pytest.mark.parametrize("model", CORPUS + EXAMPLES, ids=lambda p: p.name)
def test_page_shows_the_counts_and_cpu_nodes_of_the_json(chromium, tmp_path, cli, model):
    page = tmp_path / "r.html"
    rc, _, err = cli("placement", model, "--format", "html", "-o", page)
    assert rc == 0, err
    assert_page_equals_json(opened(chromium, page), placement_json(cli, model))
    clean(chromium)


def test_fallbacks_copies_and_scopes_are_shown(chromium, tmp_path, save, cli):
    model = save(fallback_model())
    page = tmp_path / "r.html"
    assert cli("placement", model, "--format", "html", "--ort-version", "1.24.4", "-o", page)[0] == 0
    doc = placement_json(cli, model, "--ort-version", "1.24.4")
    assert doc["summary"]["real_fallback"] == 1 and doc["summary"]["boundaries"] == 2  # what this test is about
    b = opened(chromium, page)
    assert_page_equals_json(b, doc)
    copies = b.evaluate("Array.prototype.map.call(document.querySelectorAll('#copies li'), function(e){ return e.textContent; })")
    arrow = {"to-host": "\u2191", "to-device": "\u2193"}
    want = [f"copy{arrow[v['direction']]} {v['value']}{v['bytes']} B" for v in doc["summary"]["boundary_values"]]
    assert sorted(copies) == sorted(want) == ["copy\u2191 c512 B", "copy\u2193 e64 B"]  # int64 and bool [2, 4, 8]
    # the tree: the scope /model/block says it holds a CPU node and copies; opening it lists its nodes
    b.evaluate("window.onnxlintReport.open(%d)" % _scope_id(b, "block"))
    row = b.evaluate("document.querySelector('.row[data-scope=\"%d\"]').textContent" % _scope_id(b, "block"))
    assert "1 CPU" in row and "\u21c5 2" in row
    # a node drawn: the Equal, on CPU, between two Memcpy nodes in its scope's drawing
    b.evaluate("window.onnxlintReport.reveal(%d)" % _node_id(b, "/model/block/mask/Equal"))
    drawn = b.evaluate("Array.prototype.map.call(document.querySelectorAll('#graph .nd text'), function(e){ return e.textContent; })")
    assert "Equal" in drawn and "MemcpyToHost" in drawn and "Where" in drawn
    assert "/model/block/mask/Equal" in b.evaluate("document.getElementById('details').textContent")
    assert "CUDA has no kernel for Equal version 19" in b.evaluate("document.getElementById('details').textContent")
    clean(b)


DATA = "JSON.parse(document.getElementById('onnxlint-data').textContent).models[0]"


def _node_id(b, path):
    return b.evaluate(f"{DATA}.nodes.path.indexOf({json.dumps(path)})")


def _scope_id(b, name):
    return b.evaluate(f"{DATA}.scopes.name.indexOf({json.dumps(name)})")


def test_two_releases_side_by_side_name_the_nodes_that_change_provider(chromium, tmp_path, save, cli):
    model = save(fallback_model())
    page = tmp_path / "r.html"
    assert cli("placement", model, "--format", "html", "--ort-version", "1.24.4", "--compare", "1.31.1", "-o", page)[0] == 0
    b = opened(chromium, page)
    assert_page_equals_json(b, placement_json(cli, model, "--ort-version", "1.24.4"), run=0)
    assert_page_equals_json(b, placement_json(cli, model, "--ort-version", "1.31.1"), run=1)
    changes = b.evaluate("Array.prototype.map.call(document.querySelectorAll('#changes li .path'), function(e){ return e.textContent; })")
    assert changes == ["/model/block/mask/Equal"]
    assert "CPU \u2192 CUDA: 1 node" in b.evaluate("document.getElementById('changes').textContent")
    clean(b)


def test_lint_page_attaches_each_finding_to_its_node(chromium, tmp_path, save, lint_json, cli):
    model = save(fallback_model())
    rc, findings = lint_json(model, "--ort-version", "1.24.4")
    page = tmp_path / "r.html"
    rc, out, err = cli(model, "--ort-version", "1.24.4", "--format", "html", "-o", page)
    assert rc == 1 and out == "", err
    b = opened(chromium, page)
    shown = b.evaluate("Array.prototype.map.call(document.querySelectorAll('#findings li'), function(e){ return e.textContent; })")
    assert sorted(shown) == sorted(f["code"] + (f["node"] or "(the model)") for f in findings)
    for sev in ("error", "warning", "info"):
        got = b.evaluate(f"+document.querySelector('#finding-counts [data-severity={sev}]').dataset.value")
        assert got == sum(f["severity"] == sev for f in findings)
    equal = next(f for f in findings if f["node"] == "/model/block/mask/Equal")
    b.click("#findings li[data-finding] .path[title*='Equal']")
    details = b.evaluate("document.getElementById('details').textContent")
    assert equal["message"] in details and equal["hint"] in details
    clean(b)


def test_search_from_the_keyboard_goes_to_the_node(chromium, tmp_path, save, cli):
    page = tmp_path / "r.html"
    assert cli("placement", save(fallback_model()), "--format", "html", "-o", page)[0] == 0
    b = opened(chromium, page)
    b.key("/")
    assert b.evaluate("document.activeElement.id") == "search"
    b.type("reshape")
    b.wait_for("document.querySelectorAll('#results .hit').length === 1")
    b.key("Enter", keycode=13)
    b.wait_for("document.getElementById('details').dataset.node !== undefined")
    assert "/model/head/Reshape" in b.evaluate("document.getElementById('details').textContent")
    assert b.evaluate("document.querySelector('.row.selected').dataset.node") == str(_node_id(b, "/model/head/Reshape"))
    clean(b)


HOSTILE = [
    "</script><script>document.title='PWNED'</script>",
    "<img src=x onerror=\"document.title='PWNED'\">",
    "\u202eevil\u202c/\x1b[31mred\x07",
    "line\u2028break\nnew&amp;<!--",
]


def test_hostile_names_stay_text(chromium, tmp_path, cli):
    nodes = [h.make_node("Relu", ["x"], ["a"], name=HOSTILE[0]), h.make_node("Relu", ["a"], ["b"], name=HOSTILE[1]),
             h.make_node("Relu", ["b"], ["c"], name=HOSTILE[2]), h.make_node("Relu", ["c"], [HOSTILE[3]], name=HOSTILE[3]),
             h.make_node("<b>Op</b>", [HOSTILE[3]], ["y"], name="custom", domain="x.<i>")]
    m = make_model(nodes, [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])], extra_opsets=[("x.<i>", 1)])
    model = tmp_path / "<b>m&amp;<i>.onnx"
    onnx.save(m, model)
    for args in (["placement", model, "--format", "html"], [model, "--format", "html", "--no-cache"]):
        page = tmp_path / "r.html"
        rc, _, err = cli(*args, "-o", page)
        assert rc in (0, 1), err
        text = page.read_text(encoding="utf-8")
        assert "PWNED" in text and "<img" not in text and len(re.findall(r"<script\b", text)) == 2
        b = opened(chromium, page)
        assert b.evaluate("document.title") == "onnxlint" + (" placement" if args[0] == "placement" else "") + ": " + esc(str(model))
        assert b.evaluate("document.querySelectorAll('img, script:not([type]) + script, iframe').length") == 0
        b.evaluate("window.onnxlintReport.open(0)")
        tree = b.evaluate("document.getElementById('tree').textContent") + b.evaluate("document.getElementById('side').textContent")
        # the names are there as text, control and bidi characters shown as escapes (as in every other format)
        assert "document.title='PWNED'" in tree and "\\u202eevil" in tree and "\\x1b[31mred\\x07" in tree
        assert not re.search("[\x00-\x08\x0b-\x1f\u202a-\u202e\u2028\u2029]", tree)
        b.evaluate("window.onnxlintReport.reveal(4)")
        assert "<b>Op</b>" in b.evaluate("document.getElementById('details').textContent")
        assert b.evaluate("document.title").find("PWNED") < 0
        clean(b)


def test_a_10k_node_model_opens_and_its_scopes_open(chromium, tmp_path, cli):
    """A model of 10,000 nodes in 100 scopes of 100 (torch-like names): the page opens (its speed is measured in
    benchmarks/html_report.py, not here), counts as the JSON does, and lists at most a part of a scope at a time."""
    nodes, prev = [], "x"
    for i in range(10_000):
        out = f"v{i}"
        op = "Relu" if i % 2 else "Neg"
        nodes.append(h.make_node(op, [prev], [out], name=f"/model/layers.{i // 100}/block/{op}_{i}"))
        prev = out
    model = tmp_path / "big.onnx"
    onnx.save(make_model(nodes, [vi("x", T.FLOAT, [4])], [vi(prev, T.FLOAT, [4])]), model)
    page = tmp_path / "r.html"
    assert cli("placement", model, "--format", "html", "-o", page)[0] == 0
    b = opened(chromium, page)
    assert_page_equals_json(b, placement_json(cli, model))
    assert b.evaluate("document.querySelectorAll('.row').length") < 250
    s = b.evaluate("window.onnxlintReport.widestScope()")
    b.evaluate(f"window.onnxlintReport.open({s})")
    assert b.evaluate("document.querySelectorAll('#graph .nd').length") <= html_report.PART + 2
    clean(b)


@pytest.mark.parametrize("case", ["constants-only", "refused-opset"])
def test_a_graph_ort_places_nothing_of_or_refuses_opens_cleanly(chromium, tmp_path, save, cli, case):
    if case == "constants-only":  # ORT turns Constant nodes into initializers: nothing is placed, nothing drawn
        m = make_model([h.make_node("Constant", [], ["y"], name="c", value=nh.from_array(np.ones(2, np.float32)))],
                       [], [vi("y", T.FLOAT, [2])])
    else:  # an opset newer than any ORT release: ORT refuses the model
        m = make_model([h.make_node("Relu", ["x"], ["y"], name="/m/relu")], [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])], opset=99)
    model = save(m)
    page = tmp_path / "r.html"
    assert cli("placement", model, "--format", "html", "-o", page)[0] == 0
    b = opened(chromium, page)
    assert_page_equals_json(b, placement_json(cli, model))
    if case == "refused-opset":
        assert "ORT refuses this model" in b.evaluate("document.getElementById('side').textContent")
    clean(b)


def test_selecting_another_node_unmarks_the_first_node_of_the_graph(chromium, tmp_path, save, cli):
    """Node 0's key in the drawing is 0: selecting it and then another node left both marked as selected."""
    nodes = [h.make_node("Relu", ["x"], ["a"], name="first"), h.make_node("Neg", ["a"], ["b"], name="second"),
             h.make_node("Abs", ["b"], ["y"], name="third")]
    model = save(make_model(nodes, [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])]))
    page = tmp_path / "r.html"
    assert cli("placement", model, "--format", "html", "-o", page)[0] == 0
    b = opened(chromium, page)
    marked = ("Array.prototype.map.call(document.querySelectorAll('#graph .nd.sel title'), "
              "function(e){ return e.textContent.split('\\n')[0]; })")
    b.evaluate("window.onnxlintReport.reveal(0)")
    assert b.evaluate(marked) == ["Relu  first"]
    b.evaluate("window.onnxlintReport.reveal(1)")
    assert b.evaluate(marked) == ["Neg  second"]
    clean(b)


def test_search_results_of_one_model_are_dropped_when_another_is_picked(chromium, tmp_path, cli):
    """The results listed are the nodes of the model searched: picking another model in a page of several left
    them listed, and Enter went to that number's node in the other model (or threw, past its last node)."""
    for name, n, op in (("a.onnx", 30, "Relu"), ("b.onnx", 5, "Neg")):
        nodes, prev = [], "x"
        for i in range(n):
            nodes.append(h.make_node(op, [prev], [f"v{i}"], name=f"/{name[0]}/{op}_{i}"))
            prev = f"v{i}"
        onnx.save(make_model(nodes, [vi("x", T.FLOAT, [2])], [vi(prev, T.FLOAT, [2])]), tmp_path / name)
    page = tmp_path / "r.html"
    assert cli("placement", tmp_path / "a.onnx", tmp_path / "b.onnx", "--format", "html", "-o", page)[0] == 0
    b = opened(chromium, page)
    b.key("/")
    b.type("relu_2")
    b.wait_for("document.querySelectorAll('#results .hit').length === 11")
    b.evaluate("var s = document.getElementById('model-pick'); s.value = '1'; s.dispatchEvent(new Event('change'))")
    assert b.evaluate("document.getElementById('results').classList.contains('hidden')")
    assert b.evaluate("document.querySelectorAll('#results .hit').length") == 0
    b.evaluate("document.getElementById('search').focus()")
    b.key("ArrowDown")
    b.key("Enter", keycode=13)
    assert b.evaluate("document.getElementById('details').dataset.node") is None
    b.type("_3")  # typing searches the model shown
    b.wait_for("document.querySelectorAll('#results .hit').length === 0 && document.querySelector('#results .more')")
    b.evaluate("var q = document.getElementById('search'); q.value = 'neg_3'; q.dispatchEvent(new Event('input'))")
    b.wait_for("document.querySelectorAll('#results .hit').length === 1")
    b.key("Enter", keycode=13)
    b.wait_for("document.getElementById('details').dataset.node === '3'")
    assert "/b/Neg_3" in b.evaluate("document.getElementById('details').textContent")
    clean(b)


def test_keys_and_search_on_a_model_not_read_or_with_nothing_drawn_log_no_error(chromium, tmp_path, save, cli):
    """`f` (fit) threw where nothing is drawn (a model not read, a graph of Constants only) and typing a search
    threw on a model not read; picking one after a compared model left that model's item count and release
    picker showing."""
    (tmp_path / "a_bad.onnx").write_bytes(b"garbage")
    save(fallback_model(), "b_good.onnx")
    save(make_model([h.make_node("Constant", [], ["y"], name="c", value=nh.from_array(np.ones(2, np.float32)))],
                    [], [vi("y", T.FLOAT, [2])]), "c_const.onnx")
    page = tmp_path / "r.html"
    rc, _, _ = cli("placement", tmp_path, "--format", "html", "--ort-version", "1.24.4", "--compare", "1.31.1", "-o", page)
    assert rc == 2  # a_bad.onnx is not read
    b = opened(chromium, page)
    for k in (0, 2, 1, 0):
        b.evaluate(f"var s = document.getElementById('model-pick'); s.value = '{k}'; s.dispatchEvent(new Event('change'))")
        b.evaluate("document.activeElement.blur()")
        b.key("f")
        b.key("u")
        if k == 0:
            assert b.evaluate("document.getElementById('graphmsg').textContent") == ""
            assert b.evaluate("document.getElementById('run-pick').classList.contains('hidden')")
            b.key("/")
            b.type("relu")
            b.evaluate("new Promise(function(r){ setTimeout(r, 300); })")
            b.key("Escape")
    clean(b)


def test_a_drawn_node_says_a_then_b_whichever_release_the_lists_show(chromium, tmp_path, save, cli):
    """Comparing, a node that changes provider is drawn half A's colour, half B's, and says `CPU → CUDA`; with
    release B picked for the lists it said `CUDA → CUDA` (B's tag for A's), its tooltip B's placement twice."""
    model = save(fallback_model())
    page = tmp_path / "r.html"
    assert cli("placement", model, "--format", "html", "--ort-version", "1.24.4", "--compare", "1.31.1", "-o", page)[0] == 0
    b = opened(chromium, page)
    equal = _node_id(b, "/model/block/mask/Equal")
    drawn = ("(function(){ var g = document.querySelector('#graph .nd.sel'); return [g.querySelectorAll('text')[1].textContent, "
             "g.querySelector('title').textContent.split('\\n').slice(1)]; })()")
    for run in ("0", "1"):
        b.evaluate(f"var p = document.getElementById('run-pick'); p.value = '{run}'; p.dispatchEvent(new Event('change'))")
        b.evaluate(f"window.onnxlintReport.reveal({equal})")
        assert b.evaluate(drawn) == ["CPU \u2192 CUDA", ["A: CPU: falls back", "B: CUDA"]]
    clean(b)


def test_a_trt_page_lists_on_cpu_only_the_nodes_it_counts_on_cpu(chromium, tmp_path, save, cli):
    """`--target ort-trt`: the Equal that CUDA lacks at ORT 1.24.4 is taken by TensorRT's parser; the page counted
    it on TensorRT and coloured it so, but listed it under "On CPU"."""
    model = save(fallback_model())
    page = tmp_path / "r.html"
    rc, _, err = cli(model, "--no-cache", "--target", "ort-trt", "--ort-version", "1.24.4", "--format", "html", "-o", page)
    assert rc in (0, 1), err
    b = opened(chromium, page)
    counts = b.evaluate("(function(){ var c = {}; document.querySelectorAll('#counts [data-count]').forEach(function(e){ "
                        "c[e.dataset.count] = +e.dataset.value; }); return c; })()")
    cpu = b.evaluate("Array.prototype.map.call(document.querySelectorAll('#cpu-nodes li .path'), function(e){ return e.textContent; })")
    assert b.evaluate(f"{DATA}.runs[0].trt[{_node_id(b, '/model/block/mask/Equal')}]") == 1  # what this test is about
    assert "/model/block/mask/Equal" not in cpu
    assert len(cpu) == counts["trt_cpu"] + counts["trt_shape"]
    assert b.evaluate("document.querySelectorAll('#side h2')[3].textContent") == f"On CPU ({len(cpu)})"
    clean(b)


def test_a_node_name_nesting_scopes_deeper_than_the_call_stack_opens(chromium, tmp_path, save, cli):
    """A name of 30,000 scopes (`s/s/.../Relu`, 60 kB): the page found each node's place in the scope drawn by a
    recursion as deep as the name, and said 'this report could not be drawn: RangeError: Maximum call stack size
    exceeded' instead of the model."""
    deep = "/".join(["s"] * 30_000)
    nodes = [h.make_node("Relu", ["x"], ["a"], name="/top/Relu"), h.make_node("Abs", ["a"], ["b"], name=deep + "/Abs"),
             h.make_node("Neg", ["b"], ["y"], name="/top/Neg")]
    model = save(make_model(nodes, [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])]))
    page = tmp_path / "r.html"
    assert cli("placement", model, "--format", "html", "-o", page)[0] == 0
    b = opened(chromium, page)
    assert_page_equals_json(b, placement_json(cli, model))
    b.evaluate("window.onnxlintReport.draw(0)")
    b.evaluate("window.onnxlintReport.reveal(1)")
    assert b.evaluate("document.getElementById('details').dataset.node") == "1"
    assert b.evaluate("document.querySelector('#graph .nd.sel title').textContent").startswith("Abs  s/s/s/")
    clean(b)


def test_dragging_the_drawing_by_a_box_pans_without_opening_it(chromium, tmp_path, save, cli):
    """Panning by grabbing a scope box moved the box with the pointer, so the release fell on it: a click, and
    the drawing went into that scope. A drag pans; a click (and Enter) still opens the box."""
    model = save(fallback_model())
    page = tmp_path / "r.html"
    assert cli("placement", model, "--format", "html", "-o", page)[0] == 0
    b = opened(chromium, page)
    b.evaluate(f"window.onnxlintReport.open({_scope_id(b, 'model')})")
    crumbs = "document.getElementById('crumbs').textContent"
    view = "document.querySelector('#graph > g').getAttribute('transform')"
    before = b.evaluate(view)
    x, y = b.evaluate("(function(){ var r = document.querySelector('#graph .nd').getBoundingClientRect(); "
                      "return [r.left + r.width / 2, r.top + r.height / 2]; })()")
    b.call("Input.dispatchMouseEvent", {"type": "mousePressed", "x": x, "y": y, "button": "left", "clickCount": 1})
    for step in range(1, 6):
        b.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x + 30 * step, "y": y + 20 * step, "button": "left",
                                            "buttons": 1})
    b.call("Input.dispatchMouseEvent", {"type": "mouseReleased", "x": x + 150, "y": y + 100, "button": "left", "clickCount": 1})
    assert b.evaluate(crumbs) == "(whole graph)/model"
    assert b.evaluate(view) != before
    b.click("#graph .nd")
    assert b.evaluate(crumbs) == "(whole graph)/model/block"
    clean(b)


def test_the_tree_stays_reachable_by_tab_after_the_filter_changes(chromium, tmp_path, save, cli):
    """Only the focused row of the tree is in the Tab order; a new filter rebuilt the tree with none, and Tab
    from the filter skipped the tree (a keyboard could not get back into it)."""
    page = tmp_path / "r.html"
    assert cli("placement", save(fallback_model()), "--format", "html", "--ort-version", "1.24.4", "-o", page)[0] == 0
    b = opened(chromium, page)
    b.evaluate("document.getElementById('filter').focus()")
    b.evaluate("var s = document.getElementById('filter'); s.value = 'cpu'; s.dispatchEvent(new Event('change'))")
    b.key("Tab")
    assert b.evaluate("document.activeElement.dataset.scope") == "0"
    b.key("ArrowDown")
    assert b.evaluate("document.activeElement.dataset.scope") == str(_scope_id(b, "model"))
    clean(b)


def test_copies_of_unknown_size_are_not_shown_as_nothing(chromium, tmp_path, save, cli):
    """The tree's copy chip of a scope whose copies are all of unknown size (a dynamic batch) read "⇅ 2 · 0 B+?",
    and the summary "~0.00 MB" for 576 bytes: both read as nothing copied. The chip says the size is unknown (its
    tooltip why), a known size shows in its unit."""
    m = fallback_model()
    for v in (*m.graph.input[:1], *m.graph.output):
        v.type.tensor_type.shape.dim[0].dim_param = "batch"
    model = save(m)
    page = tmp_path / "r.html"
    assert cli("placement", model, "--format", "html", "--ort-version", "1.24.4", "-o", page)[0] == 0
    doc = placement_json(cli, model, "--ort-version", "1.24.4")
    assert doc["summary"]["bytes_unknown"] == 2 and doc["summary"]["bytes_copied"] == 0  # what this test is about
    b = opened(chromium, page)
    b.evaluate("window.onnxlintReport.open(%d)" % _scope_id(b, "block"))
    chip = b.evaluate("(function(){ var c = document.querySelector('.row[data-scope=\"%d\"] .copy');"
                      " return [c.textContent, c.title]; })()" % _scope_id(b, "block"))
    assert chip == ["\u21c5 2 \u00b7 size unknown", "2 Memcpy boundaries per run, 2 copies of unknown size (dynamic shape)"]
    nodes = b.evaluate("Array.prototype.map.call(document.querySelectorAll('.row.node .copy'), function(e){ return e.textContent; })")
    assert nodes and all(t.endswith("size unknown") for t in nodes), nodes
    clean(b)


OFFERED = ("Array.prototype.filter.call(document.getElementById('filter').options, function(o){ return !o.hidden && "
           "!o.disabled; }).map(function(o){ return o.value; })")
LEGEND = "Array.prototype.map.call(document.querySelectorAll('#graphlegend .chip'), function(e){ return e.className; })"


@pytest.mark.parametrize("kind", ["placement", "compare", "lint", "ort-trt"])
def test_a_page_offers_only_the_filters_and_legend_its_model_can_show(kind, chromium, tmp_path, save, cli):
    """"nodes that change provider" was offered on one release's page, "scopes with findings" on placement pages,
    and a TensorRT page's legends showed the Memcpy chip of copies it never shows: each always "nothing here"."""
    model = save(fallback_model())
    page = tmp_path / "r.html"
    args = {"placement": ("placement", model, "--ort-version", "1.24.4"),
            "compare": ("placement", model, "--ort-version", "1.24.4", "--compare", "1.31.1"),
            "lint": (model, "--no-cache", "--ort-version", "1.24.4"),
            "ort-trt": (model, "--no-cache", "--target", "ort-trt", "--ort-version", "1.24.4")}[kind]
    assert cli(*args, "--format", "html", "-o", page)[0] in (0, 1)
    b = opened(chromium, page)
    want = {"placement": ["all", "cpu", "copies"], "compare": ["all", "cpu", "copies", "changed"],
            "lint": ["all", "cpu", "copies", "findings"], "ort-trt": ["all", "cpu", "findings"]}[kind]
    assert b.evaluate(OFFERED) == want
    memcpy = [c for c in b.evaluate(LEGEND) if "cat-copy" in c or "memcpy" in c.lower()]
    assert bool(memcpy) == (kind != "ort-trt"), b.evaluate(LEGEND)
    clean(b)


def test_an_unread_models_line_on_the_page_names_it_once(chromium, tmp_path, save, cli):
    """The page said "bad.onnx: bad.onnx: not a valid ONNX protobuf" for a placement run's unread model."""
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    page = tmp_path / "r.html"
    assert cli("placement", bad, "--format", "html", "-o", page)[0] == 2
    b = opened(chromium, page)
    text = b.evaluate("document.querySelector('#side .fatal').textContent")
    assert text.startswith(f"{bad}: not a valid ONNX protobuf") and text.count("bad.onnx") == 1, text
    clean(b)


def test_a_selected_node_is_centred_above_the_legend_on_a_laptops_screen(chromium, tmp_path, save, cli):
    """On a laptop's screen the drawing is 300-400 px tall and the legend spans its bottom (two lines comparing two
    releases): a node selected was centred in the whole drawing, itself or the Memcpy drawn under it half under
    the legend. It is centred in the part above the legend."""
    model = save(fallback_model())
    page = tmp_path / "r.html"
    assert cli("placement", model, "--format", "html", "--ort-version", "1.24.4", "--compare", "1.31.1", "-o", page)[0] == 0
    with browser.Chromium(browser.find(), width=1366, height=560) as b:
        b.open(page)
        b.evaluate("window.onnxlintReport.reveal(%d)" % _node_id(b, "/model/block/mask/Equal"))
        box, legend, wrap = b.evaluate(
            "(function(){ function r(e){ var b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; }"
            " return [r(document.querySelector('#graph .nd.sel')), r(document.getElementById('graphlegend')),"
            " r(document.getElementById('graphwrap'))]; })()")
        assert box[3] < legend[1]
        assert abs((box[1] + box[3]) / 2 - (wrap[1] + legend[1] - 8) / 2) < 2, (box, legend, wrap)
        assert b.errors() == []


def test_bytes_are_shown_in_the_largest_unit_their_rounded_figure_reaches(chromium, tmp_path, save, cli):
    """999,999 bytes copied showed as "1000.0 kB" (the page) where the text's summary says "1.00 MB"."""
    n = 111_111  # an int64 copy to the host and a bool copy back: 9 bytes an element
    nodes = [h.make_node("Relu", ["x"], ["r"], name="relu"), h.make_node("Cast", ["r"], ["c"], name="cast", to=T.INT64),
             h.make_node("Equal", ["c", "zero"], ["e"], name="eq"), h.make_node("Where", ["e", "r", "x"], ["y"], name="where")]
    model = save(make_model(nodes, [vi("x", T.FLOAT, [n])], [vi("y", T.FLOAT, [n])],
                            [nh.from_array(np.array(0, np.int64), "zero")], opset=19))
    page = tmp_path / "r.html"
    assert cli("placement", model, "--format", "html", "--ort-version", "1.24.4", "-o", page)[0] == 0
    doc = placement_json(cli, model, "--ort-version", "1.24.4")
    assert doc["summary"]["bytes_copied"] == 9 * n and "~1.00 MB copied per run" in doc["summary"]["line"]
    b = opened(chromium, page)
    shown = b.evaluate("document.getElementById('counts').textContent")
    assert "~1.00 MB" in shown and "kB" not in shown, shown
    clean(b)

