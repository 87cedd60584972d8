#!/usr/bin/env python3
"""Export torchvision models (random init, weights=None) to ONNX like users do.

Run with the torch 2.14.1 / torchvision 0.29.1 venv (see benchmarks/README.md):

    /work/scratch/exports/venv-tv/bin/python benchmarks/make_torchvision_exports.py

Writes bench-out/models/torchvision/<model>_op<N>_<dynbatch|fixed>[_dynamo].onnx, its
_manifest.part.tsv, failures to bench-out/logs/make_torchvision_exports.log, and re-merges
bench-out/models/MANIFEST.tsv (merge code lives in make_exports.py).
Idempotent: existing files, and jobs whose failure is already logged, are skipped (--force /
--retry-failed to redo). --only NAME... restricts the job list.
No weights are downloaded: weights=None and weights_backbone=None everywhere.
"""
from __future__ import annotations

import argparse
import time
import traceback
from pathlib import Path

import torch
import torchvision
from export_manifest import LOGDIR, OUT, first_error_line, merge_manifest, quiet, read_part, write_part
from export_manifest import log_fail as _log_fail
from torchvision import models as M

SRC = "torchvision"
LOG_NAME = "make_torchvision_exports.log"


class RaftLast(torch.nn.Module):
    """RAFT returns a list of flow refinements; deployments keep only the last one."""

    def __init__(self, m, iters=6):
        super().__init__()
        self.m, self.iters = m, iters

    def forward(self, image1, image2):
        return self.m(image1, image2, num_flow_updates=self.iters)[-1]


