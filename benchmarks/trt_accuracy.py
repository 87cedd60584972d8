#!/usr/bin/env python3
"""How well onnxlint's TensorRT verdicts predict TensorRT's real ONNX parser (accept / reject per model).

Truth comes from TSVs written by a run of the real parser on the same models (the workspace's trt-parser-truth
harness, `trt_parse_truth.py`: one row per model with `test` and `verdict` = accept | reject | crash | timeout).
onnxlint "predicts reject" when any node (subgraphs included) gets status `unsupported` (what OLX300/OLX310
report as errors), reason `other-shapes` (OLX317's error: the parser accepts the node and builds other shapes,
so a later node fails or another network is built) or reason `parser-crash` (OLX313's warning), or when external
data is missing (OLX003) or a network input or initializer no node reads has a type the parser cannot take
(OLX319); a parser crash or timeout counts as a rejection. A parse the truth run recorded as
accepted with network output shapes (`net_out_shapes`) other than the model's built another network: agreement
when onnxlint rejects it.

usage:
  python benchmarks/trt_accuracy.py --truth LABEL=TRUTH.tsv[,TRUTH2.tsv...] [--truth ...] --models DIR [--models DIR ...]
      [--set NAME] [--out DISAGREE.tsv] [--show N]
  LABEL: the onnxlint TensorRT table to predict with (8.4, 8.5, 8.6, 10.1, 10.1+rtx1.4, ...)
  DIR:   where the models named in the TSV are: node-test roots (<test>/model.onnx) or folders of <name>.onnx
         (searched recursively: bench-out/models/<family>/<name>.onnx; under a folder with a _manifest.part.tsv,
         the manifest's names: bench-out/models/optimum/bart/decoder_model.onnx is `bart/decoder_model`)

Prints per version: agreement, false alarms (onnxlint rejects, the parser accepts) and misses (the parser rejects,
onnxlint does not), each grouped by cause; and, on the models both reject, whether onnxlint's first rejected node
(graph order) is the one the parser stopped at (same op type; for an initializer the parser could not import, a
verdict saying so), and whether the parser's words onnxlint quotes (a probe-measured verdict) are the parser's
words here.
"""

from __future__ import annotations

import argparse
import collections
import csv
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
csv.field_size_limit(1 << 24)


SOURCE: dict[str, str] = {}  # model name -> its manifest's source (the producer family), where a manifest names it


def find_models(dirs: list[str]) -> dict[str, list[str]]:
    """name -> model paths. Under a folder with a `_manifest.part.tsv` (make_transformer_exports.py's families)
    a model is named by that manifest: its path below the folder without `.onnx` (`bart/decoder_model`,
    `gemma_fp16_cuda/model`), which keeps optimum's and the GenAI builder's same-named files apart."""
    out: dict[str, list[str]] = collections.defaultdict(list)
    for d in dirs:
        for root, subdirs, files in os.walk(d):
            if "_manifest.part.tsv" in files:
                for row in csv.DictReader(open(os.path.join(root, "_manifest.part.tsv")), delimiter="\t"):
                    family = os.path.basename(os.path.normpath(root))
                    path = os.path.join(os.path.dirname(os.path.normpath(root)), row["path"]) \
                        if row["path"].startswith(family + "/") else os.path.join(root, row["path"])
                    if os.path.exists(path):
                        # a folder-per-test truth run (`make_producer_exports.py layout`) names `a/b` as `a__b`
                        for name in {row["name"], row["name"].replace("/", "__")}:
                            out[name].append(path)
                            SOURCE.setdefault(name, row.get("source") or family)
                subdirs[:] = []
                continue
            if "model.onnx" in files:
                out[os.path.basename(root)].append(os.path.join(root, "model.onnx"))
                subdirs[:] = []
                continue
            for f in files:
                if f.endswith(".onnx"):
                    out[f[:-5]].append(os.path.join(root, f))
    return out


def first_error(bad: list, row: dict) -> tuple[bool, bool | None]:
    """(onnxlint's first rejected node is where the parser stopped, the words it quotes are the parser's: None
    where it quotes none) for a model both reject."""
    import re

    main = [v for v in bad if getattr(getattr(v.node, "scope", None), "parent", None) is None] or bad
    # the parser imports every initializer before any node: a stored tensor it cannot import fails it first
    network_input = ("cannot take a network input", "network inputs are tensors")  # importInputs: first of all
    stored = [v for v in main if "cannot import" in v.detail or any(w in v.detail for w in network_input)]
    first = min(stored or main, key=lambda v: getattr(v.node, "index", 0))
    op = (row.get("error_ops") or "-").split(",")[0]
    said = " ".join((row.get("error_desc", ""), row.get("log", "")))
    if op == "-" and "initializer" in said:  # parseGraph imports every initializer before any node
        same = "cannot import" in first.detail
    elif op == "-" and "Failed to convert ONNX date type" in said:  # importInputs: the network's inputs, first of all
        same = any(w in first.detail for w in network_input)
    else:
        same = op in ("-", first.node.op_type)
    quoted = re.search(r'"([^"]{12,})"', first.detail)
    if not quoted:
        return same, None
    words = re.sub(r"\s+", " ", quoted.group(1)).rstrip(".")
    said = " ".join(said.split())
    return same, all(part.strip() in said for part in words.split(" (")[0].split("<name>"))  # <name>: a tensor's


