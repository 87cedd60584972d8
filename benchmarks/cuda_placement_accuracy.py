#!/usr/bin/env python3
"""onnxlint's ort-cuda placement against ORT's real partitioner, node by node.

Prerequisite (a measurement of the workspace, not part of onnxlint): truth TSVs written by the ORT CUDA truth
harness (`cuda_placement_truth_opt.py`, run under stub CUDA libraries, see that harness's README): for a set
of models and an onnxruntime-gpu release, one TSV per graph-optimization level, named

    TRUTH_DIR/<set>-ort-<version>-<level>.tsv        level: off | basic | all

with one `orig` row per original node (ep = CUDA | CPU | gone | initializer), `new` rows for nodes ORT
created and `memcpy` rows for the Memcpy nodes it inserted; and the renamed copies of the models (nodes
n0, n1, ...) under NAMED_DIR/<set>/<test>.onnx, on which the truth was taken (external data beside them).

The sets (a set is a name shared by its TSVs and its NAMED_DIR folder; --sets picks some):
  node123       onnx's backend node tests (`../shared/corpus/gen_onnx_node_tests.py`), truth at 1.20.2 / 1.24.4 / 1.31.1
  corpus        `../shared/corpus/models`
  exports       bench-out/models' CNN-heavy set (torch 2.13 TorchScript and dynamo, torchvision, quantized, PyPI)
  transformers  issue 31's transformer / LLM set, 150 models (benchmarks/make_transformer_exports.py):
                bench-out/models/{hf-torchscript, hf-dynamo, optimum, ort-optimizer, fp16-converter, genai-builder,
                timm, ultralytics}; test name `<source>__<path, / as __, .onnx and /model dropped>`, e.g.
                optimum__t5__decoder_model_merged, genai-builder__llama_int4_cuda; truth at 1.24.4 and 1.31.1
                (on this workspace: /work/truth/ort, README.txt there says how it was made)
  producers     issue 41's producer set (benchmarks/make_producer_exports.py): bench-out/models/{tf2onnx-keras,
                tflite, hf-tf, skl2onnx, onnxmltools, ort-quant, diffusers-torchscript, diffusers-dynamo,
                diffusers-optimum, opset20-23, paddle2onnx}; test name `<source>__<manifest name, / as __>`, e.g.
                ort-quant__torch_cnn_op17_qoperator, diffusers-optimum__sd_optimum__unet; truth at 1.24.4 and 1.31.1
                (laid out for the harness by `make_producer_exports.py layout --dest DIR`)
A test name `<source>__<rest>` groups disagreements by source (the exporter or tool that made the model).

For each TSV this runs `placement.simulate(index, "ort-cuda", <version>, optimization=<level>)` on the
model copy and compares every original node of a session ORT built:
  * agreement: same EP, or both say the node does not exist at that level (folded, eliminated, fused,
    expanded into a function body, a duplicate Cast removed after partitioning);
  * false alarm: onnxlint says CPU (fallback, deliberate or no provider) but ORT runs the node on CUDA or
    removed it - every node onnxlint reports on CPU should be on CPU in ORT's session;
  * miss: ORT runs the node on CPU, onnxlint says CUDA (or that it is gone);
  * other: onnxlint says CUDA but ORT removed the node, or the reverse (harmless for findings);
  * CPU-or-not agreement: both say CPU, or both say not CPU (issue 31's measure: other counts as agreement).
A node of an If branch ORT inlined (constant condition) is judged by the EP of the renamed copy ORT made; a
Transpose the TransposeOptimizer moved, by the EP of the Transpose it created (`Transpose_token_N`). The nodes
ORT creates that stand for no original node (a DequantizeLinear copy, the Gather of a Shape the
TransposeOptimizer moved a Transpose through, NhwcTransformer's Transposes, a Split, a function body's nodes)
are judged too, per model and op type against the nodes onnxlint's placement says ORT creates
(`Placement.created`): a node ORT creates on CPU agrees only where onnxlint predicts one of that op type on
CPU (a miss otherwise), and one onnxlint predicts on CPU that ORT does not create there is a false alarm. At level
all a node that exists at basic and is gone at all was fused by a Level-2/3 transformer after partitioning: it
is judged by its EP in the basic session (the CPU work is still there, in the fused node). At off and basic
nothing fuses after partitioning: a node gone there is gone (ORT's duplicate-Cast removal), never CPU work.
It also compares session failures (ORT refused the model; does onnxlint call a node unsupported? and the nodes
onnxlint calls unsupported in sessions ORT built) and the number of Memcpy nodes with onnxlint's boundaries,
per model. With --cpu it also runs the CPU-EP benchmark (placement_accuracy.py: onnx's node tests against the
installed onnxruntime's CPU provider).

  python benchmarks/cuda_placement_accuracy.py --truth-dir T --named-dir N [--sets node123,transformers]
         [--versions 1.24.4] [--levels off,all] [--details 12] [--cpu]
"""

