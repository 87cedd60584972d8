#!/usr/bin/env python3
"""The HTML placement report (`--format html`) in a real browser: how fast a large model's page opens and
responds, whether every model of a set opens cleanly, and the README's screenshot.

  python benchmarks/html_report.py timings [--nodes 1000 10000 50000] [--repeat 5]
      decoders of about that many nodes (torch.onnx TorchScript style: /model/layers.N/attn/..., shape
      computations, dynamic batch and sequence), each rendered by `onnxlint placement --format html` and opened
      in headless Chromium, side by side: page size, render time, first paint, ready, expand/collapse of the
      widest scope, drawing a scope, a search
  python benchmarks/html_report.py check DIR_OR_MODEL ... [--compare VERSION] [--limit N]
      every model: the page opens offline with no console error and no request, and its counts and CPU nodes
      equal `onnxlint placement --format json`'s
  python benchmarks/html_report.py screenshot [--out docs/placement-report.png]
      the README's picture: the demo decoder (`demo_decoder()`, a dynamo-style export at opset 23) placed at
      ORT 1.24.4 and compared with 1.31.1, its first layer's attention drawn

Needs Chromium (`apt-get install chromium`; tests/browser.py drives it over the DevTools pipe, no dependency).
The generated models and pages go to $TMPDIR/onnxlint-html-bench/.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from browser import Chromium  # noqa: E402  tests/browser.py: the DevTools client the tests use

OUT = Path(tempfile.gettempdir()) / "onnxlint-html-bench"  # the generated models and pages


# ----------------------------------------------------------------------------- models


class _Builder:
    def __init__(self, seed: int = 0):
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []

    def w(self, name: str, shape: list[int], scale: float = 0.05) -> str:
        self.inits.append(nh.from_array((self.rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def const(self, name: str, value, dtype=np.int64) -> str:
        self.inits.append(nh.from_array(np.array(value, dtype), name))
        return name

    def n(self, op: str, ins: list[str], name: str, outs: int = 1, **attrs) -> str:
        outputs = [f"{name}_output_{k}" for k in range(outs)]
        self.nodes.append(h.make_node(op, ins, outputs, name=name, **attrs))
        return outputs[0]


def demo_decoder(layers: int = 4, hidden: int = 32, heads: int = 4, seq: int = 64, vocab: int = 256) -> onnx.ModelProto:
    """A small decoder as torch.onnx's dynamo exporter writes one at opset 23 (static shapes): RMSNormalization,
    RotaryEmbedding and Attention ops, an attention mask made with Equal. Before ORT 1.25 the CUDA EP has no
    Attention kernel and before 1.27 none for Equal-19 (the kernel tables): those nodes run on CPU, with Memcpy around them."""
    b = _Builder()
    hd = hidden // heads
    x = b.n("Gather", [b.w("model.embed_tokens.weight", [vocab, hidden]), "input_ids"], "/model/embed_tokens/Gather")
    m = b.n("Equal", ["attention_mask", b.const("/model/Constant_output_0", 0)], "/model/Equal")
    m = b.n("Where", [m, b.const("/model/Constant_1_output_0", -1e4, np.float32), b.const("/model/Constant_2_output_0", 0, np.float32)],
            "/model/Where")
    mask = b.n("Unsqueeze", [m, b.const("/model/Constant_3_output_0", [1, 2])], "/model/Unsqueeze")
    cos = b.w("model.rotary_emb.cos_cached", [1, seq, hd // 2], 1.0)
    sin = b.w("model.rotary_emb.sin_cached", [1, seq, hd // 2], 1.0)
    for i in range(layers):
        p = f"/model/layers.{i}"
        r = b.n("RMSNormalization", [x, b.w(f"model.layers.{i}.input_layernorm.weight", [hidden])],
                f"{p}/input_layernorm/RMSNormalization", axis=-1)
        q = b.n("MatMul", [r, b.w(f"model.layers.{i}.self_attn.q_proj.weight", [hidden, hidden])], f"{p}/self_attn/q_proj/MatMul")
        k = b.n("MatMul", [r, b.w(f"model.layers.{i}.self_attn.k_proj.weight", [hidden, hidden])], f"{p}/self_attn/k_proj/MatMul")
        v = b.n("MatMul", [r, b.w(f"model.layers.{i}.self_attn.v_proj.weight", [hidden, hidden])], f"{p}/self_attn/v_proj/MatMul")
        q = b.n("RotaryEmbedding", [q, cos, sin], f"{p}/self_attn/RotaryEmbedding", num_heads=heads)
        k = b.n("RotaryEmbedding", [k, cos, sin], f"{p}/self_attn/RotaryEmbedding_1", num_heads=heads)
        a = b.n("Attention", [q, k, v, mask], f"{p}/self_attn/Attention", q_num_heads=heads, kv_num_heads=heads)
        o = b.n("MatMul", [a, b.w(f"model.layers.{i}.self_attn.o_proj.weight", [hidden, hidden])], f"{p}/self_attn/o_proj/MatMul")
        x = b.n("Add", [x, o], f"{p}/Add")
        r = b.n("RMSNormalization", [x, b.w(f"model.layers.{i}.post_attention_layernorm.weight", [hidden])],
                f"{p}/post_attention_layernorm/RMSNormalization", axis=-1)
        g = b.n("MatMul", [r, b.w(f"model.layers.{i}.mlp.gate_proj.weight", [hidden, 2 * hidden])], f"{p}/mlp/gate_proj/MatMul")
        g = b.n("Mul", [g, b.n("Sigmoid", [g], f"{p}/mlp/act_fn/Sigmoid")], f"{p}/mlp/act_fn/Mul")
        u = b.n("MatMul", [r, b.w(f"model.layers.{i}.mlp.up_proj.weight", [hidden, 2 * hidden])], f"{p}/mlp/up_proj/MatMul")
        d = b.n("MatMul", [b.n("Mul", [g, u], f"{p}/mlp/Mul"), b.w(f"model.layers.{i}.mlp.down_proj.weight", [2 * hidden, hidden])],
                f"{p}/mlp/down_proj/MatMul")
        x = b.n("Add", [x, d], f"{p}/Add_1")
    x = b.n("RMSNormalization", [x, b.w("model.norm.weight", [hidden])], "/model/norm/RMSNormalization", axis=-1)
    b.nodes.append(h.make_node("MatMul", [x, b.w("lm_head.weight", [hidden, vocab])], ["logits"], name="/lm_head/MatMul"))
    g = h.make_graph(b.nodes, "main_graph",
                     [h.make_tensor_value_info("input_ids", T.INT64, [1, seq]),
                      h.make_tensor_value_info("attention_mask", T.INT64, [1, seq])],
                     [h.make_tensor_value_info("logits", T.FLOAT, [1, seq, vocab])], initializer=b.inits)
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 23)], producer_name="pytorch", producer_version="2.9.0")
    model.ir_version = 10
    return model


def torchscript_decoder(layers: int, hidden: int = 16, heads: int = 2, vocab: int = 64) -> onnx.ModelProto:
    """A GPT-2-like decoder as torch.onnx's TorchScript exporter writes one at opset 17, dynamic batch and
    sequence: each attention's reshapes read their shapes through Shape/Gather/Unsqueeze/Concat (the shape
    computations ORT keeps on CPU on purpose), 57 nodes per layer."""
    b = _Builder()
    hd = hidden // heads
    x = b.n("Gather", [b.w("transformer.wte.weight", [vocab, hidden]), "input_ids"], "/transformer/wte/Gather")
    c0, c1, c2 = b.const("/Constant_0", [0]), b.const("/Constant_1", [1]), b.const("/Constant_2", [2])
    heads_c, hd_c, hidden_c = b.const("/Constant_heads", [heads]), b.const("/Constant_hd", [hd]), b.const("/Constant_hidden", [hidden])
    half = b.const("/Constant_half", 0.5, np.float32)
    one = b.const("/Constant_one", 1.0, np.float32)
    sqrt2 = b.const("/Constant_sqrt2", 1.4142135, np.float32)
    scale = b.const("/Constant_scale", float(np.sqrt(hd)), np.float32)
    for i in range(layers):
        p = f"/transformer/h.{i}"
        ln = b.n("LayerNormalization", [x, b.w(f"h.{i}.ln_1.weight", [hidden]), b.w(f"h.{i}.ln_1.bias", [hidden])],
                 f"{p}/ln_1/LayerNormalization", axis=-1)
        qkv = []
        for proj in ("q_proj", "k_proj", "v_proj"):
            t = b.n("MatMul", [ln, b.w(f"h.{i}.attn.{proj}.weight", [hidden, hidden])], f"{p}/attn/{proj}/MatMul")
            t = b.n("Add", [b.w(f"h.{i}.attn.{proj}.bias", [hidden]), t], f"{p}/attn/{proj}/Add")
            sh = b.n("Shape", [t], f"{p}/attn/{proj}/Shape")
            bsz = b.n("Gather", [sh, b.const(f"{p}/attn/{proj}/Constant", 0)], f"{p}/attn/{proj}/Gather", axis=0)
            sl = b.n("Gather", [sh, b.const(f"{p}/attn/{proj}/Constant_1", 1)], f"{p}/attn/{proj}/Gather_1", axis=0)
            ub = b.n("Unsqueeze", [bsz, c0], f"{p}/attn/{proj}/Unsqueeze")
            us = b.n("Unsqueeze", [sl, c0], f"{p}/attn/{proj}/Unsqueeze_1")
            shape = b.n("Concat", [ub, us, heads_c, hd_c], f"{p}/attn/{proj}/Concat", axis=0)
            t = b.n("Reshape", [t, shape], f"{p}/attn/{proj}/Reshape")
            t = b.n("Transpose", [t], f"{p}/attn/{proj}/Transpose", perm=[0, 2, 3, 1] if proj == "k_proj" else [0, 2, 1, 3])
            qkv.append(t)
        s = b.n("MatMul", [qkv[0], qkv[1]], f"{p}/attn/MatMul")
        s = b.n("Div", [s, scale], f"{p}/attn/Div")
        s = b.n("Softmax", [s], f"{p}/attn/Softmax", axis=-1)
        a = b.n("MatMul", [s, qkv[2]], f"{p}/attn/MatMul_1")
        a = b.n("Transpose", [a], f"{p}/attn/Transpose", perm=[0, 2, 1, 3])
        sh = b.n("Shape", [a], f"{p}/attn/Shape")
        bsz = b.n("Gather", [sh, b.const(f"{p}/attn/Constant", 0)], f"{p}/attn/Gather", axis=0)
        sl = b.n("Gather", [sh, b.const(f"{p}/attn/Constant_1", 1)], f"{p}/attn/Gather_1", axis=0)
        shape = b.n("Concat", [b.n("Unsqueeze", [bsz, c0], f"{p}/attn/Unsqueeze"), b.n("Unsqueeze", [sl, c0], f"{p}/attn/Unsqueeze_1"),
                               hidden_c], f"{p}/attn/Concat", axis=0)
        a = b.n("Reshape", [a, shape], f"{p}/attn/Reshape")
        a = b.n("MatMul", [a, b.w(f"h.{i}.attn.c_proj.weight", [hidden, hidden])], f"{p}/attn/c_proj/MatMul")
        a = b.n("Add", [b.w(f"h.{i}.attn.c_proj.bias", [hidden]), a], f"{p}/attn/c_proj/Add")
        x = b.n("Add", [x, a], f"{p}/Add")
        ln = b.n("LayerNormalization", [x, b.w(f"h.{i}.ln_2.weight", [hidden]), b.w(f"h.{i}.ln_2.bias", [hidden])],
                 f"{p}/ln_2/LayerNormalization", axis=-1)
        f = b.n("MatMul", [ln, b.w(f"h.{i}.mlp.c_fc.weight", [hidden, 4 * hidden])], f"{p}/mlp/c_fc/MatMul")
        f = b.n("Add", [b.w(f"h.{i}.mlp.c_fc.bias", [4 * hidden]), f], f"{p}/mlp/c_fc/Add")
        e = b.n("Erf", [b.n("Div", [f, sqrt2], f"{p}/mlp/act/Div")], f"{p}/mlp/act/Erf")
        f = b.n("Mul", [b.n("Mul", [f, b.n("Add", [e, one], f"{p}/mlp/act/Add")], f"{p}/mlp/act/Mul"), half], f"{p}/mlp/act/Mul_1")
        f = b.n("MatMul", [f, b.w(f"h.{i}.mlp.c_proj.weight", [4 * hidden, hidden])], f"{p}/mlp/c_proj/MatMul")
        f = b.n("Add", [b.w(f"h.{i}.mlp.c_proj.bias", [hidden]), f], f"{p}/mlp/c_proj/Add")
        x = b.n("Add", [x, f], f"{p}/Add_1")
    del c1, c2
    x = b.n("LayerNormalization", [x, b.w("ln_f.weight", [hidden]), b.w("ln_f.bias", [hidden])],
            "/transformer/ln_f/LayerNormalization", axis=-1)
    b.nodes.append(h.make_node("MatMul", [x, b.w("lm_head.weight", [hidden, vocab])], ["logits"], name="/lm_head/MatMul"))
    g = h.make_graph(b.nodes, "main_graph", [h.make_tensor_value_info("input_ids", T.INT64, ["batch_size", "sequence_length"])],
                     [h.make_tensor_value_info("logits", T.FLOAT, ["batch_size", "sequence_length", vocab])], initializer=b.inits)
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], producer_name="pytorch", producer_version="2.1.0")
    model.ir_version = 8
    return model


NODES_PER_LAYER = 57


# ----------------------------------------------------------------------------- helpers


def onnxlint(*args: str, **kw) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("onnxlint")
    return subprocess.run([str(exe), *args], capture_output=True, text=True, **kw)


def page_counts(b: Chromium) -> dict:
    """What the page shows: its counts table (release A), its CPU node list, its console and requests."""
    return b.evaluate("""(function(){
      var c = {};
      document.querySelectorAll('#counts [data-count][data-run="0"]').forEach(function(e){ c[e.dataset.count] = +e.dataset.value; });
      var more = document.querySelector('#cpu-nodes + .show-all'); if (more) more.click();
      var cpu = Array.prototype.map.call(document.querySelectorAll('#cpu-nodes li .path'), function(e){ return e.textContent; });
      return {counts: c, cpu: cpu};
    })()""")


def in_process(*args: str) -> int:
    """onnxlint's command line in this process (a set of 2,000 models: no start-up per model)."""
    from onnxlint.cli import main

    return main([str(a) for a in args])