def truth_cause(row: dict) -> str:
    v = row.get("verdict", "")
    if v == "accept":
        return "accept"
    if v in ("crash", "timeout", "missing", "error"):
        return v
    func, desc = row.get("error_func", ""), row.get("error_desc", "")
    if (func == "importFallbackPluginImporter" or "No importer registered" in desc or "Plugin not found" in desc
            or (func.startswith("check") and desc == "false") or "is not supported in TensorRT-RTX" in desc):
        return "no-importer"
    if func == "importInput" or "Failed to convert ONNX date type" in desc:
        return "input-dtype"
    return "node-check"


_cache: dict = {}


def predict_model(path: str, label: str):
    import onnx

    from onnxlint.model.graph import GraphIndex
    from onnxlint.tensorrt import model_importer

    key = path
    if key not in _cache:
        _cache.clear()
        try:
            m = onnx.load(path, load_external_data=False)
            try:  # as onnxlint's loader does: value types for every edge
                m = onnx.shape_inference.infer_shapes(m, check_type=False, strict_mode=False)
            except Exception:
                pass
            _cache[key] = GraphIndex(m)
        except Exception as e:  # unreadable model
            _cache[key] = e
    index = _cache[key]
    if isinstance(index, Exception):
        return None, f"load error: {index}"
    missing = _missing_external(index.model, path)
    if missing:  # onnxlint's OLX003 (external-data-missing, an error on every target): the parser cannot load it
        return [_Missing(missing)], ""
    pred = model_importer.predict(index, label)
    bad = [v for v in pred.nodes.values() if v.status == "unsupported" or v.reason in ("parser-crash", "other-shapes")]
    # a network input or initializer no node reads that the parser cannot take (OLX319): before any node
    return [_Unread(text) for text in pred.unread_imports] + bad, ""


def _other_network(row: dict, path: str) -> bool:
    """Whether the truth row (a harness run that records `net_out_shapes`: [[name, dims], ...] of an accepted
    parse) shows a network output whose rank or a fixed dim differs from the model's declared output."""
    import json

    import onnx

    if not row.get("net_out_shapes"):
        return False
    try:
        got = {name: dims for name, dims in json.loads(row["net_out_shapes"])}
        outs = onnx.load(path, load_external_data=False).graph.output
    except Exception:
        return False
    for o in outs:
        dims = got.get(o.name)
        t = o.type.tensor_type
        if dims is None or not o.type.HasField("tensor_type") or not t.HasField("shape"):
            continue
        want = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
        if len(want) != len(dims) or any(w is not None and g >= 0 and w != g for w, g in zip(want, dims)):
            return True
    return False


class _Unread:
    reason = "network-import"
    node = None

    def __init__(self, detail):
        self.detail = detail


class _Missing:
    reason = "external-data-missing"

    def __init__(self, name):
        self.detail = f"OLX003: external data file {name} is missing"

        class _N:
            op_type = "-"
        self.node = _N()


def _missing_external_path(path):
    import onnx
    try:
        return _missing_external(onnx.load(path, load_external_data=False), path)
    except Exception:
        return None