from __future__ import annotations

import argparse
import csv
import inspect
import os
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import onnxlint.model.loading as loading  # noqa: E402
import onnxlint.ort.partitioner as placement  # noqa: E402

csv.field_size_limit(10**9)
LEVEL = {"off": "disabled", "basic": "basic", "all": "all"}
CPU_STATUSES = {"fallback", "deliberate", "unsupported"}


def truth_files(truth_dir: Path, sets, versions, levels):
    for path in sorted(truth_dir.glob("*-ort-*-*.tsv")):
        if path.name.endswith(".models.tsv"):
            continue
        stem = path.name[:-4]
        head, level = stem.rsplit("-", 1)
        name, version = head.split("-ort-", 1)
        if (sets and name not in sets) or (versions and version not in versions) or (levels and level not in levels):
            continue
        yield name, version, level, path


def predicted(p) -> str:
    """onnxlint's verdict for one node: CUDA | CPU | gone."""
    if p.status in getattr(placement, "GONE_STATUSES", ("expanded",)):
        return "gone"
    if p.status in CPU_STATUSES or p.ep != placement.CUDA:
        return "CPU"
    return "CUDA"


def simulate(index, version: str, level: str):
    kw = {}
    if "optimization" in inspect.signature(placement.simulate).parameters:
        kw["optimization"] = LEVEL[level]
    return placement.simulate(index, "ort-cuda", version, **kw)


def partition_eps(path: Path, level: str) -> dict:
    """For level all: {(test, node): EP} from the same models at level basic. Level-2/3 fusions run after
    partitioning (inference_session.cc TransformGraph) on nodes already placed, and the Level-1 transformers
    are the same at basic and all, so a node fused away at all was placed where the basic session has it."""
    basic = path.with_name(path.name.replace(f"-{level}.tsv", "-basic.tsv"))
    if level != "all" or not basic.exists():
        return {}
    return {(r["test"], r["name"]): r["ep"] for r in csv.DictReader(open(basic), delimiter="\t")
            if r["row"] == "orig" and r["ep"] in ("CUDA", "CPU")}