def json_counts(model: Path, tmp: Path, *extra: str) -> dict:
    out = tmp / "placement.json"
    if in_process("placement", str(model), "--format", "json", "-o", str(out), *extra):
        raise RuntimeError("placement --format json failed")
    doc = json.loads(out.read_text(encoding="utf-8"))[0]
    from onnxlint.support.escape import text as esc

    cpu = [esc(n["node"][len("graph/"):] if n["node"].startswith("graph/") else n["node"]) for n in doc["nodes"]
           if n["ep"] == "CPUExecutionProvider"]
    return {"summary": doc["summary"], "cpu": cpu}


KEYS = ("nodes", "on_preferred_ep", "real_fallback", "shape_only", "unsupported", "folded", "eliminated", "boundaries",
        "bytes_copied", "bytes_unknown")


def compare_counts(page: dict, js: dict) -> list[str]:
    problems = [f"{k}: page {page['counts'].get(k)} json {js['summary'][k]}" for k in KEYS if page["counts"].get(k) != js["summary"][k]]
    if sorted(page["cpu"]) != sorted(js["cpu"]):
        problems.append(f"CPU nodes differ: page {len(page['cpu'])}, json {len(js['cpu'])}")
    return problems


# ----------------------------------------------------------------------------- commands


TIMING_JS = """(async function(){
  function frame(){ return new Promise(function(r){ requestAnimationFrame(function(){ requestAnimationFrame(r); }); }); }
  var R = window.onnxlintReport, out = {};
  // the paint timing entry is queued a little after the frame it describes
  out.first_paint = await new Promise(function(res){
    var done = false;
    new PerformanceObserver(function(list){ list.getEntries().forEach(function(e){
      if (e.name === 'first-contentful-paint' && !done) { done = true; res(e.startTime); } }); }).observe({type: 'paint', buffered: true});
    setTimeout(function(){ if (!done) res(null); }, 5000);
  });
  var ready = performance.getEntriesByName('onnxlint-ready')[0];
  out.ready = ready ? ready.startTime : null;
  // the widest scope (most children: PART at most), opened in the tree
  var s = R.widestScope(), exp = [], col = [], draw = [], find = [], t0, t1;
  R.open(s); R.collapse(s); await frame();
  // each: the script's work with the layout it forces (sync), and until the second frame after it (painted)
  function timed(list, f) { t0 = performance.now(); f(); document.body.offsetHeight; t1 = performance.now(); }
  for (var k = 0; k < REPEAT; k++) {
    timed(exp, function(){ R.expand(s); }); out.rows = document.querySelectorAll('.row').length;
    await frame(); exp.push([t1 - t0, performance.now() - t0]);
    timed(col, function(){ R.collapse(s); }); await frame(); col.push([t1 - t0, performance.now() - t0]);
    timed(draw, function(){ R.draw(s); }); await frame(); draw.push([t1 - t0, performance.now() - t0]);
    var box = document.getElementById('search'); box.value = 'MatMul';
    timed(find, function(){ R.search(); }); await frame(); find.push([t1 - t0, performance.now() - t0]);
  }
  out.expand = exp; out.collapse = col; out.draw = draw; out.search = find; out.items = R.items(s);
  return out;
})()"""


