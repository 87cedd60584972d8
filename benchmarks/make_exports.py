#!/usr/bin/env python3
"""Export small, hand-written PyTorch architectures to ONNX the way users do.

Run with the torch 2.13 venv (see benchmarks/README.md):

    /work/scratch/exports/venv-torch213/bin/python benchmarks/make_exports.py

Writes
  bench-out/models/torch2.13-torchscript/<family>_ts_op<N>.onnx  (torch.onnx.export(..., dynamo=False))
  bench-out/models/torch2.13-dynamo/<family>_dy_op<N>.onnx       (torch.onnx.export(..., dynamo=True))
  bench-out/models/<source>/_manifest.part.tsv                   (rows for MANIFEST.tsv)
  bench-out/models/quantized/*.onnx                               (--quantize, needs onnxruntime)
  bench-out/logs/make_exports.log                                 (one line per export failure)
and re-merges bench-out/models/MANIFEST.tsv from every source's part file.

Idempotent: an existing .onnx is not exported again (use --force to redo).
Weights are random (torch.manual_seed(0)); the linter only looks at graphs.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
from export_manifest import OUT, first_error_line, merge_manifest, quiet, read_part, write_part
from export_manifest import log_fail as _log_fail

TS_SRC = "torch2.13-torchscript"
DY_SRC = "torch2.13-dynamo"


# --------------------------------------------------------------------------- models
class CNN(nn.Module):
    """Conv/BN/ReLU/MaxPool/Dropout/Linear classifier."""

    def __init__(self, c=3, n=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(c, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.MaxPool2d(2), nn.Dropout2d(0.1),
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.5), nn.Linear(32 * 8 * 8, n))

    def forward(self, x):
        return self.head(self.features(x))


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        idt = x if self.down is None else self.down(x)
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + idt)


class ResNetish(nn.Module):
    def __init__(self, n=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 7, 2, 3, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
                                  nn.MaxPool2d(3, 2, 1))
        self.layer1 = BasicBlock(16, 16)
        self.layer2 = BasicBlock(16, 32, 2)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, n)

    def forward(self, x):
        x = self.layer2(self.layer1(self.stem(x)))
        return self.fc(torch.flatten(self.pool(x), 1))


class UNetish(nn.Module):
    """Encoder/decoder with a configurable upsampling flavour."""

    def __init__(self, mode="nearest", align_corners=None, use_size=False, transpose=False):
        super().__init__()
        self.mode, self.ac, self.use_size = mode, align_corners, use_size
        self.e1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.e2 = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU())
        self.e3 = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(16, 32, 3, padding=1), nn.ReLU())
        self.up_t = nn.ConvTranspose2d(32, 32, 2, stride=2) if transpose else None
        self.d2 = nn.Sequential(nn.Conv2d(32 + 16, 16, 3, padding=1), nn.ReLU())
        self.d1 = nn.Sequential(nn.Conv2d(16 + 8, 8, 3, padding=1), nn.ReLU())
        self.out = nn.Conv2d(8, 2, 1)

    def up(self, x, ref):
        kw = {} if self.mode == "nearest" else {"align_corners": self.ac}
        if self.use_size:
            return F.interpolate(x, size=ref.shape[-2:], mode=self.mode, **kw)
        return F.interpolate(x, scale_factor=2.0, mode=self.mode, **kw)

    def forward(self, x):
        a = self.e1(x)
        b = self.e2(a)
        c = self.e3(b)
        u = self.up_t(c) if self.up_t is not None else self.up(c, b)
        d = self.d2(torch.cat([u, b], 1))
        d = self.d1(torch.cat([self.up(d, a), a], 1))
        return torch.sigmoid(self.out(d))


class Transformer(nn.Module):
    def __init__(self, vocab=1000, d=64, heads=4, layers=2, n=5):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(1, 128, d) * 0.02)
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.1, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.enc = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)
        self.cls = nn.Linear(d, n)

    def forward(self, ids, mask):
        x = self.emb(ids) + self.pos[:, : ids.shape[1]]
        x = self.enc(x, src_key_padding_mask=mask == 0)
        return self.cls(self.norm(x[:, 0]))


class MHABlock(nn.Module):
    """Bare MultiheadAttention + LayerNorm + GELU MLP on float inputs (no embedding)."""

    def __init__(self, d=64, heads=4):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(approximate="tanh"), nn.Linear(4 * d, d))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class SDPA(nn.Module):
    def __init__(self, d=64, heads=4):
        super().__init__()
        self.h = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.o = nn.Linear(d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o(y.transpose(1, 2).reshape(b, t, d))


class LSTMTagger(nn.Module):
    def __init__(self, vocab=500, d=32, h=48, n=8):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.rnn = nn.LSTM(d, h, num_layers=2, batch_first=True, dropout=0.1)
        self.fc = nn.Linear(h, n)

    def forward(self, ids):
        y, _ = self.rnn(self.emb(ids))
        return self.fc(y).log_softmax(-1)


class GRUModel(nn.Module):
    def __init__(self, d=20, h=32):
        super().__init__()
        self.rnn = nn.GRU(d, h, bidirectional=True, batch_first=False)
        self.fc = nn.Linear(2 * h, 1)

    def forward(self, x, h0):
        y, hn = self.rnn(x, h0)
        return self.fc(y), hn


class DetHead(nn.Module):
    """Detection-style post-processing: score threshold masks, NonZero, TopK, gather, where."""

    def __init__(self, ncls=4, k=20, thr=0.3):
        super().__init__()
        self.k, self.thr = k, thr
        self.backbone = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.ReLU(), nn.Conv2d(16, 32, 3, 2, 1), nn.ReLU())
        self.cls = nn.Conv2d(32, ncls, 1)
        self.box = nn.Conv2d(32, 4, 1)

    def forward(self, x):
        f = self.backbone(x)
        scores = torch.sigmoid(self.cls(f)).flatten(2).transpose(1, 2)  # B,HW,C
        boxes = self.box(f).flatten(2).transpose(1, 2)  # B,HW,4
        best, label = scores.max(-1)  # B,HW
        best = torch.where(best > self.thr, best, torch.zeros_like(best))
        top, idx = best.topk(self.k, dim=1)
        sel = torch.gather(boxes, 1, idx.unsqueeze(-1).expand(-1, -1, 4))
        lab = torch.gather(label, 1, idx)
        keep = torch.nonzero(top[0] > self.thr).squeeze(1)  # data-dependent length
        return sel[0][keep], top[0][keep], lab[0][keep]


class GridSampleNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.loc = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                 nn.Linear(8, 6))

    def forward(self, x):
        theta = self.loc(x).view(-1, 2, 3)
        grid = F.affine_grid(theta, list(x.shape), align_corners=False)
        return F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False)


class FlowWarp(nn.Module):
    """Optical-flow style warping: grid built from a predicted flow field (no affine_grid) -> GridSample."""

    def __init__(self):
        super().__init__()
        self.flow = nn.Conv2d(6, 2, 3, padding=1)

    def forward(self, a, b):
        n, _, h, w = a.shape
        flow = torch.tanh(self.flow(torch.cat([a, b], 1))).permute(0, 2, 3, 1)
        ys = torch.linspace(-1.0, 1.0, h).view(1, h, 1, 1).expand(n, h, w, 1)
        xs = torch.linspace(-1.0, 1.0, w).view(1, 1, w, 1).expand(n, h, w, 1)
        grid = torch.cat([xs, ys], -1) + flow
        return F.grid_sample(b, grid, mode="bilinear", padding_mode="border", align_corners=True)


class ArgCum(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)

    def forward(self, x):
        y = self.fc(x)
        c = torch.cumsum(y, dim=1)
        return y.argmax(-1), y.argmin(-1, keepdim=True), c, torch.cumsum(y.flip(1), 1).flip(1)


class IndexOps(nn.Module):
    """int64 indices in, gather/index_select/scatter/embedding/arange/int arithmetic."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(256, 16)
        self.table = nn.Parameter(torch.randn(64, 16))

    def forward(self, ids, rows):
        e = self.emb(ids)  # B,T,16
        pos = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0) * 2 + 1
        t = torch.index_select(self.table, 0, rows)  # R,16
        g = torch.gather(e, 1, (ids % e.shape[1]).unsqueeze(-1).expand(-1, -1, 16))
        out = torch.zeros_like(g).scatter_add(1, (ids % e.shape[1]).unsqueeze(-1).expand(-1, -1, 16), e)
        cnt = (ids // 7).sum(1)
        return out + g, t.sum(0), pos + ids, cnt


class Float64Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 32)
        self.fc2 = nn.Linear(32, 1)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x))) + x.mean(1, keepdim=True)