def _missing_external(model, path):
    base = os.path.dirname(os.path.abspath(path))
    for t in model.graph.initializer:
        if t.data_location == 1:  # EXTERNAL
            loc = next((e.value for e in t.external_data if e.key == "location"), None)
            if loc and not os.path.exists(os.path.join(base, loc)):
                return loc
    return None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--truth", action="append", required=True, help="LABEL=TRUTH.tsv[,...]")
    ap.add_argument("--models", action="append", required=True)
    ap.add_argument("--set", default="", help="name of this model set in the output")
    ap.add_argument("--out", help="write every disagreement here (TSV)")
    ap.add_argument("--show", type=int, default=8, help="groups of disagreements to print per version")
    args = ap.parse_args(argv)
    models = find_models(args.models)
    disagreements = []
    print("| set | onnxlint table | models | parser rejects | agreement | false alarms | misses |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    report = []
    for spec in args.truth:
        label, files = spec.split("=", 1)
        rows = []
        for f in files.split(","):
            rows += list(csv.DictReader(open(f), delimiter="\t", quoting=csv.QUOTE_NONE))
        c = collections.Counter()
        fa, miss = collections.defaultdict(list), collections.defaultdict(list)
        other_net: list[str] = []
        other_first: list[str] = []
        wrong_words: list[str] = []
        n = 0
        excluded = []
        by_src: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        for r in rows:
            paths = models.get(r["test"])
            if not paths:
                continue
            if "Failed to open file" in r.get("log", "") + r.get("error_desc", "") and not _missing_external_path(paths[0]):
                # the truth run handed the parser a wrong model path: external data it could not open is there
                excluded.append(r["test"])
                continue
            n += 1
            src = by_src[SOURCE.get(r["test"], "-")]
            src["models"] += 1
            bad, err = predict_model(paths[0], label)
            truth_ok = r["verdict"] == "accept"
            pred_ok = not bad
            if truth_ok == pred_ok:
                c["agree"] += 1
                if not truth_ok and bad and r["verdict"] == "reject":
                    same, words = first_error(bad, r)
                    c["both reject"] += 1
                    c["same first node"] += same
                    if not same:
                        other_first.append(r["test"])
                    if words is not None:
                        c["quoted"] += 1
                        c["quoted right"] += words
                        if not words:
                            wrong_words.append(r["test"])
                continue
            if truth_ok and _other_network(r, paths[0]):
                # the parser accepted, but built outputs of other shapes than the model's: what onnxlint called
                # rejected (a Shape whose start/end the parser ignores) is not the model TensorRT would run
                c["agree"] += 1
                other_net.append(r["test"])
                continue
            src["false alarms" if truth_ok else "misses"] += 1
            if truth_ok:
                v = bad[0]
                key = f"{v.node.op_type} ({v.reason})"
                fa[key].append(r["test"])
                disagreements.append((label, r["test"], "false-alarm", key, v.detail[:160]))
            else:
                key = f"{truth_cause(r)} {(r.get('error_ops') or '-').split(',')[0]}"
                miss[key].append(r["test"])
                disagreements.append((label, r["test"], "miss", key,
                                      (r.get("error_func", "") + ": " + r.get("error_desc", "") + " " + r.get("log", ""))[:200]))
        nfa, nmiss = sum(map(len, fa.values())), sum(map(len, miss.values()))
        rej = sum(1 for r in rows if models.get(r["test"]) and r["verdict"] != "accept")
        rej -= len(excluded)
        print(f"| {args.set} | {label} | {n} | {rej} | {c['agree']} ({100 * c['agree'] / max(n, 1):.1f} %) | {nfa} | {nmiss} |")
        if c["both reject"]:
            print(f"  ({label} first error, of {c['both reject']} models both reject: onnxlint's first rejected node is the "
                  f"parser's in {c['same first node']}; the parser's words it quotes are the parser's here in "
                  f"{c['quoted right']} of {c['quoted']}"
                  + (f"; other first node: {', '.join(other_first[:6])}" if other_first else "")
                  + (f"; other words: {', '.join(wrong_words[:6])}" if wrong_words else "") + ")")
        if other_net:
            print(f"  ({label}: {len(other_net)} accepted by the parser as a network whose output shapes differ from the "
                  f"model's, which onnxlint calls rejected, counted as agreement: {', '.join(other_net[:4])})")
        if len(by_src) > 1:  # per producer family (the manifests' sources)
            print(f"  ({label} by source, agreement / false alarms / misses: " + ", ".join(
                f"{k} {100 * (v['models'] - v['false alarms'] - v['misses']) / v['models']:.1f} % of {v['models']} "
                f"{v['false alarms']}/{v['misses']}" for k, v in sorted(by_src.items())) + ")")
        if excluded:
            print(f"  ({label}: {len(excluded)} left out: the truth run could not open their external data, which is present: "
                  f"{', '.join(excluded[:4])})")
        report.append((label, fa, miss))
    for label, fa, miss in report:
        if fa or miss:
            print(f"\n[{args.set} {label}]")
        for title, groups in (("false alarms", fa), ("misses", miss)):
            for key, tests in sorted(groups.items(), key=lambda kv: -len(kv[1]))[:args.show]:
                print(f"  {title}: {len(tests)} {key}: {', '.join(tests[:3])}")
    if args.out:
        with open(args.out, "w") as f:
            f.write("table\ttest\tkind\tgroup\tdetail\n")
            for row in disagreements:
                f.write("\t".join(str(x).replace("\t", " ").replace("\n", " ") for x in row) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