def timings(args: argparse.Namespace) -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in args.nodes:
        layers = max(1, round(n / NODES_PER_LAYER))
        model = OUT / f"decoder_{layers}l.onnx"
        if not model.exists():
            onnx.save(torchscript_decoder(layers), model)
        page = OUT / f"decoder_{layers}l.html"
        t0 = time.perf_counter()
        got = onnxlint("placement", str(model), "--format", "html", "-o", str(page))
        render_s = time.perf_counter() - t0
        if got.returncode:
            print(got.stderr, file=sys.stderr)
            return 1
        nodes = len(onnx.load(model, load_external_data=False).graph.node)
        opened = []
        figures = None
        for _ in range(args.repeat):
            with Chromium() as b:
                opened.append(b.open(page))
                if figures is None:
                    figures = b.evaluate(TIMING_JS.replace("REPEAT", str(args.repeat)), timeout=300)
                    figures["errors"] = b.errors()
                    figures["requests"] = b.outside_requests()
        assert figures is not None

        def med(key: str, figures: dict = figures) -> str:  # median script+layout time / until painted, in ms
            pairs = figures[key]
            return f"{statistics.median(p[0] for p in pairs):.1f} / {statistics.median(p[1] for p in pairs):.0f}"

        rows.append((nodes, page.stat().st_size, render_s, statistics.median(opened), figures["first_paint"], figures["ready"],
                     med("expand"), med("collapse"), med("draw"), med("search"), figures["items"],
                     len(figures["errors"]) + len(figures["requests"])))
    print("| nodes | page | `placement --format html` | navigation to ready (median) | first paint | ready | "
          "expand the widest scope | collapse it | draw it | search 'MatMul' | its items | errors, requests |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(f"| {r[0]:,} | {r[1] / 1e6:.2f} MB | {r[2]:.2f} s | {r[3] * 1000:.0f} ms | {r[4]:.0f} ms | {r[5]:.0f} ms | "
              f"{r[6]} | {r[7]} | {r[8]} | {r[9]} | {r[10]} | {r[11]} |")
    print("(ms; expand, collapse, draw, search: the script with the layout it forces / until the second frame after it, "
          f"median of {args.repeat}; first paint and ready: from navigation start)")
    return 0


