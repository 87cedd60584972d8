/* onnxlint placement report: reads the JSON block, draws the page. Model text enters the page only through
   textContent and SVG text nodes (never as markup); no request is made. */
(function () {
  "use strict";

  var CATS = ["dev", "trt", "cpu", "shape", "none", "removed", "memcpy"];
  var DEV = 0, TRT = 1, CPU = 2, SHAPE = 3, NONE = 4, REMOVED = 5, MEMCPY = 6;
  var SVGNS = "http://www.w3.org/2000/svg";
  var MAX_HITS = 200, LIST_FIRST = 300;
  var STATUS_WORDS = { device: "on the target's provider", fallback: "falls back", expanded: "its function body is inlined",
    deliberate: "on CPU on purpose (ORT's GetCpuPreferredNodes)", unsupported: "no provider can run it: ORT refuses the session",
    folded: "folded into a constant by ORT's optimizations", eliminated: "removed by ORT's optimizations",
    refused: "ORT refuses the whole model", skipped: "not placed: ORT refuses the model" };

  var doc, M = null, state = {};

  // ------------------------------------------------------------------ DOM helpers (text only)
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function add(parent) {
    for (var i = 1; i < arguments.length; i++) if (arguments[i]) parent.appendChild(arguments[i]);
    return parent;
  }
  function svg(tag, attrs) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) if (Object.prototype.hasOwnProperty.call(attrs, k)) e.setAttribute(k, String(attrs[k]));
    return e;
  }
  function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); }
  function $(id) { return document.getElementById(id); }
  function fmtInt(n) { return Number(n).toLocaleString("en-US"); }
  function fmtBytes(b) {
    if (b === null || b === undefined) return "? bytes";
    if (b < 1e3) return b + " B";
    // the largest unit the rounded figure reaches: 999,950 bytes are "1.00 MB", not "1000.0 kB"
    if (+(b / 1e9).toFixed(2) >= 1) return (b / 1e9).toFixed(2) + " GB";
    if (+(b / 1e6).toFixed(2) >= 1) return (b / 1e6).toFixed(2) + " MB";
    return (b / 1e3).toFixed(1) + " kB";
  }
  // a node's or scope's copies, "⇅ 2 · 576 B": "0 B+?" read as nothing copied where every size was unknown
  function copyChip(n, bytes, unknown) {
    var size = !unknown ? fmtBytes(bytes) : bytes ? fmtBytes(bytes) + " + " + unknown + " unknown" : "size unknown";
    var chip = el("span", "copy", "\u21c5 " + n + " \u00b7 " + size);
    chip.title = plural(n, "Memcpy boundary", "Memcpy boundaries") + " per run" +
      (unknown ? ", " + plural(unknown, "copy", "copies") + " of unknown size (dynamic shape)" : "");
    return chip;
  }
  function plural(n, one, many) { return fmtInt(n) + " " + (n === 1 ? one : (many || one + "s")); }

  // ------------------------------------------------------------------ the model's data, prepared once
  function prepare(m) {
    var N = m.nodes.path.length, S = m.scopes.name.length, R = m.runs.length, i, s, r;
    var parent = m.scopes.parent, scopeOf = m.nodes.scope;
    var kids = [], leaves = [], first = new Int32Array(S).fill(-1), depth = new Int32Array(S);
    for (s = 0; s < S; s++) { kids.push([]); leaves.push([]); }
    for (s = 1; s < S; s++) kids[parent[s]].push(s);
    for (i = 0; i < N; i++) {
      leaves[scopeOf[i]].push(i);
      for (s = scopeOf[i]; s >= 0 && first[s] < 0; s = parent[s]) first[s] = i;
    }
    for (s = 1; s < S; s++) depth[s] = depth[parent[s]] + 1;  // parents come first
    for (s = 0; s < S; s++) kids[s].sort(function (a, b) { return first[a] - first[b]; });
    var preferred = m.runs[0].summary.preferred_ep === "CPUExecutionProvider" ? "CPU" : "CUDA";
    var cats = [], keys = [], agg = [], copies = [];
    for (r = 0; r < R; r++) {
      var run = m.runs[r], c = new Uint8Array(N), k = new Array(N);
      for (i = 0; i < N; i++) {
        var st = run.status[i], ep = run.ep[i];
        if (st === "folded" || st === "eliminated") c[i] = REMOVED;
        else if (run.trt && run.trt[i]) c[i] = TRT;
        else if (ep === preferred) c[i] = DEV;
        else if (st === "deliberate") c[i] = m.nodes.large[i] ? CPU : SHAPE;
        else if (ep === "CPU") c[i] = CPU;
        else if (ep === "") c[i] = NONE;
        else c[i] = DEV;
        k[i] = c[i] === REMOVED ? "removed by ORT" : c[i] === TRT ? "TensorRT" : (ep || "no provider");
      }
      cats.push(c); keys.push(k);
      var a = new Int32Array(S * 7), cp = { n: new Int32Array(S), bytes: new Float64Array(S), unknown: new Int32Array(S) };
      for (i = 0; i < N; i++) for (s = scopeOf[i]; s >= 0; s = parent[s]) a[s * 7 + c[i]]++;
      var byCons = {}, byProd = {};
      run.boundaries.forEach(function (b, bi) {
        var at = b[3] >= 0 ? b[3] : b[2];
        if (b[3] >= 0) (byCons[b[3]] = byCons[b[3]] || []).push(bi);
        if (b[2] >= 0) (byProd[b[2]] = byProd[b[2]] || []).push(bi);
        if (at < 0) return;
        for (s = scopeOf[at]; s >= 0; s = parent[s]) {
          a[s * 7 + MEMCPY]++; cp.n[s]++;
          if (b[4] === null) cp.unknown[s]++; else cp.bytes[s] += b[4];
        }
      });
      cp.byCons = byCons; cp.byProd = byProd;
      agg.push(a); copies.push(cp);
    }
    var changed = null, changedIn = null;
    if (R > 1) {
      changed = new Uint8Array(N); changedIn = new Int32Array(S);
      for (i = 0; i < N; i++) if (keys[0][i] !== keys[1][i]) {
        changed[i] = 1;
        for (s = scopeOf[i]; s >= 0; s = parent[s]) changedIn[s]++;
      }
    }
    var byNode = {}, fIn = new Int32Array(S), worstIn = new Int8Array(S).fill(-1);
    var RANK = { info: 0, warning: 1, error: 2 };
    m.findings.forEach(function (f, fi) {
      if (f.node < 0) return;
      (byNode[f.node] = byNode[f.node] || []).push(fi);
      for (s = scopeOf[f.node]; s >= 0; s = parent[s]) {
        fIn[s]++;
        worstIn[s] = Math.max(worstIn[s], RANK[f.severity] || 0);
      }
    });
    // a scope holding a single node (torch's /model/layers.0/attn/q_proj/MatMul) is shown as that node
    var size = new Int32Array(S), single = new Int32Array(S).fill(-1);
    for (i = 0; i < N; i++) for (s = scopeOf[i]; s >= 0; s = parent[s]) size[s]++;
    for (s = 1; s < S; s++) if (size[s] === 1) single[s] = first[s];
    return { m: m, N: N, S: S, R: R, kids: kids, leaves: leaves, first: first, depth: depth, cats: cats, keys: keys,
             size: size, single: single,
             agg: agg, copies: copies, changed: changed, changedIn: changedIn, findingsOf: byNode, findingsIn: fIn,
             worstIn: worstIn, preferred: preferred, consumers: null, lower: null, trt: !!m.runs[0].trt };
  }

  function consumersOf(i) {
    if (!M.consumers) {
      var cons = new Array(M.N);
      for (var j = 0; j < M.N; j++) cons[j] = [];
      M.m.nodes.preds.forEach(function (ps, j) { ps.forEach(function (p) { cons[p].push(j); }); });
      M.consumers = cons;
    }
    return M.consumers[i];
  }

  // ------------------------------------------------------------------ words
  function catLabel(c) {
    return [M.preferred === "CPU" ? "CPU (the target)" : "CUDA", "TensorRT", "CPU: falls back",
            "CPU on purpose: shape computation", "no provider", "removed by ORT (folded or eliminated)",
            "Memcpy: created by ORT"][c];
  }
  function catTag(c, st) {
    if (c === REMOVED) return st === "folded" ? "folded" : "elim.";
    return [M.preferred, "TRT", "CPU", "shape", "none", "", "copy"][c];
  }
  function chip(c, st, title) {
    var e = el("span", "chip cat-" + CATS[c], catTag(c, st));
    e.title = title || catLabel(c);
    return e;
  }
  function scopeLabel(s) {
    var kind = M.m.scopes.kind[s], name = M.m.scopes.name[s];
    if (s === 0) return "(whole graph)";
    if (kind === "part") return name;
    return name;
  }
  function relName(i, s) {  // the node's name below scope s: q_proj/MatMul for a single-node scope
    var parts = [M.m.nodes.name[i]];
    for (var x = M.m.nodes.scope[i]; x >= 0 && x !== s; x = M.m.scopes.parent[x]) if (M.m.scopes.kind[x] !== "part") parts.unshift(M.m.scopes.name[x]);
    return parts.join("/");
  }
  function home(i) {  // the scope whose drawing shows node i as itself
    var s = M.m.nodes.scope[i];
    while (s > 0 && M.single[s] >= 0) s = M.m.scopes.parent[s];
    return s;
  }
  function runLabel(r) {
    var run = M.m.runs[r];
    return "ORT " + run.ort_version + (run.trt_version ? " + TensorRT " + run.trt_version : "");
  }
  function scopePath(s) {
    var parts = [];
    for (; s > 0; s = M.m.scopes.parent[s]) if (M.m.scopes.kind[s] !== "part") parts.unshift(M.m.scopes.name[s]);
    return "/" + parts.join("/");
  }

  // ------------------------------------------------------------------ header and model picker
  function header() {
    var h = $("hdr"); clear(h);
    add(h, add(el("div", "brand", "onnxlint "), el("span", null, doc.kind === "lint" ? "lint report" : "placement report")));
    if (doc.models.length > 1) {
      var sel = el("select"); sel.id = "model-pick"; sel.setAttribute("aria-label", "model");
      doc.models.forEach(function (m, k) {
        var o = el("option", null, m.file + (m.error ? " (not read)" : "")); o.value = String(k); sel.appendChild(o);
      });
      sel.value = String(state.model);
      sel.addEventListener("change", function () { openModel(+sel.value); });
      h.appendChild(sel);
    } else {
      var f = el("div", "file name", doc.models[0].file); f.title = doc.models[0].file; h.appendChild(f);
    }
    var rel = el("div", "rel"); rel.id = "hdr-rel"; h.appendChild(rel);
    h.appendChild(el("div", "grow"));
    var box = el("div"); box.id = "search-box";
    var inp = el("input"); inp.id = "search"; inp.type = "search"; inp.placeholder = "Search node name or op type  ( / )";
    inp.setAttribute("aria-label", "search nodes by name or op type"); inp.autocomplete = "off"; inp.spellcheck = false;
    var res = el("div", "hidden"); res.id = "results"; res.setAttribute("role", "listbox");
    add(box, inp, res); h.appendChild(box);
    var help = el("button", null, "?"); help.title = "keyboard"; help.id = "help-btn";
    help.addEventListener("click", function () { $("help").classList.toggle("hidden"); });
    h.appendChild(help);
    inp.addEventListener("input", function () { clearTimeout(state.searchTimer); state.searchTimer = setTimeout(search, 80); });
    inp.addEventListener("keydown", searchKeys);
  }

  // ------------------------------------------------------------------ summary panel
  function counts(r) {
    var i, run = M.m.runs[r], c = { nodes: M.N, on_preferred_ep: 0, real_fallback: 0, shape_only: 0, unsupported: 0,
      folded: 0, eliminated: 0, boundaries: run.boundaries.length, bytes_copied: 0, bytes_unknown: 0, on_trt: 0, cpu: 0 };
    for (i = 0; i < M.N; i++) {
      var st = run.status[i];
      if (st === "device" || st === "expanded") c.on_preferred_ep++;
      else if (st === "fallback") c.real_fallback++;
      else if (st === "deliberate") { if (M.m.nodes.large[i]) c.real_fallback++; else c.shape_only++; }
      else if (st === "unsupported") c.unsupported++;
      else if (st === "folded") c.folded++;
      else if (st === "eliminated") c.eliminated++;
      if (run.ep[i] === "CPU") c.cpu++;
    }
    // by what the page colours: with TensorRT, a node its parser takes is on TensorRT whatever ORT's CUDA placement says
    var cats = M.cats[r];
    c.by_cat = [0, 0, 0, 0, 0, 0, 0];
    for (i = 0; i < M.N; i++) c.by_cat[cats[i]]++;
    c.on_trt = c.by_cat[TRT]; c.trt_cuda = c.by_cat[DEV]; c.trt_cpu = c.by_cat[CPU]; c.trt_shape = c.by_cat[SHAPE]; c.trt_none = c.by_cat[NONE];
    run.boundaries.forEach(function (b) { if (b[4] === null) c.bytes_unknown++; else c.bytes_copied += b[4]; });
    return c;
  }

  function summary() {
    var side = $("side"); clear(side);
    var m = M.m, r0 = m.runs[0];
    add(side, el("h2", null, "Model"));
    var dl = el("dl", "facts");
    function fact(k, v, cls) { add(dl, el("dt", null, k), el("dd", cls, v)); }
    fact("file", m.file, "name");
    fact("target", m.target + ": " + m.target_description);
    m.runs.forEach(function (run, r) {
      var tables = Object.keys(run.kernel_tables).map(function (k) { return k.replace("ExecutionProvider", "") + " " + run.kernel_tables[k]; });
      fact(M.R > 1 ? (r === 0 ? "release A" : "release B") : "release", runLabel(r) + " (kernel tables: " + tables.join(", ") + ")");
    });
    fact("optimization", r0.optimization + " (ORT's graph optimization level)");
    side.appendChild(dl);

    add(side, el("h2", null, "Where the nodes run"));
    var cs = m.runs.map(function (_, r) { return counts(r); });
    var t = el("table", "counts"); t.id = "counts";
    if (M.R > 1) {
      var hr = el("tr"); add(hr, el("th"), el("th", null, "A " + m.runs[0].ort_version), el("th", null, "B " + m.runs[1].ort_version));
      t.appendChild(hr);
    }
    function row(key, label, c, fmt, cls, st) {
      var tr = el("tr", cls), td = el("td");
      if (c !== null) td.appendChild(chip(c, st)), td.appendChild(document.createTextNode(" "));
      td.appendChild(document.createTextNode(label));
      tr.appendChild(td);
      cs.forEach(function (x, r) {
        var v = el("td", null, fmt ? fmt(x[key], x) : fmtInt(x[key]));
        v.setAttribute("data-count", key); v.setAttribute("data-run", String(r)); v.setAttribute("data-value", String(x[key]));
        tr.appendChild(v);
      });
      t.appendChild(tr);
    }
    var pref = M.preferred === "CPU" ? "CPU" : "CUDA";
    row("nodes", "nodes", null, null, "total");
    if (M.trt) {  // what the TensorRT EP takes, and where the rest falls through (ORT's CUDA placement)
      row("on_trt", "on TensorRT (its parser takes them)", TRT);
      row("trt_cuda", "fall through to CUDA", DEV);
      row("trt_cpu", "fall through to CPU", CPU);
      row("trt_shape", "CPU on purpose (shape computations)", SHAPE);
      row("trt_none", "with no provider", NONE);
    } else {
      row("on_preferred_ep", "on " + pref, DEV);
      row("real_fallback", "fall back to CPU", CPU);
      row("shape_only", "CPU on purpose (shape computations)", SHAPE);
      row("unsupported", "with no provider", NONE);
    }
    row("folded", "folded into constants", REMOVED, null, null, "folded");
    row("eliminated", "eliminated by ORT", REMOVED);
    if (!M.trt) {
      row("boundaries", "Memcpy (CPU\u2194GPU copies)", MEMCPY);
      row("bytes_copied", "copied per run", null, function (v) { return "~" + fmtBytes(v); });
      row("bytes_unknown", "copies of unknown size (dynamic shape)", null);
    }
    side.appendChild(t);
    m.runs.forEach(function (run, r) {
      if (run.line) side.appendChild(el("p", "line", (M.R > 1 ? (r === 0 ? "A: " : "B: ") : "") + run.line));
      run.notes.forEach(function (n) { side.appendChild(el("p", "note", "note: " + n)); });
    });

    if (M.R > 1) changesPanel(side);
    if (doc.kind === "lint") findingsPanel(side);
    cpuPanel(side, cs);
    if (!M.trt) copiesPanel(side);
    legend(side);
  }

  function nodeItem(i, extra) {
    var li = el("li");
    li.appendChild(chip(M.cats[state.run][i], M.m.runs[state.run].status[i]));
    var p = el("span", "path", M.m.nodes.path[i]); p.title = M.m.nodes.path[i];
    li.appendChild(p);
    if (extra) li.appendChild(extra);
    li.setAttribute("data-node", String(i));
    li.addEventListener("click", function () { reveal(i); });
    return li;
  }

  function longList(parent, items, make, id) {
    var ul = el("ul", "list"); if (id) ul.id = id;
    var shown = Math.min(items.length, LIST_FIRST);
    for (var k = 0; k < shown; k++) ul.appendChild(make(items[k]));
    parent.appendChild(ul);
    if (items.length > shown) {
      var b = el("button", "show-all", "show all " + fmtInt(items.length));
      b.addEventListener("click", function () {
        for (var k2 = shown; k2 < items.length; k2++) ul.appendChild(make(items[k2]));
        b.remove();
      });
      parent.appendChild(b);
    }
  }

  function cpuPanel(side, cs) {
    var run = M.m.runs[state.run], list = [];
    // with TensorRT, a node its parser takes runs there whatever ORT's CUDA placement says (as counts() counts it)
    for (var i = 0; i < M.N; i++) if (run.ep[i] === "CPU" && !(run.trt && run.trt[i])) list.push(i);
    if (M.preferred === "CPU") return;
    // real fallbacks first, then the shape computations ORT keeps on CPU on purpose
    list.sort(function (a, b) { return (M.cats[state.run][a] === SHAPE) - (M.cats[state.run][b] === SHAPE) || a - b; });
    add(side, el("h2", null, "On CPU (" + fmtInt(list.length) + (M.R > 1 ? ", release " + (state.run ? "B" : "A") : "") + ")"));
    if (!list.length) { side.appendChild(el("p", "note", "no node runs on CPU")); return; }
    longList(side, list, function (i) { return nodeItem(i, el("span", "op", M.m.nodes.op[i])); }, "cpu-nodes");
  }

  function copiesPanel(side) {
    var run = M.m.runs[state.run];
    add(side, el("h2", null, "CPU\u2194GPU copies (" + fmtInt(run.boundaries.length) + ")"));
    if (!run.boundaries.length) { side.appendChild(el("p", "note", "no Memcpy: no value crosses between CPU and GPU memory")); return; }
    var order = run.boundaries.map(function (_, k) { return k; });
    order.sort(function (a, b) { return (run.boundaries[b][4] || 0) - (run.boundaries[a][4] || 0); });
    longList(side, order, function (k) {
      var b = run.boundaries[k], at = b[3] >= 0 ? b[3] : b[2];
      var li = el("li");
      li.appendChild(chip(MEMCPY));
      var v = el("span", "path", (b[1] === "to-host" ? "\u2191 " : "\u2193 ") + b[0]);
      v.title = b[0] + ": " + (b[1] === "to-host" ? "GPU \u2192 CPU" : "CPU \u2192 GPU");
      li.appendChild(v);
      li.appendChild(el("span", "copy", fmtBytes(b[4])));
      li.setAttribute("data-boundary", String(k));
      if (at >= 0) li.addEventListener("click", function () { reveal(at); }); else li.className = "static";
      return li;
    }, "copies");
  }

  function changesPanel(side) {
    var groups = {}, n = 0;
    for (var i = 0; i < M.N; i++) if (M.changed[i]) {
      var key = M.keys[0][i] + " \u2192 " + M.keys[1][i];
      (groups[key] = groups[key] || []).push(i); n++;
    }
    add(side, el("h2", null, "Provider changes A \u2192 B (" + fmtInt(n) + ")"));
    if (!n) { side.appendChild(el("p", "note", "no node changes provider between the two releases")); return; }
    var box = el("div"); box.id = "changes";
    Object.keys(groups).sort().forEach(function (key) {
      box.appendChild(el("div", "note", key + ": " + plural(groups[key].length, "node")));
      longList(box, groups[key], function (i) {
        var li = nodeItem(i, el("span", "op", M.m.nodes.op[i]));
        li.replaceChild(chip(M.cats[1][i], M.m.runs[1].status[i], "B: " + catLabel(M.cats[1][i])), li.firstChild);
        li.insertBefore(chip(M.cats[0][i], M.m.runs[0].status[i], "A: " + catLabel(M.cats[0][i])), li.firstChild);
        return li;
      });
    });
    side.appendChild(box);
  }

  function findingsPanel(side) {
    var f = M.m.findings, by = { error: 0, warning: 0, info: 0 };
    f.forEach(function (x) { by[x.severity] = (by[x.severity] || 0) + 1; });
    add(side, el("h2", null, "Findings (" + fmtInt(f.length) + ")"));
    var p = el("p", "note"); p.id = "finding-counts";
    ["error", "warning", "info"].forEach(function (s) {
      var b = el("span", "sev sev-" + s, by[s] + " " + s + (by[s] === 1 ? "" : "s"));
      b.setAttribute("data-severity", s); b.setAttribute("data-value", String(by[s]));
      p.appendChild(b); p.appendChild(document.createTextNode(" "));
    });
    side.appendChild(p);
    var order = f.map(function (_, k) { return k; });
    var RANK = { error: 0, warning: 1, info: 2 };
    order.sort(function (a, b) { return RANK[f[a].severity] - RANK[f[b].severity] || a - b; });
    longList(side, order, function (k) {
      var x = f[k], li = el("li");
      li.appendChild(el("span", "sev sev-" + x.severity, x.code));
      var t = el("span", "path", x.where ? x.where : "(the model)"); t.title = x.message; li.appendChild(t);
      li.setAttribute("data-finding", String(k));
      if (x.node >= 0) li.addEventListener("click", function () { reveal(x.node); });
      else li.addEventListener("click", function () { showFinding(k); });
      return li;
    }, "findings");
  }

  // the categories a page draws: a TensorRT page has no Memcpy node (it does not show the TensorRT EP's copies)
  function legendCategories() { return M.trt ? [DEV, TRT, CPU, SHAPE, NONE, REMOVED] : [DEV, CPU, SHAPE, NONE, REMOVED, MEMCPY]; }

  function legend(side) {
    add(side, el("h2", null, "Legend"));
    var g = el("div", "legend");
    legendCategories().forEach(function (c) { add(g, chip(c, c === REMOVED ? "folded" : ""), el("span", null, catLabel(c))); });
    side.appendChild(g);
    side.appendChild(el("p", "note", "Scopes are node-name prefixes (/model/layers.0/attn); each bar shows how many of a " +
      "scope's nodes run where. Click a scope to draw its nodes; keys: / search, \u2191\u2193\u2190\u2192 in the tree, Enter to draw."));
  }

  // ------------------------------------------------------------------ the scope tree
  function passes(s) {
    var f = state.filter;
    if (f === "all") return true;
    var a = M.agg[state.run];
    if (f === "cpu") return a[s * 7 + CPU] + a[s * 7 + NONE] > 0;
    if (f === "copies") return M.copies[state.run].n[s] > 0;
    if (f === "findings") return M.findingsIn[s] > 0;
    if (f === "changed") return M.changedIn && M.changedIn[s] > 0;
    return true;
  }
  function passesNode(i) {
    var f = state.filter;
    if (f === "all") return true;
    var c = M.cats[state.run][i];
    if (f === "cpu") return c === CPU || c === NONE;
    if (f === "copies") { var cp = M.copies[state.run]; return !!(cp.byCons[i] || cp.byProd[i]); }
    if (f === "findings") return !!M.findingsOf[i];
    if (f === "changed") return !!(M.changed && M.changed[i]);
    return true;
  }
  function items(s) {  // a scope's children in graph order: [kind, id]
    var out = [], k = M.kids[s], l = M.leaves[s], a = 0, b = 0;
    while (a < k.length || b < l.length) {
      if (b >= l.length || (a < k.length && M.first[k[a]] < l[b])) {
        var sc = k[a++];
        out.push(M.single[sc] >= 0 ? ["n", M.single[sc]] : ["s", sc]);
      } else out.push(["n", l[b++]]);
    }
    return out;
  }
  function compact(s) {  // a scope holding one scope and nothing else is shown with it: model/decoder
    var chain = [s];
    while (M.kids[s].length === 1 && M.leaves[s].length === 0 && M.m.scopes.kind[M.kids[s][0]] !== "part") {
      s = M.kids[s][0]; chain.push(s);
    }
    return chain;
  }

  function bar(s, r) {
    var b = el("span", "bar"), a = M.agg[r], total = 0, c;
    for (c = 0; c < 7; c++) total += a[s * 7 + c];
    for (c = 0; c < 7; c++) {
      var v = a[s * 7 + c];
      if (!v) continue;
      var seg = el("span", "cat-" + CATS[c]);
      seg.style.width = (100 * v / total).toFixed(2) + "%";
      b.appendChild(seg);
    }
    return b;
  }
  function scopeTitle(s, r) {
    var a = M.agg[r], parts = [];
    for (var c = 0; c < 7; c++) if (a[s * 7 + c]) parts.push(fmtInt(a[s * 7 + c]) + " " + catLabel(c));
    return parts.join(", ");
  }

  function scopeRow(chain, level) {
    var s = chain[chain.length - 1], row = el("div", "row scope" + (M.m.scopes.kind[s] === "part" ? " part" : ""));
    row.setAttribute("role", "treeitem"); row.setAttribute("aria-expanded", "false"); row.tabIndex = -1;
    row.setAttribute("data-scope", String(s)); row.setAttribute("aria-level", String(level + 1));
    row.style.paddingLeft = (4 + level * 16) + "px";
    var tw = el("span", "tw", "\u25b8"); row.appendChild(tw);
    var label = el("span", "label name", chain.map(scopeLabel).join("/"));
    label.title = scopePath(s);
    row.appendChild(label);
    var meta = el("span", "meta");
    var total = 0, a = M.agg[0]; for (var c = 0; c < 6; c++) total += a[s * 7 + c];
    meta.appendChild(el("span", null, plural(total, "node")));
    var cpu = M.agg[state.run][s * 7 + CPU], none = M.agg[state.run][s * 7 + NONE];
    if (cpu) { var x = el("span", "chip cat-cpu", fmtInt(cpu) + " CPU"); x.title = catLabel(CPU); meta.appendChild(x); }
    if (none) { var y = el("span", "chip cat-none", fmtInt(none) + " none"); y.title = catLabel(NONE); meta.appendChild(y); }
    var cp = M.copies[state.run];
    if (cp.n[s]) meta.appendChild(copyChip(cp.n[s], cp.bytes[s], cp.unknown[s]));
    if (M.findingsIn[s]) meta.appendChild(el("span", "sev sev-" + ["info", "warning", "error"][M.worstIn[s]], String(M.findingsIn[s])));
    if (M.changedIn && M.changedIn[s]) meta.appendChild(el("span", "delta", "\u0394" + M.changedIn[s]));
    if (M.R > 1) {
      var bars = el("span", "bars"); bars.appendChild(bar(s, 0)); bars.appendChild(bar(s, 1));
      bars.title = "A: " + scopeTitle(s, 0) + "\nB: " + scopeTitle(s, 1); meta.appendChild(bars);
    } else {
      var b1 = bar(s, 0); b1.title = scopeTitle(s, 0); meta.appendChild(b1);
    }
    row.appendChild(meta);
    row._chain = chain; row._level = level;
    tw.addEventListener("click", function (e) { e.stopPropagation(); toggle(row); });
    row.addEventListener("click", function () { focusRow(row); drawScope(s); });
    row.addEventListener("dblclick", function () { toggle(row); });
    return row;
  }

  function nodeRow(i, level, parentScope) {
    var r = state.run, row = el("div", "row node");
    row.setAttribute("role", "treeitem"); row.tabIndex = -1; row.setAttribute("data-node", String(i));
    row.setAttribute("aria-level", String(level + 1));
    row.style.paddingLeft = (4 + level * 16 + 16) + "px";
    if (M.R > 1) {
      row.appendChild(chip(M.cats[0][i], M.m.runs[0].status[i], "A: " + catLabel(M.cats[0][i])));
      row.appendChild(chip(M.cats[1][i], M.m.runs[1].status[i], "B: " + catLabel(M.cats[1][i])));
    } else row.appendChild(chip(M.cats[r][i], M.m.runs[r].status[i]));
    row.appendChild(el("span", "op", M.m.nodes.op[i]));
    var rel = relName(i, parentScope);
    if (rel !== M.m.nodes.op[i]) { var label = el("span", "label name", rel); label.title = M.m.nodes.path[i]; row.appendChild(label); }
    var meta = el("span", "meta");
    var cp = M.copies[r], bs = (cp.byCons[i] || []).concat(cp.byProd[i] || []), bytes = 0, unk = 0;
    bs.forEach(function (k) { var v = M.m.runs[r].boundaries[k][4]; if (v === null) unk++; else bytes += v; });
    if (bs.length) meta.appendChild(copyChip(bs.length, bytes, unk));
    var fs = M.findingsOf[i];
    if (fs) fs.forEach(function (k) { var f = M.m.findings[k]; var b = el("span", "sev sev-" + f.severity, f.code); b.title = f.message; meta.appendChild(b); });
    if (M.changed && M.changed[i]) meta.appendChild(el("span", "delta", "\u0394"));
    row.appendChild(meta);
    row._node = i; row._level = level;
    row.addEventListener("click", function () { focusRow(row); selectNode(i, true); });
    return row;
  }

  function renderTree() {
    var t = $("tree"); clear(t);
    state.rows = {};
    var root = scopeRow([0], 0);
    t.appendChild(root);
    root.tabIndex = 0; state.focus = root;  // the tree stays reachable by Tab (rows are tabIndex -1 but the focused one)
    expand(root);
  }

  function expand(row) {
    if (row._open) return;
    var s = row._chain[row._chain.length - 1];
    var box = el("div", "kids"); box.setAttribute("role", "group");
    var level = row._level + 1, shown = 0;
    items(s).forEach(function (it) {
      if (it[0] === "s") { if (passes(it[1])) { box.appendChild(scopeRow(compact(it[1]), level)); shown++; } }
      else if (passesNode(it[1])) { box.appendChild(nodeRow(it[1], level, s)); shown++; }
    });
    if (!shown) box.appendChild(el("div", "empty", "nothing here matches the filter"));
    row.after(box);
    row._open = box; row.setAttribute("aria-expanded", "true"); row.firstChild.textContent = "\u25be";
  }
  function collapse(row) {
    if (!row._open) return;
    row._open.remove(); row._open = null;
    row.setAttribute("aria-expanded", "false"); row.firstChild.textContent = "\u25b8";
  }
  function toggle(row) { if (row._open) collapse(row); else expand(row); }

  function visibleRows() { return Array.prototype.slice.call($("tree").querySelectorAll(".row")); }
  function focusRow(row) {
    if (state.focus && state.focus !== row) { state.focus.classList.remove("selected"); state.focus.tabIndex = -1; }
    state.focus = row; row.classList.add("selected"); row.tabIndex = 0; row.focus({ preventScroll: true });
  }
  function treeKeys(e) {
    var row = state.focus; if (!row) return;
    var rows, k;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      rows = visibleRows(); k = rows.indexOf(row) + (e.key === "ArrowDown" ? 1 : -1);
      if (k >= 0 && k < rows.length) { focusRow(rows[k]); rows[k].scrollIntoView({ block: "nearest" }); }
    } else if (e.key === "ArrowRight") {
      if (row._chain && !row._open) expand(row);
      else if (row._open) { var f = row._open.querySelector(".row"); if (f) focusRow(f); }
    } else if (e.key === "ArrowLeft") {
      if (row._open) collapse(row);
      else { var up = row.parentNode.previousSibling; if (up && up.classList && up.classList.contains("row")) { focusRow(up); up.scrollIntoView({ block: "nearest" }); } }
    } else if (e.key === "Enter" || e.key === " ") {
      if (row._chain) drawScope(row._chain[row._chain.length - 1]); else selectNode(row._node, true);
    } else return;
    e.preventDefault();
  }

  // reveal a node: open the scopes above it, select its row, draw its scope with it selected
  function reveal(i) {
    var chain = [];
    for (var s = M.m.nodes.scope[i]; s >= 0; s = M.m.scopes.parent[s]) chain.unshift(s);
    if (state.filter !== "all" && !passesNode(i)) { state.filter = "all"; $("filter").value = "all"; renderTree(); }
    var row = $("tree").querySelector('.row[data-scope="0"]');
    for (var k = 1; k < chain.length; k++) {
      expand(row);
      var next = row._open.querySelector('.row[data-scope="' + chain[k] + '"]');
      if (!next) continue;  // compacted into the row above
      row = next;
    }
    expand(row);
    var nrow = row._open.querySelector('.row[data-node="' + i + '"]');
    if (nrow) { focusRow(nrow); nrow.scrollIntoView({ block: "center" }); }
    selectNode(i, true);
  }

  // ------------------------------------------------------------------ the graph of one scope
  function itemOfNodes(s) {  // per node: the child of scope s that holds it (node id, or -(scope+2)), or -1 when outside
    var parent = M.m.scopes.parent, scopeOf = M.m.nodes.scope, out = new Int32Array(M.N), memo = new Int32Array(M.S).fill(-3);
    function up(sc) {  // the child scope of s on the way up from sc, -1 if s is not above sc
      var path = [], res;  // a loop, not a recursion: a node name can nest scopes deeper than the call stack goes
      for (;;) {
        if (memo[sc] !== -3) { res = memo[sc]; break; }
        path.push(sc);
        if (sc === s) { res = -2; break; }
        if (parent[sc] === s) { res = sc; break; }
        if (parent[sc] < 0) { res = -1; break; }
        sc = parent[sc];
      }
      for (var k = 0; k < path.length; k++) memo[path[k]] = res;
      return res;
    }
    for (var i = 0; i < M.N; i++) {
      var u = up(scopeOf[i]);
      out[i] = u === -2 ? i : u === -1 ? -1 : M.single[u] >= 0 ? i : -(u + 2);
    }
    return out;
  }

  function drawScope(s, selectId) {
    while (s > 0 && M.single[s] >= 0) s = M.m.scopes.parent[s];  // a one-node scope is drawn as that node
    state.scope = s;
    crumbs(s);
    var it = items(s), ids = {}, nodes = [], edges = [], e, r = state.run;
    it.forEach(function (x) {
      var key = x[0] === "s" ? -(x[1] + 2) : x[1];
      ids[key] = nodes.length;
      nodes.push({ kind: x[0], id: x[1], key: key });
    });
    var of = itemOfNodes(s), pairs = {}, preds = M.m.nodes.preds;
    function edge(a, b, copy) {
      var k = a + ":" + b;
      if (pairs[k] !== undefined) { if (copy) edges[pairs[k]].copy = true; return; }
      pairs[k] = edges.length; edges.push({ from: a, to: b, copy: !!copy });
    }
    var io = { in: -1, out: -1 };  // what the scope reads from, and what reads it, outside it
    function outside(which) {
      if (io[which] < 0) { io[which] = nodes.length; nodes.push({ kind: "x", id: which, key: "x" + which }); }
      return io[which];
    }
    var run = M.m.runs[r], viaCopy = {};  // a value ORT copies is drawn through its Memcpy node
    run.boundaries.forEach(function (bd) { if (bd[2] >= 0 && bd[3] >= 0) viaCopy[bd[2] + ":" + bd[3]] = 1; });
    for (var i = 0; i < M.N; i++) {
      var b = of[i] === -1 ? -1 : ids[of[i]];
      for (var p = 0; p < preds[i].length; p++) {
        if (viaCopy[preds[i][p] + ":" + i]) continue;
        var q = of[preds[i][p]];
        if (q === -1 && b < 0) continue;
        if (q === -1) { edge(outside("in"), b); continue; }
        var a = ids[q];
        if (b < 0) edge(a, outside("out"));
        else if (a !== b) edge(a, b);
      }
    }
    run.boundaries.forEach(function (bd, k) {
      var ci = bd[3] >= 0 ? of[bd[3]] : -1, pi = bd[2] >= 0 ? of[bd[2]] : -1;
      var ca = ci !== -1 ? ids[ci] : -1, pa = pi !== -1 ? ids[pi] : -1;
      if (ca < 0 && pa < 0) return;
      if (ca >= 0 && ca === pa) return;  // inside one child scope: counted on its box
      var mi = nodes.length;
      nodes.push({ kind: "m", id: k, key: "m" + k });
      if (pa >= 0) edge(pa, mi, true); else if (bd[2] >= 0) edge(outside("in"), mi, true);
      if (ca >= 0) edge(mi, ca, true); else edge(mi, outside("out"), true);
    });
    if (!nodes.length) {  // a graph of Constant nodes only: ORT places nothing
      clear($("graph")); state.nodeEls = {}; state.edgeEls = []; state.view = null;
      $("graphmsg").textContent = "no node to draw: ORT places no node of this graph";
      return;
    }
    var lay = layout(nodes, edges);
    paint(nodes, edges, lay, s);
    var msg = $("graphmsg"), n = it.length, mc = nodes.filter(function (x) { return x.kind === "m"; }).length;
    msg.textContent = plural(n, "item") + (s === 0 ? " in the whole graph" : "") + (mc ? " and " + plural(mc, "Memcpy", "Memcpys") : "");
    if (selectId !== undefined) highlight(selectId);
  }

  function crumbs(s) {
    var c = $("crumbs"); clear(c);
    var chain = [];
    for (var x = s; x >= 0; x = M.m.scopes.parent[x]) chain.unshift(x);
    chain.forEach(function (x, k) {
      if (k) c.appendChild(el("span", "sep", "/"));
      var b = el("button", "name", scopeLabel(x));
      b.addEventListener("click", function () { drawScope(x); });
      c.appendChild(b);
    });
  }

  // a layered drawing (Sugiyama): cycles broken, longest-path layers, dummies on long edges, barycentre ordering
  var W = 176, H = 40, SW = 208, SH = 58, MW = 136, MH = 30, GAPX = 28, GAPY = 46;
  function size(n) { return n.kind === "s" ? [SW, SH] : n.kind === "m" ? [MW, MH] : n.kind === "x" ? [150, 24] : [W, H]; }

  function layout(nodes, edges) {
    var V = nodes.length, out = [], inn = [], v, k;
    for (v = 0; v < V; v++) { out.push([]); inn.push([]); }
    // break cycles (a scope box can feed a node that feeds it back): reverse the DFS back edges
    var color = new Uint8Array(V), rev = new Uint8Array(edges.length), adj = [];
    for (v = 0; v < V; v++) adj.push([]);
    edges.forEach(function (e, k2) { adj[e.from].push(k2); });
    for (v = 0; v < V; v++) {
      if (color[v]) continue;
      var stack = [[v, 0]]; color[v] = 1;
      while (stack.length) {
        var top = stack[stack.length - 1], u = top[0];
        if (top[1] < adj[u].length) {
          var ek = adj[u][top[1]++], w = edges[ek].to;
          if (color[w] === 1) rev[ek] = 1;
          else if (!color[w]) { color[w] = 1; stack.push([w, 0]); }
        } else { color[u] = 2; stack.pop(); }
      }
    }
    var E = edges.map(function (e, k2) { return rev[k2] ? [e.to, e.from] : [e.from, e.to]; });
    E.forEach(function (e) { if (e[0] !== e[1]) { out[e[0]].push(e[1]); inn[e[1]].push(e[0]); } });
    // longest path layering (Kahn), sources then pulled down next to their first reader
    var layer = new Int32Array(V), indeg = inn.map(function (a) { return a.length; }), queue = [], order = [];
    for (v = 0; v < V; v++) if (!indeg[v]) queue.push(v);
    while (queue.length) {
      v = queue.shift(); order.push(v);
      out[v].forEach(function (w2) { layer[w2] = Math.max(layer[w2], layer[v] + 1); if (--indeg[w2] === 0) queue.push(w2); });
    }
    for (k = order.length - 1; k >= 0; k--) {
      v = order[k];
      if (!inn[v].length && out[v].length) {
        var lo = Infinity; out[v].forEach(function (w3) { lo = Math.min(lo, layer[w3]); }); layer[v] = lo - 1;
      }
    }
    // dummies for edges spanning several layers (bounded: past the bound, long edges are drawn straight)
    var chains = [], dummyBudget = 4000, pos = [];
    var L = 0; for (v = 0; v < V; v++) L = Math.max(L, layer[v] + 1);
    var layers = []; for (k = 0; k < L; k++) layers.push([]);
    var vx = []; // virtual vertices: real ones then dummies
    for (v = 0; v < V; v++) { vx.push({ real: v, layer: layer[v], up: [], down: [] }); }
    E.forEach(function (e, ei) {
      var a = e[0], b = e[1];
      if (a === b) { chains.push([a]); return; }
      var span = layer[b] - layer[a], path = [a];
      if (span > 1 && dummyBudget >= span - 1) {
        dummyBudget -= span - 1;
        var prev = a;
        for (var l = layer[a] + 1; l < layer[b]; l++) {
          var d = vx.length; vx.push({ real: -1, layer: l, up: [prev], down: [] }); vx[prev].down.push(d); path.push(d); prev = d;
        }
        vx[prev].down.push(b); vx[b].up.push(prev);
      } else { vx[a].down.push(b); vx[b].up.push(a); }
      path.push(b); chains.push(path);
    });
    vx.forEach(function (x, id) { layers[x.layer].push(id); });
    // ordering: initial by graph order, then barycentre sweeps
    for (k = 0; k < vx.length; k++) pos.push(0);
    function renumber(lay) { lay.forEach(function (id, p) { pos[id] = p; }); }
    layers.forEach(renumber);
    function sweep(down) {
      for (var li = down ? 1 : L - 2; down ? li < L : li >= 0; li += down ? 1 : -1) {
        var lay = layers[li];
        var bc = {};
        lay.forEach(function (id) {
          var nb = down ? vx[id].up : vx[id].down;
          if (!nb.length) { bc[id] = pos[id]; return; }
          var sum = 0; nb.forEach(function (q) { sum += pos[q]; }); bc[id] = sum / nb.length;
        });
        lay.sort(function (a, b) { return bc[a] - bc[b] || pos[a] - pos[b]; });
        renumber(lay);
      }
    }
    for (k = 0; k < 4; k++) { sweep(true); sweep(false); }
    // x: each vertex near the mean of its neighbours, in layer order, at least a gap apart
    var X = new Float64Array(vx.length), Wd = vx.map(function (x) { return x.real >= 0 ? size(nodes[x.real])[0] : 8; });
    layers.forEach(function (lay) { var x = 0; lay.forEach(function (id) { X[id] = x + Wd[id] / 2; x += Wd[id] + GAPX; }); });
    function place(down) {
      for (var li = down ? 1 : L - 2; down ? li < L : li >= 0; li += down ? 1 : -1) {
        var lay = layers[li], want = lay.map(function (id) {
          var nb = (down ? vx[id].up : vx[id].down).concat(down ? vx[id].down : vx[id].up);
          if (!nb.length) return X[id];
          var main = down ? vx[id].up : vx[id].down, use = main.length ? main : nb, sum = 0;
          use.forEach(function (q) { sum += X[q]; }); return sum / use.length;
        });
        var xs = want.slice();
        for (var j = 1; j < lay.length; j++) xs[j] = Math.max(xs[j], xs[j - 1] + (Wd[lay[j - 1]] + Wd[lay[j]]) / 2 + GAPX);
        for (j = lay.length - 2; j >= 0; j--) xs[j] = Math.min(xs[j], xs[j + 1] - (Wd[lay[j + 1]] + Wd[lay[j]]) / 2 - GAPX);
        // the backward pass may undo the forward one's gaps: keep them, shifted to the wanted mean
        for (j = 1; j < lay.length; j++) xs[j] = Math.max(xs[j], xs[j - 1] + (Wd[lay[j - 1]] + Wd[lay[j]]) / 2 + GAPX);
        lay.forEach(function (id, q) { X[id] = xs[q]; });
      }
    }
    for (k = 0; k < 3; k++) { place(true); place(false); }
    var minX = Infinity, maxX = -Infinity;
    vx.forEach(function (x, id) { minX = Math.min(minX, X[id] - Wd[id] / 2); maxX = Math.max(maxX, X[id] + Wd[id] / 2); });
    var Y = [], y = 0;
    for (k = 0; k < L; k++) {
      var hmax = 10; layers[k].forEach(function (id) { if (vx[id].real >= 0) hmax = Math.max(hmax, size(nodes[vx[id].real])[1]); });
      Y.push(y + hmax / 2); y += hmax + GAPY;
    }
    return { X: X, Y: Y, vx: vx, chains: chains, minX: minX, width: maxX - minX, height: y - GAPY, E: E, rev: rev };
  }

  function trunc(s, px) { var n = Math.max(3, Math.floor(px / 6.4)); return s.length > n ? s.slice(0, n - 1) + "\u2026" : s; }

  function paint(nodes, edges, lay, s) {
    var g = $("graph"); clear(g);
    var pad = 24, root = svg("g", {}); state.view = root;
    var defs = svg("defs", {});
    var mk = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
    mk.appendChild(svg("path", { d: "M0,0 L10,5 L0,10 z", fill: "#8c959f" }));
    var mk2 = svg("marker", { id: "arrowc", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto-start-reverse" });
    mk2.appendChild(svg("path", { d: "M0,0 L10,5 L0,10 z", fill: "#cc79a7" }));
    var hatch = svg("pattern", { id: "hatch", width: 6, height: 6, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" });
    hatch.appendChild(svg("rect", { width: 6, height: 6, fill: "#ffffff" }));
    hatch.appendChild(svg("line", { x1: 0, y1: 0, x2: 0, y2: 6, stroke: "#d0d0d0", "stroke-width": 3 }));
    add(defs, mk, mk2, hatch); g.appendChild(defs);
    g.appendChild(root);
    var ox = -lay.minX + pad, oy = pad, X = lay.X, Y = lay.Y, vx = lay.vx;
    function px(id) { return X[id] + ox; }
    function py(id) { return Y[vx[id].layer] + oy; }
    // edges
    var eg = svg("g", {}); root.appendChild(eg);
    state.edgeEls = [];
    lay.chains.forEach(function (path, ei) {
      if (path.length < 2) return;
      var e = edges[ei], reversed = lay.rev[ei];
      var pts = path.map(function (id) { return [px(id), py(id)]; });
      var a = vx[path[0]], b = vx[path[path.length - 1]];
      var ha = a.real >= 0 ? size(nodes[a.real])[1] / 2 : 0, hb = b.real >= 0 ? size(nodes[b.real])[1] / 2 : 0;
      pts[0] = [pts[0][0], pts[0][1] + ha];
      pts[pts.length - 1] = [pts[pts.length - 1][0], pts[pts.length - 1][1] - hb - 2];
      var d = "M" + pts[0][0].toFixed(1) + "," + pts[0][1].toFixed(1);
      for (var k = 1; k < pts.length; k++) {
        var p0 = pts[k - 1], p1 = pts[k], my = (p0[1] + p1[1]) / 2;
        d += " C" + p0[0].toFixed(1) + "," + my.toFixed(1) + " " + p1[0].toFixed(1) + "," + my.toFixed(1) + " " + p1[0].toFixed(1) + "," + p1[1].toFixed(1);
      }
      var pth = svg("path", { d: d, class: "edge" + (e.copy ? " copy" : "") });
      pth.setAttribute(reversed ? "marker-start" : "marker-end", e.copy ? "url(#arrowc)" : "url(#arrow)");
      pth._ends = [e.from, e.to];
      eg.appendChild(pth); state.edgeEls.push(pth);
    });
    // boxes
    var ng = svg("g", {}); root.appendChild(ng);
    state.nodeEls = {};
    var r = state.run, R = M.R;
    nodes.forEach(function (n, v) {
      var sz = size(n), x = px(v) - sz[0] / 2, y = py(v) - sz[1] / 2;
      var grp = svg("g", { class: "nd", transform: "translate(" + x.toFixed(1) + "," + y.toFixed(1) + ")", tabindex: 0 });
      var title = svg("title", {});
      grp.appendChild(title);
      if (n.kind === "n") {
        // comparing, the box is A's colour then B's whichever release the lists show: its words say A then B
        var i = n.id, a0 = R > 1 ? 0 : r, c0 = M.cats[a0][i], c1 = R > 1 ? M.cats[1][i] : c0;
        boxFill(grp, sz, R > 1 ? [c0, c1] : [c0], M.m.runs[a0].status[i]);
        var tag = catTag(c0, M.m.runs[a0].status[i]) + (R > 1 && M.changed[i] ? " \u2192 " + catTag(c1, M.m.runs[1].status[i]) : "");
        text(grp, 8, 16, trunc(M.m.nodes.op[i], sz[0] - 60), "600", 12, dark(c0) ? "#fff" : "#1a1a1a");
        text(grp, sz[0] - 6, 15, tag, "700", 10, dark(c1) ? "#fff" : "#1a1a1a", "end");  // on B's half
        text(grp, 8, 31, trunc(relName(i, s), sz[0] - 16), "400", 10.5, dark(c0) ? "#fff" : "#333");
        title.textContent = M.m.nodes.op[i] + "  " + M.m.nodes.path[i] + "\n" + (R > 1 ? "A: " : "") + catLabel(c0) +
          (R > 1 ? "\nB: " + catLabel(c1) : "");
        var fs = M.findingsOf[i];
        if (fs) badge(grp, sz[0], fs.length, worst(fs));
        if (R > 1 && M.changed[i]) grp.appendChild(svg("rect", { x: -3, y: -3, width: sz[0] + 6, height: sz[1] + 6, rx: 8, fill: "none", stroke: "#6f42c1", "stroke-width": 2.5, "stroke-dasharray": "6 3" }));
        grp.addEventListener("click", function (ev) { ev.stopPropagation(); selectNode(i, false); });
      } else if (n.kind === "s") {
        var sc = n.id, chain = compact(sc), last = chain[chain.length - 1];
        grp.appendChild(svg("rect", { class: "box", x: 0, y: 0, width: sz[0], height: sz[1], rx: 6, fill: "#f6f8fa", stroke: "#57606a", "stroke-width": 1.5 }));
        grp.appendChild(svg("rect", { x: 4, y: 4, width: sz[0] - 8, height: sz[1] - 8, rx: 4, fill: "none", stroke: "#c6ccd2" }));
        text(grp, 10, 19, trunc(chain.map(scopeLabel).join("/"), sz[0] - 20), "700", 12, "#1f2328");
        var a = M.agg[r], tot = 0; for (var c = 0; c < 6; c++) tot += a[sc * 7 + c];
        var cpu = a[sc * 7 + CPU], none = a[sc * 7 + NONE], cp = M.copies[r].n[sc];
        text(grp, 10, 34, plural(tot, "node") + (cpu ? " \u00b7 " + cpu + " CPU" : "") + (none ? " \u00b7 " + none + " none" : "") +
          (cp ? " \u00b7 \u21c5" + cp : ""), "400", 10.5, "#333");
        var bx = 10, bw = sz[0] - 20;
        for (c = 0; c < 7; c++) {
          var val = a[sc * 7 + c]; if (!val) continue;
          var w = bw * val / (tot + a[sc * 7 + MEMCPY]);
          grp.appendChild(svg("rect", { x: bx.toFixed(1), y: 41, width: Math.max(w, 1).toFixed(1), height: 8, fill: c === REMOVED ? "url(#hatch)" : fillOf(c) }));
          bx += w;
        }
        grp.appendChild(svg("rect", { x: 10, y: 41, width: bw, height: 8, fill: "none", stroke: "#8c959f", "stroke-width": 0.8 }));
        title.textContent = scopePath(last) + "\n" + scopeTitle(last, r) + "\n(click to open)";
        if (M.findingsIn[sc]) badge(grp, sz[0], M.findingsIn[sc], M.worstIn[sc]);
        if (M.changedIn && M.changedIn[sc]) text(grp, sz[0] - 8, 19, "\u0394" + M.changedIn[sc], "700", 11, "#6f42c1", "end");
        grp.addEventListener("click", function (ev) { ev.stopPropagation(); openScope(last); });
      } else if (n.kind === "x") {
        grp.appendChild(svg("rect", { class: "box", x: 0, y: 0, width: sz[0], height: sz[1], rx: 4, fill: "#ffffff", stroke: "#8c959f", "stroke-dasharray": "3 3" }));
        text(grp, sz[0] / 2, 16, n.id === "in" ? "from outside this scope" : "read outside this scope", "400", 10.5, "#59636e", "middle");
        title.textContent = n.id === "in" ? "values this scope reads from nodes outside it" : "values of this scope that nodes outside it read";
        grp.addEventListener("click", function (ev) { ev.stopPropagation(); goUp(); });
      } else {
        var bd = M.m.runs[r].boundaries[n.id];
        grp.appendChild(svg("rect", { class: "box", x: 0, y: 0, width: sz[0], height: sz[1], rx: sz[1] / 2, fill: "#cc79a7", stroke: "#7a3b64", "stroke-width": 1.2 }));
        text(grp, sz[0] / 2, 12.5, (bd[1] === "to-host" ? "MemcpyToHost" : "MemcpyFromHost"), "700", 10.5, "#1a1a1a", "middle");
        text(grp, sz[0] / 2, 24, (bd[1] === "to-host" ? "GPU\u2192CPU " : "CPU\u2192GPU ") + fmtBytes(bd[4]), "400", 10, "#1a1a1a", "middle");
        title.textContent = "Memcpy created by ORT: " + bd[0] + " copied " + (bd[1] === "to-host" ? "GPU \u2192 CPU" : "CPU \u2192 GPU") +
          ", " + fmtBytes(bd[4]) + " per run";
        grp.addEventListener("click", function (ev) { ev.stopPropagation(); var at = bd[3] >= 0 ? bd[3] : bd[2]; if (at >= 0) selectNode(at, false); });
      }
      grp.addEventListener("keydown", function (ev) { if (ev.key === "Enter") grp.dispatchEvent(new MouseEvent("click")); });
      state.nodeEls[n.key] = { el: grp, v: v, x: px(v), y: py(v) };
      ng.appendChild(grp);
    });
    state.bounds = { w: lay.width + 2 * pad, h: lay.height + 2 * pad };
    fit(true);
  }
  function dark(c) { return c === DEV || c === TRT || c === CPU || c === NONE; }
  function fillOf(c) { return ["#0072b2", "#009e73", "#d55e00", "#f0e442", "#1a1a1a", "#bdbdbd", "#cc79a7"][c]; }
  function boxFill(grp, sz, cs, st) {
    var c0 = cs[0];
    if (cs.length === 2) {
      grp.appendChild(svg("rect", { class: "box", x: 0, y: 0, width: sz[0], height: sz[1], rx: 6, fill: fillOf(cs[1]), stroke: "#24292f", "stroke-width": 1 }));
      grp.appendChild(svg("path", { d: "M6,0 H" + (sz[0] * 0.62) + " L" + (sz[0] * 0.5) + "," + sz[1] + " H6 Q0," + sz[1] + " 0," + (sz[1] - 6) + " V6 Q0,0 6,0 z", fill: c0 === REMOVED ? "url(#hatch)" : fillOf(c0) }));
      return;
    }
    var attrs = { class: "box", x: 0, y: 0, width: sz[0], height: sz[1], rx: 6, fill: c0 === REMOVED ? "url(#hatch)" : fillOf(c0), stroke: c0 === REMOVED ? "#777" : "#24292f", "stroke-width": 1 };
    if (c0 === REMOVED) attrs["stroke-dasharray"] = "4 3";
    grp.appendChild(svg("rect", attrs));
  }
  function text(grp, x, y, s, weight, sz, fill, anchor) {
    var t = svg("text", { x: x, y: y, "font-size": sz, "font-weight": weight, fill: fill });
    if (anchor) t.setAttribute("text-anchor", anchor);
    t.textContent = s; grp.appendChild(t); return t;
  }
  function badge(grp, w, n, sev) {
    var col = ["#59636e", "#9a6700", "#b3261e"][sev];
    grp.appendChild(svg("circle", { cx: w - 2, cy: -2, r: 9, fill: col, stroke: "#fff", "stroke-width": 1.5 }));
    text(grp, w - 2, 1.5, String(n), "700", 10, "#fff", "middle");
  }
  function worst(fs) {
    var R2 = { info: 0, warning: 1, error: 2 }, w = 0;
    fs.forEach(function (k) { w = Math.max(w, R2[M.m.findings[k].severity] || 0); }); return w;
  }

  function openScope(s) {
    while (s > 0 && M.single[s] >= 0) s = M.m.scopes.parent[s];
    drawScope(s);
    var row = $("tree").querySelector('.row[data-scope="' + s + '"]');
    if (!row) {  // open the way down to it
      var chain = []; for (var x = s; x >= 0; x = M.m.scopes.parent[x]) chain.unshift(x);
      row = $("tree").querySelector('.row[data-scope="0"]');
      for (var k = 1; k < chain.length; k++) {
        expand(row); var next = row._open.querySelector('.row[data-scope="' + chain[k] + '"]'); if (next) row = next;
      }
    }
    expand(row); focusRow(row); row.scrollIntoView({ block: "nearest" });
  }

  // pan and zoom: the view transform of the drawing
  function setView(k, tx, ty) {
    if (!state.view) return;
    state.k = k; state.tx = tx; state.ty = ty;
    state.view.setAttribute("transform", "translate(" + tx.toFixed(1) + "," + ty.toFixed(1) + ") scale(" + k.toFixed(4) + ")");
  }
  function fit(initial) {
    if (!state.view || !state.bounds) return;  // nothing drawn: a model not read, a graph of Constants only
    var wrap = $("graphwrap"), W2 = wrap.clientWidth || 800, H2 = wrap.clientHeight || 500, b = state.bounds;
    var k = Math.min(W2 / b.w, H2 / b.h, 1);
    if (initial && k < 0.45) k = Math.min(1, Math.max(0.45, W2 / b.w));  // a tall graph: readable, scrolled to its top
    setView(k, Math.max(0, (W2 - b.w * k) / 2), k * b.h < H2 ? (H2 - b.h * k) / 2 : 0);
  }
  function centerOn(key) {
    var n = state.nodeEls[key]; if (!n) return;
    var wrap = $("graphwrap"), k = Math.max(state.k, 0.7), h = wrap.clientHeight, lg = $("graphlegend");
    // centred in the part above the legend, which spans the drawing's bottom: on a laptop's screen (1366x650)
    // the middle of the drawing was under it, and so was half the node selected
    if (lg && lg.offsetHeight) h = Math.max(h / 2, lg.offsetTop - 8);
    setView(k, wrap.clientWidth / 2 - n.x * k, h / 2 - n.y * k);
  }
  function panZoom() {
    var wrap = $("graphwrap"), drag = null;
    wrap.addEventListener("wheel", function (e) {
      if (!state.view) return;
      e.preventDefault();
      var rect = wrap.getBoundingClientRect(), mx = e.clientX - rect.left, my = e.clientY - rect.top;
      var k = Math.min(3, Math.max(0.05, state.k * Math.exp(-e.deltaY * 0.0015)));
      setView(k, mx - (mx - state.tx) * k / state.k, my - (my - state.ty) * k / state.k);
    }, { passive: false });
    // a drag that pans is not a click: the box under the pointer moves with it, and would open at the release
    var moved = false, dragged = false;
    wrap.addEventListener("mousedown", function (e) { drag = [e.clientX, e.clientY, state.tx, state.ty]; moved = false; wrap.classList.add("dragging"); });
    window.addEventListener("mousemove", function (e) {
      if (!drag) return;
      if (Math.abs(e.clientX - drag[0]) + Math.abs(e.clientY - drag[1]) > 4) moved = true;
      setView(state.k, drag[2] + e.clientX - drag[0], drag[3] + e.clientY - drag[1]);
    });
    window.addEventListener("mouseup", function () {
      if (drag && moved) { dragged = true; setTimeout(function () { dragged = false; }, 0); }  // the click comes first
      drag = null; wrap.classList.remove("dragging");
    });
    wrap.addEventListener("click", function (e) { if (dragged) { dragged = false; e.stopPropagation(); } }, true);
  }

  function highlight(key) {
    // the key of node 0 is 0: test for a key, not for a truthy one
    if (state.hl !== undefined && state.hl !== null && state.nodeEls[state.hl]) state.nodeEls[state.hl].el.classList.remove("sel");
    (state.edgeEls || []).forEach(function (p) { p.classList.remove("hl"); });
    state.hl = key;
    var n = state.nodeEls[key]; if (!n) return;
    n.el.classList.add("sel");
    (state.edgeEls || []).forEach(function (p) { if (p._ends[0] === n.v || p._ends[1] === n.v) p.classList.add("hl"); });
    centerOn(key);
  }

  // ------------------------------------------------------------------ node details
  function selectNode(i, draw) {
    var s = home(i);
    if (draw || state.scope === undefined) { if (state.scope !== s) drawScope(s); }
    var key = state.nodeEls && state.nodeEls[i] ? i : null;
    if (key === null) {  // drawn inside a child scope box: draw its own scope
      drawScope(s);
    }
    details(i);  // first: the details pane takes its height from the drawing's, which highlight centres the node in
    highlight(i);
  }

  function details(i) {
    var d = $("details"); clear(d);
    var m = M.m, h = el("h3");
    if (M.R > 1) { h.appendChild(chip(M.cats[0][i], m.runs[0].status[i], "A: " + catLabel(M.cats[0][i]))); h.appendChild(chip(M.cats[1][i], m.runs[1].status[i], "B: " + catLabel(M.cats[1][i]))); }
    else h.appendChild(chip(M.cats[state.run][i], m.runs[state.run].status[i]));
    h.appendChild(el("span", "op", m.nodes.op[i] + (m.nodes.domain[i] ? " (" + m.nodes.domain[i] + ")" : "")));
    h.appendChild(el("span", "path", m.nodes.path[i]));
    d.appendChild(h);
    d.id = "details"; d.setAttribute("data-node", String(i));
    m.runs.forEach(function (run, r) {
      var ep = run.trt && run.trt[i] ? "TensorRT (its parser takes this node)" : run.ep[i] ? run.ep[i] : "no provider";
      var line = (M.R > 1 ? (r === 0 ? "A " : "B ") + run.ort_version + ": " : "") + ep + " \u2014 " +
        (STATUS_WORDS[run.status[i]] || run.status[i]) + (run.reason[i] ? " (" + run.reason[i] + ")" : "");
      d.appendChild(el("div", null, line));
      if (run.detail[i] >= 0) d.appendChild(el("div", "hint", m.strings[run.detail[i]]));
    });
    var run = m.runs[state.run], cp = M.copies[state.run];
    (cp.byProd[i] || []).concat(cp.byCons[i] || []).forEach(function (k) {
      var b = run.boundaries[k];
      d.appendChild(el("div", "copy", "Memcpy " + (b[1] === "to-host" ? "GPU\u2192CPU" : "CPU\u2192GPU") + " of " + b[0] + ": " + fmtBytes(b[4]) + " per run"));
    });
    (M.findingsOf[i] || []).forEach(function (k) { d.appendChild(findingBox(m.findings[k])); });
    var links = el("div", "links");
    function linkList(label, ids) {
      if (!ids.length) return;
      links.appendChild(el("span", "note", label + ": "));
      ids.slice(0, 12).forEach(function (j) {
        var b = el("button", "name", m.nodes.name[j]); b.title = m.nodes.path[j];
        b.addEventListener("click", function () { reveal(j); }); links.appendChild(b);
      });
      if (ids.length > 12) links.appendChild(el("span", "note", "\u2026 " + (ids.length - 12) + " more"));
      links.appendChild(el("br"));
    }
    linkList("reads from", m.nodes.preds[i]);
    linkList("read by", consumersOf(i));
    d.appendChild(links);
  }
  function findingBox(f) {
    var box = el("div", "finding " + f.severity);
    add(box, add(el("div"), el("span", "sev sev-" + f.severity, f.code), document.createTextNode(" " + f.name + " [" + f.severity + "] " + (f.target !== "any" ? f.target : ""))));
    box.appendChild(el("div", "msg", f.message));
    if (f.hint) box.appendChild(el("div", "hint", "hint: " + f.hint));
    if (f.fix) box.appendChild(el("div", "note", "fixable: --fix (" + f.fix + ")"));
    return box;
  }
  function showFinding(k) {
    var d = $("details"); clear(d);
    var f = M.m.findings[k];
    d.appendChild(add(el("h3"), el("span", "path", f.where || "(the model)")));
    d.appendChild(findingBox(f));
  }

  // ------------------------------------------------------------------ search
  function search() {
    var q = $("search").value.trim().toLowerCase(), res = $("results");
    clear(res); state.hits = []; state.hit = 0;
    if (!q || !M) { res.classList.add("hidden"); return; }  // !M: the model shown was not read
    if (!M.lower) M.lower = { path: M.m.nodes.path.map(function (s) { return s.toLowerCase(); }), op: M.m.nodes.op.map(function (s) { return s.toLowerCase(); }) };
    var hits = [], total = 0, exactOp = [];
    for (var i = 0; i < M.N; i++) {
      var op = M.lower.op[i];
      if (op === q) { total++; if (exactOp.length < MAX_HITS) exactOp.push(i); }
      else if (M.lower.path[i].indexOf(q) >= 0 || op.indexOf(q) >= 0) { total++; if (hits.length < MAX_HITS) hits.push(i); }
    }
    hits = exactOp.concat(hits).slice(0, MAX_HITS);
    state.hits = hits;
    res.appendChild(el("div", "more", total ? plural(total, "node") + " match" + (total === 1 ? "es" : "") + (total > hits.length ? " (first " + hits.length + " shown)" : "") + "; \u2191\u2193 Enter" : "no node matches"));
    hits.forEach(function (i, k) {
      var row = el("div", "hit" + (k === 0 ? " active" : ""));
      row.setAttribute("role", "option"); row.setAttribute("data-node", String(i));
      row.appendChild(chip(M.cats[state.run][i], M.m.runs[state.run].status[i]));
      row.appendChild(el("span", "op", M.m.nodes.op[i]));
      var p = el("span", "path", M.m.nodes.path[i]); p.title = M.m.nodes.path[i]; row.appendChild(p);
      row.addEventListener("mousedown", function (e) { e.preventDefault(); pick(k); });
      res.appendChild(row);
    });
    res.classList.remove("hidden");
  }
  function pick(k) {
    var i = state.hits[k]; if (i === undefined) return;
    $("results").classList.add("hidden");
    reveal(i);
  }
  function searchKeys(e) {
    var res = $("results"), rows = res.querySelectorAll(".hit");
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      if (!rows.length) return;
      rows[state.hit].classList.remove("active");
      state.hit = (state.hit + (e.key === "ArrowDown" ? 1 : rows.length - 1)) % rows.length;
      rows[state.hit].classList.add("active"); rows[state.hit].scrollIntoView({ block: "nearest" });
      e.preventDefault();
    } else if (e.key === "Enter") { pick(state.hit); e.preventDefault(); }
    else if (e.key === "Escape") { $("search").value = ""; search(); $("search").blur(); }
  }

  // ------------------------------------------------------------------ page
  function layoutPage() {
    var hdr = el("header"); hdr.id = "hdr";
    var main = el("main");
    var side = el("aside"); side.id = "side"; side.setAttribute("aria-label", "summary");
    var tp = el("section"); tp.id = "treepane"; tp.setAttribute("aria-label", "scopes");
    var tb = el("div", "toolbar");
    var lab = el("label", null, "show"); var sel = el("select"); sel.id = "filter"; lab.appendChild(document.createTextNode(" "));
    [["all", "all scopes"], ["cpu", "scopes with CPU or no-provider nodes"], ["copies", "scopes with CPU\u2194GPU copies"],
     ["findings", "scopes with findings"], ["changed", "nodes that change provider"]].forEach(function (o) {
      var op = el("option", null, o[1]); op.value = o[0]; sel.appendChild(op);
    });
    lab.appendChild(sel); tb.appendChild(lab);
    tb.appendChild(el("span", "grow"));
    var runSel = el("select"); runSel.id = "run-pick"; runSel.className = "hidden"; runSel.setAttribute("aria-label", "release shown");
    tb.appendChild(runSel);
    var tree = el("div"); tree.id = "tree"; tree.setAttribute("role", "tree");
    add(tp, tb, tree);
    var gp = el("section"); gp.id = "graphpane"; gp.setAttribute("aria-label", "graph");
    var gb = el("div", "toolbar"), cr = el("div"); cr.id = "crumbs";
    var up = el("button", null, "\u2191 up"); up.title = "the scope above (u)";
    var fitb = el("button", null, "fit"); fitb.title = "fit the drawing (f)";
    var one = el("button", null, "1:1"); one.title = "actual size";
    add(gb, cr, el("span", "grow"), up, fitb, one);
    var wrap = el("div"); wrap.id = "graphwrap";
    var g = svg("svg", { id: "graph", role: "img", "aria-label": "graph of the selected scope" });
    var msg = el("div"); msg.id = "graphmsg";
    var lg = el("div"); lg.id = "graphlegend";
    add(wrap, g, msg, lg);
    var det = el("div"); det.id = "details";
    add(gp, gb, wrap, det);
    add(main, side, tp, gp);
    var help = el("div", "hidden"); help.id = "help";
    var dl = el("dl");
    [["/", "search by node name or op type"], ["\u2191 \u2193", "move in the results or the tree"], ["Enter", "go to the result; draw the scope"],
     ["\u2192 \u2190", "open / close a scope"], ["u", "draw the scope above"], ["f", "fit the drawing"], ["Esc", "close search, help"]].forEach(function (k) {
      add(dl, add(el("dt"), el("span", "kbd", k[0])), el("dd", null, k[1]));
    });
    add(help, el("strong", null, "Keyboard"), dl);
    add(document.body, hdr, main, help);
    sel.addEventListener("change", function () { state.filter = sel.value; renderTree(); });
    runSel.addEventListener("change", function () { state.run = +runSel.value; refresh(); });
    up.addEventListener("click", goUp);
    fitb.addEventListener("click", function () { fit(false); });
    one.addEventListener("click", function () { setView(1, state.tx, state.ty); });
    tree.addEventListener("keydown", treeKeys);
    wrap.addEventListener("click", function () { $("results").classList.add("hidden"); });
    panZoom();
    document.addEventListener("keydown", function (e) {
      var typing = e.target && (e.target.tagName === "INPUT" || e.target.tagName === "SELECT");
      if (e.key === "/" && !typing) { e.preventDefault(); $("search").focus(); $("search").select(); }
      else if (e.key === "Escape") { $("help").classList.add("hidden"); $("results").classList.add("hidden"); }
      else if (!typing && e.key === "?") $("help").classList.toggle("hidden");
      else if (!typing && e.key === "f" && !e.ctrlKey && !e.metaKey) fit(false);
      else if (!typing && e.key === "u" && !e.ctrlKey && !e.metaKey) goUp();
    });
  }
  function goUp() { if (state.scope > 0) openScope(M.m.scopes.parent[state.scope]); }

  function graphLegend() {
    var lg = $("graphlegend"); clear(lg);
    legendCategories().forEach(function (c) { lg.appendChild(chip(c, c === REMOVED ? "folded" : "", catLabel(c))); });
    if (M.R > 1) lg.appendChild(el("span", null, "left half: A " + M.m.runs[0].ort_version + ", right: B " + M.m.runs[1].ort_version));
  }

  function refresh() {
    summary();
    renderTree();
    graphLegend();
    openScope(state.scope || 0);
  }

  // the scope drawn first: the whole graph, or the scope most of it is in when the top holds little else
  function initialScope() {
    var s = 0;
    for (;;) {
      var it = items(s), best = -1;
      if (it.length > 4) return s;
      it.forEach(function (x) { if (x[0] === "s" && M.size[x[1]] >= 0.6 * M.size[s]) best = x[1]; });
      if (best < 0) return s;
      s = compact(best).pop();
    }
  }

  function openModel(k) {
    state.model = k; state.run = 0; state.filter = "all"; state.scope = 0;
    // the results listed are node numbers of the model left: drop them (typing searches this model)
    clear($("results")); $("results").classList.add("hidden"); state.hits = []; state.hit = 0;
    var m = doc.models[k];
    if (m.error) {
      M = null;
      ["side", "tree", "details", "crumbs", "graphlegend"].forEach(function (id) { clear($(id)); });
      clear($("graph")); state.view = null; state.nodeEls = {}; state.edgeEls = [];
      $("graphmsg").textContent = ""; $("run-pick").classList.add("hidden");
      $("side").appendChild(el("p", "fatal", m.file + ": " + m.error));
      $("hdr-rel").textContent = "";
      return;
    }
    M = prepare(m);
    state.scope = initialScope();
    $("hdr-rel").textContent = m.target + " \u00b7 " + m.runs.map(function (_, r) { return runLabel(r); }).join(" \u27f7 ") +
      " \u00b7 optimization " + m.runs[0].optimization;
    var runSel = $("run-pick"); clear(runSel);
    if (M.R > 1) {
      runSel.classList.remove("hidden");
      m.runs.forEach(function (run, r) { var o = el("option", null, "copies and lists: " + (r ? "B " : "A ") + run.ort_version); o.value = String(r); runSel.appendChild(o); });
    } else runSel.classList.add("hidden");
    // a filter that can match nothing on this model is not offered: "change provider" needs two releases,
    // "findings" a lint page's model with findings, "copies" a page that shows copies (not TensorRT's)
    Array.prototype.forEach.call($("filter").options, function (o) {
      o.hidden = o.disabled = (o.value === "changed" && M.R < 2) || (o.value === "findings" && !m.findings.length) ||
        (o.value === "copies" && M.trt);
    });
    $("filter").value = "all";
    clear($("details"));
    $("details").appendChild(el("p", "note", "Select a node (tree, drawing or search) to see where it runs and why."));
    refresh();
  }

  function boot() {
    try {
      doc = JSON.parse(document.getElementById("onnxlint-data").textContent);
      state = { model: 0, run: 0, filter: "all" };
      layoutPage();
      header();
      if (!doc.models.length) { $("side").appendChild(el("p", "fatal", "no model in this report")); return; }
      openModel(0);
      window.onnxlintReport = {
        expand: function (s) { var row = $("tree").querySelector('.row[data-scope="' + s + '"]'); if (row) expand(row); return !!row; },
        collapse: function (s) { var row = $("tree").querySelector('.row[data-scope="' + s + '"]'); if (row) collapse(row); return !!row; },
        draw: drawScope, reveal: reveal, openModel: openModel, open: openScope, search: search,
        items: function (s) { return items(s).length; },
        widestScope: function () {
          var best = 0, n = -1;
          for (var s = 0; s < M.S; s++) if (M.kids[s].length + M.leaves[s].length > n) { n = M.kids[s].length + M.leaves[s].length; best = s; }
          return best;
        },
      };
      document.body.setAttribute("data-ready", "1");
      if (window.performance && performance.mark) performance.mark("onnxlint-ready");
    } catch (err) {
      document.body.appendChild(el("p", "fatal", "this report could not be drawn: " + err));
      console.error(err);
    }
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot); else boot();
})();