class SegOut(torch.nn.Module):
    """Segmentation models return a dict; users commonly wrap to return ['out']."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x)["out"]


def cls(fn, **kw):
    return lambda: fn(weights=None, **kw)


def seg(fn, wrap=False, **kw):
    def make():
        m = fn(weights=None, weights_backbone=None, **kw)
        return SegOut(m) if wrap else m
    return make


def det(fn, **kw):
    return lambda: fn(weights=None, weights_backbone=None, **kw)


def img(b=1, h=224, w=224):
    return lambda: (torch.rand(b, 3, h, w),)


def det_img(h=320, w=320):
    return lambda: ([torch.rand(3, h, w)],)


BATCH = {"input": {0: "batch"}}
BATCH_HW = {"input": {0: "batch", 2: "height", 3: "width"}}
DET_HW = {"images": {1: "height", 2: "width"}}

# (name, family, make, inputs, input_names, output_names, dynamic_axes, opset, dynamo, notes)
JOBS = [
    # ---- required "clean modern export" models: opset 17, dynamic batch
    ("resnet18_op17_dynbatch", "resnet18", cls(M.resnet18), img(2), ["input"], ["logits"], BATCH, 17, False,
     "required clean modern export"),
    ("deeplabv3_mobilenet_v3_large_op17_dynbatch", "deeplabv3_mobilenet_v3_large",
     seg(M.segmentation.deeplabv3_mobilenet_v3_large, wrap=True), img(2, 256, 256), ["input"], ["out"], BATCH, 17,
     False, "required clean modern export; dict output wrapped to ['out']"),
    ("mobilenet_v3_small_op17_dynbatch", "mobilenet_v3_small", cls(M.mobilenet_v3_small), img(2), ["input"],
     ["logits"], BATCH, 17, False, "HardSwish/HardSigmoid, SE blocks"),
    ("efficientnet_b0_op17_dynbatch", "efficientnet_b0", cls(M.efficientnet_b0), img(2), ["input"], ["logits"],
     BATCH, 17, False, "SiLU, SE blocks, StochasticDepth (eval)"),
    ("resnet18_op11_dynbatch", "resnet18", cls(M.resnet18), img(2), ["input"], ["logits"], BATCH, 11, False, ""),
    ("resnet18_op13_fixed", "resnet18", cls(M.resnet18), img(1), ["input"], ["logits"], None, 13, False,
     "fixed batch 1"),
    ("mobilenet_v3_small_op13_dynbatch", "mobilenet_v3_small", cls(M.mobilenet_v3_small), img(2), ["input"],
     ["logits"], BATCH, 13, False, ""),
    ("lraspp_mobilenet_v3_large_op17_dynbatch_hw", "lraspp_mobilenet_v3_large",
     seg(M.segmentation.lraspp_mobilenet_v3_large, wrap=True), img(1, 256, 256), ["input"], ["out"], BATCH_HW, 17,
     False, "dynamic batch+H+W; Resize to input size"),
    ("ssdlite320_mobilenet_v3_large_op17", "ssdlite320_mobilenet_v3_large",
     det(M.detection.ssdlite320_mobilenet_v3_large), det_img(320, 320), ["images"], ["boxes", "scores", "labels"],
     None, 17, False, "detection post-processing incl. batched NMS; list[Tensor] input of one image"),
    ("fasterrcnn_mobilenet_v3_large_320_fpn_op11", "fasterrcnn_mobilenet_v3_large_320_fpn",
     det(M.detection.fasterrcnn_mobilenet_v3_large_320_fpn), det_img(320, 320), ["images"],
     ["boxes", "labels", "scores"], DET_HW, 11, False, "two-stage detector: RoiAlign, NMS, TopK, dynamic H/W"),
    ("fasterrcnn_mobilenet_v3_large_320_fpn_op17", "fasterrcnn_mobilenet_v3_large_320_fpn",
     det(M.detection.fasterrcnn_mobilenet_v3_large_320_fpn), det_img(320, 320), ["images"],
     ["boxes", "labels", "scores"], DET_HW, 17, False, "two-stage detector: RoiAlign, NMS, TopK, dynamic H/W"),
    ("raft_small_op17_dynbatch", "raft_small", lambda: RaftLast(M.optical_flow.raft_small(weights=None)),
     lambda: (torch.rand(1, 3, 128, 128), torch.rand(1, 3, 128, 128)), ["image1", "image2"], ["flow"],
     {"image1": {0: "batch"}, "image2": {0: "batch"}}, 17, False,
     "optical flow: GridSample, correlation pyramid, 6 unrolled updates"),
    ("vit_b_16_op17_dynbatch", "vit_b_16", cls(M.vit_b_16), img(2), ["input"], ["logits"], BATCH, 17, False,
     "required clean modern export; ~330 MB of fp32 weights, single file"),
    ("swin_t_op17_dynbatch", "swin_t", cls(M.swin_t), img(2), ["input"], ["logits"], BATCH, 17, False,
     "shifted-window attention: Roll, Pad, masks"),
    ("resnet18_op18_dynbatch_dynamo", "resnet18", cls(M.resnet18), img(2), ["input"], ["logits"], BATCH, 18, True,
     "dynamo exporter"),
    ("mobilenet_v3_small_op18_dynbatch_dynamo", "mobilenet_v3_small", cls(M.mobilenet_v3_small), img(2), ["input"],
     ["logits"], BATCH, 18, True, "dynamo exporter"),
    ("deeplabv3_mobilenet_v3_large_op18_dynbatch_dynamo", "deeplabv3_mobilenet_v3_large",
     seg(M.segmentation.deeplabv3_mobilenet_v3_large, wrap=True), img(2, 256, 256), ["input"], ["out"], BATCH, 18,
     True, "dynamo exporter"),
    ("fcn_resnet50_op17_dynbatch", "fcn_resnet50", seg(M.segmentation.fcn_resnet50), img(1, 256, 256), ["input"],
     ["out"], BATCH, 17, False, "dict output {'out'} exported directly; ~135 MB"),
    ("deeplabv3_resnet50_op17_dynbatch", "deeplabv3_resnet50", seg(M.segmentation.deeplabv3_resnet50, wrap=True),
     img(1, 256, 256), ["input"], ["out"], BATCH, 17, False, "~160 MB"),
    ("retinanet_resnet50_fpn_op17", "retinanet_resnet50_fpn", det(M.detection.retinanet_resnet50_fpn),
     det_img(320, 320), ["images"], ["boxes", "scores", "labels"], DET_HW, 17, False, "one-stage detector, ~130 MB"),
    ("maskrcnn_resnet50_fpn_op17", "maskrcnn_resnet50_fpn", det(M.detection.maskrcnn_resnet50_fpn),
     det_img(320, 320), ["images"], ["boxes", "labels", "scores", "masks"], DET_HW, 17, False,
     "Mask R-CNN: RoiAlign, NMS, mask paste; ~170 MB"),
    ("vit_b_16_op18_dynbatch_dynamo", "vit_b_16", cls(M.vit_b_16), img(2), ["input"], ["logits"], BATCH, 18, True,
     "dynamo exporter, weights as external data (.onnx.data)"),
    ("ssdlite320_mobilenet_v3_large_op18_dynamo", "ssdlite320_mobilenet_v3_large",
     det(M.detection.ssdlite320_mobilenet_v3_large), det_img(320, 320), ["images"], ["boxes", "scores", "labels"],
     None, 18, True, "dynamo exporter on a detection model"),
]


def log_fail(msg):
    _log_fail(msg, LOG_NAME)


def logged_failures():
    f = LOGDIR / LOG_NAME
    if not f.exists():
        return set()
    return {ln.split(" ", 2)[2].split(" ", 1)[0] for ln in f.read_text().splitlines() if " FAIL " in ln}


def export(make, inputs, in_names, out_names, dyn, opset, dynamo, path):
    torch.manual_seed(0)
    m = make().eval()
    args = inputs()
    if not dynamo:
        torch.onnx.export(m, args, str(path), dynamo=False, opset_version=opset, input_names=in_names,
                          output_names=out_names, dynamic_axes=dyn)
        return
    ds = None
    if dyn:
        import inspect

        from torch.export import Dim
        dims = {}
        params = list(inspect.signature(m.forward).parameters)
        ds = {}
        for p, n in zip(params, in_names):
            axes = dyn.get(n)
            ds[p] = {a: dims.setdefault(d, Dim(d)) for a, d in axes.items()} if axes else None
    ext = "vit" in path.name
    prog = torch.onnx.export(m, args, dynamo=True, opset_version=opset, input_names=in_names,
                             output_names=out_names, dynamic_shapes=ds, external_data=ext)
    prog.save(str(path), external_data=ext)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--retry-failed", action="store_true", help="retry jobs whose failure is already logged")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    t00 = time.time()
    d = OUT / SRC
    d.mkdir(parents=True, exist_ok=True)
    part = d / "_manifest.part.tsv"
    rows = read_part(part)
    for name, fam, make, inputs, in_names, out_names, dyn, opset, dynamo, notes in JOBS:
        if a.only and name not in a.only and fam not in a.only:
            continue
        path = d / f"{name}.onnx"
        exporter = f"torch.onnx.export(dynamo={dynamo}) torch {torch.__version__} torchvision {torchvision.__version__}"
        row = (name, f"{SRC}/{path.name}", SRC, str(opset), exporter, fam, notes)
        if path.exists() and not a.force:
            rows[name] = row
            continue
        if not (a.retry_failed or a.force) and name in logged_failures():
            print(f"skip {name}: failed before (see {LOGDIR.name}/{LOG_NAME}; --retry-failed)")
            continue
        t0 = time.time()
        try:
            with quiet():
                export(make, inputs, in_names, out_names, dyn, opset, dynamo, path)
            rows[name] = row
            print(f"ok   {name} ({time.time() - t0:.1f}s, {path.stat().st_size / 1e6:.1f} MB)", flush=True)
        except Exception as e:  # noqa: BLE001
            for p in (path, Path(str(path) + ".data")):
                if p.exists():
                    p.unlink()
            rows.pop(name, None)
            msg = f"FAIL {name} (opset {opset}, dynamo={dynamo}, {time.time() - t0:.0f}s): {first_error_line(e)}"
            print(msg, flush=True)
            log_fail(msg)
            if a.verbose:
                traceback.print_exc()
        write_part(part, rows.values())  # after every model, so a parallel run sees progress
    merge_manifest()
    print(f"done in {time.time() - t00:.0f}s")


if __name__ == "__main__":
    main()