class HalfMLP(nn.Module):
    def __init__(self, d=64):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, 10)

    def forward(self, x):
        return F.softmax(self.fc2(F.gelu(self.fc1(self.ln(x)))), -1)


class Scripted(nn.Module):
    """Data-dependent loop/branch: torch.jit.script -> Loop/If in the TorchScript export."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)

    def forward(self, x, n: int):
        for _ in range(n):
            x = torch.relu(self.fc(x))
        if bool(x.sum() > 0):
            x = x * 2
        return x


class MiscOps(nn.Module):
    """Reflect pad, einsum, pixel shuffle, clamp/hardswish, reductions, softmax over odd axis."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 16, 3)
        self.ps = nn.PixelShuffle(2)
        self.w = nn.Parameter(torch.randn(4, 4))

    def forward(self, x):
        y = self.conv(F.pad(x, (1, 1, 1, 1), mode="reflect"))
        y = F.hardswish(self.ps(y)).clamp(-3, 3)
        z = torch.einsum("bchw,cd->bdhw", y, self.w)
        return z.softmax(1), z.amax((2, 3)), F.layer_norm(z, (32, 32))


# --------------------------------------------------------------------------- spec
def img(b=2, c=3, h=32, w=32, dtype=torch.float32):
    return torch.randn(b, c, h, w, dtype=dtype)