def check(args: argparse.Namespace) -> int:
    from onnxlint.model import loading

    models = loading.expand_paths(args.paths)[: args.limit or None]
    bad = with_cpu = with_copies = 0
    extra = ["--ort-version", args.ort_version] if args.ort_version else []
    with tempfile.TemporaryDirectory() as tmp, Chromium() as b:
        for k, model in enumerate(models, 1):
            page = Path(tmp) / "page.html"
            rc = in_process("placement", str(model), "--format", "html", "-o", str(page), *extra,
                            *(["--compare", args.compare] if args.compare else []))
            if rc:
                print(f"{model}: placement --format html exited {rc}")
                bad += 1
                continue
            b.console.clear()
            b.requests.clear()
            try:
                b.open(page)
                shown = page_counts(b)
                problems = compare_counts(shown, json_counts(model, Path(tmp), *extra))
                with_cpu += bool(shown["cpu"])
                with_copies += shown["counts"].get("boundaries", 0) > 0
            except Exception as exc:  # noqa: BLE001  one line per model, the run goes on
                problems = [f"{type(exc).__name__}: {exc}"]
            problems += [f"console: {e}" for e in b.errors()] + [f"request: {u}" for u in b.outside_requests()]
            if problems:
                bad += 1
                print(f"{model}: " + "; ".join(problems))
            if k % 25 == 0:
                print(f"... {k}/{len(models)}, {bad} with problems", file=sys.stderr)
    print(f"{len(models)} models, {bad} with problems ({with_cpu} with nodes on CPU, {with_copies} with Memcpy copies)")
    return 1 if bad else 0