def measure(set_name, version, level, path, named_dir: Path) -> dict:
    rows = list(csv.DictReader(open(path), delimiter="\t"))
    at_partition = partition_eps(path, level)
    by_test = defaultdict(list)
    for r in rows:
        by_test[r["test"]].append(r)
    res = {"agree": Counter(), "alarm": defaultdict(list), "miss": defaultdict(list), "other": defaultdict(list),
           "refused": 0, "refused_flagged": 0, "refused_lost": [], "built_unsup": [], "built_unsup_nodes": 0,
           "failed_other": [], "memcpy_truth": 0, "memcpy_off": [], "by_source": defaultdict(Counter),
           "boundaries": 0, "memcpy_exact": 0, "models": 0, "no_model": 0, "gone_agree": 0, "fused_later": 0,
           "created_cpu": Counter(), "created": Counter(), "created_miss": defaultdict(list),
           "created_alarm": defaultdict(list)}
    for test, trs in sorted(by_test.items()):
        model_path = named_dir / set_name / f"{test}.onnx"
        if not model_path.exists():
            res["no_model"] += 1
            continue
        mf = loading.load(model_path)
        index = loading.index_model(mf)
        pl = simulate(index, version, level)
        by_name = {p.node.name: p for p in pl.nodes.values()}
        outcome = trs[0]["outcome"]
        unsup = [p for p in pl.nodes.values() if p.status == "unsupported"]
        if outcome != "ok":
            msg = trs[0]["message"]
            flagged = bool(unsup or getattr(pl, "refused", None))
            # (TransformerMemcpyImpl::ProcessInitializers fails only on "Failed to find kernel", a node a Level-2
            # fusion made on CUDA; the harness's TSV keeps the message's first 300 characters, the path before it)
            if any(s in msg for s in ("Could not find an implementation", "node_provider_type.empty()", "Failed to find kernel",
                                      "Unsupported model IR version", "opset", "is under development",
                                      "TransformerMemcpyImpl::ProcessInitializers")):
                res["refused"] += 1
                if flagged:
                    res["refused_flagged"] += 1
                else:
                    res["refused_lost"].append(test)
            else:  # a type error, a shape inference failure, ...: not a placement question
                res["failed_other"].append((test, flagged, " ".join(msg.split())[:90]))
            continue
        res["models"] += 1
        if unsup:
            res["built_unsup"].append(test)
            res["built_unsup_nodes"] += len(unsup)
        # the nodes ORT created (row numbers): those that stand for an original node are used up judging it,
        # the others are judged against the nodes onnxlint says ORT creates (judge_created)
        new = [k for k, r in enumerate(trs) if r["row"] == "new" and r["ep"] in ("CUDA", "CPU")]
        used: set[int] = set()
        replaced = {}  # original node -> the node ORT rewrote it into (layout transforms, '<name>_token_N')
        for k in new:
            r = trs[k]
            src = r["message"][5:].rsplit(" by ", 1)[0] if r["message"].startswith("from ") else r["name"].split("_token_")[0]
            if src != r["name"] and not r["message"].endswith(" by duplicated"):
                replaced.setdefault((src, r["op_type"]), k)
        # nodes of an If branch ORT inlined (constant condition) come back under new names, `_if_<branch>_...`:
        # their EPs by op type, consumed by the branch's original nodes in order
        inlined: dict[str, list[int]] = defaultdict(list)
        for k in new:
            if trs[k]["name"].startswith("_if_"):
                inlined[trs[k]["op_type"]].append(k)
        # a Level-1 fusion that replaces a node by another op under a derived name (MatMulAddFusion: MatMul ->
        # Gemm '<name>/MatMulAddFusion'): onnxlint keeps the first node standing for the fused one
        fused_into = {trs[k]["message"][5:].rsplit(" by ", 1)[0]: k for k in new if trs[k]["message"].endswith(" by MatMulAddFusion")}
        # ReshapeFusion's contiguous reshapes become '<first>_new_reshape'
        fused_into.update({trs[k]["name"][:-len("_new_reshape")]: k for k in new if trs[k]["name"].endswith("_new_reshape")})
        # the TransposeOptimizer removes Transposes and creates new ones elsewhere, named after the op
        # (`Transpose_token_5`): a removed original Transpose is judged by such a copy's EP, in order
        generated: dict[str, list[int]] = defaultdict(list)
        for k in new:
            if re.fullmatch(rf"{trs[k]['op_type']}(_token_\d+)?", trs[k]["name"]):
                generated[trs[k]["op_type"]].append(k)
        for k in new:  # nodes ORT creates on CPU, by op type and creator
            r = trs[k]
            if r["ep"] == "CPU":
                by = r["message"].rsplit(" by ", 1)[1] if " by " in r["message"] else ""
                res["created_cpu"][r["op_type"] + (f" ({re.sub(r'_token_[0-9]+$', '', by)})" if by else "")] += 1
        memcpy = sum(1 for r in trs if r["row"] == "memcpy")
        res["memcpy_truth"] += memcpy
        res["boundaries"] += len(pl.boundaries)
        res["memcpy_exact"] += memcpy == len(pl.boundaries)
        if memcpy != len(pl.boundaries):
            res["memcpy_off"].append((test, memcpy, len(pl.boundaries)))
        for r in trs:
            if r["row"] != "orig" or r["ep"] not in ("CUDA", "CPU", "gone"):
                continue
            p = by_name.get(r["name"])
            if p is None:
                continue  # a Constant node (onnxlint places none) or a node of a model-local function
            truth, pred = r["ep"], predicted(p)
            stand_in = None
            if truth == "gone" and pred != "gone" and ":" in r["graph"] and inlined.get(r["op_type"]):
                stand_in = inlined[r["op_type"]].pop(0)  # inlined from a branch of a folded If, renamed
            elif truth == "gone" and pred != "gone" and r["op_type"] == "Transpose" and generated.get("Transpose"):
                stand_in = generated["Transpose"].pop(0)
            elif truth == "gone" and pred != "gone" and r["name"] in fused_into:
                stand_in = fused_into[r["name"]]
            elif truth == "gone" and (r["name"], r["op_type"]) in replaced:
                stand_in = replaced[r["name"], r["op_type"]]  # rewritten in place (same op), e.g. by a layout transformer
            if stand_in is not None:
                truth = trs[stand_in]["ep"]
                used.add(stand_in)
            elif truth == "gone" and level == "all" and (test, r["name"]) in at_partition and pred != "gone":
                truth = at_partition[test, r["name"]]  # fused by a Level-2/3 transformer after partitioning
                res["fused_later"] += 1
            elif truth == "gone" and level == "all" and not at_partition and pred != "gone" \
                    and r["cuda_log"] in ("cpu-preferred", "not-supported"):
                # no basic-level truth to tell a Level-2 fusion from the duplicate-Cast removal: the log shows
                # ORT put it on CPU at partitioning
                truth = "CPU"
                res["fused_later"] += 1
            op = r["op_type"] if r["domain"] == "ai.onnx" else f'{r["domain"]}::{r["op_type"]}'
            item = (test, r["name"], p.status, p.reason or "", (p.detail or "")[:150], r["cuda_log"])
            source = test.split("__", 1)[0] if "__" in test else set_name
            res["by_source"][source]["judged"] += 1
            if truth == pred:
                res["agree"][truth] += 1
            elif pred == "CPU":
                res["alarm"][op].append(item)
                res["by_source"][source]["alarm"] += 1
            elif truth == "CPU":
                res["miss"][op].append(item)
                res["by_source"][source]["miss"] += 1
            else:
                res["other"][op].append(item + (f"truth {truth}, onnxlint {pred}",))
        source = test.split("__", 1)[0] if "__" in test else set_name
        judge_created(res, test, source, [trs[k] for k in new if k not in used],
                      [c for c in getattr(pl, "created", []) if not getattr(c, "replaces", False)])
    return res