def _cnn_train():
    m = CNN()
    m.train()
    return m


class BNDropMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(32, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Dropout(0.3), nn.Linear(64, 4))

    def forward(self, x):
        return self.net(x)


def _mlp_train():
    m = BNDropMLP()
    m.train()
    return m


# name -> dict(make, inputs, names, outputs, dyn (input-name -> {axis: name}), ts opsets, dy opsets, notes, train)
SPECS = {
    "cnn_bn_dropout": dict(make=CNN, inputs=lambda: (img(),), names=["input"], dyn={"input": {0: "batch"}},
                           ts=[9, 11, 13, 17, 20], dy=[17, 18, 19, 20], notes="Conv/BN/Dropout classifier, eval()"),
    "cnn_bn_dropout_fixed": dict(make=CNN, inputs=lambda: (img(1),), names=["input"], dyn=None,
                                 ts=[11, 17], dy=[18], notes="same CNN, fixed batch 1"),
    "cnn_bn_dropout_trainmode": dict(make=_cnn_train, inputs=lambda: (img(),), names=["input"],
                                     dyn={"input": {0: "batch"}}, ts=[11, 13, 17], dy=[18], train=True,
                                     notes="model left in train() mode by mistake (TrainingMode.PRESERVE / "
                                           "dynamo traces train graph): training BN + Dropout"),
    "mlp_bn_dropout_trainmode": dict(make=_mlp_train, inputs=lambda: (torch.randn(8, 32),), names=["x"],
                                     dyn={"x": {0: "batch"}}, ts=[11, 13, 17], dy=[18], train=True,
                                     notes="BatchNorm1d + Dropout MLP left in train() mode (no Dropout2d, which "
                                           "the TorchScript exporter refuses in training mode)"),
    "mlp_bn_dropout_eval": dict(make=BNDropMLP, inputs=lambda: (torch.randn(8, 32),), names=["x"],
                                dyn={"x": {0: "batch"}}, ts=[13, 17], dy=[18], notes="same MLP, eval()"),
    "resnet_block": dict(make=ResNetish, inputs=lambda: (img(2, 3, 64, 64),), names=["input"],
                         dyn={"input": {0: "batch"}}, ts=[9, 11, 13, 17], dy=[17, 18, 20],
                         notes="ResNet-like BasicBlocks, residual Add, AdaptiveAvgPool"),
    "resnet_block_fixed": dict(make=ResNetish, inputs=lambda: (img(4, 3, 64, 64),), names=["input"], dyn=None,
                               ts=[13, 17], dy=[18], notes="same ResNet-ish, fixed batch 4"),
    "unet_nearest_scale": dict(make=lambda: UNetish("nearest"), inputs=lambda: (img(1, 3, 64, 64),),
                               names=["input"], dyn={"input": {0: "batch", 2: "height", 3: "width"}},
                               ts=[9, 11, 13, 17], dy=[18],
                               notes="interpolate nearest scale_factor=2 (Upsample at op9, Resize later)"),
    "unet_bilinear_ac_true_size": dict(make=lambda: UNetish("bilinear", True, True),
                                       inputs=lambda: (img(1, 3, 64, 64),), names=["input"],
                                       dyn={"input": {0: "batch", 2: "height", 3: "width"}},
                                       ts=[9, 11, 13, 17], dy=[17, 18, 20],
                                       notes="interpolate bilinear align_corners=True size=ref.shape"),
    "unet_bilinear_ac_false_scale": dict(make=lambda: UNetish("bilinear", False, False),
                                         inputs=lambda: (img(1, 3, 64, 64),), names=["input"],
                                         dyn={"input": {0: "batch"}}, ts=[9, 11, 13, 16], dy=[18],
                                         notes="interpolate bilinear align_corners=False scale_factor=2"),
    "unet_bicubic_convtranspose": dict(make=lambda: UNetish("bicubic", False, True, transpose=True),
                                       inputs=lambda: (img(1, 3, 64, 64),), names=["input"],
                                       dyn={"input": {0: "batch"}}, ts=[11, 17], dy=[18],
                                       notes="ConvTranspose2d + interpolate bicubic size="),
    "transformer_encoder": dict(make=Transformer,
                                inputs=lambda: (torch.randint(0, 1000, (2, 16)), torch.ones(2, 16, dtype=torch.int64)),
                                names=["input_ids", "attention_mask"],
                                dyn={"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}},
                                ts=[11, 13, 14, 17, 20], dy=[17, 18, 19, 20],
                                notes="nn.TransformerEncoder (MHA, LayerNorm, GELU, padding mask), int64 ids"),
    "mha_block": dict(make=MHABlock, inputs=lambda: (torch.randn(2, 10, 64),), names=["x"],
                      dyn={"x": {0: "batch", 1: "seq"}}, ts=[13, 17], dy=[18],
                      notes="nn.MultiheadAttention + LayerNorm + GELU(tanh)"),
    "sdpa_causal": dict(make=SDPA, inputs=lambda: (torch.randn(2, 10, 64),), names=["x"],
                        dyn={"x": {0: "batch", 1: "seq"}}, ts=[14, 17], dy=[18, 20],
                        notes="F.scaled_dot_product_attention(is_causal=True)"),
    "lstm_tagger": dict(make=LSTMTagger, inputs=lambda: (torch.randint(0, 500, (2, 12)),), names=["ids"],
                        dyn={"ids": {0: "batch", 1: "seq"}}, ts=[9, 11, 14, 17], dy=[18],
                        notes="Embedding + 2-layer LSTM + log_softmax"),
    "gru_bidir": dict(make=GRUModel, inputs=lambda: (torch.randn(7, 2, 20), torch.zeros(2, 2, 32)),
                      names=["x", "h0"], dyn={"x": {0: "seq", 1: "batch"}, "h0": {1: "batch"}},
                      ts=[11, 13, 17], dy=[18], notes="bidirectional GRU with explicit h0"),
    "det_head_nms_style": dict(make=DetHead, inputs=lambda: (img(1, 3, 64, 64),), names=["images"],
                               dyn={"images": {2: "height", 3: "width"}}, ts=[11, 13, 17], dy=[18],
                               notes="NonZero/TopK/Gather/where/masks; data-dependent output length"),
    "grid_sample": dict(make=GridSampleNet, inputs=lambda: (img(2, 3, 32, 32),), names=["input"],
                        dyn={"input": {0: "batch"}}, ts=[11, 16, 17, 20], dy=[18, 20],
                        notes="affine_grid + grid_sample (GridSample needs opset 16)"),
    "grid_sample_flow": dict(make=FlowWarp, inputs=lambda: (img(2, 3, 32, 32), img(2, 3, 32, 32)), names=["a", "b"],
                             dyn={"a": {0: "batch"}, "b": {0: "batch"}}, ts=[11, 16, 17], dy=[18],
                             notes="grid_sample(border, align_corners=True) on a flow-built grid (GridSample op16+)"),
    "argmax_cumsum": dict(make=ArgCum, inputs=lambda: (torch.randn(2, 8, 16),), names=["x"],
                          dyn={"x": {0: "batch"}}, ts=[9, 11, 13, 17], dy=[18],
                          notes="ArgMax/ArgMin/CumSum (CumSum needs opset 11), flip"),
    "int64_index_ops": dict(make=IndexOps,
                            inputs=lambda: (torch.randint(0, 256, (2, 9)), torch.tensor([1, 5, 7], dtype=torch.int64)),
                            names=["ids", "rows"], dyn={"ids": {0: "batch", 1: "seq"}, "rows": {0: "nrows"}},
                            ts=[11, 13, 17], dy=[18],
                            notes="int64 inputs: Gather/IndexSelect/ScatterAdd/Range/int div+mod"),
    "float64_mlp": dict(make=lambda: Float64Net().double(), inputs=lambda: (torch.randn(4, 8, dtype=torch.float64),),
                        names=["x"], dyn={"x": {0: "batch"}}, ts=[11, 17], dy=[18],
                        notes="float64 (double) weights and inputs"),
    "fp16_mlp": dict(make=lambda: HalfMLP().half(), inputs=lambda: (torch.randn(4, 64).half(),), names=["x"],
                     dyn={"x": {0: "batch"}}, ts=[13, 17], dy=[18], notes="model.half(): fp16 weights/inputs"),
    "fp16_cnn": dict(make=lambda: CNN().eval().half(), inputs=lambda: (img(2).half(),), names=["input"],
                     dyn={"input": {0: "batch"}}, ts=[13, 17], dy=[18], notes="model.half() CNN incl. BatchNorm"),
    "scripted_loop_if": dict(make=Scripted, inputs=lambda: (torch.randn(2, 16), 3), names=["x", "n"],
                             dyn={"x": {0: "batch"}}, ts=[11, 17], dy=[], script=True,
                             notes="torch.jit.script module: Loop + If"),
    "misc_ops": dict(make=MiscOps, inputs=lambda: (img(1, 4, 16, 16),), names=["x"],
                     dyn={"x": {0: "batch"}}, ts=[11, 13, 17], dy=[18],
                     notes="reflect Pad, PixelShuffle(DepthToSpace), HardSwish, Clip, einsum, amax, layer_norm over (H,W)"),
}


# --------------------------------------------------------------------------- export
def log_fail(msg):
    _log_fail(msg, "make_exports.log")


def _opset_note(row, path, opset):
    """The dynamo exporter silently keeps opset 18 when its down-conversion fails: say so in the notes."""
    import onnx
    m = onnx.load(str(path), load_external_data=False)
    got = {o.domain: o.version for o in m.opset_import}.get("", None)
    if got is not None and got != opset:
        row = row[:6] + (row[6] + f"; requested opset {opset}, exporter produced opset {got} "
                         "(version conversion failed, model left unconverted)",)
    return row


def build(spec):
    torch.manual_seed(0)
    m = spec["make"]()
    if not spec.get("train"):
        m.eval()
    if spec.get("script"):
        m = torch.jit.script(m)
    return m, spec["inputs"]()


def export_ts(name, spec, opset, path):
    m, args = build(spec)
    kw = {}
    if spec.get("train"):
        kw["training"] = torch.onnx.TrainingMode.PRESERVE
        kw["do_constant_folding"] = False
    out_names = None
    torch.onnx.export(m, args, str(path), dynamo=False, opset_version=opset, input_names=spec["names"],
                      output_names=out_names, dynamic_axes=spec["dyn"], **kw)


def export_dy(name, spec, opset, path):
    m, args = build(spec)
    dyn_shapes = None
    if spec["dyn"]:
        from torch.export import Dim
        dims = {}
        dyn_shapes = {}
        sig_names = list(__import__("inspect").signature(m.forward).parameters)
        for arg_name, in_name in zip(sig_names, spec["names"]):
            axes = spec["dyn"].get(in_name)
            if axes:
                dyn_shapes[arg_name] = {ax: dims.setdefault(dn, Dim(dn)) for ax, dn in axes.items()}
            else:
                dyn_shapes[arg_name] = None
    # one model keeps the exporter's default external_data=True to get a .onnx.data file like users do
    ext = name == "resnet_block"
    prog = torch.onnx.export(m, args, dynamo=True, opset_version=opset, input_names=spec["names"],
                             dynamic_shapes=dyn_shapes, external_data=ext)
    prog.save(str(path), external_data=ext)


def run(args):
    OUT.mkdir(parents=True, exist_ok=True)
    rows = {TS_SRC: [], DY_SRC: []}
    ok = fail = skip = 0
    for name, spec in SPECS.items():
        if args.only and name not in args.only:
            continue
        jobs = [(TS_SRC, "ts", o, export_ts) for o in spec["ts"]] + [(DY_SRC, "dy", o, export_dy) for o in spec["dy"]]
        if args.dynamo_only:
            jobs = [j for j in jobs if j[1] == "dy"]
        for src, tag, opset, fn in jobs:
            d = OUT / src
            d.mkdir(parents=True, exist_ok=True)
            mname = f"{name}_{tag}_op{opset}"
            path = d / f"{mname}.onnx"
            exporter = ("torch.onnx.export(dynamo=False)" if tag == "ts" else "torch.onnx.export(dynamo=True)") + \
                f" torch {torch.__version__}"
            note = spec["notes"]
            if tag == "dy" and name == "resnet_block":
                note += "; external data (.onnx.data)"
            row = (mname, str(path.relative_to(OUT)), src, str(opset), exporter, name, note)
            if path.exists() and not args.force:
                skip += 1
                rows[src].append(_opset_note(row, path, opset))
                continue
            t0 = time.time()
            try:
                with quiet():
                    fn(name, spec, opset, path)
                ok += 1
                rows[src].append(_opset_note(row, path, opset))
                print(f"ok   {src}/{mname} ({time.time() - t0:.1f}s)", flush=True)
            except Exception as e:  # noqa: BLE001 - we log every export failure
                fail += 1
                for p in (path, Path(str(path) + ".data")):
                    if p.exists():
                        p.unlink()
                msg = f"FAIL {src}/{mname}: {first_error_line(e)}"
                print(msg, flush=True)
                log_fail(msg)
                if args.verbose:
                    traceback.print_exc()
    for src, rs in rows.items():
        if not rs:
            continue
        part = OUT / src / "_manifest.part.tsv"
        old = read_part(part) if args.only else {}
        for r in rs:
            old[r[0]] = r
        write_part(part, old.values())
    print(f"exports: ok={ok} skipped(existing)={skip} failed={fail}")


# --------------------------------------------------------------------------- quantization
QUANT = [
    # (source rel path, kind)
    ("torch2.13-torchscript/resnet_block_ts_op17.onnx", "static_qdq"),
    ("torch2.13-torchscript/resnet_block_ts_op17.onnx", "static_qoperator"),
    ("torch2.13-torchscript/resnet_block_ts_op17.onnx", "dynamic"),
    ("torch2.13-torchscript/transformer_encoder_ts_op17.onnx", "dynamic"),
    ("torch2.13-torchscript/lstm_tagger_ts_op14.onnx", "dynamic"),
    ("torch2.13-torchscript/unet_bilinear_ac_false_scale_ts_op13.onnx", "static_qdq"),
    ("torchvision/resnet18_op17_dynbatch.onnx", "static_qdq"),
    ("torchvision/mobilenet_v3_small_op17_dynbatch.onnx", "static_qoperator"),
    ("torchvision/mobilenet_v3_small_op17_dynbatch.onnx", "dynamic"),
    ("torchvision/efficientnet_b0_op17_dynbatch.onnx", "static_qdq"),
    ("torchvision/deeplabv3_mobilenet_v3_large_op17_dynbatch.onnx", "static_qoperator"),
    ("torch2.13-dynamo/cnn_bn_dropout_dy_op18.onnx", "static_qdq"),
]


def quantize(args):
    import numpy as np
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_dynamic, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    class Reader(CalibrationDataReader):
        def __init__(self, model):
            self.items = []
            rng = np.random.default_rng(0)
            for _ in range(4):
                feed = {}
                for i in model.graph.input:
                    shp = [d.dim_value if d.dim_value > 0 else 1 for d in i.type.tensor_type.shape.dim]
                    feed[i.name] = rng.standard_normal(shp).astype(np.float32)
                self.items.append(feed)
            self.it = iter(self.items)

        def get_next(self):
            return next(self.it, None)

    d = OUT / "quantized"
    d.mkdir(parents=True, exist_ok=True)
    rows = []
    for rel, kind in QUANT:
        src = OUT / rel
        stem = Path(rel).stem
        mname = f"{stem}_{kind}"
        dst = d / f"{mname}.onnx"
        import onnxruntime
        exporter = f"onnxruntime {onnxruntime.__version__} " + (
            "quantize_dynamic(QInt8 weights)" if kind == "dynamic" else
            f"quantize_static({'QDQ' if kind.endswith('qdq') else 'QOperator'}, QUInt8 act/QInt8 w)")
        row = (mname, str(dst.relative_to(OUT)), "quantized", "", exporter, stem,
               f"from {rel}; random calibration data" if kind != "dynamic" else f"from {rel}")
        if dst.exists() and not args.force:
            rows.append(row)
            continue
        if not src.exists():
            log_fail(f"QUANT-SKIP {mname}: source {rel} missing")
            print(f"skip {mname}: source missing")
            continue
        t0 = time.time()
        try:
            pre = d / f".{stem}.pre.onnx"
            if not pre.exists():
                try:
                    quant_pre_process(str(src), str(pre), skip_symbolic_shape=False)
                except Exception as e:  # noqa: BLE001
                    log_fail(f"QUANT-PREPROCESS {stem}: {first_error_line(e)} (using unprocessed model)")
                    onnx.save(onnx.load(str(src)), str(pre))
            if kind == "dynamic":
                quantize_dynamic(str(pre), str(dst), weight_type=QuantType.QInt8)
            else:
                fmt = QuantFormat.QDQ if kind.endswith("qdq") else QuantFormat.QOperator
                quantize_static(str(pre), str(dst), Reader(onnx.load(str(pre))), quant_format=fmt,
                                activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, per_channel=True)
            rows.append(row)
            print(f"ok   quantized/{mname} ({time.time() - t0:.1f}s)")
        except Exception as e:  # noqa: BLE001
            if dst.exists():
                dst.unlink()
            msg = f"FAIL quantized/{mname}: {first_error_line(e)}"
            print(msg)
            log_fail(msg)
    for p in d.glob(".*.pre.onnx"):
        p.unlink()
    write_part(d / "_manifest.part.tsv", rows)


# --------------------------------------------------------------------------- validation
def validate(out=OUT):
    """onnx.checker (plain and full_check) + onnxruntime CPU session creation for every manifest row.

    Writes bench-out/models/VALIDATION.tsv (name, path, checker, full_check, ort_cpu). Informational only:
    a model failing here is still a realistic user artefact and stays in the set.
    """
    import onnx
    import onnxruntime as ort
    lines = (out / "MANIFEST.tsv").read_text().splitlines()
    hdr = lines[0].split("\t")
    res = []
    so = ort.SessionOptions()
    so.log_severity_level = 3
    for ln in lines[1:]:
        r = dict(zip(hdr, ln.split("\t")))
        p = str(out / r["path"])
        cols = []
        checks = (lambda q: onnx.checker.check_model(q), lambda q: onnx.checker.check_model(q, full_check=True),
                  lambda q: ort.InferenceSession(q, so, providers=["CPUExecutionProvider"]))
        for fn in checks:
            try:
                fn(p)
                cols.append("ok")
            except Exception as e:  # noqa: BLE001
                cols.append(first_error_line(e)[:300].replace("\t", " "))
        res.append((r["name"], r["path"], *cols))
        print(r["path"], *[c[:80] for c in cols], sep=" | ", flush=True)
    with open(out / "VALIDATION.tsv", "w") as fh:
        fh.write("name\tpath\tchecker\tfull_check\tort_cpu\n")
        for r in res:
            fh.write("\t".join(r) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*", help="export only these model families")
    ap.add_argument("--force", action="store_true", help="re-export even if the .onnx exists")
    ap.add_argument("--dynamo-only", action="store_true")
    ap.add_argument("--quantize", action="store_true", help="only run the onnxruntime quantization step")
    ap.add_argument("--manifest-only", action="store_true")
    ap.add_argument("--validate", action="store_true", help="after the manifest, write VALIDATION.tsv")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    t0 = time.time()
    if args.manifest_only:
        pass
    elif args.quantize:
        # onnxruntime's symbolic shape inference (quant_pre_process) writes sym_shape_infer_temp.onnx and its
        # <uuid>.data files into the working directory and leaves them when it fails on a model (measured:
        # transformer_encoder, unet_bilinear): run in a temporary one, not the checkout
        here = os.getcwd()
        with tempfile.TemporaryDirectory(prefix="quantize_") as work:
            os.chdir(work)
            try:
                quantize(args)
            finally:
                os.chdir(here)
    else:
        run(args)
    merge_manifest()
    if args.validate:
        validate()
    print(f"done in {time.time() - t0:.0f}s")


if __name__ == "__main__":
    sys.exit(main())