def screenshot(args: argparse.Namespace) -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    model = OUT / "demo_decoder.onnx"
    onnx.save(demo_decoder(), model)
    page = OUT / "demo_decoder.html"
    got = onnxlint("placement", model.name, "--format", "html", "--ort-version", "1.24.4", "--compare", "1.31.1", "-o", page.name,
                   cwd=OUT)
    if got.returncode:
        print(got.stderr, file=sys.stderr)
        return 1
    with Chromium(width=1600, height=940) as b:
        b.open(page)
        b.evaluate("""(function(){ var R = window.onnxlintReport, i = Array.prototype.indexOf.call(
            JSON.parse(document.getElementById('onnxlint-data').textContent).models[0].nodes.path, '/model/layers.0/self_attn/Attention');
            R.reveal(i); document.querySelector('#graphpane .toolbar button[title^="fit"]').click(); })()""")
        time.sleep(0.3)
        b.screenshot(args.out)
        if b.errors():
            print("console:", b.errors(), file=sys.stderr)
            return 1
    print(f"wrote {args.out}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("timings")
    t.add_argument("--nodes", type=int, nargs="+", default=[1000, 10000, 50000])
    t.add_argument("--repeat", type=int, default=5)
    c = sub.add_parser("check")
    c.add_argument("paths", nargs="+")
    c.add_argument("--compare")
    c.add_argument("--ort-version")
    c.add_argument("--limit", type=int, default=0)
    s = sub.add_parser("screenshot")
    s.add_argument("--out", type=Path, default=ROOT / "docs" / "placement-report.png")
    args = ap.parse_args()
    return {"timings": timings, "check": check, "screenshot": screenshot}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