def judge_created(res, test: str, source: str, ort_rows, predicted_nodes) -> None:
    """The nodes ORT created that stand for no original node, against the ones onnxlint says ORT creates, per
    op type: CPU-or-not counts the nodes either side puts on CPU (both: agreement; ORT only: a miss; onnxlint
    only: a false alarm), kept apart from the original nodes' figures (cpu_or_not(res, created=True) adds them).
    Every created node is also counted by EP (created agreement)."""
    ort, ours = Counter(), Counter()
    for r in ort_rows:
        ort[r["op_type"], r["ep"]] += 1
    for c in predicted_nodes:
        ours[c.op_type, "CPU" if c.ep == placement.CPU else "CUDA" if c.ep == placement.CUDA else "none"] += 1
    for (op, ep) in set(ort) | set(ours):
        both = min(ort[op, ep], ours[op, ep])
        res["created"][ep, "agree"] += both
        res["created"][ep, "ort"] += ort[op, ep]
        res["created"][ep, "onnxlint"] += ours[op, ep]
        if ep != "CPU":
            continue
        miss, alarm = ort[op, ep] - both, ours[op, ep] - both
        res["by_source"][source]["created_judged"] += both + miss + alarm
        res["by_source"][source]["created_wrong"] += miss + alarm
        item = (test, "(created)", "created", "", f"ORT creates {ort[op, ep]} {op} on CPU, onnxlint predicts {ours[op, ep]}", "")
        if miss:
            res["created_miss"][op].extend([item] * miss)
        if alarm:
            res["created_alarm"][op].extend([item] * alarm)


def cpu_or_not(res, created: bool = False) -> tuple[int, int]:
    """(nodes on whose CPU-or-not both agree, nodes judged): 'other' (CUDA vs gone) agrees on not-CPU. created:
    the nodes ORT creates on CPU (and those onnxlint says it does) counted too."""
    n_alarm = sum(map(len, res["alarm"].values()))
    n_miss = sum(map(len, res["miss"].values()))
    judged = sum(res["agree"].values()) + n_alarm + n_miss + sum(map(len, res["other"].values()))
    same = judged - n_alarm - n_miss
    if created:
        wrong = sum(map(len, res["created_miss"].values())) + sum(map(len, res["created_alarm"].values()))
        same += res["created"]["CPU", "agree"]
        judged += res["created"]["CPU", "agree"] + wrong
    return same, judged


def report(set_name, version, level, res, details: int) -> list[str]:
    n_alarm = sum(map(len, res["alarm"].values()))
    n_miss = sum(map(len, res["miss"].values()))
    n_other = sum(map(len, res["other"].values()))
    agree = sum(res["agree"].values())
    judged = agree + n_alarm + n_miss + n_other
    same_cpu, _ = cpu_or_not(res)
    a = res["agree"]
    lines = [f"== {set_name} | onnxruntime-gpu {version} | optimizations {level}: {res['models']} sessions built",
             f"   CPU-or-not agreement {same_cpu}/{judged} = {100.0 * same_cpu / max(judged, 1):.3f}%  false alarms {n_alarm}"
             f"  misses {n_miss}  (node agreement {100.0 * agree / max(judged, 1):.2f}%: CUDA {a['CUDA']}, CPU {a['CPU']},"
             f" gone {a['gone']}; other {n_other})",
             (f"   {res['fused_later']} nodes ORT fused after partitioning judged by their EP at partitioning"
              " (the basic-level session, or its log)\n" if res["fused_later"] else "") +
             f"   Memcpy nodes: ORT {res['memcpy_truth']}, onnxlint boundaries {res['boundaries']} "
             f"(equal in {res['memcpy_exact']}/{res['models']} models)" +
             (f"; differ: {', '.join(f'{t} {m}/{b}' for t, m, b in res['memcpy_off'][:12])}" if res["memcpy_off"] else ""),
             f"   sessions ORT refused for want of a kernel / opset / IR: {res['refused']}, onnxlint flags {res['refused_flagged']}"
             + (f"; not flagged: {', '.join(res['refused_lost'][:8])}" if res["refused_lost"] else "")
             + f"; nodes onnxlint calls unsupported in sessions ORT built: {res['built_unsup_nodes']}"]
    if res["created_cpu"]:
        lines.append(f"   nodes ORT created on CPU: {sum(res['created_cpu'].values())}: " + ", ".join(
            f"{op} {n}" for op, n in res["created_cpu"].most_common(8)))
    c = res["created"]
    if c["CPU", "ort"] or c["CPU", "onnxlint"] or c["CUDA", "ort"] or c["CUDA", "onnxlint"]:
        same_c, judged_c = cpu_or_not(res, created=True)
        lines.append(f"   with the nodes ORT creates (standing for no original node): CPU-or-not {same_c}/{judged_c} = "
                     f"{100.0 * same_c / max(judged_c, 1):.3f}%; created on CPU: ORT {c['CPU', 'ort']}, onnxlint "
                     f"{c['CPU', 'onnxlint']}, both {c['CPU', 'agree']}; on CUDA: ORT {c['CUDA', 'ort']}, onnxlint "
                     f"{c['CUDA', 'onnxlint']}, both {c['CUDA', 'agree']}")
    if res["failed_other"]:
        flagged = [t for t, f, _ in res["failed_other"] if f]
        lines.append(f"   sessions ORT failed for other reasons: {len(res['failed_other'])} (onnxlint calls a node unsupported in "
                     f"{len(flagged)}), e.g. {res['failed_other'][0][0]}: {res['failed_other'][0][2]}")
    if res["built_unsup"]:
        lines.append(f"   sessions ORT built although onnxlint says no provider: {len(res['built_unsup'])}: "
                     f"{', '.join(res['built_unsup'][:8])}")
    if len(res["by_source"]) > 1:
        lines.append("   by source (CPU-or-not, false alarms/misses of judged nodes): " + ", ".join(
            f"{src} {100.0 * (c['judged'] - c['alarm'] - c['miss']) / max(c['judged'], 1):.2f}% "
            f"{c['alarm']}/{c['miss']} of {c['judged']}" for src, c in sorted(res["by_source"].items())))
        if any(c["created_judged"] for c in res["by_source"].values()):
            lines.append("   by source, with the nodes ORT creates (CPU-or-not, wrong of judged): " + ", ".join(
                f"{src} {100.0 * (j - c['alarm'] - c['miss'] - c['created_wrong']) / max(j, 1):.2f}% "
                f"{c['alarm'] + c['miss'] + c['created_wrong']} of {j}"
                for src, c in sorted(res["by_source"].items()) for j in [c["judged"] + c["created_judged"]]))
    for key in ("alarm", "miss", "other", "created_alarm", "created_miss"):
        groups = sorted(res[key].items(), key=lambda kv: (-len(kv[1]), kv[0]))
        for op, items in groups[:details]:
            causes = Counter(f"{it[2]}/{it[3]}" + (f" [ORT: {it[5]}]" if it[5] else "") for it in items).most_common(2)
            tests = sorted({it[0] for it in items})
            label = {"alarm": "false alarm", "miss": "miss", "other": "other", "created_alarm": "created, false alarm",
                     "created_miss": "created, miss"}[key]
            lines.append(f"   {label}: {op} x{len(items)} ({', '.join(f'{c} x{n}' for c, n in causes)})"
                         f" e.g. {', '.join(tests[:3])}{' ...' if len(tests) > 3 else ''}: {items[0][4]}")
    return lines


def use_tables(folder: Path) -> None:
    """Read kernel tables from plain ort-<version>-<ep>.json files (e.g. the truth harness's registry dumps)."""
    import json

    import onnxlint.ort.kernel_registry as kernels

    files = {}
    for path in folder.glob("ort-*-*.json"):
        _, version, ep = path.stem.split("-", 2)
        files.setdefault(ep, {})[version] = path
    cache = {}

    def nearest(ep, version):
        versions = sorted(files.get(ep, {}), key=kernels.version_key)
        if not versions:
            raise LookupError(f"no {ep} table in {folder}")
        if version in versions:
            return version, True
        want = kernels.version_key(version or versions[-1])
        return min(versions, key=lambda v: [abs(a - b) for a, b in zip(kernels.version_key(v), want)]), False

    def load(ep, version):
        if (ep, version) not in cache:
            d = json.loads(files[ep][version].read_text())
            cache[ep, version] = kernels.KernelTable(d["ep"], d["ort_version"], d.get("source", ""), d["ops"], d.get("params", {}))
        return cache[ep, version]

    kernels.nearest, kernels.load = nearest, load


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--truth-dir", type=Path, default=Path(os.environ.get("ONNXLINT_CUDA_TRUTH", "cuda-truth")))
    ap.add_argument("--named-dir", type=Path, default=None, help="default: TRUTH_DIR/../named")
    ap.add_argument("--sets", default="")
    ap.add_argument("--versions", default="")
    ap.add_argument("--levels", default="")
    ap.add_argument("--details", type=int, default=12, help="groups shown per kind of disagreement")
    ap.add_argument("--cpu", action="store_true", help="also run the CPU-EP benchmark (installed onnxruntime)")
    ap.add_argument("--cpu-version", default=None, help="kernel tables for the CPU-EP benchmark (default: installed ORT)")
    ap.add_argument("--tables", type=Path, default=None,
                    help="read kernel tables ort-<version>-<ep>.json from this folder instead of the shipped ones")
    args = ap.parse_args()
    if args.tables:
        use_tables(args.tables)
    named = args.named_dir or args.truth_dir.parent / "named"
    split = lambda s: {x for x in s.split(",") if x}  # noqa: E731
    found = list(truth_files(args.truth_dir, split(args.sets), split(args.versions), split(args.levels)))
    if not found:
        print(f"no truth TSVs under {args.truth_dir}", file=sys.stderr)
        return 2
    summary = []
    for set_name, version, level, path in found:
        t0 = time.perf_counter()
        res = measure(set_name, version, level, path, named)
        lines = report(set_name, version, level, res, args.details)
        print("\n".join(lines) + f"\n   ({time.perf_counter() - t0:.1f} s)", flush=True)
        same, judged = cpu_or_not(res)
        same_c, judged_c = cpu_or_not(res, created=True)
        summary.append(f"{set_name:<13} {version:<7} {level:<5} CPU-or-not {100.0 * same / max(judged, 1):7.3f}%  "
                       f"with created {100.0 * same_c / max(judged_c, 1):7.3f}%  "
                       f"false alarms {sum(map(len, res['alarm'].values())):4d}  misses {sum(map(len, res['miss'].values())):4d}  "
                       f"Memcpy equal {res['memcpy_exact']}/{res['models']}  unsupported in built sessions {res['built_unsup_nodes']}")
    if len(summary) > 1:
        print("\n== summary\n" + "\n".join(summary))
    if args.cpu:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import placement_accuracy

        placement_accuracy.main([] if not args.cpu_version else ["--ort-version", args.cpu_version])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
